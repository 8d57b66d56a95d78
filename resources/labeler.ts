// The routing-state labeler (spec §4.7): which Routes carry a Revision (`serving.knative.dev/routes`) and its
// `serving.knative.dev/routingState` (active while some Route carries it, reserve after), with the time the state
// last changed. Pure: the Route activity applies the patches.
import { Annotations, Labels } from '../api/labels.js';
import type { Revision } from '../api/serving.js';
import { unionRoutes } from './configuration.js';
import { rfc3339, RoutingState } from './revision.js';

export interface RoutingPatch {
  labels: Record<string, string>;
  annotations: Record<string, string | null>;
}

/**
 * The metadata patch that records whether `route` carries `rev`, or undefined when nothing changes. A Revision that
 * no Route carries any more becomes `reserve`; the state's timestamp changes only with the state.
 */
export function routingPatch(rev: Revision, route: string, carried: boolean, now: string): RoutingPatch | undefined {
  const current = (rev.metadata.annotations?.[Annotations.routes] ?? '').split(',').map((s) => s.trim()).filter((s) => s !== '');
  const routes = carried ? unionRoutes(current.join(','), route) : current.filter((r) => r !== route).sort().join(',');
  const state = routes === '' ? RoutingState.reserve : RoutingState.active;
  const stateChanged = rev.metadata.labels?.[Labels.routingState] !== state;
  const routesChanged = routes !== current.slice().sort().join(',');
  if (!stateChanged && !routesChanged) return undefined;
  return {
    labels: stateChanged ? { [Labels.routingState]: state } : {},
    annotations: {
      ...(routesChanged ? { [Annotations.routes]: routes === '' ? null : routes } : {}),
      ...(stateChanged ? { [Annotations.routingStateModified]: rfc3339(now) } : {}),
    },
  };
}
