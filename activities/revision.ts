// Activities of the Revision workflow (Knative's Revision reconciler): pin image digests, converge `<rev>-deployment` and the `<rev>`
// Service, then write the Revision's status from the Deployment and its Pods.
import { defaultsInForce, setRevisionSpecDefaults } from '../api/defaults.js';
import { cloneJson } from '../api/conditions.js';
import { Resources, type ResourceType } from '../api/kinds.js';
import { Labels } from '../api/labels.js';
import { isControlledBy, type KubeObject, type ObjectKey } from '../api/meta.js';
import type { ContainerStatus, Revision } from '../api/serving.js';
import {
  containerMissingMessage,
  deploymentInitialized,
  markActiveFalse,
  NoTrafficMessage,
  ReasonDeploying,
  ReasonNoTraffic,
  revisionConditionSet,
  RevisionConditionContainerHealthy,
  RevisionConditionResourcesAvailable,
  type DeploymentLike,
  type RevisionStatus,
  type PodLike,
} from '../api/lifecycle/revision.js';
import { describeKnownModules, invalidModuleMessage, isForeignModule, moduleOf } from '../api/modules.js';
import {
  activeThreshold,
  DEPLOYMENT_HASH_LABEL,
  holdsNoPods,
  isReserve,
  makeDeployment,
  servingReplicas,
  type Deployment,
} from '../resources/deployment.js';
import { deploymentUpdate } from '../resources/deployment-update.js';
import { observabilityConfigJson } from '../resources/queue-observability.js';
import type { QueueProxyOptions } from '../resources/queue.js';
import { deploymentName } from '../resources/names.js';
import { makeRevisionService } from '../resources/revision-service.js';
import { computeRevisionStatus, scaleTargetInitialized, type ModuleObservation } from '../resources/revision-status.js';
import { nowOf, type ActivityDeps } from './deps.js';
import { applyReportingFailures, ownedWhole, recordLater, settleAll, type ApplyOptions, type FailureTarget, type RecordLater } from './apply.js';
import { makeHPA, usesHPA, withHpaDefaults, type HorizontalPodAutoscaler } from '../resources/hpa.js';
import { makePodDisruptionBudget, type PodDisruptionBudget } from '../resources/pdb.js';
import { statusOutcome, writeStatus, writeStatusWithEvents, type StatusOutcome } from './status.js';
import { firstAttempt } from './attempt.js';
import { noteObject } from './observe.js';

/** Gets a new Revision with its digests, from its digests step to its resources step (activities/combined.ts). */
export type HandOverResolved = (rev: Revision | undefined) => void;

export type DigestOutcome = { outcome: 'gone' } | { outcome: 'resolved'; cached: boolean; images: number };

type ApplyAction = 'created' | 'updated' | 'unchanged' | 'notOwned';
/** What became of an optional child (HPA, PodDisruptionBudget): applied, or — when not wanted — deleted or absent. */
type OptionalChildAction = ApplyAction | 'deleted' | 'none';

/**
 * The Deployment is in sync when its hash label (Knative's, over the whole desired spec and metadata) is the desired
 * one and nobody scaled it: hakn runs a fixed replica count and no autoscaler, so a changed `spec.replicas` is an
 * edit to revert. (The pod template is not compared field by field: the API server defaults and normalizes it.)
 * This is upstream's rule for when to update it: a foreign edit that leaves the hash alone stays until the next
 * update, which then writes the whole desired spec and keeps foreign metadata (resources/deployment-update.ts).
 */
export function deploymentInSync(live: Deployment, desired: Deployment): boolean {
  // With the HPA class the desired object has no replicas: the HPA's count is not an edit.
  const replicasInSync = desired.spec.replicas === undefined || live.spec?.replicas === desired.spec.replicas;
  return live.metadata.labels?.[DEPLOYMENT_HASH_LABEL] === desired.metadata.labels[DEPLOYMENT_HASH_LABEL] && replicasInSync;
}
/** A Deployment the API server refuses to create leaves the Revision Deploying, as upstream's does (ADR 0018). */
const deploymentCreateRefused: NonNullable<FailureTarget['createRefused']> = {
  conditions: [RevisionConditionResourcesAvailable, RevisionConditionContainerHealthy],
  reason: ReasonDeploying,
  message: (name, apiMessage) => `failed to create deployment ${JSON.stringify(name)}: ${apiMessage}`,
};
/**
 * The HPA is wholly the Revision's, as upstream's HPA reconciler updates the whole object: a field, label or
 * annotation someone else adds is removed (the API server's defaults are no edit). The Revision's Service keeps
 * foreign fields (upstream's private Service sets only its ports and selector), and its PodDisruptionBudget, hakn's,
 * follows the same rule.
 */
