// Tidal's controller on the local stack the way a pod runs it (issue 13): deploy/'s ServiceAccount and RBAC applied,
// the ServiceAccount's token, the cluster CA and the namespace at /var/run/secrets/kubernetes.io/serviceaccount in a
// private mount namespace (a fresh tmpfs on /run, seen by that process only), KUBERNETES_SERVICE_HOST/PORT on
// loopback, no kubeconfig and a HOME without ~/.kube. `npm run up -- --in-cluster` and test/e2e/incluster.test.ts use it.
// Needs root (unshare --mount), as the machines here are.
import { copyFileSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { ProcessRecord, ProcessTable } from './processes.js';
import { kubectl, repoRoot, type StackInfo, type StackPorts } from './stack.js';

export const IN_CLUSTER_SA = 'system:serviceaccount:knative-serving:controller';
export const serviceAccountMount = '/var/run/secrets/kubernetes.io/serviceaccount';

/** Applies deploy/rbac (the ServiceAccount `controller`, its roles and bindings) with server-side apply. */
export async function applyControllerRbac(info: Pick<StackInfo, 'kubeconfig' | 'bins'>): Promise<void> {
  await kubectl(info, [
    'apply',
    '--server-side',
    '--force-conflicts',
    '--field-manager=tidal-installer',
    '-f',
    path.join(repoRoot, 'deploy', 'rbac'),
  ]);
}

/**
 * Starts the built controller (dist/, which must be fresh) as process `name` with only what a pod of
 * deploy/controller/deployment.yaml would have. Resolves once the process is running; the caller waits for /readyz.
 */
export async function startInClusterController(
  info: StackInfo,
  procs: ProcessTable,
  opts: { ports: StackPorts; controllerEnv?: Record<string, string> },
  name = 'tidal-controller',
): Promise<ProcessRecord> {
  const { builtController, builtWorkflowBundle } = await import('../workers/build.js');
  await applyControllerRbac(info);
  const token = (await kubectl(info, ['create', 'token', 'controller', '-n', 'knative-serving', '--duration', '24h'])).trim();
  const src = path.join(info.dir, 'in-cluster', 'serviceaccount');
  const home = path.join(info.dir, 'in-cluster', 'home'); // no ~/.kube/config to fall back on
  mkdirSync(src, { recursive: true });
  mkdirSync(home, { recursive: true });
  writeFileSync(path.join(src, 'token'), token, { mode: 0o600 });
  copyFileSync(path.join(info.dir, 'pki', 'ca.crt'), path.join(src, 'ca.crt'));
  writeFileSync(path.join(src, 'namespace'), 'knative-serving');
  // A fresh /run (so /var/run/secrets exists only for this process), the three files copied in, then exec node: the
  // controller keeps this pid and gets SIGTERM directly.
  const script = `mount -t tmpfs -o mode=755 tmpfs /run && mkdir -p ${serviceAccountMount} && cp "$0"/token "$0"/ca.crt "$0"/namespace ${serviceAccountMount}/ && exec "$1" "$2"`;
  const p = opts.ports;
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: home,
    KUBERNETES_SERVICE_HOST: '127.0.0.1',
    KUBERNETES_SERVICE_PORT: String(p.apiserver),
    TEMPORAL_ADDRESS: info.temporalAddress,
    METRICS_PORT: String(p.controllerMetrics),
    ...(p.controllerWebhook !== undefined && p.webhook !== undefined
      ? { TIDAL_WEBHOOK_PORT: String(p.controllerWebhook), TIDAL_WEBHOOK_HOST: '127.0.0.1' }
      : { TIDAL_WEBHOOK: 'false' }),
    TIDAL_WORKFLOW_BUNDLE: builtWorkflowBundle,
    TIDAL_IDENTITY: `${name}-in-cluster`,
    MALLOC_ARENA_MAX: '2',
    ...opts.controllerEnv,
  };
  return procs.start(
    name,
    'unshare',
    ['--mount', '--propagation', 'private', 'sh', '-c', script, src, process.execPath, builtController],
    env,
    repoRoot,
    process.execPath,
  );
}
