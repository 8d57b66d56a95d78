// The Service activities against an in-memory API server: removed fields reach the Configuration and Route, edits
// to them are reverted, a pass with nothing to do writes nothing, and a refused apply shows on the Service.
import { describe, expect, it } from 'vitest';
import { createServiceActivities } from '../../../activities/service.js';
import { Resources } from '../../../api/kinds.js';
import { serviceConditionSet } from '../../../api/lifecycle/service.js';
import type { Configuration, Route, Service } from '../../../api/serving.js';
import { revisionConfig } from '../../fixtures/revision.js';
import { service, withLabels } from '../../fixtures/serving.js';
import { KubeFake, refused, fakeDeps } from './kube-fake.js';

const key = { namespace: 'default', name: 'hello' };

function setup(svc: Service, current: () => ReturnType<typeof revisionConfig> = () => revisionConfig()) {
  const fake = new KubeFake();
  fake.seed(Resources.Service, svc);
  const { deps, recorded } = fakeDeps(fake, { revisionConfig: current });
  return { fake, recorded, acts: createServiceActivities(deps) };
}

const withLimits = (s: Service) =>
  void (s.spec.template.spec.containers = [{ image: 'nginx', env: [{ name: 'MODE', value: 'fast' }], resources: { limits: { memory: '1Gi' } } }]);

