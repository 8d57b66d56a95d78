import type { V1Deployment, V1Pod } from '@kubernetes/client-node';
import { describe, expect, expectTypeOf, it } from 'vitest';
import {
  containerMissingMessage,
  type DeploymentLike,
  deploymentReadiness,
  hasDeploymentTimedOut,
  initializeRevisionConditions,
  isActivationRequired,
  isRevisionFailed,
  isRevisionReady,
  markActiveFalse,
  markActiveTrue,
  markActiveUnknown,
  markContainerHealthyTrue,
  markContainerMissing,
  markContainerUnhealthy,
  markDeploying,
  markDeploymentNotOwned,
  markResolvingDigests,
  markResourceNotOwned,
  markResourcesAvailableTrue,
  markResourcesUnavailable,
  type PodLike,
  podLikeOf,
  deploymentInitialized,
  propagateActive,
  propagateDeploymentStatus,
  propagateReplicas,
  revisionConditionSet,
  type RevisionStatus,
} from '../../../api/lifecycle/revision.js';

const T0 = '2025-01-01T00:00:00Z';
const T1 = '2025-01-01T00:01:00Z';
const T2 = '2025-01-01T00:02:00Z';
const T3 = '2025-01-01T00:03:00Z';

const schedulable = { podIsAlwaysSchedulable: false };

function fresh(): RevisionStatus {
  const status: RevisionStatus = {};
  initializeRevisionConditions(status, T0);
  return status;
}

/** The status right after the pass that created the Deployment. */
function deploying(): RevisionStatus {
  const status = fresh();
  markDeploying(status, undefined, T1);
  return status;
}

const progressDeadlineExceeded = {
  type: 'Progressing',
  status: 'False',
  reason: 'ProgressDeadlineExceeded',
  message: 'ReplicaSet "hello-00001-deployment-5d8f" has timed out progressing.',
};

function deployment(status: NonNullable<DeploymentLike['status']>, replicas = 1): DeploymentLike {
  return { spec: { replicas }, status };
}

describe('Revision condition set', () => {
  it('Ready = ResourcesAvailable ∧ ContainerHealthy', () => {
    expect(revisionConditionSet.dependents).toEqual(['ResourcesAvailable', 'ContainerHealthy']);
    const status = fresh();
    expect(status).toEqual({
      conditions: [
        { type: 'ContainerHealthy', status: 'Unknown', lastTransitionTime: T0 },
        { type: 'Ready', status: 'Unknown', lastTransitionTime: T0 },
        { type: 'ResourcesAvailable', status: 'Unknown', lastTransitionTime: T0 },
      ],
    });
    markResourcesAvailableTrue(status, T1);
    expect(revisionConditionSet.get(status, 'Ready')?.status).toBe('Unknown');
    markContainerHealthyTrue(status, T2);
    expect(status.conditions).toEqual([
      { type: 'ContainerHealthy', status: 'True', lastTransitionTime: T2 },
      { type: 'Ready', status: 'True', lastTransitionTime: T2 },
      { type: 'ResourcesAvailable', status: 'True', lastTransitionTime: T1 },
    ]);
  });

  it('Active is severity Info and never affects Ready', () => {
    const status = fresh();
    markResourcesAvailableTrue(status, T1);
    markContainerHealthyTrue(status, T1);
    markActiveFalse(status, 'NoTraffic', 'The target is not receiving traffic.', T2);
    expect(status.conditions).toEqual([
      {
        type: 'Active',
        status: 'False',
        severity: 'Info',
        reason: 'NoTraffic',
        message: 'The target is not receiving traffic.',
        lastTransitionTime: T2,
      },
      { type: 'ContainerHealthy', status: 'True', lastTransitionTime: T1 },
      { type: 'Ready', status: 'True', lastTransitionTime: T1 },
      { type: 'ResourcesAvailable', status: 'True', lastTransitionTime: T1 },
    ]);
    markActiveUnknown(status, 'Queued', 'q', T3);
    expect(revisionConditionSet.get(status, 'Ready')?.status).toBe('True');
    markActiveTrue(status, T3);
    expect(revisionConditionSet.get(status, 'Active')).toEqual({ type: 'Active', status: 'True', severity: 'Info', lastTransitionTime: T3 });
    expect(revisionConditionSet.get(status, 'Ready')?.status).toBe('True');
  });
});

