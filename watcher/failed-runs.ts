// Runs that ended other than by completing — failed (a run that no longer replays on new code fails, ADR 0002), timed
// out or terminated — found in Temporal's visibility store, so that the leader starts their objects' workflows again.
// A leader change no longer re-pokes every object (ADR 0024), so this is how a run that failed on its first task on
// new code, or on an older replica in the middle of a roll, gets a fresh run without waiting for the periodic sweep.
import type { Client } from '@temporalio/client';
import { parseEntityWorkflowId, type EntityKind } from '../api/entity.js';
import type { ObjectKey } from '../api/meta.js';

/** The visibility query for runs of `taskQueue` that ended other than by completing at or after `since`. */
export function failedRunsQuery(taskQueue: string, since: Date): string {
  return (
    `TaskQueue = "${taskQueue}" AND CloseTime >= "${since.toISOString()}" AND ` +
    `(ExecutionStatus = "Failed" OR ExecutionStatus = "TimedOut" OR ExecutionStatus = "Terminated")`
  );
}

/** The entity objects whose runs ended so since `since`, each once. */
export async function failedRunObjects(client: Client, taskQueue: string, since: Date): Promise<{ kind: EntityKind; key: ObjectKey }[]> {
  const found = new Map<string, { kind: EntityKind; key: ObjectKey }>();
  for await (const run of client.workflow.list({ query: failedRunsQuery(taskQueue, since) })) {
    const target = parseEntityWorkflowId(run.workflowId);
    if (target) found.set(run.workflowId, target);
  }
  return [...found.values()];
}
