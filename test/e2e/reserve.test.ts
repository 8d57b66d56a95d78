// Reserve Revisions as Knative users see them (ADR 0018): a Revision no Route references any more scales to zero
// whatever its min-scale, stays Ready with Active False NoTraffic, and a split that names it again is reported by the
// Route only once its pods are back up to min-scale. The HPA class: its HPA goes with the reserve state, and a new
// Revision is Ready only once its pods reach min-scale. Driven with kubectl on kwok's nodes.
import { afterAll, describe, expect, it } from 'vitest';
import type { Condition, Revision, Route, Service } from '../../api/serving.js';
import { apply, getObject, kubectl, kubectlJson } from '../harness/cluster.js';
import { eventually } from '../harness/wait.js';

interface Pod {
  metadata: { deletionTimestamp?: string };
  status?: { conditions?: { type: string; status: string; lastTransitionTime?: string }[] };
}
interface Deployment {
  spec: { replicas?: number };
  status?: { replicas?: number; readyReplicas?: number };
}

const HPA_CLASS = 'hpa.autoscaling.knative.dev';
const cond = (o: { status?: { conditions?: Condition[] } } | undefined, t: string) => o?.status?.conditions?.find((c) => c.type === t);

function ksvc(name: string, image: string, annotations: Record<string, string>, traffic?: object[]): object {
  return {
    apiVersion: 'serving.knative.dev/v1',
    kind: 'Service',
    metadata: { name, namespace: 'default' },
    spec: {
      template: { metadata: { annotations }, spec: { containers: [{ image, ports: [{ containerPort: 80 }] }] } },
      ...(traffic ? { traffic } : {}),
    },
  };
}

/** The Revision's pods (not terminating), and the Ready times of those that are Ready. */
async function podsOf(rev: string): Promise<{ count: number; ready: string[] }> {
  const pods = await kubectlJson<{ items: Pod[] }>(['get', 'pods', '-n', 'default', '-l', `serving.knative.dev/revision=${rev}`]);
  const live = pods.items.filter((p) => !p.metadata.deletionTimestamp);
  const ready = live.flatMap(
    (p) => p.status?.conditions?.filter((c) => c.type === 'Ready' && c.status === 'True').map((c) => c.lastTransitionTime ?? '') ?? [],
  );
  return { count: live.length, ready };
}

async function readyService(name: string, check: (s: Service) => boolean): Promise<Service> {
  return eventually(
    `Service ${name} Ready`,
    async () => {
      const s = await getObject<Service>('ksvc', name);
      return cond(s, 'Ready')?.status === 'True' && s && check(s) ? s : undefined;
    },
    180_000,
  );
}

/** `rev` reserve, scaled to zero (no pod left), Ready with Active False NoTraffic. */
async function scaledToZero(rev: string): Promise<Revision> {
  await eventually(
    `${rev} without pods`,
    async () => {
      const d = await getObject<Deployment>('deployment', `${rev}-deployment`);
      return d?.spec.replicas === 0 && (await podsOf(rev)).count === 0;
    },
    120_000,
  );
  const r = (await getObject<Revision>('revision', rev))!;
  expect(r.metadata.labels?.['serving.knative.dev/routingState']).toBe('reserve');
  expect(cond(r, 'Ready')?.status).toBe('True');
  expect(cond(r, 'Active')).toMatchObject({ status: 'False', reason: 'NoTraffic', message: 'The target is not receiving traffic.' });
  return r;
}

afterAll(async () => {
  await kubectl(['delete', 'ksvc', 'reserve', 'reserve-hpa', '--ignore-not-found']);
});

