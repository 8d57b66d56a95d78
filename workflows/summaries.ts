// One-line summaries of activity outcomes, for the workflow's `lastReconcile` and logs.
import type { ChildOutcome, RevisionGcOutcome, RouteOutcome, StatusOutcome } from '../activities/index.js';
import type { PassResult } from './entity.js';
import { RolloutWakeLeadMs } from '../resources/rollout.js';

export function describeChild(kind: string, o: ChildOutcome): string {
  if (o.outcome === 'notOwned') return `${kind} ${o.name} not owned (NotOwned)`;
  if (o.outcome === 'held') return `${kind} held: ${o.reason}`;
  if (o.outcome === 'applied') return `${kind} ${o.action}`;
  return `${kind} gone`;
}

export function describeStatus(o: StatusOutcome): string {
  return `status ${o.outcome}${o.ready ? `, Ready=${o.ready}${o.reason ? ` (${o.reason})` : ''}` : ''}`;
}

/** Ready is True or False: the object is not waiting on anything (ADR 0006: only then may an idle run end). */
export function isSettled(o: StatusOutcome): boolean {
  return o.ready === 'True' || o.ready === 'False';
}

/** "rollout nginx-00002 26% → 51% (…), next step at 10:04:07.120Z", or '' when the Route has no rollout to tell. */
export function describeRollout(r: RouteOutcome | undefined): string {
  return r !== undefined && r.outcome !== 'gone' && r.rollout ? `rollout ${r.rollout.summary}` : '';
}

/** The durable timer of a Route's next rollout step (ADR 0007), named after the step it waits for. */
export function rolloutWake(id: string, r: RouteOutcome | undefined): Pick<PassResult, 'wake'> {
  if (r === undefined || r.outcome === 'gone' || r.rollout?.nextStepAtMs === undefined) return {};
  // Armed RolloutWakeLeadMs early: the Route's step waits out the rest on its own clock and steps on time.
  const inMs = Math.max(0, (r.rollout.nextStepInMs ?? 0) - RolloutWakeLeadMs);
  return { wake: { atMs: r.rollout.nextStepAtMs, inMs, summary: `rollout of Route ${id}: ${r.rollout.summary}` } };
}

/** Seconds before a Route held for a Revision's `reserve` label looks again (its own relabel does not poke it). */
export const RelabelRecheckSeconds = 1;

/**
 * A pass again shortly when the Route waited only for Revisions it has just made active (RouteOutcome `relabelled`).
 * Its timer is a command runs of earlier releases did not issue: `inForce` is the caller's `patched()` (ADR 0022),
 * asked only when there is a timer to arm.
 */
export function relabelRecheck(r: RouteOutcome | undefined, inForce: () => boolean): Pick<PassResult, 'retryInSeconds'> {
  return r !== undefined && r.outcome !== 'gone' && r.relabelled?.length && inForce() ? { retryInSeconds: RelabelRecheckSeconds } : {};
}

/** The durable timer of a Configuration's next Revision garbage collection (ADR 0008), named after the Revision. */
export function gcWake(id: string, gc: RevisionGcOutcome | undefined): Pick<PassResult, 'wake'> {
  if (gc === undefined || gc.outcome === 'gone' || gc.nextAtMs === undefined) return {};
  const at = new Date(gc.nextAtMs).toISOString().slice(11, 23);
  return {
    wake: { atMs: gc.nextAtMs, inMs: gc.nextInMs ?? 0, summary: `revision GC of Configuration ${id}: ${gc.next ?? ''} collectable at ${at}Z` },
  };
}

/** The earlier of two scheduled passes (a pass reports one schedule; the later one is reported again by that pass). */
export function earliestWake(...wakes: Pick<PassResult, 'wake'>[]): Pick<PassResult, 'wake'> {
  let out: Pick<PassResult, 'wake'> = {};
  for (const w of wakes) if (w.wake && (out.wake === undefined || w.wake.atMs < out.wake.atMs)) out = { wake: w.wake };
  return out;
}

/** "GC: deleted nginx-00001 (beyond max)", or '' when the step did not run or found nothing to say. */
export function describeGc(gc: RevisionGcOutcome | undefined): string {
  if (gc === undefined) return '';
  if (gc.outcome === 'gone') return 'GC: Configuration gone';
  return `GC: ${gc.summary}`;
}
