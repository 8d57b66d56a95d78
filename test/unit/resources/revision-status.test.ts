import { describe, expect, it } from 'vitest';
import type { Revision } from '../../../api/serving.js';
import { computeRevisionStatus, type RevisionObservation } from '../../../resources/revision-status.js';
import { revision } from '../../fixtures/revision.js';
import { availableDeployment, cond, deployment, kcond, pod, T0, T1, T2 } from '../../fixtures/status.js';

const resolved = [{ name: 'user-container', imageDigest: 'ghcr.io/example/hello@sha256:' + 'a'.repeat(64) }];

/** hello-00001 with its digests resolved (containerStatuses set) and no conditions yet. */
const rev = (...opts: ((r: Revision) => void)[]) =>
  revision('hello-00001', 'default', (r) => void (r.status = { containerStatuses: structuredClone(resolved) }), ...opts);

const observe = (o: Partial<RevisionObservation>): RevisionObservation => ({
  revision: rev(),
  digestsResolved: true,
  deployment: undefined,
  podIsAlwaysSchedulable: false,
  ...o,
});

/** A Deployment with one replica that is not available yet; Progressing as given. */
const progressing = (status: 'True' | 'False', reason: string, message: string) =>
  deployment(1, { conditions: [kcond('Progressing', status, reason, message)], replicas: 1, readyReplicas: 0, availableReplicas: 0 });

/** The informational Active condition (severity Info). */
const active = (status: 'True' | 'False' | 'Unknown', t: string, reason?: string, message?: string) => ({
  ...cond('Active', status, t, reason, message),
  severity: 'Info',
});

const QUEUED = 'Requests to the target are being buffered as resources are provisioned.';

const deadline = () => progressing('False', 'ProgressDeadlineExceeded', 'ReplicaSet "hello-00001-deployment-abc" has timed out progressing.');

