// The newest versions a Route's passes wrote of the kinds they list (activities/route.ts `RouteWrites`), carried from
// pass to pass as facts: the next pass reads its lists from the watcher's cache only once the cache reflects them.
import type { RouteOutcome, RouteWrites } from '../activities/index.js';
import type { EntityState } from './entity.js';

const factOf: Record<keyof RouteWrites, string> = { Revision: 'wroteRevision', Configuration: 'wroteConfiguration', Service: 'wroteService' };

/** What earlier passes of this run wrote (nothing in a fresh run: it starts long after any write settled, ADR 0006). */
export function routeWrites(st: Readonly<EntityState>): RouteWrites {
  const out: RouteWrites = {};
  for (const [kind, fact] of Object.entries(factOf) as [keyof RouteWrites, string][]) {
    const v = st.facts[fact];
    if (v) out[kind] = v;
  }
  return out;
}

/** The facts to remember after a Route step (none when it did not run or found the Route gone). */
export function routeWriteFacts(route: RouteOutcome | undefined): Record<string, string> {
  if (!route || route.outcome === 'gone' || !route.written) return {};
  const out: Record<string, string> = {};
  for (const [kind, fact] of Object.entries(factOf) as [keyof RouteWrites, string][]) {
    const v = route.written[kind];
    if (v) out[fact] = v;
  }
  return out;
}
