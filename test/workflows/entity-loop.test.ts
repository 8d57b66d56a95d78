// The entity loop's rule for ignoring pokes (ADR 0001, "no lost updates"), on a real Temporal dev server: the Route
// workflow's single step is faked over an in-memory object whose observations are computed exactly as the activities
// compute them (api/content-token.ts), and pokes carry the tokens the watcher would send.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { Worker } from '@temporalio/worker';
import { Client, type WorkflowHandle } from '@temporalio/client';
import type { Logger } from 'pino';
import { Registry } from 'prom-client';
import { Poker } from '../../watcher/poker.js';
import { contentToken, observationOf } from '../../api/content-token.js';
import { Resources } from '../../api/kinds.js';
import { noteObject, observing } from '../../activities/observe.js';
import type { Poke, PokeBatch } from '../../api/entity.js';
import type { KubeObject, ObjectKey } from '../../api/meta.js';
import type { Observed, RouteOutcome } from '../../activities/index.js';
import type { EntityInput, EntityState } from '../../workflows/entity.js';
import { RolloutWakeLeadMs } from '../../resources/rollout.js';
import { bundle, startWorker, testEnv, uniqueName } from '../harness/temporal.js';
import { eventually } from '../harness/wait.js';
import { caughtUpWithHistory, historySteps, pendingTimers } from '../harness/history.js';

type Obj = KubeObject & { spec: Record<string, unknown>; status?: Record<string, unknown> };

/** In-memory Routes and Ingresses; a pass may be held mid-way to change things under it. */
class FakeRoutes {
  routes = new Map<string, Obj>();
  ingresses = new Map<string, Obj>();
  passes = new Map<string, number>();
  /** When set for a name, the next pass reads the Route, then waits for this promise before finishing. */
  hold = new Map<string, Promise<void>>();
  /** A pass held after its rollout step was planned (a slow write that outlasts the time to the next step). */
  holdAfterStep = new Map<string, Promise<void>>();
  /**
   * Names whose next pass finds the Route gone in its first read, and then — in a later read of the same pass —
   * whatever is there by then (the object deleted and created again under the pass's feet).
   */
  goneThenRead = new Set<string>();
  /**
   * Per name, older copies of the Route the next passes read instead of the live one, one per pass: a read that lags
   * behind the poke it answers (a cache or a watch behind, an API server that came back behind).
   */
  lagging = new Map<string, Obj[]>();
  /** Names whose Route reports Ready=Unknown (waiting on something): its run must not end idle. */
  unsettled = new Set<string>();
  /** Names whose pass finds everything in place and writes nothing (a catch-up pass over a settled object). */
  quiet = new Set<string>();
  /** Names whose next pass waits for a Revision it has just relabelled from reserve (`RouteOutcome.relabelled`). */
  relabelling = new Set<string>();
  /** Names whose pass reports its Ingress write as the activities report writes (`Observed.wrote`). */
  reportWrites = new Set<string>();
  /**
   * Names whose pass creates the Ingress and then applies it again with its status (as the Route step's KIngress):
   * the first version's resourceVersion, per name, is in `firstWrite`.
   */
  writeTwice = new Set<string>();
  firstWrite = new Map<string, Obj>();
  private ingressVersion = 100;
  readEntityOptionsCalls = 0;
  resyncSeconds = 3600;
  /**
   * A gradual rollout per name: `steps` passes, `stepMs` apart. Each pass takes one step (a step not due yet is not
   * taken) and reports the next one as the Route step does (`RouteOutcome.rollout`); `at` holds when steps were taken.
   */
  rollouts = new Map<string, { stepMs: number; steps: number; at: number[]; dueAt?: number }>();

  activities = {
    reconcileRoute: async (key: ObjectKey): Promise<RouteOutcome & Observed> => {
      this.passes.set(key.name, (this.passes.get(key.name) ?? 0) + 1);
      if (this.goneThenRead.delete(key.name)) {
        const held = this.hold.get(key.name);
        this.hold.delete(key.name);
        await held;
        const later = this.routes.get(key.name);
        return { outcome: 'gone', observed: later ? { [`Route/default/${key.name}`]: observationOf(later) } : {} };
      }
      const read = this.lagging.get(key.name)?.shift() ?? this.routes.get(key.name);
      if (!read) return { outcome: 'gone' };
      const seen = structuredClone(read);
      const held = this.hold.get(key.name);
      if (held) {
        this.hold.delete(key.name);
        await held;
      }
      if (this.quiet.has(key.name)) {
        return {
          outcome: 'unchanged',
          ready: this.unsettled.has(key.name) ? 'Unknown' : 'True',
          ingress: 'unchanged',
          observed: { [`Route/default/${key.name}`]: observationOf(seen) },
          versions: { [`Route/default/${key.name}`]: seen.metadata.resourceVersion ?? '' },
        };
      }
      // The pass programs the Ingress from what it read and writes status onto whatever the Route is now.
      const ingress = this.ingress(key.name, seen.spec);
      const live = this.routes.get(key.name);
      if (live) live.status = { observedGeneration: seen.metadata.generation, traffic: seen.spec.traffic };
      // The writes go through the activities' own bookkeeping (activities/observe.ts), which reports their echoes.
      const { echoes, wrote } = await observing(async () => {
        if (this.writeTwice.has(key.name)) {
          const first: Obj = { ...structuredClone(ingress), metadata: { ...ingress.metadata, resourceVersion: String(this.ingressVersion++) } };
          noteObject(Resources.KIngress, first, 'write');
          this.firstWrite.set(key.name, first);
          ingress.status = { conditions: [{ type: 'Ready', status: 'True' }] };
        }
        ingress.metadata.resourceVersion = String(this.ingressVersion++);
        noteObject(Resources.KIngress, ingress, 'write');
        return {};
      });
      const step = await this.rolloutStep(key.name);
      const late = this.holdAfterStep.get(key.name);
      if (late) {
        this.holdAfterStep.delete(key.name);
        await late;
      }
      const relabelled = this.relabelling.delete(key.name);
      return {
        ...step,
        ...(relabelled ? { relabelled: [`${key.name}-00001`] } : {}),
        outcome: 'written',
        ready: this.unsettled.has(key.name) || relabelled ? 'Unknown' : 'True',
        ingress: 'updated',
        ...(echoes ? { echoes } : {}),
        ...(this.reportWrites.has(key.name) && wrote ? { wrote } : {}),
        observed: {
          [`Route/default/${key.name}`]: observationOf(seen),
          [`Ingress/default/${key.name}`]: observationOf(ingress),
        },
        // As the activities report them (activities/observe.ts): the versions the pass read and wrote.
        versions: {
          [`Route/default/${key.name}`]: seen.metadata.resourceVersion ?? '',
          ...(ingress.metadata.resourceVersion ? { [`Ingress/default/${key.name}`]: ingress.metadata.resourceVersion } : {}),
        },
      };
    },
    readEntityOptions: async () => {
      this.readEntityOptionsCalls += 1;
      return { resyncSeconds: this.resyncSeconds };
    },
    // Routes nobody controls: their own workflow reconciles them (ADR 0005).
    findReconcilingOwner: async () => ({ outcome: 'own' as const }),
  };

