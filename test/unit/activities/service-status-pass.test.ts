// A Service's status-only pass (activities/combined.ts reconcileServiceStatus): the Route is programmed from the
// Configuration and Revisions the Configuration's part read, with the status that part computed, beside its status
// write (ADR 0011, "Later") — and reads them itself when that part hands nothing over; the Service's status is
// written from the Route's status as its part is about to write it, beside that write.
import { describe, expect, it } from 'vitest';
import { createCombinedActivities, type PartSteps } from '../../../activities/combined.js';
import { createConfigurationActivities } from '../../../activities/configuration.js';
import type { KubeClient } from '../../../kube/client.js';
import { withObservations } from '../../../activities/observe.js';
import { createRouteActivities } from '../../../activities/route.js';
import { createServiceActivities } from '../../../activities/service.js';
import { observationOf, specOfObservation } from '../../../api/content-token.js';
import { Resources } from '../../../api/kinds.js';
import type { KubeObject } from '../../../api/meta.js';
import type { Condition, Configuration, Revision, Route, Service } from '../../../api/serving.js';
import { service } from '../../fixtures/serving.js';
import { KubeFake, refused, servicePassDeps } from './kube-fake.js';

const key = { namespace: 'default', name: 'hello' };

/** A status write of `kind` the client holds until `until` holds of the calls made so far, or 1 s. */
interface Hold {
  kind: string;
  until: (calls: KubeFake['calls']) => boolean;
}

/** The Configuration's status write held until the KIngress has been applied: whether the Route waited for it. */
const configurationUntilIngress: Hold = { kind: 'Configuration', until: (calls) => calls.some((c) => c.kind === 'Ingress' && c.verb === 'apply') };

/**
 * A Service whose Configuration and Route exist and whose first Revision has just turned Ready. The client holds one
 * status write (`hold`) until something else has happened, or 1 s: the order the two came in shows whether one
 * waited for the other.
 */
async function setup(hold: Hold = configurationUntilIngress) {
  const fake = new KubeFake();
  fake.seed(Resources.Service, service('hello', 'default'));
  const client = fake.client();
  const held: KubeClient = Object.assign(Object.create(client) as KubeClient, {
    apply: async (type: Parameters<KubeClient['apply']>[0], obj: KubeObject, sub?: 'status') => {
      if (type.kind === hold.kind && sub === 'status') {
        for (let i = 0; i < 100 && !hold.until(fake.calls); i++) await new Promise((r) => setTimeout(r, 10));
      }
      return client.apply(type, obj, sub);
    },
  });
  const deps = servicePassDeps(held);
  const svc = createServiceActivities(deps);
  const cfg = createConfigurationActivities(deps);
  const steps = withObservations({ ...svc, ...cfg, ...createRouteActivities(deps) });
  await svc.reconcileServiceConfiguration(key);
  await svc.reconcileServiceRoute(key);
  expect(await cfg.reconcileConfigurationRevision(key)).toMatchObject({ outcome: 'created', revision: 'hello-00001' });
  fake.edit<Revision>(Resources.Revision, 'default', 'hello-00001', (r) => {
    r.status = { observedGeneration: 1, conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: '2026-11-27T09:59:59Z' }] };
  });
  fake.calls = [];
  const combined = createCombinedActivities(steps as unknown as PartSteps);
  // The spec the last full pass applied the children for: the Service's as stored.
  const expectSpec = specOfObservation(observationOf(fake.get(Resources.Service, 'default', 'hello')!));
  const pass = () => combined.reconcileServiceStatus(key, { configuration: true, route: true, written: {}, expectSpec });
  return { fake, pass };
}

const at = (fake: KubeFake, verb: string, kind: string) => fake.calls.findIndex((c) => c.verb === verb && c.kind === kind);
const count = (fake: KubeFake, verb: string, kind: string) => fake.calls.filter((c) => c.verb === verb && c.kind === kind).length;
/** The status of an object's condition of `type`. */
const conditionStatus = (obj: { status?: { conditions?: Condition[] } } | undefined, type: string) =>
  obj?.status?.conditions?.find((c) => c.type === type)?.status;

