// The Revision activities against an in-memory API server (issue 8): the ContainerMissing message names the image
// that failed; the Deployment and the revision Service follow what Tidal last applied (a dropped label leaves, an
// edited replica count is reverted); a refused apply shows on the Revision.
import { describe, expect, it } from 'vitest';
import type { DigestResolver } from '../../../activities/digests.js';
import { createRevisionActivities } from '../../../activities/revision.js';
import { Resources } from '../../../api/kinds.js';
import { revisionConditionSet } from '../../../api/lifecycle/revision.js';
import type { KubeObject } from '../../../api/meta.js';
import type { Revision } from '../../../api/serving.js';
import type { Deployment } from '../../../resources/deployment.js';
import { revision, revisionConfig, withContainers, withContainerStatuses, withRevAnnotations, withRevLabels } from '../../fixtures/revision.js';
import type { RevisionConfig } from '../../../api/config/types.js';
import type { HorizontalPodAutoscaler } from '../../../resources/hpa.js';
import { KubeFake, refused, fakeDeps } from './kube-fake.js';

const key = { namespace: 'default', name: 'hello-00001' };
const digest = (c: string) => `ghcr.io/example/${c}@sha256:${c.charCodeAt(0).toString(16).padStart(64, '0')}`;

function setup(rev: Revision, digests?: DigestResolver) {
  const fake = new KubeFake();
  fake.seed(Resources.Revision, rev);
  const { deps, recorded } = fakeDeps(fake, digests ? { digests } : {});
  return { fake, recorded, acts: createRevisionActivities(deps) };
}

const resolved = withContainerStatuses([{ name: 'user-container', imageDigest: digest('hello') }]);

describe('resolveRevisionDigests', () => {
  it('regression (issue 8): ContainerMissing names the image whose resolution failed, not the last one started', async () => {
    const rev = revision(
      'hello-00001',
      'default',
      withContainers(
        { name: 'first', image: 'ghcr.io/example/missing:1', ports: [{ containerPort: 8080 }] },
        { name: 'second', image: 'ghcr.io/example/fine:1' },
      ),
    );
    const digests: DigestResolver = {
      resolve: async (image) => {
        if (image.includes('missing')) throw new Error('MANIFEST_UNKNOWN: manifest unknown');
        await new Promise((r) => setTimeout(r, 5));
        return digest('fine');
      },
    };
    const { fake, acts } = setup(rev, digests);
    await expect(acts.resolveRevisionDigests(key)).rejects.toThrow('ghcr.io/example/missing:1');
    const healthy = revisionConditionSet.get(fake.get<Revision>(Resources.Revision, 'default', 'hello-00001')!.status, 'ContainerHealthy');
    expect(healthy).toMatchObject({
      status: 'False',
      reason: 'ContainerMissing',
      message: 'Unable to fetch image "ghcr.io/example/missing:1": failed to resolve image to digest: MANIFEST_UNKNOWN: manifest unknown',
    });
  });
});

describe('reconcileRevisionResources', () => {
  it('a pass with nothing to do writes nothing', async () => {
    const { fake, acts } = setup(revision('hello-00001', 'default', resolved));
    expect(await acts.reconcileRevisionResources(key)).toMatchObject({ outcome: 'applied', deployment: 'created', service: 'created' });
    fake.calls = [];
    expect(await acts.reconcileRevisionResources(key)).toMatchObject({ outcome: 'applied', deployment: 'unchanged', service: 'unchanged' });
    expect(fake.writes()).toEqual([]);
  });

  it('an edited replica count is reverted (hakn runs a fixed count, nothing else scales the Deployment)', async () => {
    const { fake, acts } = setup(revision('hello-00001', 'default', resolved));
    await acts.reconcileRevisionResources(key);
    const want = fake.get<Deployment>(Resources.Deployment, 'default', 'hello-00001-deployment')!.spec.replicas;
    fake.edit<Deployment>(Resources.Deployment, 'default', 'hello-00001-deployment', (d) => void (d.spec.replicas = 7));
    expect(await acts.reconcileRevisionResources(key)).toMatchObject({ deployment: 'updated', service: 'unchanged' });
    expect(fake.get<Deployment>(Resources.Deployment, 'default', 'hello-00001-deployment')!.spec.replicas).toBe(want);
  });

  it('regression (issue 8): a label the Revision drops leaves the revision Service (and the Deployment)', async () => {
    const { fake, acts } = setup(revision('hello-00001', 'default', resolved, withRevLabels({ team: 'payments' })));
    await acts.reconcileRevisionResources(key);
    expect(fake.get<KubeObject>(Resources.KubeService, 'default', 'hello-00001')!.metadata.labels?.['team']).toBe('payments');
    fake.edit<Revision>(Resources.Revision, 'default', 'hello-00001', (r) => void delete r.metadata.labels!['team']);
    expect(await acts.reconcileRevisionResources(key)).toMatchObject({ deployment: 'updated', service: 'updated' });
    expect(fake.get<KubeObject>(Resources.KubeService, 'default', 'hello-00001')!.metadata.labels?.['team']).toBeUndefined();
    expect(fake.get<KubeObject>(Resources.Deployment, 'default', 'hello-00001-deployment')!.metadata.labels?.['team']).toBeUndefined();
  });

  it("regression (issue 8): a refused Deployment apply shows on the Revision (ResourcesAvailable False, the API server's message) and as a Warning Event", async () => {
    const { fake, acts, recorded } = setup(revision('hello-00001', 'default', resolved));
    const forbidden = 'deployments.apps "hello-00001-deployment" is forbidden: exceeded quota: compute, requested: pods=1';
    fake.failNext('apply', Resources.Deployment, refused(403, 'Forbidden', forbidden));
    await expect(acts.reconcileRevisionResources(key)).rejects.toThrow('exceeded quota');
    const status = fake.get<Revision>(Resources.Revision, 'default', 'hello-00001')!.status;
    const message = `failed to create Deployment "hello-00001-deployment": ${forbidden}`;
    expect(revisionConditionSet.get(status, 'ResourcesAvailable')).toMatchObject({ status: 'False', reason: 'CreationFailed', message });
    expect(revisionConditionSet.get(status, 'Ready')).toMatchObject({ status: 'False', reason: 'CreationFailed', message });
    expect(status?.containerStatuses).toEqual([{ name: 'user-container', imageDigest: digest('hello') }]);
    expect(recorded).toEqual([{ type: 'Warning', reason: 'CreationFailed', message }]);
  });
});

