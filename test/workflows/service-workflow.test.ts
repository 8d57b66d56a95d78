// The Service entity workflow on a real Temporal dev server with in-memory activities.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { caughtUpWithHistory, historySteps, pendingTimers } from '../harness/history.js';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { Worker, WorkflowBundleWithSourceMap } from '@temporalio/worker';
import type { WorkflowHandle } from '@temporalio/client';
import type { ObjectKey } from '../../api/meta.js';
import type { Poke } from '../../api/entity.js';
import type { ChildOutcome, Observed, RevisionGcOutcome, RevisionOutcome, RouteOutcome, StatusOutcome } from '../../activities/index.js';
import type { EntityInput, EntityState } from '../../workflows/entity.js';
import { createCombinedActivities, type PartSteps } from '../../activities/combined.js';
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
  /** Service name → the name of a foreign Service holding its Route's placeholder name. */
  foreignPlaceholder = new Map<string, string>();
  /** Service name → the status hash of its Revision as the Configuration's status step and then the Route's step read it. */
  revisionStatus = new Map<string, [string, string]>();
  /** Service name → the rollout steps still to take, one per Route step, `stepMs` apart (RouteOutcome.rollout). */
  rollout = new Map<string, { left: number; stepMs: number }>();
  /** Service name → the generation of the KIngress its Route step applies. */
  ingressGeneration = new Map<string, number>();
  calls: string[] = [];
  /** Service names whose next pass creates their Revision (it exists otherwise). */
  newRevision = new Set<string>();
  /** Service names whose new Revision the cache shows settled when their pass waits for it. */
  settles = new Set<string>();
  /** Service names whose spec moves on (to `svc2`) while their pass waits. */
  specMovesDuringWait = new Set<string>();
  /** Service names whose Configuration step fails (the API server away), and how often it was tried. */
  failing = new Set<string>();
  failedAttempts = new Map<string, number>();
  delayMs = 0;
  steps: string[] = [];
  activities = {
    reconcileServiceConfiguration: async (key: ObjectKey): Promise<ChildOutcome & Observed> => {
      this.calls.push(key.name);
      this.steps.push(`${key.name}:configuration`);
      if (this.delayMs) await new Promise((r) => setTimeout(r, this.delayMs));
      if (this.failing.has(key.name)) {
        this.failedAttempts.set(key.name, (this.failedAttempts.get(key.name) ?? 0) + 1);
        throw new Error('connect ECONNREFUSED 127.0.0.1:6443');
      }
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
    // The Configuration's and the Route's own reconciles run in the Service's pass (ADR 0005).
    reconcileConfigurationRevision: async (key: ObjectKey): Promise<RevisionOutcome> => {
      this.steps.push(`${key.name}:revision`);
      const uid = this.services.get(key.name);
      if (uid === undefined) return { outcome: 'gone' };
      const outcome = this.newRevision.delete(key.name) ? 'created' : 'exists';
      return { outcome, uid: `cfg-${uid}`, generation: 1, revision: `${key.name}-00001` };
    },
    updateConfigurationStatus: async (key: ObjectKey): Promise<StatusOutcome & Observed> => {
      this.steps.push(`${key.name}:configuration status`);
      if (!this.services.has(key.name)) return { outcome: 'gone' };
      const rev = this.revisionStatus.get(key.name);
      return {
        outcome: 'unchanged',
        ready: 'True',
        ...(rev ? { observed: { [`Revision/default/${key.name}-00001`]: `rev-uid rspec ${rev[0]}` } } : {}),
      };
    },
    reconcileRoute: async (key: ObjectKey, opts?: { reportNotOwned?: boolean }): Promise<RouteOutcome> => {
      this.steps.push(`${key.name}:program route`);
      if (!this.services.has(key.name)) return { outcome: 'gone' };
      const foreign = this.foreignPlaceholder.get(key.name);
      if (foreign && !opts?.reportNotOwned) throw new Error('a Service pass must ask for NotOwned to be reported');
      const rev = this.revisionStatus.get(key.name);
      const ro = this.rollout.get(key.name);
      if (ro && ro.left > 0) ro.left -= 1;
      const next = Date.now() + (ro?.stepMs ?? 0);
      return {
        ...(ro && ro.left > 0 ? { rollout: { summary: `${ro.left} steps left`, nextStepAtMs: next, nextStepInMs: ro.stepMs } } : {}),
        outcome: 'unchanged',
        ingress: 'unchanged',
        ready: foreign ? 'False' : 'True',
        ...(foreign ? { notOwned: `Service ${foreign}` } : {}),
        ...(rev ? { observed: { [`Revision/default/${key.name}-00001`]: `rev-uid rspec ${rev[1]}` } } : {}),
        // The KIngress this step applies (its spec moves with each pass), as activities/observe.ts reports a write.
        ...(this.ingressGeneration.has(key.name)
          ? {
              observed: { [`Ingress/default/${key.name}`]: `ing-uid ispec${this.ingressGeneration.get(key.name)} istatus` },
              wrote: { [`Ingress/default/${key.name}`]: 'all' as const },
            }
          : {}),
      };
    },
    collectRevisions: async (key: ObjectKey): Promise<RevisionGcOutcome> => {
      this.steps.push(`${key.name}:gc`);
      if (!this.services.has(key.name)) return { outcome: 'gone' };
      return { outcome: 'nothing', deleted: [], summary: 'no reserve Revision' };
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
  worker = await startWorker(env, wfBundle, taskQueue, {
    ...cluster.activities,
    // A cache in which a new Revision settles at once for the names in `settles`.
    ...createCombinedActivities(cluster.activities as unknown as PartSteps, 1000, {
      until: async (_type, _ns, labels) => {
        const name = labels['serving.knative.dev/configuration'] ?? '';
        if (cluster.specMovesDuringWait.delete(name)) cluster.serviceSpec.set(name, 'svc2');
        return cluster.settles.has(name);
      },
    }),
  });
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

/** The run's retry timers have fired and been looked at: only the idle (60 s) and resync timers are left. */
const retryTimersFired = (h: WorkflowHandle) =>
  eventually(
    'retry timer fired and looked at',
    async () => {
      const history = await h.fetchHistory();
      return caughtUpWithHistory(history) && pendingTimers(history).every((t) => t.seconds >= 60) ? true : undefined;
    },
    30_000,
  );
const FULL_PASS = ['configuration', 'revision', 'configuration status', 'route', 'program route', 'status', 'gc'];
const STATUS_ONLY_PASS = ['configuration status', 'program route', 'status', 'gc'];
/** A scheduled pass collects first (a Revision may be falling due, ADR 0008), then passes status-only. */
const SCHEDULED_PASS = ['gc', 'configuration status', 'program route', 'status'];

describe('serviceWorkflow', () => {
  it('reconciles once per poke and records a readable activity step in history', async () => {
    const name = uniqueName('one');
    cluster.services.set(name, 'uid-1');
    const h = await poke(name, { source: `Service/default/${name}`, resourceVersion: '1', reason: 'added' });
    await eventually('first reconcile', async () => (await state(h)).totalReconciles === 1);
    const history = await h.fetchHistory();
    const steps = historySteps(history);
    // The six steps of a full pass are one local activity (activities/combined.ts), named part by part; the
    // collection of old Revisions is a step of its own.
    expect(steps.map((st) => [st.type, st.local])).toEqual([
      ['reconcileServiceFull', true],
      ['collectRevisions', true],
    ]);
    expect(steps.map((st) => st.summary)).toEqual([
      `apply Configuration default/${name}, ensure its Revision, update its status, apply Route default/${name}, program it, update Service default/${name} status; ` +
        'a Revision it creates is waited for, then the children’s status',
      expect.stringContaining(`collect Revisions of Configuration default/${name} (config-gc)`),
    ]);
    // Its parts ran in upstream's order.
    expect(cluster.steps.filter((x) => x.startsWith(`${name}:`)).map((x) => x.slice(name.length + 1))).toEqual(FULL_PASS);
    const s = await state(h);
    expect(s.uid).toBe('uid-1');
    expect(s.lastReconcile?.summary).toBe(
      `Configuration unchanged; Revision ${name}-00001 exists; Configuration status unchanged, Ready=True; Route created; Route: Ingress unchanged, status unchanged, Ready=True; status written, Ready=Unknown (OutOfDate); GC: no reserve Revision`,
    );
  });

  it('a pass that created its Revision waits for it and runs the status pass in the same step: one pass, the later status', async () => {
    const name = uniqueName('settles');
    cluster.services.set(name, 'uid-w');
    cluster.newRevision.add(name);
    cluster.settles.add(name);
    const h = await poke(name, { source: `Service/default/${name}`, resourceVersion: '1', reason: 'added' });
    const s = await eventually('first pass', async () => ((await state(h)).totalReconciles === 1 ? state(h) : undefined));
    const stepsOf = () => cluster.steps.filter((x) => x.startsWith(`${name}:`)).map((x) => x.slice(name.length + 1));
    expect(stepsOf()).toEqual([...FULL_PASS.slice(0, -1), 'configuration status', 'program route', 'status', 'gc']);
    expect(historySteps(await h.fetchHistory()).map((st) => st.type)).toEqual(['reconcileServiceFull', 'collectRevisions']);
    expect(s.lastReconcile?.summary).toContain('; new Revision settled: Configuration status unchanged, Ready=True; Route: ');
    // A Revision whose readiness the cache does not show in time: the full pass alone, as before.
    const other = uniqueName('waits');
    cluster.services.set(other, 'uid-x');
    cluster.newRevision.add(other);
    const h2 = await poke(other, { source: `Service/default/${other}`, resourceVersion: '1', reason: 'added' });
    const s2 = await eventually('first pass', async () => ((await state(h2)).totalReconciles === 1 ? state(h2) : undefined));
    expect(s2.lastReconcile?.summary).not.toContain('new Revision settled');
    expect(cluster.steps.filter((x) => x.startsWith(`${other}:`)).map((x) => x.slice(other.length + 1))).toEqual(FULL_PASS);
  });

  it('a Service whose spec moved on during the wait keeps its status, and the spec change brings a full pass', async () => {
    const name = uniqueName('moved');
    cluster.services.set(name, 'uid-m');
    cluster.newRevision.add(name);
    cluster.settles.add(name);
    cluster.specMovesDuringWait.add(name);
    const h = await poke(name, { source: `Service/default/${name}`, resourceVersion: '1', reason: 'added' });
    const s = await eventually('first pass', async () => ((await state(h)).totalReconciles === 1 ? state(h) : undefined));
    expect(s.lastReconcile?.summary).toContain('; new Revision settled: Configuration status unchanged, Ready=True; Route: ');
    expect(s.lastReconcile?.summary).toContain('Service spec moved on');
    // The status part read the new spec but applied nothing for it: the Service's own poke is news.
    await h.signal('poke', { source: `Service/default/${name}`, resourceVersion: '2', reason: 'updated', token: 's.svc2' });
    const s2 = await eventually('full pass', async () => ((await state(h)).totalReconciles === 2 ? state(h) : undefined));
    expect(s2.statusOnly).toBe(false);
    const stepsOf = cluster.steps.filter((x) => x.startsWith(`${name}:`)).map((x) => x.slice(name.length + 1));
    expect(stepsOf.slice(-FULL_PASS.length)).toEqual(FULL_PASS);
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

  it('passes on a child’s status change with the status steps alone, and on a child’s spec change with every step', async () => {
    const name = uniqueName('status-only');
    cluster.services.set(name, 'uid-so');
    const h = await poke(name, { source: `Service/default/${name}`, resourceVersion: '1', reason: 'added' });
    await eventually('first pass', async () => (await state(h)).totalReconciles === 1);
    const cfg = `Configuration/default/${name}`;
    const stepsOf = () => cluster.steps.filter((x) => x.startsWith(`${name}:`)).map((x) => x.slice(name.length + 1));
    expect(stepsOf()).toEqual(FULL_PASS);

    await h.signal('poke', { source: cfg, reason: 'updated', token: 'd.spec1.status2' });
    const s2 = await eventually('status-only pass', async () => ((await state(h)).totalReconciles === 2 ? state(h) : undefined));
    expect(s2.statusOnly).toBe(true);
    expect(stepsOf()).toEqual([...FULL_PASS, ...STATUS_ONLY_PASS]);
    // The three steps between a child's readiness and the Service's are one local activity: one marker in history.
    const statusPass = historySteps(await h.fetchHistory()).slice(2);
    expect(statusPass.map((st) => [st.type, st.local])).toEqual([
      ['reconcileServiceStatus', true],
      ['collectRevisions', true],
    ]);
    expect(statusPass[0]?.summary).toBe(
      `update Configuration default/${name} status, program Route default/${name}, update Service default/${name} status`,
    );

    await h.signal('poke', { source: cfg, reason: 'updated', token: 'd.spec2.status2' });
    const s3 = await eventually('full pass', async () => ((await state(h)).totalReconciles === 3 ? state(h) : undefined));
    expect(s3.statusOnly).toBe(false);
    expect(stepsOf()).toEqual([...FULL_PASS, ...STATUS_ONLY_PASS, ...FULL_PASS]);

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
    expect(stepsOf()).toEqual([...FULL_PASS, 'configuration status', 'program route', 'status (stale)', ...FULL_PASS]);
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
    expect(stepsOf().slice(-8)).toEqual(['gc', ...FULL_PASS]);
  });

  it('a placeholder name held by a foreign object: the Service status is still written and the pass is retried on a timer', async () => {
    const name = uniqueName('notowned');
    cluster.services.set(name, 'uid-no');
    cluster.foreignPlaceholder.set(name, `${name}-foreign`);
    const h = await poke(name, { source: `Service/default/${name}`, resourceVersion: '1', reason: 'added' });
    const stepsOf = () => cluster.steps.filter((x) => x.startsWith(`${name}:`)).map((x) => x.slice(name.length + 1));
    // No poke announces that the foreign object went: the workflow passes again on its own, with backoff.
    const s = await eventually('retried', async () => ((await state(h)).totalReconciles >= 2 ? state(h) : undefined), 30_000);
    expect(s.lastReconcile?.trigger).toBe('retry');
    expect(stepsOf().slice(0, 7)).toEqual(FULL_PASS);
    expect(s.lastReconcile?.summary).toContain(`Service ${name}-foreign not owned (retrying)`);
    // Once it is gone, the retries stop.
    cluster.foreignPlaceholder.delete(name);
    const settled = await eventually(
      'settled',
      async () => {
        const st = await state(h);
        return st.lastReconcile?.summary.includes('not owned') ? undefined : st;
      },
      30_000,
    );
    // The retry timer still pending when it settled fires and finds a pass ran since: only the idle (60 s) and
    // resync timers are left, and no pass followed.
    await retryTimersFired(h);
    expect((await state(h)).totalReconciles).toBe(settled.totalReconciles);
  });

  it('a step still failing after three attempts fails the pass: the retry waits on a durable timer, and news passes at once', async () => {
    const name = uniqueName('failing');
    cluster.services.set(name, 'uid-f');
    cluster.failing.add(name);
    const h = await poke(name, { source: `Service/default/${name}`, resourceVersion: '1', reason: 'added', token: 's.svc1' });
    // Two failed passes: three attempts each, the second after the first's 4 s timer; the next waits 8 s.
    const failed = await eventually('two failed passes', async () => ((await state(h)).failedPasses >= 2 ? state(h) : undefined), 30_000);
    expect(failed.totalReconciles).toBe(0);
    expect(failed.lastFailure?.message).toBe('reconcileServiceFull: connect ECONNREFUSED 127.0.0.1:6443');
    expect(cluster.failedAttempts.get(name)).toBe(6);
    const history = await h.fetchHistory();
    expect(pendingTimers(history).map((t) => t.seconds)).toContain(8);
    // The API server is back and a change comes: the pass runs for it now, not when the timer fires.
    cluster.failing.delete(name);
    cluster.serviceSpec.set(name, 'svc2');
    await poke(name, { source: `Service/default/${name}`, resourceVersion: '2', reason: 'updated', token: 's.svc2' });
    const passed = await eventually('passed', async () => ((await state(h)).totalReconciles >= 1 ? state(h) : undefined), 30_000);
    expect(passed.lastReconcile?.trigger).toBe(`updated Service/default/${name}`);
    expect(passed.failedPasses).toBe(0);
    // The 8 s timer then fires and finds a pass ran since: nothing more.
    await retryTimersFired(h);
    expect((await state(h)).totalReconciles).toBe(passed.totalReconciles);
  });

  it('a gradual rollout: each step is a status-only pass on a durable timer, and the summary tells the rollout (ADR 0007)', async () => {
    const name = uniqueName('rollout');
    cluster.services.set(name, 'uid-ro');
    cluster.rollout.set(name, { left: 4, stepMs: 700 });
    const h = await poke(name, { source: `Service/default/${name}`, resourceVersion: '1', reason: 'added' });
    const stepsOf = () => cluster.steps.filter((x) => x.startsWith(`${name}:`)).map((x) => x.slice(name.length + 1));
    const mid = await eventually('second step', async () => ((await state(h)).totalReconciles === 2 ? state(h) : undefined), 30_000);
    expect(mid.lastReconcile?.trigger).toBe('scheduled');
    expect(mid.lastReconcile?.summary).toContain('Route: rollout 2 steps left, Ingress unchanged');
    await eventually('rollout done', async () => (cluster.rollout.get(name)?.left === 0 ? true : undefined), 30_000);
    // The last step's pass scheduled nothing: no step timer is left to bring another pass.
    await eventually(
      'last step passed',
      async () => {
        const history = await h.fetchHistory();
        return (await state(h)).totalReconciles === 4 && caughtUpWithHistory(history) ? true : undefined;
      },
      30_000,
    );
    expect(pendingTimers(await h.fetchHistory()).filter((t) => t.summary !== '')).toEqual([]);
    expect(stepsOf()).toEqual([...FULL_PASS, ...SCHEDULED_PASS, ...SCHEDULED_PASS, ...SCHEDULED_PASS]);
    expect((await state(h)).wake).toBeUndefined();
  });

  it('two steps that read a Revision in different states cover neither: its poke brings another pass (ADR 0005)', async () => {
    const name = uniqueName('two-reads');
    cluster.services.set(name, 'uid-tr');
    const rev = `Revision/default/${name}-00001`;
    // The Revision turned Ready between the Configuration's status step and the Route's step.
    cluster.revisionStatus.set(name, ['deploying', 'ready']);
    const h = await poke(name, { source: `Service/default/${name}`, resourceVersion: '1', reason: 'added' });
    const s1 = await eventually('first pass', async () => ((await state(h)).totalReconciles === 1 ? state(h) : undefined));
    expect(s1.observed[rev]).toBe('rev-uid rspec -');
    // Now both steps read it Ready.
    cluster.revisionStatus.set(name, ['ready', 'ready']);
    await h.signal('poke', { source: rev, reason: 'updated', token: 'd.rspec.ready' });
    const s2 = await eventually('a second pass for the Ready Revision', async () => ((await state(h)).totalReconciles === 2 ? state(h) : undefined));
    expect(s2.observed[rev]).toBe('rev-uid rspec ready');
    // Read alike by both steps, the same news is covered.
    const before = await state(h);
    await h.signal('poke', { source: rev, reason: 'updated', token: 'd.rspec.ready' });
    await eventually('ignored', async () => ((await state(h)).ignoredPokes > before.ignoredPokes ? true : undefined));
    expect((await state(h)).totalReconciles).toBe(before.totalReconciles);
  });

  it('a status-only pass that applies the KIngress covers the echo of that apply: no full pass follows (ADR 0005)', async () => {
    const name = uniqueName('ing-echo');
    cluster.services.set(name, 'uid-ie');
    cluster.ingressGeneration.set(name, 1);
    const h = await poke(name, { source: `Service/default/${name}`, resourceVersion: '1', reason: 'added' });
    await eventually('first pass', async () => (await state(h)).totalReconciles === 1);
    // A Revision's status changes; the status-only pass programs the Route, whose KIngress gets a new spec.
    cluster.ingressGeneration.set(name, 2);
    await h.signal('poke', { source: `Configuration/default/${name}`, reason: 'updated', token: 'd.spec1.status2' });
    const s2 = await eventually('status-only pass', async () => ((await state(h)).totalReconciles === 2 ? state(h) : undefined));
    expect(s2.statusOnly).toBe(true);
    expect(s2.observed[`Ingress/default/${name}`]).toBe('ing-uid ispec2 istatus');
    const ignored = s2.ignoredPokes;
    await h.signal('poke', { source: `Ingress/default/${name}`, reason: 'updated', token: 'd.ispec2.istatus' });
    await eventually('echo ignored', async () => ((await state(h)).ignoredPokes > ignored ? true : undefined));
    expect((await state(h)).totalReconciles).toBe(2);
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
