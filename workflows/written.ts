// The newest versions an entity workflow's passes wrote of the kinds they list (activities/written.ts), carried from
// pass to pass as facts: a step reads its lists from the watcher's cache only once the cache reflects them.
import type { WrittenVersions } from '../activities/index.js';
import type { EntityState } from './entity.js';

const factOf = { Revision: 'wroteRevision', Configuration: 'wroteConfiguration', Service: 'wroteService' } as const;
const kinds = Object.keys(factOf) as (keyof typeof factOf)[];

/**
 * What earlier passes of this run wrote (nothing in a fresh run: it starts long after any write settled, ADR 0006).
 * After a pass that failed, its writes are recorded nowhere: the next pass lists from the API server (`unrecorded`),
 * as a step's retry does — its steps are first attempts again.
 */
export function writtenBefore(st: Readonly<EntityState>): WrittenVersions {
  const out: WrittenVersions = st.failedPasses > 0 ? { unrecorded: true } : {};
  for (const kind of kinds) {
    const v = st.facts[factOf[kind]];
    if (v) out[kind] = v;
  }
  return out;
}

/** The facts to remember after the steps that report what they wrote (the last one that ran carries them all). */
export function writtenFacts(...steps: (object | undefined)[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const s of steps) {
    const written = s && 'written' in s ? (s.written as WrittenVersions | undefined) : undefined;
    for (const kind of kinds) {
      const v = written?.[kind];
      if (v) out[factOf[kind]] = v;
    }
  }
  return out;
}
