// computeRevisionStatus: a Revision's conditions from digest resolution, its Deployment and (while not all its replicas
// are available) its Pods (Knative's Revision reconciler as Tidal runs it: fixed replicas, no PodAutoscaler). `Active`
// is written once the Revision reaches its Deployment (upstream: once the PodAutoscaler exists), never before.
import { beginReconcile, cloneJson, endReconcile } from '../api/conditions.js';
import { revisionLogUrl } from '../api/config/observability.js';
import {
  markContainerMissing,
  markDeploying,
  markDeploymentNotOwned,
  markResolvingDigests,
  markResourceNotOwned,
  propagateActive,
  propagateDeploymentStatus,
  propagateReplicas,
  revisionConditionSet,
  RevisionConditionContainerHealthy,
  RevisionConditionResourcesAvailable,
  ReasonNotOwned,
  resourceNotOwnedMessage,
  type DeploymentLike,
  type PodLike,
  type RevisionStatus,
} from '../api/lifecycle/revision.js';
import { ReasonAwaitingModule, ReasonInvalidModule } from '../api/modules.js';
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
  /**
   * The ClusterIP Service `<rev>` exists but another object controls it (an old incarnation's, awaiting the garbage
   * collector). Undefined from a pass that did not look at it (only pods or the HPA changed, and any change of the
   * Service makes a full pass): what the Revision's status says is kept.
   */
  serviceNotOwned?: boolean | undefined;
  /** The Revision uses the HPA class and the HorizontalPodAutoscaler `<rev>` exists, controlled by another object. */
  hpaNotOwned?: boolean | undefined;
  deployment: DeploymentLike | undefined;
  /** One pod of the Revision, inspected for a failure only when no replica is available, as upstream's `reconcileDeployment`. */
  pod?: PodLike | undefined;
  /**
   * The Revision's Ready pods (not terminating), counted only while its Deployment does not report them all
   * available: enough of them make the Revision Ready before the Deployment controller catches up, as upstream's
   * PodAutoscaler counts ready endpoints.
   */
  readyPods?: number | undefined;
  podIsAlwaysSchedulable: boolean;
  /** The Revision's HPA (autoscaler class `hpa.autoscaling.knative.dev`), when it has one. */
  hpa?: HPALike | undefined;
  /**
   * The ready pods that make it initialized and Active (resources/deployment.ts `activeThreshold`): `first` until
   * its scale target was first initialized, `then` after. Absent: the Deployment's spec.replicas, then 1.
   */
  minReady?: { first: number; then: number } | undefined;
  /** Set for a Revision of a foreign module (ADR 0009): its Deployment is not Tidal's, nor are its two conditions. */
  module?: ModuleObservation | undefined;
  /** config-observability's `logging.revision-url-template`: `status.logUrl` ('' clears it; undefined keeps it). */
  logUrlTemplate?: string | undefined;
}

/** What the status of a foreign module's Revision depends on. */
export interface ModuleObservation {
  name: string;
  /** Why its module annotations are invalid ('' when they are not): a Revision stored bypassing the webhook. */
  invalid: string;
  /** config-modules lists it. */
  known: boolean;
  /** `known modules: a, b`, for the message when it is not known. */
  knownDescription: string;
  /** This write hands the conditions over to the operator: digests were just resolved (the operator waits for them). */
  handOver?: boolean;
}

/** The reasons Tidal writes on a foreign Revision's ResourcesAvailable/ContainerHealthy: placeholders, not the operator's. */
const placeholderReasons = new Set([ReasonAwaitingModule, ReasonInvalidModule, '']);

/** The message of the placeholder conditions: who is awaited, and whether config-modules still lists the module. */
export function awaitingModuleMessage(rev: Revision, module: ModuleObservation): string {
  const base = `waiting for the operator of module ${JSON.stringify(module.name)} to deploy Revision ${JSON.stringify(rev.metadata.name ?? '')}`;
  return module.known ? base : `${base}; config-modules does not list the module (${module.knownDescription})`;
}

/**
 * ResourcesAvailable and ContainerHealthy of a foreign module's Revision (ADR 0009). After digest resolution they are
 * its operator's: a condition the operator wrote (any reason but Tidal's placeholders) is kept as it is and Ready is
 * computed from it; an absent one, or one still carrying a placeholder, is (re)written as Unknown `AwaitingModule`
 * — or ResourcesAvailable False `InvalidModule` when the annotations are invalid.
 */
