// A Service's full pass as one local activity (activities/combined.ts reconcileServiceFull): the six steps it
// replaces, in the same order, with the same writes and the same results as when each ran as a step of its own.
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { createCombinedActivities, type PartSteps } from '../../../activities/combined.js';
import { createConfigurationActivities } from '../../../activities/configuration.js';
import type { ActivityDeps, ConfigSource } from '../../../activities/deps.js';
import { withObservations } from '../../../activities/observe.js';
import { createRouteActivities } from '../../../activities/route.js';
import { createServiceActivities } from '../../../activities/service.js';
import { parseDomainConfig } from '../../../api/config/domain.js';
import { defaultFeaturesConfig } from '../../../api/config/features.js';
import { parseNetworkConfig } from '../../../api/config/network.js';
import { Resources } from '../../../api/kinds.js';
import { revisionConfig } from '../../fixtures/revision.js';
import { service } from '../../fixtures/serving.js';
import { KubeFake } from './kube-fake.js';

const key = { namespace: 'default', name: 'hello' };

function valueOf<T>(p: { ok: true; value: T } | { ok: false; error: string }): T {
  if (!p.ok) throw new Error(p.error);
  return p.value;
}

/** A cluster with one new Service, and its steps over the in-memory API server. */
function setup() {
  const fake = new KubeFake();
  fake.seed(Resources.Service, service('hello', 'default'));
  const config = {
    revisionConfig: () => revisionConfig(),
    networkConfig: () => valueOf(parseNetworkConfig({ 'ingress-class': 'istio.ingress.networking.knative.dev' })),
    domainConfig: () => valueOf(parseDomainConfig({ 'example.com': '' })),
    featuresConfig: () => defaultFeaturesConfig(),
    systemNamespace: 'knative-serving',
  } as unknown as ConfigSource;
  const deps = {
    kube: fake.client(),
    events: { record: async () => undefined },
    log: pino({ level: 'silent' }),
    config,
    digests: { resolve: async () => '' },
    now: () => new Date('2026-11-27T10:00:00Z'),
  } as unknown as ActivityDeps;
  const steps = withObservations({ ...createServiceActivities(deps), ...createConfigurationActivities(deps), ...createRouteActivities(deps) });
  return { fake, steps, combined: createCombinedActivities(steps as unknown as PartSteps) };
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