const hpaOwned = ownedWhole<HorizontalPodAutoscaler>(withHpaDefaults);
/** How the Revision's Deployment is applied: upstream's update rule and shape. */
const deploymentOwned: ApplyOptions<Deployment> = { inSync: deploymentInSync, replaceOver: deploymentUpdate };

export type ResourcesOutcome =
  | { outcome: 'gone' }
  | { outcome: 'waitingForDigests' }
  | {
      outcome: 'applied';
      deployment: ApplyAction;
      service: ApplyAction;
      /** Absent in results recorded before HPAs and PodDisruptionBudgets existed. */
      hpa?: OptionalChildAction;
      pdb?: OptionalChildAction;
      /** The fixed replica count Tidal applied; absent when the HPA sizes the Deployment. */
      replicas?: number;
      deploymentResourceVersion?: string;
    }
  /** A foreign module's Revision (ADR 0009): only its Service is Tidal's; the module's operator makes its pods. */
  | { outcome: 'module'; module: string; service: ApplyAction };

/** A digest resolution that failed, with the image it was for. */
class ImageResolveError extends Error {
  constructor(
    readonly image: string,
    override readonly cause: unknown,
  ) {
    super(`${image}: ${cause instanceof Error ? cause.message : String(cause)}`);
  }
}

/** How long a digest resolution may take before the Revision says `ResolvingDigests` (a registry on the LAN answers in ms). */
export const RESOLVING_DIGESTS_GRACE_MS = 200;

