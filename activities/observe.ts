// What an activity saw: every watched object it read or wrote, as an observation (`api/content-token.ts`), returned
// to the workflow with the activity's result so the entity loop knows which pokes its pass already covered.
// The Kubernetes client reports objects here; an AsyncLocalStorage scopes them to the activity that asked.
import { AsyncLocalStorage } from 'node:async_hooks';
import { ABSENT, mergeObservations, observationOf, sourceOf } from '../api/content-token.js';
import type { ResourceType } from '../api/kinds.js';
import type { KubeObject } from '../api/meta.js';

/**
 * Observations of one activity: source → `<uid> <spec> <status>` (a part is `-` if it changed under the activity),
 * and which of them Tidal wrote: `all` (an apply or create of a child: its result is Tidal's desired state) or
 * `status` (a status write: its status part is Tidal's, its spec part only read).
 */
interface Seen {
  obs: Map<string, string>;
  wrote: Map<string, 'all' | 'status'>;
  /** The newest resourceVersion the activity wrote, per kind (`group/kind`): what a cache must reflect before it reads it. */
  versions: Map<string, bigint>;
}

const scope = new AsyncLocalStorage<Seen>();

/**
 * At most this many observations go back to the workflow (history size). Leaving one out is always safe: the
 * workflow keeps only what the last pass reported, and a poke from a source it did not report leads to a pass.
 */
export const MAX_OBSERVATIONS = 64;
/** Lists longer than this are not recorded item by item (a namespace-wide list would bloat the history). */
const MAX_LIST_ITEMS = 16;

/**
 * Called by the Kubernetes client for every object it returns; outside an activity it does nothing. A `write` is a
 * server-side apply (force) or create of a child: its result is Tidal's desired state on top of whatever was there,
 * so it replaces what the activity read before. A `status` write replaces the status part only: the spec it returns
 * may hold someone else's change the activity never acted on. Anything else is a `read`: two different contents
 * within one activity mean the object changed under it, and the activity covers neither (mergeObservations).
 */
export function noteObject(type: ResourceType, obj: KubeObject, how: 'read' | 'write' | 'status', listSize = 0): void {
  const seen = scope.getStore();
  if (!seen || listSize > MAX_LIST_ITEMS) return;
  const source = sourceOf(type, obj);
  if (source === undefined) return;
  const observation = observationOf(obj);
  const before = seen.obs.get(source);
  seen.obs.set(source, before === undefined || how === 'write' ? observation : mergeObservations(before, observation, how === 'status'));
  if (how === 'write') seen.wrote.set(source, 'all');
  else if (how === 'status' && seen.wrote.get(source) !== 'all') seen.wrote.set(source, 'status');
}

const kindKey = (type: ResourceType) => `${type.group}/${type.kind}`;

/** Called by the Kubernetes client for every object a write (apply, create, patch) returned. */
export function noteWritten(type: ResourceType, obj: KubeObject): void {
  const seen = scope.getStore();
  const rv = obj.metadata?.resourceVersion;
  if (!seen || !rv || !/^[0-9]{1,30}$/.test(rv)) return;
  const version = BigInt(rv);
  if (version > (seen.versions.get(kindKey(type)) ?? 0n)) seen.versions.set(kindKey(type), version);
}

/** The newest version of `type` the running activity wrote so far, or undefined (none, or outside an activity). */
export function writtenVersion(type: ResourceType): string | undefined {
  return scope.getStore()?.versions.get(kindKey(type))?.toString();
}

/** Called by the Kubernetes client when a GET found nothing: the object was absent when the activity looked. */
export function noteAbsent(type: ResourceType, namespace: string, name: string): void {
  const seen = scope.getStore();
  if (!seen) return;
  const source = sourceOf(type, { metadata: { namespace, name } } as KubeObject);
  if (source === undefined) return;
  const before = seen.obs.get(source);
  seen.obs.set(source, before === undefined ? ABSENT : mergeObservations(before, ABSENT, false));
}

/** What an activity result carries for the entity loop (activities/index.ts `Observed`). */
export interface ObservedResult {
  observed?: Record<string, string>;
  /** Sources of `observed` this activity wrote (see `Seen`); the others it only read. */
  wrote?: Record<string, 'all' | 'status'>;
}

/** The activity result with `observed` (and `wrote`) added (results that are not plain objects are returned as they are). */
export async function observing<R>(fn: () => Promise<R>): Promise<R & ObservedResult> {
  const seen: Seen = { obs: new Map(), wrote: new Map(), versions: new Map() };
  const result = (await scope.run(seen, fn)) as R & ObservedResult;
  if (result === null || typeof result !== 'object' || Array.isArray(result) || seen.obs.size === 0) return result;
  const observed: Record<string, string> = {};
  const wrote: Record<string, 'all' | 'status'> = {};
  let n = 0;
  for (const [source, observation] of seen.obs) {
    if (n >= MAX_OBSERVATIONS) break;
    observed[source] = observation;
    const w = seen.wrote.get(source);
    if (w) wrote[source] = w;
    n += 1;
  }
  return { ...result, observed, ...(Object.keys(wrote).length ? { wrote } : {}) };
}

/** Wraps every function of an activity object with `observing`. */
export function withObservations<A extends Record<string, (...args: never[]) => Promise<unknown>>>(activities: A): A {
  const out: Record<string, unknown> = {};
  for (const [name, fn] of Object.entries(activities)) {
    out[name] = (...args: never[]) => observing(() => fn(...args));
  }
  return out as A;
}
