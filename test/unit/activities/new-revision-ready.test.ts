// A new Revision's first pass (activities/combined.ts reconcileNewRevision) waits a moment in the watcher's cache for
// the pods of the Deployment it just made, so that pass reports the Revision Ready (ADR 0012) — and only then.
import { describe, expect, it } from 'vitest';
import { createCombinedActivities, type PartSteps } from '../../../activities/combined.js';
import { createRevisionActivities } from '../../../activities/revision.js';
import { Resources } from '../../../api/kinds.js';
import { podLikeOf, revisionConditionSet } from '../../../api/lifecycle/revision.js';
import type { KubeObject } from '../../../api/meta.js';
import type { Revision } from '../../../api/serving.js';
import { revision, withContainers, withRevAnnotations } from '../../fixtures/revision.js';
import type { DigestResolver } from '../../../registry/digest-resolver.js';
import { KubeFake, fakeDeps } from './kube-fake.js';

const key = { namespace: 'default', name: 'hello-00001' };

function setup(readyWaitMs: number, opts: { cache?: boolean; digests?: DigestResolver } = {}) {
  const fake = new KubeFake();
  fake.seed(
    Resources.Revision,
    revision(
      'hello-00001',
      'default',
      withContainers({ name: 'user-container', image: 'ghcr.io/example/hello:1' }),
      withRevAnnotations({ 'autoscaling.knative.dev/min-scale': '2' }),
    ),
  );
  const { deps } = fakeDeps(fake, { digests: opts.digests ?? { resolve: async () => `ghcr.io/example/hello@sha256:${'a'.repeat(64)}` } });
  // The watcher's pod cache: the test makes the pods Ready while the step waits, as kwok would.
  const pods: KubeObject[] = [];
  const waits: { labels: Readonly<Record<string, string>>; timeoutMs: number }[] = [];
  if (opts.cache !== false)
    deps.cache = {
      list: async (type, namespace) => (type.kind === 'Pod' && namespace === 'default' ? [...pods] : undefined),
      until: async (type, _ns, labels, test, timeoutMs) => {
        waits.push({ labels, timeoutMs });
        const uid = fake.get<Revision>(Resources.Revision, 'default', 'hello-00001')!.metadata.uid!;
        for (const name of ['a', 'b'])
          pods.push({
            apiVersion: 'v1',
            kind: 'Pod',
            metadata: { namespace: 'default', name, uid: `pod-${name}`, labels: { ...labels, 'serving.knative.dev/revisionUID': uid } },
            status: podLikeOf({ status: { conditions: [{ type: 'Ready', status: 'True' }] } }),
          } as KubeObject);
        return type.kind === 'Pod' && test(pods);
      },
    };
  const combined = createCombinedActivities(createRevisionActivities(deps) as unknown as PartSteps, readyWaitMs);
  return { fake, combined, waits };
}