describe('reconcileRevisionResources: Events', () => {
  it('creates the Deployment, then the Service, one Created Event each', async () => {
    const { acts, recorded } = setup(revision('hello-00001', 'default', resolved));
    await acts.reconcileRevisionResources(key);
    expect(recorded).toEqual([
      { type: 'Normal', reason: 'Created', message: 'Created Deployment "hello-00001-deployment"' },
      { type: 'Normal', reason: 'Created', message: 'Created Service "hello-00001"' },
    ]);
  });
});

describe('updateRevisionStatus', () => {
  it('writes Active True once the Deployment has ready pods', async () => {
    const { fake, acts } = setup(revision('hello-00001', 'default', resolved));
    await acts.reconcileRevisionResources(key);
    fake.edit<KubeObject & { status?: unknown }>(Resources.Deployment, 'default', 'hello-00001-deployment', (d) => {
      d.status = {
        replicas: 1,
        readyReplicas: 1,
        availableReplicas: 1,
        conditions: [
          { type: 'Available', status: 'True' },
          { type: 'Progressing', status: 'True' },
        ],
      };
    });
    await acts.updateRevisionStatus(key);
    const status = fake.get<Revision>(Resources.Revision, 'default', 'hello-00001')!.status;
    expect(revisionConditionSet.get(status, 'Active')).toMatchObject({ status: 'True', severity: 'Info' });
    expect(revisionConditionSet.get(status, 'Ready')?.status).toBe('True');
  });
});

describe('updateRevisionStatus: RevisionReady', () => {
  it('is recorded once, before the status that says Ready is written', async () => {
    const fake = new KubeFake();
    fake.seed(Resources.Revision, revision('hello-00001', 'default', resolved));
    const { deps } = fakeDeps(fake);
    const seen: { reason: string; storedReady: string | undefined }[] = [];
    deps.events = {
      record: async (_o, _t, reason) => {
        const stored = fake.get<Revision>(Resources.Revision, 'default', 'hello-00001')!.status;
        seen.push({ reason, storedReady: revisionConditionSet.get(stored, 'Ready')?.status });
      },
    };
    const acts = createRevisionActivities(deps);
    await acts.reconcileRevisionResources(key);
    fake.edit<KubeObject & { status?: unknown }>(Resources.Deployment, 'default', 'hello-00001-deployment', (d) => {
      d.status = { replicas: 1, readyReplicas: 1, availableReplicas: 1, conditions: [{ type: 'Available', status: 'True' }] };
    });
    seen.length = 0;
    expect(await acts.updateRevisionStatus(key)).toMatchObject({ outcome: 'written', ready: 'True' });
    expect(await acts.updateRevisionStatus(key)).toMatchObject({ outcome: 'unchanged', ready: 'True' });
    expect(seen).toEqual([{ reason: 'RevisionReady', storedReady: undefined }]); // the stored status was not Ready yet
  });
});

