// The pod-spec features the shipped config-features enables (hakn's), at kubectl: a Service using all of them is
// admitted and reconciled into its Deployment; with one turned Disabled in the cluster, the webhook refuses it with
// the field and the reason. The webhook reads the map in force, not values of its own.
import { afterAll, describe, expect, it } from 'vitest';
import type { Revision } from '../../api/serving.js';
import { shippedConfigData } from '../fixtures/shipped-config.js';
import { apply, getObject, kubectl, kubectlJson, revisionReady } from '../harness/cluster.js';
import { eventually } from '../harness/wait.js';

const setFeatures = (data: Record<string, string | null>) =>
  kubectl(['patch', 'configmap', 'config-features', '-n', 'knative-serving', '--type=merge', '-p', JSON.stringify({ data })]);

const podSpec = {
  initContainers: [{ name: 'setup', image: 'busybox:1.36', command: ['true'] }],
  securityContext: { runAsUser: 1000, fsGroup: 2000 },
  affinity: {
    nodeAffinity: {
      preferredDuringSchedulingIgnoredDuringExecution: [
        { weight: 1, preference: { matchExpressions: [{ key: 'type', operator: 'In', values: ['kwok'] }] } },
      ],
    },
  },
  topologySpreadConstraints: [
    { maxSkew: 1, topologyKey: 'kubernetes.io/hostname', whenUnsatisfiable: 'ScheduleAnyway', labelSelector: { matchLabels: { app: 'x' } } },
  ],
  containers: [
    {
      image: 'nginx:1.27',
      ports: [{ containerPort: 8080 }],
      env: [{ name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } }],
    },
  ],
};

const service = (name: string) => ({
  apiVersion: 'serving.knative.dev/v1',
  kind: 'Service',
  metadata: { name, namespace: 'default' },
  spec: { template: { spec: podSpec } },
});

afterAll(async () => {
  await setFeatures({ 'kubernetes.podspec-affinity': shippedConfigData('config-features')['kubernetes.podspec-affinity'] ?? null });
  await kubectl(['delete', 'ksvc', 'feat-all', 'feat-off', '--ignore-not-found', '--wait=false']);
});

describe('config-features as shipped (hakn)', () => {
  it('the cluster holds the shipped kubernetes.podspec-* values', async () => {
    const cm = await kubectlJson<{ data: Record<string, string> }>(['get', 'configmap', 'config-features', '-n', 'knative-serving']);
    const shipped = Object.entries(shippedConfigData('config-features')).filter(([k]) => k !== '_example');
    expect(shipped.length).toBeGreaterThanOrEqual(7);
    for (const [k, v] of shipped) expect(cm.data[k], k).toBe(v);
  });

  it('admits init containers, fieldRef, a pod securityContext, affinity and topology spread, and reconciles them', async () => {
    await apply(service('feat-all'));
    await revisionReady<Revision>('feat-all-00001');
    const dep = await getObject<{ spec: { template: { spec: Record<string, unknown> & { containers: { env?: unknown[] }[] } } } }>(
      'deployment',
      'feat-all-00001-deployment',
    );
    const spec = dep!.spec.template.spec;
    expect((spec.initContainers as { name: string }[]).map((c) => c.name)).toEqual(['setup']);
    expect(spec.securityContext).toEqual(podSpec.securityContext);
    expect(spec.affinity).toEqual(podSpec.affinity);
    expect(spec.topologySpreadConstraints).toEqual(podSpec.topologySpreadConstraints);
    const env = (spec.containers[0]?.env ?? []) as { name: string; valueFrom?: { fieldRef?: { fieldPath?: string } } }[];
    expect(env.find((e) => e.name === 'POD_NAME')?.valueFrom?.fieldRef?.fieldPath).toBe('metadata.name');
  });

  it('with kubernetes.podspec-affinity Disabled, refuses the same Service naming the field and the reason', async () => {
    await setFeatures({ 'kubernetes.podspec-affinity': 'Disabled' });
    // The webhook follows config-features through its informer: retry the dry run until the change is in force.
    const err = await eventually(
      'affinity refused',
      async () => {
        try {
          await kubectl(['apply', '--dry-run=server', '-f', '-'], JSON.stringify(service('feat-off')));
          return undefined;
        } catch (e) {
          return String(e);
        }
      },
      60_000,
    );
    expect(err).toContain(
      'admission webhook "validation.webhook.serving.knative.dev" denied the request: validation failed: must not set the field(s): spec.template.spec.affinity',
    );
    await expect(apply(service('feat-off'))).rejects.toThrow(/must not set the field\(s\): spec\.template\.spec\.affinity/);
    expect(await getObject('ksvc', 'feat-off')).toBeUndefined();
  });
});
