// The Temporal SDK collects a stack trace for every Promise a workflow creates (a V8 promise hook that builds an Error
// per Promise and maps each frame through the bundle's source map), so the Temporal UI's "Stack Trace" query can show
// where a workflow waits. With workflow code in the main thread (TIDAL_WORKFLOW_THREAD=main) the hook runs for every
// Promise of the process, activities and watcher included. Off, `bench:ready` measured Tidal's CPU per Service
// lower, one Service's head and tail shorter and less memory right after a burst, and the source map's WebAssembly
// parser is never loaded (docs/benchmarks.md). Entity workflows always wait in the same
// place (the loop's condition), so Tidal turns it off by default; TIDAL_WORKFLOW_STACK_TRACES=true keeps it. The SDK
// has no option for this: the switch is its internal global handler, checked here so an SDK that moved it is reported
// (a warning at start), not broken.
import { createRequire } from 'node:module';

interface SdkGlobalHandlers {
  stopPromiseHook: () => void;
  promiseHookInstalled: boolean;
}

const require = createRequire(import.meta.url);

/** Stops the SDK's promise hook for workflow stack traces; false (nothing changed) when the SDK has no such hook. */
export function stopWorkflowStackTraces(): boolean {
  let handlers: Partial<SdkGlobalHandlers> | undefined;
  try {
    handlers = (require('@temporalio/worker/lib/workflow/vm-shared.js') as { globalHandlers?: Partial<SdkGlobalHandlers> }).globalHandlers;
  } catch {
    return false;
  }
  if (!handlers || typeof handlers.stopPromiseHook !== 'function' || typeof handlers.promiseHookInstalled !== 'boolean') return false;
  handlers.stopPromiseHook();
  // Workflows created from now on report stack traces as not enabled instead of reading an empty store.
  handlers.promiseHookInstalled = false;
  return true;
}
