// Knative's defaulting (pkg/apis/serving/v1/*_defaults.go): SetDefaults of a revision spec, Service,
// Configuration and Route. The admission webhook (api/admission.ts) applies them when an object is stored; the
// reconcilers apply them again in memory, as a no-op on what the webhook stored and to fill what an object that
// bypassed it lacks. Every function returns a defaulted deep copy and never mutates its input. Pure.
//
// Which config-defaults values an existing object is defaulted with in memory is decided at the end of this file
// (`defaultsInForce`): the ones in force when Tidal first defaulted it, so a config-defaults change reaches only
// objects created or updated afterwards, as upstream.
//
// Not done here: creator/lastModifier and Go's round-trip fields (api/admission.ts). secure-pod-defaults is applied
// when the caller passes config-features' value (the webhook does; the reconcilers do not: it is stored at admission).
import { renderNameTemplate } from './config/defaults.js';
import type { TemplateMeta } from './config/defaults.js';
import type { DefaultsConfig } from './config/types.js';
import { cloneJson } from './conditions.js';
import { Annotations } from './labels.js';
import { applySecurePodDefaults } from './secure-pod-defaults.js';
import type { SecurePodDefaults } from './validation-podspec.js';
import { isControlledBy, type KubeObject, type ObjectMeta } from './meta.js';
import type { Configuration, Container, RevisionSpec, Route, RouteSpec, Service, TrafficTarget } from './serving.js';

/** A JSON-safe deep copy (plain objects, arrays, primitives); the same as `cloneJson`. */
export const deepCopy = cloneJson;

// Shapes of the core/v1 fields defaulting touches; serving.ts leaves them as `unknown`.
interface ProbeHandlerFields {
  httpGet?: unknown;
  tcpSocket?: unknown;
  exec?: unknown;
  grpc?: { port?: number; service?: string };
}
interface Probe extends ProbeHandlerFields {
  periodSeconds?: number;
  timeoutSeconds?: number;
  successThreshold?: number;
  failureThreshold?: number;
  [field: string]: unknown;
}
interface Resources {
  requests?: Record<string, string>;
  limits?: Record<string, string>;
  [field: string]: unknown;
}
interface VolumeMount {
  name?: string;
  mountPath?: string;
  readOnly?: boolean;
  [field: string]: unknown;
}
interface Volume {
  name?: string;
  emptyDir?: unknown;
  persistentVolumeClaim?: unknown;
  ephemeral?: unknown;
  [field: string]: unknown;
}
type ContainerFields = Container & {
  readinessProbe?: Probe;
  livenessProbe?: Probe;
  startupProbe?: Probe;
  resources?: Resources;
  volumeMounts?: VolumeMount[];
};
type PodFields = RevisionSpec & {
  containers: ContainerFields[];
  initContainers?: ContainerFields[];
  volumes?: Volume[];
  enableServiceLinks?: boolean;
};

/** Default container names: the template's name, or `<name>-0`, `-1`, … with several containers or a clash. */
function applyDefaultContainerNames(containers: ContainerFields[], taken: Set<string>, defaultName: string): void {
  let nextSuffix = 0;
  for (const c of containers) {
    if (c.name !== undefined && c.name !== '') continue;
    let name = defaultName;
    if (containers.length > 1 || taken.has(name)) {
      do {
        name = `${defaultName}-${nextSuffix}`;
        nextSuffix++;
      } while (taken.has(name));
    }
    c.name = name;
    taken.add(name);
  }
}

function hasHandler(p: ProbeHandlerFields): boolean {
  return p.tcpSocket != null || p.httpGet != null || p.exec != null || p.grpc != null;
}

const resourceDefaults = [
  ['cpu', 'revisionCpuRequest', 'revisionCpuLimit'],
  ['memory', 'revisionMemoryRequest', 'revisionMemoryLimit'],
  ['ephemeral-storage', 'revisionEphemeralStorageRequest', 'revisionEphemeralStorageLimit'],
] as const;