describe('the HPA autoscaler class and the PodDisruptionBudget', () => {
  const hpaClass = { 'autoscaling.knative.dev/class': 'hpa.autoscaling.knative.dev', 'autoscaling.knative.dev/min-scale': '3' };
  function setupWith(rev: Revision, cfg: RevisionConfig) {
    const fake = new KubeFake();
    fake.seed(Resources.Revision, rev);
    const { deps, recorded } = fakeDeps(fake, { revisionConfig: () => cfg });
    return { fake, recorded, acts: createRevisionActivities(deps) };
  }
  const hakn = () => revisionConfig((c) => void (c.autoscaler.minScale = 2));

  it("creates the HPA and leaves the replica count to it; the Revision's counts come from the HPA's status", async () => {
    const { fake, acts, recorded } = setupWith(revision('hello-00001', 'default', resolved, withRevAnnotations(hpaClass)), hakn());
    expect(await acts.reconcileRevisionResources(key)).toMatchObject({ deployment: 'created', hpa: 'created', pdb: 'created' });
    expect(fake.get<Deployment>(Resources.Deployment, 'default', 'hello-00001-deployment')!.spec.replicas).toBeUndefined();
    expect(fake.get<HorizontalPodAutoscaler>(Resources.HorizontalPodAutoscaler, 'default', 'hello-00001')!.spec.minReplicas).toBe(3);
    expect(recorded.map((e) => e.message)).toEqual(
      expect.arrayContaining(['Created HorizontalPodAutoscaler "hello-00001"', 'Created PodDisruptionBudget "hello-00001"']),
    );
    // The HPA controller scales the Deployment: not an edit to revert.
    fake.edit<Deployment>(Resources.Deployment, 'default', 'hello-00001-deployment', (d) => void (d.spec.replicas = 5));
    expect(await acts.reconcileRevisionResources(key)).toMatchObject({ deployment: 'unchanged', hpa: 'unchanged', pdb: 'unchanged' });
    expect(fake.get<Deployment>(Resources.Deployment, 'default', 'hello-00001-deployment')!.spec.replicas).toBe(5);
    fake.edit<HorizontalPodAutoscaler>(Resources.HorizontalPodAutoscaler, 'default', 'hello-00001', (h) => {
      h.status = { currentReplicas: 4, desiredReplicas: 5 };
    });
    await acts.updateRevisionStatus(key);
    expect(fake.get<Revision>(Resources.Revision, 'default', 'hello-00001')!.status).toMatchObject({ actualReplicas: 4, desiredReplicas: 5 });
  });

  it('the class changed back: the HPA is deleted and the fixed count applied again', async () => {
    const { fake, acts, recorded } = setupWith(revision('hello-00001', 'default', resolved, withRevAnnotations(hpaClass)), hakn());
    await acts.reconcileRevisionResources(key);
    fake.edit<Revision>(Resources.Revision, 'default', 'hello-00001', (r) => void delete r.metadata.annotations!['autoscaling.knative.dev/class']);
    expect(await acts.reconcileRevisionResources(key)).toMatchObject({ deployment: 'updated', hpa: 'deleted', pdb: 'unchanged' });
    expect(fake.get(Resources.HorizontalPodAutoscaler, 'default', 'hello-00001')).toBeUndefined();
    expect(fake.get<Deployment>(Resources.Deployment, 'default', 'hello-00001-deployment')!.spec.replicas).toBe(3);
    expect(recorded.map((e) => e.message)).toContain('Deleted HorizontalPodAutoscaler "hello-00001"');
  });

  it('an HPA or PodDisruptionBudget another object controls is left alone', async () => {
    const { fake, acts } = setupWith(
      revision('hello-00001', 'default', resolved),
      revisionConfig((c) => void (c.deployment.podDisruptionBudget = 'disabled')),
    );
    const foreign = { kind: 'Other', apiVersion: 'example.io/v1', name: 'x', uid: 'other', controller: true };
    fake.seed(Resources.HorizontalPodAutoscaler, {
      apiVersion: 'autoscaling/v2',
      kind: 'HorizontalPodAutoscaler',
      metadata: { name: 'hello-00001', namespace: 'default', ownerReferences: [foreign] },
    });
    fake.seed(Resources.PodDisruptionBudget, {
      apiVersion: 'policy/v1',
      kind: 'PodDisruptionBudget',
      metadata: { name: 'hello-00001', namespace: 'default', ownerReferences: [foreign] },
    });
    expect(await acts.reconcileRevisionResources(key)).toMatchObject({ hpa: 'none', pdb: 'none' });
    expect(fake.get(Resources.HorizontalPodAutoscaler, 'default', 'hello-00001')).toBeDefined();
    expect(fake.get(Resources.PodDisruptionBudget, 'default', 'hello-00001')).toBeDefined();
  });
});
