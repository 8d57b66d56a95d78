// The Configuration and Revision entity workflows on a real Temporal dev server with in-memory activities:
// the steps they take, in order, what they pass between steps, and completion when the object is gone.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { historySteps } from '../harness/history.js';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { Worker } from '@temporalio/worker';
import type { WorkflowHandle } from '@temporalio/client';
import type { ObjectKey } from '../../api/meta.js';
import type { Revision } from '../../api/serving.js';
import type { HandOverResolved } from '../../activities/revision.js';
import type {
  DelegationOutcome,
  DigestOutcome,
  ResourcesOutcome,
  RevisionGcOutcome,
  RevisionOutcome,
  StatusOutcome,
} from '../../activities/index.js';
import type { EntityKind } from '../../api/entity.js';
import type { EntityInput, EntityState } from '../../workflows/entity.js';
import { createCombinedActivities, type PartSteps } from '../../activities/combined.js';
import { bundle, startWorker, testEnv, uniqueName } from '../harness/temporal.js';
import { eventually } from '../harness/wait.js';

const exists = new Set<string>();
const calls: { step: string; name: string; arg?: unknown }[] = [];
let failCreate: string | undefined;

const activities = {
  reconcileConfigurationRevision: async (key: ObjectKey): Promise<RevisionOutcome> => {
    calls.push({ step: 'revision', name: key.name });
    if (!exists.has(key.name)) return { outcome: 'gone' };
    if (failCreate) return { outcome: 'failed', uid: 'u', generation: 3, revision: `${key.name}-00003`, message: failCreate };
    return { outcome: 'created', uid: 'u', generation: 3, revision: `${key.name}-00003` };
  },
  updateConfigurationStatus: async (key: ObjectKey, createError?: string): Promise<StatusOutcome> => {
    calls.push({ step: 'cfgStatus', name: key.name, arg: createError });
    return exists.has(key.name)
      ? { outcome: 'written', ready: createError ? 'False' : 'Unknown', ...(createError ? { reason: 'RevisionFailed' } : {}) }
      : { outcome: 'gone' };
  },
  // As the real pair in a new Revision's combined step: the digests hand the resolved Revision over (the combined
  // step hands nothing on any other way out), and the resources part, handed nothing, stops before it does anything.
  resolveRevisionDigests: async (key: ObjectKey, handOver?: HandOverResolved): Promise<DigestOutcome> => {
    calls.push({ step: 'digests', name: key.name });
    const failures = registryFailures.get(key.name) ?? 0;
    if (failures > 0) {
      registryFailures.set(key.name, failures - 1);
      throw new Error('registry unreachable');
    }
    if (!exists.has(key.name)) return { outcome: 'gone' };
    handOver?.({ metadata: { name: key.name, namespace: key.namespace } } as Revision);
    return { outcome: 'resolved', cached: false, images: 1 };
  },
  reconcileRevisionResources: async (key: ObjectKey, resolved?: Promise<Revision | undefined>): Promise<ResourcesOutcome> => {
    if (resolved && !(await resolved)) return { outcome: 'gone' };
    calls.push({ step: 'resources', name: key.name });
    const service = foreignService.has(key.name) ? 'notOwned' : 'created';
    return exists.has(key.name)
      ? { outcome: 'applied', deployment: 'created', service, hpa: 'none', pdb: 'created', replicas: 2 }
      : { outcome: 'gone' };
  },
  updateRevisionStatus: async (key: ObjectKey, _awaitReady?: unknown, serviceNotOwned?: boolean): Promise<StatusOutcome> => {
    calls.push({ step: 'revStatus', name: key.name, arg: serviceNotOwned });
    if (!exists.has(key.name)) return { outcome: 'gone' };
    return serviceNotOwned
      ? { outcome: 'written', ready: 'False', reason: 'NotOwned' }
      : { outcome: 'written', ready: 'Unknown', reason: 'Deploying' };
  },
  collectRevisions: async (key: ObjectKey): Promise<RevisionGcOutcome> => {
    calls.push({ step: 'gc', name: key.name, arg: Date.now() });
    if (!exists.has(key.name)) return { outcome: 'gone' };
    const due = gcDue.get(key.name);
    if (due === undefined) return { outcome: 'nothing', deleted: [], summary: 'no reserve Revision' };
    if (Date.now() < due)
      return { outcome: 'nothing', deleted: [], nextAtMs: due, nextInMs: due - Date.now(), next: `${key.name}-00001`, summary: 'not yet' };
    gcDue.delete(key.name);
    return {
      outcome: 'collected',
      deleted: [{ name: `${key.name}-00001`, rule: 'stale', lateMs: Date.now() - due }],
      summary: `deleted ${key.name}-00001`,
    };
  },
  // These workflows start without fixed options, so they read the worker's, as in production.
  readEntityOptions: async () => ({ resyncSeconds: 600 }),
  findReconcilingOwner: async (kind: EntityKind, key: ObjectKey): Promise<DelegationOutcome> => {
    calls.push({ step: 'owner', name: key.name });
    return ownedByService.has(key.name) ? { outcome: 'delegated', owner: `Service/${key.namespace}/${key.name}` } : { outcome: 'own' };
  },
};
/** Revisions whose Service `<rev>` another object controls (an old incarnation's, awaiting the garbage collector). */
const foreignService = new Set<string>();
/** Configuration name → when its (fake) next Revision falls due for collection. */
const gcDue = new Map<string, number>();
/** Revision name → how many resolutions fail before the registry answers. */
const registryFailures = new Map<string, number>();
/** Configurations controlled by a Service: the Service's pass reconciles them (ADR 0005). */
const ownedByService = new Set<string>();

