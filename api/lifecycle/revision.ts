// Revision status transitions (knative/serving pkg/apis/serving/v1/revision_lifecycle.go, pkg/apis/serving/
// k8s_lifecycle.go, pkg/reconciler/revision/reconcile_resources.go).
// Every function mutates the status it is given; `now` is an RFC3339 timestamp.
import { ConditionReady, conditionSet } from '../conditions.js';
import type { Revision, Status } from '../serving.js';

export const RevisionConditionReady = ConditionReady;
export const RevisionConditionResourcesAvailable = 'ResourcesAvailable';
export const RevisionConditionContainerHealthy = 'ContainerHealthy';
/** Informational (severity Info): never affects Ready. */
export const RevisionConditionActive = 'Active';

export const ReasonContainerMissing = 'ContainerMissing';
export const ReasonResolvingDigests = 'ResolvingDigests';
export const ReasonDeploying = 'Deploying';
export const ReasonNotOwned = 'NotOwned';
export const ReasonProgressDeadlineExceeded = 'ProgressDeadlineExceeded';
/** Active False: nothing runs (upstream PA `MarkInactive`). */
export const ReasonNoTraffic = 'NoTraffic';
export const NoTrafficMessage = 'The target is not receiving traffic.';

/** Name of the sidecar Knative injects; its container status is never the one inspected. */
export const QueueProxyContainerName = 'queue-proxy';

export type RevisionStatus = NonNullable<Revision['status']>;

/** Ready = ResourcesAvailable ∧ ContainerHealthy; `Active` is outside the set. */
export const revisionConditionSet = conditionSet(RevisionConditionReady, RevisionConditionResourcesAvailable, RevisionConditionContainerHealthy);

// --- Minimal structural views of apps/v1 Deployment and core/v1 Pod (compatible with @kubernetes/client-node). ---

export interface KubeConditionLike {
  type: string;
  status: string;
  reason?: string;
  message?: string;
}

export interface DeploymentLike {
  metadata?: { generation?: number };
  spec?: { replicas?: number };
  status?: {
    observedGeneration?: number;
    conditions?: readonly KubeConditionLike[];
    replicas?: number;
    readyReplicas?: number;
    availableReplicas?: number;
  };
}

export interface ContainerStateLike {
  waiting?: { reason?: string; message?: string };
  terminated?: { exitCode: number; reason?: string; message?: string };
}

export interface PodContainerStatusLike {
  name: string;
  state?: ContainerStateLike;
  /** JSON name of Go's `LastTerminationState`. */
  lastState?: ContainerStateLike;
}

export interface PodLike {
  status?: {
    conditions?: readonly KubeConditionLike[];
    containerStatuses?: readonly PodContainerStatusLike[];
  };
}

/**
 * Exactly what a Revision's status reads of a pod's status ({@link propagateDeploymentStatus} and the Ready count):
 * Ready's status, a PodScheduled condition that is False (its reason and message), and per container the waiting
 * state and the last termination. The watcher's cache keeps this of each pod (a few hundred bytes, not the pod), and
 * a pod's content token is made of it (api/content-token.ts), so a pod change the Revision does not read — its IP,
 * its node, a container started — pokes nobody.
 */
export function podLikeOf(pod: PodLike): NonNullable<PodLike['status']> {
  const conditions = (pod.status?.conditions ?? []).flatMap((c): KubeConditionLike[] => {
    if (c.type === 'Ready') return [{ type: c.type, status: c.status }];
    if (c.type === 'PodScheduled' && c.status === 'False') return [{ type: c.type, status: c.status, ...reasonAndMessage(c) }];
    return [];
  });
  const containerStatuses = (pod.status?.containerStatuses ?? []).map((c): PodContainerStatusLike => {
    const waiting = c.state?.waiting;
    const terminated = c.lastState?.terminated;
    return {
      name: c.name,
      ...(waiting ? { state: { waiting: reasonAndMessage(waiting) } } : {}),
      ...(terminated ? { lastState: { terminated: { exitCode: terminated.exitCode, ...reasonAndMessage(terminated) } } } : {}),
    };
  });
  return { ...(conditions.length ? { conditions } : {}), ...(containerStatuses.length ? { containerStatuses } : {}) };
}

function reasonAndMessage(o: { reason?: string; message?: string }): { reason?: string; message?: string } {
  return { ...(o.reason !== undefined ? { reason: o.reason } : {}), ...(o.message !== undefined ? { message: o.message } : {}) };
}