describe('computeRevisionStatus', () => {
  describe('digest resolution', () => {
    it('a resolution error → ContainerHealthy False ContainerMissing with the message, Ready False, ResourcesAvailable Unknown ResolvingDigests (golden)', () => {
      const msg = 'Unable to fetch image "ghcr.io/example/hello:1": failed to resolve image to digest: GET https://ghcr.io/v2/: 401 Unauthorized';
      const r = revision('hello-00001', 'default');
      expect(computeRevisionStatus(observe({ revision: r, digestsResolved: false, resolveError: msg }), T1)).toEqual({
        status: {
          observedGeneration: 1,
          conditions: [
            cond('ContainerHealthy', 'False', T1, 'ContainerMissing', msg),
            cond('Ready', 'False', T1, 'ContainerMissing', msg),
            cond('ResourcesAvailable', 'Unknown', T1, 'ResolvingDigests'),
          ],
        },
        events: [],
      });
    });

    it('a resolution error after the interim ResolvingDigests write ends in the same conditions as one without it', () => {
      const msg = 'Unable to fetch image "ghcr.io/example/hello:1": failed to resolve image to digest: manifest unknown';
      const r = revision('hello-00001', 'default');
      const interim = computeRevisionStatus(observe({ revision: r, digestsResolved: false }), T1).status;
      const afterInterim = computeRevisionStatus(observe({ revision: { ...r, status: interim }, digestsResolved: false, resolveError: msg }), T2);
      const direct = computeRevisionStatus(observe({ revision: r, digestsResolved: false, resolveError: msg }), T2);
      const brief = (s: typeof interim) => s.conditions?.map((c) => ({ type: c.type, status: c.status, reason: c.reason, message: c.message }));
      expect(brief(afterInterim.status)).toEqual(brief(direct.status));
    });

    it('not resolved yet → ResourcesAvailable Unknown ResolvingDigests (golden)', () => {
      const r = revision('hello-00001', 'default');
      expect(computeRevisionStatus(observe({ revision: r, digestsResolved: false }), T1)).toEqual({
        status: {
          observedGeneration: 1,
          conditions: [
            cond('ContainerHealthy', 'Unknown', T1),
            cond('Ready', 'Unknown', T1, 'ResolvingDigests'),
            cond('ResourcesAvailable', 'Unknown', T1, 'ResolvingDigests'),
          ],
        },
        events: [],
      });
    });

    it('keeps the containerStatuses already in the status', () => {
      const { status } = computeRevisionStatus(observe({ deployment: availableDeployment() }), T1);
      expect(status.containerStatuses).toEqual(resolved);
    });
  });

  describe('Deployment', () => {
    // An unowned child: the Deployment; the Service `<rev>` (an old incarnation's awaiting the garbage collector) alike.
    it.each([
      ['a Deployment', { deploymentNotOwned: true }, 'Deployment "hello-00001-deployment"'],
      ['a Service `<rev>`', { serviceNotOwned: true }, 'Service "hello-00001"'],
    ] as const)('%s we do not own → ResourcesAvailable False NotOwned, whatever the Deployment says (golden)', (_, notOwned, what) => {
      const msg = `There is an existing ${what} that we do not own.`;
      expect(computeRevisionStatus(observe({ ...notOwned, deployment: availableDeployment() }), T1)).toEqual({
        status: {
          observedGeneration: 1,
          containerStatuses: resolved,
          conditions: [
            cond('ContainerHealthy', 'Unknown', T1),
            cond('Ready', 'False', T1, 'NotOwned', msg),
            cond('ResourcesAvailable', 'False', T1, 'NotOwned', msg),
          ],
        },
        events: [],
      });
    });

    it("a pass that did not look at the Service keeps its NotOwned mark; a full pass that found it the Revision's clears it", () => {
      const msg = 'There is an existing Service "hello-00001" that we do not own.';
      const marked = computeRevisionStatus(observe({ serviceNotOwned: true, deployment: availableDeployment() }), T1).status;
      const withMark = rev((r) => void (r.status = marked));
      // A status-only pass (pods changed) leaves serviceNotOwned undefined.
      const kept = computeRevisionStatus(observe({ revision: withMark, deployment: availableDeployment() }), T2).status;
      expect(kept.conditions?.find((c) => c.type === 'ResourcesAvailable')).toMatchObject({ status: 'False', reason: 'NotOwned', message: msg });
      expect(kept.conditions?.find((c) => c.type === 'Ready')).toMatchObject({ status: 'False', reason: 'NotOwned' });
      const cleared = computeRevisionStatus(observe({ revision: withMark, serviceNotOwned: false, deployment: availableDeployment() }), T2);
      expect(cleared.status.conditions?.find((c) => c.type === 'Ready')).toMatchObject({ status: 'True' });
      expect(cleared.events).toEqual([{ type: 'Normal', reason: 'RevisionReady', message: 'Revision becomes ready upon all resources being ready' }]);
      // A Deployment's NotOwned mark is not the Service's: a pass that did not look at the Service does not keep it.
      const deploymentMarked = computeRevisionStatus(observe({ deploymentNotOwned: true, deployment: availableDeployment() }), T1).status;
      const next = computeRevisionStatus(
        observe({ revision: rev((r) => void (r.status = deploymentMarked)), deployment: availableDeployment() }),
        T2,
      );
      expect(next.status.conditions?.find((c) => c.type === 'Ready')).toMatchObject({ status: 'True' });
    });

    it('no Deployment yet → ResourcesAvailable and ContainerHealthy Unknown Deploying (golden)', () => {
      expect(computeRevisionStatus(observe({}), T1)).toEqual({
        status: {
          observedGeneration: 1,
          containerStatuses: resolved,
          conditions: [
            active('Unknown', T1, 'Deploying'),
            cond('ContainerHealthy', 'Unknown', T1, 'Deploying'),
            cond('Ready', 'Unknown', T1, 'Deploying'),
            cond('ResourcesAvailable', 'Unknown', T1, 'Deploying'),
          ],
        },
        events: [],
      });
    });

    it('a Deployment without Progressing → ResourcesAvailable Unknown Deploying; replicas reported', () => {
      const d = deployment(2, { replicas: 2 });
      expect(computeRevisionStatus(observe({ deployment: d }), T1).status).toEqual({
        observedGeneration: 1,
        containerStatuses: resolved,
        actualReplicas: 0,
        desiredReplicas: 2,
        conditions: [
          active('Unknown', T1, 'Queued', QUEUED),
          cond('ContainerHealthy', 'Unknown', T1),
          cond('Ready', 'Unknown', T1, 'Deploying'),
          cond('ResourcesAvailable', 'Unknown', T1, 'Deploying'),
        ],
      });
    });

    it('Progressing True alone does not make the Revision ready (ResourcesAvailable back to Unknown Deploying)', () => {
      const d = progressing('True', 'ReplicaSetUpdated', 'ReplicaSet "x" is progressing.');
      const { status } = computeRevisionStatus(observe({ deployment: d }), T1);
      expect(status.conditions).toEqual([
        active('Unknown', T1, 'Queued', QUEUED),
        cond('ContainerHealthy', 'Unknown', T1),
        cond('Ready', 'Unknown', T1, 'Deploying'),
        cond('ResourcesAvailable', 'Unknown', T1, 'Deploying'),
      ]);
    });

    it('Progressing False ProgressDeadlineExceeded → ResourcesAvailable False with the Deployment reason', () => {
      const msg = 'ReplicaSet "hello-00001-deployment-abc" has timed out progressing.';
      const { status } = computeRevisionStatus(observe({ deployment: deadline() }), T1);
      expect(status.conditions).toEqual([
        active('Unknown', T1, 'Queued', QUEUED),
        cond('ContainerHealthy', 'Unknown', T1),
        cond('Ready', 'False', T1, 'ProgressDeadlineExceeded', msg),
        cond('ResourcesAvailable', 'False', T1, 'ProgressDeadlineExceeded', msg),
      ]);
    });

    it('ReplicaFailure True FailedCreate (quota) → ResourcesAvailable False FailedCreate', () => {
      const msg = 'pods "hello-00001-deployment-abc-x" is forbidden: exceeded quota: q, requested: cpu=1, used: cpu=2, limited: cpu=2';
      const d = deployment(1, {
        conditions: [kcond('Progressing', 'True', 'ReplicaSetUpdated', 'progressing'), kcond('ReplicaFailure', 'True', 'FailedCreate', msg)],
        availableReplicas: 0,
      });
      const { status } = computeRevisionStatus(observe({ deployment: d }), T1);
      expect(status.conditions).toEqual([
        active('Unknown', T1, 'Queued', QUEUED),
        cond('ContainerHealthy', 'Unknown', T1),
        cond('Ready', 'False', T1, 'FailedCreate', msg),
        cond('ResourcesAvailable', 'False', T1, 'FailedCreate', msg),
      ]);
    });
  });

  describe('pod inspection while no replica is available', () => {
    it('lastState.terminated exit code 1 → ContainerHealthy False ExitCode1 "Container failed with: …" (golden)', () => {
      const d = progressing('True', 'ReplicaSetUpdated', 'progressing');
      const p = pod({
        containerStatuses: [
          { name: 'queue-proxy', state: { waiting: { reason: 'Ignored' } }, lastState: { terminated: { exitCode: 2, message: 'not me' } } },
          {
            name: 'user-container',
            state: { waiting: { reason: 'CrashLoopBackOff', message: 'back-off 10s' } },
            lastState: { terminated: { exitCode: 1, reason: 'Error', message: 'panic: boom' } },
          },
        ],
      });
      expect(computeRevisionStatus(observe({ deployment: d, pod: p }), T1)).toEqual({
        status: {
          observedGeneration: 1,
          containerStatuses: resolved,
          actualReplicas: 0,
          desiredReplicas: 1,
          conditions: [
            active('Unknown', T1, 'Queued', QUEUED),
            cond('ContainerHealthy', 'False', T1, 'ExitCode1', 'Container failed with: panic: boom'),
            cond('Ready', 'False', T1, 'ExitCode1', 'Container failed with: panic: boom'),
            cond('ResourcesAvailable', 'Unknown', T1, 'Deploying'),
          ],
        },
        events: [],
      });
    });

    it('exit code 0 without a message → ExitCode0 "Container failed with: container exited with no error"', () => {
      const p = pod({ containerStatuses: [{ name: 'user-container', lastState: { terminated: { exitCode: 0 } } }] });
      const { status } = computeRevisionStatus(observe({ deployment: progressing('True', 'ReplicaSetUpdated', 'p'), pod: p }), T1);
      expect(status.conditions?.find((c) => c.type === 'ContainerHealthy')).toEqual(
        cond('ContainerHealthy', 'False', T1, 'ExitCode0', 'Container failed with: container exited with no error'),
      );
    });

    it('waiting ImagePullBackOff after ProgressDeadlineExceeded → ResourcesAvailable False ImagePullBackOff (golden)', () => {
      const msg = 'Back-off pulling image "ghcr.io/example/hello@sha256:aaa"';
      const p = pod({ containerStatuses: [{ name: 'user-container', state: { waiting: { reason: 'ImagePullBackOff', message: msg } } }] });
      expect(computeRevisionStatus(observe({ deployment: deadline(), pod: p }), T1)).toEqual({
        status: {
          observedGeneration: 1,
          containerStatuses: resolved,
          actualReplicas: 0,
          desiredReplicas: 1,
          conditions: [
            active('Unknown', T1, 'Queued', QUEUED),
            cond('ContainerHealthy', 'Unknown', T1),
            cond('Ready', 'False', T1, 'ImagePullBackOff', msg),
            cond('ResourcesAvailable', 'False', T1, 'ImagePullBackOff', msg),
          ],
        },
        events: [],
      });
    });

    it('a waiting container before the progress deadline is not surfaced', () => {
      const p = pod({ containerStatuses: [{ name: 'user-container', state: { waiting: { reason: 'ImagePullBackOff', message: 'x' } } }] });
      const { status } = computeRevisionStatus(observe({ deployment: progressing('True', 'ReplicaSetUpdated', 'p'), pod: p }), T1);
      expect(status.conditions?.find((c) => c.type === 'ResourcesAvailable')).toEqual(cond('ResourcesAvailable', 'Unknown', T1, 'Deploying'));
      expect(status.conditions?.find((c) => c.type === 'Ready')).toEqual(cond('Ready', 'Unknown', T1, 'Deploying'));
    });

    it('PodScheduled False Unschedulable → ResourcesAvailable False Unschedulable (golden)', () => {
      const msg = '0/3 nodes are available: 3 Insufficient cpu.';
      const p = pod({ conditions: [kcond('PodScheduled', 'False', 'Unschedulable', msg)] });
      expect(computeRevisionStatus(observe({ deployment: progressing('True', 'ReplicaSetUpdated', 'p'), pod: p }), T1)).toEqual({
        status: {
          observedGeneration: 1,
          containerStatuses: resolved,
          actualReplicas: 0,
          desiredReplicas: 1,
          conditions: [
            active('Unknown', T1, 'Queued', QUEUED),
            cond('ContainerHealthy', 'Unknown', T1),
            cond('Ready', 'False', T1, 'Unschedulable', msg),
            cond('ResourcesAvailable', 'False', T1, 'Unschedulable', msg),
          ],
        },
        events: [],
      });
    });

    it('PodScheduled False is ignored when pod-is-always-schedulable is on', () => {
      const p = pod({ conditions: [kcond('PodScheduled', 'False', 'Unschedulable', 'no nodes')] });
      const { status } = computeRevisionStatus(
        observe({ deployment: progressing('True', 'ReplicaSetUpdated', 'p'), pod: p, podIsAlwaysSchedulable: true }),
        T1,
      );
      expect(status.conditions).toEqual([
        active('Unknown', T1, 'Queued', QUEUED),
        cond('ContainerHealthy', 'Unknown', T1),
        cond('Ready', 'Unknown', T1, 'Deploying'),
        cond('ResourcesAvailable', 'Unknown', T1, 'Deploying'),
      ]);
    });

    it('the pod is not inspected once a replica is available', () => {
      const d = availableDeployment();
      const p = pod({
        conditions: [kcond('PodScheduled', 'False', 'Unschedulable', 'no nodes')],
        containerStatuses: [{ name: 'user-container', lastState: { terminated: { exitCode: 1, message: 'old crash' } } }],
      });
      const { status } = computeRevisionStatus(observe({ deployment: d, pod: p }), T1);
      expect(status.conditions?.every((c) => c.status === 'True')).toBe(true);
    });
  });

  describe('Ready = ResourcesAvailable ∧ ContainerHealthy', () => {
    it('a fully available Deployment → Ready True, replicas set, RevisionReady event (golden)', () => {
      expect(computeRevisionStatus(observe({ deployment: availableDeployment() }), T1)).toEqual({
        status: {
          observedGeneration: 1,
          containerStatuses: resolved,
          actualReplicas: 1,
          desiredReplicas: 1,
          conditions: [active('True', T1), cond('ContainerHealthy', 'True', T1), cond('Ready', 'True', T1), cond('ResourcesAvailable', 'True', T1)],
        },
        events: [{ type: 'Normal', reason: 'RevisionReady', message: 'Revision becomes ready upon all resources being ready' }],
      });
    });

    it('RevisionReady is emitted only on the not-ready → ready transition; times are kept', () => {
      const first = computeRevisionStatus(observe({ deployment: availableDeployment() }), T1);
      const second = computeRevisionStatus(observe({ revision: rev((r) => void (r.status = first.status)), deployment: availableDeployment() }), T2);
      expect(second).toEqual({ status: first.status, events: [] });
    });

    it('Ready again after a failure emits RevisionReady again', () => {
      const failedStatus = {
        observedGeneration: 1,
        containerStatuses: structuredClone(resolved),
        conditions: [
          cond('ContainerHealthy', 'True', T0),
          cond('Ready', 'False', T0, 'ProgressDeadlineExceeded', 'x'),
          cond('ResourcesAvailable', 'False', T0, 'ProgressDeadlineExceeded', 'x'),
        ],
      };
      const { status, events } = computeRevisionStatus(
        observe({ revision: rev((r) => void (r.status = failedStatus)), deployment: availableDeployment() }),
        T1,
      );
      expect(status.conditions).toEqual([
        active('True', T1),
        cond('ContainerHealthy', 'True', T0),
        cond('Ready', 'True', T1),
        cond('ResourcesAvailable', 'True', T1),
      ]);
      expect(events.map((e) => e.reason)).toEqual(['RevisionReady']);
    });

    it('Available True but fewer available replicas than desired → not ready (ResourcesAvailable Unknown Deploying)', () => {
      const d = deployment(2, {
        conditions: [kcond('Available', 'True', 'MinimumReplicasAvailable', 'ok'), kcond('Progressing', 'True', 'ReplicaSetUpdated', 'p')],
        replicas: 2,
        readyReplicas: 1,
        availableReplicas: 1,
      });
      expect(computeRevisionStatus(observe({ deployment: d }), T1)).toEqual({
        status: {
          observedGeneration: 1,
          containerStatuses: resolved,
          actualReplicas: 1,
          desiredReplicas: 2,
          conditions: [
            active('True', T1),
            cond('ContainerHealthy', 'True', T1),
            cond('Ready', 'Unknown', T1, 'Deploying'),
            cond('ResourcesAvailable', 'Unknown', T1, 'Deploying'),
          ],
        },
        events: [],
      });
    });

    it('a Ready Revision whose Deployment loses availability goes back to Unknown and emits nothing', () => {
      const first = computeRevisionStatus(observe({ deployment: availableDeployment() }), T1);
      const d = progressing('True', 'ReplicaSetUpdated', 'p');
      const { status, events } = computeRevisionStatus(observe({ revision: rev((r) => void (r.status = first.status)), deployment: d }), T2);
      expect(status.conditions).toEqual([
        active('Unknown', T2, 'Queued', QUEUED),
        cond('ContainerHealthy', 'True', T1),
        cond('Ready', 'Unknown', T2, 'Deploying'),
        cond('ResourcesAvailable', 'Unknown', T2, 'Deploying'),
      ]);
      expect(status.actualReplicas).toBe(0);
      expect(events).toEqual([]);
    });

    it('a new Revision generation bumps observedGeneration', () => {
      const r = rev(
        (x) => void (x.metadata.generation = 2),
        (x) => void (x.status = { ...x.status, observedGeneration: 1 }),
      );
      expect(computeRevisionStatus(observe({ revision: r, deployment: availableDeployment() }), T1).status.observedGeneration).toBe(2);
    });

    it('does not mutate the Revision it is given', () => {
      const r = rev();
      const copy = structuredClone(r);
      computeRevisionStatus(observe({ revision: r, deployment: availableDeployment() }), T1);
      expect(r).toEqual(copy);
    });
  });

  describe('Active (written as hakn would, True while the Revision has ready pods)', () => {
    const activeOf = (o: Partial<RevisionObservation>) => computeRevisionStatus(observe(o), T1).status.conditions?.find((c) => c.type === 'Active');

    it('is not written before the Revision reaches its Deployment (digests pending or failed, Deployment not owned)', () => {
      expect(activeOf({ revision: revision('hello-00001', 'default'), digestsResolved: false })).toBeUndefined();
      expect(activeOf({ revision: revision('hello-00001', 'default'), digestsResolved: false, resolveError: 'x' })).toBeUndefined();
      expect(activeOf({ deploymentNotOwned: true, deployment: availableDeployment() })).toBeUndefined();
    });

    it('True with ready pods, Unknown Queued without, False NoTraffic at zero replicas; never changes Ready', () => {
      expect(activeOf({ deployment: availableDeployment() })).toEqual(active('True', T1));
      expect(activeOf({ deployment: progressing('True', 'ReplicaSetUpdated', 'p') })).toEqual(active('Unknown', T1, 'Queued', QUEUED));
      expect(activeOf({})).toEqual(active('Unknown', T1, 'Deploying'));
      const zero = deployment(0, { conditions: [kcond('Available', 'True', 'MinimumReplicasAvailable', 'ok')], replicas: 0 });
      const { status } = computeRevisionStatus(observe({ deployment: zero }), T1);
      expect(status.conditions?.find((c) => c.type === 'Active')).toEqual(active('False', T1, 'NoTraffic', 'The target is not receiving traffic.'));
      expect(status.conditions?.find((c) => c.type === 'Ready')?.status).toBe('True');
    });

    it('a failing Deployment is still reported while Active is Unknown (the upstream activation gate does not apply)', () => {
      const first = computeRevisionStatus(observe({ deployment: progressing('True', 'ReplicaSetUpdated', 'p') }), T1);
      const { status } = computeRevisionStatus(observe({ revision: rev((r) => void (r.status = first.status)), deployment: deadline() }), T2);
      expect(status.conditions?.find((c) => c.type === 'ResourcesAvailable')?.reason).toBe('ProgressDeadlineExceeded');
      expect(status.conditions?.find((c) => c.type === 'Ready')?.status).toBe('False');
    });
  });

  describe('scale: reserve Revisions and min-scale (ADR 0018)', () => {
    const up = { first: 2, then: 2 };
    const readyStatus = () => computeRevisionStatus(observe({ deployment: availableDeployment(), minReady: { first: 1, then: 1 } }), T1).status;
    const get = (status: { conditions?: { type: string }[] }, type: string) => status.conditions?.find((c) => c.type === type);

    it('a Ready Revision scaled to zero (reserve) stays Ready, Active False NoTraffic, and emits nothing', () => {
      const zero = deployment(0, { conditions: [kcond('Available', 'True', 'MinimumReplicasAvailable', 'ok')], replicas: 0 });
      const was = rev((r) => void (r.status = readyStatus()));
      const { status, events } = computeRevisionStatus(observe({ revision: was, deployment: zero, minReady: { first: 1, then: 1 } }), T2);
      expect(get(status, 'Ready')).toMatchObject({ status: 'True' });
      expect(get(status, 'Active')).toEqual(active('False', T2, 'NoTraffic', 'The target is not receiving traffic.'));
      expect(status.actualReplicas).toBe(0);
      expect(events).toEqual([]);
    });

    it('scaling back up it stays Ready, Active Unknown Queued until its ready pods reach min-scale, then True', () => {
      const was = rev((r) => void (r.status = readyStatus()));
      const scaling = deployment(2, {
        conditions: [kcond('Progressing', 'True', 'ReplicaSetUpdated', 'p'), kcond('Available', 'False', 'MinimumReplicasUnavailable', 'x')],
        replicas: 2,
        readyReplicas: 1,
        availableReplicas: 1,
      });
      const mid = computeRevisionStatus(observe({ revision: was, deployment: scaling, readyPods: 1, minReady: up }), T2).status;
      expect(get(mid, 'Ready')).toMatchObject({ status: 'True' });
      expect(get(mid, 'Active')).toEqual(active('Unknown', T2, 'Queued', QUEUED));
      const both = computeRevisionStatus(observe({ revision: was, deployment: scaling, readyPods: 2, minReady: up }), T2).status;
      expect(get(both, 'Active')).toMatchObject({ status: 'True' });
    });

    it('a new Revision is not Ready below min-scale: an HPA-sized Deployment of 1 available pod, min-scale 2', () => {
      // The Deployment controller reports the HPA's first count (1) available; min-scale is 2.
      const one = deployment(1, {
        conditions: [kcond('Available', 'True', 'MinimumReplicasAvailable', 'ok')],
        replicas: 1,
        readyReplicas: 1,
        availableReplicas: 1,
      });
      const first = computeRevisionStatus(observe({ deployment: one, minReady: up }), T1);
      expect(get(first.status, 'Ready')).toMatchObject({ status: 'Unknown', reason: 'Deploying' });
      expect(get(first.status, 'Active')).toEqual(active('Unknown', T1, 'Queued', QUEUED));
      expect(first.events).toEqual([]);
      const two = deployment(2, {
        conditions: [kcond('Available', 'True', 'MinimumReplicasAvailable', 'ok')],
        replicas: 2,
        readyReplicas: 2,
        availableReplicas: 2,
      });
      const next = computeRevisionStatus(observe({ revision: rev((r) => void (r.status = first.status)), deployment: two, minReady: up }), T2);
      expect(get(next.status, 'Ready')).toMatchObject({ status: 'True' });
      expect(next.events.map((e) => e.reason)).toEqual(['RevisionReady']);
    });

    it('Deployment failures still win once initialized: ProgressDeadlineExceeded makes it False', () => {
      const was = rev((r) => void (r.status = readyStatus()));
      const { status } = computeRevisionStatus(observe({ revision: was, deployment: deadline(), minReady: up }), T2);
      expect(get(status, 'Ready')).toMatchObject({ status: 'False', reason: 'ProgressDeadlineExceeded' });
    });
  });
});