function propagateModuleConditions(status: RevisionStatus, rev: Revision, module: ModuleObservation, now: string): void {
  const set = revisionConditionSet;
  const kept: { type: string; status: string; reason: string; message: string }[] = [];
  for (const type of [RevisionConditionResourcesAvailable, RevisionConditionContainerHealthy]) {
    const c = set.get(status, type);
    const placeholder =
      module.handOver === true || !c || (c.status === 'Unknown' && placeholderReasons.has(c.reason ?? '')) || c.reason === ReasonInvalidModule;
    if (!placeholder) {
      kept.push({ type, status: c.status, reason: c.reason ?? '', message: c.message ?? '' });
      continue;
    }
    if (module.invalid !== '' && type === RevisionConditionResourcesAvailable) set.markFalse(status, type, ReasonInvalidModule, module.invalid, now);
    else kept.push({ type, status: 'Unknown', reason: ReasonAwaitingModule, message: awaitingModuleMessage(rev, module) });
  }
  // Re-marked True first, False last: Ready ends up False if any is False, else Unknown if any is Unknown.
  const rank = (s: string): number => (s === 'True' ? 0 : s === 'Unknown' ? 1 : 2);
  for (const c of kept.sort((a, b) => rank(a.status) - rank(b.status))) {
    if (c.status === 'True') {
      if (c.reason !== '') set.markTrueWithReason(status, c.type, c.reason, c.message, now);
      else set.markTrue(status, c.type, now);
    } else if (c.status === 'False') set.markFalse(status, c.type, c.reason, c.message, now);
    else set.markUnknown(status, c.type, c.reason, c.message, now);
  }
}

/** What the status reads of an autoscaling/v2 HorizontalPodAutoscaler. */
export interface HPALike {
  status?: { currentReplicas?: number; desiredReplicas?: number };
}

/** The Revision's status reports its Service not owned (a full pass found it so). */
function saysServiceNotOwned(rev: Revision): boolean {
  const c = rev.status?.conditions?.find((c) => c.type === RevisionConditionResourcesAvailable);
  return c?.status === 'False' && c.reason === ReasonNotOwned && c.message === resourceNotOwnedMessage('Service', rev.metadata.name ?? '');
}

/**
 * Upstream's PodAutoscaler keeps ScaleTargetInitialized once its pods first reached their threshold: a Revision
 * scaled down (`reserve`) or back up, or one losing pods, stays Ready. Tidal has no PA: ResourcesAvailable True in
 * the status it wrote last says the same (it is True only from an initialized scale target, and not for a failed
 * Deployment).
 */
export function scaleTargetInitialized(rev: Revision): boolean {
  if ((rev.status?.observedGeneration ?? 0) !== (rev.metadata.generation ?? 0)) return false;
  return revisionConditionSet.get(rev.status, RevisionConditionResourcesAvailable)?.status === 'True';
}

export function computeRevisionStatus(obs: RevisionObservation, now: string): { status: RevisionStatus; events: StatusEvent[] } {
  const rev = cloneJson(obs.revision);
  const wasReady = revisionConditionSet.isHappy(rev.status);
  const initialized = scaleTargetInitialized(obs.revision);
  const before = beginReconcile(rev, revisionConditionSet, now);
  const status = rev.status as RevisionStatus;
  const name = rev.metadata.name ?? '';
  // Upstream sets it on every reconcile, before anything else.
  if (obs.logUrlTemplate === '') delete status.logUrl;
  else if (obs.logUrlTemplate !== undefined) status.logUrl = revisionLogUrl(obs.logUrlTemplate, rev.metadata.uid ?? '');
  if (obs.resolveError !== undefined) {
    // As upstream leaves it: its resolver answers "not ready" first (ResourcesAvailable Unknown ResolvingDigests),
    // the error on a later pass; Tidal's may fail before any interim write, and ends in the same state.
    markResolvingDigests(status, now);
    markContainerMissing(status, obs.resolveError, now);
  } else if (!obs.digestsResolved) markResolvingDigests(status, now);
  else if (obs.module) propagateModuleConditions(status, rev, obs.module, now);
  else if (obs.deploymentNotOwned) markDeploymentNotOwned(status, `${name}-deployment`, now);
  else if (obs.serviceNotOwned ?? saysServiceNotOwned(obs.revision)) markResourceNotOwned(status, 'Service', name, now);
  // Upstream's HPA reconciler marks its PodAutoscaler NotOwned, which the Revision reports; Tidal has no PA between.
  else if (obs.hpaNotOwned) markResourceNotOwned(status, 'HorizontalPodAutoscaler', name, now);
  else if (!obs.deployment) {
    markDeploying(status, undefined, now);
    propagateActive(status, undefined, now);
  } else {
    propagateDeploymentStatus(status, obs.deployment, obs.pod, { podIsAlwaysSchedulable: obs.podIsAlwaysSchedulable }, now);
    const minReady = obs.minReady && (initialized ? obs.minReady.then : obs.minReady.first);
    propagateReplicas(status, obs.deployment, now, obs.readyPods, minReady === undefined ? undefined : { minReady, initialized });
    // As upstream's HPA reconciler feeds the PodAutoscaler's scale from the HPA's status: once the HPA controller
    // has reported, its current and desired replica counts are the Revision's.
    if (obs.hpa?.status?.desiredReplicas !== undefined) {
      status.actualReplicas = obs.hpa.status.currentReplicas ?? 0;
      status.desiredReplicas = obs.hpa.status.desiredReplicas;
    }
    propagateActive(status, obs.deployment, now, obs.readyPods, minReady);
  }
  endReconcile(rev, before, now);
  const events: StatusEvent[] = [];
  if (!wasReady && revisionConditionSet.isHappy(rev.status)) {
    events.push({ type: 'Normal', reason: 'RevisionReady', message: 'Revision becomes ready upon all resources being ready' });
  }
  return { status: rev.status as RevisionStatus, events };
}