  create(name: string, traffic: unknown): Obj {
    const obj: Obj = {
      apiVersion: 'serving.knative.dev/v1',
      kind: 'Route',
      metadata: { name, namespace: 'default', uid: `uid-${name}`, generation: 1, resourceVersion: '1' },
      spec: { traffic },
    };
    this.routes.set(name, obj);
    return obj;
  }

  /** A spec change as `kubectl apply` makes it: generation and resourceVersion move on. */
  changeSpec(name: string, traffic: unknown): Obj {
    const obj = this.routes.get(name)!;
    obj.spec = { traffic };
    obj.metadata.generation = (obj.metadata.generation ?? 0) + 1;
    obj.metadata.resourceVersion = String(Number(obj.metadata.resourceVersion) + 1);
    return obj;
  }

  ingress(name: string, spec: unknown): Obj {
    const ing: Obj = {
      apiVersion: 'networking.internal.knative.dev/v1alpha1',
      kind: 'Ingress',
      metadata: { name, namespace: 'default', uid: `ing-${name}` },
      spec: { rules: spec },
      status: {},
    };
    this.ingresses.set(name, ing);
    return ing;
  }

  /**
   * One pass of a fake rollout: a step when due, and when the next is due. As the real Route step, a pass that the
   * early timer started (RolloutWakeLeadMs ahead) waits for the step's time first (stepWaitMs).
   */
  async rolloutStep(name: string): Promise<Pick<Exclude<RouteOutcome, { outcome: 'gone' }>, 'rollout'>> {
    const r = this.rollouts.get(name);
    if (!r || r.at.length >= r.steps) return {};
    // As the real step: a timer may wake a millisecond early by the wall clock, so wait until the time has come.
    for (
      let wait = r.dueAt === undefined ? 0 : r.dueAt - Date.now();
      wait > 0 && wait <= RolloutWakeLeadMs + 50;
      wait = (r.dueAt ?? 0) - Date.now()
    ) {
      await new Promise((done) => setTimeout(done, wait));
    }
    const now = Date.now();
    if (r.dueAt === undefined || now >= r.dueAt) {
      r.at.push(now);
      r.dueAt = now + r.stepMs;
    }
    if (r.at.length >= r.steps) return { rollout: { summary: `step ${r.at.length}, rollout finished` } };
    const summary = `step ${r.at.length} of ${r.steps}, next step at ${new Date(r.dueAt).toISOString()}`;
    return { rollout: { summary, nextStepAtMs: r.dueAt, nextStepInMs: Math.max(0, r.dueAt - Date.now()) } };
  }

  count(name: string): number {
    return this.passes.get(name) ?? 0;
  }
}

const taskQueue = uniqueName('entity-loop');
let env: TestWorkflowEnvironment;
let worker: Worker;
let running: Promise<void>;
const fake = new FakeRoutes();

beforeAll(async () => {
  env = await testEnv();
  worker = await startWorker(env, await bundle(), taskQueue, fake.activities);
  running = worker.run();
});

afterAll(async () => {
  worker?.shutdown();
  await running;
  await env?.teardown();
});

const selfPoke = (obj: Obj, reason: Poke['reason'] = 'updated'): Poke => ({
  source: `Route/default/${obj.metadata.name ?? ''}`,
  reason,
  resourceVersion: obj.metadata.resourceVersion ?? '',
  token: contentToken(obj, 'self'),
});

async function start(name: string, first: Poke, options?: EntityInput['options'], queue = taskQueue): Promise<WorkflowHandle> {
  return env.client.workflow.signalWithStart('routeWorkflow', {
    workflowId: `Route/default/${name}`,
    taskQueue: queue,
    args: [{ kind: 'Route', namespace: 'default', name, ...(options ? { options } : {}) } satisfies EntityInput],
    signal: 'poke',
    signalArgs: [[first] satisfies PokeBatch],
    workflowIdConflictPolicy: 'USE_EXISTING',
  });
}