describe('a reserve Revision holds no pods and comes back before a Route sends it traffic', () => {
  const minScale = { 'autoscaling.knative.dev/min-scale': '2' };

  it('after a rollout the old Revision scales to 0 and stays Ready with Active False NoTraffic', async () => {
    await apply(ksvc('reserve', 'nginx:1.27', minScale));
    await readyService('reserve', (s) => s.status?.latestReadyRevisionName === 'reserve-00001');
    expect((await podsOf('reserve-00001')).ready.length).toBeGreaterThanOrEqual(2);
    await apply(ksvc('reserve', 'nginx:1.28', minScale));
    await readyService('reserve', (s) => s.status?.traffic?.[0]?.revisionName === 'reserve-00002');
    await scaledToZero('reserve-00001');
    expect((await podsOf('reserve-00002')).ready.length).toBeGreaterThanOrEqual(2);
  });

  it('a split back to it is reported only once its pods are Ready at min-scale again', async () => {
    await apply(
      ksvc('reserve', 'nginx:1.28', minScale, [
        { latestRevision: true, percent: 50 },
        { revisionName: 'reserve-00001', percent: 50 },
      ]),
    );
    const route = await eventually(
      'Route reports the split',
      async () => {
        const r = await getObject<Route>('route', 'reserve');
        return cond(r, 'Ready')?.status === 'True' && r?.status?.traffic?.some((t) => t.revisionName === 'reserve-00001') ? r : undefined;
      },
      120_000,
      100,
    );
    const pods = await podsOf('reserve-00001');
    expect(pods.ready.length).toBeGreaterThanOrEqual(2);
    // The traffic was assigned no earlier than the second pod turned Ready (times to the second).
    const assigned = Date.parse(cond(route, 'AllTrafficAssigned')!.lastTransitionTime!);
    const secondReady = pods.ready.map((t) => Date.parse(t)).sort((a, b) => a - b)[1]!;
    expect(assigned).toBeGreaterThanOrEqual(secondReady);
    const rev = (await getObject<Revision>('revision', 'reserve-00001'))!;
    expect(rev.metadata.labels?.['serving.knative.dev/routingState']).toBe('active');
    expect(cond(rev, 'Active')?.status).toBe('True');
    expect(cond(rev, 'Ready')?.status).toBe('True');
  });
});

describe('the HPA class', () => {
  const hpa = { 'autoscaling.knative.dev/class': HPA_CLASS, 'autoscaling.knative.dev/min-scale': '3' };

  it('a Revision is Ready only once its pods reach min-scale (the HPA grows the Deployment from 1)', async () => {
    await apply(ksvc('reserve-hpa', 'nginx:1.27', hpa));
    const rev = await eventually(
      'reserve-hpa-00001 Ready',
      async () => {
        const r = await getObject<Revision>('revision', 'reserve-hpa-00001');
        return cond(r, 'Ready')?.status === 'True' ? r : undefined;
      },
      180_000,
      100,
    );
    // Ready no earlier than the third pod turned Ready (times to the second).
    const pods = await podsOf('reserve-hpa-00001');
    expect(pods.ready.length).toBeGreaterThanOrEqual(3);
    const thirdReady = pods.ready.map((t) => Date.parse(t)).sort((a, b) => a - b)[2]!;
    expect(Date.parse(cond(rev, 'Ready')!.lastTransitionTime!)).toBeGreaterThanOrEqual(thirdReady);
  });

  it('turned reserve, its HPA is deleted and its Deployment scaled to 0', async () => {
    await apply(ksvc('reserve-hpa', 'nginx:1.28', hpa));
    await readyService('reserve-hpa', (s) => s.status?.traffic?.[0]?.revisionName === 'reserve-hpa-00002');
    await scaledToZero('reserve-hpa-00001');
    expect(await getObject('hpa.v2.autoscaling', 'reserve-hpa-00001')).toBeUndefined();
    expect(await getObject('hpa.v2.autoscaling', 'reserve-hpa-00002')).toBeDefined();
  });

  it('a split back to it brings its HPA back and its pods to min-scale before the Route reports the split', async () => {
    await apply(
      ksvc('reserve-hpa', 'nginx:1.28', hpa, [
        { latestRevision: true, percent: 50 },
        { revisionName: 'reserve-hpa-00001', percent: 50 },
      ]),
    );
    await eventually(
      'Route reports the split',
      async () => {
        const r = await getObject<Route>('route', 'reserve-hpa');
        return cond(r, 'Ready')?.status === 'True' && r?.status?.traffic?.some((t) => t.revisionName === 'reserve-hpa-00001') ? r : undefined;
      },
      120_000,
      100,
    );
    expect((await podsOf('reserve-hpa-00001')).ready.length).toBeGreaterThanOrEqual(3);
    expect(await getObject('hpa.v2.autoscaling', 'reserve-hpa-00001')).toBeDefined();
  });
});