export interface DeploymentPropagationOptions {
  /** config-deployment `pod-is-always-schedulable`: ignore `PodScheduled=False`. */
  podIsAlwaysSchedulable: boolean;
}

// --- Messages (upstream helpers) ---

/** `ExitCode<N>` (upstream `ExitCodeReason`). */
export function exitCodeReason(exitCode: number): string {
  return `ExitCode${exitCode}`;
}

/** `Container failed with: <msg>` (upstream `RevisionContainerExitingMessage`). */
export function containerExitingMessage(message: string): string {
  return `Container failed with: ${message}`;
}

/** `Unable to fetch image "<image>": <msg>` (upstream `RevisionContainerMissingMessage`). */
export function containerMissingMessage(image: string, message: string): string {
  return `Unable to fetch image ${JSON.stringify(image)}: ${message}`;
}

/** `There is an existing <Kind> "<name>" that we do not own.` (upstream `ResourceNotOwnedMessage`). */
export function resourceNotOwnedMessage(kind: string, name: string): string {
  return `There is an existing ${kind} ${JSON.stringify(name)} that we do not own.`;
}

// --- Predicates ---

export type RevisionLike = { metadata: { generation?: number }; status?: Status };

/**
 * What the watcher's cache keeps of a Revision's status: enough for `isRevisionReady`, `isRevisionFailed` and
 * `isRevisionActive`.
 */
export function readinessOf(rev: RevisionLike): Status | undefined {
  const ready = revisionConditionSet.get(rev.status, RevisionConditionReady);
  const active = revisionConditionSet.get(rev.status, RevisionConditionActive);
  if (!rev.status) return undefined;
  return {
    ...(rev.status.observedGeneration !== undefined ? { observedGeneration: rev.status.observedGeneration } : {}),
    conditions: [...(ready ? [ready] : []), ...(active ? [active] : [])],
  };
}

/** Its pods are up: Active True (ready pods reached its threshold; `propagateActive`). */
export function isRevisionActive(rev: RevisionLike): boolean {
  return revisionConditionSet.get(rev.status, RevisionConditionActive)?.status === 'True';
}

/** Ready True AND the latest generation observed (upstream `Revision.IsReady`). */
export function isRevisionReady(rev: RevisionLike): boolean {
  return (rev.status?.observedGeneration ?? 0) === (rev.metadata.generation ?? 0) && revisionConditionSet.isHappy(rev.status);
}

/** Ready False AND the latest generation observed (upstream `Revision.IsFailed`). */
export function isRevisionFailed(rev: RevisionLike): boolean {
  return (
    (rev.status?.observedGeneration ?? 0) === (rev.metadata.generation ?? 0) &&
    revisionConditionSet.get(rev.status, RevisionConditionReady)?.status === 'False'
  );
}

/** The status carries `Active`: Tidal's own Deployment reports it (a foreign module's Revision has none). */
export function hasActiveCondition(status: RevisionStatus | undefined): boolean {
  return revisionConditionSet.get(status, RevisionConditionActive) !== undefined;
}

/** `Active` present and not True (upstream `IsActivationRequired`); Deployment conditions are then not propagated. */
export function isActivationRequired(status: RevisionStatus | undefined): boolean {
  const active = revisionConditionSet.get(status, RevisionConditionActive);
  return active !== undefined && active.status !== 'True';
}

// --- Transitions ---

export function initializeRevisionConditions(status: RevisionStatus, now: string): void {
  revisionConditionSet.initialize(status, now);
}

/** Digests are being resolved. */
export function markResolvingDigests(status: RevisionStatus, now: string): void {
  revisionConditionSet.markUnknown(status, RevisionConditionResourcesAvailable, ReasonResolvingDigests, '', now);
}

/** Digest resolution failed: ContainerHealthy False `ContainerMissing`. */
export function markContainerMissing(status: RevisionStatus, message: string, now: string): void {
  revisionConditionSet.markFalse(status, RevisionConditionContainerHealthy, ReasonContainerMissing, message, now);
}

/** The Deployment was just created: ResourcesAvailable and ContainerHealthy Unknown with `reason`. */
export function markDeploying(status: RevisionStatus, reason: string = ReasonDeploying, now: string): void {
  revisionConditionSet.markUnknown(status, RevisionConditionResourcesAvailable, reason, '', now);
  revisionConditionSet.markUnknown(status, RevisionConditionContainerHealthy, reason, '', now);
}

export function markResourcesAvailableTrue(status: RevisionStatus, now: string): void {
  revisionConditionSet.markTrue(status, RevisionConditionResourcesAvailable, now);
}