function applyResourceDefaults(c: ContainerFields, cfg: DefaultsConfig): void {
  for (const [resource, requestKey, limitKey] of resourceDefaults) {
    for (const [side, value] of [
      ['requests', cfg[requestKey]],
      ['limits', cfg[limitKey]],
    ] as const) {
      if (value === undefined) continue;
      const resources: Resources = c.resources ?? {};
      const list = resources[side] ?? {};
      if (list[resource] === undefined) list[resource] = value;
      resources[side] = list;
      c.resources = resources;
    }
  }
}

function applyReadinessProbeDefaults(c: ContainerFields): void {
  const p = c.readinessProbe;
  if (p === undefined) return; // sidecars may go without a readiness probe
  if (!p.successThreshold) p.successThreshold = 1;
  if (p.periodSeconds) {
    // Kubernetes' own defaults, applied once periodSeconds opts out of Knative's aggressive probing.
    if (!p.failureThreshold) p.failureThreshold = 3;
    if (!p.timeoutSeconds) p.timeoutSeconds = 1;
  }
}

function applyGrpcProbeDefaults(c: ContainerFields): void {
  for (const p of [c.readinessProbe, c.livenessProbe, c.startupProbe]) {
    if (p?.grpc != null && p.grpc.service === undefined) p.grpc.service = '';
  }
}

/** How a defaulting call was reached. */
export interface RevisionDefaultingOptions {
  /** False when defaulting an UPDATE (the webhook then leaves `enableServiceLinks` alone); default true. */
  inCreate?: boolean;
  /** config-features `secure-pod-defaults` (default Disabled). */
  securePodDefaults?: SecurePodDefaults;
}

/**
 * Knative's RevisionSpec.SetDefaults on a copy of `spec`. `parent` is the enclosing Service or
 * Configuration (its name, or its metadata) that the container-name templates read; without one they render over
 * empty metadata, as for a standalone Revision.
 */
export function setRevisionSpecDefaults(
  spec: RevisionSpec,
  cfg: DefaultsConfig,
  parent?: string | TemplateMeta,
  opts: RevisionDefaultingOptions = {},
): RevisionSpec {
  const rs = deepCopy(spec) as PodFields;
  const meta: TemplateMeta = typeof parent === 'string' ? { name: parent } : (parent ?? {});

  if (!rs.timeoutSeconds) rs.timeoutSeconds = cfg.revisionTimeoutSeconds;
  const timeout = rs.timeoutSeconds;

  // Idle and response-start timeouts: only a non-zero default below the request timeout is applied; the
  // response-start default equals the request timeout unless configured, so it stays unset by default.
  const idle = cfg.revisionIdleTimeoutSeconds;
  if (rs.idleTimeoutSeconds === undefined && idle !== 0 && idle < timeout) rs.idleTimeoutSeconds = idle;
  const responseStart = cfg.revisionResponseStartTimeoutSeconds ?? cfg.revisionTimeoutSeconds;
  if (rs.responseStartTimeoutSeconds === undefined && responseStart !== 0 && responseStart < timeout) {
    rs.responseStartTimeoutSeconds = responseStart;
  }

  if (rs.containerConcurrency === undefined) rs.containerConcurrency = cfg.containerConcurrency;

  const containers = rs.containers ?? [];
  const initContainers = rs.initContainers ?? [];
  const taken = new Set<string>();
  for (const c of [...containers, ...initContainers]) {
    if (c.name !== undefined && c.name !== '') taken.add(c.name);
  }
  applyDefaultContainerNames(containers, taken, renderNameTemplate(cfg.containerNameTemplate, meta));
  applyDefaultContainerNames(initContainers, taken, renderNameTemplate(cfg.initContainerNameTemplate, meta));

  // Volumes whose mounts may stay writable; every other mount is forced read-only.
  const writable = new Set<string>();
  for (const v of rs.volumes ?? []) {
    if ((v.emptyDir != null || v.persistentVolumeClaim != null || v.ephemeral != null) && v.name !== undefined) writable.add(v.name);
  }

  for (const c of containers) {
    applyResourceDefaults(c, cfg);
    // The serving container (the only one, or the one with a port) gets a TCP readiness probe if it has none.
    if (containers.length === 1 || (c.ports?.length ?? 0) > 0) {
      const probe: Probe = c.readinessProbe ?? {};
      if (!hasHandler(probe)) probe.tcpSocket = {};
      c.readinessProbe = probe;
    }
    applyReadinessProbeDefaults(c);
    applyGrpcProbeDefaults(c);
    for (const m of c.volumeMounts ?? []) {
      if (m.name === undefined || !writable.has(m.name)) m.readOnly = true;
    }
  }
  const podSecurityContext = rs.securityContext as Record<string, unknown> | undefined;
  for (const c of [...containers, ...initContainers]) applySecurePodDefaults(c, podSecurityContext, opts.securePodDefaults ?? 'Disabled');

  // Knative defaults enableServiceLinks only when the object is created (apis.IsInCreate).
  const inCreate = opts.inCreate ?? true;
  if (inCreate && rs.enableServiceLinks === undefined && cfg.enableServiceLinks !== undefined) rs.enableServiceLinks = cfg.enableServiceLinks;
  return rs;
}