describe('transitions', () => {
  it('resolving digests → ResourcesAvailable Unknown ResolvingDigests', () => {
    const status = fresh();
    markResolvingDigests(status, T1);
    expect(status.conditions).toEqual([
      { type: 'ContainerHealthy', status: 'Unknown', lastTransitionTime: T0 },
      { type: 'Ready', status: 'Unknown', reason: 'ResolvingDigests', lastTransitionTime: T1 },
      { type: 'ResourcesAvailable', status: 'Unknown', reason: 'ResolvingDigests', lastTransitionTime: T1 },
    ]);
  });

  it('digest failure → ContainerHealthy False ContainerMissing, Ready False', () => {
    const status = fresh();
    markResolvingDigests(status, T1);
    const message = containerMissingMessage('ghcr.io/x/y:latest', 'failed to resolve image to digest: 404 Not Found');
    expect(message).toBe('Unable to fetch image "ghcr.io/x/y:latest": failed to resolve image to digest: 404 Not Found');
    markContainerMissing(status, message, T2);
    expect(status.conditions).toEqual([
      { type: 'ContainerHealthy', status: 'False', reason: 'ContainerMissing', message, lastTransitionTime: T2 },
      { type: 'Ready', status: 'False', reason: 'ContainerMissing', message, lastTransitionTime: T2 },
      { type: 'ResourcesAvailable', status: 'Unknown', reason: 'ResolvingDigests', lastTransitionTime: T1 },
    ]);
  });

  it('markDeploying: both dependents Unknown Deploying (or the given reason)', () => {
    expect(deploying().conditions).toEqual([
      { type: 'ContainerHealthy', status: 'Unknown', reason: 'Deploying', lastTransitionTime: T1 },
      { type: 'Ready', status: 'Unknown', reason: 'Deploying', lastTransitionTime: T1 },
      { type: 'ResourcesAvailable', status: 'Unknown', reason: 'Deploying', lastTransitionTime: T1 },
    ]);
    const updating = fresh();
    markDeploying(updating, 'Updating', T1);
    expect(revisionConditionSet.get(updating, 'ResourcesAvailable')?.reason).toBe('Updating');
    expect(revisionConditionSet.get(updating, 'ContainerHealthy')?.reason).toBe('Updating');
  });

  it('an unowned Deployment → ResourcesAvailable False NotOwned', () => {
    const status = fresh();
    markDeploymentNotOwned(status, 'hello-00001-deployment', T1);
    const message = 'There is an existing Deployment "hello-00001-deployment" that we do not own.';
    expect(status.conditions).toEqual([
      { type: 'ContainerHealthy', status: 'Unknown', lastTransitionTime: T0 },
      { type: 'Ready', status: 'False', reason: 'NotOwned', message, lastTransitionTime: T1 },
      { type: 'ResourcesAvailable', status: 'False', reason: 'NotOwned', message, lastTransitionTime: T1 },
    ]);
    const pa = fresh();
    markResourceNotOwned(pa, 'PodAutoscaler', 'hello-00001', T1);
    expect(revisionConditionSet.get(pa, 'ResourcesAvailable')?.message).toBe('There is an existing PodAutoscaler "hello-00001" that we do not own.');
  });

  it('markContainerUnhealthy → ContainerHealthy False with the given reason', () => {
    const status = fresh();
    markContainerUnhealthy(status, 'ExitCode1', 'Container failed with: boom', T1);
    expect(status.conditions).toEqual([
      { type: 'ContainerHealthy', status: 'False', reason: 'ExitCode1', message: 'Container failed with: boom', lastTransitionTime: T1 },
      { type: 'Ready', status: 'False', reason: 'ExitCode1', message: 'Container failed with: boom', lastTransitionTime: T1 },
      { type: 'ResourcesAvailable', status: 'Unknown', lastTransitionTime: T0 },
    ]);
  });

  it('markResourcesUnavailable → ResourcesAvailable and Ready False', () => {
    const status = fresh();
    markResourcesUnavailable(status, 'Unschedulable', 'no nodes', T1);
    expect(revisionConditionSet.get(status, 'Ready')).toEqual({
      type: 'Ready',
      status: 'False',
      reason: 'Unschedulable',
      message: 'no nodes',
      lastTransitionTime: T1,
    });
  });
});

