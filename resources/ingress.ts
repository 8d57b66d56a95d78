// makeIngress: the KIngress (networking.internal.knative.dev/v1alpha1 Ingress) of a Route
// (knative/serving pkg/reconciler/route/resources/ingress.go; knative/networking pkg/ingress ExpandedHosts).
import { Annotations, Labels } from '../api/labels.js';
import {
  IngressOwnerLabels,
  IngressVisibilityClusterLocal,
  IngressVisibilityExternalIP,
  NETWORKING_INTERNAL_API_VERSION,
  NetworkingAnnotations,
  RoutingHeaders,
  ServicePorts,
  type HTTPIngressPath,
  type HTTPOption,
  type Ingress,
  type IngressBackendSplit,
  type IngressRule,
  type IngressSpec,
  type IngressTLS,
  type IngressVisibility,
} from '../api/networking.js';
import type { Route } from '../api/serving.js';
import { kingressName } from './names.js';
import { controllerRef } from './owner.js';
import { revisionServicePort } from './revision-service.js';
import { buildRollout, rolloutAnnotation, rolloutSplits, type Rollout } from './rollout.js';
import { DefaultTarget, byteOrder, trafficNames, type RevisionTarget, type TrafficConfig } from './traffic.js';

export const DefaultClusterDomain = 'cluster.local';

/** The hosts one traffic name (`''` or a tag) is served on. Plain strings, computed by the caller's domain logic. */
export interface TrafficHosts {
  /** The cluster-local FQDN, e.g. `hello.default.svc.cluster.local`; its short forms are added (`expandedHosts`). */
  clusterLocal: string;
  /** The external hosts, one ExternalIP rule each; empty when the name is cluster-local. */
  external: readonly string[];
}

export interface IngressOptions {
  /** config-features `tag-header-based-routing: enabled`. Default false. */
  tagHeaderBasedRouting?: boolean;
  /** config-network `http-protocol` (Enabled | Redirected); the Route's annotation wins. Default `Enabled`. */
  httpOption?: HTTPOption;
  /** spec.tls, when certificates are in use. */
  tls?: readonly IngressTLS[];
  /** For the short forms of cluster-local hosts. Default `cluster.local`. */
  clusterDomain?: string;
  /** The rollout state to program and record; default the steady state of `config` (`buildRollout`). */
  rollout?: Rollout;
}

/** Annotations of a Route that never reach its KIngress (upstream `ExcludedAnnotations`). */
export const ExcludedIngressAnnotations: readonly string[] = [
  Annotations.lastAppliedConfiguration,
  NetworkingAnnotations.ingressClassAlt,
  NetworkingAnnotations.certificateClassAlt,
];

/** An invalid `networking.knative.dev/http-protocol` (or `httpOption`) annotation on the Route. */
export class InvalidHTTPProtocolError extends Error {
  constructor(readonly protocol: string) {
    super(`incorrect http-protocol annotation: ${protocol}`);
    this.name = 'InvalidHTTPProtocolError';
  }
}

/** First present key wins (knative.dev/pkg `kmap.KeyPriority.Value`). */
function firstPresent(map: Readonly<Record<string, string>> | undefined, keys: readonly string[]): string | undefined {
  for (const k of keys) if (map && Object.hasOwn(map, k)) return map[k];
  return undefined;
}

/**
 * The Route's ingress class (route.go `ingressClassForRoute`): its annotation `networking.knative.dev/ingress.class`
 * (or the alternative `ingress-class`) when non-empty, else config-network `ingress-class` (`configured`).
 */
export function ingressClassForRoute(route: Pick<Route, 'metadata'>, configured: string): string {
  const v = firstPresent(route.metadata.annotations, [NetworkingAnnotations.ingressClass, NetworkingAnnotations.ingressClassAlt]);
  return v ? v : configured;
}

/**
 * spec.httpOption (serving `networking.GetHTTPOption`): the Route's `httpOption` / `http-protocol` annotation
 * (case-insensitive `enabled` | `redirected`, anything else throws `InvalidHTTPProtocolError`), else `configured`.
 */
export function httpOptionForRoute(route: Pick<Route, 'metadata'>, configured: HTTPOption): HTTPOption {
  const v = firstPresent(route.metadata.annotations, [NetworkingAnnotations.httpOption, NetworkingAnnotations.httpProtocol]);
  if (!v) return configured;
  switch (v.toLowerCase()) {
    case 'enabled':
      return 'Enabled';
    case 'redirected':
      return 'Redirected';
    default:
      throw new InvalidHTTPProtocolError(v.toLowerCase());
  }
}