/** Traffic-target defaults: latestRevision ← revisionName is empty; percent ← 0 (Knative's TrafficTarget.SetDefaults). */
function setTrafficTargetDefaults(tt: TrafficTarget): TrafficTarget {
  const out = deepCopy(tt);
  if (out.latestRevision === undefined) out.latestRevision = (out.revisionName ?? '') === '';
  if (out.percent === undefined) out.percent = 0;
  return out;
}

function setRouteSpecDefaults(spec: RouteSpec, hasDefaultConfiguration: boolean): RouteSpec {
  const out = deepCopy(spec);
  if ((out.traffic ?? []).length === 0 && hasDefaultConfiguration) {
    out.traffic = [{ percent: 100, latestRevision: true }];
  }
  if (out.traffic !== undefined) out.traffic = out.traffic.map(setTrafficTargetDefaults);
  return out;
}

function templateMeta(meta: ObjectMeta): TemplateMeta {
  const { name, generateName, namespace, uid, resourceVersion, generation, labels, annotations } = meta;
  return { name, generateName, namespace, uid, resourceVersion, generation, labels, annotations };
}

/** True when the template keeps a user-chosen (BYO) name from `previous`: Knative then skips template defaulting. */
function keepsByoName(current: { metadata?: { name?: string } }, previous: { metadata?: { name?: string } } | undefined): boolean {
  const name = current.metadata?.name ?? '';
  return previous !== undefined && name !== '' && name === (previous.metadata?.name ?? '');
}

/**
 * Knative's Configuration.SetDefaults: the template's spec defaults, with the Configuration as the name templates'
 * parent. Pass `previous` (the object before this update) to skip template defaulting when a BYO template name is
 * unchanged, as Knative does.
 */
export function setConfigurationDefaults(
  cfg: Configuration,
  defaults: DefaultsConfig,
  previous?: Configuration,
  features: Pick<RevisionDefaultingOptions, 'securePodDefaults'> = {},
): Configuration {
  const out = deepCopy(cfg);
  if (!keepsByoName(out.spec.template, previous?.spec.template)) {
    const opts = { ...features, inCreate: previous === undefined };
    out.spec.template.spec = setRevisionSpecDefaults(out.spec.template.spec, defaults, templateMeta(out.metadata), opts);
  }
  return out;
}

/**
 * Knative's Service.SetDefaults: template defaults (as for a Configuration) and traffic defaults — an empty traffic
 * list becomes `[{percent: 100, latestRevision: true}]`; each target's latestRevision defaults to
 * `revisionName === ''` and an absent percent to 0.
 */
export function setServiceDefaults(
  svc: Service,
  defaults: DefaultsConfig,
  previous?: Service,
  features: Pick<RevisionDefaultingOptions, 'securePodDefaults'> = {},
): Service {
  const out = deepCopy(svc);
  if (!keepsByoName(out.spec.template, previous?.spec.template)) {
    const opts = { ...features, inCreate: previous === undefined };
    out.spec.template.spec = setRevisionSpecDefaults(out.spec.template.spec, defaults, templateMeta(out.metadata), opts);
  }
  const route = setRouteSpecDefaults({ traffic: out.spec.traffic }, true);
  out.spec.traffic = route.traffic;
  return out;
}

