// The Route's status write, once a pass: after the placeholders moved to the load balancer and the labeler's
// bookkeeping (side by side: they touch different objects), as upstream writes the status at the end of its
// reconcile. It goes at the end of the pass, or beside the KIngress's status when nothing waits on the KIngress
// (activities/route-ingress.ts, ADR 0011).
import { endReconcile, type beginReconcile } from '../api/conditions.js';
import { Resources } from '../api/kinds.js';
import { isRouteFailed, isRouteReady } from '../api/lifecycle/route.js';
import type { Route } from '../api/serving.js';
import { settleAll } from './apply.js';
import type { RouteLabeler } from './route-labeler.js';
import type { RoutePass } from './route-pass.js';
import type { RoutePlaceholders } from './route-placeholders.js';
import { writeStatus } from './status.js';

/** The status write of one pass (`routeStatusWrite`). */
export interface RouteStatusWrite {
  /**
   * Starts the write, after the round of `placeholders` at the load balancer when one started, or returns the write
   * started: the new resourceVersion, undefined when nothing changed.
   */
  write(placeholders?: RoutePlaceholders): Promise<string | undefined>;
  /** The write has started: the status is no longer the pass's to change. */
  readonly started: boolean;
}

export function routeStatusWrite(
  pass: RoutePass,
  before: ReturnType<typeof beginReconcile>,
  labeler: RouteLabeler,
  /** Gets the Route with the status about to be written (the Service's status step beside this one). */
  toWrite?: (route: Route) => void,
): RouteStatusWrite {
  const { raw, reconciled, now } = pass;
  let written: Promise<string | undefined> | undefined;
  const write = async (placeholders?: RoutePlaceholders): Promise<string | undefined> => {
    endReconcile(reconciled, before, now);
    const settled = isRouteReady(reconciled) || isRouteFailed(reconciled);
    const [again] = await settleAll([placeholders?.moving, labeler.settle(settled)]);
    if (again) placeholders?.moved(again);
    toWrite?.({ ...raw, status: reconciled.status });
    return writeStatus(pass.deps.kube, Resources.Route, raw, reconciled.status);
  };
  return {
    write: (placeholders) => (written ??= write(placeholders)),
    get started() {
      return written !== undefined;
    },
  };
}
