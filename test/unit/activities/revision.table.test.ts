// The Revision's pass as a table, after Knative's pkg/reconciler/revision/table_test.go: its image digests pinned,
// `<rev>-deployment`, the Service `<rev>`, the HPA and the PodDisruptionBudget converged, then its status from the
// Deployment and its pods (the order workflows/revision.ts runs them in, a reserve Revision's rescale included). What
// the Deployment controller and the kubelet write in between is played by the rows (`deploymentReports`,
// `podReports`), as Knative's rows seed the Deployment, pods and PodAutoscaler status they would have seen.
// The cluster runs hakn's config-autoscaler (min-scale 2) and config-observability's log URL template.
//
// Knative's rows left out, and why:
// - "bad workqueue key": a Revision's workflow is started with its key.
// - The rows on the PodAutoscaler and the Image cache ("failure creating pa", "pa inactive II", "lost pa owner ref",
//   "mutated pa gets error during the fix", ...): Tidal has no KPA, no activator and no image cache. Where such a row's
//   behaviour is Tidal's too, a row here says it in Tidal's terms: "pa is ready" and "pa not ready" from the
//   Deployment, "pa inactive" as a reserve Revision scaled to zero, "mutated pa gets fixed" with the HPA, "update pa
//   annotations when they change" as min-scale reaching the Deployment and the PodDisruptionBudget.
// - "revision failure because replicaset and deployment failed": here the same row as "surface replica failure".
// - "first revision reconciliation with PVC, PVC enabled": volumes pass through like any field of the pod spec; the
//   feature flag is the webhook's.
//
// Where Tidal's rows differ from Knative's: the digests are written to the status before the Deployment is made (two
// status writes on a first pass); a failed status write fails the step, which is retried, with no Event; a refused
// update is written to the status as well as to a Warning Event; a Deployment or Service someone else controls is
// reported in the status, and the pass does not fail on it.
import { describe, expect } from 'vitest';
import { createRevisionActivities } from '../../../activities/revision.js';
import type { RevisionConfig } from '../../../api/config/types.js';
import { defaultObservabilityConfig } from '../../../api/config/observability.js';
import { Resources, type ResourceType } from '../../../api/kinds.js';
import type { KubeObject } from '../../../api/meta.js';
import type { Revision } from '../../../api/serving.js';
import type { DigestResolver } from '../../../registry/digest-resolver.js';
import type { Deployment } from '../../../resources/deployment.js';
import type { HorizontalPodAutoscaler } from '../../../resources/hpa.js';
import { revision, revisionConfig, withRevAnnotations, withRevLabels } from '../../fixtures/revision.js';
import { fakeDeps, KubeFake, refused } from './kube-fake.js';
import { conditionsOf, tableTest, type Row, type TableContext, type Want } from './table.js';

const NS = 'default';
const REV = 'hello-00001';
const DEPLOYMENT = `${REV}-deployment`;
const UID = `uid-${REV}`;
const IMAGE = 'ghcr.io/example/hello:1';
const DIGEST = `ghcr.io/example/hello@sha256:${'a1'.repeat(32)}`;
const LOG_URL = `http://logger.io/${UID}`;

type Option<T> = (obj: T) => void;

// --- The objects of the rows. ---

/** Revision `hello-00001` of Configuration `hello`, as the Configuration created it: no digest pinned yet. */
const rev = (...opts: Option<Revision>[]): Revision => revision(REV, NS, ...opts);
const deleting: Option<Revision> = (r) => void (r.metadata.deletionTimestamp = '2025-01-01T00:00:00Z');
const reserve = withRevLabels({ 'serving.knative.dev/routingState': 'reserve' });
const HPA_CLASS = { 'autoscaling.knative.dev/class': 'hpa.autoscaling.knative.dev' };

interface PodStatus {
  conditions?: { type: string; status: string; reason?: string; message?: string }[];
  containerStatuses?: unknown[];
}

