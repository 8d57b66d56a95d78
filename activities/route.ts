// Activities of the Route workflow (spec §4): resolve traffic, program placeholder Services (and their Endpoints)
// and the KIngress, write the Route's status (traffic, url, address, conditions), then keep the labeler's
// bookkeeping on the Revisions and Configurations it references (§4.7). Children are applied through
// activities/apply.ts, so a field the Route stops asking for leaves the child too.
import { beginReconcile, cloneJson, endReconcile } from '../api/conditions.js';
import { setRouteDefaults } from '../api/defaults.js';
import { Resources, type ResourceType } from '../api/kinds.js';
import { Labels } from '../api/labels.js';
import {
  isRouteFailed,
  isRouteReady,
  markCertificateNotEnabled,
  markDomainNameError,
  markEndpointNotOwned,
  markIngressNotConfigured,
  markServiceNotOwned,
  markTrafficAssigned,
  propagateIngressStatus,
  routeConditionSet,
  type RouteStatus,
} from '../api/lifecycle/route.js';
import { isControlledBy, type KubeObject, type ObjectKey } from '../api/meta.js';
import type { Ingress } from '../api/networking.js';
import type { Configuration, Revision, Route } from '../api/serving.js';
import { clusterLocalHost, domainNameErrorMessage, routeAddressURL, routeURL, tagURL, targetDomain, targetVisibility } from '../resources/domains.js';
import { ingressClassForRoute, makeIngress, type TrafficHosts } from '../resources/ingress.js';
import {
  makeLoadBalancedPlaceholder,
  makePlaceholderService,
  orphanedPlaceholders,
  placeholderServiceName,
  placeholderUpdate,
  type PlaceholderEndpoints,
  type PlaceholderService,
} from '../resources/placeholder-service.js';
import { isNotFound } from './kube/errors.js';
import { buildTrafficConfiguration, markBadTrafficTarget, statusTraffic, trafficNames } from '../resources/traffic.js';
import {
  sameRoutingTargets,
  configurationRoutesPatch,
  listsRoute,
  revisionOwnerConfiguration,
  routingPatch,
  routingTargets,
} from '../resources/labeler.js';
import { applyIfChanged, needsApply } from './apply.js';
import { isIstioIngress, programIngress } from './ingress.js';
import { nowOf, type ActivityDeps } from './deps.js';
import { statusOutcome, writeStatus, type StatusOutcome } from './status.js';

/** Knative's finalizer for the Route labeler (`<plural>.<group>`). */
export const RouteFinalizer = 'routes.serving.knative.dev';

/** core/v1 Endpoints: the manually managed Endpoints of a headless placeholder (load balancer with an IP). */
const EndpointsType: ResourceType = { group: '', version: 'v1', kind: 'Endpoints', plural: 'endpoints', namespaced: true };

type ApplyAction = 'created' | 'updated' | 'unchanged';
type IngressAction = ApplyAction | 'notOwned' | 'none';

/** What the placeholder step did: the names it created, updated or deleted, or the name it found not ours. */
export interface PlaceholderOutcome {
  created: string[];
  updated: string[];
  deleted: string[];
  /** A Service (or Endpoints) with a placeholder's name that the Route does not control (IngressReady NotOwned). */
  notOwned?: { kind: 'Service' | 'Endpoints'; name: string };
}

export type RouteOutcome =
  | { outcome: 'gone' }
  | (StatusOutcome & {
      ingress: IngressAction;
      ingressResourceVersion?: string;
      /** Placeholder Services created, updated and deleted (names), when any. */
      placeholders?: string;
      /** The domain-template / tag-template error the Route reports (ErrorConfig); nothing was programmed. */
      domainError?: string;
      /** `<Kind> <name>` of a foreign object holding a placeholder's name (only with `reportNotOwned`). */
      notOwned?: string;
    });

