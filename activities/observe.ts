// What an activity saw: every watched object it read or wrote, as an observation (`api/content-token.ts`), returned
// to the workflow with the activity's result so the entity loop knows which pokes its pass already covered.
// The Kubernetes client reports objects here; an AsyncLocalStorage scopes them to the activity that asked.
import { AsyncLocalStorage } from 'node:async_hooks';
import { Context } from '@temporalio/activity';
import { ABSENT, echoOf, mergeObservations, observationOf, sourceOf } from '../api/content-token.js';
import type { ResourceType } from '../api/kinds.js';
import { resourceVersionNumber, type KubeObject } from '../api/meta.js';
import type { OwnWriteLog } from './deps.js';
import { installStepHooks } from '../kube/step-hooks.js';
import { firstAttempt } from './attempt.js';

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
  /** Every apply or create, as `<resourceVersion> <observation>` per source (`ObservedResult.echoes`). */
  echoes: Map<string, string[]>;
  /** Sources the activity created and has not looked at since: their status is nobody's decision yet. */
  created: Set<string>;
  /** Told of every write (source, resourceVersion), when the activity runs for a workflow (`noteWritten`). */
  onWrite?: ((source: string, resourceVersion: string) => void) | undefined;
  /** The oldest resourceVersion of each source the activity read or wrote (`ObservedResult.versions`). */
  rvs: Map<string, bigint>;
  /**
   * Aborted once this attempt is abandoned (its start-to-close timeout passed, or its workflow task went to another
   * worker): from then on it writes nothing and its writes are no one's own (`stepLive`).
   */
  abandoned?: AbortSignal | undefined;
}

const scope = new AsyncLocalStorage<Seen>();

/**
 * At most this many observations go back to the workflow (history size). Leaving one out is always safe: the
 * workflow keeps only what the last pass reported, and a poke from a source it did not report leads to a pass.
 */
export const MAX_OBSERVATIONS = 64;
/** Lists longer than this are not recorded item by item (a namespace-wide list would bloat the history). */
const MAX_LIST_ITEMS = 16;
/** The newest writes of one source kept as echoes; an older one's poke, if any, is news (a pass): always safe. */
const MAX_ECHOES_PER_SOURCE = 4;

/**
 * Called by the Kubernetes client for every object it returns; outside an activity it does nothing. A `write` is a
 * server-side apply (force) or create of a child: its result is Tidal's desired state on top of whatever was there,
 * so it replaces what the activity read before. A `status` write replaces the status part only: the spec it returns
 * may hold someone else's change the activity never acted on. Anything else is a `read`: two different contents
 * within one activity mean the object changed under it, and the activity covers neither (mergeObservations) — except
 * the status of an object the activity created: nothing acted on the status a create returned (it has none of its
 * own yet), so a later read's status is the one acted on.
 */
export function noteObject(type: ResourceType, obj: KubeObject, how: 'read' | 'write' | 'create' | 'status', listSize = 0): void {
  const seen = scope.getStore();
  if (!seen || listSize > MAX_LIST_ITEMS) return;
  const source = sourceOf(type, obj);
  if (source === undefined) return;
  const observation = observationOf(obj);
  const rv = resourceVersionNumber(obj.metadata.resourceVersion);
  const oldest = seen.rvs.get(source);
  if (rv !== undefined && (oldest === undefined || rv < oldest)) seen.rvs.set(source, rv);
  const before = seen.obs.get(source);
  const replaces = before === undefined || how === 'write' || how === 'create';
  seen.obs.set(source, replaces ? observation : mergeObservations(before, observation, how === 'status' || seen.created.has(source)));
  if (how === 'create') seen.created.add(source);
  else seen.created.delete(source);
  if (how === 'write' || how === 'create') {
    seen.wrote.set(source, 'all');
    const rv = obj.metadata.resourceVersion;
    if (rv) seen.echoes.set(source, [...(seen.echoes.get(source) ?? []), echoOf(rv, observation)].slice(-MAX_ECHOES_PER_SOURCE));
  } else if (how === 'status' && seen.wrote.get(source) !== 'all') seen.wrote.set(source, 'status');
}

const kindKey = (type: ResourceType) => `${type.group}/${type.kind}`;

/**
 * Called by the Kubernetes client for every object a write returned. An apply, create or patch (not a `status` write)
 * moves the newest version of its kind the activity wrote (`writtenVersion`). Any write is this workflow's own version:
 * its poker need not announce it to the workflow (`Seen.onWrite`, watcher/own-writes.ts). Unlike an echo
 * (`ObservedResult.echoes`) that holds for a patch or status write too: the poker drops only that exact version's poke,
 * and keeps any earlier one of the same source still waiting.
 */
export function noteWritten(type: ResourceType, obj: KubeObject, status = false): void {
  const seen = scope.getStore();
  const rv = obj.metadata?.resourceVersion;
  if (!seen || !rv) return;
  // A write that was in flight when its attempt was abandoned is not the workflow's own: the pass that counts (a later
  // attempt, another worker's) never saw it, so its echo must reach the workflow as news.
  if (seen.onWrite && !seen.abandoned?.aborted) {
    const source = sourceOf(type, obj);
    if (source !== undefined) seen.onWrite(source, rv);
  }
  if (status || !/^[0-9]{1,30}$/.test(rv)) return;
  const version = BigInt(rv);
  if (version > (seen.versions.get(kindKey(type)) ?? 0n)) seen.versions.set(kindKey(type), version);
}

