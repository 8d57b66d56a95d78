// The Istio VirtualServices net-istio makes for a Knative Ingress (KIngress): `<ingress>-ingress`, bound to the
// gateways, and `<ingress>-mesh`, for the sidecars. Ported from net-istio
// `pkg/reconciler/ingress/resources/virtual_service.go` and knative/networking `pkg/ingress/ingress.go`
// (ExpandedHosts, InsertProbe).
//
// The objects are the JSON net-istio sends to the API server (Istio's jsonpb): empty lists and maps, zero weights and
// zero port numbers are left out, and `retries: {}` is always present.
import type { ObjectMeta, OwnerReference } from '../../api/meta.js';
import { controllerRef } from '../owner.js';
import {
  DEFAULT_CLUSTER_DOMAIN,
  DEFAULT_INGRESS_GATEWAY,
  DEFAULT_LOCAL_GATEWAY,
  INGRESS_LABEL_KEY,
  ISTIO_NETWORKING_API_VERSION,
  KINGRESS_API_VERSION,
  KINGRESS_KIND,
  MESH_GATEWAY,
  ROUTE_LABEL_KEY,
  ROUTE_NAMESPACE_LABEL_KEY,
  SYSTEM_NAMESPACE,
  ingressVirtualServiceName,
  meshVirtualServiceName,
  serviceHostname,
} from './names.js';

// ---------------------------------------------------------------------------------------------------------------
// Input: the part of a `networking.internal.knative.dev/v1alpha1` Ingress the builders read.

export type IngressVisibility = 'ExternalIP' | 'ClusterLocal';

export interface IngressHeaderMatch {
  exact: string;
}

export interface IngressBackendSplitLike {
  serviceNamespace: string;
  serviceName: string;
  /** IntOrString; a string is read as Go's `IntOrString.IntValue()` does (a decimal number, else 0). */
  servicePort: number | string;
  percent?: number;
  appendHeaders?: Record<string, string>;
}

export interface HTTPIngressPathLike {
  path?: string;
  rewriteHost?: string;
  headers?: Record<string, IngressHeaderMatch>;
  splits: IngressBackendSplitLike[];
  appendHeaders?: Record<string, string>;
}

export interface IngressRuleLike {
  hosts?: string[];
  /** Unset means ExternalIP once the Ingress is defaulted; the builders, like net-istio's, do not default it. */
  visibility?: IngressVisibility;
  http?: { paths: HTTPIngressPathLike[] };
}

/** The minimal KIngress the builders need (Knative `networking.internal.knative.dev/v1alpha1` Ingress). */
export interface IngressLike {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
  spec: {
    rules?: IngressRuleLike[];
    tls?: { hosts?: string[]; secretName?: string; secretNamespace?: string }[];
    httpOption?: 'Enabled' | 'Redirected';
  };
}

// ---------------------------------------------------------------------------------------------------------------
// Output: the VirtualService fields net-istio fills in.

export interface StringMatch {
  exact?: string;
  prefix?: string;
  regex?: string;
}

export interface HTTPMatchRequest {
  uri?: StringMatch;
  authority?: StringMatch;
  headers?: Record<string, StringMatch>;
  gateways?: string[];
}

export interface HeaderOperations {
  request: { set: Record<string, string> };
}

export interface HTTPRouteDestination {
  destination: { host: string; port: { number?: number } };
  weight?: number;
  headers?: HeaderOperations;
}

export interface HTTPRoute {
  match?: HTTPMatchRequest[];
  route?: HTTPRouteDestination[];
  rewrite?: { authority: string };
  /** Always `{}`: zero attempts, overriding Istio's default of two retries. */
  retries: Record<string, never>;
  headers?: HeaderOperations;
}

export interface VirtualServiceSpec {
  hosts?: string[];
  gateways?: string[];
  http?: HTTPRoute[];
}

export interface VirtualService {
  apiVersion: string;
  kind: 'VirtualService';
  metadata: ObjectMeta & { name: string; namespace: string; labels: Record<string, string>; ownerReferences: OwnerReference[] };
  spec: VirtualServiceSpec;
}

/** The gateways of config-istio, as qualified `namespace/name` strings, and the cluster domain. */
export interface IstioGatewayOptions {
  /** Gateways for ExternalIP rules (config-istio `external-gateways`). */
  ingressGateways: readonly string[];
  /** Gateways for ClusterLocal rules (config-istio `local-gateways`). */
  localGateways: readonly string[];
  /** Cluster domain; `cluster.local` when unset. */
  clusterDomain?: string;
}

/** config-istio's defaults: `knative-serving/knative-ingress-gateway` and `knative-serving/knative-local-gateway`. */
export const DEFAULT_ISTIO_GATEWAYS: Readonly<IstioGatewayOptions> = Object.freeze({
  ingressGateways: Object.freeze([DEFAULT_INGRESS_GATEWAY]),
  localGateways: Object.freeze([DEFAULT_LOCAL_GATEWAY]),
});