/** A TLD that is all digits, or longer than 63 characters, is not valid (networking `isValidTopLevelDomain`). */
function isValidTopLevelDomain(domain: string): boolean {
  const tld = domain.slice(domain.lastIndexOf('.') + 1);
  if (tld.length > 63) return false;
  for (const c of tld) if (c === '-' || c > '9') return true;
  return false;
}

/**
 * knative/networking `ingress.ExpandedHosts`: every host plus its forms without `.<clusterDomain>` and without
 * `.svc.<clusterDomain>`, dropping results whose TLD is all digits; sorted and unique. So
 * `hello.default.svc.cluster.local` → `hello.default`, `hello.default.svc`, `hello.default.svc.cluster.local`.
 */
export function expandedHosts(hosts: Iterable<string>, clusterDomain: string = DefaultClusterDomain): string[] {
  const suffixes = ['', `.${clusterDomain}`, `.svc.${clusterDomain}`];
  const out = new Set<string>();
  for (const h of hosts) {
    for (const suffix of suffixes) {
      if (suffix !== '' && !h.endsWith(suffix)) continue;
      const th = h.slice(0, h.length - suffix.length);
      if (isValidTopLevelDomain(th)) out.add(th);
    }
  }
  return [...out].sort(byteOrder);
}

/** The port of the revision's Service that a split targets: 80 (http1) or 81 (h2c), per `revisionServicePort`. */
function splitPort(config: Pick<TrafficConfig, 'revisions'>, t: RevisionTarget): number {
  const rev = Object.hasOwn(config.revisions, t.revisionName) ? config.revisions[t.revisionName] : undefined;
  if (rev) return revisionServicePort(rev).port;
  return t.protocol === 'h2c' ? ServicePorts.http2 : ServicePorts.http;
}

function split(ns: string, revisionName: string, port: number, percent: number): IngressBackendSplit {
  return {
    serviceNamespace: ns,
    serviceName: revisionName,
    servicePort: port,
    percent,
    appendHeaders: { [RoutingHeaders.revision]: revisionName, [RoutingHeaders.namespace]: ns },
  };
}

/**
 * One path splitting to the revision Services `<rev>` (upstream `makeBaseIngressPath`): 0 % targets are left out; a
 * latestRevision target with a rollout of two or more revisions (or held on another revision: abort, rollback)
 * expands into that rollout's revisions (`rolloutSplits`).
 */
function basePath(
  ns: string,
  config: Pick<TrafficConfig, 'revisions'>,
  targets: readonly RevisionTarget[],
  tag: string,
  rollout: Rollout,
): HTTPIngressPath {
  const splits: IngressBackendSplit[] = [];
  for (const t of targets) {
    if (t.percent === 0) continue;
    const port = splitPort(config, t);
    const revs = rolloutSplits(rollout, tag, t);
    if (revs === undefined) {
      splits.push(split(ns, t.revisionName, port, t.percent));
    } else {
      for (const r of revs) splits.push(split(ns, r.revisionName, port, r.percent));
    }
  }
  return { splits };
}

function hostsOf(hosts: Readonly<Record<string, TrafficHosts>>, name: string): TrafficHosts {
  const h = Object.hasOwn(hosts, name) ? hosts[name] : undefined;
  if (!h) throw new Error(`makeIngress: no hosts given for traffic target ${JSON.stringify(name)}`);
  return h;
}

function clonePath(p: HTTPIngressPath): HTTPIngressPath {
  return {
    ...p,
    splits: p.splits.map((s) => ({ ...s, ...(s.appendHeaders ? { appendHeaders: { ...s.appendHeaders } } : {}) })),
    ...(p.appendHeaders ? { appendHeaders: { ...p.appendHeaders } } : {}),
    ...(p.headers ? { headers: { ...p.headers } } : {}),
  };
}

/**
 * The KIngress spec (upstream `MakeIngressSpec`). For every traffic name in sorted order (`''` first):
 * - one ClusterLocal rule with the expanded cluster-local hosts;
 * - one ExternalIP rule per external host (none for a cluster-local name);
 * each with one path splitting to the name's revisions. With tag-header-based routing, the default name's rules
 * append `Knative-Serving-Default-Route: true` and get one leading path per tag (sorted) matching
 * `Knative-Serving-Tag: <tag>`; a tag's rules append `Knative-Serving-Tag: <tag>`.
 */
