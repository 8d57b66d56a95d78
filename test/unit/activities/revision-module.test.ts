// A foreign module's Revision against an in-memory API server (ADR 0009): Tidal builds no Deployment,
// HPA or PodDisruptionBudget for it — only its Service — hands its two conditions to the operator when the digests
// are pinned, computes Ready from what the operator writes, never overwrites a write it did not read, and tells the
// truth about a Revision whose module annotations bypassed the webhook.
import { describe, expect, it } from 'vitest';
import { createRevisionActivities } from '../../../activities/revision.js';
import { isConflict } from '../../../kube/errors.js';
import type { ConfigSource } from '../../../activities/deps.js';
import { Resources } from '../../../api/kinds.js';
import { revisionConditionSet } from '../../../api/lifecycle/revision.js';
import type { KubeObject } from '../../../api/meta.js';
import type { Condition, Revision } from '../../../api/serving.js';
import { revision, withContainerStatuses, withRevAnnotations } from '../../fixtures/revision.js';
import { KubeFake, fakeDeps } from './kube-fake.js';

const key = { namespace: 'default', name: 'hello-00001' };
const moduleAnns = (module = 'sidecar-example', config = '{"sidecarImage":"s:1"}') =>
  withRevAnnotations({ 'tidal.dev/module': module, 'tidal.dev/module-config': config });
const resolved = withContainerStatuses([{ name: 'user-container', imageDigest: 'ghcr.io/example/hello@sha256:' + 'a'.repeat(64) }]);

function setup(rev: Revision, known: string[] = ['sidecar-example']) {
  const fake = new KubeFake();
  fake.seed(Resources.Revision, rev);
  const { deps, recorded } = fakeDeps(fake);
  (deps.config as ConfigSource & { modulesConfig: () => { known: string[] } }).modulesConfig = () => ({ known });
  return { fake, recorded, acts: createRevisionActivities(deps) };
}

const stored = (fake: KubeFake) => fake.get<Revision>(Resources.Revision, 'default', 'hello-00001')!;
const cond = (rev: Revision, type: string) => revisionConditionSet.get(rev.status, type);

/** The operator's write: its two conditions laid over what it read. */
function operatorWrites(fake: KubeFake, ra: Partial<Condition>, ch: Partial<Condition>): void {
  fake.edit<Revision>(Resources.Revision, 'default', 'hello-00001', (r) => {
    const others = (r.status?.conditions ?? []).filter((c) => c.type !== 'ResourcesAvailable' && c.type !== 'ContainerHealthy');
    r.status = {
      ...r.status,
      conditions: [
        ...others,
        { type: 'ResourcesAvailable', status: 'Unknown', ...ra },
        { type: 'ContainerHealthy', status: 'Unknown', ...ch },
      ] as Condition[],
    };
  });
}