describe('isRevisionReady / isRevisionFailed', () => {
  const readyStatus = (): RevisionStatus => {
    const s = fresh();
    markResourcesAvailableTrue(s, T1);
    markContainerHealthyTrue(s, T1);
    return s;
  };

  it('needs Ready True and observedGeneration == generation', () => {
    expect(isRevisionReady({ metadata: { generation: 1 }, status: { ...readyStatus(), observedGeneration: 1 } })).toBe(true);
    expect(isRevisionReady({ metadata: { generation: 2 }, status: { ...readyStatus(), observedGeneration: 1 } })).toBe(false);
    expect(isRevisionReady({ metadata: { generation: 1 }, status: { ...fresh(), observedGeneration: 1 } })).toBe(false);
    expect(isRevisionReady({ metadata: { generation: 1 } })).toBe(false);
  });

  it('failed = Ready False on the observed generation', () => {
    const failed = fresh();
    markContainerUnhealthy(failed, 'ExitCode1', 'x', T1);
    expect(isRevisionFailed({ metadata: { generation: 1 }, status: { ...failed, observedGeneration: 1 } })).toBe(true);
    expect(isRevisionFailed({ metadata: { generation: 2 }, status: { ...failed, observedGeneration: 1 } })).toBe(false);
    expect(isRevisionFailed({ metadata: { generation: 1 }, status: { ...readyStatus(), observedGeneration: 1 } })).toBe(false);
  });
});

describe('deploymentReadiness (TransformDeploymentStatus)', () => {
  it('no Progressing condition → Unknown Deploying', () => {
    expect(deploymentReadiness({ status: {} }, T0)).toEqual({ status: 'Unknown', reason: 'Deploying', message: undefined });
  });
  it('Progressing True and no ReplicaFailure → True', () => {
    expect(
      deploymentReadiness({ status: { conditions: [{ type: 'Progressing', status: 'True', reason: 'NewReplicaSetAvailable' }] } }, T0).status,
    ).toBe('True');
  });
  it('Progressing Unknown → Unknown with its reason', () => {
    expect(deploymentReadiness({ status: { conditions: [{ type: 'Progressing', status: 'Unknown', reason: 'R', message: 'm' }] } }, T0)).toEqual({
      status: 'Unknown',
      reason: 'R',
      message: 'm',
    });
  });
  it('Progressing False → False with its reason/message', () => {
    expect(deploymentReadiness({ status: { conditions: [progressDeadlineExceeded] } }, T0)).toEqual({
      status: 'False',
      reason: 'ProgressDeadlineExceeded',
      message: progressDeadlineExceeded.message,
    });
  });
  it('ReplicaFailure is inverted: True → False with its reason; False → no failure', () => {
    const quota = { type: 'ReplicaFailure', status: 'True', reason: 'FailedCreate', message: 'pods "x" is forbidden: exceeded quota' };
    expect(deploymentReadiness({ status: { conditions: [{ type: 'Progressing', status: 'True' }, quota] } }, T0)).toEqual({
      status: 'False',
      reason: 'FailedCreate',
      message: quota.message,
    });
    expect(
      deploymentReadiness(
        {
          status: {
            conditions: [
              { type: 'ReplicaFailure', status: 'False' },
              { type: 'Progressing', status: 'True' },
            ],
          },
        },
        T0,
      ).status,
    ).toBe('True');
  });
  it('hasDeploymentTimedOut only for Progressing False ProgressDeadlineExceeded', () => {
    expect(hasDeploymentTimedOut({ status: { conditions: [progressDeadlineExceeded] } })).toBe(true);
    expect(hasDeploymentTimedOut({ status: { conditions: [{ ...progressDeadlineExceeded, status: 'True' }] } })).toBe(false);
    expect(hasDeploymentTimedOut({ status: { conditions: [{ ...progressDeadlineExceeded, reason: 'Other' }] } })).toBe(false);
  });
});