export function markResourcesUnavailable(status: RevisionStatus, reason: string, message: string, now: string): void {
  revisionConditionSet.markFalse(status, RevisionConditionResourcesAvailable, reason, message, now);
}

export function markResourcesAvailableUnknown(status: RevisionStatus, reason: string, message: string, now: string): void {
  revisionConditionSet.markUnknown(status, RevisionConditionResourcesAvailable, reason, message, now);
}

export function markContainerHealthyTrue(status: RevisionStatus, now: string): void {
  revisionConditionSet.markTrue(status, RevisionConditionContainerHealthy, now);
}

/** E.g. (`ExitCode1`, `Container failed with: boom`). */
export function markContainerUnhealthy(status: RevisionStatus, reason: string, message: string, now: string): void {
  revisionConditionSet.markFalse(status, RevisionConditionContainerHealthy, reason, message, now);
}

export function markContainerHealthyUnknown(status: RevisionStatus, reason: string, message: string, now: string): void {
  revisionConditionSet.markUnknown(status, RevisionConditionContainerHealthy, reason, message, now);
}

/** A child of that kind and name exists but is not controlled by the Revision. */
export function markResourceNotOwned(status: RevisionStatus, kind: string, name: string, now: string): void {
  markResourcesUnavailable(status, ReasonNotOwned, resourceNotOwnedMessage(kind, name), now);
}

/** `<rev>-deployment` exists but is not ours. */
export function markDeploymentNotOwned(status: RevisionStatus, name: string, now: string): void {
  markResourceNotOwned(status, 'Deployment', name, now);
}

export function markActiveTrue(status: RevisionStatus, now: string): void {
  revisionConditionSet.markTrue(status, RevisionConditionActive, now);
}

export function markActiveFalse(status: RevisionStatus, reason: string, message: string, now: string): void {
  revisionConditionSet.markFalse(status, RevisionConditionActive, reason, message, now);
}

export function markActiveUnknown(status: RevisionStatus, reason: string, message: string, now: string): void {
  revisionConditionSet.markUnknown(status, RevisionConditionActive, reason, message, now);
}

// --- Deployment → Revision ---

const DeploymentConditionProgressing = 'Progressing';
const DeploymentConditionReplicaSetReady = 'ReplicaSetReady';
const deploymentConditionSet = conditionSet(ConditionReady, DeploymentConditionProgressing, DeploymentConditionReplicaSetReady);

/**
 * Upstream `TransformDeploymentStatus`: folds the Deployment's `Progressing` and inverted `ReplicaFailure`
 * conditions into one Ready condition (absent Progressing → Unknown `Deploying`). Returns that Ready condition.
 */
export function deploymentReadiness(deployment: DeploymentLike, now: string): { status: string; reason?: string; message?: string } {
  const s: Status = {};
  const set = deploymentConditionSet;
  set.initialize(s, now);
  // The absence of ReplicaFailure means no failure has occurred.
  set.markTrue(s, DeploymentConditionReplicaSetReady, now);
  set.markUnknown(s, DeploymentConditionProgressing, ReasonDeploying, '', now);

  const conditions = deployment.status?.conditions ?? [];
  for (const wanted of ['Progressing', 'ReplicaFailure']) {
    for (const c of conditions) {
      if (c.type !== wanted) continue;
      const reason = c.reason ?? '';
      const message = c.message ?? '';
      if (wanted === 'Progressing') {
        if (c.status === 'True') set.markTrue(s, DeploymentConditionProgressing, now);
        else if (c.status === 'False') set.markFalse(s, DeploymentConditionProgressing, reason, message, now);
        else if (c.status === 'Unknown') set.markUnknown(s, DeploymentConditionProgressing, reason, message, now);
      } else {
        if (c.status === 'True') set.markFalse(s, DeploymentConditionReplicaSetReady, reason, message, now);
        else if (c.status === 'False') set.markTrue(s, DeploymentConditionReplicaSetReady, now);
        else if (c.status === 'Unknown') set.markUnknown(s, DeploymentConditionReplicaSetReady, reason, message, now);
      }
    }
  }
  const ready = set.get(s, ConditionReady);
  return { status: ready?.status ?? 'Unknown', reason: ready?.reason, message: ready?.message };
}

/** Progressing=False with reason ProgressDeadlineExceeded (upstream `hasDeploymentTimedOut`). */
export function hasDeploymentTimedOut(deployment: DeploymentLike): boolean {
  return (deployment.status?.conditions ?? []).some(
    (c) => c.type === 'Progressing' && c.status === 'False' && c.reason === ReasonProgressDeadlineExceeded,
  );
}

