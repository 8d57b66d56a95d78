// Activities of the Route workflow (spec §4): resolve traffic, program placeholder Services (and their Endpoints)
// and the KIngress, write the Route's status (traffic, url, address, conditions), and keep the labeler's bookkeeping
// on the Revisions and Configurations it references (§4.7): its marks beside the programming, its clear before the
// status write. Children are applied through
// activities/apply.ts, so a field the Route stops asking for leaves the child too.
import { setTimeout as sleep } from 'node:timers/promises';
import { beginReconcile, cloneJson, endReconcile } from '../api/conditions.js';
import { setRouteDefaults } from '../api/defaults.js';
import { Resources, type ResourceType } from '../api/kinds.js';
import { Labels } from '../api/labels.js';
import {
  isRouteFailed,
  isRouteReady,
  markDomainNameError,
  markEndpointNotOwned,
  markIngressNotConfigured,
  markIngressRolloutInProgress,
  markIngressRolloutPaused,
  markRolloutHeld,
  markServiceNotOwned,
  markTrafficAssigned,
  propagateIngressStatus,
  RouteConditionIngressReady,
  routeConditionSet,
  type RouteStatus,
} from '../api/lifecycle/route.js';
import { isControlledBy, type KubeObject, type ObjectKey } from '../api/meta.js';
import { IstioIngressClassName, isIstioIngress, NetworkingAnnotations, type HTTPOption, type Ingress } from '../api/networking.js';
import { isIngressReady } from '../api/lifecycle/ingress.js';
import type { Configuration, Revision, Route } from '../api/serving.js';
import { clusterLocalHost, domainNameErrorMessage, routeAddressURL, routeURL, tagURL, targetDomain, targetVisibility } from '../resources/domains.js';
import { ingressClassForRoute, makeIngress, type TrafficHosts } from '../resources/ingress.js';
import {
  makeLoadBalancedPlaceholder,
  makePlaceholderService,
  orphanedPlaceholders,
  placeholderServiceName,
  placeholderUpdate,
  withLiveMetadata,
  type PlaceholderEndpoints,
  type PlaceholderService,
} from '../resources/placeholder-service.js';
import { isNotFound } from '../kube/errors.js';
import {
  applyRolloutToTraffic,
  buildRollout,
  parseRolloutAnnotation,
  parseRolloutControl,
  planRollout,
  stepWaitMs,
  rolloutDurationSeconds,
  type Rollout,
  type RolloutPlan,
  type RolloutPlanInput,
} from '../resources/rollout.js';
import { awaitsPods, buildTrafficConfiguration, markBadTrafficTarget, statusTraffic, trafficNames } from '../resources/traffic.js';
import { servingReplicas } from '../resources/deployment.js';
import {
  sameRoutingTargets,
  configurationRoutesPatch,
  listsRoute,
  revisionOwnerConfiguration,
  routingPatch,
  routingTargets,
  type RoutingTargets,
} from '../resources/labeler.js';
import { applyIfChanged, recordLater, ownedWhole, needsApply, settleAll, type RecordLater } from './apply.js';
import type { SeenConfiguration } from './configuration.js';
import { programIngress, readVirtualServices, type BesideIngress } from './ingress.js';
import { reconcileRouteTLS, withScheme, type RouteTLS } from './route-tls.js';
import { certificateContext } from './knative-certificate.js';
import { nowOf, type ActivityDeps } from './deps.js';
import { listOwnWrites, writtenSoFar, type WrittenVersions } from './written.js';
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
      /** The newest versions this Route's passes wrote of the kinds they list, for the next pass (activities/written.ts). */
      written?: WrittenVersions;
      /** A gradual rollout this pass stepped, holds or just finished (spec §5); absent when there is none. */
      rollout?: RolloutSummary;
    });

/** How a Route's pass is asked for (`reconcileRoute`). */
export interface RouteOptions {
  /** A Service's pass: a placeholder name held by a foreign object is reported in the outcome, not thrown. */
  reportNotOwned?: boolean;
  /** The versions the workflow's passes wrote before (activities/written.ts). */
  written?: WrittenVersions;
  /** What the Configuration's status step beside this one hands over (activities/combined.ts). */
  seen?: Promise<SeenConfiguration | undefined>;
  /** Gets the Route with the status this pass is about to write (or found already there), just before the write. */
  toWrite?: (route: Route) => void;
}

/** A rollout as the Route's pass left it, for the workflow's history and its durable timer. */
export interface RolloutSummary {
  /** One line: "nginx-00002 26% → 51% (nginx-00001 49%, nginx-00002 51%)", "… paused", "… rolled back to …". */
  summary: string;
  /** The next step is due then (Unix ms); absent when no timed step is scheduled (finished, paused, held). */
  nextStepAtMs?: number;
  /** How long from the end of this step until then (ms, ≥ 0): the workflow's timer, armed right after the step. */
  nextStepInMs?: number;
}