const state = (h: WorkflowHandle) => h.query<EntityState>('state');
/** The timers a run has left once its (only) idle timer has fired and the task that looked at it completed. */
const timersAfterIdle = (h: WorkflowHandle) =>
  eventually('idle timer fired and looked at', async () => {
    const history = await h.fetchHistory();
    return history.events?.some((e) => e.timerFiredEventAttributes) && caughtUpWithHistory(history) ? pendingTimers(history) : undefined;
  });
const idle = async (h: WorkflowHandle, name: string) => {
  const s = await state(h);
  return !s.dirty && !s.inPass && s.totalReconciles === fake.count(name) ? s : undefined;
};

describe('entity loop: no lost updates', () => {
  it('ignores the echo of its own status write', async () => {
    const name = uniqueName('echo');
    const route = fake.create(name, [{ percent: 100 }]);
    const h = await start(name, selfPoke(route, 'added'));
    await eventually('first pass', () => idle(h, name));
    // The status write bumps the resourceVersion; the spec part of the token stays, so the echo is not news.
    route.metadata.resourceVersion = '2';
    await h.signal('poke', [selfPoke(route)]);
    await eventually('echo handled', async () => ((await state(h)).pokesThisRun === 2 ? true : undefined));
    const s = await state(h);
    expect(s.ignoredPokes).toBe(1);
    expect(fake.count(name)).toBe(1);
  });

  it('looks again on its own after a pass held for a Revision it relabelled from reserve (that label write pokes no one)', async () => {
    const name = uniqueName('relabel');
    fake.relabelling.add(name);
    const h = await start(name, selfPoke(fake.create(name, [{ percent: 100 }]), 'added'));
    await eventually('the look again', async () => (fake.count(name) === 2 ? idle(h, name) : undefined));
    const s = await state(h);
    expect(s.pokesThisRun).toBe(1);
    const history = await h.fetchHistory();
    expect(history.events?.filter((e) => e.timerStartedEventAttributes?.startToFireTimeout?.seconds?.toString() === '1')).toHaveLength(1);
  });

  it('never lets a status write hide a spec change made while the pass ran (the 90/10 split race)', async () => {
    const name = uniqueName('race');
    const route = fake.create(name, [{ percent: 100, latestRevision: true }]);
    const h = await start(name, selfPoke(route, 'added'));
    await eventually('first pass', () => idle(h, name));

    let release!: () => void;
    fake.hold.set(name, new Promise<void>((r) => (release = r)));
    // A label change starts a pass, which reads the Route and is held before it writes anything.
    route.metadata.labels = { team: 'a' };
    route.metadata.resourceVersion = String(Number(route.metadata.resourceVersion) + 1);
    await h.signal('poke', [selfPoke(route)]);
    await eventually('pass 2 holding', async () => ((await state(h)).inPass && fake.count(name) === 2 ? true : undefined));
    // The Service rewrites the Route's traffic to 90/10 while that pass runs …
    const split = [
      { latestRevision: true, percent: 90 },
      { revisionName: `${name}-00001`, percent: 10 },
    ];
    const changed = fake.changeSpec(name, split);
    await h.signal('poke', [selfPoke(changed)]);
    release();
    // … and the pass's status write lands on top of it: its echo carries the new spec's token.
    await eventually('pass 2 done', async () => (!(await state(h)).inPass ? true : undefined));
    changed.metadata.resourceVersion = String(Number(changed.metadata.resourceVersion) + 1);
    await h.signal('poke', [selfPoke(changed)]);

    const s = await eventually('converged on the split', async () => {
      const st = await idle(h, name);
      return st && fake.count(name) >= 3 ? st : undefined;
    });
    expect(fake.ingresses.get(name)?.spec).toEqual({ rules: { traffic: split } });
    expect(fake.routes.get(name)?.status).toEqual({ observedGeneration: 2, traffic: split });
    expect(s.totalReconciles).toBe(3);
  });

  it('passes again when its read of the object is older than the poke it answers, until a read catches up', async () => {
    const name = uniqueName('lag');
    const route = fake.create(name, [{ percent: 100 }]);
    const h = await start(name, selfPoke(route, 'added'));
    await eventually('first pass', () => idle(h, name));
    // The next two reads lag behind: they return the Route as it was before the change the poke announces.
    const before = structuredClone(route);
    fake.lagging.set(name, [structuredClone(before), structuredClone(before)]);
    const split = [
      { latestRevision: true, percent: 90 },
      { revisionName: `${name}-00001`, percent: 10 },
    ];
    const changed = fake.changeSpec(name, split);
    await h.signal('poke', [selfPoke(changed)]);
    const s = await eventually(
      'programmed from the change',
      async () => {
        const st = await idle(h, name);
        return st && fake.count(name) === 4 ? st : undefined;
      },
      20_000,
    );
    expect(fake.ingresses.get(name)?.spec).toEqual({ rules: { traffic: split } });
    expect(fake.lagging.get(name)).toEqual([]);
    expect(s.announced).toEqual({});
    expect(s.staleReads).toBe(0);
    // The first stale read passed again at once; the second waited a second on a timer named in the history.
    const h2 = await env.client.workflow.getHandle(`Route/default/${name}`).fetchHistory();
    const timers = (h2.events ?? []).filter((e) => e.timerStartedEventAttributes?.startToFireTimeout);
    expect(timers.map((e) => Number(e.timerStartedEventAttributes?.startToFireTimeout?.seconds ?? 0))).toContain(1);
  });

  it('ignores a child event it caused itself, and passes on a child change it did not make', async () => {
    const name = uniqueName('child');
    const route = fake.create(name, [{ percent: 100 }]);
    const h = await start(name, selfPoke(route, 'added'));
    await eventually('first pass', () => idle(h, name));
    const ingress = fake.ingresses.get(name)!;
    const childPoke = (): Poke => ({ source: `Ingress/default/${name}`, reason: 'updated', token: contentToken(ingress, 'dependency') });
    await h.signal('poke', [childPoke()]);
    await eventually('echo handled', async () => ((await state(h)).pokesThisRun === 2 ? true : undefined));
    expect(fake.count(name)).toBe(1);
    // The Ingress workflow marks it Ready: the status part of the token moves, and the Route must look.
    ingress.status = { conditions: [{ type: 'Ready', status: 'True' }] };
    await h.signal('poke', [childPoke()]);
    await eventually('child change reconciled', async () => (fake.count(name) === 2 ? idle(h, name) : undefined));
  });

  it('ignores the echo of an earlier version its own pass wrote, and passes when anyone else writes that content again', async () => {
    const name = uniqueName('twice');
    fake.writeTwice.add(name);
    const route = fake.create(name, [{ percent: 100 }]);
    const h = await start(name, selfPoke(route, 'added'));
    await eventually('first pass', () => idle(h, name));
    const ingressPoke = (obj: Obj, resourceVersion = obj.metadata.resourceVersion): Poke => ({
      source: `Ingress/default/${name}`,
      reason: 'updated',
      ...(resourceVersion !== undefined ? { resourceVersion } : {}),
      token: contentToken(obj, 'dependency'),
    });
    // The created version (no status yet) is not what the pass saw last, but it is the pass's own write.
    const first = fake.firstWrite.get(name)!;
    await h.signal('poke', [ingressPoke(first)]);
    await eventually('echo handled', async () => ((await state(h)).pokesThisRun === 2 ? true : undefined));
    expect((await state(h)).ignoredPokes).toBe(1);
    expect(fake.count(name)).toBe(1);
    // The same content at a later version is someone else's write (say, its status reset): news.
    await h.signal('poke', [ingressPoke(first, String(Number(fake.ingresses.get(name)!.metadata.resourceVersion) + 1))]);
    await eventually('foreign write → pass', async () => (fake.count(name) === 2 ? idle(h, name) : undefined));
    // An echo that arrives while the pass that wrote it still runs is dropped with the others it covers.
    let release!: () => void;
    fake.holdAfterStep.set(name, new Promise<void>((r) => (release = r)));
    route.metadata.labels = { team: 'b' };
    route.metadata.resourceVersion = String(Number(route.metadata.resourceVersion) + 1);
    await h.signal('poke', [selfPoke(route)]);
    await eventually('pass 3 holding', async () => ((await state(h)).inPass && fake.count(name) === 3 ? true : undefined));
    await h.signal('poke', [ingressPoke(fake.firstWrite.get(name)!)]);
    await eventually('echo arrived during the pass', async () => ((await state(h)).pokesDuringPass.length === 1 ? true : undefined));
    release();
    const s = await eventually('pass 3 done', () => idle(h, name));
    expect(s.totalReconciles).toBe(3);
    expect(fake.count(name)).toBe(3);
  });

  it('always passes on a deletion, a poke without a token, and a source the last pass did not read', async () => {
    const name = uniqueName('news');
    const route = fake.create(name, [{ percent: 100 }]);
    const h = await start(name, selfPoke(route, 'added'));
    await eventually('first pass', () => idle(h, name));
    await h.signal('poke', [{ ...selfPoke(route), reason: 'deleted' }]);
    await eventually('deleted → pass', async () => (fake.count(name) === 2 ? idle(h, name) : undefined));
    await h.signal('poke', [{ source: 'ConfigMap/knative-serving/config-network', reason: 'updated', resourceVersion: '7' }]);
    await eventually('config → pass', async () => (fake.count(name) === 3 ? idle(h, name) : undefined));
    await h.signal('poke', [{ source: `Revision/default/${name}-00001`, reason: 'updated', token: 'd.0000000000000000.0000000000000000' }]);
    await eventually('unread source → pass', async () => (fake.count(name) === 4 ? idle(h, name) : undefined));
  });

  it('keeps every source of a batch: one covered poke never hides another', async () => {
    const name = uniqueName('batch');
    const route = fake.create(name, [{ percent: 100 }]);
    const h = await start(name, selfPoke(route, 'added'));
    await eventually('first pass', () => idle(h, name));
    const ingress = fake.ingresses.get(name)!;
    const echo: Poke = { source: `Ingress/default/${name}`, reason: 'updated', token: contentToken(ingress, 'dependency') };
    const changed = fake.changeSpec(name, [{ percent: 50 }, { percent: 50, tag: 'b' }]);
    await h.signal('poke', [selfPoke(changed), echo]);
    await eventually('spec change reconciled', async () => (fake.count(name) === 2 ? idle(h, name) : undefined));
    expect(fake.ingresses.get(name)?.spec).toEqual({ rules: { traffic: [{ percent: 50 }, { percent: 50, tag: 'b' }] } });
  });

  it('reads its options from the worker after its first pass and at each resync, and carries none across continue-as-new', async () => {
    const name = uniqueName('options');
    const route = fake.create(name, [{ percent: 100 }]);
    fake.resyncSeconds = 1;
    try {
      const calls = fake.readEntityOptionsCalls;
      const h = await start(name, selfPoke(route, 'added'));
      const s = await eventually(
        'resyncs with the worker’s interval',
        async () => {
          const st = await state(h);
          return st.totalReconciles >= 3 ? st : undefined;
        },
        30_000,
      );
      expect(s.options.resyncSeconds).toBe(1);
      expect(s.lastReconcile?.trigger).toBe('resync');
      expect(fake.readEntityOptionsCalls - calls).toBeGreaterThanOrEqual(3);
      // A fresh run passes at once: its object does not wait for the options, which time only what comes after.
      const steps = historySteps(await h.fetchHistory()).map((st) => st.type);
      expect(steps.slice(0, 3)).toEqual(['findReconcilingOwner', 'reconcileRoute', 'readEntityOptions']);
      // A changed worker setting reaches the running workflow at its next resync.
      fake.resyncSeconds = 3600;
      await eventually('new interval in force', async () => ((await state(h)).options.resyncSeconds === 3600 ? true : undefined), 30_000);
    } finally {
      fake.resyncSeconds = 3600;
    }
  });

  it('carries what it observed across continue-as-new', async () => {
    const name = uniqueName('can');
    const route = fake.create(name, [{ percent: 100 }]);
    const h = await start(name, selfPoke(route, 'added'), { maxReconcilesPerRun: 1 });
    const firstRun = (await h.describe()).runId;
    const handle = env.client.workflow.getHandle(`Route/default/${name}`);
    const s = await eventually('new run', async () =>
      (await handle.describe()).runId === firstRun ? undefined : handle.query<EntityState>('state'),
    );
    expect(s.runs).toBe(2);
    expect(Object.keys(s.observed)).toContain(`Route/default/${name}`);
    const passes = fake.count(name);
    await handle.signal('poke', [selfPoke(route)]);
    await eventually('covered in the new run', async () => ((await handle.query<EntityState>('state')).ignoredPokes === 1 ? true : undefined));
    expect(fake.count(name)).toBe(passes);
  });

  it('a pass that found its object gone covers nothing: a re-creation announced meanwhile gets a pass (convergence seed 1410742211)', async () => {
    const name = uniqueName('gone-recreated');
    const route = fake.create(name, [{ percent: 100 }]);
    const h = await start(name, selfPoke(route, 'added'));
    await eventually('first pass', () => idle(h, name));
    let release!: () => void;
    fake.hold.set(name, new Promise<void>((r) => (release = r)));
    fake.goneThenRead.add(name);
    fake.routes.delete(name);
    await h.signal('poke', [{ ...selfPoke(route), reason: 'deleted' }]);
    await eventually('gone pass holding', async () => ((await state(h)).inPass ? true : undefined));
    // Created again while the pass that saw it gone is still running; the pass's later step reads the new object.
    const again = fake.create(name, [{ percent: 50 }, { percent: 50, tag: 'b' }]);
    again.metadata.uid = `uid-${name}-2`;
    await h.signal('poke', [selfPoke(again, 'added')]);
    release();
    await eventually('re-created object reconciled', async () =>
      fake.ingresses.get(name)?.spec && JSON.stringify(fake.ingresses.get(name)?.spec).includes('"tag":"b"') ? true : undefined,
    );
    expect((await h.describe()).status.name).toBe('RUNNING');
  });

  it('ends a run that has had nothing to do for idleSeconds; the next poke starts a fresh run that passes in full (ADR 0006)', async () => {
    const name = uniqueName('idle');
    const route = fake.create(name, [{ percent: 100 }]);
    const h = await start(name, selfPoke(route, 'added'), { idleSeconds: 1 });
    const firstRun = (await h.describe()).runId;
    const ended = await eventually('run ended', async () => {
      const d = await h.describe();
      return d.status.name === 'COMPLETED' ? d : undefined;
    });
    expect(ended.runId).toBe(firstRun);
    expect(await h.result()).toMatch(/idle for 1 s, run ends/);
    expect(fake.count(name)).toBe(1);
    // The same content again: covered in the old run, but a fresh run knows nothing and passes.
    const again = await start(name, selfPoke(route), { idleSeconds: 1 });
    await eventually('fresh run passed', async () => (fake.count(name) === 2 ? true : undefined));
    expect((await again.describe()).runId).not.toBe(firstRun);
  });

  it('keeps a run whose object is not settled (Ready Unknown): waiting on children is not idle', async () => {
    const name = uniqueName('unsettled');
    const route = fake.create(name, [{ percent: 100 }]);
    fake.unsettled.add(name);
    const h = await start(name, selfPoke(route, 'added'), { idleSeconds: 1 });
    await eventually('first pass', async () => (fake.count(name) === 1 ? true : undefined));
    // Its idle timer fired and found the object unsettled: no timer but the resync is left, so the run waits.
    expect(await timersAfterIdle(h)).toEqual([{ seconds: 36_000, summary: '' }]);
    expect((await h.describe()).status.name).toBe('RUNNING');
    // Once a pass finds it settled, the run ends after its quiet second.
    fake.unsettled.delete(name);
    await h.signal('poke', [selfPoke(fake.changeSpec(name, [{ percent: 100, tag: 'x' }]))]);
    await eventually('ended once settled', async () => ((await h.describe()).status.name === 'COMPLETED' ? true : undefined));
    expect(fake.count(name)).toBe(2);
  });

  /**
   * A run as the watcher's catch-up starts one: the pokes as its input, marked catch-up (watcher/poker.ts). Without
   * `options`, as in production: the run reads them after its first pass.
   */
  const startCatchUp = (name: string, pokes: Poke[], options?: EntityInput['options']) =>
    env.client.workflow.start('routeWorkflow', {
      workflowId: `Route/default/${name}`,
      taskQueue,
      args: [{ kind: 'Route', namespace: 'default', name, ...(options ? { options } : {}), pokes, catchUp: true } satisfies EntityInput],
      workflowIdConflictPolicy: 'FAIL',
    });

  it('ends a run the catch-up started right after a first pass that wrote nothing: one workflow task, no timer', async () => {
    const name = uniqueName('caught-up');
    const route = fake.create(name, [{ percent: 100 }]);
    fake.quiet.add(name);
    const h = await startCatchUp(name, [selfPoke(route, 'added')]);
    expect(await h.result()).toMatch(/caught up: its first pass wrote nothing, run ends/);
    expect(fake.count(name)).toBe(1);
    const events = (await h.fetchHistory()).events ?? [];
    expect(events.filter((e) => e.workflowTaskCompletedEventAttributes)).toHaveLength(1);
    expect(events.filter((e) => e.timerStartedEventAttributes)).toHaveLength(0);
    expect(events.filter((e) => e.workflowExecutionSignaledEventAttributes)).toHaveLength(0);
    // The pass's steps (the Route asks first whether an owner reconciles it), and not the options read a run does
    // after its first pass.
    expect(historySteps({ events }).map((s) => s.type)).toEqual(['findReconcilingOwner', 'reconcileRoute']);
  });

  it('keeps a catch-up run whose pass wrote, or whose object is not settled, for its idle time', async () => {
    const wrote = uniqueName('caught-up-wrote');
    fake.reportWrites.add(wrote);
    const h = await startCatchUp(wrote, [selfPoke(fake.create(wrote, [{ percent: 100 }]), 'added')], { idleSeconds: 1 });
    expect(await h.result()).toMatch(/idle for 1 s, run ends/);
    expect(fake.count(wrote)).toBe(1);
    const waiting = uniqueName('caught-up-unsettled');
    fake.quiet.add(waiting);
    fake.unsettled.add(waiting);
    const w = await startCatchUp(waiting, [selfPoke(fake.create(waiting, [{ percent: 100 }]), 'added')], { idleSeconds: 1 });
    await eventually('first pass', async () => (fake.count(waiting) === 1 ? true : undefined));
    expect(await timersAfterIdle(w)).toEqual([{ seconds: 36_000, summary: '' }]);
    expect((await w.describe()).status.name).toBe('RUNNING');
    fake.unsettled.delete(waiting);
    await w.signal('poke', [selfPoke(fake.changeSpec(waiting, [{ percent: 100, tag: 'x' }]))]);
    expect(await w.result()).toMatch(/idle for 1 s, run ends/);
  });

  it('loses no change that lands while a catch-up run passes: the run passes again and stays for its idle time', async () => {
    const name = uniqueName('caught-up-race');
    const route = fake.create(name, [{ percent: 100 }]);
    fake.quiet.add(name);
    let release!: () => void;
    fake.hold.set(name, new Promise<void>((r) => (release = r)));
    const h = await startCatchUp(name, [selfPoke(route, 'added')], { idleSeconds: 1 });
    await eventually('pass under way', async () => (fake.count(name) === 1 ? true : undefined));
    // A spec change while the pass waits (after its read): the pass saw the old spec.
    fake.quiet.delete(name);
    await h.signal('poke', [selfPoke(fake.changeSpec(name, [{ percent: 100, tag: 'late' }]))]);
    await eventually('poke taken', async () => ((await state(h)).pokesThisRun === 2 ? true : undefined));
    release();
    expect(await h.result()).toMatch(/idle for 1 s, run ends/);
    expect(fake.count(name)).toBe(2);
    expect(JSON.stringify(fake.ingresses.get(name)?.spec)).toContain('"tag":"late"');
  });

  it('loses no poke that races the end of an idle run', async () => {
    const name = uniqueName('idle-race');
    const route = fake.create(name, [{ percent: 1 }]);
    await start(name, selfPoke(route, 'added'), { idleSeconds: 1 });
    const runs = new Set<string>();
    // Changes land around the moment each run decides it is idle: some hit the closing run, some start a new one.
    for (let i = 2; i <= 12; i += 1) {
      await new Promise((r) => setTimeout(r, 800 + ((i * 137) % 500)));
      const h = await start(name, selfPoke(fake.changeSpec(name, [{ percent: i }])), { idleSeconds: 1 });
      runs.add((await h.describe()).runId);
    }
    await eventually('last change reconciled', async () =>
      JSON.stringify(fake.ingresses.get(name)?.spec) === JSON.stringify({ rules: { traffic: [{ percent: 12 }] } }) ? true : undefined,
    );
    expect(fake.routes.get(name)?.status).toEqual({ observedGeneration: 12, traffic: [{ percent: 12 }] });
    // The timing really crossed run boundaries.
    expect(runs.size).toBeGreaterThan(1);
  });

  it('passes again with fresh facts when the object was recreated under the same name', async () => {
    const name = uniqueName('recreate');
    const route = fake.create(name, [{ percent: 100 }]);
    const h = await start(name, selfPoke(route, 'added'));
    await eventually('first pass', async () => ((await state(h)).uid === `uid-${name}` ? true : undefined));
    const again = fake.create(name, [{ percent: 100 }]);
    again.metadata.uid = `uid-${name}-2`;
    await h.signal('poke', [{ ...selfPoke(again), reason: 'deleted' }, selfPoke(again, 'added')]);
    const s = await eventually('new uid', async () => {
      const st = await idle(h, name);
      return st?.uid === `uid-${name}-2` ? st : undefined;
    });
    expect(s.totalReconciles).toBeGreaterThanOrEqual(3);
  });
});

