// A Service's full pass as one local activity (activities/combined.ts reconcileServiceFull): the six steps it
// replaces, in the same order, with the same writes and the same results as when each ran as a step of its own; and,
// when it created a Revision, its wait in the watcher's cache for that Revision and the status-only pass after it.
import { describe, expect, it } from 'vitest';
import { createCombinedActivities, type PartSteps } from '../../../activities/combined.js';
import { createConfigurationActivities } from '../../../activities/configuration.js';
import { withObservations } from '../../../activities/observe.js';
import { createRouteActivities } from '../../../activities/route.js';
import { createServiceActivities } from '../../../activities/service.js';
import { Resources } from '../../../api/kinds.js';
import type { MetadataCache } from '../../../activities/deps.js';
import type { ObservedResult } from '../../../activities/observe.js';
import type { KubeObject } from '../../../api/meta.js';
import type { Configuration, Revision } from '../../../api/serving.js';
import { service } from '../../fixtures/serving.js';
import { contentToken, observationCovers } from '../../../api/content-token.js';
import { beginPassObservations, endPassObservations, poolStepObservations } from '../../../workflows/activities.js';
import { KubeFake, servicePassDeps } from './kube-fake.js';

const key = { namespace: 'default', name: 'hello' };

type Until = NonNullable<MetadataCache['until']>;

/** A cluster with new Services (`hello` and `names`), and their steps over the in-memory API server. */
function setup(opts: { until?: (fake: KubeFake) => Until; names?: string[] } = {}) {
  const fake = new KubeFake();
  for (const name of ['hello', ...(opts.names ?? [])]) fake.seed(Resources.Service, service(name, 'default'));
  const deps = servicePassDeps(fake.observingClient());
  const steps = withObservations({ ...createServiceActivities(deps), ...createConfigurationActivities(deps), ...createRouteActivities(deps) });
  const cache = opts.until ? { until: opts.until(fake) } : undefined;
  return { fake, steps, combined: createCombinedActivities(steps as unknown as PartSteps, 1000, cache) };
}

/** The writes a pass made, as `verb kind name[/sub]`. */
const writesOf = (fake: KubeFake) => fake.writes().map((c) => `${c.verb} ${c.kind} ${c.name}`);

describe('reconcileServiceFull', () => {
  it('creates a new Service’s children as the six steps did one by one: the same writes in the same order, the same results', async () => {
    // The steps one by one, as the workflow ran them before (workflows/service.ts, unpatched).
    const one = setup();
    const cfg = await one.steps.reconcileServiceConfiguration(key);
    const rev = await one.steps.reconcileConfigurationRevision(key, { written: {} });
    const written = rev.outcome !== 'gone' ? (rev.written ?? {}) : {};
    const cfgStatus = await one.steps.updateConfigurationStatus(key, undefined, { written });
    const routeApply = await one.steps.reconcileServiceRoute(key);
    const route = await one.steps.reconcileRoute(key, { reportNotOwned: true, written });
    const status = await one.steps.updateServiceStatus(key);

    const all = setup();
    const parts = await all.combined.reconcileServiceFull(key, { written: {} });
    expect(parts).toEqual({ configuration: cfg, revision: rev, configurationStatus: cfgStatus, routeApply, route, service: status });
    expect(writesOf(all.fake)).toEqual(writesOf(one.fake));
    expect(parts.revision).toMatchObject({ outcome: 'created', revision: 'hello-00001' });
    // The Revision right after its Configuration: nothing of the Route's before it.
    const order = writesOf(all.fake);
    const created = order.findIndex((w) => w.includes('Revision hello-00001'));
    expect(created).toBeGreaterThan(order.findIndex((w) => w.includes('Configuration hello')));
    expect(created).toBeLessThan(order.findIndex((w) => w.includes('Route hello')));
    expect(order.at(-1)).toBe('status Service hello');
  });

  it('a Service that is gone: the Configuration part says so, and nothing else runs or is written', async () => {
    const { fake, combined } = setup();
    fake.objects.clear();
    fake.calls = [];
    expect(await combined.reconcileServiceFull(key, { written: {} })).toEqual({ configuration: { outcome: 'gone' } });
    expect(fake.writes()).toEqual([]);
    expect(fake.calls.map((c) => c.kind).sort()).toEqual(['Configuration', 'Service']);
  });
});

/** Marks a Revision Ready as its own first pass would. */
function markReady(fake: KubeFake, name: string): void {
  fake.edit<Revision>(Resources.Revision, 'default', name, (r) => {
    r.status = { observedGeneration: 1, conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: '2026-11-27T10:00:00Z' }] };
  });
}