describe('reconcileServiceConfiguration / reconcileServiceRoute', () => {
  it('regression: a memory limit, env var and label the Service drops leave its Configuration and Route', async () => {
    const { fake, acts } = setup(service('hello', 'default', withLimits, withLabels({ tier: 'gold' })));
    expect(await acts.reconcileServiceConfiguration(key)).toMatchObject({ outcome: 'applied', action: 'created' });
    expect(await acts.reconcileServiceRoute(key)).toMatchObject({ outcome: 'applied', action: 'created' });
    expect(fake.get<Configuration>(Resources.Configuration, 'default', 'hello')!.spec.template.spec.containers[0]!.resources).toEqual({
      limits: { memory: '1Gi' },
    });

    fake.edit<Service>(Resources.Service, 'default', 'hello', (s) => {
      s.spec.template.spec.containers = [{ image: 'nginx' }];
      delete s.metadata.labels;
    });
    expect(await acts.reconcileServiceConfiguration(key)).toMatchObject({ outcome: 'applied', action: 'updated' });
    expect(await acts.reconcileServiceRoute(key)).toMatchObject({ outcome: 'applied', action: 'updated' });
    const cfg = fake.get<Configuration>(Resources.Configuration, 'default', 'hello')!;
    const container = cfg.spec.template.spec.containers[0]!;
    expect(container.resources).toBeUndefined();
    expect(container.env).toBeUndefined();
    expect(cfg.metadata.labels?.['tier']).toBeUndefined();
    expect(fake.get<Route>(Resources.Route, 'default', 'hello')!.metadata.labels?.['tier']).toBeUndefined();
  });

  it('regression: a config-defaults change leaves an existing Configuration alone; a new Service gets the new default', async () => {
    let cfg = revisionConfig();
    const { fake, acts } = setup(service('hello', 'default'), () => cfg);
    await acts.reconcileServiceConfiguration(key);
    const before = fake.get<Configuration>(Resources.Configuration, 'default', 'hello')!;
    expect(before.spec.template.spec.containerConcurrency).toBe(cfg.defaults.containerConcurrency);
    cfg = revisionConfig((c) => void (c.defaults = { ...c.defaults, containerConcurrency: 7 }));
    expect(await acts.reconcileServiceConfiguration(key)).toMatchObject({ action: 'unchanged' });
    expect(fake.get<Configuration>(Resources.Configuration, 'default', 'hello')!.spec.template.spec.containerConcurrency).toBe(
      before.spec.template.spec.containerConcurrency,
    );
    fake.seed(Resources.Service, service('fresh', 'default'));
    await acts.reconcileServiceConfiguration({ namespace: 'default', name: 'fresh' });
    expect(fake.get<Configuration>(Resources.Configuration, 'default', 'fresh')!.spec.template.spec.containerConcurrency).toBe(7);
  });

  it('regression: with a bring-your-own Revision name the Route waits until that Revision exists and the Configuration caught up', async () => {
    const byo = (s: Service) => void (s.spec.template.metadata = { name: 'hello-blue' });
    const { fake, acts } = setup(service('hello', 'default', byo));
    expect(await acts.reconcileServiceRoute(key)).toEqual({ outcome: 'held', name: 'hello', reason: 'waiting for Revision "hello-blue"' });
    expect(fake.get<Route>(Resources.Route, 'default', 'hello')).toBeUndefined();
    await acts.reconcileServiceConfiguration(key);
    // The Configuration exists at generation 1 but has not observed it, and hello-blue is not there yet.
    expect(await acts.reconcileServiceRoute(key)).toMatchObject({ outcome: 'held' });
    fake.edit<Configuration>(Resources.Configuration, 'default', 'hello', (c) => void (c.status = { observedGeneration: c.metadata.generation }));
    expect(await acts.reconcileServiceRoute(key)).toMatchObject({ outcome: 'held' });
    // A Revision of that name made by someone else: the name is taken, and the Route stays as it is.
    fake.seed(Resources.Revision, { apiVersion: 'serving.knative.dev/v1', kind: 'Revision', metadata: { name: 'hello-blue', namespace: 'default' } });
    expect(await acts.reconcileServiceRoute(key)).toEqual({ outcome: 'held', name: 'hello', reason: 'Revision name "hello-blue" is taken' });
    // The Configuration's own Revision of this generation: the Route follows.
    const cfg = fake.get<Configuration>(Resources.Configuration, 'default', 'hello')!;
    fake.edit(Resources.Revision, 'default', 'hello-blue', (r) => {
      r.metadata.labels = { 'serving.knative.dev/configurationGeneration': String(cfg.metadata.generation) };
      r.metadata.ownerReferences = [
        { apiVersion: 'serving.knative.dev/v1', kind: 'Configuration', name: 'hello', uid: cfg.metadata.uid ?? '', controller: true },
      ];
    });
    expect(await acts.reconcileServiceRoute(key)).toMatchObject({ outcome: 'applied', action: 'created' });
  });

  it('a pass with nothing to do writes nothing', async () => {
    const { fake, acts } = setup(service('hello', 'default', withLimits));
    await acts.reconcileServiceConfiguration(key);
    await acts.reconcileServiceRoute(key);
    fake.calls = [];
    expect(await acts.reconcileServiceConfiguration(key)).toMatchObject({ action: 'unchanged' });
    expect(await acts.reconcileServiceRoute(key)).toMatchObject({ action: 'unchanged' });
    expect(fake.writes()).toEqual([]);
  });

  it("a user's edit of the Route's spec is reverted", async () => {
    const { fake, acts } = setup(service('hello', 'default'));
    await acts.reconcileServiceRoute(key);
    const want = fake.get<Route>(Resources.Route, 'default', 'hello')!.spec;
    fake.edit<Route>(Resources.Route, 'default', 'hello', (r) => void (r.spec.traffic = [{ revisionName: 'hello-00001', percent: 100 }]));
    expect(await acts.reconcileServiceRoute(key)).toMatchObject({ action: 'updated' });
    expect(fake.get<Route>(Resources.Route, 'default', 'hello')!.spec).toEqual(want);
  });

  it("regression (chaos run): a field someone adds inside the Route's one traffic target (a tag) is reverted too", async () => {
    const { fake, acts } = setup(service('hello', 'default'));
    await acts.reconcileServiceRoute(key);
    const want = fake.get<Route>(Resources.Route, 'default', 'hello')!.spec;
    fake.edit<Route>(Resources.Route, 'default', 'hello', (r) => void (r.spec.traffic = r.spec.traffic!.map((t) => ({ ...t, tag: 'hijack' }))));
    expect(await acts.reconcileServiceRoute(key)).toMatchObject({ action: 'updated' });
    expect(fake.get<Route>(Resources.Route, 'default', 'hello')!.spec).toEqual(want);
    // The webhook's defaults on a stored Route (latestRevision, percent) are no edit.
    fake.calls = [];
    expect(await acts.reconcileServiceRoute(key)).toMatchObject({ action: 'unchanged' });
    expect(fake.writes()).toEqual([]);
  });

  it("regression: a refused apply shows on the Service (ConfigurationsReady False, the API server's message) and as one Warning Event", async () => {
    const { fake, acts, recorded } = setup(service('hello', 'default'));
    const denied = 'admission webhook "policy.example.com" denied the request: images must come from registry.example.com';
    fake.failNext('apply', Resources.Configuration, refused(400, 'BadRequest', denied));
    await expect(acts.reconcileServiceConfiguration(key)).rejects.toThrow(denied);
    const status = fake.get<Service>(Resources.Service, 'default', 'hello')!.status;
    const message = `failed to create Configuration "hello": ${denied}`;
    expect(serviceConditionSet.get(status, 'ConfigurationsReady')).toMatchObject({ status: 'False', reason: 'CreationFailed', message });
    expect(serviceConditionSet.get(status, 'Ready')).toMatchObject({ status: 'False', reason: 'CreationFailed', message });
    expect(recorded).toEqual([{ type: 'Warning', reason: 'CreationFailed', message }]);

    // Once the webhook lets it through, the retry creates it and the status step reports from the children again.
    expect(await acts.reconcileServiceConfiguration(key)).toMatchObject({ action: 'created' });
    await acts.reconcileServiceRoute(key);
    await acts.updateServiceStatus(key);
    const after = fake.get<Service>(Resources.Service, 'default', 'hello')!.status;
    expect(serviceConditionSet.get(after, 'ConfigurationsReady')?.reason).toBe('OutOfDate');
  });

  it('a refused Route update: RoutesReady False InternalError', async () => {
    const { fake, acts, recorded } = setup(service('hello', 'default'));
    await acts.reconcileServiceRoute(key);
    fake.edit<Service>(Resources.Service, 'default', 'hello', (s) => void (s.spec.traffic = [{ latestRevision: true, percent: 100, tag: 'x' }]));
    fake.failNext('apply', Resources.Route, refused(422, 'Invalid', 'Route.serving.knative.dev "hello" is invalid: spec.traffic[0].tag: bad'));
    await expect(acts.reconcileServiceRoute(key)).rejects.toThrow('is invalid');
    const status = fake.get<Service>(Resources.Service, 'default', 'hello')!.status;
    expect(serviceConditionSet.get(status, 'RoutesReady')).toMatchObject({ status: 'False', reason: 'InternalError' });
    expect(recorded.at(-1)).toMatchObject({ type: 'Warning', reason: 'InternalError' });
  });
});