const taskQueue = uniqueName('chain-wf');
let env: TestWorkflowEnvironment;
let worker: Worker;
let running: Promise<void>;

beforeAll(async () => {
  env = await testEnv();
  worker = await startWorker(env, await bundle(), taskQueue, { ...activities, ...createCombinedActivities(activities as unknown as PartSteps) });
  running = worker.run();
});

afterAll(async () => {
  worker?.shutdown();
  await running;
  await env?.teardown();
});

async function start(kind: 'Configuration' | 'Revision', name: string): Promise<WorkflowHandle> {
  return env.client.workflow.signalWithStart(kind === 'Configuration' ? 'configurationWorkflow' : 'revisionWorkflow', {
    workflowId: `${kind}/default/${name}`,
    taskQueue,
    args: [{ kind, namespace: 'default', name } satisfies EntityInput],
    signal: 'poke',
    signalArgs: [{ source: `${kind}/default/${name}`, resourceVersion: '1', reason: 'added' }],
    workflowIdConflictPolicy: 'USE_EXISTING',
  });
}

const stepsOf = (name: string) => calls.filter((c) => c.name === name).map((c) => c.step);

describe('configurationWorkflow', () => {
  it('ensures the Revision, then writes status, and records a readable summary', async () => {
    const name = uniqueName('cfg');
    exists.add(name);
    const h = await start('Configuration', name);
    const s = await eventually('one pass', async () => {
      const st = await h.query<EntityState>('state');
      return st.totalReconciles === 1 ? st : undefined;
    });
    expect(stepsOf(name)).toEqual(['owner', 'revision', 'cfgStatus', 'gc']);
    expect(s.lastReconcile?.summary).toBe(`generation 3: Revision ${name}-00003 created; status written, Ready=Unknown; GC: no reserve Revision`);
    expect(s.uid).toBe('u');
  });

  it('passes a Revision creation failure to the status step', async () => {
    const name = uniqueName('cfg-fail');
    exists.add(name);
    failCreate = 'admission webhook denied the request';
    try {
      const h = await start('Configuration', name);
      await eventually('one pass', async () => (await h.query<EntityState>('state')).totalReconciles === 1);
      expect(calls.find((c) => c.name === name && c.step === 'cfgStatus')?.arg).toBe('admission webhook denied the request');
    } finally {
      failCreate = undefined;
    }
  });

  it('completes when the Configuration is gone', async () => {
    const name = uniqueName('cfg-gone');
    const h = await start('Configuration', name);
    await expect(h.result()).resolves.toContain('is gone');
    expect(stepsOf(name)).toEqual(['owner', 'revision']);
  });

  it('a Configuration its Service reconciles: the run looks once and ends, touching nothing (ADR 0005)', async () => {
    const name = uniqueName('cfg-owned');
    exists.add(name);
    ownedByService.add(name);
    const h = await start('Configuration', name);
    await expect(h.result()).resolves.toContain(`is reconciled by Service/default/${name}'s workflow`);
    expect(stepsOf(name)).toEqual(['owner']);
  });

  it('asks once per object, not per pass', async () => {
    const name = uniqueName('cfg-twice');
    exists.add(name);
    const h = await start('Configuration', name);
    await eventually('one pass', async () => (await h.query<EntityState>('state')).totalReconciles === 1);
    await h.signal('poke', { source: `Configuration/default/${name}`, resourceVersion: '2', reason: 'updated' });
    await eventually('two passes', async () => (await h.query<EntityState>('state')).totalReconciles === 2);
    expect(stepsOf(name)).toEqual(['owner', 'revision', 'cfgStatus', 'gc', 'revision', 'cfgStatus', 'gc']);
  });

  it('sleeps on a durable timer until the next Revision falls due, then collects it in a scheduled pass (ADR 0008)', async () => {
    const name = uniqueName('cfg-gc');
    exists.add(name);
    const due = Date.now() + 3000;
    gcDue.set(name, due);
    const h = await start('Configuration', name);
    const first = await eventually('one pass', async () => {
      const st = await h.query<EntityState>('state');
      return st.totalReconciles === 1 ? st : undefined;
    });
    expect(first.wake).toEqual({
      atMs: due,
      summary: expect.stringMatching(new RegExp(`^revision GC of Configuration default/${name}: ${name}-00001 collectable at `)),
    });
    const s = await eventually(
      'the scheduled pass',
      async () => {
        const st = await h.query<EntityState>('state');
        return st.totalReconciles === 2 ? st : undefined;
      },
      15_000,
    );
    expect(s.lastReconcile).toMatchObject({ trigger: 'scheduled', summary: expect.stringContaining(`GC: deleted ${name}-00001`) });
    expect(s.wake).toBeUndefined();
    // The scheduled pass is status-only: the status and the collection, no Revision step.
    expect(stepsOf(name)).toEqual(['owner', 'revision', 'cfgStatus', 'gc', 'cfgStatus', 'gc']);
    const gcAt = calls.filter((c) => c.name === name && c.step === 'gc').map((c) => c.arg as number);
    expect(gcAt[1]).toBeGreaterThanOrEqual(due);
    const history = await h.fetchHistory();
    const timers = (history.events ?? []).filter((e) => e.timerStartedEventAttributes);
    expect(timers.length).toBeGreaterThanOrEqual(1);
  });
});