describe('entity loop: a new object’s run started eagerly by the poker', () => {
  const quiet = { warn() {}, error() {}, info() {}, debug() {}, child: () => quiet } as unknown as Logger;
  const target = (name: string) => ({ kind: 'Route' as const, key: { namespace: 'default', name } });
  const started = async (registry: Registry, eager: string) =>
    (await registry.getMetricsAsJSON()).find((m) => m.name === 'tidal_pokes_started_total')?.values.find((v) => v.labels.eager === eager)?.value ?? 0;

  it('starts it with the poke as input and its first task handed to this worker; a run that exists gets the signal', async () => {
    const registry = new Registry();
    // The worker's own connection: Temporal returns the first workflow task with the start, to this worker.
    const eager = new Client({ connection: env.nativeConnection, namespace: env.namespace ?? 'default' });
    const poker = new Poker(env.client, { taskQueue, concurrency: 4, maxBackoffMs: 1000, eagerClient: () => eager }, quiet, registry);
    try {
      const name = uniqueName('eager');
      const route = fake.create(name, [{ percent: 100 }]);
      const first = selfPoke(route, 'added');
      poker.poke(target(name), first);
      const h = env.client.workflow.getHandle(`Route/default/${name}`);
      const s = await eventually('first pass', () => idle(h, name));
      expect(s.trigger).toBe(`added Route/default/${name}`);
      expect(s.totalPokes).toBe(1);
      expect(fake.count(name)).toBe(1);
      expect(await started(registry, 'true')).toBe(1);
      // The history shows what started the run: the poke is the start's input, and no signal was sent.
      const events = (await h.fetchHistory()).events ?? [];
      const input = JSON.parse(
        Buffer.from(events[0]?.workflowExecutionStartedEventAttributes?.input?.payloads?.[0]?.data ?? []).toString(),
      ) as EntityInput;
      expect(input.pokes).toEqual([first]);
      expect(events.filter((e) => e.workflowExecutionSignaledEventAttributes)).toEqual([]);

      // Deleted and created again under the same name while the run still runs: the eager start is refused, and
      // the poke goes in as a signal; nothing is lost.
      const again = fake.create(name, [{ percent: 50 }]);
      again.metadata.uid = `uid-${name}-2`;
      poker.poke(target(name), selfPoke(again, 'added'));
      const after = await eventually('signalled and passed', async () => {
        const st = await idle(h, name);
        return st?.uid === `uid-${name}-2` ? st : undefined;
      });
      expect(after.totalPokes).toBe(2);
      // A new uid: a pass for the poke, then one with fresh facts (as any re-creation).
      expect(fake.count(name)).toBeGreaterThanOrEqual(2);
      expect(await started(registry, 'true')).toBe(1);
      const signals = ((await h.fetchHistory()).events ?? []).filter((e) => e.workflowExecutionSignaledEventAttributes);
      expect(signals).toHaveLength(1);
    } finally {
      await poker.close();
    }
  });
});