/** A pod of the Revision (its Deployment's selector), with the status the kubelet reports. */
const pod = (name: string, status: PodStatus, terminating = false): KubeObject =>
  ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace: NS,
      labels: { 'serving.knative.dev/revision': REV, 'serving.knative.dev/revisionUID': UID },
      ...(terminating ? { deletionTimestamp: '2025-01-01T00:00:00Z' } : {}),
    },
    status,
  }) as KubeObject;
const notReady = { type: 'Ready', status: 'False', reason: 'ContainersNotReady' };
/** The user container crashed and restarts: its last termination. */
const crashed = (exitCode: number, message: string): PodStatus => ({
  conditions: [notReady],
  containerStatuses: [
    { name: 'user-container', ready: false, restartCount: 3, lastState: { terminated: { exitCode, reason: 'Error', message } } },
    { name: 'queue-proxy', ready: true, restartCount: 0, state: { running: {} } },
  ],
});
const waiting = (reason: string, message: string): PodStatus => ({
  conditions: [notReady],
  containerStatuses: [{ name: 'user-container', ready: false, restartCount: 0, state: { waiting: { reason, message } } }],
});
const unschedulable = (message: string): PodStatus => ({
  conditions: [{ type: 'PodScheduled', status: 'False', reason: 'Unschedulable', message }],
});
/** An object of the Revision's name (its Service's, say) that another object controls. */
const foreign = (type: ResourceType): KubeObject =>
  ({
    apiVersion: type.group ? `${type.group}/${type.version}` : type.version,
    kind: type.kind,
    metadata: {
      name: REV,
      namespace: NS,
      ownerReferences: [{ apiVersion: 'example.io/v1', kind: 'Other', name: 'x', uid: 'uid-other', controller: true }],
    },
    spec: {},
  }) as KubeObject;

// --- What the Deployment controller reports. ---

interface DeploymentStatus {
  replicas?: number;
  readyReplicas?: number;
  availableReplicas?: number;
  conditions?: { type: string; status: string; reason?: string; message?: string }[];
}

/** Every replica up: Available, Progressing done. */
const available = (n = 2): DeploymentStatus => ({
  replicas: n,
  readyReplicas: n,
  availableReplicas: n,
  conditions: [
    { type: 'Available', status: 'True', reason: 'MinimumReplicasAvailable' },
    { type: 'Progressing', status: 'True', reason: 'NewReplicaSetAvailable' },
  ],
});
/** Pods created, none ready yet. */
const rollingOut: DeploymentStatus = {
  replicas: 2,
  conditions: [
    { type: 'Available', status: 'False', reason: 'MinimumReplicasUnavailable' },
    { type: 'Progressing', status: 'True', reason: 'ReplicaSetUpdated' },
  ],
};
const timedOut = (message: string): DeploymentStatus => ({
  replicas: 2,
  conditions: [
    { type: 'Available', status: 'False', reason: 'MinimumReplicasUnavailable' },
    { type: 'Progressing', status: 'False', reason: 'ProgressDeadlineExceeded', message },
  ],
});
const replicaFailure = (message: string): DeploymentStatus => ({
  replicas: 0,
  conditions: [
    { type: 'Progressing', status: 'True', reason: 'ReplicaSetUpdated' },
    { type: 'ReplicaFailure', status: 'True', reason: 'FailedCreate', message },
  ],
});

// --- What the pass must write. ---

/** The Revision's status as written: each condition `Type: Status [Reason[: message]]`, and the fields it must hold. */
function revisionStatus(conditions: Record<string, string>, fields: Record<string, unknown> = {}): Want {
  const conds = conditionsOf(conditions);
  return [`Revision ${REV}`, { status: { conditions: conds, ...fields } }];
}

const QUEUED = 'Unknown Queued: Requests to the target are being buffered as resources are provisioned.';
const NO_TRAFFIC = 'False NoTraffic: The target is not receiving traffic.';
/** What a Revision whose Deployment is made but has no ready pod yet says. */
const DEPLOYING = { ResourcesAvailable: 'Unknown Deploying', ContainerHealthy: 'Unknown Deploying', Ready: 'Unknown Deploying', Active: QUEUED };
const READY = { ResourcesAvailable: 'True', ContainerHealthy: 'True', Ready: 'True', Active: 'True' };
const PINNED = { containerStatuses: [{ name: 'user-container', imageDigest: DIGEST }] };
const created = (kind: string, name = REV) => `Normal Created Created ${kind} "${name}"`;
const CREATED = [created('Deployment', DEPLOYMENT), created('Service'), created('PodDisruptionBudget')];
const becameReady = 'Normal RevisionReady Revision becomes ready upon all resources being ready';
/** The Deployment's spec as Tidal writes it. */
const deploymentWith = (spec: Record<string, unknown>): Want => [`Deployment ${DEPLOYMENT}`, { spec }];

