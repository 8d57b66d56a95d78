// The fields Knative's defaulting webhook adds just by decoding a request into its Go types and encoding it again
// (knative/pkg's roundTripPatch, sent before the defaults): struct fields without `omitempty` come back as their
// zero value. These are what `kubectl get ksvc -o yaml` shows and no SetDefaults writes: `resources: {}` on every
// container, `port: 0` on a probe's tcpSocket/httpGet/grpc action, `containerPort: 0` on a port that names none,
// and a template's `metadata: {}`. A template's `creationTimestamp: null` goes: Knative v0.51 builds on
// k8s.io/apimachinery v0.36, whose ObjectMeta omits a zero creationTimestamp (`omitzero`), so upstream stores `{}`.
// Pure; returns a copy.
import { cloneJson } from './conditions.js';
import type { KubeObject } from './meta.js';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);

function roundTripProbe(probe: unknown): void {
  if (!isObj(probe)) return;
  for (const action of ['tcpSocket', 'httpGet', 'grpc']) {
    const a = probe[action];
    if (isObj(a) && a.port === undefined) a.port = 0;
  }
}

function roundTripContainer(c: unknown): void {
  if (!isObj(c)) return;
  if (c.resources === undefined) c.resources = {};
  if (Array.isArray(c.ports)) for (const p of c.ports) if (isObj(p) && p.containerPort === undefined) p.containerPort = 0;
  for (const p of ['livenessProbe', 'readinessProbe', 'startupProbe']) roundTripProbe(c[p]);
}

function roundTripPodSpec(spec: unknown): void {
  if (!isObj(spec)) return;
  for (const list of ['containers', 'initContainers']) {
    const cs = spec[list];
    if (Array.isArray(cs)) cs.forEach(roundTripContainer);
  }
}

/** `obj` (a Service, Configuration, Revision or Route) as Knative's Go types would re-encode it. */
export function goRoundTrip(kind: string, obj: KubeObject): KubeObject {
  const out = cloneJson(obj) as KubeObject & { spec?: Obj };
  const spec = out.spec;
  if (!isObj(spec)) return out;
  if (kind === 'Revision') {
    roundTripPodSpec(spec);
    return out;
  }
  const template = spec.template;
  if ((kind === 'Service' || kind === 'Configuration') && isObj(template)) {
    const meta = isObj(template.metadata) ? template.metadata : {};
    if (meta.creationTimestamp === null) delete meta.creationTimestamp;
    template.metadata = meta;
    roundTripPodSpec(template.spec);
  }
  return out;
}
