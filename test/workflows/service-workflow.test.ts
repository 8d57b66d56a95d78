// The Service entity workflow on a real Temporal dev server with in-memory activities.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { Worker, WorkflowBundleWithSourceMap } from '@temporalio/worker';
import type { WorkflowHandle } from '@temporalio/client';
import type { ObjectKey } from '../../api/meta.js';
import type { Poke } from '../../api/entity.js';
import type { ChildOutcome, StatusOutcome } from '../../activities/index.js';
import type { EntityInput, EntityState } from '../../workflows/entity.js';
import { bundle, startWorker, testEnv, uniqueName } from '../harness/temporal.js';
import { eventually } from '../harness/wait.js';

/** An in-memory cluster behind reconcileServiceConfiguration: which Services exist, with which uid. */
class FakeCluster {
  services = new Map<string, string>();
  calls: string[] = [];
  delayMs = 0;
  steps: string[] = [];
  activities = {
    reconcileServiceConfiguration: async (key: ObjectKey): Promise<ChildOutcome> => {
      this.calls.push(key.name);
      this.steps.push(`${key.name}:configuration`);
      if (this.delayMs) await new Promise((r) => setTimeout(r, this.delayMs));
      const uid = this.services.get(key.name);
      if (uid === undefined) return { outcome: 'gone' };
      return { outcome: 'applied', action: 'unchanged', ownerUid: uid, ownerGeneration: 1, name: key.name, generation: 1, resourceVersion: '1' };
    },
    reconcileServiceRoute: async (key: ObjectKey): Promise<ChildOutcome> => {
      this.steps.push(`${key.name}:route`);
      const uid = this.services.get(key.name);
      if (uid === undefined) return { outcome: 'gone' };
      return { outcome: 'applied', action: 'created', ownerUid: uid, ownerGeneration: 1, name: key.name, generation: 1, resourceVersion: '1' };
    },
    updateServiceStatus: async (key: ObjectKey): Promise<StatusOutcome> => {
      this.steps.push(`${key.name}:status`);
      return this.services.has(key.name) ? { outcome: 'written', ready: 'Unknown', reason: 'OutOfDate' } : { outcome: 'gone' };
    },
  };
  count(name: string): number {
    return this.calls.filter((c) => c === name).length;
  }
}

const taskQueue = uniqueName('svc-wf');
let env: TestWorkflowEnvironment;
let wfBundle: WorkflowBundleWithSourceMap;
let worker: Worker;
let running: Promise<void>;
const cluster = new FakeCluster();

beforeAll(async () => {
  env = await testEnv();
  wfBundle = await bundle();
  worker = await startWorker(env, wfBundle, taskQueue, cluster.activities);
  running = worker.run();
});

afterAll(async () => {
  worker?.shutdown();
  await running;
  await env?.teardown();
});

async function poke(name: string, p: Poke, options: EntityInput['options'] = {}): Promise<WorkflowHandle> {
  return env.client.workflow.signalWithStart('serviceWorkflow', {
    workflowId: `Service/default/${name}`,
    taskQueue,
    args: [{ kind: 'Service', namespace: 'default', name, options } satisfies EntityInput],
    signal: 'poke',
    signalArgs: [p],
    workflowIdConflictPolicy: 'USE_EXISTING',
  });
}

const state = (h: WorkflowHandle) => h.query<EntityState>('state');

