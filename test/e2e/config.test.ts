// Config maps in knative-serving: a valid change re-renders what reads it (Knative's global resync); an invalid
// change is refused at kubectl by the config webhook, and one that bypasses it is reported while the last good config
// stays in force.
import { afterAll, describe, expect, it } from 'vitest';
import type { Revision } from '../../api/serving.js';
import { apply, eventsWhen, getObject, kubectl, kubectlJson, type KubeEvent } from '../harness/cluster.js';
import { eventually } from '../harness/wait.js';

const setMinScale = (v: string) =>
  kubectl(['patch', 'configmap', 'config-autoscaler', '-n', 'knative-serving', '--type=merge', '-p', JSON.stringify({ data: { 'min-scale': v } })]);
const replicasOf = async (name: string) => (await getObject<{ spec: { replicas: number } }>('deployment', name))?.spec.replicas;

afterAll(async () => {
  await setMinScale('2');
  await kubectl(['delete', 'ksvc', 'scaled', '--ignore-not-found']);
});

describe('config maps', () => {
  it('ships hakn defaults: min-scale 2 gives every Revision two replicas', async () => {
    const cm = await kubectlJson<{ data: Record<string, string> }>(['get', 'configmap', 'config-autoscaler', '-n', 'knative-serving']);
    expect(cm.data['min-scale']).toBe('2');
    await apply({
      apiVersion: 'serving.knative.dev/v1',
      kind: 'Service',
      metadata: { name: 'scaled', namespace: 'default' },
      spec: { template: { spec: { containers: [{ image: 'nginx' }] } } },
    });
    await eventually('2 replicas', async () => (await replicasOf('scaled-00001-deployment')) === 2, 60_000);
  });

  it('a valid change of config-autoscaler re-renders existing Deployments', async () => {
    await setMinScale('3');
    await eventually('3 replicas', async () => (await replicasOf('scaled-00001-deployment')) === 3, 60_000);
    const rev = await eventually(
      'Revision reports 3',
      async () => {
        const r = await getObject<Revision>('revision', 'scaled-00001');
        return r?.status?.desiredReplicas === 3 && r.status.actualReplicas === 3 ? r : undefined;
      },
      60_000,
    );
    expect(rev.status?.conditions?.find((c) => c.type === 'Ready')?.status).toBe('True');
  });

  it('an invalid change is refused at kubectl with the key and the reason (config.webhook.serving.knative.dev)', async () => {
    await expect(setMinScale('-1')).rejects.toThrow(/config\.webhook\.serving\.knative\.dev.*denied the request.*min-scale/s);
    const cm = await kubectlJson<{ data: Record<string, string> }>(['get', 'configmap', 'config-autoscaler', '-n', 'knative-serving']);
    expect(cm.data['min-scale']).toBe('3');
  });

  it('an invalid change that bypasses the webhook is reported on the ConfigMap and the last good config stays in force', async () => {
    // What an edit made while no webhook is registered looks like: the configuration is taken away for this test.
    const hook = 'config.webhook.serving.knative.dev';
    const saved = await kubectlJson<{ metadata: Record<string, unknown> }>(['get', 'validatingwebhookconfiguration', hook]);
    await kubectl(['delete', 'validatingwebhookconfiguration', hook]);
    try {
      await setMinScale('-1');
    } finally {
      const { name, labels, annotations } = saved.metadata;
      await kubectl(['create', '-f', '-'], JSON.stringify({ ...saved, metadata: { name, labels, annotations } }));
    }
    const invalid = (e: KubeEvent) => e.reason === 'InvalidConfig';
    const event = (await eventsWhen('involvedObject.name=config-autoscaler', (evs) => evs.some(invalid), 60_000, 'knative-serving')).find(invalid)!;
    expect(event.type).toBe('Warning');
    expect(event.message).toContain('min-scale');
    expect(event.message).toContain('the last valid configuration stays in force');
    // A change elsewhere forces a re-render: it must still use min-scale 3.
    await kubectl(['annotate', 'ksvc', 'scaled', 'example.com/touch=1', '--overwrite']);
    await kubectl([
      'patch',
      'configmap',
      'config-deployment',
      '-n',
      'knative-serving',
      '--type=merge',
      '-p',
      JSON.stringify({ data: { 'progress-deadline': '601s' } }),
    ]);
    await eventually(
      'deadline 601 applied',
      async () =>
        (await getObject<{ spec: { progressDeadlineSeconds: number } }>('deployment', 'scaled-00001-deployment'))?.spec.progressDeadlineSeconds ===
        601,
      60_000,
    );
    expect(await replicasOf('scaled-00001-deployment')).toBe(3);
    await kubectl([
      'patch',
      'configmap',
      'config-deployment',
      '-n',
      'knative-serving',
      '--type=json',
      '-p',
      JSON.stringify([{ op: 'remove', path: '/data/progress-deadline' }]),
    ]);
  });
});
