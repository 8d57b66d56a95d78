// One-line summaries of activity outcomes, for the workflow's `lastReconcile` and logs.
import type { ChildOutcome, StatusOutcome } from '../activities/index.js';

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
