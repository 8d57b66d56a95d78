// The Route's labeler (upstream's labeler reconciler and `syncRoutingMeta`): every Revision and
// Configuration the Route references lists it in `serving.knative.dev/routes` (Revisions are `active` too), and once
// the Route is Ready or Failed for its generation, those it no longer references lose it. Its marks go beside the
// programming, its clear before the status write (a pass that fails half-way clears on its retry); its finalizer
// takes the Route off everything it carried.
import { isRouteFailed, isRouteReady } from '../api/lifecycle/route.js';
import { Resources, type ResourceType } from '../api/kinds.js';
import { Labels } from '../api/labels.js';
import type { ObjectKey } from '../api/meta.js';
import type { Configuration, Revision, Route } from '../api/serving.js';
import {
  configurationRoutesPatch,
  listsRoute,
  revisionOwnerConfiguration,
  routingPatch,
  routingTargets,
  sameRoutingTargets,
  type RoutingTargets,
} from '../resources/labeler.js';
import { isNotFound } from '../kube/errors.js';
import type { KubeClient } from '../kube/client.js';
import { eachConcurrently, settleAll } from './apply.js';
import { nowOf, type ActivityDeps } from './deps.js';
import type { RoutePass } from './route-pass.js';
import { readOnce, type Referenced } from './route-traffic.js';
import { listOwnWrites, type WrittenVersions } from './written.js';

/** Knative's finalizer for the Route labeler (`<plural>.<group>`). */
export const RouteFinalizer = 'routes.serving.knative.dev';

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

/** Best effort on objects that may be going away with the Route (their owner is being deleted too). */
async function patchIfPresent(kube: KubeClient, type: ResourceType, ns: string, name: string, patch: unknown): Promise<void> {
  try {
    await kube.mergePatch(type, ns, name, patch);
  } catch (err) {
    if (!isNotFound(err)) throw err;
  }
}

/** What a clear works from: the active Revisions and every Configuration of the namespace, listed side by side. */
function listRouted(deps: ActivityDeps, ns: string, wrote: WrittenVersions): Promise<Listed> {
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
  kube: KubeClient,
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
    patch ? patchIfPresent(kube, type, key.namespace, name, { metadata: patch }) : undefined,
  );
}

/** Adds the labeler's finalizer to a Route that lacks it (upstream's generated reconciler does it first). */
export async function addRouteFinalizer(kube: KubeClient, key: ObjectKey, route: Route): Promise<void> {
  if ((route.metadata.finalizers ?? []).includes(RouteFinalizer)) return;
  await kube.mergePatch(Resources.Route, key.namespace, key.name, {
    metadata: { finalizers: [...(route.metadata.finalizers ?? []), RouteFinalizer] },
  });
}

/** The Route's finalizer: take the Route off every Revision and Configuration it carried, then let it go. */
export async function finalizeRoute(deps: ActivityDeps, key: ObjectKey, route: Route, wrote: WrittenVersions): Promise<void> {
  if (!(route.metadata.finalizers ?? []).includes(RouteFinalizer)) return;
  const listed = await listRouted(deps, key.namespace, wrote);
  await clearRouting(deps.kube, key, { revisions: new Set(), configurations: new Set() }, nowOf(deps), listed);
  await patchIfPresent(deps.kube, Resources.Route, key.namespace, key.name, {
    metadata: { finalizers: (route.metadata.finalizers ?? []).filter((f) => f !== RouteFinalizer) },
  });
}

/**
 * The labeler's reads (upstream `syncRoutingMeta`): the Revisions and Configurations that `status.traffic ∪
 * spec.traffic` of `route` references (see `routingTargets`), and whether a settled pass must clear. It need not when
 * the stored Route was already settled at its generation and named the same targets: the last settled pass cleared
 * everything else, and only this Route's own labeler adds it anywhere — but for a Revision created since, which its
 * Configuration marked (the latest created, or one it created before that while a target Configuration is still
 * creating) — so the two namespace-wide lists would find nothing.
 */
