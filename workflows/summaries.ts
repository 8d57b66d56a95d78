// One-line summaries of activity outcomes, for the workflow's `lastReconcile` and logs.
import type { ChildOutcome, RouteOutcome, StatusOutcome } from '../activities/index.js';
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
