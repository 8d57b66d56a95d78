// Activities of the Revision workflow (spec §3): pin image digests, converge `<rev>-deployment` and the `<rev>`
// Service, then write the Revision's status from the Deployment and its Pods.
import { setRevisionSpecDefaults } from '../api/defaults.js';
import { Resources } from '../api/kinds.js';
import { Labels } from '../api/labels.js';
import { isControlledBy, type KubeObject, type ObjectKey } from '../api/meta.js';
import type { ContainerStatus, Revision } from '../api/serving.js';
import type { DeploymentLike, PodLike } from '../api/lifecycle/revision.js';
import { DEPLOYMENT_HASH_LABEL, makeDeployment, type Deployment } from '../resources/deployment.js';
import { deploymentName } from '../resources/names.js';
import { makeRevisionService } from '../resources/revision-service.js';
import { computeRevisionStatus } from '../resources/revision-status.js';
import { nowOf, type ActivityDeps } from './deps.js';
import { containsAll, statusOutcome, writeStatus, type StatusOutcome } from './status.js';

export type DigestOutcome = { outcome: 'gone' } | { outcome: 'resolved'; cached: boolean; images: number };

type ApplyAction = 'created' | 'updated' | 'unchanged' | 'notOwned';
export type ResourcesOutcome =
  | { outcome: 'gone' }
  | { outcome: 'waitingForDigests' }
  | { outcome: 'applied'; deployment: ApplyAction; service: ApplyAction; replicas: number; deploymentResourceVersion?: string };

/** Every container and init container has a status entry: resolution is done for this Revision (§3.1). */
export function digestsResolved(rev: Revision): boolean {
  const want = rev.spec.containers.length + ((rev.spec.initContainers as unknown[] | undefined)?.length ?? 0);
  const have = (rev.status?.containerStatuses?.length ?? 0) + (rev.status?.initContainerStatuses?.length ?? 0);
  return have === want;
}