/**
 * Upstream `PropagateDeploymentStatus` plus the pod inspection of `reconcileDeployment`, for an existing,
 * owned Deployment. (On the pass that creates the Deployment, call `markDeploying` instead.)
 *
 * 1. The Deployment's folded Ready condition (`deploymentReadiness`) is mirrored into ResourcesAvailable. (Upstream
 *    skips this while activation is required, i.e. Active is present and not True: the autoscaler scaled the
 *    Revision to zero and the activator holds its requests. Tidal never scales to zero and derives Active from the
 *    ready pods itself ({@link propagateActive}), so a not-yet-True Active must not hide a failing Deployment.)
 * 2. If spec.replicas > 0 and availableReplicas == 0 and `pod` (the first pod of the Deployment's selector) is given:
 *    - PodScheduled=False → ResourcesAvailable False with its reason/message, unless `podIsAlwaysSchedulable`;
 *    - the first container status not named `queue-proxy`: lastState.terminated → ContainerHealthy False
 *      `ExitCode<N>` / `Container failed with: <msg>` (`container exited with no error` for exit 0 and no message);
 *      else state.waiting while the Deployment timed out → ResourcesAvailable False with the waiting reason/message.
 * 3. readyReplicas > 0 → ContainerHealthy True.
 */
export function propagateDeploymentStatus(
  status: RevisionStatus,
  deployment: DeploymentLike,
  pod: PodLike | undefined,
  opts: DeploymentPropagationOptions,
  now: string,
): void {
  const ready = deploymentReadiness(deployment, now);
  const reason = ready.reason ?? '';
  const message = ready.message ?? '';
  if (ready.status === 'True') markResourcesAvailableTrue(status, now);
  else if (ready.status === 'False') markResourcesUnavailable(status, reason, message, now);
  else markResourcesAvailableUnknown(status, reason, message, now);

  // Kubernetes defaults spec.replicas to 1.
  const replicas = deployment.spec?.replicas ?? 1;
  if (replicas > 0 && (deployment.status?.availableReplicas ?? 0) === 0 && pod !== undefined) {
    if (!opts.podIsAlwaysSchedulable) {
      const unscheduled = pod.status?.conditions?.find((c) => c.type === 'PodScheduled' && c.status === 'False');
      if (unscheduled) markResourcesUnavailable(status, unscheduled.reason ?? '', unscheduled.message ?? '', now);
    }
    const container = pod.status?.containerStatuses?.find((c) => c.name !== QueueProxyContainerName);
    if (container) {
      const terminated = container.lastState?.terminated;
      const waiting = container.state?.waiting;
      if (terminated) {
        const msg = terminated.exitCode === 0 && !terminated.message ? 'container exited with no error' : (terminated.message ?? '');
        markContainerUnhealthy(status, exitCodeReason(terminated.exitCode), containerExitingMessage(msg), now);
      } else if (waiting && hasDeploymentTimedOut(deployment)) {
        markResourcesUnavailable(status, waiting.reason ?? '', waiting.message ?? '', now);
      }
    }
  }

  if ((deployment.status?.readyReplicas ?? 0) > 0) markContainerHealthyTrue(status, now);
}

/**
 * The Revision's scale target as upstream's PodAutoscaler judges it: `minReady`, the ready pods that make it
 * initialized and Active (upstream `activeThreshold`: max(min-scale, initial-scale) before it was first initialized,
 * max(min-scale, 1) after; no min-scale for a `reserve` Revision), and whether it was initialized before (upstream's
 * PA keeps ScaleTargetInitialized once set; Tidal reads it back from ResourcesAvailable True in the status it wrote).
 */
export interface ScaleTarget {
  minReady: number;
  initialized: boolean;
}

/**
 * Tidal's stand-in for `PropagateAutoscalerStatus` (no PodAutoscaler: the Deployment runs fixed replicas, or its HPA
 * sizes it).
 * - actualReplicas = the ready replicas — the Deployment's `status.readyReplicas` or, when given, the Revision's
 *   Ready pods counted by the caller (`readyPods`), whichever is more — and desiredReplicas = spec.replicas
 *   (Kubernetes default 1);
 * - the scale target counts as initialized once it was (`scale.initialized`), or when the ready replicas reach
 *   `scale.minReady` (default: spec.replicas) and either the Deployment's `Available` condition is True with
 *   availableReplicas >= spec.replicas or `readyPods` reaches spec.replicas (> 0): upstream's PodAutoscaler counts the
 *   ready endpoints of the Revision's pods, so it need not wait for the Deployment controller to report them
 *   available; then, unless ResourcesAvailable or ContainerHealthy is already False, both become True (as upstream
 *   does on PA ScaleTargetInitialized). An HPA that has not yet grown the Deployment to min-scale leaves it
 *   uninitialized, as upstream's HPA reconciler does;
 * - if ResourcesAvailable is True but the target is not initialized, it goes back to Unknown `Deploying` (as
 *   upstream does for an uninitialized PA), so a Progressing=True Deployment alone never makes the Revision Ready.
 */
