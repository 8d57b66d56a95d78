// A Route's traffic (upstream `configureTraffic`): the Configurations and Revisions its targets name,
// each read once, and the hosts each traffic name gets under config-domain's and config-network's templates.
import type { DomainConfig } from '../api/config/domain.js';
import type { NetworkConfig } from '../api/config/network.js';
import { Resources, type ResourceType } from '../api/kinds.js';
import { Labels } from '../api/labels.js';
import type { KubeObject } from '../api/meta.js';
import type { Configuration, Revision, Route } from '../api/serving.js';
import { clusterLocalHost, routeURL, tagURL, targetDomain, targetVisibility } from '../resources/domains.js';
import type { TrafficHosts } from '../resources/ingress.js';
import { placeholderServiceName } from '../resources/placeholder-service.js';
import { trafficNames, type TrafficConfig } from '../resources/traffic.js';
import type { KubeClient } from '../kube/client.js';
import type { SeenConfiguration } from './configuration.js';

/**
 * Reads objects of one type by name, each at most once (concurrent callers share the request), into `known`, which
 * may start with objects read before; a name in `given` (read by the step beside this one) is taken from there.
 */
export function readOnce<T extends KubeObject>(
  kube: KubeClient,
  type: ResourceType,
  ns: string,
  known: Record<string, T>,
  given: ReadonlyMap<string, T> = new Map(),
): (name: string) => Promise<T | undefined> {
  const reads = new Map<string, Promise<T | undefined>>();
  return (name) => {
    if (Object.hasOwn(known, name)) return Promise.resolve(known[name]);
    const had = given.get(name);
    if (had) {
      known[name] = had;
      return Promise.resolve(had);
    }
    let read = reads.get(name);
    if (!read) {
      read = kube.get<T>(type, ns, name).then((obj) => {
        if (obj) known[name] = obj;
        return obj;
      });
      reads.set(name, read);
    }
    return read;
  };
}

/** What a Route's traffic names, by name. */
export interface Referenced {
  configs: Record<string, Configuration>;
  revs: Record<string, Revision>;
}

/**
 * The Configurations and Revisions the Route's traffic names (and the latest ready Revisions of those Configurations).
 * `seen`: a Configuration (with the status its step is writing) and its Revisions, taken instead of reading them.
 */
export async function readReferenced(kube: KubeClient, route: Route, seen: SeenConfiguration | undefined): Promise<Referenced> {
  const ns = route.metadata.namespace ?? '';
  const configs: Record<string, Configuration> = {};
  const revs: Record<string, Revision> = {};
  const byName = <T extends KubeObject>(objs: T[]) => new Map(objs.map((o) => [o.metadata.name ?? '', o]));
  const getRev = readOnce(kube, Resources.Revision, ns, revs, byName(seen?.revisions ?? []));
  const readCfg = readOnce(kube, Resources.Configuration, ns, configs, byName(seen ? [seen.configuration] : []));
  const getCfg = async (name: string) => {
    const latestReady = (await readCfg(name))?.status?.latestReadyRevisionName;
    if (latestReady) await getRev(latestReady);
  };
  // Every traffic entry at once; what an entry's first read names is read as soon as it is known.
  await Promise.all(
    (route.spec.traffic ?? []).map((t) =>
      Promise.all([
        t.configurationName ? getCfg(t.configurationName) : undefined,
        t.revisionName
          ? getRev(t.revisionName).then((rev) => {
              const owner = rev?.metadata.labels?.[Labels.configuration];
              return owner ? getCfg(owner) : undefined;
            })
          : undefined,
      ]),
    ),
  );
  return { configs, revs };
}

/** The Route's URL and, when the traffic can be programmed, each traffic name's hosts. */
export interface RouteHosts {
  /** `status.url`; absent when the domain template gives no valid host. */
  url?: string;
  /** The domain-template or tag-template error the Route reports (ErrorConfig): nothing is programmed. */
  error?: string;
  /** The traffic names (`''` the default target, else a tag); none when nothing is programmed. */
  names: string[];
  /** Each name's cluster-local and external hosts, for the KIngress. */
  hosts: Record<string, TrafficHosts>;
  /** Each name's domain, where its placeholder points until the KIngress reports a load balancer. */
  domains: Record<string, string>;
  /** Each tag's URL (status.traffic). */
  tagUrls: Record<string, string>;
  /** The Route is cluster-local: no external hosts. */
  clusterLocal: boolean;
}

/**
 * The hosts of each traffic name (upstream `domains.GetAllDomainsAndTags`). As route.go, the URL comes first, so a
 * domain-template error wins over a traffic target error (`trafficBroken`: then no name is programmed). Pure.
 */
export function routeHosts(route: Route, traffic: TrafficConfig, trafficBroken: boolean, net: NetworkConfig, dom: DomainConfig): RouteHosts {
  const name = route.metadata.name ?? '';
  const namespace = route.metadata.namespace ?? '';
  const url = routeURL(route, net, dom);
  const out: RouteHosts = {
    ...(url.ok ? { url: url.value } : { error: url.error }),
    names: [],
    hosts: {},
    domains: {},
    tagUrls: {},
    clusterLocal: targetVisibility(route, dom) === 'ClusterLocal',
  };
  if (trafficBroken || out.error !== undefined) return out;
  out.names = trafficNames(traffic);
  for (const tag of out.names) {
    const host = targetDomain(route, tag, net, dom);
    const u = tag !== '' ? tagURL(route, tag, net, dom) : undefined;
    if (!host.ok) return { ...out, error: host.error };
    if (u && !u.ok) return { ...out, error: u.error };
    out.hosts[tag] = { clusterLocal: clusterLocalHost(placeholderServiceName(name, tag), namespace), external: out.clusterLocal ? [] : [host.value] };
    out.domains[tag] = host.value;
    if (u?.ok) out.tagUrls[tag] = u.value;
  }
  return out;
}
