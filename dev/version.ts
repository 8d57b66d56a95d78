// `npm run version`: what runs, as `kubectl version` says it for Kubernetes — this checkout's version, every
// controller polling Tidal's task queue (their Temporal worker identities carry their version, workers/version.ts),
// the controller Deployment's version label when the cluster has one, and the Temporal server's version. It connects
// to Temporal as the controller does (TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE, TEMPORAL_TLS_DIR / API key:
// workers/temporal.ts; default: the local stack's) and to Kubernetes with KUBECONFIG (default: the local stack's).
import { existsSync } from 'node:fs';
import path from 'node:path';
import { Connection } from '@temporalio/client';
import proto from '@temporalio/proto';
import { Resources } from '../api/kinds.js';
import type { KubeObject } from '../api/meta.js';
import { KubeClient } from '../kube/client.js';
import { loadTemporalSettings, temporalConnectOptions } from '../workers/temporal.js';
import { buildInfo, versionOfIdentity } from '../workers/version.js';
import { repoRoot } from './kubectl.js';

export interface Poller {
  identity: string;
  version: string;
  commit: string;
  lastPollSecondsAgo: number | undefined;
}

/** The workflow pollers of `taskQueue`, with the version each identity names (`unknown` for one that names none). */
export async function taskQueuePollers(conn: Connection, namespace: string, taskQueue: string, now = Date.now()): Promise<Poller[]> {
  const res = await conn.workflowService.describeTaskQueue({
    namespace,
    taskQueue: { name: taskQueue },
    taskQueueType: proto.temporal.api.enums.v1.TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW,
  });
  return (res.pollers ?? []).map((p) => {
    const identity = p.identity ?? '';
    const v = versionOfIdentity(identity);
    const seconds = p.lastAccessTime?.seconds;
    return {
      identity,
      version: v?.version ?? 'unknown',
      commit: v?.commit ?? 'unknown',
      lastPollSecondsAgo: seconds == null ? undefined : Math.max(0, Math.round(now / 1000 - Number(seconds))),
    };
  });
}

async function main(): Promise<void> {
  const lines: string[] = [`client       ${buildInfo.version} (${buildInfo.commit === 'dev' ? 'source checkout' : buildInfo.commit})`];
  const settings = loadTemporalSettings(process.env);
  const taskQueue = process.env.TIDAL_TASK_QUEUE || 'tidal';
  try {
    const conn = await Connection.connect({ ...temporalConnectOptions(settings), connectTimeout: 5000 });
    try {
      const pollers = await taskQueuePollers(conn, settings.namespace, taskQueue);
      lines.push(`controllers  ${pollers.length} polling task queue ${taskQueue} in namespace ${settings.namespace}`);
      for (const p of pollers)
        lines.push(
          `  ${p.identity.split(' ')[0]}  ${p.version}+${p.commit}${p.lastPollSecondsAgo === undefined ? '' : `  polled ${p.lastPollSecondsAgo}s ago`}`,
        );
      const info = await conn.workflowService.getClusterInfo({});
      lines.push(`temporal     server ${info.serverVersion ?? 'unknown'} at ${settings.address}`);
    } finally {
      await conn.close();
    }
  } catch (err) {
    lines.push(`temporal     unreachable at ${settings.address}: ${err instanceof Error ? err.message : String(err)}`);
  }
  const kubeconfig =
    process.env.KUBECONFIG ?? (existsSync(path.join(repoRoot, '.tidal', 'kubeconfig')) ? path.join(repoRoot, '.tidal', 'kubeconfig') : undefined);
  try {
    const kube = new KubeClient({ kubeconfig, fieldManager: 'tidal-version', timeoutMs: 5000 });
    const ns = process.env.SYSTEM_NAMESPACE || 'knative-serving';
    const d = await kube.get<KubeObject & { status?: { readyReplicas?: number; replicas?: number } }>(Resources.Deployment, ns, 'controller');
    lines.push(
      d
        ? `deployment   ${ns}/controller ${d.metadata.labels?.['app.kubernetes.io/version'] ?? '(no version label)'}, ${d.status?.readyReplicas ?? 0}/${d.status?.replicas ?? 0} ready`
        : `deployment   none in ${ns} (the local stack runs the controller as processes)`,
    );
    kube.close();
  } catch (err) {
    lines.push(`deployment   unknown: ${err instanceof Error ? err.message : String(err)}`);
  }
  console.log(lines.join('\n'));
}

if (process.argv[1]?.endsWith('version.ts')) {
  main().catch((err: unknown) => {
    console.error(err instanceof Error ? err.message : String(err));
    process.exit(1);
  });
}