/** Probe header (knative/networking `HashHeaderName` / `HashHeaderValue`). */
export const PROBE_HASH_HEADER = 'K-Network-Hash';
export const PROBE_HASH_OVERRIDE = 'override';

// ---------------------------------------------------------------------------------------------------------------
// Builders.

/**
 * `<ingress>-ingress`: the VirtualService bound to the configured gateways (net-istio `MakeIngressVirtualService`).
 * Hosts are every rule host, expanded; each rule's routes match on the gateways of its visibility (none for an unset
 * visibility: default the Ingress first); the top-level gateways are those that appear in some match.
 */
export function makeIngressVirtualService(ingress: IngressLike, opts: IstioGatewayOptions): VirtualService {
  const clusterDomain = opts.clusterDomain ?? DEFAULT_CLUSTER_DOMAIN;
  const hosts = expandedHosts(ruleHosts(ingress), clusterDomain);
  const gateways: GatewayMap = { ExternalIP: sortedUnique(opts.ingressGateways), ClusterLocal: sortedUnique(opts.localGateways) };
  return {
    apiVersion: ISTIO_NETWORKING_API_VERSION,
    kind: 'VirtualService',
    metadata: childMetadata(ingress, ingressVirtualServiceName(ingress.metadata.name ?? '')),
    spec: makeVirtualServiceSpec(ingress, gateways, hosts, clusterDomain),
  };
}

/**
 * `<ingress>-mesh`: the VirtualService for the sidecars (net-istio `MakeMeshVirtualService`), or undefined when no
 * host ends in `.svc.<cluster-domain>`. Hosts are only those cluster-local names, expanded to `x.ns` and `x.ns.svc`
 * when a local gateway is configured (knative/serving#6488); every match is on the gateway `mesh`. Without `opts`,
 * config-istio's defaults apply (a local gateway exists, so the hosts are expanded).
 */
export function makeMeshVirtualService(
  ingress: IngressLike,
  opts: Partial<IstioGatewayOptions> = DEFAULT_ISTIO_GATEWAYS,
): VirtualService | undefined {
  const clusterDomain = opts.clusterDomain ?? DEFAULT_CLUSTER_DOMAIN;
  let hosts = keepLocalHostnames(ruleHosts(ingress), clusterDomain);
  if ((opts.localGateways ?? []).length > 0) hosts = expandedHosts(hosts, clusterDomain);
  if (hosts.length === 0) return undefined;
  const mesh: GatewayMap = { ExternalIP: [MESH_GATEWAY], ClusterLocal: [MESH_GATEWAY] };
  return {
    apiVersion: ISTIO_NETWORKING_API_VERSION,
    kind: 'VirtualService',
    metadata: childMetadata(ingress, meshVirtualServiceName(ingress.metadata.name ?? '')),
    spec: makeVirtualServiceSpec(ingress, mesh, hosts, clusterDomain),
  };
}

/**
 * Every VirtualService net-istio wants for `ingress` (`MakeVirtualServices`), mesh first: the probe routes are
 * inserted with `probeHash` (see {@link insertProbe}); the mesh VS is left out when there is no cluster-local host;
 * the ingress VS is left out unless a public rule (ExternalIP or unset) has an ingress gateway, or a ClusterLocal rule
 * has a local gateway. Both lists empty is net-istio's mesh-only mode.
 *
 * `probeHash` is net-istio's `hex(sha256(json(spec) + namespace + name))`; any value that changes whenever the
 * Ingress does serves the readiness prober equally well.
 */
export function makeVirtualServices(ingress: IngressLike, opts: IstioGatewayOptions, probeHash: string): VirtualService[] {
  const probed = insertProbe(ingress, probeHash);
  const out: VirtualService[] = [];
  const mesh = makeMeshVirtualService(probed, opts);
  if (mesh) out.push(mesh);
  const rules = probed.spec.rules ?? [];
  let required = 0;
  if (rules.some((r) => r.visibility === 'ExternalIP' || r.visibility === undefined)) required += new Set(opts.ingressGateways).size;
  if (rules.some((r) => r.visibility === 'ClusterLocal')) required += new Set(opts.localGateways).size;
  if (required > 0) out.push(makeIngressVirtualService(probed, opts));
  return out;
}

/**
 * A copy of `ingress` with net-istio's readiness probe routes (knative/networking `InsertProbe`): in every rule, each
 * path is copied and the copies are put in front of the originals. A copy also matches the header
 * `K-Network-Hash: override` and sets `K-Network-Hash: <hash>` on the request. The input is not modified.
 * Throws, as Go returns an error, for a rule without an `http` block.
 */