export function makeIngressSpec(
  route: Route,
  config: Pick<TrafficConfig, 'targets' | 'revisions'>,
  hosts: Readonly<Record<string, TrafficHosts>>,
  options: IngressOptions = {},
): IngressSpec {
  const ns = route.metadata.namespace ?? '';
  const rollout = options.rollout ?? buildRollout(config);
  const names = trafficNames(config);
  const tags = names.filter((n) => n !== DefaultTarget);
  const rules: IngressRule[] = [];

  for (const name of names) {
    const h = hostsOf(hosts, name);
    const base = basePath(ns, config, config.targets[name] ?? [], name, rollout);
    const ruleHosts: [IngressVisibility, string[]][] = [
      [IngressVisibilityClusterLocal, expandedHosts([h.clusterLocal], options.clusterDomain)],
      ...[...new Set(h.external)].sort(byteOrder).map((host): [IngressVisibility, string[]] => [IngressVisibilityExternalIP, [host]]),
    ];
    for (const [visibility, hs] of ruleHosts) {
      const paths = [clonePath(base)];
      if (options.tagHeaderBasedRouting) {
        const first = paths[0]!;
        if (name === DefaultTarget) {
          first.appendHeaders = { ...first.appendHeaders, [RoutingHeaders.defaultRoute]: 'true' };
          const tagPaths = tags.map((tag) => ({
            headers: { [RoutingHeaders.routeTag]: { exact: tag } },
            ...basePath(ns, config, config.targets[tag] ?? [], tag, rollout),
          }));
          paths.unshift(...tagPaths);
        } else {
          first.appendHeaders = { ...first.appendHeaders, [RoutingHeaders.routeTag]: name };
        }
      }
      rules.push({ hosts: hs, visibility, http: { paths } });
    }
  }

  const spec: IngressSpec = {};
  if (options.tls?.length) spec.tls = options.tls.map((t) => ({ ...t, ...(t.hosts ? { hosts: [...t.hosts] } : {}) }));
  if (rules.length) spec.rules = rules;
  spec.httpOption = httpOptionForRoute(route, options.httpOption ?? 'Enabled');
  return spec;
}

/** `{"<tag>": [hosts...]}` for every tag: its external hosts and its cluster-local FQDN, sorted. */
function tagToHost(names: readonly string[], hosts: Readonly<Record<string, TrafficHosts>>): string | undefined {
  const tags = names.filter((n) => n !== DefaultTarget);
  if (!tags.length) return undefined;
  const m: Record<string, string[]> = {};
  for (const tag of [...tags].sort(byteOrder)) {
    const h = hostsOf(hosts, tag);
    m[tag] = [...new Set([h.clusterLocal, ...h.external])].sort(byteOrder);
  }
  return JSON.stringify(m);
}

/**
 * The KIngress of `route` (upstream `MakeIngress`):
 * - name `ChildName(route, "")` (the Route's name), the Route's namespace, a controller ownerRef to the Route;
 * - labels: the Route's plus `serving.knative.dev/route` and `serving.knative.dev/routeNamespace`;
 * - annotations: `networking.knative.dev/ingress.class` (`ingressClassForRoute(route, ingressClass)`) and
 *   `networking.internal.knative.dev/rollout` (JSON), overridden by the Route's own annotations, minus kubectl's
 *   last-applied and the alternative `ingress-class` / `certificate-class` keys; plus
 *   `networking.internal.knative.dev/tag-to-host` when there are tags;
 * - spec from `makeIngressSpec`.
 * `hosts` must hold an entry for every traffic name of `config` (`''` and each tag).
 */
export function makeIngress(
  route: Route,
  config: Pick<TrafficConfig, 'targets' | 'revisions'>,
  hosts: Readonly<Record<string, TrafficHosts>>,
  ingressClass: string,
  options: IngressOptions = {},
): Ingress {
  const name = route.metadata.name ?? '';
  const namespace = route.metadata.namespace ?? '';
  const rollout = options.rollout ?? buildRollout(config);
  const spec = makeIngressSpec(route, config, hosts, { ...options, rollout });

  const annotations: Record<string, string> = {
    [NetworkingAnnotations.ingressClass]: ingressClassForRoute(route, ingressClass),
    [NetworkingAnnotations.rollout]: rolloutAnnotation(rollout),
    ...route.metadata.annotations,
  };
  for (const k of ExcludedIngressAnnotations) delete annotations[k];
  const t2h = tagToHost(trafficNames(config), hosts);
  if (t2h !== undefined) annotations[NetworkingAnnotations.tagToHost] = t2h;

  return {
    apiVersion: NETWORKING_INTERNAL_API_VERSION,
    kind: 'Ingress',
    metadata: {
      name: kingressName(name),
      namespace,
      labels: { ...route.metadata.labels, [Labels.route]: name, [IngressOwnerLabels.routeNamespace]: namespace },
      annotations,
      ownerReferences: [controllerRef(route)],
    },
    spec,
  };
}