describe('reconcileServiceFull: the Revision it created, waited for', () => {
  it('waits in the cache for that Revision, then runs the status-only pass in the same step, after the full pass', async () => {
    const waits: { kind: string; labels: unknown; ms: number; before: boolean; after: boolean }[] = [];
    const until =
      (fake: KubeFake): Until =>
      async (type, _ns, labels, test, ms) => {
        const revs = () => fake.list<KubeObject>(Resources.Revision, 'default');
        const before = test(revs());
        markReady(fake, 'hello-00001'); // the Revision's own pass, meanwhile
        const after = test(revs());
        waits.push({ kind: type.kind, labels, ms, before, after });
        return after;
      };
    const t = setup({ until });
    const parts = await t.combined.reconcileServiceFull(key, { written: {} });
    expect(waits).toEqual([{ kind: 'Revision', labels: { 'serving.knative.dev/configuration': 'hello' }, ms: 1000, before: false, after: true }]);
    expect(Object.keys(parts)).toEqual([
      'configuration',
      'revision',
      'configurationStatus',
      'routeApply',
      'route',
      'service',
      'statusConfiguration',
      'statusRoute',
      'statusService',
    ]);
    expect(parts.statusConfiguration).toMatchObject({ outcome: 'written' });
    expect(t.fake.get<Configuration>(Resources.Configuration, 'default', 'hello')?.status?.latestReadyRevisionName).toBe('hello-00001');
    // After the wait: the Configuration's status names its Ready Revision, then the Route and the Service recompute.
    const writes = writesOf(t.fake);
    expect(writes.lastIndexOf('status Configuration hello')).toBeGreaterThan(writes.indexOf('status Service hello'));
    expect(parts.statusService?.outcome).toMatch(/^(written|unchanged)$/);
    // Pooled as the workflow pools a combined step's parts, the pass covers the Revision's Ready: the poke its
    // status write sends brings no other pass. (The full pass's own reads saw it not Ready yet.)
    beginPassObservations();
    for (const part of Object.values(parts) as ObservedResult[]) poolStepObservations(part.observed, part);
    const { observed } = endPassObservations();
    const ready = t.fake.get(Resources.Revision, 'default', 'hello-00001')!;
    expect(observationCovers(observed['Revision/default/hello-00001'], contentToken(ready, 'dependency'))).toBe(true);
    expect(observationCovers(parts.configurationStatus?.observed?.['Revision/default/hello-00001'], contentToken(ready, 'dependency'))).toBe(false);
  });

  it('a Revision that does not settle in time: the full pass alone, as before', async () => {
    const t = setup({ until: () => async () => false });
    const parts = await t.combined.reconcileServiceFull(key, { written: {} });
    expect(Object.keys(parts)).toEqual(['configuration', 'revision', 'configurationStatus', 'routeApply', 'route', 'service']);
  });

  it('a pass that created no Revision does not wait', async () => {
    let waited = 0;
    const t = setup({
      until: () => async () => {
        waited += 1;
        return true;
      },
    });
    await t.combined.reconcileServiceFull(key, { written: {} });
    expect(waited).toBe(1);
    const again = await t.combined.reconcileServiceFull(key, { written: {} });
    expect(again.revision).toMatchObject({ outcome: 'exists' });
    expect(waited).toBe(1);
    expect(again.statusService).toBeUndefined();
  });

  it('a child’s spec changed during the wait stays news: the status part’s read of it covers no spec', async () => {
    const t = setup({
      until: (fake) => async () => {
        markReady(fake, 'hello-00001');
        // Someone edits the Configuration's template while the step waits.
        fake.edit<Configuration>(Resources.Configuration, 'default', 'hello', (c) => {
          c.spec.template.metadata = { ...c.spec.template.metadata, annotations: { edited: 'by hand' } };
        });
        return true;
      },
    });
    const parts = await t.combined.reconcileServiceFull(key, { written: {} });
    expect(parts.statusService).toBeDefined();
    // Pooled as the workflow pools the parts: the edit's poke is not covered, so it brings a full pass.
    beginPassObservations();
    for (const part of Object.values(parts) as ObservedResult[]) poolStepObservations(part.observed, part);
    const { observed } = endPassObservations();
    const edited = t.fake.get(Resources.Configuration, 'default', 'hello')!;
    expect(observationCovers(observed['Configuration/default/hello'], contentToken(edited, 'dependency'))).toBe(false);
    expect(observationCovers(observed['Configuration/default/hello'], contentToken(edited, 'self'))).toBe(false);
  });

  it('waits for at most four passes at once: a fifth goes on without waiting', async () => {
    const names = ['a', 'b', 'c', 'd', 'e'];
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let waiting = 0;
    const t = setup({
      names,
      until: () => async () => {
        waiting += 1;
        await gate;
        return false;
      },
    });
    const first = names.slice(0, 4).map((name) => t.combined.reconcileServiceFull({ namespace: 'default', name }, { written: {} }));
    for (let i = 0; i < 100 && waiting < 4; i++) await new Promise((r) => setTimeout(r, 5));
    expect(waiting).toBe(4);
    const fifth = await t.combined.reconcileServiceFull({ namespace: 'default', name: 'e' }, { written: {} });
    expect(fifth.revision).toMatchObject({ outcome: 'created' });
    expect(waiting).toBe(4);
    release();
    await Promise.all(first);
    // Slots are given back: the next pass that creates a Revision waits again.
    await t.combined.reconcileServiceFull(key, { written: {} });
    expect(waiting).toBe(5);
  });
});