/** Knative's Route.SetDefaults: per-target defaults only (a Route has no default configuration to point at). */
export function setRouteDefaults(route: Route): Route {
  const out = deepCopy(route);
  out.spec = setRouteSpecDefaults(out.spec, false);
  return out;
}

// ---------------------------------------------------------------------------------------------------------------
// Freezing the defaults of existing objects.
//
// The admission webhook (api/admission.ts) stores Knative's defaults in the object, as upstream's does, so a later
// config-defaults change never touches an existing template and never rolls a Revision. The reconcilers still
// default in memory before each reconcile, for two reasons, and this never changes a field the object has:
//   - an object may have bypassed the webhook (created while it was not registered, or before Tidal had one): its
//     missing fields must be filled, and filled the same way on every pass;
//   - some defaults are conditional (`revision-cpu-request` and the other resources, the idle and response-start
//     timeouts, `enable-service-links`): a stored object may lack them because config-defaults had none when it was
//     admitted, and filling them from a later config-defaults would roll every Revision.
// So each object is defaulted with the values in force when Tidal first defaulted it, recorded in the annotation
// `tidal.dev/defaults` on the children Tidal makes from the defaulted template:
//   Service       → its Configuration (stamped by the Service reconcile on every apply);
//   Configuration → each Revision it creates (stamped at create; a Revision's spec never changes).
// `defaultsInForce` reads them back: the object's own stamp (a Service's Configuration, a Revision), else the
// newest stamp among the children it controls, else — first sight of the object — the current values, with the
// conditional ones dropped when the webhook admitted it (it carries `serving.knative.dev/creator`): the webhook
// already chose them, and filling them now would add what config-defaults says today, not at admission. For an
// admitted object every pass is therefore a no-op; for one that bypassed the webhook the values are frozen at first
// sight. All three layers default with the same values: the Service's template, the Configuration's (a no-op on a
// template the Service already defaulted) and the Revision's.
// Left as is: a standalone Revision (no stamp, no creator) is defaulted with today's values on every read.

/** Annotation on Configurations and Revisions Tidal makes: the config-defaults values their template was defaulted with. */
export const DefaultsSnapshotAnnotation = 'tidal.dev/defaults';

// The DefaultsConfig fields defaulting reads (the others only bound validation, which always uses today's config).
const numberKeys = ['revisionTimeoutSeconds', 'revisionIdleTimeoutSeconds', 'containerConcurrency'] as const;
const stringKeys = ['containerNameTemplate', 'initContainerNameTemplate'] as const;
const optionalNumberKeys = ['revisionResponseStartTimeoutSeconds'] as const;
const optionalStringKeys = [
  'revisionCpuRequest',
  'revisionCpuLimit',
  'revisionMemoryRequest',
  'revisionMemoryLimit',
  'revisionEphemeralStorageRequest',
  'revisionEphemeralStorageLimit',
] as const;
const optionalBooleanKeys = ['enableServiceLinks'] as const;
const snapshotKeys = [...numberKeys, ...optionalNumberKeys, ...stringKeys, ...optionalStringKeys, ...optionalBooleanKeys] as const;

/** The annotation value for `defaults`: JSON of the fields defaulting reads, `null` for an unset optional one. */
export function defaultsSnapshot(defaults: DefaultsConfig): string {
  const out: Record<string, unknown> = {};
  for (const k of snapshotKeys) out[k] = defaults[k] ?? null;
  return JSON.stringify(out);
}

/**
 * `current` with the values of a snapshot annotation laid over it, or undefined when `value` is absent or not a
 * snapshot (wrong JSON or a wrongly typed field: then the next source is asked). A key the snapshot lacks (one a
 * later Tidal added) keeps its current value.
 */
