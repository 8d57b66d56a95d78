// Activities of the Route workflow (spec §4): resolve traffic, program placeholder Services and the KIngress, and
// write the Route's status (traffic, url, address, conditions).
import { beginReconcile, cloneJson, endReconcile } from '../api/conditions.js';
import { setRouteDefaults } from '../api/defaults.js';
import { Resources } from '../api/kinds.js';
import { Labels } from '../api/labels.js';
import { markCertificateNotEnabled, markTrafficAssigned, propagateIngressStatus, routeConditionSet, type RouteStatus } from '../api/lifecycle/route.js';
import { isControlledBy, type KubeObject, type ObjectKey } from '../api/meta.js';
import type { Ingress } from '../api/networking.js';
import type { Configuration, Revision, Route } from '../api/serving.js';
import { clusterLocalHost, routeAddressURL, routeURL, tagURL, targetDomain, targetVisibility } from '../resources/domains.js';
import { ingressClassForRoute, makeIngress, type TrafficHosts } from '../resources/ingress.js';
import { makeLoadBalancedPlaceholder, makePlaceholderService, placeholderServiceName } from '../resources/placeholder-service.js';
import { isNotFound } from './kube/errors.js';
import { buildTrafficConfiguration, markBadTrafficTarget, statusTraffic, trafficNames } from '../resources/traffic.js';
import { routingPatch } from '../resources/labeler.js';
import { nowOf, type ActivityDeps } from './deps.js';
import { containsAll, statusOutcome, writeStatus, type StatusOutcome } from './status.js';

/** Knative's finalizer for the Route labeler (`<plural>.<group>`). */
export const RouteFinalizer = 'routes.serving.knative.dev';

export type RouteOutcome = { outcome: 'gone' } | (StatusOutcome & { ingress: 'created' | 'updated' | 'unchanged' | 'notOwned' | 'none'; ingressResourceVersion?: string });