export function insertProbe(ingress: IngressLike, hash: string): IngressLike {
  const rules = (ingress.spec.rules ?? []).map((rule): IngressRuleLike => {
    if (!rule.http) throw new Error(`rule is missing HTTP block: ${JSON.stringify(rule)}`);
    const probes = rule.http.paths.map((p): HTTPIngressPathLike => ({
      ...clonePath(p),
      headers: { ...p.headers, [PROBE_HASH_HEADER]: { exact: PROBE_HASH_OVERRIDE } },
      appendHeaders: { ...p.appendHeaders, [PROBE_HASH_HEADER]: hash },
    }));
    return { ...rule, http: { ...rule.http, paths: [...probes, ...rule.http.paths.map(clonePath)] } };
  });
  return { ...ingress, spec: { ...ingress.spec, ...(ingress.spec.rules ? { rules } : {}) } };
}

/**
 * One HTTPRoute for a KIngress path (net-istio `makeVirtualServiceRoute`): one match per distinct host prefix (sorted),
 * each with the authority prefix, the path prefix if any, the exact header matches and `gateways`; one destination per
 * split (`<svc>.<ns>.svc.<cd>`, port number, weight = percent, the split's appendHeaders set on the request); the
 * path's appendHeaders set on the request; `rewrite.authority` for rewriteHost; `retries: {}`.
 */
export function makeVirtualServiceRoute(
  hosts: Iterable<string>,
  path: HTTPIngressPathLike,
  gateways: Iterable<string>,
  clusterDomain: string = DEFAULT_CLUSTER_DOMAIN,
): HTTPRoute {
  const matchGateways = sortedUnique(gateways);
  const match = distinctHostPrefixes(hosts, clusterDomain).map((host) => makeMatch(host, path, matchGateways));
  const route = path.splits.map((split): HTTPRouteDestination => {
    const port = intOrStringValue(split.servicePort);
    const percent = split.percent ?? 0;
    return {
      destination: { host: serviceHostname(split.serviceName, split.serviceNamespace, clusterDomain), port: port !== 0 ? { number: port } : {} },
      ...(percent !== 0 ? { weight: percent } : {}),
      ...headerOperations(split.appendHeaders),
    };
  });
  return {
    ...(match.length ? { match } : {}),
    ...(route.length ? { route } : {}),
    ...(path.rewriteHost ? { rewrite: { authority: path.rewriteHost } } : {}),
    retries: {},
    ...headerOperations(path.appendHeaders),
  };
}

/**
 * knative/networking `ExpandedHosts`: each host, plus, when it ends in `.<cd>`, the host without it, and, when it
 * ends in `.svc.<cd>`, the host without that; a candidate whose last label is all digits (or empty) or longer than 63
 * characters is dropped. Sorted, without duplicates.
 */
export function expandedHosts(hosts: Iterable<string>, clusterDomain: string = DEFAULT_CLUSTER_DOMAIN): string[] {
  const suffixes = [`.${clusterDomain}`, `.svc.${clusterDomain}`];
  const out = new Set<string>();
  for (const h of sortedUnique(hosts)) {
    if (isValidTopLevelDomain(h)) out.add(h);
    for (const suffix of suffixes) {
      if (h.endsWith(suffix)) {
        const trimmed = h.slice(0, h.length - suffix.length);
        if (isValidTopLevelDomain(trimmed)) out.add(trimmed);
      }
    }
  }
  return sortedUnique(out);
}

/**
 * net-istio `getDistinctHostPrefixes`: the hosts are sorted, `.svc.<cd>` is cut from cluster-local ones, and a prefix
 * is kept only if no prefix kept before it starts it (e.g. {a, ab, abc, xyz, xy, m} → [a, m, xy]). Sorted.
 */
export function distinctHostPrefixes(hosts: Iterable<string>, clusterDomain: string = DEFAULT_CLUSTER_DOMAIN): string[] {
  const kept: string[] = [];
  for (const host of sortedUnique(hosts)) {
    const prefix = hostPrefix(host, clusterDomain);
    if (!kept.some((k) => prefix.startsWith(k))) kept.push(prefix);
  }
  return sortedUnique(kept);
}

// ---------------------------------------------------------------------------------------------------------------
// Internals.

interface GatewayMap {
  ExternalIP: string[];
  ClusterLocal: string[];
}

