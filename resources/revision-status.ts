// computeRevisionStatus: a Revision's conditions from digest resolution, its Deployment and (when no replica is
// available) one of its Pods (spec §3.1, §3.3, §3.6 as Tidal runs it: fixed replicas, no PodAutoscaler). `Active`
// is written once the Revision reaches its Deployment (upstream: once the PodAutoscaler exists), never before.
import { beginReconcile, cloneJson, endReconcile } from '../api/conditions.js';
import {
  markContainerMissing,
  markDeploying,
  markDeploymentNotOwned,
  markResolvingDigests,
  propagateActive,
  propagateDeploymentStatus,
  propagateReplicas,
  revisionConditionSet,
  type DeploymentLike,
  type PodLike,
  type RevisionStatus,
} from '../api/lifecycle/revision.js';
import type { Revision } from '../api/serving.js';
import type { StatusEvent } from './configuration-status.js';

export interface RevisionObservation {
  revision: Revision;
  /** containerStatuses cover every container and init container. */
  digestsResolved: boolean;
  /** The last resolution error, in Knative's words ("Unable to fetch image …"). */
  resolveError?: string | undefined;
  /** `<rev>-deployment` exists but another object controls it. */
  deploymentNotOwned?: boolean;
  deployment: DeploymentLike | undefined;
  /** One pod of the Deployment, read only when no replica is available. */
  pod?: PodLike | undefined;
  podIsAlwaysSchedulable: boolean;
  /** The Revision's HPA (autoscaler class `hpa.autoscaling.knative.dev`), when it has one. */
  hpa?: HPALike | undefined;
}

/** What the status reads of an autoscaling/v2 HorizontalPodAutoscaler. */
export interface HPALike {
  status?: { currentReplicas?: number; desiredReplicas?: number };
}

export function computeRevisionStatus(obs: RevisionObservation, now: string): { status: RevisionStatus; events: StatusEvent[] } {
  const rev = cloneJson(obs.revision);
  const wasReady = revisionConditionSet.isHappy(rev.status);
  const before = beginReconcile(rev, revisionConditionSet, now);
  const status = rev.status as RevisionStatus;
  const name = rev.metadata.name ?? '';
  if (obs.resolveError !== undefined) markContainerMissing(status, obs.resolveError, now);
  else if (!obs.digestsResolved) markResolvingDigests(status, now);
  else if (obs.deploymentNotOwned) markDeploymentNotOwned(status, `${name}-deployment`, now);
  else if (!obs.deployment) {
    markDeploying(status, undefined, now);
    propagateActive(status, undefined, now);
  } else {
    propagateDeploymentStatus(status, obs.deployment, obs.pod, { podIsAlwaysSchedulable: obs.podIsAlwaysSchedulable }, now);
    propagateReplicas(status, obs.deployment, now);
    // As upstream's HPA reconciler feeds the PodAutoscaler's scale from the HPA's status: once the HPA controller
    // has reported, its current and desired replica counts are the Revision's.
    if (obs.hpa?.status?.desiredReplicas !== undefined) {
      status.actualReplicas = obs.hpa.status.currentReplicas ?? 0;
      status.desiredReplicas = obs.hpa.status.desiredReplicas;
    }
    propagateActive(status, obs.deployment, now);
  }
  endReconcile(rev, before, now);
  const events: StatusEvent[] = [];
  if (!wasReady && revisionConditionSet.isHappy(rev.status)) {
    events.push({ type: 'Normal', reason: 'RevisionReady', message: 'Revision becomes ready upon all resources being ready' });
  }
  return { status: rev.status as RevisionStatus, events };
}