/** True when `work` settles (either way) within `ms`; `work` itself is left to the caller to await. */
async function settlesWithin(work: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const done = work.then(
    () => true,
    () => true,
  );
  const late = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
  try {
    return await Promise.race([done, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** A pod that counts as a ready replica: Ready and not on its way out (an endpoint upstream's autoscaler would count). */
function isReadyPod(pod: KubeObject & PodLike): boolean {
  return !pod.metadata.deletionTimestamp && pod.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') === true;
}

/** Every container and init container has a status entry: resolution is done for this Revision (Knative's tag-to-digest resolution). */
export function digestsResolved(rev: Revision): boolean {
  const want = rev.spec.containers.length + ((rev.spec.initContainers as unknown[] | undefined)?.length ?? 0);
  const have = (rev.status?.containerStatuses?.length ?? 0) + (rev.status?.initContainerStatuses?.length ?? 0);
  return have === want;
}

export function createRevisionActivities(deps: ActivityDeps) {
  const { kube, events, config } = deps;
  const keyOf = (rev: Revision): ObjectKey => ({ namespace: rev.metadata.namespace ?? '', name: rev.metadata.name ?? '' });
  /** config-observability's log URL template, for every status the Revision's passes compute. */
  const logUrlTemplate = (): string => config.observabilityConfig?.().loggingURLTemplate ?? '';

  /** What the status of a foreign module's Revision depends on; undefined for Tidal's own (ADR 0009). */
  function moduleObservation(rev: Revision, handOver = false): ModuleObservation | undefined {
    if (!isForeignModule(rev)) return undefined;
    const modules = config.modulesConfig?.();
    const name = moduleOf(rev);
    return {
      name,
      invalid: invalidModuleMessage(rev),
      known: (modules?.known ?? []).includes(name),
      knownDescription: describeKnownModules(modules),
      ...(handOver ? { handOver } : {}),
    };
  }

  /**
   * The Revision's pods, by name as a list returns them: from the watcher's cache (Knative's listers; it keeps what
   * the status reads of a pod, `podLikeOf`) on a first attempt in the leader, else a consistent list. The cache needs
   * no version check: its pod events are what poke this pass, and it reflects each one before it pokes; a change it
   * has not seen yet pokes again once it has (ADR 0012). Read either way, a pod observes the same (api/content-token.ts).
   */
  async function podsOf(namespace: string, revisionUID: string): Promise<(KubeObject & PodLike)[]> {
    const labels = { [Labels.revisionUID]: revisionUID };
    const cached = deps.cache && firstAttempt() ? await deps.cache.list(Resources.Pod, namespace, { labels }) : undefined;
    if (!cached)
      return (await kube.list<KubeObject & PodLike>(Resources.Pod, namespace, { labelSelector: `${Labels.revisionUID}=${revisionUID}` })).items;
    const pods = (cached as (KubeObject & PodLike)[]).sort((a, b) => ((a.metadata.name ?? '') < (b.metadata.name ?? '') ? -1 : 1));
    for (const pod of pods) noteObject(Resources.Pod, pod, 'read', pods.length);
    return pods;
  }

  /** queue-proxy's settings from the config maps: config-observability's JSON, config-logging's for `queueproxy`. */
  function queueProxyOptions(): QueueProxyOptions {
    const observability = config.observabilityConfig?.();
    const logging = config.loggingConfig?.();
    return {
      systemNamespace: config.systemNamespace,
      ...(observability ? { observabilityConfig: observabilityConfigJson(observability) } : {}),
      ...(logging?.zapLoggerConfig !== undefined ? { loggingConfig: logging.zapLoggerConfig } : {}),
      ...(logging?.levels['queueproxy'] !== undefined ? { loggingLevel: logging.levels['queueproxy'] } : {}),
    };
  }

  async function readRevision(key: ObjectKey): Promise<Revision | undefined> {
    const rev = await kube.get<Revision>(Resources.Revision, key.namespace, key.name);
    if (!rev || rev.metadata.deletionTimestamp) return undefined;
    // Knative's webhook defaults a Revision on create; Tidal applies the same defaults in memory.
    // The defaults frozen on it when its Configuration created it (`tidal.dev/defaults`), else today's.
    return { ...rev, spec: setRevisionSpecDefaults(rev.spec, defaultsInForce(config.revisionConfig().defaults, rev), rev.metadata.name) };
  }

  /**
   * Applies a child of the Revision unless another object controls it or it is in sync (activities/apply.ts); a
   * refused apply is reported as `ResourcesAvailable=False` with the API server's message, and retried.
   */
  async function applyOwned<T extends KubeObject>(
    rev: Revision,
    type: ResourceType,
    existing: T | undefined,
    desired: T,
    record: RecordLater,
    opts: ApplyOptions<T> = {},
  ): Promise<{ action: ApplyAction; resourceVersion?: string }> {
    if (existing && !isControlledBy(existing, rev.metadata.uid)) return { action: 'notOwned' };
    const target: FailureTarget = {
      obj: rev,
      type: Resources.Revision,
      set: revisionConditionSet,
      condition: RevisionConditionResourcesAvailable,
      ...(type === Resources.Deployment ? { createRefused: deploymentCreateRefused } : {}),
    };
    const applied = await applyReportingFailures(deps, target, type, existing, desired, nowOf(deps), opts);
    if (applied.action === 'unchanged') return { action: 'unchanged' };
    if (applied.action === 'created') record(rev, 'Normal', 'Created', `Created ${desired.kind} "${desired.metadata.name ?? ''}"`);
    return { action: applied.action, resourceVersion: applied.obj.metadata.resourceVersion ?? '' };
  }

  /**
   * An optional child of the Revision: applied when `desired` is given, else deleted when it exists and the
   * Revision controls it (the autoscaler class or the PodDisruptionBudget setting changed); another owner's is left.
   */
  async function reconcileOptional<T extends KubeObject>(
    rev: Revision,
    type: ResourceType,
    existing: T | undefined,
    desired: T | undefined,
    record: RecordLater,
    opts: ApplyOptions<T> = {},
  ): Promise<OptionalChildAction> {
    if (desired) return (await applyOwned(rev, type, existing, desired, record, opts)).action;
    if (!existing || !isControlledBy(existing, rev.metadata.uid)) return 'none';
    await kube.delete(type, keyOf(rev).namespace, keyOf(rev).name);
    record(rev, 'Normal', 'Deleted', `Deleted ${type.kind} "${existing.metadata.name ?? ''}"`);
    return 'deleted';
  }

  return {
    /**
     * Resolves every image of the Revision to a digest once and stores them in status.containerStatuses (Knative's tag-to-digest resolution). A
     * failure is written to the status (ContainerMissing) and thrown, so Temporal retries with backoff. `handOver` gets
     * the Revision with its digests as soon as they are known — before the status write, as upstream builds the
     * Deployment from the digests in memory and writes the status at the end of its reconcile.
     */
    async resolveRevisionDigests(key: ObjectKey, handOver?: HandOverResolved): Promise<DigestOutcome> {
      const rev = await readRevision(key);
      if (!rev) return { outcome: 'gone' };
      const containers = rev.spec.containers;
      const inits = (rev.spec.initContainers as { name?: string; image: string }[] | undefined) ?? [];
      if (digestsResolved(rev)) {
        handOver?.(rev);
        return { outcome: 'resolved', cached: true, images: containers.length + inits.length };
      }
      const dc = config.revisionConfig().deployment;
      const ctx = {
        namespace: key.namespace,
        serviceAccountName: rev.spec.serviceAccountName,
        imagePullSecrets: (rev.spec.imagePullSecrets ?? []).map((s) => s.name),
        skipRegistries: dc.registriesSkippingTagResolving,
        timeoutSeconds: dc.digestResolutionTimeoutSeconds,
      };
      let readVersion = rev.metadata.resourceVersion;
      // One resolution per distinct image; a failure carries the image it was for (not the last one started).
      const cache = new Map<string, Promise<string>>();
      const resolveOne = async (c: { name?: string; image: string }): Promise<ContainerStatus> => {
        if (!cache.has(c.image)) {
          cache.set(
            c.image,
            deps.digests.resolve(c.image, ctx).catch((err: unknown) => Promise.reject(new ImageResolveError(c.image, err))),
          );
        }
        const digest = await cache.get(c.image)!;
        return { name: c.name ?? '', ...(digest ? { imageDigest: digest } : {}) };
      };
      const resolution = Promise.all([Promise.all(containers.map((c) => resolveOne(c))), Promise.all(inits.map((c) => resolveOne(c)))]);
      // ResourcesAvailable Unknown ResolvingDigests while this runs (and while it retries) — unless the registry
      // answers within a moment, as it usually does: then no reader could act on the interim status, and the
      // Revision's way to its Deployment is one write shorter.
      const reason = rev.status?.conditions?.find((c) => c.type === 'ResourcesAvailable')?.reason;
      const reported =
        reason === 'ResolvingDigests' || rev.status?.conditions?.find((c) => c.type === 'ContainerHealthy')?.reason === 'ContainerMissing';
      if (!reported && !(await settlesWithin(resolution, RESOLVING_DIGESTS_GRACE_MS))) {
        const { status } = computeRevisionStatus(
          { revision: rev, digestsResolved: false, deployment: undefined, podIsAlwaysSchedulable: false, logUrlTemplate: logUrlTemplate() },
          nowOf(deps),
        );
        // The version this write made is what the hand-over write below is preconditioned on (a foreign module's).
        readVersion = (await writeStatus(kube, Resources.Revision, rev, status)) ?? readVersion;
      }
      let containerStatuses: ContainerStatus[];
      let initContainerStatuses: ContainerStatus[];
      try {
        [containerStatuses, initContainerStatuses] = await resolution;
      } catch (err) {
        const image = err instanceof ImageResolveError ? err.image : '';
        const cause = err instanceof ImageResolveError ? err.cause : err;
        const resolveError = containerMissingMessage(
          image,
          `failed to resolve image to digest: ${cause instanceof Error ? cause.message : String(cause)}`,
        );
        const { status } = computeRevisionStatus(
          {
            revision: rev,
            digestsResolved: false,
            resolveError,
            deployment: undefined,
            podIsAlwaysSchedulable: false,
            logUrlTemplate: logUrlTemplate(),
          },
          nowOf(deps),
        );
        await writeStatus(kube, Resources.Revision, rev, status);
        throw new Error(resolveError);
      }
      const resolved: Revision = { ...rev, status: { ...rev.status, containerStatuses, ...(inits.length ? { initContainerStatuses } : {}) } };
      handOver?.(resolved);
      // A foreign module's operator waits for the digests: this write hands it ResourcesAvailable and ContainerHealthy.
      const module = moduleObservation(rev, true);
      const { status } = computeRevisionStatus(
        { revision: resolved, digestsResolved: true, deployment: undefined, podIsAlwaysSchedulable: false, module, logUrlTemplate: logUrlTemplate() },
        nowOf(deps),
      );
      const current = { ...rev, metadata: { ...rev.metadata, ...(readVersion !== undefined ? { resourceVersion: readVersion } : {}) } };
      await writeStatus(kube, Resources.Revision, current, status, module !== undefined);
      return { outcome: 'resolved', cached: false, images: cache.size };
    },

    /**
     * Converges `<rev>-deployment` (by its hash label) and the ClusterIP Service `<rev>` (Knative's MakeDeployment). Given `resolved` (a
     * new Revision's first pass, activities/combined.ts), it reads the children while the digests step resolves and
     * builds them from the Revision that step hands over, before its status write lands.
     */
    async reconcileRevisionResources(key: ObjectKey, resolved?: Promise<Revision | undefined>): Promise<ResourcesOutcome> {
      // The children are named after the Revision: all read side by side.
      const [rev, existing, existingSvc, existingHpa, existingPdb] = await Promise.all([
        resolved ?? readRevision(key),
        kube.get<Deployment>(Resources.Deployment, key.namespace, deploymentName(key.name)),
        kube.get<KubeObject>(Resources.KubeService, key.namespace, key.name),
        kube.get<HorizontalPodAutoscaler>(Resources.HorizontalPodAutoscaler, key.namespace, key.name),
        kube.get<PodDisruptionBudget>(Resources.PodDisruptionBudget, key.namespace, key.name),
      ]);
      if (!rev) return { outcome: 'gone' };
      if (!digestsResolved(rev)) return { outcome: 'waitingForDigests' };
      const cfg = config.revisionConfig();
      if (isForeignModule(rev)) {
        // The module's operator makes the Deployment (and whatever else its pods need); routing needs the Service.
        const service = await applyOwned(rev, Resources.KubeService, existingSvc, makeRevisionService(rev, cfg), recordLater(events));
        return { outcome: 'module', module: moduleOf(rev), service: service.action };
      }
      const desired = makeDeployment(rev, cfg, queueProxyOptions());
      // Back from reserve with the HPA class: an HPA does not scale a Deployment at 0 replicas, so Tidal brings it
      // to its serving count and the HPA sizes it from there.
      if (desired.spec.replicas === undefined && existing?.spec?.replicas === 0) desired.spec.replicas = servingReplicas(rev, cfg);
      const svc = makeRevisionService(rev, cfg);
      // A `reserve` Revision runs no pods: its HPA goes, and its Deployment is scaled to 0 (ADR 0018).
      const hpa = usesHPA(rev, cfg) && !holdsNoPods(rev) ? makeHPA(rev, cfg) : undefined;
      const pdb = makePodDisruptionBudget(rev, cfg);
      // Scaling a `reserve` Revision to zero: Active False is written first, at the version just read, so a Route that
      // has made it active since fails this step (409) and the retry reads the fresh labels. A Route pass reading it
      // active afterwards sees that Active and waits for the pods (resources/traffic.ts awaitsPods).
      if (desired.spec.replicas === 0 && (existing?.spec?.replicas ?? 0) > 0 && isReserve(rev)) {
        const status: RevisionStatus = cloneJson(rev.status ?? {});
        markActiveFalse(status, ReasonNoTraffic, NoTrafficMessage, nowOf(deps));
        await writeStatus(kube, Resources.Revision, rev, status, true);
      }
      // The Deployment first (a refused Deployment stops the step before the rest), then the others side by side.
      const record = recordLater(events);
      const deployment = await applyOwned(rev, Resources.Deployment, existing, desired, record, deploymentOwned);
      const [service, hpaAction, pdbAction] = await settleAll([
        applyOwned(rev, Resources.KubeService, existingSvc, svc, record),
        reconcileOptional(rev, Resources.HorizontalPodAutoscaler, existingHpa, hpa, record, hpaOwned),
        reconcileOptional(rev, Resources.PodDisruptionBudget, existingPdb, pdb, record),
      ] as const);
      return {
        outcome: 'applied',
        deployment: deployment.action,
        service: service.action,
        hpa: hpaAction,
        pdb: pdbAction,
        ...(desired.spec.replicas !== undefined ? { replicas: desired.spec.replicas } : {}),
        ...(deployment.resourceVersion ? { deploymentResourceVersion: deployment.resourceVersion } : {}),
      };
    },

    /**
     * The Revision's conditions and replica counts from its Deployment and, while not all are available, its Pods
     * (as upstream's `PropagateDeploymentStatus`). With `awaitReady` (a new Revision's first pass, whose Deployment was just made) it first waits a moment
     * for that many of its pods to be Ready in the watcher's cache, so the pass that made the Deployment can report
     * the Revision Ready, instead of a poke and another pass doing it (ADR 0012). `serviceNotOwned`: what the pass's
     * resources step found of the Service `<rev>` (omitted by a pass that only follows pods: the status keeps it).
     */
    async updateRevisionStatus(key: ObjectKey, awaitReady?: { replicas: number; ms: number }, serviceNotOwned?: boolean): Promise<StatusOutcome> {
      if (awaitReady && awaitReady.replicas > 0 && awaitReady.ms > 0 && deps.cache?.until && firstAttempt()) {
        const enough = (pods: KubeObject[]) => pods.filter((p) => isReadyPod(p as KubeObject & PodLike)).length >= awaitReady.replicas;
        await deps.cache.until(Resources.Pod, key.namespace, { [Labels.revision]: key.name }, enough, awaitReady.ms);
      }
      const [rev, deployment] = await Promise.all([
        readRevision(key),
        kube.get<KubeObject & DeploymentLike>(Resources.Deployment, key.namespace, deploymentName(key.name)),
      ]);
      if (!rev) return { outcome: 'gone' };
      const module = moduleObservation(rev);
      if (module) {
        // Its Deployment, pods and two conditions are its operator's: Ready from those, under a precondition.
        const { status, events: toRecord } = computeRevisionStatus(
          {
            revision: rev,
            digestsResolved: digestsResolved(rev),
            deployment: undefined,
            podIsAlwaysSchedulable: false,
            module,
            logUrlTemplate: logUrlTemplate(),
          },
          nowOf(deps),
        );
        return statusOutcome(await writeStatusWithEvents(kube, events, Resources.Revision, rev, status, toRecord, true), status);
      }
      // With the HPA class the replica counts are the HPA's (read only then: other Revisions have none).
      const hpa = usesHPA(rev, config.revisionConfig())
        ? await kube.get<HorizontalPodAutoscaler>(Resources.HorizontalPodAutoscaler, key.namespace, key.name)
        : undefined;
      const ownHpa = hpa && isControlledBy(hpa, rev.metadata.uid) ? hpa : undefined;
      const notOwned = deployment !== undefined && !isControlledBy(deployment, rev.metadata.uid);
      // While the Deployment does not report every replica available, its pods: one to inspect for a failure when none
      // is available (as upstream), and their Ready count, which makes the Revision Ready without waiting for the Deployment
      // controller to catch up (as upstream's PodAutoscaler counts ready endpoints).
      let pod: PodLike | undefined;
      let readyPods: number | undefined;
      if (deployment && !notOwned && (deployment.spec?.replicas ?? 1) > 0 && !deploymentInitialized(deployment)) {
        const pods = await podsOf(key.namespace, rev.metadata.uid ?? '');
        pod = pods[0];
        readyPods = pods.filter(isReadyPod).length;
      }
      const cfg = config.revisionConfig();
      const { status, events: toRecord } = computeRevisionStatus(
        {
          revision: rev,
          digestsResolved: digestsResolved(rev),
          deploymentNotOwned: notOwned,
          serviceNotOwned,
          hpaNotOwned: hpa !== undefined && ownHpa === undefined,
          deployment: notOwned ? undefined : deployment,
          pod,
          readyPods,
          podIsAlwaysSchedulable: cfg.deployment.podIsAlwaysSchedulable,
          hpa: ownHpa,
          // The HPA class does not use initial-scale (the HPA starts the Deployment at 1 and lifts it to min-scale).
          minReady: { first: activeThreshold(rev, cfg, ownHpa !== undefined), then: activeThreshold(rev, cfg, true) },
          logUrlTemplate: logUrlTemplate(),
        },
        nowOf(deps),
      );
      const outcome = statusOutcome(await writeStatusWithEvents(kube, events, Resources.Revision, rev, status, toRecord), status);
      // A reserve Revision that has just turned initialized may now hold no pods: the workflow applies again.
      const nowHoldsNoPods = isReserve(rev) && !scaleTargetInitialized(rev) && scaleTargetInitialized({ ...rev, status });
      return nowHoldsNoPods && outcome.outcome === 'written' ? { ...outcome, rescale: true } : outcome;
    },
  };
}