describe('entity loop: scheduled passes (a gradual rollout’s steps, ADR 0007)', () => {
  const stepMs = 1500;
  /** A Route rolling out in three steps, once its first step is taken. */
  const firstOfThreeSteps = async (prefix: string) => {
    const name = uniqueName(prefix);
    const route = fake.create(name, [{ percent: 100 }]);
    fake.rollouts.set(name, { stepMs, steps: 3, at: [] });
    const h = await start(name, selfPoke(route, 'added'));
    const r = fake.rollouts.get(name)!;
    await eventually('first step', async () => (r.at.length === 1 ? true : undefined), 20_000);
    return { name, h, r };
  };
  /** The timers a run armed for steps (the only timers with a summary). */
  const stepTimers = async (h: WorkflowHandle) => {
    const { events } = await h.fetchHistory();
    return (events ?? []).filter((e) => e.timerStartedEventAttributes && e.userMetadata?.summary?.data).length;
  };
  /** Every step taken, each no earlier than `stepMs` after the one before. */
  const expectOnSchedule = (at: number[], steps: number) => {
    expect(at).toHaveLength(steps);
    for (let i = 1; i < at.length; i += 1) expect(at[i]! - at[i - 1]!).toBeGreaterThanOrEqual(stepMs - 2);
  };

  it('takes each step on a durable timer, and the run does not end idle mid-rollout even when Ready', async () => {
    const name = uniqueName('rollout');
    const route = fake.create(name, [{ percent: 100 }]);
    fake.rollouts.set(name, { stepMs, steps: 4, at: [] });
    // Quiet for 1 s ends a settled run: only the pending step keeps this one (steps are 1.5 s apart).
    const h = await start(name, selfPoke(route, 'added'), { idleSeconds: 1 });
    const r = fake.rollouts.get(name)!;
    await eventually('mid-rollout', async () => (r.at.length === 2 ? true : undefined), 20_000);
    const mid = await state(h);
    expect(mid.lastReconcile?.trigger).toBe('scheduled');
    expect(mid.wake?.summary).toMatch(/^rollout of Route default\/.*: step 2 of 4, next step at /u);
    expect((await h.describe()).status.name).toBe('RUNNING');
    expect(await h.result()).toMatch(/idle for 1 s, run ends/);
    expectOnSchedule(r.at, 4);
    // Nothing but the scheduled passes: start + 3 steps.
    expect(fake.count(name)).toBe(4);
    // The history names each timer after the step it waits for.
    const { events } = await h.fetchHistory();
    const summaries = (events ?? [])
      .filter((e) => e.timerStartedEventAttributes && e.userMetadata?.summary?.data)
      .map((e) => JSON.parse(Buffer.from(e.userMetadata!.summary!.data!).toString('utf8')) as string);
    expect(summaries.filter((t) => t.startsWith('rollout of Route'))).toHaveLength(3);
  });

  it('a pass between two steps reporting the same due time arms no second timer, and the step stays on schedule', async () => {
    const { name, h, r } = await firstOfThreeSteps('rollout-poked');
    // News that is not a step (a child's status): a pass that takes no step and reports the same due time.
    await h.signal('poke', [{ source: `Ingress/default/${name}`, reason: 'updated', resourceVersion: '9', token: 'd.other.other' }]);
    await eventually('poked pass', async () => (fake.count(name) === 2 ? true : undefined), 20_000);
    expect(r.at).toHaveLength(1);
    await eventually('rollout done', async () => (r.at.length === 3 ? true : undefined), 20_000);
    expectOnSchedule(r.at, 3);
    expect(await stepTimers(h)).toBe(2); // one per step to come, none for the poked pass
  });

  it('a pass that outlasts the time to the next step arms no timer of its own: the scheduled pass after it does', async () => {
    const { name, h, r } = await firstOfThreeSteps('rollout-slow');
    // News mid-step: its pass plans no step (not due yet), then is held past the step's time, so the step's timer
    // fires during it.
    let release!: () => void;
    fake.holdAfterStep.set(name, new Promise<void>((done) => (release = done)));
    await h.signal('poke', [{ source: `Ingress/default/${name}`, reason: 'updated', resourceVersion: '9', token: 'd.slow.slow' }]);
    await eventually('slow pass held', async () => (fake.count(name) === 2 && !fake.holdAfterStep.has(name) ? true : undefined), 20_000);
    await eventually(
      'step timer fired',
      async () => {
        const { events } = await h.fetchHistory();
        return (events ?? []).some((e) => e.timerFiredEventAttributes) ? true : undefined;
      },
      20_000,
    );
    release();
    await eventually('rollout done', async () => (r.at.length === 3 ? true : undefined), 20_000);
    expectOnSchedule(r.at, 3);
    // One per step to come: the slow pass's schedule (the step it did not take) is the scheduled pass's to arm.
    expect(await stepTimers(h)).toBe(2);
  });

  it('carries a pending step across continue-as-new: the new run arms a timer for what is left of it', async () => {
    const name = uniqueName('rollout-can');
    const route = fake.create(name, [{ percent: 100 }]);
    fake.rollouts.set(name, { stepMs, steps: 3, at: [] });
    const h = await start(name, selfPoke(route, 'added'), { maxReconcilesPerRun: 1 });
    const r = fake.rollouts.get(name)!;
    await eventually('rollout done', async () => (r.at.length === 3 ? true : undefined), 20_000);
    expectOnSchedule(r.at, 3);
    const s = await eventually('settled', () => idle(env.client.workflow.getHandle(h.workflowId), name));
    expect(s.runs).toBeGreaterThanOrEqual(3);
    expect(s.wake).toBeUndefined();
  });
});

