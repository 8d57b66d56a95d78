// The Revision activities against an in-memory API server: the ContainerMissing message names the image
// that failed; the Deployment and the revision Service follow what Tidal last applied (a dropped label leaves, an
// edited replica count is reverted); a refused apply shows on the Revision; queue-proxy's settings follow the config
// maps.
import { describe, expect, it } from 'vitest';
import type { DigestResolver } from '../../../registry/digest-resolver.js';
import { createRevisionActivities, RESOLVING_DIGESTS_GRACE_MS } from '../../../activities/revision.js';
import { Resources } from '../../../api/kinds.js';
import { podLikeOf, revisionConditionSet, type PodLike } from '../../../api/lifecycle/revision.js';
import type { KubeObject } from '../../../api/meta.js';
import type { Revision } from '../../../api/serving.js';
import type { Deployment } from '../../../resources/deployment.js';
import {
  revision,
  revisionConfig,
  withContainers,
  withContainerStatuses,
  withRevAnnotations,
  withRevLabels,
  withScaleTargetInitialized,
} from '../../fixtures/revision.js';
import type { RevisionConfig } from '../../../api/config/types.js';
import type { HorizontalPodAutoscaler } from '../../../resources/hpa.js';
import { KubeFake, refused, fakeDeps } from './kube-fake.js';
import { parseObservabilityConfig } from '../../../api/config/observability.js';
import { parseLoggingConfig } from '../../../api/config/logging.js';
import { DEFAULT_OBSERVABILITY_CONFIG, observabilityConfigJson } from '../../../resources/queue-observability.js';

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
  it('regression: ContainerMissing names the image whose resolution failed, not the last one started', async () => {
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

describe('resolveRevisionDigests: the queue-proxy image', () => {
  it("is used as given: only the Revision's own images are resolved, whatever registry names the sidecar", async () => {
    const queue = 'gcr.io/knative-releases/knative.dev/serving/cmd/queue:v1.22.1';
    const fake = new KubeFake();
    fake.seed(Resources.Revision, revision('hello-00001', 'default'));
    const asked: string[] = [];
    const digests: DigestResolver = {
      resolve: async (image) => {
        asked.push(image);
        return digest('hello');
      },
    };
    const { deps } = fakeDeps(fake, { digests, revisionConfig: () => revisionConfig((c) => void (c.deployment.queueSidecarImage = queue)) });
    const acts = createRevisionActivities(deps);
    await acts.resolveRevisionDigests(key);
    expect(asked).toEqual([fake.get<Revision>(Resources.Revision, 'default', 'hello-00001')!.spec.containers[0]!.image]);
    await acts.reconcileRevisionResources(key);
    const containers = fake.get<Deployment>(Resources.Deployment, 'default', 'hello-00001-deployment')!.spec.template.spec.containers;
    expect(containers.map((c) => [c.name, c.image])).toEqual([
      ['user-container', digest('hello')],
      ['queue-proxy', queue],
    ]);
  });
});

describe('resolveRevisionDigests: ResolvingDigests', () => {
  const fresh = () => revision('hello-00001', 'default', withContainers({ name: 'user-container', image: 'ghcr.io/example/hello:1' }));
  const stored = (fake: KubeFake) => fake.get<Revision>(Resources.Revision, 'default', 'hello-00001')!.status;

  it('a registry that answers at once: the digests are written with no interim status', async () => {
    const { fake, acts } = setup(fresh(), { resolve: async () => digest('hello') });
    expect(await acts.resolveRevisionDigests(key)).toMatchObject({ outcome: 'resolved', cached: false, images: 1 });
    expect(fake.writes('status')).toHaveLength(1);
    expect(stored(fake)?.containerStatuses).toEqual([{ name: 'user-container', imageDigest: digest('hello') }]);
  });

  it(`a registry that takes longer than ${RESOLVING_DIGESTS_GRACE_MS} ms: ResourcesAvailable says ResolvingDigests meanwhile`, async () => {
    const box: { fake?: KubeFake } = {};
    // The registry answers only once the Revision reports that it is waiting (the test times out otherwise).
    const digests: DigestResolver = {
      resolve: async () => {
        while (revisionConditionSet.get(stored(box.fake!), 'ResourcesAvailable')?.reason !== 'ResolvingDigests')
          await new Promise((r) => setTimeout(r, 20));
        return digest('hello');
      },
    };
    const { fake, acts } = setup(fresh(), digests);
    box.fake = fake;
    await acts.resolveRevisionDigests(key);
    expect(fake.writes('status')).toHaveLength(2);
    expect(stored(fake)?.containerStatuses).toEqual([{ name: 'user-container', imageDigest: digest('hello') }]);
  });

  it('a registry that refuses at once: ContainerMissing with no interim status', async () => {
    const { fake, acts } = setup(fresh(), {
      resolve: async () => {
        throw new Error('UNAUTHORIZED: authentication required');
      },
    });
    await expect(acts.resolveRevisionDigests(key)).rejects.toThrow('UNAUTHORIZED');
    expect(fake.writes('status')).toHaveLength(1);
    expect(revisionConditionSet.get(stored(fake), 'ContainerHealthy')).toMatchObject({ status: 'False', reason: 'ContainerMissing' });
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

  it('regression: a label the Revision drops leaves the revision Service; the Deployment keeps it, as upstream keeps non-Knative keys', async () => {
    const { fake, acts } = setup(revision('hello-00001', 'default', resolved, withRevLabels({ team: 'payments' })));
    await acts.reconcileRevisionResources(key);
    expect(fake.get<KubeObject>(Resources.KubeService, 'default', 'hello-00001')!.metadata.labels?.['team']).toBe('payments');
    fake.edit<Revision>(Resources.Revision, 'default', 'hello-00001', (r) => void delete r.metadata.labels!['team']);
    expect(await acts.reconcileRevisionResources(key)).toMatchObject({ deployment: 'updated', service: 'updated' });
    expect(fake.get<KubeObject>(Resources.KubeService, 'default', 'hello-00001')!.metadata.labels?.['team']).toBeUndefined();
    expect(fake.get<KubeObject>(Resources.Deployment, 'default', 'hello-00001-deployment')!.metadata.labels?.['team']).toBe('payments');
  });

  it("a Deployment the API server refuses to create leaves the Revision Deploying (Unknown, the API server's message) with a Warning InternalError, as upstream", async () => {
    const { fake, acts, recorded } = setup(revision('hello-00001', 'default', resolved));
    const forbidden = 'deployments.apps "hello-00001-deployment" is forbidden: exceeded quota: compute, requested: pods=1';
    fake.failNext('apply', Resources.Deployment, refused(403, 'Forbidden', forbidden));
    await expect(acts.reconcileRevisionResources(key)).rejects.toThrow('exceeded quota');
    const status = fake.get<Revision>(Resources.Revision, 'default', 'hello-00001')!.status;
    const message = `failed to create deployment "hello-00001-deployment": ${forbidden}`;
    for (const type of ['ResourcesAvailable', 'ContainerHealthy', 'Ready']) {
      expect(revisionConditionSet.get(status, type)).toMatchObject({ status: 'Unknown', reason: 'Deploying', message });
    }
    expect(status?.containerStatuses).toEqual([{ name: 'user-container', imageDigest: digest('hello') }]);
    expect(recorded).toEqual([{ type: 'Warning', reason: 'InternalError', message }]);
  });

  it("a refused update of the Revision's Service still says so: ResourcesAvailable False InternalError", async () => {
    const { fake, acts, recorded } = setup(revision('hello-00001', 'default', resolved));
    await acts.reconcileRevisionResources(key);
    fake.edit<KubeObject>(
      Resources.KubeService,
      'default',
      'hello-00001',
      (svc) => void (svc.metadata.labels = { ...svc.metadata.labels, 'serving.knative.dev/revision': 'other' }),
    );
    const invalid = 'Service "hello-00001" is invalid: spec.ports[0].port: Invalid value: 0';
    fake.failNext('apply', Resources.KubeService, refused(422, 'Invalid', invalid));
    recorded.length = 0;
    await expect(acts.reconcileRevisionResources(key)).rejects.toThrow('is invalid');
    const status = fake.get<Revision>(Resources.Revision, 'default', 'hello-00001')!.status;
    expect(revisionConditionSet.get(status, 'ResourcesAvailable')).toMatchObject({ status: 'False', reason: 'InternalError' });
    expect(recorded.map((e) => e.reason)).toContain('InternalError');
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

describe("updateRevisionStatus: Ready from the Revision's Ready pods", () => {
  const readyPod = (name: string, uid: string, ready: boolean, terminating = false): KubeObject =>
    ({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {
        name,
        namespace: 'default',
        labels: { 'serving.knative.dev/revisionUID': uid },
        ...(terminating ? { deletionTimestamp: '2026-01-01T00:00:00Z' } : {}),
      },
      status: { conditions: [{ type: 'Ready', status: ready ? 'True' : 'False' }] },
    }) as KubeObject;

  it('is Ready once as many pods as it wants are Ready, before the Deployment reports them available', async () => {
    const { fake, acts } = setup(revision('hello-00001', 'default', resolved, withRevAnnotations({ 'autoscaling.knative.dev/min-scale': '3' })));
    await acts.reconcileRevisionResources(key);
    const uid = fake.get<Revision>(Resources.Revision, 'default', 'hello-00001')!.metadata.uid!;
    const want = fake.get<Deployment>(Resources.Deployment, 'default', 'hello-00001-deployment')!.spec.replicas!;
    expect(want).toBe(3);
    // The Deployment controller has not caught up: nothing available yet.
    fake.edit<KubeObject & { status?: unknown }>(Resources.Deployment, 'default', 'hello-00001-deployment', (d) => {
      d.status = { replicas: want, conditions: [{ type: 'Progressing', status: 'True', reason: 'ReplicaSetUpdated' }] };
    });
    for (let i = 1; i < want; i++) fake.seed(Resources.Pod, readyPod(`p${i}`, uid, true));
    fake.seed(Resources.Pod, readyPod('leaving', uid, true, true)); // terminating: not counted
    fake.seed(Resources.Pod, readyPod('last', uid, false));
    fake.seed(Resources.Pod, readyPod('other', 'uid-of-another-revision', true)); // another Revision's: not counted
    expect(await acts.updateRevisionStatus(key)).toMatchObject({ ready: 'Unknown' });
    let status = fake.get<Revision>(Resources.Revision, 'default', 'hello-00001')!.status!;
    expect(status.actualReplicas).toBe(want - 1);
    expect(revisionConditionSet.get(status, 'ResourcesAvailable')?.status).toBe('Unknown');

    fake.edit<KubeObject & { status?: unknown }>(Resources.Pod, 'default', 'last', (p) => {
      p.status = { conditions: [{ type: 'Ready', status: 'True' }] };
    });
    expect(await acts.updateRevisionStatus(key)).toMatchObject({ outcome: 'written', ready: 'True' });
    status = fake.get<Revision>(Resources.Revision, 'default', 'hello-00001')!.status!;
    expect(status.actualReplicas).toBe(want);
    expect(revisionConditionSet.get(status, 'ContainerHealthy')?.status).toBe('True');
    expect(revisionConditionSet.get(status, 'Active')?.status).toBe('True');
  });

  it("counts the pods in the watcher's cache when it has them (no request), and lists them when it has not", async () => {
    const fake = new KubeFake();
    fake.seed(Resources.Revision, revision('hello-00001', 'default', resolved, withRevAnnotations({ 'autoscaling.knative.dev/min-scale': '2' })));
    const { deps } = fakeDeps(fake);
    const slim = (pod: KubeObject): KubeObject => ({ ...pod, status: podLikeOf(pod as PodLike) }) as KubeObject;
    let cached: KubeObject[] | undefined;
    const asked: unknown[] = [];
    deps.cache = {
      list: async (type, namespace, opts) => {
        asked.push({ kind: type.kind, namespace, opts });
        return cached;
      },
    };
    const acts = createRevisionActivities(deps);
    await acts.reconcileRevisionResources(key);
    const uid = fake.get<Revision>(Resources.Revision, 'default', 'hello-00001')!.metadata.uid!;
    fake.edit<KubeObject & { status?: unknown }>(Resources.Deployment, 'default', 'hello-00001-deployment', (d) => {
      d.status = { replicas: 2, conditions: [{ type: 'Progressing', status: 'True', reason: 'ReplicaSetUpdated' }] };
    });
    // The API server has both pods Ready; the cache has seen one of them turn Ready so far.
    fake.seed(Resources.Pod, readyPod('b', uid, true));
    fake.seed(Resources.Pod, readyPod('a', uid, true));
    cached = [slim(readyPod('b', uid, false)), slim(readyPod('a', uid, true))];
    fake.calls = [];
    expect(await acts.updateRevisionStatus(key)).toMatchObject({ ready: 'Unknown' });
    expect(fake.calls.filter((c) => c.kind === 'Pod')).toEqual([]);
    expect(asked).toEqual([{ kind: 'Pod', namespace: 'default', opts: { labels: { 'serving.knative.dev/revisionUID': uid } } }]);
    expect(fake.get<Revision>(Resources.Revision, 'default', 'hello-00001')!.status!.actualReplicas).toBe(1);

    // Its next event: both Ready in the cache.
    cached = [slim(readyPod('b', uid, true)), slim(readyPod('a', uid, true))];
    expect(await acts.updateRevisionStatus(key)).toMatchObject({ outcome: 'written', ready: 'True' });
    expect(fake.calls.filter((c) => c.kind === 'Pod')).toEqual([]);

    // No cache to vouch (a follower, between terms): the API server's list.
    fake.edit<KubeObject & { status?: unknown }>(Resources.Pod, 'default', 'a', (p) => {
      p.status = { conditions: [{ type: 'Ready', status: 'False' }] };
    });
    cached = undefined;
    // Once initialized it stays Ready (upstream's PodAutoscaler keeps ScaleTargetInitialized); Active says a pod is missing.
    expect(await acts.updateRevisionStatus(key)).toMatchObject({ ready: 'True' });
    expect(fake.calls.filter((c) => c.kind === 'Pod').map((c) => c.verb)).toEqual(['list']);
    const after = fake.get<Revision>(Resources.Revision, 'default', 'hello-00001')!.status!;
    expect(after.actualReplicas).toBe(1);
    expect(after.conditions?.find((c) => c.type === 'Active')).toMatchObject({ status: 'Unknown', reason: 'Queued' });
  });

  it('reads no pods once the Deployment reports every replica available', async () => {
    const { fake, acts } = setup(revision('hello-00001', 'default', resolved));
    await acts.reconcileRevisionResources(key);
    const want = fake.get<Deployment>(Resources.Deployment, 'default', 'hello-00001-deployment')!.spec.replicas!;
    fake.edit<KubeObject & { status?: unknown }>(Resources.Deployment, 'default', 'hello-00001-deployment', (d) => {
      d.status = { replicas: want, readyReplicas: want, availableReplicas: want, conditions: [{ type: 'Available', status: 'True' }] };
    });
    fake.calls = [];
    expect(await acts.updateRevisionStatus(key)).toMatchObject({ ready: 'True' });
    expect(fake.calls.filter((c) => c.kind === 'Pod')).toEqual([]);
  });
});

describe('updateRevisionStatus: RevisionReady', () => {
  it('is recorded once, with the status that says Ready (side by side with its write)', async () => {
    const fake = new KubeFake();
    fake.seed(Resources.Revision, revision('hello-00001', 'default', resolved));
    const { deps } = fakeDeps(fake);
    const seen: string[] = [];
    deps.events = { record: async (_o, _t, reason) => void seen.push(reason) };
    const acts = createRevisionActivities(deps);
    await acts.reconcileRevisionResources(key);
    fake.edit<KubeObject & { status?: unknown }>(Resources.Deployment, 'default', 'hello-00001-deployment', (d) => {
      d.status = { replicas: 1, readyReplicas: 1, availableReplicas: 1, conditions: [{ type: 'Available', status: 'True' }] };
    });
    seen.length = 0;
    expect(await acts.updateRevisionStatus(key)).toMatchObject({ outcome: 'written', ready: 'True' });
    expect(await acts.updateRevisionStatus(key)).toMatchObject({ outcome: 'unchanged', ready: 'True' });
    expect(seen).toEqual(['RevisionReady']);
    expect(revisionConditionSet.get(fake.get<Revision>(Resources.Revision, 'default', 'hello-00001')!.status, 'Ready')?.status).toBe('True');
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

  it("the HPA is the Revision's whole: a foreign label, annotation and spec field go; the API server's defaults are no edit", async () => {
    const { fake, acts } = setupWith(revision('hello-00001', 'default', resolved, withRevAnnotations(hpaClass)), hakn());
    await acts.reconcileRevisionResources(key);
    // The API server's defaults (no metric named: 80 % CPU) change nothing.
    fake.edit<HorizontalPodAutoscaler>(Resources.HorizontalPodAutoscaler, 'default', 'hello-00001', (h) => {
      h.spec.metrics ??= [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 80 } } }];
    });
    expect(await acts.reconcileRevisionResources(key)).toMatchObject({ hpa: 'unchanged' });
    fake.edit<HorizontalPodAutoscaler & { spec: { behavior?: unknown } }>(Resources.HorizontalPodAutoscaler, 'default', 'hello-00001', (h) => {
      h.metadata.labels = { ...h.metadata.labels, team: 'payments' };
      h.metadata.annotations = { ...h.metadata.annotations, note: 'by hand' };
      h.spec.behavior = { scaleDown: { stabilizationWindowSeconds: 600 } };
    });
    expect(await acts.reconcileRevisionResources(key)).toMatchObject({ hpa: 'updated' });
    const hpa = fake.get<HorizontalPodAutoscaler & { spec: { behavior?: unknown } }>(Resources.HorizontalPodAutoscaler, 'default', 'hello-00001')!;
    expect(hpa.metadata.labels?.['team']).toBeUndefined();
    expect(hpa.metadata.annotations?.['note']).toBeUndefined();
    expect(hpa.spec.behavior).toBeUndefined();
    expect(hpa.spec.minReplicas).toBe(3);
  });

  it('a reserve Revision of the HPA class loses its HPA and is scaled to 0; routed again, the HPA comes back', async () => {
    const { fake, acts, recorded } = setupWith(revision('hello-00001', 'default', resolved, withRevAnnotations(hpaClass)), hakn());
    await acts.reconcileRevisionResources(key);
    fake.edit<Revision>(Resources.Revision, 'default', 'hello-00001', (r) => {
      r.metadata.labels!['serving.knative.dev/routingState'] = 'reserve';
      withScaleTargetInitialized(r);
    });
    expect(await acts.reconcileRevisionResources(key)).toMatchObject({ deployment: 'updated', hpa: 'deleted', replicas: 0 });
    expect(fake.get(Resources.HorizontalPodAutoscaler, 'default', 'hello-00001')).toBeUndefined();
    expect(fake.get<Deployment>(Resources.Deployment, 'default', 'hello-00001-deployment')!.spec.replicas).toBe(0);
    expect(recorded.map((e) => e.message)).toContain('Deleted HorizontalPodAutoscaler "hello-00001"');
    fake.edit<Revision>(
      Resources.Revision,
      'default',
      'hello-00001',
      (r) => void (r.metadata.labels!['serving.knative.dev/routingState'] = 'active'),
    );
    expect(await acts.reconcileRevisionResources(key)).toMatchObject({ deployment: 'updated', hpa: 'created' });
    expect(fake.get<HorizontalPodAutoscaler>(Resources.HorizontalPodAutoscaler, 'default', 'hello-00001')!.spec.minReplicas).toBe(3);
  });

  const toReserve = (r: Revision) => {
    r.metadata.labels!['serving.knative.dev/routingState'] = 'reserve';
    withScaleTargetInitialized(r);
    r.status!.conditions = [...(r.status?.conditions ?? []), { type: 'Active', status: 'True', lastTransitionTime: '2025-01-01T00:00:00Z' }];
  };

  it('scaling a reserve Revision to zero writes Active False first, under the version it read, then the Deployment', async () => {
    const { fake, acts } = setupWith(revision('hello-00001', 'default', resolved), hakn());
    await acts.reconcileRevisionResources(key);
    fake.edit<Revision>(Resources.Revision, 'default', 'hello-00001', toReserve);
    const readAt = fake.get<Revision>(Resources.Revision, 'default', 'hello-00001')!.metadata.resourceVersion;
    const before = fake.writes().length;
    expect(await acts.reconcileRevisionResources(key)).toMatchObject({ deployment: 'updated', replicas: 0 });
    const writes = fake.writes().slice(before);
    const statusAt = writes.findIndex((w) => w.verb === 'status' && w.kind === 'Revision');
    const deploymentAt = writes.findIndex((w) => w.kind === 'Deployment');
    expect(statusAt).toBeGreaterThanOrEqual(0);
    expect(statusAt).toBeLessThan(deploymentAt);
    expect((writes[statusAt]!.body as Revision).metadata.resourceVersion).toBe(readAt);
    const active = revisionConditionSet.get(fake.get<Revision>(Resources.Revision, 'default', 'hello-00001')!.status, 'Active');
    expect(active).toMatchObject({ status: 'False', reason: 'NoTraffic' });
  });

  it('a Route that makes the Revision active between its read and its scale-down stops the step before the Deployment', async () => {
    const fake = new KubeFake();
    fake.seed(Resources.Revision, revision('hello-00001', 'default', resolved));
    const { deps } = fakeDeps(fake, { revisionConfig: hakn });
    const acts = createRevisionActivities(deps);
    await acts.reconcileRevisionResources(key);
    fake.edit<Revision>(Resources.Revision, 'default', 'hello-00001', toReserve);
    // The Route's labeler relabels it right after this pass read it.
    const get = deps.kube.get.bind(deps.kube);
    deps.kube.get = (async (type, ns, name) => {
      const got = await get(type, ns, name);
      if (type.kind === 'Revision') {
        fake.edit<Revision>(
          Resources.Revision,
          'default',
          'hello-00001',
          (r) => void (r.metadata.labels!['serving.knative.dev/routingState'] = 'active'),
        );
      }
      return got;
    }) as typeof deps.kube.get;
    await expect(acts.reconcileRevisionResources(key)).rejects.toMatchObject({ code: 409, reason: 'Conflict' });
    expect(fake.get<Deployment>(Resources.Deployment, 'default', 'hello-00001-deployment')!.spec.replicas).toBe(2);
    const active = revisionConditionSet.get(fake.get<Revision>(Resources.Revision, 'default', 'hello-00001')!.status, 'Active');
    expect(active?.status).toBe('True');
    // The retry reads the Revision active: its pods stay.
    deps.kube.get = get;
    expect(await acts.reconcileRevisionResources(key)).toMatchObject({ deployment: 'unchanged', replicas: 2 });
  });

  it('a Revision labelled reserve before it was ever Ready reaches its serving count first, then holds no pods', async () => {
    const { fake, acts } = setupWith(
      revision('hello-00001', 'default', resolved, withRevLabels({ 'serving.knative.dev/routingState': 'reserve' })),
      hakn(),
    );
    expect(await acts.reconcileRevisionResources(key)).toMatchObject({ deployment: 'created', replicas: 2 });
    fake.edit<KubeObject & { status?: unknown }>(Resources.Deployment, 'default', 'hello-00001-deployment', (d) => {
      d.status = { replicas: 2, readyReplicas: 2, availableReplicas: 2, updatedReplicas: 2, conditions: [{ type: 'Available', status: 'True' }] };
    });
    // Its pods reached the threshold: Ready, and the workflow is told to apply again.
    expect(await acts.updateRevisionStatus(key)).toMatchObject({ ready: 'True', rescale: true });
    expect(await acts.reconcileRevisionResources(key)).toMatchObject({ deployment: 'updated', replicas: 0 });
    // Initialized for good: later status passes ask for nothing more.
    expect(await acts.updateRevisionStatus(key)).not.toHaveProperty('rescale');
  });

  it('an HPA-class Revision is Ready only once min-scale pods are ready, not at the Deployment’s first pod', async () => {
    const { fake, acts } = setupWith(revision('hello-00001', 'default', resolved, withRevAnnotations(hpaClass)), hakn());
    await acts.reconcileRevisionResources(key);
    const available = (n: number) =>
      fake.edit<KubeObject & { spec: { replicas?: number }; status?: unknown }>(Resources.Deployment, 'default', 'hello-00001-deployment', (d) => {
        d.spec.replicas = n;
        d.status = { replicas: n, readyReplicas: n, availableReplicas: n, conditions: [{ type: 'Available', status: 'True' }] };
      });
    available(1); // the API server's default before the HPA controller acts
    expect(await acts.updateRevisionStatus(key)).toMatchObject({ ready: 'Unknown' });
    available(3);
    expect(await acts.updateRevisionStatus(key)).toMatchObject({ ready: 'True' });
  });

  it('an HPA-class Revision whose HPA another object controls says so: ResourcesAvailable False NotOwned, never Ready', async () => {
    const { fake, acts } = setupWith(revision('hello-00001', 'default', resolved, withRevAnnotations(hpaClass)), hakn());
    fake.seed(Resources.HorizontalPodAutoscaler, {
      apiVersion: 'autoscaling/v2',
      kind: 'HorizontalPodAutoscaler',
      metadata: {
        name: 'hello-00001',
        namespace: 'default',
        ownerReferences: [{ kind: 'Other', apiVersion: 'example.io/v1', name: 'x', uid: 'other', controller: true }],
      },
    });
    expect(await acts.reconcileRevisionResources(key)).toMatchObject({ hpa: 'notOwned' });
    fake.edit<KubeObject & { spec: { replicas?: number }; status?: unknown }>(Resources.Deployment, 'default', 'hello-00001-deployment', (d) => {
      d.spec.replicas = 3;
      d.status = { replicas: 3, readyReplicas: 3, availableReplicas: 3, conditions: [{ type: 'Available', status: 'True' }] };
    });
    expect(await acts.updateRevisionStatus(key)).toMatchObject({ ready: 'False' });
    const status = fake.get<Revision>(Resources.Revision, 'default', 'hello-00001')!.status;
    expect(revisionConditionSet.get(status, 'ResourcesAvailable')).toMatchObject({
      status: 'False',
      reason: 'NotOwned',
      message: 'There is an existing HorizontalPodAutoscaler "hello-00001" that we do not own.',
    });
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

describe("reconcileRevisionResources: queue-proxy's settings from the config maps", () => {
  const queueEnv = (fake: KubeFake) => {
    const d = fake.get<Deployment>(Resources.Deployment, 'default', 'hello-00001-deployment')!;
    const qp = d.spec.template.spec.containers.find((c) => c.name === 'queue-proxy')!;
    return Object.fromEntries((qp.env ?? []).map((e) => [e.name, e.value]));
  };

  it("renders config-observability as OBSERVABILITY_CONFIG and config-logging's queueproxy level and zap config", async () => {
    const fake = new KubeFake();
    fake.seed(Resources.Revision, revision('hello-00001', 'default', resolved));
    const { deps } = fakeDeps(fake);
    const observability = parseObservabilityConfig({ 'metrics-protocol': 'prometheus', 'logging.enable-request-log': 'true' });
    const logging = parseLoggingConfig({ 'loglevel.queueproxy': 'debug', 'zap-logger-config': '{"level":"warn"}' });
    if (!observability.ok || !logging.ok) throw new Error('the test maps must parse');
    Object.assign(deps.config, { observabilityConfig: () => observability.value, loggingConfig: () => logging.value });
    await createRevisionActivities(deps).reconcileRevisionResources(key);
    const env = queueEnv(fake);
    expect(env['OBSERVABILITY_CONFIG']).toBe(observabilityConfigJson(observability.value));
    expect(JSON.parse(env['OBSERVABILITY_CONFIG']!)).toMatchObject({ metrics: { protocol: 'prometheus' }, enableRequestLog: true });
    expect(env['SERVING_LOGGING_LEVEL']).toBe('debug');
    expect(env['SERVING_LOGGING_CONFIG']).toBe('{"level":"warn"}');
  });

  it('without those maps, Knative defaults: OBSERVABILITY_CONFIG of the default config, no logging settings', async () => {
    const { fake, acts } = setup(revision('hello-00001', 'default', resolved));
    await acts.reconcileRevisionResources(key);
    const env = queueEnv(fake);
    expect(env['OBSERVABILITY_CONFIG']).toBe(DEFAULT_OBSERVABILITY_CONFIG);
    expect(env['SERVING_LOGGING_LEVEL'] ?? '').toBe('');
  });
});
