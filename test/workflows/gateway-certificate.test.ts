// The gateway certificate workflow on a real Temporal dev server with a fake activity: it looks again when its
// durable timer fires (no signal needed), and a poke makes it look at once.
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { bundleWorkflowCode, Worker } from '@temporalio/worker';
import type { WorkflowHandle } from '@temporalio/client';
import type { EnsureGatewayCertificateInput, EnsureGatewayCertificateResult } from '../../activities/certificate.js';
import type { GatewayCertificateInput, GatewayCertificateState } from '../../workflows/gateway-certificate.js';
import { testEnv, uniqueName } from '../harness/temporal.js';
import { eventually } from '../harness/wait.js';

const calls: { name: string; at: number }[] = [];
/** Seconds until renewAt the fake reports, per Secret name. */
const renewInSeconds = new Map<string, number>();

const activities = {
  ensureGatewayCertificate: async (input: EnsureGatewayCertificateInput): Promise<EnsureGatewayCertificateResult> => {
    calls.push({ name: input.name, at: Date.now() });
    const renewAt = new Date(Date.now() + (renewInSeconds.get(input.name) ?? 3600) * 1000);
    return {
      action: 'kept',
      notAfter: new Date(renewAt.getTime() + input.renewBeforeHours * 3_600_000).toISOString(),
      renewAt: renewAt.toISOString(),
    };
  },
};

const taskQueue = uniqueName('gateway-cert-wf');
let env: TestWorkflowEnvironment;
let worker: Worker;
let running: Promise<void>;
const handles: WorkflowHandle[] = [];

beforeAll(async () => {
  env = await testEnv();
  const workflowBundle = await bundleWorkflowCode({
    workflowsPath: fileURLToPath(new URL('../../workflows/gateway-certificate.ts', import.meta.url)),
    logger: { log() {}, trace() {}, debug() {}, info() {}, warn() {}, error() {} },
  });
  worker = await Worker.create({ connection: env.nativeConnection, namespace: env.namespace ?? 'default', taskQueue, workflowBundle, activities });
  running = worker.run();
});

afterAll(async () => {
  for (const h of handles) await h.terminate('test done').catch(() => undefined);
  worker?.shutdown();
  await running;
  await env?.teardown();
});

async function start(name: string, extra: Partial<GatewayCertificateInput> = {}): Promise<WorkflowHandle> {
  const h = await env.client.workflow.signalWithStart('gatewayCertificateWorkflow', {
    workflowId: `GatewayCertificate/istio-system/${name}`,
    taskQueue,
    args: [{ namespace: 'istio-system', name, ...extra } satisfies GatewayCertificateInput],
    signal: 'poke',
    signalArgs: [{ source: `Secret/istio-system/${name}`, reason: 'added' }],
    workflowIdConflictPolicy: 'USE_EXISTING',
  });
  handles.push(h);
  return h;
}

const callsOf = (name: string) => calls.filter((c) => c.name === name);

describe('gatewayCertificateWorkflow', () => {
  it('checks again when renewAt comes, on its durable timer, without any signal', async () => {
    const name = uniqueName('tls-timer');
    renewInSeconds.set(name, 2);
    const h = await start(name);
    await eventually('a second check after the timer', async () => callsOf(name).length >= 2, 30_000);
    const [first, second] = callsOf(name);
    expect(second!.at - first!.at).toBeGreaterThanOrEqual(1_500);
    const st = await h.query<GatewayCertificateState>('state');
    expect(st.pokes).toBe(1); // only signalWithStart's
    expect(st.last?.trigger).toBe('timer');
  });

  it('checks at once when poked, long before renewAt', async () => {
    const name = uniqueName('tls-poke');
    renewInSeconds.set(name, 3600);
    const h = await start(name);
    await eventually('the first check', async () => (await h.query<GatewayCertificateState>('state')).totalChecks === 1);
    expect(callsOf(name)).toHaveLength(1);
    await h.signal('poke', { source: `Secret/istio-system/${name}`, resourceVersion: '7', reason: 'updated' });
    const st = await eventually(
      'a check after the poke',
      async () => {
        const s = await h.query<GatewayCertificateState>('state');
        return s.totalChecks === 2 ? s : undefined;
      },
      15_000,
    );
    expect(callsOf(name)).toHaveLength(2);
    expect(st.last?.trigger).toBe(`updated Secret/istio-system/${name}`);
  });

  it('continues as new after maxChecksPerRun, carrying its count', async () => {
    const name = uniqueName('tls-can');
    renewInSeconds.set(name, 0); // clamped to the 1 s minimum sleep
    const h = await start(name, { maxChecksPerRun: 2 });
    const st = await eventually(
      'a continued run',
      async () => {
        const s = await h.query<GatewayCertificateState>('state').catch(() => undefined);
        return s && s.runs >= 2 && s.totalChecks >= 3 ? s : undefined;
      },
      30_000,
    );
    expect(st.checksThisRun).toBeLessThanOrEqual(2);
  });

  it('rejects a validity not longer than the renewal window', async () => {
    const name = uniqueName('tls-bad');
    const h = await start(name, { validityHours: 24, renewBeforeHours: 24 });
    await expect(h.result()).rejects.toThrow();
    expect(callsOf(name)).toHaveLength(0);
  });
});