describe('propagateDeploymentStatus', () => {
  it('Progressing absent → ResourcesAvailable Unknown Deploying', () => {
    const status = deploying();
    propagateDeploymentStatus(status, deployment({}), undefined, schedulable, T2);
    expect(status).toEqual(deploying());
  });

  it('Progressing False ProgressDeadlineExceeded → ResourcesAvailable False with that reason/message', () => {
    const status = deploying();
    propagateDeploymentStatus(status, deployment({ conditions: [progressDeadlineExceeded], availableReplicas: 0 }), undefined, schedulable, T2);
    expect(status.conditions).toEqual([
      { type: 'ContainerHealthy', status: 'Unknown', reason: 'Deploying', lastTransitionTime: T1 },
      { type: 'Ready', status: 'False', reason: 'ProgressDeadlineExceeded', message: progressDeadlineExceeded.message, lastTransitionTime: T2 },
      {
        type: 'ResourcesAvailable',
        status: 'False',
        reason: 'ProgressDeadlineExceeded',
        message: progressDeadlineExceeded.message,
        lastTransitionTime: T2,
      },
    ]);
  });

  it('ReplicaFailure True (quota) → ResourcesAvailable False FailedCreate', () => {
    const status = deploying();
    const quota = { type: 'ReplicaFailure', status: 'True', reason: 'FailedCreate', message: 'exceeded quota' };
    propagateDeploymentStatus(status, deployment({ conditions: [{ type: 'Progressing', status: 'True' }, quota] }), undefined, schedulable, T2);
    expect(revisionConditionSet.get(status, 'ResourcesAvailable')).toEqual({
      type: 'ResourcesAvailable',
      status: 'False',
      reason: 'FailedCreate',
      message: 'exceeded quota',
      lastTransitionTime: T2,
    });
    expect(revisionConditionSet.get(status, 'Ready')?.reason).toBe('FailedCreate');
  });

  it('an unschedulable pod → ResourcesAvailable False with the PodScheduled reason', () => {
    const status = deploying();
    const pod: PodLike = {
      status: {
        conditions: [{ type: 'PodScheduled', status: 'False', reason: 'Unschedulable', message: '0/3 nodes are available: 3 Insufficient cpu.' }],
      },
    };
    propagateDeploymentStatus(
      status,
      deployment({ conditions: [{ type: 'Progressing', status: 'Unknown', reason: 'ReplicaSetUpdated' }] }),
      pod,
      schedulable,
      T2,
    );
    expect(status.conditions).toEqual([
      { type: 'ContainerHealthy', status: 'Unknown', reason: 'Deploying', lastTransitionTime: T1 },
      { type: 'Ready', status: 'False', reason: 'Unschedulable', message: '0/3 nodes are available: 3 Insufficient cpu.', lastTransitionTime: T2 },
      {
        type: 'ResourcesAvailable',
        status: 'False',
        reason: 'Unschedulable',
        message: '0/3 nodes are available: 3 Insufficient cpu.',
        lastTransitionTime: T2,
      },
    ]);
  });

  it('…unless pod-is-always-schedulable', () => {
    const status = deploying();
    const pod: PodLike = { status: { conditions: [{ type: 'PodScheduled', status: 'False', reason: 'Unschedulable', message: 'm' }] } };
    propagateDeploymentStatus(status, deployment({}), pod, { podIsAlwaysSchedulable: true }, T2);
    expect(status).toEqual(deploying());
  });

  it('container crash → ContainerHealthy False ExitCode1 "Container failed with: …" (queue-proxy skipped)', () => {
    const status = deploying();
    const pod: PodLike = {
      status: {
        conditions: [{ type: 'PodScheduled', status: 'True' }],
        containerStatuses: [
          { name: 'queue-proxy', lastState: { terminated: { exitCode: 137, message: 'OOMKilled' } } },
          {
            name: 'user-container',
            state: { waiting: { reason: 'CrashLoopBackOff', message: 'back-off 10s restarting failed container' } },
            lastState: { terminated: { exitCode: 1, reason: 'Error', message: 'panic: boom' } },
          },
        ],
      },
    };
    propagateDeploymentStatus(status, deployment({ availableReplicas: 0, readyReplicas: 0 }), pod, schedulable, T2);
    expect(status.conditions).toEqual([
      { type: 'ContainerHealthy', status: 'False', reason: 'ExitCode1', message: 'Container failed with: panic: boom', lastTransitionTime: T2 },
      { type: 'Ready', status: 'False', reason: 'ExitCode1', message: 'Container failed with: panic: boom', lastTransitionTime: T2 },
      { type: 'ResourcesAvailable', status: 'Unknown', reason: 'Deploying', lastTransitionTime: T1 },
    ]);
  });

  it('exit code 0 with no message → "container exited with no error"', () => {
    const status = deploying();
    const pod: PodLike = { status: { containerStatuses: [{ name: 'user-container', lastState: { terminated: { exitCode: 0 } } }] } };
    propagateDeploymentStatus(status, deployment({}), pod, schedulable, T2);
    expect(revisionConditionSet.get(status, 'ContainerHealthy')).toEqual({
      type: 'ContainerHealthy',
      status: 'False',
      reason: 'ExitCode0',
      message: 'Container failed with: container exited with no error',
      lastTransitionTime: T2,
    });
  });

  it('waiting container after the progress deadline → ResourcesAvailable False with the waiting reason', () => {
    const status = deploying();
    const pod: PodLike = {
      status: {
        containerStatuses: [
          { name: 'user-container', state: { waiting: { reason: 'ImagePullBackOff', message: 'Back-off pulling image "nope:1"' } } },
          { name: 'queue-proxy', state: {} },
        ],
      },
    };
    propagateDeploymentStatus(status, deployment({ conditions: [progressDeadlineExceeded], availableReplicas: 0 }), pod, schedulable, T2);
    expect(status.conditions).toEqual([
      { type: 'ContainerHealthy', status: 'Unknown', reason: 'Deploying', lastTransitionTime: T1 },
      { type: 'Ready', status: 'False', reason: 'ImagePullBackOff', message: 'Back-off pulling image "nope:1"', lastTransitionTime: T2 },
      { type: 'ResourcesAvailable', status: 'False', reason: 'ImagePullBackOff', message: 'Back-off pulling image "nope:1"', lastTransitionTime: T2 },
    ]);
  });

  it('…but a waiting container before the deadline changes nothing', () => {
    const status = deploying();
    const pod: PodLike = { status: { containerStatuses: [{ name: 'user-container', state: { waiting: { reason: 'ImagePullBackOff' } } }] } };
    propagateDeploymentStatus(
      status,
      deployment({ conditions: [{ type: 'Progressing', status: 'Unknown', reason: 'Deploying' }] }),
      pod,
      schedulable,
      T2,
    );
    expect(status).toEqual(deploying());
  });

  it('pods are not inspected when some replica is available, nor when 0 replicas are wanted', () => {
    const crashing: PodLike = {
      status: { containerStatuses: [{ name: 'user-container', lastState: { terminated: { exitCode: 1, message: 'x' } } }] },
    };
    const available = deploying();
    propagateDeploymentStatus(
      available,
      deployment({ conditions: [{ type: 'Progressing', status: 'Unknown' }], availableReplicas: 1 }),
      crashing,
      schedulable,
      T2,
    );
    expect(revisionConditionSet.get(available, 'ContainerHealthy')?.status).toBe('Unknown');
    const scaledToZero = deploying();
    propagateDeploymentStatus(scaledToZero, deployment({ conditions: [{ type: 'Progressing', status: 'Unknown' }] }, 0), crashing, schedulable, T2);
    expect(revisionConditionSet.get(scaledToZero, 'ContainerHealthy')?.status).toBe('Unknown');
  });

  it('readyReplicas > 0 → ContainerHealthy True; with Progressing True the Revision is Ready (golden)', () => {
    const status = deploying();
    const d = deployment({
      conditions: [
        { type: 'Available', status: 'True', reason: 'MinimumReplicasAvailable' },
        { type: 'Progressing', status: 'True', reason: 'NewReplicaSetAvailable' },
      ],
      replicas: 1,
      readyReplicas: 1,
      availableReplicas: 1,
    });
    propagateDeploymentStatus(status, d, undefined, schedulable, T2);
    expect(status).toEqual({
      conditions: [
        { type: 'ContainerHealthy', status: 'True', lastTransitionTime: T2 },
        { type: 'Ready', status: 'True', lastTransitionTime: T2 },
        { type: 'ResourcesAvailable', status: 'True', lastTransitionTime: T2 },
      ],
    });
  });

  it('Tidal: Deployment conditions are propagated even while Active is not True (nothing scales to zero here)', () => {
    const status = deploying();
    markActiveUnknown(status, 'Deploying', '', T1);
    expect(isActivationRequired(status)).toBe(true);
    propagateDeploymentStatus(status, deployment({ conditions: [progressDeadlineExceeded], availableReplicas: 1 }), undefined, schedulable, T2);
    expect(revisionConditionSet.get(status, 'ResourcesAvailable')?.reason).toBe('ProgressDeadlineExceeded');
    expect(isActivationRequired(fresh())).toBe(false);
  });
});