// --- The table's context. ---

interface RevisionContext extends TableContext {
  /** The images the digest resolver was asked for, with the pull secrets it was given. */
  resolved: { image: string; imagePullSecrets: string[] }[];
  /** The digest step alone: the Revision's digests pinned, nothing else made yet. */
  pin(): Promise<unknown>;
  /** A change to the config maps, from now on. */
  configure(opt: Option<RevisionConfig>): void;
}

interface RevisionRow extends Row<RevisionContext> {
  /** config-deployment and config-autoscaler, on top of hakn's. */
  config?: Option<RevisionConfig>[];
}

const pass = (c: RevisionContext) => c.reconcile();
const pin = (c: RevisionContext) => c.pin();
const configure = (opt: Option<RevisionConfig>) => (c: RevisionContext) => c.configure(opt);
/** What the kubelet reports of a pod of the Revision, from now on. */
const podReports =
  (name: string, status: PodStatus, terminating = false) =>
  (c: RevisionContext) =>
    void c.kube.seed(Resources.Pod, pod(name, status, terminating));
const edit =
  <T extends KubeObject>(type: ResourceType, name: string, fn: (o: T) => void) =>
  (c: RevisionContext) =>
    c.kube.edit<T>(type, NS, name, fn);
const editRevision = (fn: Option<Revision>) => edit<Revision>(Resources.Revision, REV, fn);
const editDeployment = (fn: Option<Deployment>) => edit<Deployment>(Resources.Deployment, DEPLOYMENT, fn);
/** What the Deployment controller writes: the Deployment's status. */
const deploymentReports = (status: DeploymentStatus) => editDeployment((d) => void Object.assign(d, { status }));
const failNext = (verb: Parameters<KubeFake['failNext']>[0], type: ResourceType, message: string) => (c: RevisionContext) =>
  c.kube.failNext(verb, type, refused(422, 'Invalid', message));
const outcome = (want: Record<string, unknown>) => (_c: RevisionContext, got: unknown) => expect(got).toMatchObject(want);
/** Its children made, its pods up, its status Ready. */
const ready = [pass, deploymentReports(available()), pass];
/** Made reserve once Ready: scaled to zero, and the Deployment controller reports no pods left. */
const atZero = [editRevision(reserve), pass, deploymentReports({ replicas: 0, conditions: available(0).conditions! }), pass];
const stored = <T extends KubeObject>(c: RevisionContext, type: ResourceType, name: string) => c.kube.get<T>(type, NS, name);

const hakn: Option<RevisionConfig> = (c) => void (c.autoscaler.minScale = 2);

function setup(row: RevisionRow): RevisionContext {
  const kube = new KubeFake();
  const resolved: RevisionContext['resolved'] = [];
  // The registry answers at once, with DIGEST for every image.
  const resolve: DigestResolver['resolve'] = async (image, ctx) => {
    resolved.push({ image, imagePullSecrets: ctx.imagePullSecrets });
    return DIGEST;
  };
  const config = [hakn, ...(row.config ?? [])];
  const { deps } = fakeDeps(kube, { revisionConfig: () => revisionConfig(...config), digests: { resolve } });
  const events: string[] = [];
  Object.assign(deps.config, {
    observabilityConfig: () => ({ ...defaultObservabilityConfig(), loggingURLTemplate: 'http://logger.io/${REVISION_UID}' }),
  });
  const acts = createRevisionActivities({
    ...deps,
    events: { record: async (_o, type, reason, message) => void events.push(`${type} ${reason} ${message}`) },
  });
  const key = { namespace: NS, name: REV };
  return {
    kube,
    events,
    resolved,
    pin: () => acts.resolveRevisionDigests(key),
    configure: (opt) => void config.push(opt),
    // The pass of workflows/revision.ts: digests (nothing to do once pinned), children, status, and the children once
    // more when a reserve Revision has just turned initialized.
    reconcile: async () => {
      const digests = await acts.resolveRevisionDigests(key);
      if (digests.outcome === 'gone') return { digests };
      const resources = await acts.reconcileRevisionResources(key);
      const status = await acts.updateRevisionStatus(key, undefined, resources.outcome === 'applied' ? resources.service === 'notOwned' : undefined);
      const rescaled = status.rescale ? await acts.reconcileRevisionResources(key) : undefined;
      return { digests, resources, status, ...(rescaled ? { rescaled } : {}) };
    },
  };
}