describe('revisionWorkflow', () => {
  it('pins digests, applies the Deployment and Service, then writes status', async () => {
    const name = uniqueName('rev');
    exists.add(name);
    const h = await start('Revision', name);
    const s = await eventually('one pass', async () => {
      const st = await h.query<EntityState>('state');
      return st.totalReconciles === 1 ? st : undefined;
    });
    expect(stepsOf(name)).toEqual(['digests', 'resources', 'revStatus']);
    expect(s.lastReconcile?.summary).toBe(
      'digests resolved (1 images); Deployment created (2 replicas), Service created, PodDisruptionBudget created; status written, Ready=Unknown (Deploying)',
    );
    const history = await h.fetchHistory();
    // A registry that answers: one local activity for digests, resources and status (activities/combined.ts).
    const steps = historySteps(history).filter((st) => st.type !== 'readEntityOptions');
    expect(steps.map((st) => [st.type, st.local])).toEqual([['reconcileNewRevision', true]]);
    expect(steps[0]?.summary).toBe(
      `resolve image digests of Revision default/${name}, apply its Deployment, Service, HPA and PodDisruptionBudget, update its status`,
    );
    // The next pass (a pod turned Ready) is status-only: the status step alone.
    await h.signal('poke', { source: `Pod/default/${name}-deployment-abc`, reason: 'updated', token: 'd.pod.ready' });
    await eventually('second pass', async () => (await h.query<EntityState>('state')).totalReconciles === 2);
    expect(stepsOf(name)).toEqual(['digests', 'resources', 'revStatus', 'revStatus']);
  });

  it("tells the status step what the resources step found of the Service: not the Revision's, then its own once the old one went", async () => {
    const name = uniqueName('rev-foreign-svc');
    exists.add(name);
    foreignService.add(name);
    const h = await start('Revision', name);
    const first = await eventually('one pass', async () => {
      const st = await h.query<EntityState>('state');
      return st.totalReconciles === 1 ? st : undefined;
    });
    expect(first.lastReconcile?.summary).toContain('Service notOwned');
    expect(calls.filter((c) => c.name === name && c.step === 'revStatus').map((c) => c.arg)).toEqual([true]);
    // A pod turning Ready: a status-only pass, which did not look at the Service (the status keeps its mark).
    await h.signal('poke', { source: `Pod/default/${name}-deployment-abc`, reason: 'updated', token: 'd.pod.ready' });
    await eventually('second pass', async () => (await h.query<EntityState>('state')).totalReconciles === 2);
    // The old Service deleted by the garbage collector (the watcher's RevisionService informer): a full pass makes it.
    foreignService.delete(name);
    await h.signal('poke', { source: `KubeService/default/${name}`, resourceVersion: '9', reason: 'dependency' });
    const third = await eventually('third pass', async () => {
      const st = await h.query<EntityState>('state');
      return st.totalReconciles === 3 ? st : undefined;
    });
    expect(stepsOf(name)).toEqual(['digests', 'resources', 'revStatus', 'revStatus', 'resources', 'revStatus']);
    expect(calls.filter((c) => c.name === name && c.step === 'revStatus').map((c) => c.arg)).toEqual([true, undefined, false]);
    expect(third.lastReconcile?.summary).toContain('Service created');
  });

  it('a registry that fails the local attempt: a regular activity retries it with backoff until it answers', async () => {
    const name = uniqueName('rev-registry');
    exists.add(name);
    registryFailures.set(name, 2);
    const h = await start('Revision', name);
    await eventually('one pass', async () => (await h.query<EntityState>('state')).totalReconciles === 1, 30_000);
    // The local attempt (in the combined step) fails, then the regular activity fails once and answers.
    expect(stepsOf(name)).toEqual(['digests', 'digests', 'digests', 'resources', 'revStatus']);
    const steps = historySteps(await h.fetchHistory()).flatMap((st) => (st.type === 'readEntityOptions' ? [] : [[st.type, st.local, st.summary]]));
    expect(steps).toEqual([
      [
        'reconcileNewRevision',
        true,
        `resolve image digests of Revision default/${name}, apply its Deployment, Service, HPA and PodDisruptionBudget, update its status`,
      ],
      ['resolveRevisionDigests', false, `resolve image digests of Revision default/${name} (retried until the registry answers)`],
      ['reconcileRevisionResources', true, expect.stringContaining(`apply Deployment ${name}-deployment`)],
      ['updateRevisionStatus', true, `update Revision default/${name} status`],
    ]);
  });

  it('completes when the Revision is gone, whatever step notices', async () => {
    const name = uniqueName('rev-gone');
    exists.add(name);
    const h = await start('Revision', name);
    await eventually('one pass', async () => (await h.query<EntityState>('state')).totalReconciles === 1);
    exists.delete(name);
    await h.signal('poke', { source: `Revision/default/${name}`, resourceVersion: '2', reason: 'deleted' });
    await expect(h.result()).resolves.toContain('is gone');
  });
});