describe('reconcileServiceStatus: the parts side by side', () => {
  it('programs the Route from the status the Configuration’s part computed, before that status is written', async () => {
    const { fake, pass } = await setup();
    const parts = await pass();
    expect(parts.configuration).toMatchObject({ outcome: 'written', ready: 'True' });
    expect(parts.route).toMatchObject({ outcome: 'written', ready: 'True', ingress: 'created' });
    expect(parts.service).toMatchObject({ outcome: 'written', ready: 'True' });
    // The KIngress went out while the Configuration's status write was held: the Route did not wait for it.
    expect(at(fake, 'apply', 'Ingress')).toBeGreaterThanOrEqual(0);
    expect(at(fake, 'apply', 'Ingress')).toBeLessThan(at(fake, 'status', 'Configuration'));
    // Neither the Configuration nor its Revision was read again by the Route's part.
    expect(count(fake, 'get', 'Configuration')).toBe(1);
    expect(count(fake, 'get', 'Revision')).toBe(0);
    const route = fake.get<Route>(Resources.Route, 'default', 'hello')!;
    expect(route.status?.traffic).toEqual([{ revisionName: 'hello-00001', latestRevision: true, percent: 100 }]);
    expect(fake.get<Configuration>(Resources.Configuration, 'default', 'hello')!.status?.latestReadyRevisionName).toBe('hello-00001');
    // The Service was read while the children's parts ran; its status is written once the Configuration's is, from
    // both children's statuses as their parts computed them (the Route read once, by its own part).
    expect(at(fake, 'get', 'Service')).toBeLessThan(at(fake, 'status', 'Route'));
    expect(count(fake, 'get', 'Route')).toBe(1);
    expect(at(fake, 'status', 'Service')).toBeGreaterThan(at(fake, 'status', 'Configuration'));
    const svc = fake.get<Service>(Resources.Service, 'default', 'hello')!;
    expect(svc.status?.latestReadyRevisionName).toBe('hello-00001');
    expect(svc.status?.traffic).toEqual(route.status?.traffic);
    expect(svc.status?.url).toBe('http://hello.default.example.com');
  });

  it('writes the Service’s status beside the Route’s, from the status the Route’s part is about to write', async () => {
    const { fake, pass } = await setup({ kind: 'Route', until: (calls) => calls.some((c) => c.kind === 'Service' && c.verb === 'status') });
    const parts = await pass();
    expect(parts.route).toMatchObject({ outcome: 'written', ready: 'True' });
    expect(parts.service).toMatchObject({ outcome: 'written', ready: 'True' });
    // The Service's status went out while the Route's was held: it did not wait for that write.
    expect(at(fake, 'status', 'Service')).toBeGreaterThanOrEqual(0);
    expect(at(fake, 'status', 'Service')).toBeLessThan(at(fake, 'status', 'Route'));
    expect(count(fake, 'get', 'Route')).toBe(1);
    const route = fake.get<Route>(Resources.Route, 'default', 'hello')!;
    const svc = fake.get<Service>(Resources.Service, 'default', 'hello')!;
    expect(conditionStatus(route, 'Ready')).toBe('True');
    expect(svc.status?.traffic).toEqual(route.status?.traffic);
    expect(conditionStatus(svc, 'RoutesReady')).toBe('True');
  });

  it('a Route part that fails before its hand-over fails the Service’s part before it writes', async () => {
    const { fake, pass } = await setup();
    fake.failNext('apply', Resources.KIngress, refused(500, 'InternalError', 'etcd timeout'));
    await expect(pass()).rejects.toThrow('etcd timeout');
    expect(at(fake, 'status', 'Route')).toBe(-1);
    expect(at(fake, 'status', 'Service')).toBe(-1);
    const parts = await pass();
    expect(parts.route).toMatchObject({ ready: 'True' });
    expect(parts.service).toMatchObject({ ready: 'True' });
  });

  it('a Route status write refused after its hand-over fails the step; the retry writes it', async () => {
    const { fake, pass } = await setup();
    fake.failNext('status', Resources.Route, refused(500, 'InternalError', 'etcd timeout'));
    await expect(pass()).rejects.toThrow('etcd timeout');
    // The Service's status went beside it, from the Route's status as computed: true of the KIngress and its
    // VirtualServices, which are programmed; only the Route's own record of it lags until the retry.
    const routeReady = () => conditionStatus(fake.get<Route>(Resources.Route, 'default', 'hello'), 'Ready');
    expect(routeReady()).not.toBe('True');
    const svc = fake.get<Service>(Resources.Service, 'default', 'hello')!;
    expect(conditionStatus(svc, 'Ready')).toBe('True');
    fake.calls = [];
    const parts = await pass();
    expect(parts.route).toMatchObject({ outcome: 'written', ready: 'True' });
    expect(parts.service).toMatchObject({ ready: 'True' });
    expect(routeReady()).toBe('True');
    // The Service's status, written beside the refused write, was already what the retry computes.
    expect(count(fake, 'status', 'Service')).toBe(0);
    const route = fake.get<Route>(Resources.Route, 'default', 'hello')!;
    expect(fake.get<Service>(Resources.Service, 'default', 'hello')!.status?.traffic).toEqual(route.status?.traffic);
  });

  it('a Configuration part that fails before its hand-over: the Route reads for itself, and the step fails', async () => {
    const { fake, pass } = await setup();
    fake.failNext('get', Resources.Configuration, refused(500, 'InternalError', 'etcd timeout', 'GET'));
    await expect(pass()).rejects.toThrow('etcd timeout');
    // The Route's own read found the Configuration as stored: no latest ready Revision yet, so no traffic.
    expect(count(fake, 'get', 'Configuration')).toBe(2);
    expect(at(fake, 'status', 'Configuration')).toBe(-1);
    expect(at(fake, 'status', 'Service')).toBe(-1);
    const route = fake.get<Route>(Resources.Route, 'default', 'hello')!;
    expect(conditionStatus(route, 'Ready')).not.toBe('True');
    // The retry runs both again: everything Ready.
    const parts = await pass();
    expect(parts.route).toMatchObject({ ready: 'True' });
    expect(parts.service).toMatchObject({ ready: 'True' });
  });
});
