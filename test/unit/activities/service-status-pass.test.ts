// A Service's status-only pass (activities/combined.ts reconcileServiceStatus): the Route is programmed from the
// Configuration and Revisions the Configuration's part read, with the status that part computed, beside its status
// write (ADR 0011, "Later") — and reads them itself when that part hands nothing over.
import { describe, expect, it } from 'vitest';
import { createCombinedActivities, type PartSteps } from '../../../activities/combined.js';
import { createConfigurationActivities } from '../../../activities/configuration.js';
import type { KubeClient } from '../../../activities/kube/client.js';
import { withObservations } from '../../../activities/observe.js';
import { createRouteActivities } from '../../../activities/route.js';
import { createServiceActivities } from '../../../activities/service.js';
import { observationOf, specOfObservation } from '../../../api/content-token.js';
import { Resources } from '../../../api/kinds.js';
import type { KubeObject } from '../../../api/meta.js';
import type { Configuration, Revision, Route, Service } from '../../../api/serving.js';
import { service } from '../../fixtures/serving.js';
import { KubeFake, refused, servicePassDeps } from './kube-fake.js';

const key = { namespace: 'default', name: 'hello' };

/**
 * A Service whose Configuration and Route exist and whose first Revision has just turned Ready. The client holds the
 * Configuration's status write until the KIngress has been applied, or 1 s: the order the two came in shows whether
 * the Route waited for that write.
 */
async function setup() {
  const fake = new KubeFake();
  fake.seed(Resources.Service, service('hello', 'default'));
  const client = fake.client();
  const held: KubeClient = Object.assign(Object.create(client) as KubeClient, {
    apply: async (type: Parameters<KubeClient['apply']>[0], obj: KubeObject, sub?: 'status') => {
      if (type.kind === 'Configuration' && sub === 'status') {
        for (let i = 0; i < 100 && !fake.calls.some((c) => c.kind === 'Ingress' && c.verb === 'apply'); i++)
          await new Promise((r) => setTimeout(r, 10));
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

describe('reconcileServiceStatus: the Route beside the Configuration’s status write', () => {
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
    // The Service was read while the children's parts ran; its status is written last, from both as they wrote them
    // (the Route read once, by its own part).
    expect(at(fake, 'get', 'Service')).toBeLessThan(at(fake, 'status', 'Route'));
    expect(count(fake, 'get', 'Route')).toBe(1);
    expect(at(fake, 'status', 'Service')).toBeGreaterThan(Math.max(at(fake, 'status', 'Configuration'), at(fake, 'status', 'Route')));
    const svc = fake.get<Service>(Resources.Service, 'default', 'hello')!;
    expect(svc.status?.latestReadyRevisionName).toBe('hello-00001');
    expect(svc.status?.traffic).toEqual(route.status?.traffic);
    expect(svc.status?.url).toBe('http://hello.default.example.com');
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
    expect(route.status?.conditions?.find((c) => c.type === 'Ready')?.status).not.toBe('True');
    // The retry runs both again: everything Ready.
    const parts = await pass();
    expect(parts.route).toMatchObject({ ready: 'True' });
    expect(parts.service).toMatchObject({ ready: 'True' });
  });
});
