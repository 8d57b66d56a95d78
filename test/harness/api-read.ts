// The reads the e2e and real tests make of the cluster, straight from the API server. `kubectl get … -o json` starts
// a Go binary per read (about a tenth of a CPU-second), and the tests poll; the answer is the same JSON. Writes still
// go through kubectl, as a user makes them, and so does any `get` this does not know (another output, another kind).
import { apiVersionOf, Resources, type ResourceType } from '../../api/kinds.js';
import type { KubeObject } from '../../api/meta.js';
import { KubeClient } from '../../kube/client.js';

/** The names kubectl takes for the kinds the tests read: plural, singular, short, and `<plural>.<group>`. */
const KINDS: [ResourceType, ...string[]][] = [
  [Resources.Service, 'ksvc', 'kservice', 'kservices', 'services.serving.knative.dev', 'service.serving.knative.dev'],
  [Resources.Configuration, 'configuration', 'configurations', 'config', 'cfg', 'configurations.serving.knative.dev'],
  [Resources.Revision, 'revision', 'revisions', 'rev', 'revisions.serving.knative.dev'],
  [Resources.Route, 'route', 'routes', 'rt', 'routes.serving.knative.dev'],
  [Resources.DomainMapping, 'domainmapping', 'domainmappings', 'dm', 'domainmappings.serving.knative.dev'],
  [Resources.KIngress, 'kingress', 'kingresses', 'king', 'ingresses.networking.internal.knative.dev'],
  [Resources.Certificate, 'kcert', 'certificates.networking.internal.knative.dev'],
  [Resources.VirtualService, 'virtualservice', 'virtualservices', 'vs', 'virtualservices.networking.istio.io'],
  [Resources.Gateway, 'gateways.networking.istio.io'],
  [Resources.Deployment, 'deployment', 'deployments', 'deploy', 'deployments.apps'],
  [Resources.PodDisruptionBudget, 'pdb', 'poddisruptionbudget', 'poddisruptionbudgets'],
  [Resources.HorizontalPodAutoscaler, 'hpa', 'horizontalpodautoscaler', 'horizontalpodautoscalers'],
  [Resources.Pod, 'pod', 'pods', 'po'],
  [Resources.KubeService, 'service', 'services', 'svc'],
  [Resources.ConfigMap, 'configmap', 'configmaps', 'cm'],
  [Resources.Secret, 'secret', 'secrets'],
  [Resources.Event, 'event', 'events', 'ev'],
  [Resources.Lease, 'lease', 'leases'],
];
const byName = new Map(KINDS.flatMap(([type, ...names]) => names.map((n) => [n, type] as const)));

/** A `kubectl get` the API answers alike. */
export interface ApiGet {
  type: ResourceType;
  kind: string;
  name?: string;
  namespace: string;
  labelSelector?: string;
  fieldSelector?: string;
}

/**
 * `get <kind> [<name>] [-n <ns>] [-l <selector>] [--field-selector <selector>]` (each flag also as `--flag=value`),
 * or undefined for any other form.
 */
export function parseGet(args: readonly string[]): ApiGet | undefined {
  if (args[0] !== 'get') return undefined;
  const positional: string[] = [];
  const flags: Record<string, string> = {};
  const names: Record<string, string> = {
    '-n': 'namespace',
    '--namespace': 'namespace',
    '-l': 'selector',
    '--selector': 'selector',
    '--field-selector': 'fieldSelector',
  };
  for (let i = 1; i < args.length; i++) {
    const a = args[i]!;
    const eq = a.indexOf('=');
    const flag = a.startsWith('-') && eq > 0 ? a.slice(0, eq) : a;
    if (a.startsWith('-')) {
      const key = names[flag];
      if (key === undefined) return undefined;
      const value = eq > 0 && flag !== a ? a.slice(eq + 1) : args[++i];
      if (value === undefined) return undefined;
      flags[key] = value;
    } else positional.push(a);
  }
  const [kind, name, ...more] = positional;
  const type = kind === undefined ? undefined : byName.get(kind);
  if (!type || more.length > 0 || name?.includes('/')) return undefined;
  return {
    type,
    kind: kind!,
    ...(name !== undefined ? { name } : {}),
    namespace: flags['namespace'] ?? 'default',
    ...(flags['selector'] !== undefined ? { labelSelector: flags['selector'] } : {}),
    ...(flags['fieldSelector'] !== undefined ? { fieldSelector: flags['fieldSelector'] } : {}),
  };
}

const clients = new Map<string, KubeClient>();

function clientFor(kubeconfig: string): KubeClient {
  let c = clients.get(kubeconfig);
  if (!c) clients.set(kubeconfig, (c = new KubeClient({ kubeconfig, fieldManager: 'tidal-tests' })));
  return c;
}

/** What `kubectl get … -o json` prints for `get`: the object (a NotFound error when absent), or a `List`. */
export async function apiGet(kubeconfig: string, get: ApiGet): Promise<unknown> {
  const kube = clientFor(kubeconfig);
  const { type } = get;
  if (get.name !== undefined) {
    const obj = await kube.get(type, get.namespace, get.name);
    if (!obj) throw new Error(`kubectl get ${get.kind} ${get.name}: Error from server (NotFound): ${type.plural} "${get.name}" not found`);
    return obj;
  }
  const list = await kube.list<KubeObject>(type, get.namespace, {
    ...(get.labelSelector !== undefined ? { labelSelector: get.labelSelector } : {}),
    ...(get.fieldSelector !== undefined ? { fieldSelector: get.fieldSelector } : {}),
  });
  // kubectl names each item's kind, which a list from the API leaves out.
  const items = list.items.map((o) => ({ ...o, apiVersion: apiVersionOf(type), kind: type.kind }));
  return { apiVersion: 'v1', kind: 'List', metadata: { resourceVersion: '' }, items };
}