export function createRevisionActivities(deps: ActivityDeps) {
  const { kube, events, config } = deps;

  async function readRevision(key: ObjectKey): Promise<Revision | undefined> {
    const rev = await kube.get<Revision>(Resources.Revision, key.namespace, key.name);
    if (!rev || rev.metadata.deletionTimestamp) return undefined;
    // Knative's webhook defaults a Revision on create; Tidal applies the same defaults in memory.
    return { ...rev, spec: setRevisionSpecDefaults(rev.spec, config.revisionConfig().defaults, rev.metadata.name) };
  }

  async function applyOwned<T extends KubeObject>(rev: Revision, existing: T | undefined, desired: T, unchanged: (e: T) => boolean): Promise<{ action: ApplyAction; resourceVersion?: string }> {
    if (existing && !isControlledBy(existing, rev.metadata.uid)) return { action: 'notOwned' };
    if (existing && unchanged(existing)) return { action: 'unchanged' };
    const type = desired.kind === 'Deployment' ? Resources.Deployment : Resources.KubeService;
    const applied = await kube.apply(type, desired);
    if (!existing) await events.record(rev, 'Normal', 'Created', `Created ${desired.kind} "${desired.metadata.name ?? ''}"`);
    return { action: existing ? 'updated' : 'created', resourceVersion: applied.metadata.resourceVersion ?? '' };
  }

  return {
    /**
     * Resolves every image of the Revision to a digest once and stores them in status.containerStatuses (§3.1).
     * A failure is written to the status (ContainerMissing) and thrown, so Temporal retries with backoff.
     */
    async resolveRevisionDigests(key: ObjectKey): Promise<DigestOutcome> {
      const rev = await readRevision(key);
      if (!rev) return { outcome: 'gone' };
      const containers = rev.spec.containers;
      const inits = (rev.spec.initContainers as { name?: string; image: string }[] | undefined) ?? [];
      if (digestsResolved(rev)) return { outcome: 'resolved', cached: true, images: containers.length + inits.length };
      const dc = config.revisionConfig().deployment;
      const ctx = {
        namespace: key.namespace,
        serviceAccountName: rev.spec.serviceAccountName,
        imagePullSecrets: (rev.spec.imagePullSecrets ?? []).map((s) => s.name),
        skipRegistries: dc.registriesSkippingTagResolving,
        timeoutSeconds: dc.digestResolutionTimeoutSeconds,
      };
      // ResourcesAvailable Unknown ResolvingDigests while this runs (and while it retries).
      const reason = rev.status?.conditions?.find((c) => c.type === 'ResourcesAvailable')?.reason;
      if (reason !== 'ResolvingDigests' && rev.status?.conditions?.find((c) => c.type === 'ContainerHealthy')?.reason !== 'ContainerMissing') {
        const { status } = computeRevisionStatus({ revision: rev, digestsResolved: false, deployment: undefined, podIsAlwaysSchedulable: false }, nowOf(deps));
        await writeStatus(kube, Resources.Revision, rev, status);
      }
      const cache = new Map<string, Promise<string>>();
      const resolveOne = async (c: { name?: string; image: string }): Promise<ContainerStatus> => {
        if (!cache.has(c.image)) cache.set(c.image, deps.digests.resolve(c.image, ctx));
        const digest = await cache.get(c.image)!;
        return { name: c.name ?? '', ...(digest ? { imageDigest: digest } : {}) };
      };
      let containerStatuses: ContainerStatus[];
      let initContainerStatuses: ContainerStatus[];
      try {
        containerStatuses = await Promise.all(containers.map((c) => resolveOne(c)));
        initContainerStatuses = await Promise.all(inits.map((c) => resolveOne(c)));
      } catch (err) {
        const image = [...cache.keys()].at(-1) ?? '';
        const resolveError = `Unable to fetch image "${image}": failed to resolve image to digest: ${err instanceof Error ? err.message : String(err)}`;
        const { status } = computeRevisionStatus({ revision: rev, digestsResolved: false, resolveError, deployment: undefined, podIsAlwaysSchedulable: false }, nowOf(deps));
        await writeStatus(kube, Resources.Revision, rev, status);
        throw new Error(resolveError);
      }
      const resolved: Revision = { ...rev, status: { ...rev.status, containerStatuses, ...(inits.length ? { initContainerStatuses } : {}) } };
      const { status } = computeRevisionStatus({ revision: resolved, digestsResolved: true, deployment: undefined, podIsAlwaysSchedulable: false }, nowOf(deps));
      await writeStatus(kube, Resources.Revision, rev, status);
      return { outcome: 'resolved', cached: false, images: cache.size };
    },

    /** Converges `<rev>-deployment` (by its hash label) and the ClusterIP Service `<rev>` (§3.2). */
    async reconcileRevisionResources(key: ObjectKey): Promise<ResourcesOutcome> {
      const rev = await readRevision(key);
      if (!rev) return { outcome: 'gone' };
      if (!digestsResolved(rev)) return { outcome: 'waitingForDigests' };
      const cfg = config.revisionConfig();
      const desired = makeDeployment(rev, cfg, { systemNamespace: config.systemNamespace });
      const existing = await kube.get<Deployment>(Resources.Deployment, key.namespace, desired.metadata.name);
      const deployment = await applyOwned(rev, existing, desired, (e) => e.metadata.labels?.[DEPLOYMENT_HASH_LABEL] === desired.metadata.labels[DEPLOYMENT_HASH_LABEL]);
      const svc = makeRevisionService(rev, cfg);
      const existingSvc = await kube.get<KubeObject>(Resources.KubeService, key.namespace, svc.metadata.name ?? '');
      const service = await applyOwned(rev, existingSvc, svc, (e) => containsAll(e, { metadata: { labels: svc.metadata.labels }, spec: svc.spec }));
      return {
        outcome: 'applied',
        deployment: deployment.action,
        service: service.action,
        replicas: desired.spec.replicas ?? 0,
        ...(deployment.resourceVersion ? { deploymentResourceVersion: deployment.resourceVersion } : {}),
      };
    },

    /** The Revision's conditions and replica counts from its Deployment and, while none is available, a Pod (§3.3). */
    async updateRevisionStatus(key: ObjectKey): Promise<StatusOutcome> {
      const rev = await readRevision(key);
      if (!rev) return { outcome: 'gone' };
      const name = deploymentName(key.name);
      const deployment = await kube.get<KubeObject & DeploymentLike>(Resources.Deployment, key.namespace, name);
      const notOwned = deployment !== undefined && !isControlledBy(deployment, rev.metadata.uid);
      let pod: PodLike | undefined;
      if (deployment && !notOwned && (deployment.spec?.replicas ?? 1) > 0 && (deployment.status?.availableReplicas ?? 0) === 0) {
        const pods = await kube.list<KubeObject & PodLike>(Resources.Pod, key.namespace, { labelSelector: `${Labels.revisionUID}=${rev.metadata.uid ?? ''}` });
        pod = pods.items[0];
      }
      const { status, events: toRecord } = computeRevisionStatus(
        {
          revision: rev,
          digestsResolved: digestsResolved(rev),
          deploymentNotOwned: notOwned,
          deployment: notOwned ? undefined : deployment,
          pod,
          podIsAlwaysSchedulable: config.revisionConfig().deployment.podIsAlwaysSchedulable,
        },
        nowOf(deps),
      );
      const written = await writeStatus(kube, Resources.Revision, rev, status);
      if (written !== undefined) for (const e of toRecord) await events.record(rev, e.type, e.reason, e.message);
      return statusOutcome(written, status);
    },
  };
}