/**
 * Throws when the running step's attempt has been abandoned (`Seen.abandoned`): a timed-out local activity keeps
 * running in its worker while the retry (or another worker, its workflow task having timed out) acts on fresher
 * reads, and a write it made after that would put back what it read before — behind the back of the pass that counts.
 * The Kubernetes client asks before every write. Outside an activity it never throws.
 */
export function stepLive(): void {
  const abandoned = scope.getStore()?.abandoned;
  if (abandoned?.aborted) throw new StepAbandonedError();
}

/** The signal that aborts when the running step's attempt is abandoned, if any (a request's own is combined with it). */
export function stepSignal(): AbortSignal | undefined {
  return scope.getStore()?.abandoned;
}

export class StepAbandonedError extends Error {
  constructor() {
    super('the step was abandoned (timed out, or its workflow task moved to another worker): it writes nothing more');
    this.name = 'StepAbandonedError';
  }
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
  /**
   * Every apply and create, `<resourceVersion> <observation>` of exactly what the write returned, per source: the
   * entity loop ignores the poke of that one version (`echoCovers` in api/content-token.ts, workflows/entity-loop.ts). An apply or create is
   * Tidal's desired state on top of whatever was there (see `noteObject`), and the resourceVersion pins the echo to
   * that version — a later change, even back to the same content, is news. Status writes give none: what they return
   * may hold a spec change the step never acted on.
   */
  echoes?: Record<string, string[]>;
  /** Sources of `observed` the activity created and did not look at again: a later step's read of their status wins. */
  created?: string[];
  /**
   * The oldest resourceVersion of each source of `observed` the activity read or wrote — the oldest it may have acted
   * on: a poke of a newer version that the observation does not cover was not acted on, and its pass runs again
   * (workflows/entity-loop.ts, ADR 0015).
   */
  versions?: Record<string, string>;
}

/** The activity result with `observed` (and `wrote`) added (results that are not plain objects are returned as they are). */
export async function observing<R>(fn: () => Promise<R>, onWrite?: Seen['onWrite'], abandoned?: AbortSignal): Promise<R & ObservedResult> {
  const seen: Seen = {
    obs: new Map(),
    wrote: new Map(),
    versions: new Map(),
    echoes: new Map(),
    created: new Set(),
    onWrite,
    rvs: new Map(),
    abandoned,
  };
  const result = (await scope.run(seen, fn)) as R & ObservedResult;
  if (result === null || typeof result !== 'object' || Array.isArray(result) || seen.obs.size === 0) return result;
  const observed: Record<string, string> = {};
  const wrote: Record<string, 'all' | 'status'> = {};
  const echoes: Record<string, string[]> = {};
  const created: string[] = [];
  const versions: Record<string, string> = {};
  let n = 0;
  for (const [source, observation] of seen.obs) {
    if (n >= MAX_OBSERVATIONS) break;
    observed[source] = observation;
    const rv = seen.rvs.get(source);
    if (rv !== undefined) versions[source] = rv.toString();
    const w = seen.wrote.get(source);
    if (w) wrote[source] = w;
    const e = seen.echoes.get(source);
    if (e?.length) echoes[source] = e;
    if (seen.created.has(source)) created.push(source);
    n += 1;
  }
  return {
    ...result,
    observed,
    ...(Object.keys(wrote).length ? { wrote } : {}),
    ...(Object.keys(echoes).length ? { echoes } : {}),
    ...(created.length ? { created } : {}),
    ...(Object.keys(versions).length ? { versions } : {}),
  };
}

/**
 * Wraps every function of an activity object with `observing`. `own`, when given, hears when each step of a workflow
 * starts and ends and of every write it makes, with the id of that workflow (`noteWritten`, watcher/own-writes.ts);
 * outside a Temporal activity it hears nothing. A step that fails hands its writes back as it ends: its workflow
 * never learns of them, so their echoes are news to it.
 */
export function withObservations<A extends Record<string, (...args: never[]) => Promise<unknown>>>(activities: A, own?: OwnWriteLog): A {
  const out: Record<string, unknown> = {};
  for (const [name, fn] of Object.entries(activities)) {
    out[name] = async (...args: never[]) => {
      const abandoned = cancellationSignal();
      const workflowId = own ? runningWorkflowId() : undefined;
      if (own === undefined || workflowId === undefined) return observing(() => fn(...args), undefined, abandoned);
      own.stepStarted(workflowId);
      const writes: { source: string; resourceVersion: string }[] = [];
      let failed = false;
      try {
        return await observing(
          () => fn(...args),
          (source, resourceVersion) => {
            own.note(workflowId, source, resourceVersion);
            writes.push({ source, resourceVersion });
          },
          abandoned,
        );
      } catch (err) {
        failed = true;
        throw err;
      } finally {
        own.stepEnded(workflowId, failed ? writes : []);
      }
    };
  }
  return out as A;
}

/** The running activity's cancellation signal (aborted when Temporal abandons the attempt); undefined outside one. */
function cancellationSignal(): AbortSignal | undefined {
  try {
    return Context.current().cancellationSignal;
  } catch {
    return undefined;
  }
}

/** The workflow the running activity belongs to; undefined outside an activity (tests call activities directly). */
function runningWorkflowId(): string | undefined {
  try {
    return Context.current().info.workflowExecution?.workflowId;
  } catch {
    return undefined;
  }
}

// The Kubernetes client reports to the running step through these hooks.
installStepHooks({ object: noteObject, written: noteWritten, absent: noteAbsent, live: stepLive, signal: stepSignal, firstAttempt });