describe('propagateReplicas (Tidal: fixed replicas, no PodAutoscaler)', () => {
  const progressingTrue = { type: 'Progressing', status: 'True', reason: 'ReplicaSetUpdated' };

  it('copies replica counts; Available True with enough available replicas → ResourcesAvailable and ContainerHealthy True', () => {
    const status = deploying();
    propagateReplicas(
      status,
      deployment({ conditions: [{ type: 'Available', status: 'True' }, progressingTrue], readyReplicas: 2, availableReplicas: 2 }, 2),
      T2,
    );
    expect(status).toEqual({
      actualReplicas: 2,
      desiredReplicas: 2,
      conditions: [
        { type: 'ContainerHealthy', status: 'True', lastTransitionTime: T2 },
        { type: 'Ready', status: 'True', lastTransitionTime: T2 },
        { type: 'ResourcesAvailable', status: 'True', lastTransitionTime: T2 },
      ],
    });
  });

  it('a Progressing=True Deployment without enough available replicas is not enough: ResourcesAvailable back to Unknown Deploying', () => {
    const status = deploying();
    const d = deployment({ conditions: [{ type: 'Available', status: 'False' }, progressingTrue], readyReplicas: 0, availableReplicas: 0 }, 1);
    propagateDeploymentStatus(status, d, undefined, schedulable, T2);
    expect(revisionConditionSet.get(status, 'ResourcesAvailable')?.status).toBe('True');
    propagateReplicas(status, d, T2);
    expect(status).toEqual({
      actualReplicas: 0,
      desiredReplicas: 1,
      conditions: [
        { type: 'ContainerHealthy', status: 'Unknown', reason: 'Deploying', lastTransitionTime: T1 },
        // Ready never left Unknown/Deploying (it mirrored ContainerHealthy meanwhile), so its time is kept.
        { type: 'Ready', status: 'Unknown', reason: 'Deploying', lastTransitionTime: T1 },
        { type: 'ResourcesAvailable', status: 'Unknown', reason: 'Deploying', lastTransitionTime: T2 },
      ],
    });
  });

  it('enough Ready pods initialize the target before the Deployment reports them (upstream counts ready endpoints); fewer do not', () => {
    const d = deployment({ conditions: [{ type: 'Available', status: 'False' }, progressingTrue], readyReplicas: 1, availableReplicas: 1 }, 3);
    const short = deploying();
    propagateReplicas(short, d, T2, 2);
    expect(short.actualReplicas).toBe(2);
    expect(revisionConditionSet.get(short, 'Ready')?.status).toBe('Unknown');
    const enough = deploying();
    propagateReplicas(enough, d, T2, 3);
    expect(enough.actualReplicas).toBe(3);
    expect(revisionConditionSet.get(enough, 'ResourcesAvailable')?.status).toBe('True');
    expect(revisionConditionSet.get(enough, 'Ready')?.status).toBe('True');
    // The Deployment's own count wins when it is the larger one.
    const counted = deploying();
    propagateReplicas(counted, d, T2, 0);
    expect(counted.actualReplicas).toBe(1);
  });

  it('Ready pods do not override a failed Deployment', () => {
    const status = deploying();
    const d = deployment(
      { conditions: [{ type: 'Progressing', status: 'False', reason: 'ProgressDeadlineExceeded', message: 'too slow' }], readyReplicas: 0 },
      2,
    );
    propagateDeploymentStatus(status, d, undefined, schedulable, T2);
    propagateReplicas(status, d, T2, 2);
    expect(revisionConditionSet.get(status, 'ResourcesAvailable')).toMatchObject({ status: 'False', reason: 'ProgressDeadlineExceeded' });
    expect(revisionConditionSet.get(status, 'Ready')?.status).toBe('False');
  });

  it('does not mark anything True over a failure', () => {
    const status = deploying();
    markContainerUnhealthy(status, 'ExitCode1', 'Container failed with: x', T2);
    propagateReplicas(status, deployment({ conditions: [{ type: 'Available', status: 'True' }], readyReplicas: 1, availableReplicas: 1 }), T3);
    expect(status.conditions).toEqual([
      { type: 'ContainerHealthy', status: 'False', reason: 'ExitCode1', message: 'Container failed with: x', lastTransitionTime: T2 },
      { type: 'Ready', status: 'False', reason: 'ExitCode1', message: 'Container failed with: x', lastTransitionTime: T2 },
      { type: 'ResourcesAvailable', status: 'Unknown', reason: 'Deploying', lastTransitionTime: T1 },
    ]);
    expect(status.actualReplicas).toBe(1);
    expect(status.desiredReplicas).toBe(1);
  });
});