describe('serviceWorkflow', () => {
  it('reconciles once per poke and records a readable activity step in history', async () => {
    const name = uniqueName('one');
    cluster.services.set(name, 'uid-1');
    const h = await poke(name, { source: `Service/default/${name}`, resourceVersion: '1', reason: 'added' });
    await eventually('first reconcile', async () => (await state(h)).totalReconciles === 1);
    const history = await h.fetchHistory();
    const scheduled = history.events?.filter((e) => e.activityTaskScheduledEventAttributes) ?? [];
    expect(scheduled.map((e) => e.activityTaskScheduledEventAttributes?.activityType?.name)).toEqual([
      'reconcileServiceConfiguration',
      'reconcileServiceRoute',
      'updateServiceStatus',
    ]);
    const summaries = scheduled.map((e) => Buffer.from(e.userMetadata?.summary?.data ?? new Uint8Array()).toString());
    expect(summaries).toEqual([
      expect.stringContaining(`apply Configuration default/${name}`),
      expect.stringContaining(`apply Route default/${name}`),
      expect.stringContaining(`update Service default/${name} status`),
    ]);
    const s = await state(h);
    expect(s.uid).toBe('uid-1');
    expect(s.lastReconcile?.summary).toBe('Configuration unchanged; Route created; status written, Ready=Unknown (OutOfDate)');
  });

  it('coalesces a burst of 1,000 pokes into a handful of reconcile passes', async () => {
    const name = uniqueName('burst');
    cluster.services.set(name, 'uid-b');
    cluster.delayMs = 200;
    try {
      // Bound above the burst, so the count is not muddled by continue-as-new.
      const h = await poke(name, { source: `Service/default/${name}`, resourceVersion: '1', reason: 'added' }, { maxPokesPerRun: 5000 });
      for (let batch = 0; batch < 10; batch++) {
        await Promise.all(
          Array.from({ length: 100 }, (_, i) =>
            h.signal('poke', { source: `Service/default/${name}`, resourceVersion: String(batch * 100 + i + 2), reason: 'updated' }),
          ),
        );
      }
      await eventually(
        'burst processed',
        async () => {
          const s = await state(h);
          return s.totalPokes >= 1001 && !s.dirty ? s : undefined;
        },
        60_000,
      );
      // Let any pass that was already running finish, then count.
      await eventually('idle', async () => cluster.count(name) === (await state(h)).totalReconciles);
      const passes = cluster.count(name);
      expect(passes).toBeGreaterThanOrEqual(1);
      expect(passes).toBeLessThanOrEqual(15);
    } finally {
      cluster.delayMs = 0;
    }
  });

  it('completes when its object is gone', async () => {
    const name = uniqueName('gone');
    cluster.services.set(name, 'uid-g');
    const h = await poke(name, { source: `Service/default/${name}`, resourceVersion: '1', reason: 'added' });
    await eventually('first pass', async () => (await state(h)).totalReconciles === 1);
    cluster.services.delete(name);
    await h.signal('poke', { source: `Service/default/${name}`, resourceVersion: '2', reason: 'deleted' });
    await expect(h.result()).resolves.toContain('is gone');
    expect((await h.describe()).status.name).toBe('COMPLETED');
  });

  it('resyncs on a durable timer without any poke', async () => {
    const name = uniqueName('resync');
    cluster.services.set(name, 'uid-r');
    const h = await poke(name, { source: `Service/default/${name}`, resourceVersion: '1', reason: 'added' }, { resyncSeconds: 1 });
    const s = await eventually(
      'two resyncs',
      async () => {
        const st = await state(h);
        return st.totalReconciles >= 3 ? st : undefined;
      },
      30_000,
    );
    expect(s.lastReconcile?.trigger).toBe('resync');
  });

  it('continues as new after its bound, carrying its state', async () => {
    const name = uniqueName('can');
    cluster.services.set(name, 'uid-c');
    const src = `Service/default/${name}`;
    const h = await poke(name, { source: src, resourceVersion: '1', reason: 'added' }, { maxReconcilesPerRun: 2 });
    const firstRun = (await h.describe()).runId;
    await eventually('pass 1', async () => (await state(h)).totalReconciles === 1);
    await h.signal('poke', { source: src, resourceVersion: '2', reason: 'updated' });
    const handle = env.client.workflow.getHandle(`Service/default/${name}`);
    const s = await eventually('new run', async () => {
      const d = await handle.describe();
      if (d.runId === firstRun) return undefined;
      return handle.query<EntityState>('state');
    });
    expect(s.runs).toBe(2);
    expect(s.totalReconciles).toBe(2);
    expect(s.observed).toEqual({}); // these fake steps report no observations
    expect(s.uid).toBe('uid-c');
    // The new run still reacts to pokes.
    await handle.signal('poke', { source: src, resourceVersion: '3', reason: 'updated' });
    await eventually('pass 3', async () => (await handle.query<EntityState>('state')).totalReconciles === 3);
  });

  it('forgets what it saw when the object is recreated with a new uid', async () => {
    const name = uniqueName('recreate');
    cluster.services.set(name, 'uid-old');
    const src = `Service/default/${name}`;
    const h = await poke(name, { source: src, resourceVersion: '10', reason: 'added' });
    await eventually('pass 1', async () => (await state(h)).uid === 'uid-old');
    cluster.services.set(name, 'uid-new');
    await h.signal('poke', { source: src, resourceVersion: '11', reason: 'added' });
    await eventually('new uid', async () => (await state(h)).uid === 'uid-new');
    expect((await state(h)).runs).toBe(1);
  });
});
