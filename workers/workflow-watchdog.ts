// With workflow code in the main thread (TIDAL_WORKFLOW_THREAD=main) the Temporal SDK enters the workflows' V8
// context through node:vm with a `timeout` on every call — several per activation, ~50 per Service created — and Node
// starts a watchdog thread for each such call and joins it afterwards. In the controller that cost the main thread
// several times what the call itself took, most of it waiting for the new thread, more on busy cores
// (`bench:ready`, docs/benchmarks.md). What the watchdog buys
// is small: a workflow task stuck in a synchronous loop would fail after 5 s, but every retry of that task would still
// stall the whole process (watcher, webhook, Lease renewals) for those 5 s. Tidal's workflows are its own code, with
// no unbounded loop, so Tidal drops the per-call watchdog by default and a wedged process is its liveness probe's to
// restart (workers/health.ts); TIDAL_WORKFLOW_WATCHDOG=true keeps it. The SDK has no option for this (its debugMode
// passes a timeout too): the switch is its workflow creator's timeout, read when each workflow is created, checked
// here so an SDK that moved it is reported (a warning at start), not broken.
import type { Worker } from '@temporalio/worker';

interface SdkWorkflowCreator {
  isolateExecutionTimeoutMs?: number;
}

/**
 * Stops the SDK from passing a vm timeout (and so starting a watchdog thread) on every call into the workflows made
 * from now on; false (nothing changed) when the worker has no main-thread workflow creator with such a timeout.
 */
export function stopWorkflowWatchdog(worker: Worker): boolean {
  const creator = (worker as unknown as { workflowCreator?: SdkWorkflowCreator }).workflowCreator;
  if (!creator || typeof creator.isolateExecutionTimeoutMs !== 'number') return false;
  // node:vm starts no watchdog when the timeout is undefined.
  creator.isolateExecutionTimeoutMs = undefined;
  return true;
}
