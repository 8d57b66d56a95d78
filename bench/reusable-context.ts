// The SDK's reusable V8 context for workflow runs — the executor its worker runs — loaded outside a worker, to look
// at what each run of a workflow bundle holds (bench/run-heap.ts, test/integration/workers/bundle-workflows.test.ts).
// It is the SDK's lib, not its public API: the version is the lockfile's.
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

export interface ReusableContext {
  createWorkflow(options: unknown): Promise<{ activator: { moduleCache: Map<string, unknown> }; dispose(): Promise<void> }>;
  destroy(): Promise<void>;
}

/** The SDK's reusable-context executor (`ReusableVMWorkflowCreator`). */
export function loadReusableContext(): {
  create(bundle: { code: string; filename: string }, timeoutMs: number, activities: Set<string>): Promise<ReusableContext>;
} {
  // The worker registers each bundle's source map for stack traces; the compact bundle's map is not needed here.
  const shared = require('@temporalio/worker/lib/workflow/vm-shared.js') as { globalHandlers: { addWorkflowBundle: (b: unknown) => Promise<void> } };
  shared.globalHandlers.addWorkflowBundle = async () => {};
  return (require('@temporalio/worker/lib/workflow/reusable-vm.js') as { ReusableVMWorkflowCreator: ReturnType<typeof loadReusableContext> })
    .ReusableVMWorkflowCreator;
}

/** What the worker hands the context for a new run of serviceWorkflow (run `i`; fixed times and seed). */
export function newRunOptions(i: number) {
  const now = new Date(0);
  return {
    info: {
      workflowType: 'serviceWorkflow',
      workflowId: `service/default/s${i}`,
      runId: `run-${i}`,
      firstExecutionRunId: `run-${i}`,
      taskQueue: 'tidal',
      namespace: 'default',
      attempt: 1,
      searchAttributes: {},
      typedSearchAttributes: [],
      memo: {},
      historyLength: 1,
      historySize: 0,
      continueAsNewSuggested: false,
      startTime: now,
      runStartTime: now,
      unsafe: { isReplaying: false },
      priority: {},
    },
    randomnessSeed: [1, 2, 3, 4],
    now: 0,
    showStackTraceSources: false,
  };
}