/** One traffic name's placeholder: the desired Service and, for a load balancer with an IP, its Endpoints. */
interface DesiredPlaceholder {
  name: string;
  service: PlaceholderService;
  endpoints?: PlaceholderEndpoints | undefined;
}

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

  /** Best effort on objects that may be going away with the Route (their owner is being deleted too). */
  async function patchIfPresent(type: ResourceType, ns: string, name: string, patch: unknown): Promise<void> {
    try {
      await kube.mergePatch(type, ns, name, patch);
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  }

  /**
   * Takes the Route off every Revision and Configuration that lists it but is not in `keep` (upstream
   * `clearMetaForNotListed`): active Revisions (a Revision that is not active lists no Route), and every
   * Configuration of the namespace (they carry no label to select by).
   */
  async function clearRouting(
    key: ObjectKey,
    keep: { revisions: ReadonlySet<string>; configurations: ReadonlySet<string> },
    now: string,
  ): Promise<void> {
    const active = await kube.list<Revision>(Resources.Revision, key.namespace, { labelSelector: `${Labels.routingState}=active` });
    for (const rev of active.items) {
      const name = rev.metadata.name ?? '';
      if (keep.revisions.has(name)) continue;
      const patch = routingPatch(rev, key.name, false, now);
      if (patch) await patchIfPresent(Resources.Revision, key.namespace, name, { metadata: patch });
    }
    const cfgs = await kube.list<Configuration>(Resources.Configuration, key.namespace);
    for (const cfg of cfgs.items) {
      const name = cfg.metadata.name ?? '';
      if (keep.configurations.has(name) || !listsRoute(cfg, key.name)) continue;
      const patch = configurationRoutesPatch(cfg, key.name, false);
      if (patch) await patchIfPresent(Resources.Configuration, key.namespace, name, { metadata: patch });
    }
  }

  /** The Route finalizer (checklist 62): take the Route off every Revision and Configuration it carried, then let it go. */
  async function finalizeRoute(key: ObjectKey, route: Route): Promise<void> {
    if (!(route.metadata.finalizers ?? []).includes(RouteFinalizer)) return;
    await clearRouting(key, { revisions: new Set(), configurations: new Set() }, nowOf(deps));
    await patchIfPresent(Resources.Route, key.namespace, key.name, {
      metadata: { finalizers: (route.metadata.finalizers ?? []).filter((f) => f !== RouteFinalizer) },
    });
  }

  /**
   * The labeler (spec §4.7, upstream `syncRoutingMeta`): every Revision and Configuration that `status.traffic ∪
   * spec.traffic` references (see `routingTargets`) lists this Route in `serving.knative.dev/routes` (Revisions are
   * `active` too); once the Route is Ready or Failed for its generation, Revisions and Configurations it no longer
   * references lose it (a Revision then becomes `reserve` when no Route is left). The Configuration's annotation is
   * what leads its changes (a new latest ready Revision) to the Routes that follow it.
   */
  async function syncRouting(
    key: ObjectKey,
    route: Route,
    stored: Route,
    revs: Record<string, Revision>,
    configs: Record<string, Configuration>,
    settled: boolean,
    now: string,
  ): Promise<void> {
    const traffic = [...(route.status?.traffic ?? []), ...(route.spec.traffic ?? [])];
    // The pass already read what its traffic names; only status-only entries and controllers may be new here.
    const revCache: Record<string, Revision> = { ...revs };
    const cfgCache: Record<string, Configuration> = { ...configs };
    const tried = new Set<string>();
    const fetch = async <T extends KubeObject>(type: ResourceType, cache: Record<string, T>, name: string): Promise<T | undefined> => {
      const id = `${type.kind}/${name}`;
      if (!(name in cache) && !tried.has(id)) {
        tried.add(id);
        const obj = await kube.get<T>(type, key.namespace, name);
        if (obj) cache[name] = obj;
      }
      return cache[name];
    };
    for (const tt of traffic) {
      let cfgName = tt.configurationName;
      if (tt.revisionName) {
        const rev = await fetch(Resources.Revision, revCache, tt.revisionName);
        if (!rev) continue;
        cfgName = revisionOwnerConfiguration(rev) ?? cfgName;
      }
      if (cfgName) await fetch(Resources.Configuration, cfgCache, cfgName);
    }
    const targets = routingTargets(traffic, revCache, cfgCache);
    for (const name of targets.revisions) {
      const rev = await fetch(Resources.Revision, revCache, name);
      const patch = rev ? routingPatch(rev, key.name, true, now) : undefined;
      if (patch) await patchIfPresent(Resources.Revision, key.namespace, name, { metadata: patch });
    }
    for (const name of targets.configurations) {
      const cfg = cfgCache[name];
      const patch = cfg ? configurationRoutesPatch(cfg, key.name, true) : undefined;
      if (patch) await patchIfPresent(Resources.Configuration, key.namespace, name, { metadata: patch });
    }
    if (!settled) return;
    // The stored Route was already settled at its generation and named the same targets: the last settled pass
    // cleared everything else, and only this Route's own labeler adds it anywhere, so the two namespace-wide lists
    // would find nothing. (Runs before the status write, so a pass that fails half-way clears on its retry.)
    const storedTraffic = [...(stored.status?.traffic ?? []), ...(route.spec.traffic ?? [])]; // same generation: same spec
    const storedSettled = isRouteReady(stored) || isRouteFailed(stored);
    if (storedSettled && sameRoutingTargets(routingTargets(storedTraffic, revCache, cfgCache), targets)) return;
    await clearRouting(key, targets, now);
  }

  /**
   * Placeholder Services (spec §4.4, upstream `reconcilePlaceholderServices` + `updatePlaceholderServices`): each
   * desired one is created, or updated when Tidal's last apply differs or the live one was edited (re-created where
   * the API server refuses a type or cluster IP change); a live one the Route does not control stops the step
   * (NotOwned). A load balancer with an IP also gets the Endpoints object, removed again when it no longer has one.
   * Then the Services the Route controls that no traffic name needs any more are deleted, with their Endpoints.
   */
  async function reconcilePlaceholders(route: Route, desired: DesiredPlaceholder[]): Promise<PlaceholderOutcome> {
    const ns = route.metadata.namespace ?? '';
    const uid = route.metadata.uid;
    const out: PlaceholderOutcome = { created: [], updated: [], deleted: [] };
    for (const want of desired) {
      const live = await kube.get<KubeObject & { spec?: { type?: string; clusterIP?: string } }>(Resources.KubeService, ns, want.name);
      if (live && !isControlledBy(live, uid)) return { ...out, notOwned: { kind: 'Service', name: want.name } };
      // Endpoints matter only for a headless placeholder, wanted now or left from before.
      const liveEp = want.endpoints || live?.spec?.clusterIP === 'None' ? await kube.get<KubeObject>(EndpointsType, ns, want.name) : undefined;
      if (liveEp && !isControlledBy(liveEp, uid)) return { ...out, notOwned: { kind: 'Endpoints', name: want.name } };

      if (live && placeholderUpdate(live, want.service) === 'recreate' && needsApply(live, want.service)) {
        await kube.delete(Resources.KubeService, ns, want.name);
        await applyIfChanged(kube, Resources.KubeService, undefined, want.service);
        out.updated.push(want.name);
      } else {
        const applied = await applyIfChanged(kube, Resources.KubeService, live, want.service);
        if (applied.action === 'created') {
          out.created.push(want.name);
          await events.record(route, 'Normal', 'Created', `Created placeholder service "${want.name}"`);
        } else if (applied.action === 'updated') {
          out.updated.push(want.name);
        }
      }
      if (want.endpoints) await applyIfChanged(kube, EndpointsType, liveEp, want.endpoints);
      else if (liveEp) await kube.delete(EndpointsType, ns, want.name);
    }
    const labelled = await kube.list<KubeObject>(Resources.KubeService, ns, { labelSelector: `${Labels.route}=${route.metadata.name ?? ''}` });
    for (const name of orphanedPlaceholders(labelled.items, uid, new Set(desired.map((d) => d.name)))) {
      await kube.delete(Resources.KubeService, ns, name);
      const ep = await kube.get<KubeObject>(EndpointsType, ns, name);
      if (ep && isControlledBy(ep, uid)) await kube.delete(EndpointsType, ns, name);
      out.deleted.push(name);
    }
    return out;
  }

  return {
    /**
     * One Route pass (spec §4.1): traffic → placeholder Services → KIngress → status; then the labeler. A placeholder
     * name taken by a foreign object fails the step after reporting it, so it is retried with backoff — unless
     * `reportNotOwned` (a Service's pass, which must go on to write the Service's status): then the outcome names it
     * and the caller schedules the retry.
     */
    async reconcileRoute(key: ObjectKey, opts: { reportNotOwned?: boolean } = {}): Promise<RouteOutcome> {
      const raw = await kube.get<Route>(Resources.Route, key.namespace, key.name);
      if (!raw) return { outcome: 'gone' };
      if (raw.metadata.deletionTimestamp) {
        await finalizeRoute(key, raw);
        return { outcome: 'gone' };
      }
      if (!(raw.metadata.finalizers ?? []).includes(RouteFinalizer)) {
        await kube.mergePatch(Resources.Route, key.namespace, key.name, {
          metadata: { finalizers: [...(raw.metadata.finalizers ?? []), RouteFinalizer] },
        });
      }
      const route = setRouteDefaults(raw);
      const now = nowOf(deps);
      const net = config.networkConfig();
      const dom = config.domainConfig();
      const r = cloneJson(route);
      const before = beginReconcile(r, routeConditionSet, now);
      const status = r.status as RouteStatus;
      // A new generation is not Ready before its Ingress is programmed, whatever stops the pass (route.go).
      if ((raw.status?.observedGeneration ?? 0) !== (raw.metadata.generation ?? 0)) markIngressNotConfigured(status, now);
      const { configs, revs } = await referenced(route, key.namespace);
      const { config: traffic, error } = buildTrafficConfiguration(route, configs, revs);
      let ingressAction: IngressAction = 'none';
      let ingressResourceVersion: string | undefined;
      let placeholders: PlaceholderOutcome | undefined;

      // As route.go: the URL comes first, so a domain-template error wins over a traffic target error.
      const url = routeURL(route, net, dom);
      let domainError = url.ok ? undefined : url.error;
      if (url.ok) status.url = url.value;

      const hosts: Record<string, TrafficHosts> = {};
      const domains: Record<string, string> = {};
      const tagUrls: Record<string, string> = {};
      const names = error || domainError ? [] : trafficNames(traffic);
      const local = targetVisibility(route, dom) === 'ClusterLocal';
      for (const name of names) {
        const host = targetDomain(route, name, net, dom);
        const u = name !== '' ? tagURL(route, name, net, dom) : undefined;
        if (!host.ok) {
          domainError = host.error;
          break;
        }
        if (u && !u.ok) {
          domainError = u.error;
          break;
        }
        hosts[name] = { clusterLocal: clusterLocalHost(placeholderServiceName(key.name, name), key.namespace), external: local ? [] : [host.value] };
        domains[name] = host.value;
        if (u?.ok) tagUrls[name] = u.value;
      }

      if (domainError !== undefined) {
        // Knative's ErrDomainName: nothing is programmed; a config-network/config-domain or Route change pokes again.
        markDomainNameError(status, domainNameErrorMessage(domainError), now);
      } else if (error) {
        markBadTrafficTarget(status, error, now);
      } else {
        markTrafficAssigned(status, now);
        status.traffic = statusTraffic(traffic, tagUrls);
        status.address = { url: routeAddressURL(route) };
        const currentIngress = await kube.get<Ingress>(Resources.KIngress, key.namespace, key.name);
        const desiredPlaceholders = (ingress: Ingress | undefined): DesiredPlaceholder[] =>
          names.map((name) => {
            const svcName = placeholderServiceName(key.name, name);
            // Once the Ingress reports its load balancer, the placeholder points at it (checklist 54).
            const balanced = ingress?.status ? makeLoadBalancedPlaceholder(route, name, ingress, local) : undefined;
            if (balanced?.ok) return { name: svcName, service: balanced.service, endpoints: balanced.endpoints };
            return { name: svcName, service: makePlaceholderService(route, name, domains[name] ?? '') };
          });
        placeholders = await reconcilePlaceholders(route, desiredPlaceholders(currentIngress));
        if (placeholders.notOwned) {
          if (placeholders.notOwned.kind === 'Service') markServiceNotOwned(status, placeholders.notOwned.name, now);
          else markEndpointNotOwned(status, placeholders.notOwned.name, now);
        } else {
          markCertificateNotEnabled(status, now);
          const desired = makeIngress(route, traffic, hosts, ingressClassForRoute(route, net.ingressClass));
          const existing = currentIngress;
          if (existing && !isControlledBy(existing, route.metadata.uid)) {
            ingressAction = 'notOwned';
          } else {
            const applied = await applyIfChanged(kube, Resources.KIngress, existing, desired);
            ingressAction = applied.action;
            if (applied.action !== 'unchanged') ingressResourceVersion = applied.obj.metadata.resourceVersion;
            if (applied.action === 'created') await events.record(route, 'Normal', 'Created', `Created Ingress "${key.name}"`);
            // A KIngress of Tidal's class is programmed here, in the same step, instead of by a workflow of its own
            // (ADR 0005): the Route sees it Ready without another round trip.
            let ingress = applied.obj;
            if (isIstioIngress(ingress)) ingress = (await programIngress(deps, ingress)).ingress;
            propagateIngressStatus(status, ingress, now);
            // The load balancer it reports now moves the placeholders (checklist 54) in this pass too.
            if (!sameLoadBalancer(currentIngress, ingress)) {
              const again = await reconcilePlaceholders(route, desiredPlaceholders(ingress));
              placeholders = mergePlaceholderOutcomes(placeholders, again);
            }
          }
        }
      }
      endReconcile(r, before, now);
      await syncRouting(key, r, raw, revs, configs, isRouteReady(r) || isRouteFailed(r), now);
      const written = await writeStatus(kube, Resources.Route, raw, r.status);
      if (placeholders?.notOwned) {
        // As upstream, the pass fails after reporting it (status and one InternalError Event), so it is retried with
        // backoff until the foreign object goes: nothing pokes the Route when a Service it does not own changes.
        const message = `route "${key.name}" does not own ${placeholders.notOwned.kind} "${placeholders.notOwned.name}"`;
        await events.record(route, 'Warning', 'InternalError', message);
        if (!opts.reportNotOwned) throw new Error(message);
      }
      const touched = placeholders ? describePlaceholders(placeholders) : '';
      return {
        ...statusOutcome(written, r.status),
        ingress: ingressAction,
        ...(ingressResourceVersion ? { ingressResourceVersion } : {}),
        ...(touched ? { placeholders: touched } : {}),
        ...(domainError !== undefined ? { domainError } : {}),
        ...(placeholders?.notOwned ? { notOwned: `${placeholders.notOwned.kind} ${placeholders.notOwned.name}` } : {}),
      };
    },
  };
}

/** Both report the same load balancer (or neither reports one). */
function sameLoadBalancer(a: Ingress | undefined, b: Ingress): boolean {
  return (
    JSON.stringify(a?.status?.publicLoadBalancer ?? null) === JSON.stringify(b.status?.publicLoadBalancer ?? null) &&
    JSON.stringify(a?.status?.privateLoadBalancer ?? null) === JSON.stringify(b.status?.privateLoadBalancer ?? null)
  );
}

function mergePlaceholderOutcomes(a: PlaceholderOutcome, b: PlaceholderOutcome): PlaceholderOutcome {
  const union = (x: string[], y: string[]) => [...new Set([...x, ...y])];
  return { ...a, created: union(a.created, b.created), updated: union(a.updated, b.updated), deleted: union(a.deleted, b.deleted) };
}

/** "created a, b; deleted c" for the pass summary, or '' when the placeholders were already right. */
function describePlaceholders(p: PlaceholderOutcome): string {
  const parts: string[] = [];
  if (p.created.length) parts.push(`created ${p.created.join(', ')}`);
  if (p.updated.length) parts.push(`updated ${p.updated.join(', ')}`);
  if (p.deleted.length) parts.push(`deleted ${p.deleted.join(', ')}`);
  return parts.join('; ');
}