export function readDefaultsSnapshot(value: string | undefined, current: DefaultsConfig): DefaultsConfig | undefined {
  if (value === undefined) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    return undefined;
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) return undefined;
  const snap = parsed as Record<string, unknown>;
  const out: DefaultsConfig = { ...current };
  const has = (k: string): boolean => Object.hasOwn(snap, k);
  for (const k of numberKeys) {
    if (!has(k)) continue;
    const v = snap[k];
    if (typeof v !== 'number' || !Number.isFinite(v)) return undefined;
    out[k] = v;
  }
  for (const k of stringKeys) {
    if (!has(k)) continue;
    const v = snap[k];
    if (typeof v !== 'string') return undefined;
    out[k] = v;
  }
  for (const k of optionalNumberKeys) {
    if (!has(k)) continue;
    const v = snap[k];
    if (v !== null && (typeof v !== 'number' || !Number.isFinite(v))) return undefined;
    out[k] = v ?? undefined;
  }
  for (const k of optionalStringKeys) {
    if (!has(k)) continue;
    const v = snap[k];
    if (v !== null && typeof v !== 'string') return undefined;
    out[k] = v ?? undefined;
  }
  for (const k of optionalBooleanKeys) {
    if (!has(k)) continue;
    const v = snap[k];
    if (v !== null && typeof v !== 'boolean') return undefined;
    out[k] = v ?? undefined;
  }
  return out;
}

const snapshotOf = (obj: KubeObject, current: DefaultsConfig): DefaultsConfig | undefined =>
  readDefaultsSnapshot(obj.metadata.annotations?.[DefaultsSnapshotAnnotation], current);

/**
 * The config-defaults values to default `obj` with (see above): its own snapshot, else the newest snapshot among
 * `children` that `obj` controls (a Service: its Configuration; a Configuration: its Revisions; others are
 * skipped, e.g. a child left over from a deleted namesake), else `current` — without its conditional values when the
 * webhook admitted `obj`.
 */
export function defaultsInForce(current: DefaultsConfig, obj: KubeObject, children: readonly (KubeObject | undefined)[] = []): DefaultsConfig {
  const own = snapshotOf(obj, current);
  if (own !== undefined) return own;
  const newestFirst = children
    .filter((c): c is KubeObject => c !== undefined && isControlledBy(c, obj.metadata.uid))
    .sort((a, b) => {
      const ta = a.metadata.creationTimestamp ?? '';
      const tb = b.metadata.creationTimestamp ?? '';
      if (ta !== tb) return ta < tb ? 1 : -1;
      const na = a.metadata.name ?? '';
      const nb = b.metadata.name ?? '';
      return na === nb ? 0 : na < nb ? 1 : -1;
    });
  for (const c of newestFirst) {
    const snap = snapshotOf(c, current);
    if (snap !== undefined) return snap;
  }
  return obj.metadata.annotations?.[Annotations.creator] !== undefined ? withoutConditionalDefaults(current) : current;
}

/**
 * `defaults` without the values defaulting applies only when configured (resources, idle and response-start
 * timeouts, enableServiceLinks): for an object the webhook admitted, which chose them at admission.
 */
export function withoutConditionalDefaults(defaults: DefaultsConfig): DefaultsConfig {
  return {
    ...defaults,
    revisionIdleTimeoutSeconds: 0,
    revisionResponseStartTimeoutSeconds: 0,
    enableServiceLinks: undefined,
    revisionCpuRequest: undefined,
    revisionCpuLimit: undefined,
    revisionMemoryRequest: undefined,
    revisionMemoryLimit: undefined,
    revisionEphemeralStorageRequest: undefined,
    revisionEphemeralStorageLimit: undefined,
  };
}

/** `child` (a desired Configuration or Revision made from a template defaulted with `defaults`) with its snapshot. */
export function withDefaultsSnapshot<T extends KubeObject>(child: T, defaults: DefaultsConfig): T {
  return {
    ...child,
    metadata: { ...child.metadata, annotations: { ...child.metadata.annotations, [DefaultsSnapshotAnnotation]: defaultsSnapshot(defaults) } },
  };
}