export function createRouteActivities(deps: ActivityDeps) {
  const { kube, events, config } = deps;

  /** The Configurations and Revisions the Route's traffic names (and the latest ready Revisions of those Configurations). */
  async function referenced(route: Route, ns: string): Promise<{ configs: Record<string, Configuration>; revs: Record<string, Revision> }> {
    const configs: Record<string, Configuration> = {};
    const revs: Record<string, Revision> = {};
    const getRev = async (name: string) => {
      if (name in revs) return;
      const r = await kube.get<Revision>(Resources.Revision, ns, name);
      if (r) revs[name] = r;
    };
    const getCfg = async (name: string) => {
      if (name in configs) return;
      const c = await kube.get<Configuration>(Resources.Configuration, ns, name);
      if (!c) return;
      configs[name] = c;
      if (c.status?.latestReadyRevisionName) await getRev(c.status.latestReadyRevisionName);
    };
    for (const t of route.spec.traffic ?? []) {
      if (t.configurationName) await getCfg(t.configurationName);
      if (t.revisionName) {
        await getRev(t.revisionName);
        const owner = revs[t.revisionName]?.metadata.labels?.[Labels.configuration];
        if (owner) await getCfg(owner);
      }
    }
    return { configs, revs };
  }

  async function applyIfChanged<T extends KubeObject>(type: typeof Resources.KIngress, existing: T | undefined, desired: T): Promise<{ obj: T; action: 'created' | 'updated' | 'unchanged' }> {
    if (existing && containsAll(existing, desired)) return { obj: existing, action: 'unchanged' };
    const obj = await kube.apply(type, desired);
    return { obj, action: existing ? 'updated' : 'created' };
  }

  /** Best effort on objects that may be going away with the Route (their owner is being deleted too). */
  async function patchIfPresent(type: typeof Resources.Revision, ns: string, name: string, patch: unknown): Promise<void> {
    try {
      await kube.mergePatch(type, ns, name, patch);
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  }

  /** The Route finalizer (checklist 62): take the Route off every Revision it carried, then let it go. */
  async function finalizeRoute(key: ObjectKey, route: Route): Promise<void> {
    if (!(route.metadata.finalizers ?? []).includes(RouteFinalizer)) return;
    const now = nowOf(deps);
    const active = await kube.list<Revision>(Resources.Revision, key.namespace, { labelSelector: `${Labels.routingState}=active` });
    for (const rev of active.items) {
      const patch = routingPatch(rev, key.name, false, now);
      if (patch) await patchIfPresent(Resources.Revision, key.namespace, rev.metadata.name ?? '', { metadata: patch });
    }
    await patchIfPresent(Resources.Route, key.namespace, key.name, { metadata: { finalizers: (route.metadata.finalizers ?? []).filter((f) => f !== RouteFinalizer) } });
  }

  /**
   * The labeler (spec §4.7): every Revision the traffic references, and the latest created Revision of every
   * latestRevision Configuration, is `active` with this Route in its routes annotation; once the Route is Ready,
   * Revisions it no longer references lose it (and become `reserve` when no Route is left).
   */
  async function labelRevisions(key: ObjectKey, route: Route, revs: Record<string, Revision>, configs: Record<string, Configuration>, routeReady: boolean, now: string): Promise<void> {
    const carried = new Set(Object.keys(revs));
    for (const t of route.spec.traffic ?? []) {
      const latest = t.configurationName ? configs[t.configurationName]?.status?.latestCreatedRevisionName : undefined;
      if (latest) carried.add(latest);
    }
    for (const name of carried) {
      // The pass already read the Revisions its traffic names; only a latest created one may be new here.
      const rev = revs[name] ?? (await kube.get<Revision>(Resources.Revision, key.namespace, name));
      const patch = rev ? routingPatch(rev, key.name, true, now) : undefined;
      if (patch) await patchIfPresent(Resources.Revision, key.namespace, name, { metadata: patch });
    }
    if (!routeReady) return;
    const active = await kube.list<Revision>(Resources.Revision, key.namespace, { labelSelector: `${Labels.routingState}=active` });
    for (const rev of active.items) {
      const name = rev.metadata.name ?? '';
      if (carried.has(name)) continue;
      const patch = routingPatch(rev, key.name, false, now);
      if (patch) await patchIfPresent(Resources.Revision, key.namespace, name, { metadata: patch });
    }
  }

  return {
    /** One Route pass (spec §4.1): traffic → placeholder Services → KIngress → status. */
    async reconcileRoute(key: ObjectKey): Promise<RouteOutcome> {
      const raw = await kube.get<Route>(Resources.Route, key.namespace, key.name);
      if (!raw) return { outcome: 'gone' };
      if (raw.metadata.deletionTimestamp) {
        await finalizeRoute(key, raw);
        return { outcome: 'gone' };
      }
      if (!(raw.metadata.finalizers ?? []).includes(RouteFinalizer)) {
        await kube.mergePatch(Resources.Route, key.namespace, key.name, { metadata: { finalizers: [...(raw.metadata.finalizers ?? []), RouteFinalizer] } });
      }
      const route = setRouteDefaults(raw);
      const now = nowOf(deps);
      const net = config.networkConfig();
      const dom = config.domainConfig();
      const r = cloneJson(route);
      const before = beginReconcile(r, routeConditionSet, now);
      const status = r.status as RouteStatus;
      const { configs, revs } = await referenced(route, key.namespace);
      const { config: traffic, error } = buildTrafficConfiguration(route, configs, revs);
      let ingressAction: 'created' | 'updated' | 'unchanged' | 'notOwned' | 'none' = 'none';
      let ingressResourceVersion: string | undefined;
      if (error) {
        markBadTrafficTarget(status, error, now);
      } else {
        markTrafficAssigned(status, now);
        const hosts: Record<string, TrafficHosts> = {};
        const currentIngress = await kube.get<Ingress>(Resources.KIngress, key.namespace, key.name);
        const tagUrls: Record<string, string> = {};
        for (const name of trafficNames(traffic)) {
          const host = targetDomain(route, name, net, dom);
          if (!host.ok) throw new Error(`domain for traffic "${name}": ${host.error}`);
          const local = targetVisibility(route, dom) === 'ClusterLocal';
          const svcName = placeholderServiceName(key.name, name);
          hosts[name] = { clusterLocal: clusterLocalHost(svcName, key.namespace), external: local ? [] : [host.value] };
          if (name !== '') {
            const u = tagURL(route, name, net, dom);
            if (u.ok) tagUrls[name] = u.value;
          }
          // Once the Ingress reports its load balancer, the placeholder points at it (checklist 54).
          const balanced = currentIngress?.status ? makeLoadBalancedPlaceholder(route, name, currentIngress, local) : undefined;
          const placeholder = balanced?.ok ? balanced.service : makePlaceholderService(route, name, host.value);
          const existing = await kube.get<KubeObject>(Resources.KubeService, key.namespace, svcName);
          if (!existing || (isControlledBy(existing, route.metadata.uid) && !containsAll(existing, placeholder))) {
            await kube.apply(Resources.KubeService, placeholder);
            if (!existing) await events.record(route, 'Normal', 'Created', `Created placeholder service "${svcName}"`);
          }
        }
        const desired = makeIngress(route, traffic, hosts, ingressClassForRoute(route, net.ingressClass));
        const existing = currentIngress;
        if (existing && !isControlledBy(existing, route.metadata.uid)) {
          ingressAction = 'notOwned';
        } else {
          const applied = await applyIfChanged(Resources.KIngress, existing, desired);
          ingressAction = applied.action;
          if (applied.action !== 'unchanged') ingressResourceVersion = applied.obj.metadata.resourceVersion;
          if (applied.action === 'created') await events.record(route, 'Normal', 'Created', `Created Ingress "${key.name}"`);
          propagateIngressStatus(status, applied.obj, now);
        }
        markCertificateNotEnabled(status, now);
        const url = routeURL(route, net, dom);
        if (url.ok) status.url = url.value;
        status.address = { url: routeAddressURL(route) };
        status.traffic = statusTraffic(traffic, tagUrls);
      }
      endReconcile(r, before, now);
      const written = await writeStatus(kube, Resources.Route, raw, r.status);
      if (!error) await labelRevisions(key, route, revs, configs, routeConditionSet.isHappy(r.status), now);
      return { ...statusOutcome(written, r.status), ingress: ingressAction, ...(ingressResourceVersion ? { ingressResourceVersion } : {}) };
    },
  };
}
