// The routing-state labeler (Knative's labeler): which Routes carry a Revision or Configuration (`serving.knative.dev/routes`),
// and a Revision's `serving.knative.dev/routingState` (active while some Route carries it, reserve after), with the
// time the state last changed. Pure: the Route activity reads the objects and applies the patches.
import { Annotations, Labels } from '../api/labels.js';
import { controllerOf, type KubeObject } from '../api/meta.js';
import type { Configuration, Revision, TrafficTarget } from '../api/serving.js';
import { unionRoutes } from './configuration.js';
import { rfc3339, RoutingState } from './revision.js';

export interface RoutingPatch {
  labels: Record<string, string>;
  annotations: Record<string, string | null>;
}

/** The routes annotation's names (sorted). */
function routesOf(obj: Pick<KubeObject, 'metadata'>): string[] {
  return (obj.metadata.annotations?.[Annotations.routes] ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '')
    .sort();
}

/** The routes list with `route` added (carried) or removed, sorted and comma-joined. */
function routesWith(current: string[], route: string, carried: boolean): string {
  return carried ? unionRoutes(current.join(','), route) : current.filter((r) => r !== route).join(',');
}

/** True when the object's routes annotation lists `route`. */
export function listsRoute(obj: Pick<KubeObject, 'metadata'>, route: string): boolean {
  return routesOf(obj).includes(route);
}

/**
 * The metadata patch that records whether `route` carries `rev`, or undefined when nothing changes. A Revision that
 * no Route carries any more becomes `reserve`; the state's timestamp changes only with the state.
 */
export function routingPatch(rev: Revision, route: string, carried: boolean, now: string): RoutingPatch | undefined {
  const current = routesOf(rev);
  const routes = routesWith(current, route, carried);
  const state = routes === '' ? RoutingState.reserve : RoutingState.active;
  const stateChanged = rev.metadata.labels?.[Labels.routingState] !== state;
  const routesChanged = routes !== current.join(',');
  if (!stateChanged && !routesChanged) return undefined;
  return {
    labels: stateChanged ? { [Labels.routingState]: state } : {},
    annotations: {
      ...(routesChanged ? { [Annotations.routes]: routes === '' ? null : routes } : {}),
      ...(stateChanged ? { [Annotations.routingStateModified]: rfc3339(now) } : {}),
    },
  };
}

/**
 * The same bookkeeping on a Configuration (upstream's configuration accessor): only the routes annotation, no state.
 * Undefined when nothing changes. It is what lets a Configuration's change reach the Routes that follow it.
 */
export function configurationRoutesPatch(
  cfg: Pick<Configuration, 'metadata'>,
  route: string,
  carried: boolean,
): { annotations: Record<string, string | null> } | undefined {
  const current = routesOf(cfg);
  const routes = routesWith(current, route, carried);
  if (routes === current.join(',')) return undefined;
  return { annotations: { [Annotations.routes]: routes === '' ? null : routes } };
}

/** The Revisions and Configurations a Route carries (names). */
export interface RoutingTargets {
  revisions: Set<string>;
  configurations: Set<string>;
}

/** True when two target sets name the same Revisions and Configurations. */
export function sameRoutingTargets(a: RoutingTargets, b: RoutingTargets): boolean {
  const same = (x: Set<string>, y: Set<string>) => x.size === y.size && [...x].every((n) => y.has(n));
  return same(a.revisions, b.revisions) && same(a.configurations, b.configurations);
}

/**
 * Upstream `syncRoutingMeta`'s walk over `status.traffic ∪ spec.traffic`: every named Revision that exists, and its
 * controlling Configuration (treated as a configuration target); every configuration target that exists, and, for a
 * `latestRevision` target, its latest created Revision (so a Revision that is not ready yet is already active) and
 * its latest ready one when that was read.
 * `revisions` and `configurations` hold the objects that exist, by name (missing ones are skipped: their creation
 * pokes the Route again).
 */
export function routingTargets(
  traffic: readonly TrafficTarget[],
  revisions: Readonly<Record<string, Revision>>,
  configurations: Readonly<Record<string, Configuration>>,
): RoutingTargets {
  const out: RoutingTargets = { revisions: new Set(), configurations: new Set() };
  for (const tt of traffic) {
    let configName = tt.configurationName ?? '';
    if (tt.revisionName) {
      const rev = Object.hasOwn(revisions, tt.revisionName) ? revisions[tt.revisionName] : undefined;
      if (!rev) continue;
      out.revisions.add(tt.revisionName);
      const owner = controllerOf(rev);
      if (owner?.kind === 'Configuration') configName = owner.name;
    }
    if (configName === '') continue;
    const cfg = Object.hasOwn(configurations, configName) ? configurations[configName] : undefined;
    if (!cfg) continue;
    out.configurations.add(configName);
    if (tt.latestRevision !== true) continue;
    const latest = cfg.status?.latestCreatedRevisionName ?? '';
    if (latest !== '') out.revisions.add(latest);
    // The one it serves is in status.traffic once the Route sends it traffic; a Route waiting for its pods to come
    // back up (traffic.ts `awaitsPods`) must make it active first.
    const ready = cfg.status?.latestReadyRevisionName ?? '';
    if (ready !== '' && Object.hasOwn(revisions, ready)) out.revisions.add(ready);
  }
  return out;
}

/** The Configuration a named Revision belongs to, for fetching before `routingTargets` (its controller). */
export function revisionOwnerConfiguration(rev: Revision): string | undefined {
  const owner = controllerOf(rev);
  return owner?.kind === 'Configuration' ? owner.name : undefined;
}