const rows: RevisionRow[] = [
  // --- Nothing to do. ---
  {
    name: 'key not found',
    objects: [],
    then: outcome({ digests: { outcome: 'gone' } }),
  },
  {
    name: 'nop deletion reconcile: its children go with their owner references',
    objects: [rev(deleting)],
    then: outcome({ digests: { outcome: 'gone' } }),
  },

  // --- A new Revision. ---
  {
    name: 'first revision reconciliation',
    objects: [rev()],
    wantCreates: [
      [
        `Deployment ${DEPLOYMENT}`,
        {
          metadata: { ownerReferences: [{ kind: 'Revision', name: REV, uid: UID, controller: true }] },
          spec: { replicas: 2, template: { spec: { containers: [{ name: 'user-container', image: DIGEST }, { name: 'queue-proxy' }] } } },
        },
      ],
      [`Service ${REV}`, { spec: { type: 'ClusterIP', selector: { 'serving.knative.dev/revisionUID': UID } } }],
      [`PodDisruptionBudget ${REV}`, { spec: { minAvailable: 2 } }],
    ],
    // The digests first, then what the Deployment just made says.
    wantStatusUpdates: [
      revisionStatus({ ...DEPLOYING, Active: 'Unknown Deploying' }, { ...PINNED, logUrl: LOG_URL, observedGeneration: 1 }),
      revisionStatus(DEPLOYING, { ...PINNED, logUrl: LOG_URL, observedGeneration: 1, actualReplicas: 0, desiredReplicas: 2 }),
    ],
    wantEvents: CREATED,
    then: outcome({
      digests: { outcome: 'resolved', cached: false, images: 1 },
      resources: { deployment: 'created', service: 'created', hpa: 'none', pdb: 'created', replicas: 2 },
    }),
  },
  {
    name: 'first revision reconciliation with init containers',
    objects: [rev((r) => void (r.spec['initContainers'] = [{ name: 'init1', image: 'ghcr.io/example/init:1' }]))],
    wantCreates: [
      deploymentWith({
        template: { spec: { initContainers: [{ name: 'init1', image: DIGEST }], containers: [{ image: DIGEST }, { name: 'queue-proxy' }] } },
      }),
      `Service ${REV}`,
      `PodDisruptionBudget ${REV}`,
    ],
    wantStatusUpdates: [
      [`Revision ${REV}`, { status: { ...PINNED, initContainerStatuses: [{ name: 'init1', imageDigest: DIGEST }] } }],
      revisionStatus(DEPLOYING, { initContainerStatuses: [{ name: 'init1', imageDigest: DIGEST }] }),
    ],
    wantEvents: CREATED,
    then: (c) => expect(c.resolved.map((r) => r.image).sort()).toEqual([IMAGE, 'ghcr.io/example/init:1']),
  },
  {
    name: 'image pull secrets reach the deployment and the digest resolver',
    objects: [rev((r) => void (r.spec.imagePullSecrets = [{ name: 'foo-secret' }]))],
    wantCreates: [
      deploymentWith({ template: { spec: { imagePullSecrets: [{ name: 'foo-secret' }] } } }),
      `Service ${REV}`,
      `PodDisruptionBudget ${REV}`,
    ],
    wantStatusUpdates: [`Revision ${REV}`, revisionStatus(DEPLOYING)],
    wantEvents: CREATED,
    then: (c) => expect(c.resolved).toEqual([{ image: IMAGE, imagePullSecrets: ['foo-secret'] }]),
  },
  {
    name: 'failure creating user deployment: the revision stays Deploying, nothing else is made',
    objects: [rev()],
    given: [pin, (c) => c.kube.failNext('apply', Resources.Deployment, refused(403, 'Forbidden', 'exceeded quota: compute, requested: pods=2'))],
    wantCreates: [`Deployment ${DEPLOYMENT}`],
    wantStatusUpdates: [
      revisionStatus({
        Active: 'Unknown Deploying',
        ResourcesAvailable: `Unknown Deploying: failed to create deployment "${DEPLOYMENT}": exceeded quota: compute, requested: pods=2`,
        ContainerHealthy: `Unknown Deploying: failed to create deployment "${DEPLOYMENT}": exceeded quota: compute, requested: pods=2`,
        Ready: `Unknown Deploying: failed to create deployment "${DEPLOYMENT}": exceeded quota: compute, requested: pods=2`,
      }),
    ],
    wantEvents: [`Warning InternalError failed to create deployment "${DEPLOYMENT}": exceeded quota: compute, requested: pods=2`],
    wantErr: 'exceeded quota',
  },

  {
    name: 'failure updating revision status',
    objects: [rev()],
    given: [pin, failNext('status', Resources.Revision, 'inducing failure for update revisions')],
    wantCreates: [`Deployment ${DEPLOYMENT}`, `Service ${REV}`, `PodDisruptionBudget ${REV}`],
    wantStatusUpdates: [revisionStatus(DEPLOYING)],
    wantEvents: CREATED,
    wantErr: 'inducing failure for update revisions',
  },

  // --- The children converge. ---
  {
    name: 'stable revision reconciliation',
    objects: [rev()],
    given: [pass],
    then: outcome({ resources: { deployment: 'unchanged', service: 'unchanged', hpa: 'none', pdb: 'unchanged' }, status: { outcome: 'unchanged' } }),
  },
  {
    name: 'deployment does not exist and is created',
    objects: [rev()],
    given: [pass, (c) => c.kube.client().delete(Resources.Deployment, NS, DEPLOYMENT)],
    wantCreates: [deploymentWith({ replicas: 2 })],
    wantEvents: [created('Deployment', DEPLOYMENT)],
  },
  {
    name: 'update deployment containers: a deployment mutated under a stale hash is written back',
    objects: [rev()],
    given: [
      pass,
      editDeployment((d) => {
        for (const ct of d.spec.template.spec.containers) ct.image = 'asdf';
        d.metadata.labels['serving.knative.dev/deployment-hash'] = 'stale';
      }),
    ],
    wantUpdates: [deploymentWith({ template: { spec: { containers: [{ name: 'user-container', image: DIGEST }, { name: 'queue-proxy' }] } } })],
    then: outcome({ resources: { deployment: 'updated' } }),
  },
  {
    name: 'preserve third party annotations and labels',
    objects: [rev()],
    given: [
      pass,
      editDeployment((d) => {
        for (const m of [d.metadata.annotations, d.metadata.labels])
          Object.assign(m, { 'external.io/key': 'val', app: 'app', 'internal.knative.dev/foo': 'bar' });
        delete d.metadata.labels['serving.knative.dev/deployment-hash'];
      }),
    ],
    wantUpdates: [
      [`Deployment ${DEPLOYMENT}`, { metadata: { labels: { 'external.io/key': 'val', app: REV }, annotations: { 'external.io/key': 'val' } } }],
    ],
    then: (c) => {
      const d = stored<Deployment>(c, Resources.Deployment, DEPLOYMENT)!;
      expect(d.metadata.labels['internal.knative.dev/foo']).toBeUndefined();
      expect(d.metadata.annotations['internal.knative.dev/foo']).toBeUndefined();
      expect(d.metadata.annotations['app']).toBeUndefined();
    },
  },
  {
    name: 'do not update deployments with no spec changes',
    objects: [rev()],
    given: [
      pass,
      editDeployment((d) => {
        for (const m of [d.metadata.annotations, d.metadata.labels]) m['external.io/key'] = 'val';
      }),
    ],
    then: outcome({ resources: { deployment: 'unchanged' } }),
  },
  {
    name: 'failure updating deployment',
    objects: [rev()],
    given: [
      pass,
      editDeployment((d) => void (d.metadata.labels['serving.knative.dev/deployment-hash'] = 'stale')),
      failNext('update', Resources.Deployment, 'inducing failure for update deployments'),
    ],
    wantUpdates: [`Deployment ${DEPLOYMENT}`],
    wantStatusUpdates: [
      revisionStatus({
        ...DEPLOYING,
        ResourcesAvailable: `False InternalError: failed to update Deployment "${DEPLOYMENT}": inducing failure for update deployments`,
        Ready: `False InternalError: failed to update Deployment "${DEPLOYMENT}": inducing failure for update deployments`,
      }),
    ],
    wantEvents: [`Warning InternalError failed to update Deployment "${DEPLOYMENT}": inducing failure for update deployments`],
    wantErr: 'inducing failure for update deployments',
  },
  {
    name: 'lost deployment owner ref: the revision says it does not own it, and leaves it',
    objects: [rev()],
    given: [...ready, editDeployment((d) => void (d.metadata.ownerReferences = []))],
    wantStatusUpdates: [
      revisionStatus({
        ...READY,
        ResourcesAvailable: `False NotOwned: There is an existing Deployment "${DEPLOYMENT}" that we do not own.`,
        Ready: `False NotOwned: There is an existing Deployment "${DEPLOYMENT}" that we do not own.`,
      }),
    ],
    then: outcome({ resources: { deployment: 'notOwned' } }),
  },
  {
    name: 'service owned by someone else',
    objects: [rev(), foreign(Resources.KubeService)],
    given: [pin],
    wantCreates: [`Deployment ${DEPLOYMENT}`, `PodDisruptionBudget ${REV}`],
    wantStatusUpdates: [
      revisionStatus({
        Active: 'Unknown Deploying',
        ResourcesAvailable: `False NotOwned: There is an existing Service "${REV}" that we do not own.`,
        ContainerHealthy: 'Unknown Deploying',
        Ready: `False NotOwned: There is an existing Service "${REV}" that we do not own.`,
      }),
    ],
    wantEvents: [created('Deployment', DEPLOYMENT), created('PodDisruptionBudget')],
    then: outcome({ resources: { service: 'notOwned' } }),
  },
  {
    name: 'min-scale annotation reaches the deployment and the pod disruption budget',
    objects: [rev()],
    given: [...ready, editRevision(withRevAnnotations({ 'autoscaling.knative.dev/min-scale': '3' }))],
    wantUpdates: [deploymentWith({ replicas: 3 }), [`PodDisruptionBudget ${REV}`, { spec: { minAvailable: 3 } }]],
    // Three wanted, two ready: once initialized it stays Ready, and Active waits for the third pod.
    wantStatusUpdates: [revisionStatus({ ...READY, Active: QUEUED }, { actualReplicas: 2, desiredReplicas: 3 })],
  },

  // --- Readiness from the Deployment and its pods. ---
  {
    name: 'deployment readiness propagated',
    objects: [rev()],
    given: [pass, deploymentReports(available())],
    wantStatusUpdates: [revisionStatus(READY, { ...PINNED, logUrl: LOG_URL, actualReplicas: 2, desiredReplicas: 2 })],
    wantEvents: [becameReady],
    then: outcome({ status: { outcome: 'written', ready: 'True' } }),
  },
  {
    name: 'ready steady state',
    objects: [rev()],
    given: ready,
    then: outcome({
      resources: { deployment: 'unchanged', service: 'unchanged', pdb: 'unchanged' },
      status: { outcome: 'unchanged', ready: 'True' },
    }),
  },
  {
    name: 'ready revision losing its pods: Active is Queued, Ready stays',
    objects: [rev()],
    given: [...ready, deploymentReports({ ...rollingOut, readyReplicas: 0, availableReplicas: 0 })],
    wantStatusUpdates: [revisionStatus({ ...READY, Active: QUEUED }, { actualReplicas: 0, desiredReplicas: 2 })],
  },
  {
    name: 'failed deployment: ProgressDeadlineExceeded',
    objects: [rev()],
    given: [pass, deploymentReports(timedOut('I timed out!'))],
    wantStatusUpdates: [
      revisionStatus({
        ...DEPLOYING,
        ResourcesAvailable: 'False ProgressDeadlineExceeded: I timed out!',
        Ready: 'False ProgressDeadlineExceeded: I timed out!',
      }),
    ],
    then: outcome({ status: { ready: 'False', reason: 'ProgressDeadlineExceeded' } }),
  },
  {
    name: 'surface replica failure',
    objects: [rev()],
    given: [pass, deploymentReports(replicaFailure('pods "hello-00001-deployment-x" is forbidden: exceeded quota'))],
    wantStatusUpdates: [
      revisionStatus({
        ...DEPLOYING,
        ResourcesAvailable: 'False FailedCreate: pods "hello-00001-deployment-x" is forbidden: exceeded quota',
        Ready: 'False FailedCreate: pods "hello-00001-deployment-x" is forbidden: exceeded quota',
      }),
    ],
  },
  {
    name: 'image pull error reported from the pod once the deployment times out',
    objects: [rev()],
    given: [pass, podReports('hello-a', waiting('ImagePullBackOff', "can't pull it")), deploymentReports(timedOut('Timed out!'))],
    wantStatusUpdates: [
      revisionStatus({ ...DEPLOYING, ResourcesAvailable: "False ImagePullBackOff: can't pull it", Ready: "False ImagePullBackOff: can't pull it" }),
    ],
  },
  {
    name: 'container exiting reported from the pod',
    objects: [rev()],
    given: [pass, deploymentReports(rollingOut), podReports('hello-a', crashed(5, 'I failed man!'))],
    wantStatusUpdates: [
      revisionStatus({
        ...DEPLOYING,
        ContainerHealthy: 'False ExitCode5: Container failed with: I failed man!',
        Ready: 'False ExitCode5: Container failed with: I failed man!',
      }),
    ],
  },
  {
    name: 'surface pod schedule errors',
    objects: [rev()],
    given: [pass, deploymentReports(rollingOut), podReports('hello-a', unschedulable('0/3 nodes are available: 3 Insufficient energy.'))],
    wantStatusUpdates: [
      revisionStatus({
        ...DEPLOYING,
        ResourcesAvailable: 'False Unschedulable: 0/3 nodes are available: 3 Insufficient energy.',
        Ready: 'False Unschedulable: 0/3 nodes are available: 3 Insufficient energy.',
      }),
    ],
  },
  {
    name: 'surface no pod schedule errors if pod-is-always-schedulable is true',
    objects: [rev()],
    config: [(c) => void (c.deployment.podIsAlwaysSchedulable = true)],
    given: [pass, deploymentReports(rollingOut), podReports('hello-a', unschedulable('0/3 nodes are available: 3 Insufficient energy.'))],
    then: outcome({ status: { outcome: 'unchanged', ready: 'Unknown' } }),
  },
  {
    name: "revision's ContainerHealthy turns back to True if the deployment is healthy",
    objects: [rev()],
    given: [
      ...ready,
      editRevision((r) => {
        const healthy = r.status!.conditions!.find((x) => x.type === 'ContainerHealthy')!;
        Object.assign(healthy, { status: 'False', reason: 'ExitCode137', message: 'Container failed with: OOMKilled' });
        Object.assign(
          r.status!.conditions!.find((x) => x.type === 'Ready')!,
          { status: 'False', reason: 'ExitCode137' },
        );
      }),
    ],
    wantStatusUpdates: [revisionStatus(READY)],
    wantEvents: [becameReady],
  },
  {
    name: "revision's ContainerHealthy stays True even if the last pod with restarts terminates",
    objects: [rev()],
    given: [...ready, podReports('hello-old', crashed(128, 'OOMKilled'), true)],
    then: (c, got) => {
      expect(got).toMatchObject({ status: { outcome: 'unchanged', ready: 'True' } });
      // Every replica available: no pod is read.
      expect(c.kube.calls.filter((x) => x.kind === 'Pod')).toEqual([]);
    },
  },

  // --- Routing state: reserve. ---
  {
    name: 'reserve revision scaled to zero',
    objects: [rev()],
    given: [...ready, editRevision(reserve)],
    wantUpdates: [deploymentWith({ replicas: 0 })],
    // Upstream's PodAutoscaler keeps its scale target initialized: Ready stays, Active says no traffic. Active False
    // goes first, under the version read, before the Deployment (a Route that relabelled it since stops the step).
    wantStatusUpdates: [
      revisionStatus({ ...READY, Active: NO_TRAFFIC }, { actualReplicas: 2, desiredReplicas: 2 }),
      revisionStatus({ ...READY, Active: NO_TRAFFIC }, { actualReplicas: 2, desiredReplicas: 0 }),
    ],
    then: outcome({ resources: { deployment: 'updated', replicas: 0 } }),
  },
  {
    name: 'deactivated revision is stable',
    objects: [rev()],
    given: [...ready, ...atZero],
    then: outcome({ resources: { deployment: 'unchanged', replicas: 0 }, status: { outcome: 'unchanged', ready: 'True' } }),
  },
  {
    name: 'reserve revision that was never ready reaches its serving count first, then scales to zero',
    objects: [rev(reserve)],
    given: [pass, deploymentReports(available())],
    // Ready, then — in the same pass — Active False and its Deployment at 0.
    wantStatusUpdates: [
      revisionStatus(READY, { actualReplicas: 2, desiredReplicas: 2 }),
      revisionStatus({ ...READY, Active: NO_TRAFFIC }, { actualReplicas: 2, desiredReplicas: 2 }),
    ],
    wantUpdates: [deploymentWith({ replicas: 0 })],
    wantEvents: [becameReady],
    then: outcome({ resources: { replicas: 2 }, status: { rescale: true }, rescaled: { deployment: 'updated', replicas: 0 } }),
  },

  // --- The HPA class. ---
  {
    name: 'HPA class creates HPA and leaves the replica count to it',
    objects: [rev(withRevAnnotations(HPA_CLASS))],
    given: [pin],
    wantCreates: [
      `Deployment ${DEPLOYMENT}`,
      [
        `HorizontalPodAutoscaler ${REV}`,
        {
          metadata: { ownerReferences: [{ kind: 'Revision', name: REV, controller: true }] },
          spec: { scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: DEPLOYMENT }, minReplicas: 2, maxReplicas: 2147483647 },
        },
      ],
      `Service ${REV}`,
      `PodDisruptionBudget ${REV}`,
    ],
    wantStatusUpdates: [revisionStatus(DEPLOYING, { desiredReplicas: 1 })],
    wantEvents: [...CREATED, created('HorizontalPodAutoscaler')],
    then: (c, got) => {
      expect(got).toMatchObject({ resources: { hpa: 'created' } });
      expect(stored<Deployment>(c, Resources.Deployment, DEPLOYMENT)!.spec.replicas).toBeUndefined();
    },
  },
  {
    name: 'mutated HPA gets fixed',
    objects: [rev(withRevAnnotations(HPA_CLASS))],
    given: [pass, edit<HorizontalPodAutoscaler>(Resources.HorizontalPodAutoscaler, REV, (h) => void (h.spec.maxReplicas = 10))],
    wantUpdates: [[`HorizontalPodAutoscaler ${REV}`, { spec: { minReplicas: 2, maxReplicas: 2147483647 } }]],
  },

  // --- The PodDisruptionBudget. ---
  {
    name: 'pod disruption budget turned off in config-deployment is deleted',
    objects: [rev()],
    given: [pass, configure((c) => void (c.deployment.podDisruptionBudget = 'disabled'))],
    wantDeletes: [`PodDisruptionBudget ${REV}`],
    wantEvents: [`Normal Deleted Deleted PodDisruptionBudget "${REV}"`],
  },
];

describe('Revision pass, table', () => {
  tableTest(rows, setup);
});
