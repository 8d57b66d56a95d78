// The Service entity workflow on a real Temporal dev server with in-memory activities.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { historySteps } from '../harness/history.js';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { Worker, WorkflowBundleWithSourceMap } from '@temporalio/worker';
import type { WorkflowHandle } from '@temporalio/client';
import type { ObjectKey } from '../../api/meta.js';
import type { Poke } from '../../api/entity.js';
import type { ChildOutcome, Observed, StatusOutcome } from '../../activities/index.js';
import type { EntityInput, EntityState } from '../../workflows/entity.js';
import { bundle, startWorker, testEnv, uniqueName } from '../harness/temporal.js';
import { eventually } from '../harness/wait.js';
import { Registry } from 'prom-client';
import type { Logger } from 'pino';
import { Poker } from '../../watcher/poker.js';

const quietLog = { warn() {}, info() {}, debug() {}, error() {}, child: () => quietLog } as unknown as Logger;

/**
 * An in-memory cluster behind the Service's steps: which Services exist, with which uid, and the spec hashes the
 * steps report having seen of the Service and its Configuration (as activities/observe.ts would).
 */
class FakeCluster {
  services = new Map<string, string>();
  serviceSpec = new Map<string, string>();
  configurationSpec = new Map<string, string>();
  calls: string[] = [];
  delayMs = 0;
  steps: string[] = [];
  activities = {
    reconcileServiceConfiguration: async (key: ObjectKey): Promise<ChildOutcome & Observed> => {
      this.calls.push(key.name);
      this.steps.push(`${key.name}:configuration`);
      if (this.delayMs) await new Promise((r) => setTimeout(r, this.delayMs));
      const uid = this.services.get(key.name);
      if (uid === undefined) return { outcome: 'gone' };
      const observed = this.observed(key.name, uid);
      return {
        outcome: 'applied',
        action: 'unchanged',
        ownerUid: uid,
        ownerGeneration: 1,
        name: key.name,
        generation: 1,
        resourceVersion: '1',
        observed,
      };
    },
    reconcileServiceRoute: async (key: ObjectKey): Promise<ChildOutcome> => {
      this.steps.push(`${key.name}:route`);
      const uid = this.services.get(key.name);
      if (uid === undefined) return { outcome: 'gone' };
      return { outcome: 'applied', action: 'created', ownerUid: uid, ownerGeneration: 1, name: key.name, generation: 1, resourceVersion: '1' };
    },
    updateServiceStatus: async (key: ObjectKey, expectSpec?: string): Promise<StatusOutcome & Observed> => {
      const uid = this.services.get(key.name);
      if (uid === undefined) return { outcome: 'gone' };
      const stale = expectSpec !== undefined && expectSpec !== (this.serviceSpec.get(key.name) ?? 'svc1');
      this.steps.push(`${key.name}:status${stale ? ' (stale)' : ''}`);
      if (stale) return { outcome: 'stale', observed: this.observed(key.name, uid) };
      return { outcome: 'written', ready: 'Unknown', reason: 'OutOfDate', observed: this.observed(key.name, uid) };
    },
  };
  /** What a step saw: uid, spec hash and status hash of the Service and of its Configuration. */
  observed(name: string, uid: string): Record<string, string> {
    return {
      [`Service/default/${name}`]: `${uid} ${this.serviceSpec.get(name) ?? 'svc1'} st`,
      [`Configuration/default/${name}`]: `cfg-${uid} ${this.configurationSpec.get(name) ?? 'spec1'} status1`,
    };
  }
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
    const steps = historySteps(history);
    expect(steps.map((st) => st.type)).toEqual(['reconcileServiceConfiguration', 'reconcileServiceRoute', 'updateServiceStatus']);
    expect(steps.map((st) => st.summary)).toEqual([
      expect.stringContaining(`apply Configuration default/${name}`),
      expect.stringContaining(`apply Route default/${name}`),
      expect.stringContaining(`update Service default/${name} status`),
    ]);
    const s = await state(h);
    expect(s.uid).toBe('uid-1');
    expect(s.lastReconcile?.summary).toBe('Configuration unchanged; Route created; status written, Ready=Unknown (OutOfDate)');
  });

  it('coalesces a burst of 1,000 pokes, delivered by the watcher’s poker, into a handful of reconcile passes', async () => {
    const name = uniqueName('burst');
    cluster.services.set(name, 'uid-b');
    cluster.delayMs = 200;
    const poker = new Poker(
      env.client,
      { taskQueue, concurrency: 8, maxBackoffMs: 1000, workflowOptions: { maxPokesPerRun: 5000 } },
      quietLog,
      new Registry(),
    );
    try {
      // 1,000 changes from 50 sources, as fast as they come: every signal the poker sends lands while a pass runs.
      for (let i = 0; i < 1000; i++) {
        poker.poke(
          { kind: 'Service', key: { namespace: 'default', name } },
          { source: `Configuration/default/c${i % 50}`, resourceVersion: String(i + 1), reason: 'updated' },
        );
        if (i % 10 === 9) await new Promise((r) => setTimeout(r, 5));
      }
      const h = env.client.workflow.getHandle(`Service/default/${name}`);
      const s = await eventually(
        'burst processed',
        async () => {
          const st = await state(h);
          return poker.backlog === 0 && !st.dirty && !st.inPass ? st : undefined;
        },
        60_000,
      );
      expect(s.totalReconciles).toBeGreaterThanOrEqual(1);
      expect(s.totalReconciles).toBeLessThanOrEqual(15);
      // The last change of every source reached the workflow, and the meter kept every workflow task whole: the
      // server closes a task during which more than 100 events were buffered (ADR 0004).
      const signalled = (await h.fetchHistory()).events ?? [];
      const lastOf = new Map<string, string>();
      for (const e of signalled) {
        const batch = e.workflowExecutionSignaledEventAttributes?.input?.payloads?.[0]?.data;
        if (batch) for (const p of JSON.parse(Buffer.from(batch).toString()) as Poke[]) lastOf.set(p.source, p.resourceVersion ?? '');
      }
      expect(lastOf.size).toBe(50);
      for (let c = 0; c < 50; c++) expect(lastOf.get(`Configuration/default/c${c}`)).toBe(String(951 + c));
      expect(signalled.filter((e) => e.workflowTaskFailedEventAttributes)).toEqual([]);
    } finally {
      await poker.close();
      cluster.delayMs = 0;
    }
  });

  it('passes on a child’s status change with the status step alone, and on a child’s spec change with every step', async () => {
    const name = uniqueName('status-only');
    cluster.services.set(name, 'uid-so');
    const h = await poke(name, { source: `Service/default/${name}`, resourceVersion: '1', reason: 'added' });
    await eventually('first pass', async () => (await state(h)).totalReconciles === 1);
    const cfg = `Configuration/default/${name}`;
    const stepsOf = () => cluster.steps.filter((x) => x.startsWith(`${name}:`)).map((x) => x.slice(name.length + 1));
    expect(stepsOf()).toEqual(['configuration', 'route', 'status']);

    await h.signal('poke', { source: cfg, reason: 'updated', token: 'd.spec1.status2' });
    const s2 = await eventually('status-only pass', async () => ((await state(h)).totalReconciles === 2 ? state(h) : undefined));
    expect(s2.statusOnly).toBe(true);
    expect(stepsOf()).toEqual(['configuration', 'route', 'status', 'status']);

    await h.signal('poke', { source: cfg, reason: 'updated', token: 'd.spec2.status2' });
    const s3 = await eventually('full pass', async () => ((await state(h)).totalReconciles === 3 ? state(h) : undefined));
    expect(s3.statusOnly).toBe(false);
    expect(stepsOf()).toEqual(['configuration', 'route', 'status', 'status', 'configuration', 'route', 'status']);

    // A deletion of the child is never a status change, whatever token came before.
    await h.signal('poke', { source: cfg, reason: 'deleted' });
    const s4 = await eventually('full pass after deletion', async () => ((await state(h)).totalReconciles === 4 ? state(h) : undefined));
    expect(s4.statusOnly).toBe(false);
  });

  it('a status-only pass never reports a Service spec it did not apply, nor covers a child spec it only read', async () => {
    const name = uniqueName('stale');
    cluster.services.set(name, 'uid-st');
    const h = await poke(name, { source: `Service/default/${name}`, resourceVersion: '1', reason: 'added' });
    await eventually('first pass', async () => (await state(h)).totalReconciles === 1);
    const cfg = `Configuration/default/${name}`;
    const stepsOf = () => cluster.steps.filter((x) => x.startsWith(`${name}:`)).map((x) => x.slice(name.length + 1));

    // The Service's spec changed, but a child's status poke comes first: the status step finds the spec moved on,
    // writes nothing, and the pass applies the children.
    cluster.serviceSpec.set(name, 'svc2');
    await h.signal('poke', { source: cfg, reason: 'updated', token: 'd.spec1.status2' });
    await eventually('second pass', async () => (await state(h)).totalReconciles === 2);
    expect(stepsOf()).toEqual(['configuration', 'route', 'status', 'status (stale)', 'configuration', 'route', 'status']);
    // The Service's own poke for that spec is then covered: the pass applied it.
    await h.signal('poke', { source: `Service/default/${name}`, resourceVersion: '2', reason: 'updated', token: 's.svc2' });
    await eventually('covered', async () => ((await state(h)).ignoredPokes >= 1 ? true : undefined));

    // A status-only pass that happens to read the Configuration's new spec does not cover it: its poke brings a
    // full pass that applies the Configuration again.
    cluster.configurationSpec.set(name, 'spec9');
    await h.signal('poke', { source: cfg, reason: 'updated', token: 'd.spec1.status3' });
    const s3 = await eventually('status-only pass', async () => ((await state(h)).totalReconciles === 3 ? state(h) : undefined));
    expect(s3.statusOnly).toBe(true);
    expect(s3.observed[cfg]).toBe(`cfg-uid-st - status1`);
    await h.signal('poke', { source: cfg, reason: 'updated', token: 'd.spec9.status1' });
    const s4 = await eventually('full pass', async () => ((await state(h)).totalReconciles === 4 ? state(h) : undefined));
    expect(s4.statusOnly).toBe(false);
    expect(stepsOf().slice(-4)).toEqual(['status', 'configuration', 'route', 'status']);
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
    expect(s.observed).toEqual(cluster.observed(name, 'uid-c')); // carried across
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