describe('propagateActive (hakn: Active from the ready pods, no scale to zero)', () => {
  const active = (status: RevisionStatus) => revisionConditionSet.get(status, 'Active');

  it('no Deployment yet → Unknown Deploying; Ready untouched (severity Info)', () => {
    const status = deploying();
    propagateActive(status, undefined, T2);
    expect(active(status)).toEqual({ type: 'Active', status: 'Unknown', severity: 'Info', reason: 'Deploying', lastTransitionTime: T2 });
    expect(revisionConditionSet.get(status, 'Ready')).toEqual({ type: 'Ready', status: 'Unknown', reason: 'Deploying', lastTransitionTime: T1 });
  });

  it('ready pods → True; losing them all → Unknown Queued (upstream KPA `MarkActivating`)', () => {
    const status = deploying();
    propagateActive(status, deployment({ readyReplicas: 2 }, 2), T2);
    expect(active(status)).toEqual({ type: 'Active', status: 'True', severity: 'Info', lastTransitionTime: T2 });
    propagateActive(status, deployment({ readyReplicas: 0 }, 2), T3);
    expect(active(status)).toEqual({
      type: 'Active',
      status: 'Unknown',
      severity: 'Info',
      reason: 'Queued',
      message: 'Requests to the target are being buffered as resources are provisioned.',
      lastTransitionTime: T3,
    });
  });

  it('True only once the ready pods reach minReady (min-scale): one of two is still Queued', () => {
    const status = deploying();
    propagateActive(status, deployment({ readyReplicas: 1 }, 2), T2, undefined, 2);
    expect(active(status)?.reason).toBe('Queued');
    propagateActive(status, deployment({ readyReplicas: 1 }, 2), T2, 2, 2);
    expect(active(status)?.status).toBe('True');
  });

  it('a status the Deployment controller has not brought to the current generation counts no pods: only those counted', () => {
    // Scaled to zero and straight back up: the status still speaks of the pods of before.
    const stale: DeploymentLike = {
      metadata: { generation: 3 },
      spec: { replicas: 2 },
      status: { observedGeneration: 1, readyReplicas: 2, availableReplicas: 2, conditions: [{ type: 'Available', status: 'True' }] },
    };
    expect(deploymentInitialized(stale)).toBe(false);
    const status = deploying();
    propagateActive(status, stale, T2, 0);
    expect(active(status)?.reason).toBe('Queued');
    propagateActive(status, stale, T2, 2);
    expect(active(status)?.status).toBe('True');
    const current = { ...stale, status: { ...stale.status, observedGeneration: 3 } };
    expect(deploymentInitialized(current)).toBe(true);
    const fromStatus = deploying();
    propagateActive(fromStatus, current, T2);
    expect(active(fromStatus)?.status).toBe('True');
  });

  it('zero replicas wanted → False NoTraffic "The target is not receiving traffic."', () => {
    const status = deploying();
    propagateActive(status, deployment({}, 0), T2);
    expect(active(status)).toEqual({
      type: 'Active',
      status: 'False',
      severity: 'Info',
      reason: 'NoTraffic',
      message: 'The target is not receiving traffic.',
      lastTransitionTime: T2,
    });
    expect(revisionConditionSet.get(status, 'Ready')?.status).toBe('Unknown');
  });
});