async function routingOf(kube: KubeClient, key: ObjectKey, route: Route, stored: Route, { revs, configs }: Referenced): Promise<Routing> {
  const traffic = [...(route.status?.traffic ?? []), ...(route.spec.traffic ?? [])];
  const storedTraffic = [...(stored.status?.traffic ?? []), ...(route.spec.traffic ?? [])]; // same generation: same spec
  // The pass already read what its traffic names; only status-only entries and controllers may be new here. The
  // stored status's Revisions are read too: one the new traffic dropped must count in the stored targets, or the
  // two would look the same and the clear (which makes it `reserve`) would never run.
  const revCache: Record<string, Revision> = { ...revs };
  const cfgCache: Record<string, Configuration> = { ...configs };
  const getRev = readOnce(kube, Resources.Revision, key.namespace, revCache);
  const getCfg = readOnce(kube, Resources.Configuration, key.namespace, cfgCache);
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
  // While a target Configuration's latest created Revision is not its latest ready one, Revisions are being created:
  // one superseded before the Route sent it traffic (a template changed twice in a row) was marked by its
  // Configuration and is named by neither side now — the same targets, worked out from today's Configuration, say
  // nothing of it.
  const creating = [...targets.configurations].some((name) => {
    const status = cfgCache[name]?.status;
    return status?.latestCreatedRevisionName !== undefined && status.latestCreatedRevisionName !== status.latestReadyRevisionName;
  });
  const same = storedSettled && sameRoutingTargets(routingTargets(storedTraffic, revCache, cfgCache), targets);
  const clear = !same || creating || unnamedLatest.includes(true);
  return { targets, getRev, configurations: cfgCache, clear };
}

/**
 * The labeler's marks: every target lists this Route in `serving.knative.dev/routes` (Revisions are `active` too).
 * The Configuration's annotation is what leads its changes (a new latest ready Revision) to the Routes that follow it.
 */
async function markRouting(kube: KubeClient, key: ObjectKey, routing: Routing, now: string): Promise<void> {
  const { targets, getRev, configurations } = routing;
  await settleAll([
    eachConcurrently([...targets.revisions], async (name) => {
      const rev = await getRev(name);
      const patch = rev ? routingPatch(rev, key.name, true, now) : undefined;
      if (patch) await patchIfPresent(kube, Resources.Revision, key.namespace, name, { metadata: patch });
    }),
    eachConcurrently([...targets.configurations], async (name) => {
      const cfg = configurations[name];
      const patch = cfg ? configurationRoutesPatch(cfg, key.name, true) : undefined;
      if (patch) await patchIfPresent(kube, Resources.Configuration, key.namespace, name, { metadata: patch });
    }),
  ]);
}

/** The labeler within one pass (`routeLabeler`). */
export interface RouteLabeler {
  /**
   * Takes the targets from the reconciled Route's status.traffic, again when a rollout's split changed it. With
   * `listEarly` (a KIngress of Tidal's class, which settles the Route in this step), the clear's lists, when it will
   * need them, are read meanwhile.
   */
  target(listEarly: boolean): void;
  /** The targets are final: the marks go now, beside the programming (upstream's labeler is ordered after nothing). */
  mark(): void;
  /** Before the status write: the marks (now, when not made yet), then — `settled` — the clear. */
  settle(settled: boolean): Promise<void>;
}

/** The labeler of one pass, working from what the pass's traffic read (`referenced`). */
export function routeLabeler(pass: RoutePass, referenced: Referenced): RouteLabeler {
  const { deps, key, raw, reconciled, now, wrote } = pass;
  let routed: Promise<Routing> | undefined;
  let listed: Promise<Listed | undefined> | undefined;
  let marked: Promise<void> | undefined;
  const mark = (routing: Routing) => markRouting(deps.kube, key, routing, now);
  return {
    target(listEarly) {
      routed = routingOf(deps.kube, key, reconciled, raw, referenced);
      if (listEarly) listed = routed.then((routing) => (routing.clear ? listRouted(deps, key.namespace, wrote) : undefined));
      // Awaited later; the catch only keeps a failure from counting as unhandled before that.
      for (const p of [routed, listed]) void p?.catch(() => undefined);
    },
    mark() {
      const routing = routed ?? routingOf(deps.kube, key, reconciled, raw, referenced);
      marked = pass.track(routing.then(mark));
      void marked.catch(() => undefined);
    },
    settle(settled) {
      const routing = routed ?? routingOf(deps.kube, key, reconciled, raw, referenced);
      return Promise.all([routing, marked ?? routing.then(mark)]).then(async ([x]) => {
        if (!settled || !x.clear) {
          await listed?.catch(() => undefined); // started for nothing: the Route did not settle
          return;
        }
        await clearRouting(deps.kube, key, x.targets, now, (await listed) ?? (await listRouted(deps, key.namespace, wrote)));
      });
    },
  };
}