describe('entity loop: runs evicted from a small workflow cache (TIDAL_MAX_CACHED_WORKFLOWS)', () => {
  // Its own worker, caching two runs: five runs waiting at once leave at least three out, so each of their next tasks
  // (a poke, a query) replays the run's history from the server.
  const smallQueue = uniqueName('entity-loop-cache');
  let small: Worker;
  let smallRunning: Promise<void>;

  beforeAll(async () => {
    small = await startWorker(env, await bundle(), smallQueue, fake.activities, { maxCachedWorkflows: 2, maxConcurrentWorkflowTaskExecutions: 2 });
    smallRunning = small.run();
  });

  afterAll(async () => {
    small?.shutdown();
    await smallRunning;
  });

  it('acts on every change and still ignores its own echo once its run is replayed', async () => {
    const names = Array.from({ length: 5 }, () => uniqueName('evicted'));
    const routes = names.map((name) => fake.create(name, [{ percent: 100 }]));
    const handles = await Promise.all(names.map((name, i) => start(name, selfPoke(routes[i]!, 'added'), undefined, smallQueue)));
    for (const [i, h] of handles.entries()) await eventually('first pass', () => idle(h, names[i]!));
    expect(small.getStatus().numCachedWorkflows).toBeLessThanOrEqual(2);

    const split = (name: string) => [
      { latestRevision: true, percent: 90 },
      { revisionName: `${name}-00001`, percent: 10 },
    ];
    for (const [i, h] of handles.entries()) await h.signal('poke', [selfPoke(fake.changeSpec(names[i]!, split(names[i]!)))]);
    for (const [i, h] of handles.entries()) {
      await eventually('change acted on', async () => (fake.count(names[i]!) === 2 ? idle(h, names[i]!) : undefined));
    }
    // The echo of each pass's status write: a replayed run knows what its last pass acted on, as a cached one does.
    for (const [i, h] of handles.entries()) {
      routes[i]!.metadata.resourceVersion = String(Number(routes[i]!.metadata.resourceVersion) + 1);
      await h.signal('poke', [selfPoke(routes[i]!)]);
    }
    for (const [i, h] of handles.entries()) {
      await eventually('echo handled', async () => ((await state(h)).pokesThisRun === 3 ? true : undefined));
      const s = await state(h);
      expect(s.ignoredPokes).toBe(1);
      expect(fake.count(names[i]!)).toBe(2);
      expect(routes[i]!.status?.traffic).toEqual(split(names[i]!));
    }
    expect(small.getStatus().numCachedWorkflows).toBeLessThanOrEqual(2);
  });
});