describe('input types', () => {
  it('accept @kubernetes/client-node Deployments and Pods structurally', () => {
    expectTypeOf<V1Deployment>().toExtend<DeploymentLike>();
    expectTypeOf<V1Pod>().toExtend<PodLike>();
  });
});

describe('podLikeOf (what the watcher keeps of a pod)', () => {
  it("keeps Ready, a False PodScheduled with its reason, and each container's waiting state and last termination", () => {
    const pod: PodLike = {
      status: {
        conditions: [
          { type: 'Initialized', status: 'True' },
          { type: 'Ready', status: 'False', reason: 'ContainersNotReady', message: 'containers with unready status' },
          { type: 'PodScheduled', status: 'False', reason: 'Unschedulable', message: '0/2 nodes are available' },
        ],
        containerStatuses: [
          {
            name: 'user-container',
            state: { waiting: { reason: 'CrashLoopBackOff', message: 'back-off 10s' } },
            lastState: { terminated: { exitCode: 2, reason: 'Error', message: 'bad config' } },
          },
          { name: 'queue-proxy', state: {} },
        ],
      },
    };
    expect(podLikeOf(pod)).toEqual({
      conditions: [
        { type: 'Ready', status: 'False' },
        { type: 'PodScheduled', status: 'False', reason: 'Unschedulable', message: '0/2 nodes are available' },
      ],
      containerStatuses: [
        {
          name: 'user-container',
          state: { waiting: { reason: 'CrashLoopBackOff', message: 'back-off 10s' } },
          lastState: { terminated: { exitCode: 2, reason: 'Error', message: 'bad config' } },
        },
        { name: 'queue-proxy' },
      ],
    });
    expect(podLikeOf({})).toEqual({});
    expect(podLikeOf({ status: { conditions: [{ type: 'PodScheduled', status: 'True' }] } })).toEqual({});
  });

  it('decides what propagateDeploymentStatus decides from the whole pod', () => {
    const deployment: DeploymentLike = {
      spec: { replicas: 1 },
      status: { replicas: 1, availableReplicas: 0, conditions: [{ type: 'Progressing', status: 'False', reason: 'ProgressDeadlineExceeded' }] },
    };
    const pods: PodLike[] = [
      { status: { conditions: [{ type: 'PodScheduled', status: 'False', reason: 'Unschedulable', message: 'no nodes' }] } },
      { status: { containerStatuses: [{ name: 'user-container', lastState: { terminated: { exitCode: 0 } } }] } },
      { status: { containerStatuses: [{ name: 'user-container', state: { waiting: { reason: 'ImagePullBackOff', message: 'not found' } } }] } },
    ];
    for (const pod of pods) {
      const whole: RevisionStatus = {};
      const kept: RevisionStatus = {};
      propagateDeploymentStatus(whole, deployment, pod, { podIsAlwaysSchedulable: false }, '2026-11-27T10:00:00Z');
      propagateDeploymentStatus(kept, deployment, { status: podLikeOf(pod) }, { podIsAlwaysSchedulable: false }, '2026-11-27T10:00:00Z');
      expect(kept).toEqual(whole);
      expect(revisionConditionSet.get(whole, 'Ready')?.status).toBe('False');
    }
  });
});
