// The example module operator (ADR 0009): turns Revisions with `tidal.dev/module: sidecar-example`
// into Deployments that run the user's containers with its own sidecar instead of queue-proxy, and writes those
// Revisions' ResourcesAvailable and ContainerHealthy from the Deployments' status; Tidal computes Ready from them
// and keeps routing, rollouts and garbage collection. Run: `KUBECONFIG=… npx tsx examples/module-operator/operator.ts`.
import pino from 'pino';
import { Resources } from '../../api/kinds.js';
import type { KubeObject } from '../../api/meta.js';
import type { Revision } from '../../api/serving.js';
import { KubeClient } from '../../kube/client.js';
import { isConflict } from '../../kube/errors.js';
import { Informer } from '../../watcher/informer.js';
import {
  FieldManager,
  ModuleName,
  digestsResolved,
  makeSidecarDeployment,
  mergeConditions,
  moduleStatus,
  parseSidecarConfig,
  type DeploymentState,
} from './sidecar-example.js';

const log = pino({ name: FieldManager, level: process.env.LOG_LEVEL ?? 'info', timestamp: pino.stdTimeFunctions.isoTime });
const kube = new KubeClient({ kubeconfig: process.env.KUBECONFIG, fieldManager: FieldManager });

const isMine = (rev: KubeObject) => rev.metadata.annotations?.['tidal.dev/module'] === ModuleName;
const rfc3339 = (d: Date) => `${d.toISOString().slice(0, 19)}Z`;

/** Applies the Deployment (server-side, as this operator) and writes the Revision's two conditions. */
async function reconcile(namespace: string, name: string): Promise<void> {
  const rev = await kube.get<Revision>(Resources.Revision, namespace, name);
  if (!rev || rev.metadata.deletionTimestamp || !isMine(rev)) return;
  // Tidal pins image digests first and hands the conditions over in that write: until then they are Tidal's.
  if (!digestsResolved(rev)) return;
  const cfg = parseSidecarConfig(rev);
  let deployment: DeploymentState | undefined;
  if (cfg.ok) {
    deployment = await kube.apply(Resources.Deployment, makeSidecarDeployment(rev, cfg.value));
  }
  const mine = moduleStatus(deployment, cfg.ok ? undefined : cfg.reason);
  const conditions = mergeConditions(rev.status?.conditions, mine.conditions, rfc3339(new Date()));
  const counts =
    mine.actualReplicas !== undefined && (rev.status?.actualReplicas !== mine.actualReplicas || rev.status?.desiredReplicas !== mine.desiredReplicas);
  if (!conditions && !counts) return;
  // The resourceVersion read is a precondition: a write that raced Tidal's fails with 409 and is redone from a fresh read.
  await kube.apply(
    Resources.Revision,
    {
      apiVersion: rev.apiVersion,
      kind: rev.kind,
      metadata: { name, namespace, resourceVersion: rev.metadata.resourceVersion ?? '' },
      status: {
        conditions: conditions ?? rev.status?.conditions ?? [],
        ...(mine.actualReplicas !== undefined ? { actualReplicas: mine.actualReplicas, desiredReplicas: mine.desiredReplicas } : {}),
      },
    } as KubeObject,
    'status',
  );
  const ready = mine.conditions.map((c) => `${c.type}=${c.status}${c.reason ? ` ${c.reason}` : ''}`).join(', ');
  log.info({ kind: 'Revision', namespace, name }, `status written: ${ready}`);
}

// One reconcile per Revision at a time; changes meanwhile coalesce into one more run. Failures retry with backoff.
const running = new Set<string>();
const dirty = new Set<string>();
function enqueue(namespace: string, name: string, attempt = 0): void {
  const key = `${namespace}/${name}`;
  if (running.has(key)) return void dirty.add(key);
  running.add(key);
  reconcile(namespace, name)
    .then(() => 0)
    .catch((err: unknown) => {
      if (!isConflict(err)) log.warn({ kind: 'Revision', namespace, name, err: String(err) }, 'reconcile failed; retrying');
      return Math.min(200 * 2 ** attempt, 10_000);
    })
    .then((retryMs) => {
      running.delete(key);
      if (retryMs > 0) setTimeout(() => enqueue(namespace, name, attempt + 1), retryMs).unref();
      else if (dirty.delete(key)) enqueue(namespace, name);
    })
    .catch(() => undefined);
}

const revisions = new Informer(
  kube,
  Resources.Revision,
  {
    relistMs: 300_000,
    maxBackoffMs: 10_000,
    onChange: (type, obj) => {
      if (type !== 'deleted' && isMine(obj)) enqueue(obj.metadata.namespace ?? '', obj.metadata.name ?? '');
    },
  },
  log.child({ informer: 'Revision' }),
);
const deployments = new Informer(
  kube,
  Resources.Deployment,
  {
    labelSelector: `tidal.dev/module=${ModuleName}`,
    relistMs: 300_000,
    maxBackoffMs: 10_000,
    // A Deployment's change (status, or a deletion to undo) is its Revision's.
    onChange: (_type, obj) => {
      const owner = obj.metadata.ownerReferences?.find((r) => r.kind === 'Revision' && r.controller);
      if (owner) enqueue(obj.metadata.namespace ?? '', owner.name);
    },
  },
  log.child({ informer: 'Deployment' }),
);
revisions.start();
deployments.start();
void Promise.all([revisions.synced, deployments.synced]).then(() => log.info(`watching Revisions of module ${ModuleName}`));

const stop = () => {
  void Promise.all([revisions.close(), deployments.close()]).then(() => process.exit(0));
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