describe('reconcileNewRevision: the children beside the digests', () => {
  it('reads the children while the registry answers, and builds the Deployment from the digests it gave', async () => {
    const box: { fake?: KubeFake } = {};
    // The registry answers only once the resources part has asked for the Deployment (the test times out otherwise).
    const digests: DigestResolver = {
      resolve: async () => {
        while (!box.fake!.calls.some((c) => c.kind === 'Deployment' && c.verb === 'get')) await new Promise((r) => setTimeout(r, 5));
        return `ghcr.io/example/hello@sha256:${'b'.repeat(64)}`;
      },
    };
    const { fake, combined } = setup(0, { digests });
    box.fake = fake;
    const parts = await combined.reconcileNewRevision(key);
    expect(parts.digests).toMatchObject({ outcome: 'resolved', cached: false });
    expect(parts.resources).toMatchObject({ outcome: 'applied', deployment: 'created' });
    const deployment = fake.get<KubeObject & { spec: { template: { spec: { containers: { image: string }[] } } } }>(
      Resources.Deployment,
      'default',
      'hello-00001-deployment',
    )!;
    expect(deployment.spec.template.spec.containers[0]!.image).toBe(`ghcr.io/example/hello@sha256:${'b'.repeat(64)}`);
    expect(fake.get<Revision>(Resources.Revision, 'default', 'hello-00001')!.status!.containerStatuses).toEqual([
      { name: 'user-container', imageDigest: `ghcr.io/example/hello@sha256:${'b'.repeat(64)}` },
    ]);
  });

  it("regression (convergence): an old incarnation's Service in the way leaves the Revision not Ready (NotOwned) until a pass makes its own", async () => {
    const { fake, combined } = setup(0);
    // Service hello-00001 of the Revision deleted a moment ago, awaiting the garbage collector.
    const foreign = {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: {
        namespace: 'default',
        name: 'hello-00001',
        labels: { 'serving.knative.dev/revision': 'hello-00001' },
        ownerReferences: [{ apiVersion: 'serving.knative.dev/v1', kind: 'Revision', name: 'hello-00001', uid: 'old-incarnation', controller: true }],
      },
      spec: { type: 'ClusterIP', selector: { 'serving.knative.dev/revisionUID': 'old-incarnation' }, ports: [] },
    } as KubeObject;
    fake.seed(Resources.KubeService, foreign);
    const parts = await combined.reconcileNewRevision(key);
    expect(parts.resources).toMatchObject({ outcome: 'applied', deployment: 'created', service: 'notOwned' });
    const message = 'There is an existing Service "hello-00001" that we do not own.';
    const status = () => fake.get<Revision>(Resources.Revision, 'default', 'hello-00001')!.status;
    expect(revisionConditionSet.get(status(), 'ResourcesAvailable')).toMatchObject({ status: 'False', reason: 'NotOwned', message });
    expect(revisionConditionSet.get(status(), 'Ready')).toMatchObject({ status: 'False', reason: 'NotOwned', message });
    expect(fake.get<KubeObject>(Resources.KubeService, 'default', 'hello-00001')!.metadata.ownerReferences?.[0]?.uid).toBe('old-incarnation');
    // The collector deletes it; the deletion's poke makes a full pass: the Revision's own Service, then Ready.
    const { deps } = fakeDeps(fake);
    await deps.kube.delete(Resources.KubeService, 'default', 'hello-00001');
    const steps = createRevisionActivities(deps);
    expect(await steps.reconcileRevisionResources(key)).toMatchObject({ outcome: 'applied', service: 'created' });
    fake.edit<KubeObject & { status?: unknown }>(Resources.Deployment, 'default', 'hello-00001-deployment', (d) => {
      d.status = { replicas: 2, readyReplicas: 2, availableReplicas: 2, conditions: [{ type: 'Available', status: 'True' }] };
    });
    expect(await steps.updateRevisionStatus(key, undefined, false)).toMatchObject({ ready: 'True' });
    const uid = fake.get<Revision>(Resources.Revision, 'default', 'hello-00001')!.metadata.uid;
    expect(fake.get<KubeObject>(Resources.KubeService, 'default', 'hello-00001')!.metadata.ownerReferences?.[0]?.uid).toBe(uid);
  });

  it('a registry that refuses: the step fails and nothing is created (the digest step is retried on its own)', async () => {
    const { fake, combined } = setup(1000, { digests: { resolve: async () => Promise.reject(new Error('MANIFEST_UNKNOWN')) } });
    await expect(combined.reconcileNewRevision(key)).rejects.toThrow('MANIFEST_UNKNOWN');
    expect(fake.writes().map((c) => `${c.verb} ${c.kind}`)).toEqual(['status Revision']);
    expect(fake.get(Resources.Deployment, 'default', 'hello-00001-deployment')).toBeUndefined();
  });
});

describe('reconcileNewRevision: the status part waits for the new pods', () => {
  it('a Deployment just made: waits (by the Revision name, up to readyWaitMs) and reports the Revision Ready in the same pass', async () => {
    const { fake, combined, waits } = setup(1000);
    const parts = await combined.reconcileNewRevision(key);
    expect(parts.resources).toMatchObject({ outcome: 'applied', deployment: 'created', replicas: 2 });
    expect(waits).toEqual([{ labels: { 'serving.knative.dev/revision': 'hello-00001' }, timeoutMs: 1000 }]);
    expect(parts.status).toMatchObject({ outcome: 'written', ready: 'True' });
    const status = fake.get<Revision>(Resources.Revision, 'default', 'hello-00001')!.status!;
    expect(status.actualReplicas).toBe(2);
    expect(revisionConditionSet.get(status, 'Ready')?.status).toBe('True');
  });

  it('no wait when it is off, when no cache can answer, or when the Deployment was there already', async () => {
    const off = setup(0);
    expect((await off.combined.reconcileNewRevision(key)).status).toMatchObject({ ready: 'Unknown' });
    expect(off.waits).toEqual([]);

    const noCache = setup(1000, { cache: false });
    expect((await noCache.combined.reconcileNewRevision(key)).status).toMatchObject({ ready: 'Unknown' });

    const again = setup(1000);
    await again.combined.reconcileNewRevision(key);
    again.waits.length = 0;
    const rerun = await again.combined.reconcileNewRevision(key); // a retried pass: the Deployment is unchanged
    expect(rerun.resources).toMatchObject({ deployment: 'unchanged' });
    expect(again.waits).toEqual([]);
  });
});