function makeVirtualServiceSpec(ingress: IngressLike, gateways: GatewayMap, hosts: string[], clusterDomain: string): VirtualServiceSpec {
  const vsHosts = new Set(hosts);
  const http: HTTPRoute[] = [];
  const used = new Set<string>();
  for (const rule of ingress.spec.rules ?? []) {
    const ruleHostsInVs = (rule.hosts ?? []).filter((h) => vsHosts.has(h));
    if (ruleHostsInVs.length === 0) continue;
    // Go indexes a map by the visibility: an unset (or unknown) one has no gateways.
    const ruleGateways = rule.visibility === 'ExternalIP' || rule.visibility === 'ClusterLocal' ? gateways[rule.visibility] : [];
    for (const path of rule.http?.paths ?? []) {
      const route = makeVirtualServiceRoute(ruleHostsInVs, path, ruleGateways, clusterDomain);
      for (const m of route.match ?? []) for (const g of m.gateways ?? []) used.add(g);
      http.push(route);
    }
  }
  const gatewayList = sortedUnique(used);
  return {
    ...(hosts.length ? { hosts: sortedUnique(hosts) } : {}),
    ...(gatewayList.length ? { gateways: gatewayList } : {}),
    ...(http.length ? { http } : {}),
  };
}

function makeMatch(host: string, path: HTTPIngressPathLike, gateways: string[]): HTTPMatchRequest {
  const headerNames = sortedUnique(Object.keys(path.headers ?? {}));
  const headers: Record<string, StringMatch> = {};
  for (const name of headerNames) headers[name] = { exact: path.headers![name]!.exact };
  return {
    ...(gateways.length ? { gateways: [...gateways] } : {}),
    authority: { prefix: host },
    ...(path.path ? { uri: { prefix: path.path } } : {}),
    ...(headerNames.length ? { headers } : {}),
  };
}

/** `{headers: {request: {set}}}` for a non-empty map (keys sorted), else nothing. */
function headerOperations(set: Record<string, string> | undefined): { headers?: HeaderOperations } {
  const keys = sortedUnique(Object.keys(set ?? {}));
  if (keys.length === 0) return {};
  const sorted: Record<string, string> = {};
  for (const k of keys) sorted[k] = set![k]!;
  return { headers: { request: { set: sorted } } };
}

/** VirtualService metadata shared by both kinds (net-istio: namespace, controller ref, annotations, two labels). */
function childMetadata(ingress: IngressLike, name: string): VirtualService['metadata'] {
  const src = ingress.metadata.labels ?? {};
  const labels: Record<string, string> = {};
  for (const key of [ROUTE_LABEL_KEY, ROUTE_NAMESPACE_LABEL_KEY]) if (key in src) labels[key] = src[key]!;
  labels[INGRESS_LABEL_KEY] = ingress.metadata.name ?? '';
  const annotations = ingress.metadata.annotations ?? {};
  return {
    name,
    namespace: ingress.metadata.namespace || SYSTEM_NAMESPACE,
    labels,
    ...(Object.keys(annotations).length ? { annotations: { ...annotations } } : {}),
    ownerReferences: [controllerRef({ apiVersion: KINGRESS_API_VERSION, kind: KINGRESS_KIND, metadata: ingress.metadata })],
  };
}

function ruleHosts(ingress: IngressLike): string[] {
  return sortedUnique((ingress.spec.rules ?? []).flatMap((r) => r.hosts ?? []));
}

/** net-istio `keepLocalHostnames`: only the hosts ending in `.svc.<cd>`. */
function keepLocalHostnames(hosts: string[], clusterDomain: string): string[] {
  return hosts.filter((h) => h.endsWith(`.svc.${clusterDomain}`));
}

/** net-istio `hostPrefix`: a cluster-local host without `.svc.<cd>`, so `x.ns` also covers `x.ns.svc[.cd]`. */
function hostPrefix(host: string, clusterDomain: string): string {
  const suffix = `.svc.${clusterDomain}`;
  return host.endsWith(suffix) ? host.slice(0, host.length - suffix.length) : host;
}

/** knative/networking `isValidTopLevelDomain`: the last label is at most 63 characters and not all digits. */
function isValidTopLevelDomain(domain: string): boolean {
  const tld = domain.slice(domain.lastIndexOf('.') + 1);
  if (tld.length > 63) return false;
  return /[^0-9]/.test(tld);
}

/** Go `IntOrString.IntValue()`: the number, or a decimal string parsed (0 if it does not parse). */
function intOrStringValue(v: number | string): number {
  if (typeof v === 'number') return v;
  return /^[+-]?[0-9]+$/.test(v) ? Number.parseInt(v, 10) : 0;
}

function clonePath(p: HTTPIngressPathLike): HTTPIngressPathLike {
  return {
    ...p,
    ...(p.headers ? { headers: Object.fromEntries(Object.entries(p.headers).map(([k, v]) => [k, { ...v }])) } : {}),
    ...(p.appendHeaders ? { appendHeaders: { ...p.appendHeaders } } : {}),
    splits: p.splits.map((s) => ({ ...s, ...(s.appendHeaders ? { appendHeaders: { ...s.appendHeaders } } : {}) })),
  };
}

/** Go `sets.List`: unique, sorted by code unit (byte order for the ASCII names Kubernetes allows). */
function sortedUnique(values: Iterable<string>): string[] {
  return [...new Set(values)].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}