describe('a Revision of a foreign module', () => {
  it('gets its Service (targeting the sidecar port 8012) and no Deployment, HPA or PodDisruptionBudget', async () => {
    const { fake, acts } = setup(
      revision(
        'hello-00001',
        'default',
        resolved,
        moduleAnns(),
        withRevAnnotations({ 'autoscaling.knative.dev/class': 'hpa.autoscaling.knative.dev' }),
      ),
    );
    expect(await acts.reconcileRevisionResources(key)).toMatchObject({ outcome: 'module', module: 'sidecar-example', service: 'created' });
    expect(fake.writes().map((w) => w.kind)).toEqual(['Service']);
    expect(fake.get(Resources.Deployment, 'default', 'hello-00001-deployment')).toBeUndefined();
    expect(fake.get(Resources.HorizontalPodAutoscaler, 'default', 'hello-00001')).toBeUndefined();
    expect(fake.get(Resources.PodDisruptionBudget, 'default', 'hello-00001')).toBeUndefined();
    const svc = fake.get<KubeObject & { spec: { ports: unknown[]; selector: unknown } }>(Resources.KubeService, 'default', 'hello-00001')!;
    expect(svc.spec.ports).toEqual([{ name: 'http', protocol: 'TCP', port: 80, targetPort: 8012 }]);
    expect(svc.spec.selector).toEqual({ 'serving.knative.dev/revisionUID': 'uid-hello-00001' });
  });

  it('the same Revision without the module gets its Deployment (control)', async () => {
    const { fake, acts } = setup(revision('hello-00001', 'default', resolved));
    expect(await acts.reconcileRevisionResources(key)).toMatchObject({ outcome: 'applied', deployment: 'created' });
    expect(fake.get(Resources.Deployment, 'default', 'hello-00001-deployment')).toBeDefined();
  });

  it('pinning the digests hands the conditions over: Unknown AwaitingModule, naming the module', async () => {
    const { fake, acts } = setup(revision('hello-00001', 'default', moduleAnns()));
    await acts.resolveRevisionDigests(key);
    const rev = stored(fake);
    expect(rev.status?.containerStatuses).toHaveLength(1);
    for (const type of ['ResourcesAvailable', 'ContainerHealthy', 'Ready']) {
      expect(cond(rev, type)).toMatchObject({
        status: 'Unknown',
        reason: 'AwaitingModule',
        message: 'waiting for the operator of module "sidecar-example" to deploy Revision "hello-00001"',
      });
    }
  });

  it("Ready follows the operator's conditions, which Tidal keeps as written", async () => {
    const { fake, acts } = setup(revision('hello-00001', 'default', resolved, moduleAnns()));
    await acts.updateRevisionStatus(key);
    operatorWrites(fake, { status: 'True' }, { status: 'True' });
    expect(await acts.updateRevisionStatus(key)).toMatchObject({ outcome: 'written', ready: 'True' });
    operatorWrites(fake, { status: 'False', reason: 'ProgressDeadlineExceeded', message: 'too slow' }, { status: 'True' });
    expect(await acts.updateRevisionStatus(key)).toMatchObject({ ready: 'False', reason: 'ProgressDeadlineExceeded' });
    const rev = stored(fake);
    expect(cond(rev, 'ResourcesAvailable')).toMatchObject({ status: 'False', reason: 'ProgressDeadlineExceeded', message: 'too slow' });
    expect(cond(rev, 'Ready')).toMatchObject({ status: 'False', reason: 'ProgressDeadlineExceeded', message: 'too slow' });
    // The status step wrote nothing but the Revision's status.
    expect(fake.writes().filter((c) => c.verb !== 'status')).toEqual([]);
  });

  it('a status write carries the resourceVersion it was computed from (a precondition)', async () => {
    const { fake, acts } = setup(revision('hello-00001', 'default', resolved, moduleAnns()));
    const before = stored(fake).metadata.resourceVersion;
    fake.calls = [];
    expect(await acts.updateRevisionStatus(key)).toMatchObject({ outcome: 'written' });
    const write = fake.calls.find((c) => c.verb === 'status');
    expect((write?.body as KubeObject).metadata.resourceVersion).toBe(before);
  });

  it('a write against a stale version fails with 409 Conflict (and the step retries from a fresh read)', async () => {
    const { fake, acts } = setup(revision('hello-00001', 'default', resolved, moduleAnns()));
    const kube = fake.client();
    const read = await kube.get<Revision>(Resources.Revision, 'default', 'hello-00001');
    operatorWrites(fake, { status: 'True' }, { status: 'True' });
    const err = await kube
      .apply(Resources.Revision, { ...read!, metadata: { ...read!.metadata }, status: { conditions: [] } } as KubeObject, 'status')
      .catch((e: unknown) => e);
    expect(isConflict(err)).toBe(true);
    // A fresh pass keeps the operator's write.
    await acts.updateRevisionStatus(key);
    expect(cond(stored(fake), 'Ready')?.status).toBe('True');
  });

  it('a module config-modules no longer lists keeps running; the placeholder says so', async () => {
    const { fake, acts } = setup(revision('hello-00001', 'default', resolved, moduleAnns('statefull')), ['stateful']);
    await acts.updateRevisionStatus(key);
    expect(cond(stored(fake), 'ResourcesAvailable')).toMatchObject({
      status: 'Unknown',
      reason: 'AwaitingModule',
      message:
        'waiting for the operator of module "statefull" to deploy Revision "hello-00001"; config-modules does not list the module (known modules: stateful)',
    });
    expect(fake.get(Resources.Deployment, 'default', 'hello-00001-deployment')).toBeUndefined();
  });

  it('module annotations that bypassed the webhook: ResourcesAvailable and Ready False InvalidModule, nothing built', async () => {
    const { fake, acts } = setup(revision('hello-00001', 'default', resolved, moduleAnns('sidecar-example', '[1]')));
    expect(await acts.reconcileRevisionResources(key)).toMatchObject({ outcome: 'module' });
    expect(await acts.updateRevisionStatus(key)).toMatchObject({ ready: 'False', reason: 'InvalidModule' });
    expect(cond(stored(fake), 'ResourcesAvailable')?.message).toBe(
      'invalid module configuration: must be a JSON object, not an array: metadata.annotations.tidal.dev/module-config',
    );
    expect(fake.get(Resources.Deployment, 'default', 'hello-00001-deployment')).toBeUndefined();
  });
});