/** The clear's lists: the namespace's active Revisions and its Configurations. */
type Listed = [Revision[], Configuration[]];

/** What the labeler works from (`routingOf`). */
interface Routing {
  targets: RoutingTargets;
  /** A target Revision, read at most once. */
  getRev: (name: string) => Promise<Revision | undefined>;
  /** The Configurations read, by name. */
  configurations: Record<string, Configuration>;
  /** A settled pass takes the Route off what it no longer references. */
  clear: boolean;
}

/** A placeholder Service as the API server returns it. */
type LiveService = KubeObject & { spec?: { type?: string; clusterIP?: string } };

/** What a placeholder name holds: its Service, and its Endpoints once read (`null`: read, none there). */
interface LivePlaceholder {
  service: LiveService | undefined;
  endpoints?: KubeObject | null;
}

/** One traffic name's placeholder: the desired Service and, for a load balancer with an IP, its Endpoints. */
interface DesiredPlaceholder {
  name: string;
  service: PlaceholderService;
  endpoints?: PlaceholderEndpoints | undefined;
}

export function createRouteActivities(deps: ActivityDeps) {
  const { kube, events, config } = deps;

  /**
   * Reads objects of one type by name, each at most once (concurrent callers share the request), into `known`, which
   * may start with objects read before; a name in `given` (read by the step beside this one) is taken from there.
   */
  function readOnce<T extends KubeObject>(
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

  /**
   * The Configurations and Revisions the Route's traffic names (and the latest ready Revisions of those Configurations).
   * `seen`: a Configuration (with the status its step is writing) and its Revisions, taken instead of reading them.
   */
  async function referenced(
    route: Route,
    ns: string,
    seen: SeenConfiguration | undefined,
  ): Promise<{ configs: Record<string, Configuration>; revs: Record<string, Revision> }> {
    const configs: Record<string, Configuration> = {};
    const revs: Record<string, Revision> = {};
    const byName = <T extends KubeObject>(objs: T[]) => new Map(objs.map((o) => [o.metadata.name ?? '', o]));
    const getRev = readOnce(Resources.Revision, ns, revs, byName(seen?.revisions ?? []));
    const readCfg = readOnce(Resources.Configuration, ns, configs, byName(seen ? [seen.configuration] : []));
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

  /** Best effort on objects that may be going away with the Route (their owner is being deleted too). */
  async function patchIfPresent(type: ResourceType, ns: string, name: string, patch: unknown): Promise<void> {
    try {
      await kube.mergePatch(type, ns, name, patch);
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  }

  /** What a clear works from: the active Revisions and every Configuration of the namespace, listed side by side. */
  function listRouted(ns: string, wrote: WrittenVersions): Promise<Listed> {
    return Promise.all([
      listOwnWrites<Revision>(deps, 'Revision', ns, { [Labels.routingState]: 'active' }, wrote).then((l) => l.items),
      listOwnWrites<Configuration>(deps, 'Configuration', ns, {}, wrote).then((l) => l.items),
    ]);
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
    [active, cfgs]: Listed,
  ): Promise<void> {
    const revisionPatches = active
      .filter((rev) => !keep.revisions.has(rev.metadata.name ?? ''))
      .map((rev) => ({ type: Resources.Revision, name: rev.metadata.name ?? '', patch: routingPatch(rev, key.name, false, now) }));
    const configurationPatches = cfgs
      .filter((cfg) => !keep.configurations.has(cfg.metadata.name ?? '') && listsRoute(cfg, key.name))
      .map((cfg) => ({ type: Resources.Configuration, name: cfg.metadata.name ?? '', patch: configurationRoutesPatch(cfg, key.name, false) }));
    await eachConcurrently([...revisionPatches, ...configurationPatches], ({ type, name, patch }) =>
      patch ? patchIfPresent(type, key.namespace, name, { metadata: patch }) : undefined,
    );
  }

  /** The Route finalizer (checklist 62): take the Route off every Revision and Configuration it carried, then let it go. */
  async function finalizeRoute(key: ObjectKey, route: Route, wrote: WrittenVersions): Promise<void> {
    if (!(route.metadata.finalizers ?? []).includes(RouteFinalizer)) return;
    await clearRouting(key, { revisions: new Set(), configurations: new Set() }, nowOf(deps), await listRouted(key.namespace, wrote));
    await patchIfPresent(Resources.Route, key.namespace, key.name, {
      metadata: { finalizers: (route.metadata.finalizers ?? []).filter((f) => f !== RouteFinalizer) },
    });
  }

  /**
   * The labeler's reads (spec §4.7, upstream `syncRoutingMeta`): the Revisions and Configurations that `status.traffic
   * ∪ spec.traffic` references (see `routingTargets`), and whether a settled pass must clear. It need not when the
   * stored Route was already settled at its generation and named the same targets: the last settled pass cleared
   * everything else, and only this Route's own labeler adds it anywhere — but for a Revision created since, which
   * its Configuration marked — so the two namespace-wide lists would find nothing.
   */
  async function routingOf(
    key: ObjectKey,
    route: Route,
    stored: Route,
    revs: Record<string, Revision>,
    configs: Record<string, Configuration>,
  ): Promise<Routing> {
    const traffic = [...(route.status?.traffic ?? []), ...(route.spec.traffic ?? [])];
    const storedTraffic = [...(stored.status?.traffic ?? []), ...(route.spec.traffic ?? [])]; // same generation: same spec
    // The pass already read what its traffic names; only status-only entries and controllers may be new here. The
    // stored status's Revisions are read too: one the new traffic dropped must count in the stored targets, or the
    // two would look the same and the clear (which makes it `reserve`) would never run.
    const revCache: Record<string, Revision> = { ...revs };
    const cfgCache: Record<string, Configuration> = { ...configs };
    const getRev = readOnce(Resources.Revision, key.namespace, revCache);
    const getCfg = readOnce(Resources.Configuration, key.namespace, cfgCache);
    await Promise.all(
      [...traffic, ...(stored.status?.traffic ?? [])].map(async (tt) => {
        let cfgName = tt.configurationName;
        if (tt.revisionName) {
          const rev = await getRev(tt.revisionName);
          if (!rev) return;
          cfgName = revisionOwnerConfiguration(rev) ?? cfgName;
        }
        if (cfgName) await getCfg(cfgName);
      }),
    );
    const targets = routingTargets(traffic, revCache, cfgCache);
    const storedSettled = isRouteReady(stored) || isRouteFailed(stored);
    // A Configuration copies its routes annotation onto each Revision it creates (upstream's MakeRevision): a new one
    // the traffic does not name lists this Route without this Route's labeler having put it there, and must be cleared.
    const unnamedLatest = await Promise.all(
      [...targets.configurations].map(async (name) => {
        const latest = cfgCache[name]?.status?.latestCreatedRevisionName;
        if (!latest || targets.revisions.has(latest)) return false;
        const rev = await getRev(latest);
        return rev !== undefined && listsRoute(rev, key.name);
      }),
    );
    const clear = !(storedSettled && sameRoutingTargets(routingTargets(storedTraffic, revCache, cfgCache), targets)) || unnamedLatest.includes(true);
    return { targets, getRev, configurations: cfgCache, clear };
  }

  /**
   * The labeler's marks: every target lists this Route in `serving.knative.dev/routes` (Revisions are `active` too).
   * The Configuration's annotation is what leads its changes (a new latest ready Revision) to the Routes that follow it.
   */
  async function markRouting(key: ObjectKey, routing: Routing, now: string): Promise<void> {
    const { targets, getRev, configurations } = routing;
    await settleAll([
      eachConcurrently([...targets.revisions], async (name) => {
        const rev = await getRev(name);
        const patch = rev ? routingPatch(rev, key.name, true, now) : undefined;
        if (patch) await patchIfPresent(Resources.Revision, key.namespace, name, { metadata: patch });
      }),
      eachConcurrently([...targets.configurations], async (name) => {
        const cfg = configurations[name];
        const patch = cfg ? configurationRoutesPatch(cfg, key.name, true) : undefined;
        if (patch) await patchIfPresent(Resources.Configuration, key.namespace, name, { metadata: patch });
      }),
    ]);
  }

  /**
   * The labeler's clear: once the Route is Ready or Failed for its generation, Revisions and Configurations it no
   * longer references lose it (a Revision then becomes `reserve` when no Route is left). `listed`: the clear's lists,
   * when already started. Runs after the marks and before the status write, so a pass that fails half-way clears on
   * its retry.
   */
  async function clearIfSettled(
    key: ObjectKey,
    routing: Routing,
    settled: boolean,
    now: string,
    wrote: WrittenVersions,
    listed?: Promise<Listed | undefined>,
  ): Promise<void> {
    if (!settled || !routing.clear) {
      await listed?.catch(() => undefined); // started for nothing: the Route did not settle
      return;
    }
    await clearRouting(key, routing.targets, now, (await listed) ?? (await listRouted(key.namespace, wrote)));
  }

  /**
   * Placeholder Services (spec §4.4, upstream `reconcilePlaceholderServices` + `updatePlaceholderServices`): each
   * desired one is created, or updated when Tidal's last apply differs or the live one was edited (re-created where
   * the API server refuses a type or cluster IP change); a live one the Route does not control stops the step
   * (NotOwned) — the names before it are still reconciled, as when they went one by one. A load balancer with an IP
   * also gets the Endpoints object, removed again when it no longer has one. Given the Services labelled with the
   * Route, those it controls that no traffic name needs any more are deleted, with their Endpoints. Names are
   * reconciled side by side; `live` holds what each name held as read and is updated with what was applied, so a
   * second call (the load balancer moved) reads nothing again.
   */
  async function reconcilePlaceholders(
    route: Route,
    desired: DesiredPlaceholder[],
    step: { live: Map<string, LivePlaceholder>; record: RecordLater; labelled?: KubeObject[] },
  ): Promise<PlaceholderOutcome> {
    const ns = route.metadata.namespace ?? '';
    const uid = route.metadata.uid;
    const held = (name: string): LivePlaceholder => {
      const h = step.live.get(name) ?? { service: undefined };
      step.live.set(name, h);
      return h;
    };
    // Endpoints matter only for a headless placeholder, wanted now or left from before.
    await Promise.all(
      desired.map(async (want) => {
        const h = held(want.name);
        if (h.endpoints === undefined && (want.endpoints || h.service?.spec?.clusterIP === 'None')) {
          h.endpoints = (await kube.get<KubeObject>(EndpointsType, ns, want.name)) ?? null;
        }
      }),
    );
    const notOwnedAt = (want: DesiredPlaceholder): PlaceholderOutcome['notOwned'] => {
      const h = held(want.name);
      if (h.service && !isControlledBy(h.service, uid)) return { kind: 'Service', name: want.name };
      if (h.endpoints && !isControlledBy(h.endpoints, uid)) return { kind: 'Endpoints', name: want.name };
      return undefined;
    };
    const stop = desired.findIndex((want) => notOwnedAt(want) !== undefined);
    const notOwned = stop < 0 ? undefined : notOwnedAt(desired[stop]!);
    const owned = stop < 0 ? desired : desired.slice(0, stop);
    const actions = await settleAll(owned.map((want) => applyPlaceholder(route, want, held(want.name), step.record)));
    const out: PlaceholderOutcome = {
      created: owned.filter((_, i) => actions[i] === 'created').map((w) => w.name),
      updated: owned.filter((_, i) => actions[i] === 'updated').map((w) => w.name),
      deleted: [],
    };
    if (notOwned) return { ...out, notOwned };
    if (step.labelled) {
      out.deleted = orphanedPlaceholders(step.labelled, uid, new Set(desired.map((d) => d.name)));
      await eachConcurrently(out.deleted, async (name) => {
        await kube.delete(Resources.KubeService, ns, name);
        const ep = await kube.get<KubeObject>(EndpointsType, ns, name);
        if (ep && isControlledBy(ep, uid)) await kube.delete(EndpointsType, ns, name);
      });
    }
    return out;
  }

  /** One placeholder name: its Service, then its Endpoints; `h` is updated with what the name holds afterwards. */
  async function applyPlaceholder(route: Route, want: DesiredPlaceholder, h: LivePlaceholder, record: RecordLater): Promise<ApplyAction> {
    const ns = route.metadata.namespace ?? '';
    let action: ApplyAction;
    const service = withLiveMetadata(h.service, want.service);
    if (h.service && placeholderUpdate(h.service, service) === 'recreate' && needsApply(h.service, service)) {
      await kube.delete(Resources.KubeService, ns, want.name);
      h.service = (await applyIfChanged(kube, Resources.KubeService, undefined, want.service)).obj;
      action = 'updated';
    } else {
      const applied = await applyIfChanged(kube, Resources.KubeService, h.service, service);
      h.service = applied.obj;
      action = applied.action;
      if (action === 'created') record(route, 'Normal', 'Created', `Created placeholder service "${want.name}"`);
    }
    if (want.endpoints) {
      h.endpoints = (await applyIfChanged(kube, EndpointsType, h.endpoints ?? undefined, want.endpoints)).obj;
    } else if (h.endpoints) {
      await kube.delete(EndpointsType, ns, want.name);
      h.endpoints = null;
    }
    return action;
  }

  /**
   * What programming reads of the Route's children by their names alone: its KIngress, the KIngress's VirtualServices
   * when `ingressClass` is Tidal's, its default placeholder (every traffic target is in the default name) and the
   * Services labelled with it. A Service's status pass starts them beside the Route's own read, with the configured
   * class.
   */
  function readForProgramming(key: ObjectKey, wrote: WrittenVersions, ingressClass: string) {
    const reads = {
      ingress: kube.get<Ingress>(Resources.KIngress, key.namespace, key.name),
      virtualServices: ingressClass === IstioIngressClassName ? readVirtualServices(kube, key.namespace, key.name) : undefined,
      placeholder: kube.get<LiveService>(Resources.KubeService, key.namespace, placeholderServiceName(key.name, '')),
      labelled: listOwnWrites<KubeObject>(deps, 'Service', key.namespace, { [Labels.route]: key.name }, wrote).then((l) => l.items),
    };
    // Awaited only by a pass that programs; the catch keeps a failure from counting as unhandled before that.
    for (const read of Object.values(reads)) void read?.catch(() => undefined);
    return reads;
  }

  /** One Route pass (`reconcileRoute`); each write it starts beside the rest goes into `inFlight`. */
  async function programRoute(key: ObjectKey, opts: RouteOptions, inFlight: Promise<unknown>[]): Promise<RouteOutcome> {
    const wrote = opts.written ?? {};
    // Handed what the Configuration's part read (a Service's status pass: a Revision turned Ready, so the Route is
    // about to be programmed), the pass reads what programming needs meanwhile. Otherwise it reads it only once it
    // knows it will program: a Route's first pass, with no Revision Ready yet, programs nothing.
    const early = opts.seen ? readForProgramming(key, wrote, config.networkConfig().ingressClass) : undefined;
    const raw = await kube.get<Route>(Resources.Route, key.namespace, key.name);
    if (!raw) return { outcome: 'gone' };
    if (raw.metadata.deletionTimestamp) {
      await finalizeRoute(key, raw, wrote);
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
    const { configs, revs } = await referenced(route, key.namespace, await opts.seen);
    // A Revision this Route does not serve yet gets traffic only once its pods are up (a `reserve` one scaled to zero
    // comes back first: the labeler's marks below make it active). Until then the KIngress keeps its split.
    const served = new Set((raw.status?.traffic ?? []).map((t) => t.revisionName ?? ''));
    const { config: traffic, error } = buildTrafficConfiguration(route, configs, revs, {
      awaitsPods: (rev) => awaitsPods(rev, served, (r) => servingReplicas(r, config.revisionConfig())),
    });
    let ingressAction: IngressAction = 'none';
    let ingressResourceVersion: string | undefined;
    let placeholders: PlaceholderOutcome | undefined;
    let moved: Promise<PlaceholderOutcome> | undefined;
    let routed: Promise<Routing> | undefined;
    let listed: Promise<Listed | undefined> | undefined;
    let marked: Promise<void> | undefined;
    const track = <T>(p: Promise<T>): Promise<T> => (inFlight.push(p), p);
    const record = recordLater(events);
    // The rollout's clock: real time, read when each decision is taken (a step's due time is compared with it).
    const clock = (): number => (deps.now?.() ?? new Date()).getTime();
    let plan: RolloutPlan | undefined;
    /** The Route's status write, once started (beside its KIngress's, or at the end of the pass). */
    let statusWritten: Promise<string | undefined> | undefined;
    let programmed = false; // the KIngress carries `plan` (its events and summary are news only then)
    let previousRollout: Rollout | undefined;
    let certs: RouteTLS | undefined;

    /** Ends the pass's status and writes it, after the moved placeholders and the labeler's bookkeeping. */
    const writeRouteStatus = async (): Promise<string | undefined> => {
      endReconcile(r, before, now);
      // The moved placeholders and the labeler's bookkeeping touch different objects: side by side, both before the
      // status write.
      const settled = isRouteReady(r) || isRouteFailed(r);
      const routing = routed ?? routingOf(key, r, raw, revs, configs);
      const bookkeeping = Promise.all([routing, marked ?? routing.then((x) => markRouting(key, x, now))]).then(([x]) =>
        clearIfSettled(key, x, settled, now, wrote, listed),
      );
      const [again] = await settleAll([moved, bookkeeping]);
      if (again) placeholders = placeholders ? mergePlaceholderOutcomes(placeholders, again) : again;
      // The Service's status step beside this one writes from the Route's status as computed, beside this write.
      opts.toWrite?.({ ...raw, status: r.status });
      return writeStatus(kube, Resources.Route, raw, r.status);
    };

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
      // external-domain-tls: the Route's Certificates are made (or found) first; each URL takes the scheme its
      // certificate gives, and a Ready one's Secret goes into the KIngress's spec.tls.
      certs = await reconcileRouteTLS(certificateContext(deps), {
        route,
        status,
        external: Object.fromEntries(names.map((name) => [name, hosts[name]?.external ?? []])),
        net,
        dom,
        now,
        record,
      });
      if (status.url) status.url = withScheme(status.url, certs.schemes);
      for (const [name, u] of Object.entries(tagUrls)) tagUrls[name] = withScheme(u, certs.schemes);
      status.traffic = statusTraffic(traffic, tagUrls);
      status.address = { url: routeAddressURL(route) };
      const ingressClass = ingressClassForRoute(route, net.ingressClass);
      const { tagHeaderBasedRouting } = config.featuresConfig();
      // The labeler's targets are known now that status.traffic is. A KIngress of Tidal's class is programmed in this
      // step and then settles the Route: the clear's two lists, when it will need them, go meanwhile. (Both are
      // awaited later; the catch only keeps a failure from counting as unhandled before that.)
      routed = routingOf(key, r, raw, revs, configs);
      if (ingressClass === IstioIngressClassName) listed = routed.then((routing) => (routing.clear ? listRouted(key.namespace, wrote) : undefined));
      for (const p of [routed, listed]) void p?.catch(() => undefined);
      // What programming reads, in one round (in a Service's status pass, most of it read beside the Route already):
      // the KIngress, each placeholder, the Services labelled with the Route (orphans) and, for a KIngress of Tidal's
      // class, its VirtualServices.
      const reads = early ?? readForProgramming(key, wrote, ingressClass);
      const [currentIngress, services, labelled, virtualServices] = await Promise.all([
        reads.ingress,
        Promise.all(
          names.map((name) =>
            name === '' ? reads.placeholder : kube.get<LiveService>(Resources.KubeService, key.namespace, placeholderServiceName(key.name, name)),
          ),
        ),
        reads.labelled,
        // Read early under the configured class, which this Route's annotation may override.
        ingressClass === IstioIngressClassName ? (reads.virtualServices ?? readVirtualServices(kube, key.namespace, key.name)) : undefined,
      ]);
      // The gradual rollout (spec §5): planned from the state the KIngress carries, programmed into it below. A
      // pass started by the step's early timer (RolloutWakeLeadMs) waits here for the step's exact time.
      // A timer may wake a millisecond early by the wall clock: wait until the step's time has really come, or the
      // plan would find it not yet due and ask for another timer.
      const stepRollout = deps.now ? undefined : parseRolloutAnnotation(currentIngress?.metadata.annotations?.[NetworkingAnnotations.rollout]);
      for (let wait = stepWaitMs(stepRollout, clock()); wait > 0; wait = stepWaitMs(stepRollout, clock())) await sleep(wait);
      const planInput: RolloutPlanInput = {
        desired: buildRollout(traffic),
        previousAnnotation: currentIngress?.metadata.annotations?.[NetworkingAnnotations.rollout],
        ingressExists: currentIngress !== undefined,
        ingressReady: currentIngress !== undefined && isIngressReady(currentIngress),
        routeIngressReady: routeConditionSet.get(raw.status, RouteConditionIngressReady)?.status === 'True',
        nowMs: clock(),
        durationSeconds: rolloutDurationSeconds(route.metadata.annotations, net),
        control: parseRolloutControl(route.metadata.annotations),
        revisions: traffic.revisions,
      };
      plan = planRollout(planInput);
      previousRollout = parseRolloutAnnotation(planInput.previousAnnotation);
      const rolled = applyRolloutToTraffic(traffic, plan.rollout, tagUrls);
      if (JSON.stringify(rolled) !== JSON.stringify(status.traffic)) {
        // The split names Revisions the plain traffic does not (the rollout's older ones): the labeler must keep
        // them routed, so its targets are taken again from this status.traffic.
        status.traffic = rolled;
        routed = routingOf(key, r, raw, revs, configs);
        if (ingressClass === IstioIngressClassName) listed = routed.then((routing) => (routing.clear ? listRouted(key.namespace, wrote) : undefined));
        for (const p of [routed, listed]) void p?.catch(() => undefined);
      }
      // The labeler's targets are final: its marks go now, beside the programming (upstream's labeler is a reconciler
      // of its own, not one ordered after the KIngress); its clear waits for the Route to settle, below.
      marked = track(routed.then((x) => markRouting(key, x, now)));
      void marked.catch(() => undefined);
      const hold = plan.holds[0];
      if (hold) markRolloutHeld(status, hold.reason, hold.message, now);
      const live = new Map(names.map((name, i) => [placeholderServiceName(key.name, name), { service: services[i] }]));
      const desiredPlaceholders = (ingress: Ingress | undefined): DesiredPlaceholder[] =>
        names.map((name) => {
          const svcName = placeholderServiceName(key.name, name);
          // Once the Ingress reports its load balancer, the placeholder points at it (checklist 54).
          const balanced = ingress?.status ? makeLoadBalancedPlaceholder(route, name, ingress, local) : undefined;
          if (balanced?.ok) return { name: svcName, service: balanced.service, endpoints: balanced.endpoints };
          return { name: svcName, service: makePlaceholderService(route, name, domains[name] ?? '') };
        });
      // Placeholders before the KIngress, as upstream: a placeholder that cannot be applied leaves the KIngress alone.
      // But a KIngress of Tidal's class, with readiness probing off, is programmed in this step and Ready at once: when
      // every placeholder name is free or already this Route's ClusterIP-less placeholder (nothing foreign can stop the
      // KIngress), each is written once, at the load balancer — beside the VirtualServices, or with a rollout under way
      // beside the KIngress's status — not first at its own domain and moved there a moment later (one write and two
      // round trips less on the way to Ready).
      const uid = route.metadata.uid;
      const once =
        ingressClass === IstioIngressClassName &&
        net.ingressReadinessProbing !== 'enabled' &&
        (currentIngress === undefined || (isControlledBy(currentIngress, uid) && isIstioIngress(currentIngress))) &&
        services.every((svc) => svc === undefined || (isControlledBy(svc, uid) && svc.spec?.clusterIP !== 'None'));
      if (!once) placeholders = await reconcilePlaceholders(route, desiredPlaceholders(currentIngress), { live, record, labelled });
      const pointAt = (ingress: Ingress) =>
        (moved ??= track(reconcilePlaceholders(route, desiredPlaceholders(ingress), { live, record, ...(once ? { labelled } : {}) })));
      const ingressOptions = { tagHeaderBasedRouting, tls: certs.tls, httpOption: httpOptionOf(net.httpProtocol) };
      if (placeholders?.notOwned) {
        if (placeholders.notOwned.kind === 'Service') markServiceNotOwned(status, placeholders.notOwned.name, now);
        else markEndpointNotOwned(status, placeholders.notOwned.name, now);
      } else if (certs.notOwned === undefined && certs.failed === undefined) {
        const desired = makeIngress(route, traffic, hosts, ingressClass, { ...ingressOptions, rollout: plan.rollout });
        const existing = currentIngress;
        if (existing && !isControlledBy(existing, route.metadata.uid)) {
          ingressAction = 'notOwned';
        } else {
          const applied = await applyIfChanged(kube, Resources.KIngress, existing, desired, ownedWhole());
          ingressAction = applied.action;
          programmed = true;
          if (applied.action !== 'unchanged') ingressResourceVersion = applied.obj.metadata.resourceVersion;
          if (applied.action === 'created') record(route, 'Normal', 'Created', `Created Ingress "${key.name}"`);
          // A KIngress of Tidal's class is programmed here, in the same step, instead of by a workflow of its own
          // (ADR 0005): the Route sees it Ready without another round trip.
          let ingress = applied.obj;
          // Nothing waits on the KIngress's readiness (Tidal's class without a probe, placeholders written once, no
          // rollout under way): the placeholders go beside its VirtualServices and the Route's status beside its
          // status, from the status about to be written — the Route Ready with its KIngress, one round trip sooner.
          const beside: BesideIngress =
            once && !plan.inProgress
              ? {
                  virtualServices: pointAt,
                  status: (ready) => {
                    propagateIngressStatus(status, ready, now);
                    return (statusWritten ??= writeRouteStatus());
                  },
                }
              : { status: (ready) => (once || !sameLoadBalancer(currentIngress, ready) ? pointAt(ready) : undefined) };
          if (isIstioIngress(ingress)) ingress = (await programIngress(deps, ingress, virtualServices, beside)).ingress;
          if (plan.inProgress && isIstioIngress(ingress) && isIngressReady(ingress)) {
            // This KIngress was programmed in this step and is Ready now: its 1 % step became ready within this
            // pass, which no later event would announce. Observe it here, as upstream's next pass would
            // (`ObserveReady`: the step took under a second), so the schedule starts now.
            const observed = planRollout({
              ...planInput,
              previousAnnotation: plan.annotation,
              ingressReady: true,
              routeIngressReady: false,
              nowMs: clock(),
            });
            if (observed.annotation !== plan.annotation) {
              const again = await applyIfChanged(
                kube,
                Resources.KIngress,
                ingress,
                makeIngress(route, traffic, hosts, ingressClass, { ...ingressOptions, rollout: observed.rollout }),
                ownedWhole(),
              );
              ingressResourceVersion = again.obj.metadata.resourceVersion;
              // Only the annotation moves unless a step fell due meanwhile: then the new split is programmed too.
              ingress =
                (again.obj.metadata.generation ?? 0) === (ingress.metadata.generation ?? 0)
                  ? { ...again.obj, status: ingress.status }
                  : (await programIngress(deps, again.obj)).ingress;
              plan = { ...observed, events: [...plan.events, ...observed.events.filter((e) => e.reason !== 'RolloutControlInvalid')] };
            }
          }
          if (!statusWritten) propagateIngressStatus(status, ingress, now);
          // Upstream does not propagate the KIngress's readiness while a rollout is in progress.
          if (plan.inProgress) (plan.paused ? markIngressRolloutPaused : markIngressRolloutInProgress)(status, now);
          // The load balancer it reports now moves the placeholders (checklist 54) in this pass too, unless they went
          // beside its status already: from what the first round left (which deleted the orphans), or, written once,
          // in the only round (orphans included).
          if (once || !sameLoadBalancer(currentIngress, ingress)) void pointAt(ingress);
        }
      }
    }
    const written = await (statusWritten ??= writeRouteStatus());
    // Each step and control action of the rollout as an Event on the Route.
    for (const e of programmed ? (plan?.events ?? []) : []) record(route, e.type, e.reason, e.message);
    if (certs?.notOwned !== undefined) {
      // As a placeholder held by another object (below): reported, and retried until the foreign Certificate goes.
      const message = `route "${key.name}" does not own Certificate "${certs.notOwned}"`;
      await events.record(route, 'Warning', 'InternalError', message);
      if (!opts.reportNotOwned) throw new Error(message);
    }
    if (certs?.failed !== undefined) throw new Error(certs.failed);
    if (placeholders?.notOwned) {
      // As upstream, the pass fails after reporting it (status and one InternalError Event), so it is retried with
      // backoff until the foreign object goes: nothing pokes the Route when a Service it does not own changes.
      const message = `route "${key.name}" does not own ${placeholders.notOwned.kind} "${placeholders.notOwned.name}"`;
      await events.record(route, 'Warning', 'InternalError', message);
      if (!opts.reportNotOwned) throw new Error(message);
    }
    const touched = placeholders ? describePlaceholders(placeholders) : '';
    const rollout = plan && programmed ? rolloutSummary(previousRollout, plan, clock()) : undefined;
    return {
      ...statusOutcome(written, r.status),
      ingress: ingressAction,
      ...(ingressResourceVersion ? { ingressResourceVersion } : {}),
      ...(touched ? { placeholders: touched } : {}),
      ...(domainError !== undefined ? { domainError } : {}),
      ...(placeholders?.notOwned ? { notOwned: `${placeholders.notOwned.kind} ${placeholders.notOwned.name}` } : {}),
      ...(certs?.notOwned !== undefined ? { notOwned: `Certificate ${certs.notOwned}` } : {}),
      written: writtenSoFar(wrote),
      ...(rollout ? { rollout } : {}),
    };
  }

  return {
    /**
     * One Route pass (spec §4.1): traffic → placeholder Services → KIngress → status, the labeler's marks beside the
     * programming and its clear before the status write (spec §4.7). A placeholder
     * name taken by a foreign object fails the step after reporting it, so it is retried with backoff — unless
     * `reportNotOwned` (a Service's pass, which must go on to write the Service's status): then the outcome names it
     * and the caller schedules the retry. `seen`: what the Configuration's status step beside it hands over
     * (activities/combined.ts), awaited before the Route reads what its traffic names; `toWrite`: for the Service's
     * status step beside it.
     */
    async reconcileRoute(key: ObjectKey, opts: RouteOptions = {}): Promise<RouteOutcome> {
      const inFlight: Promise<unknown>[] = [];
      try {
        return await programRoute(key, opts, inFlight);
      } finally {
        await Promise.allSettled(inFlight); // no write of the pass outlives its step, even one that fails
      }
    },
  };
}

/** `HH:MM:SS.mmmZ` of a Unix ms time: what a history line needs (the date is the pass's). */
function timeOfDay(ms: number): string {
  return `${new Date(ms).toISOString().slice(11, 23)}Z`;
}

/**
 * The rollout as this pass left it, compared with the KIngress's state before (`prev`): "nginx-00002 26% → 51%
 * (nginx-00001 49%, nginx-00002 51%), next step at 10:04:07.120Z"; a held configuration says why. Undefined when no
 * configuration is rolling out, held, or just finished. `nowMs`: the clock at the end of the step.
 */
export function rolloutSummary(prev: Rollout | undefined, plan: RolloutPlan, nowMs: number): RolloutSummary | undefined {
  const parts: string[] = [];
  for (const c of plan.rollout.configurations) {
    const latest = c.revisions.at(-1);
    if (latest === undefined) continue;
    const group = c.tag ? `tag ${c.tag}: ` : '';
    const hold = plan.holds.find((h) => h.configurationName === c.configurationName && (h.tag ?? '') === (c.tag ?? ''));
    if (hold) {
      parts.push(`${group}${hold.desiredRevision} ${hold.cause === 'abort' ? 'aborted' : 'rolled back'}, traffic on ${hold.servingRevision}`);
      continue;
    }
    const p = prev?.configurations.find((x) => x.configurationName === c.configurationName && (x.tag ?? '') === (c.tag ?? ''));
    const wasRolling = (p?.revisions.length ?? 0) > 1;
    if (c.revisions.length < 2 && !wasRolling) continue;
    const before = p?.revisions.find((x) => x.revisionName === latest.revisionName)?.percent ?? 0;
    const move = before === latest.percent ? `at ${latest.percent}%` : `${before}% → ${latest.percent}%`;
    const split = c.revisions.length > 1 ? ` (${c.revisions.map((x) => `${x.revisionName} ${x.percent}%`).join(', ')})` : ', rollout finished';
    parts.push(`${group}${latest.revisionName} ${move}${split}`);
  }
  if (parts.length === 0) return undefined;
  const next = plan.nextWakeAtMs;
  const summary = `${parts.join('; ')}${plan.paused ? ', paused' : ''}${next !== undefined ? `, next step at ${timeOfDay(next)}` : ''}`;
  return next === undefined ? { summary } : { summary, nextStepAtMs: next, nextStepInMs: Math.max(0, next - nowMs) };
}

/** config-network `http-protocol` as the KIngress's httpOption (the Route's own annotation wins in makeIngress). */
function httpOptionOf(httpProtocol: 'enabled' | 'redirected' | 'disabled'): HTTPOption {
  return httpProtocol === 'redirected' ? 'Redirected' : 'Enabled';
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

/** `fn` over `items`, at most `limit` at a time; every call settles before the first failure is thrown. */
async function eachConcurrently<T>(items: readonly T[], fn: (item: T) => Promise<unknown> | undefined, limit = 8): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) await fn(items[next++]!);
  };
  await settleAll(Array.from({ length: Math.min(limit, items.length) }, worker));
}