export function propagateReplicas(status: RevisionStatus, deployment: DeploymentLike, now: string, readyPods?: number, scale?: ScaleTarget): void {
  const desired = deployment.spec?.replicas ?? 1;
  const ready = readyReplicasOf(deployment, readyPods);
  status.actualReplicas = ready;
  status.desiredReplicas = desired;

  const resourcesUnavailable =
    revisionConditionSet.get(status, RevisionConditionResourcesAvailable)?.status === 'False' ||
    revisionConditionSet.get(status, RevisionConditionContainerHealthy)?.status === 'False';
  const up = deploymentInitialized(deployment) || (readyPods !== undefined && desired > 0 && readyPods >= desired);
  const initialized = scale?.initialized === true || (up && ready >= (scale?.minReady ?? desired));

  if (initialized && !resourcesUnavailable) {
    markResourcesAvailableTrue(status, now);
    markContainerHealthyTrue(status, now);
  }
  if (!initialized && revisionConditionSet.get(status, RevisionConditionResourcesAvailable)?.status === 'True') {
    markResourcesAvailableUnknown(status, ReasonDeploying, '', now);
  }
}

/** Active Unknown while pods are wanted and too few are ready (upstream KPA `MarkActivating("Queued", …)`). */
export const ReasonQueued = 'Queued';
export const QueuedMessage = 'Requests to the target are being buffered as resources are provisioned.';

/**
 * The `Active` condition from the Deployment in place of the PodAutoscaler (upstream KPA
 * `computeActiveCondition` → `PropagateAutoscalerStatus`):
 * - no Deployment yet (the PA has no Ready condition yet) → Unknown `Deploying`;
 * - `spec.replicas` 0 (a `reserve` Revision, or min-scale and initial-scale 0) → False `NoTraffic` "The target is not
 *   receiving traffic.";
 * - ready pods (the Deployment's count, or `readyPods` when more) reaching `minReady` (default 1) → True;
 * - otherwise (pods wanted, too few ready: starting, unschedulable, lost) → Unknown `Queued` "Requests to the target
 *   are being buffered as resources are provisioned.".
 * Active has severity Info: it never changes Ready. Routes wait for it before they send a Revision traffic it had
 * not (resources/traffic.ts).
 */
export function propagateActive(status: RevisionStatus, deployment: DeploymentLike | undefined, now: string, readyPods?: number, minReady = 1): void {
  if (!deployment) markActiveUnknown(status, ReasonDeploying, '', now);
  else if ((deployment.spec?.replicas ?? 1) === 0) markActiveFalse(status, ReasonNoTraffic, NoTrafficMessage, now);
  else if (readyReplicasOf(deployment, readyPods) >= Math.max(minReady, 1)) markActiveTrue(status, now);
  else markActiveUnknown(status, ReasonQueued, QueuedMessage, now);
}

/**
 * The Deployment's status speaks of its current spec: the Deployment controller has observed its generation. Scaled
 * to zero and straight back up, a Deployment's status still counts the pods of before until then.
 */
function statusCurrent(deployment: DeploymentLike): boolean {
  const seen = deployment.status?.observedGeneration;
  return seen === undefined || seen >= (deployment.metadata?.generation ?? 0);
}

/** The Deployment reports every replica it wants available (its `Available` condition True): the scale target is up. */
export function deploymentInitialized(deployment: DeploymentLike): boolean {
  const available = deployment.status?.conditions?.find((c) => c.type === 'Available');
  return statusCurrent(deployment) && available?.status === 'True' && (deployment.status?.availableReplicas ?? 0) >= (deployment.spec?.replicas ?? 1);
}

/** The Revision's ready replicas: the Deployment's count (once current), or the Ready pods the caller counted when more. */
function readyReplicasOf(deployment: DeploymentLike, readyPods: number | undefined): number {
  return Math.max(statusCurrent(deployment) ? (deployment.status?.readyReplicas ?? 0) : 0, readyPods ?? 0);
}
