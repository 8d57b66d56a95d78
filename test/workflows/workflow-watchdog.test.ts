// The per-call watchdog of main-thread workflows (workers/workflow-watchdog.ts), on a real Temporal dev server: a
// worker as the controller makes it (the SDK's debugMode with its 5 s isolate timeout) enters its workflows with a vm
// timeout on every call — a watchdog thread each — until stopWorkflowWatchdog; after it, workflows still run their
// passes and no call carries a timeout.
import vm from 'node:vm';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { bundleWorkflowCode, Worker, type WorkflowBundleWithSourceMap } from '@temporalio/worker';
import type { EnsureGatewayCertificateInput, EnsureGatewayCertificateResult } from '../../activities/certificate.js';
import type { GatewayCertificateInput } from '../../workflows/gateway-certificate.js';
import { stopWorkflowWatchdog } from '../../workers/workflow-watchdog.js';
import { testEnv, uniqueName } from '../harness/temporal.js';
import { eventually } from '../harness/wait.js';

const checked: string[] = [];
const activities = {
  ensureGatewayCertificate: async (input: EnsureGatewayCertificateInput): Promise<EnsureGatewayCertificateResult> => {
    checked.push(input.name);
    return { action: 'kept', notAfter: new Date(Date.now() + 7_200_000).toISOString(), renewAt: new Date(Date.now() + 3_600_000).toISOString() };
  },
};

/** The `timeout` of every call into a vm context while recording. */
let timeouts: (number | undefined)[] = [];
type RunInContext = (this: vm.Script, context: vm.Context, options?: vm.RunningScriptOptions) => unknown;
const runInContext = Object.getOwnPropertyDescriptor(vm.Script.prototype, 'runInContext')!.value as RunInContext;
let env: TestWorkflowEnvironment;
let workflowBundle: WorkflowBundleWithSourceMap;

beforeAll(async () => {
  vm.Script.prototype.runInContext = function (this: vm.Script, context: vm.Context, options?: vm.RunningScriptOptions) {
    timeouts.push(options?.timeout);
    return runInContext.call(this, context, options);
  };
  env = await testEnv();
  workflowBundle = await bundleWorkflowCode({
    workflowsPath: fileURLToPath(new URL('../../workflows/gateway-certificate.ts', import.meta.url)),
    logger: { log() {}, trace() {}, debug() {}, info() {}, warn() {}, error() {} },
  });
});

afterAll(async () => {
  vm.Script.prototype.runInContext = runInContext;
  await env?.teardown();
});

/** Runs one gateway-certificate workflow to its first check on a main-thread worker; returns the calls' timeouts. */
async function oneCheck(stopWatchdog: boolean): Promise<{ stopped: boolean | undefined; timeouts: (number | undefined)[] }> {
  const taskQueue = uniqueName('watchdog');
  const worker = await Worker.create({
    connection: env.nativeConnection,
    namespace: env.namespace ?? 'default',
    taskQueue,
    workflowBundle,
    activities,
    // As workers/worker.ts makes it: workflow code in the main thread with the SDK's 5 s isolate timeout (an option
    // WorkerOptions' type leaves out, passed through as the controller passes it).
    ...{ debugMode: true, isolateExecutionTimeout: '5s' },
  });
  const stopped = stopWatchdog ? stopWorkflowWatchdog(worker) : undefined;
  const running = worker.run();
  const name = uniqueName('cert');
  timeouts = [];
  const h = await env.client.workflow.signalWithStart('gatewayCertificateWorkflow', {
    workflowId: `GatewayCertificate/istio-system/${name}`,
    taskQueue,
    args: [{ namespace: 'istio-system', name } satisfies GatewayCertificateInput],
    signal: 'poke',
    signalArgs: [{ source: `Secret/istio-system/${name}`, reason: 'added' }],
    workflowIdConflictPolicy: 'USE_EXISTING',
  });
  try {
    await eventually('the workflow checked its certificate', async () => checked.includes(name), 30_000);
    return { stopped, timeouts: [...timeouts] };
  } finally {
    await h.terminate('test done').catch(() => undefined);
    worker.shutdown();
    await running;
  }
}

describe('stopWorkflowWatchdog', () => {
  it("leaves the SDK's 5 s timeout on every call into a workflow when not stopped (what the switch removes)", async () => {
    const { timeouts } = await oneCheck(false);
    expect(timeouts.length).toBeGreaterThan(0);
    expect(new Set(timeouts)).toEqual(new Set([5000]));
  });

  it('once stopped, the workflow still runs its pass and no call into it carries a timeout (no watchdog thread)', async () => {
    const { stopped, timeouts } = await oneCheck(true);
    expect(stopped).toBe(true);
    expect(timeouts.length).toBeGreaterThan(0);
    expect(timeouts.filter((t) => t !== undefined)).toEqual([]);
  });

  it('reports false and changes nothing for a worker whose workflows run in the SDK worker thread', async () => {
    const worker = await Worker.create({
      connection: env.nativeConnection,
      namespace: env.namespace ?? 'default',
      taskQueue: uniqueName('watchdog-threaded'),
      workflowBundle,
      activities,
    });
    expect(stopWorkflowWatchdog(worker)).toBe(false);
    await worker.runUntil(Promise.resolve());
  });
});
