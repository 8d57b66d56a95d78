// Tidal's controller on the local stack the way a pod runs it: deploy/'s ServiceAccount and RBAC applied,
// the ServiceAccount's token, the cluster CA and the namespace at /var/run/secrets/kubernetes.io/serviceaccount in a
// private mount namespace (a fresh tmpfs on /run, seen by that process only), KUBERNETES_SERVICE_HOST/PORT on
// loopback, no kubeconfig and a HOME without ~/.kube. `npm run up -- --in-cluster` and test/e2e/incluster.test.ts use it.
// Needs root (unshare --mount), as the machines here are.
import { copyFileSync, existsSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { controllerMalloc, findJemalloc } from './allocator.js';
import { IMAGE_UID } from './image.js';
import { CONTROLLER_NODE_FLAGS } from '../workers/node-flags.js';
import path from 'node:path';
import type { ProcessRecord, ProcessTable } from './processes.js';
import { kubectl, repoRoot } from './kubectl.js';
import type { StackInfo, StackPorts } from './stack.js';

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
  opts: {
    ports: StackPorts;
    controllerEnv?: Record<string, string>;
    /**
     * The unpacked root filesystem of the controller image (`npm run image`): the controller then runs from it as
     * the image says (chroot, uid/gid 65532, `node dist/controller.js` in /app) instead of from this checkout. Files
     * the environment names (TIDAL_REGISTRY_CA_FILES) are copied in.
     */
    imageRootfs?: string;
  },
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
  const root = opts.imageRootfs ?? '';
  // In an image's root the files go to its /run (its /var/run links there), and it gets /proc and /dev as a runtime
  // gives them; never through the link from outside, which would point at this machine's /run.
  const run = root ? `${root}/run` : '/run';
  const saDir = root ? `${run}/secrets/kubernetes.io/serviceaccount` : serviceAccountMount;
  const runtimeMounts = root ? `mkdir -p ${root}/proc ${root}/dev && mount -t proc proc ${root}/proc && mount --rbind /dev ${root}/dev && ` : '';
  const exec = root ? `exec /usr/sbin/chroot --userspec=${IMAGE_UID}:${IMAGE_UID} ${root} "$@"` : 'exec "$@"';
  const script = `${runtimeMounts}mkdir -p ${run} && mount -t tmpfs -o mode=755 tmpfs ${run} && mkdir -p ${saDir} && cp "$0"/token "$0"/ca.crt "$0"/namespace ${saDir}/ && chmod 644 ${saDir}/* && ${exec}`;
  if (root) mkdirSync(path.join(root, 'var'), { recursive: true });
  if (root && !existsSync(path.join(root, 'var', 'run'))) symlinkSync('/run', path.join(root, 'var', 'run'));
  const controllerEnv = { ...opts.controllerEnv };
  if (root && controllerEnv.TIDAL_REGISTRY_CA_FILES) {
    controllerEnv.TIDAL_REGISTRY_CA_FILES = controllerEnv.TIDAL_REGISTRY_CA_FILES.split(',')
      .map((f, i) => {
        const inImage = `/etc/tidal/registry-ca-${i}.pem`;
        mkdirSync(path.join(root, 'etc', 'tidal'), { recursive: true });
        copyFileSync(f, path.join(root, inImage));
        return inImage;
      })
      .join(',');
  }
  const p = opts.ports;
  // The allocator the image preloads (dev/image.ts copies this machine's jemalloc in), or this machine's.
  const malloc = controllerMalloc(process.env, () => {
    const jemalloc = findJemalloc();
    return root && jemalloc && !existsSync(path.join(root, jemalloc)) ? undefined : jemalloc;
  });
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
    // The image's controller finds the bundle next to itself; a checkout's is named.
    ...(root ? { NODE_ENV: 'production' } : { TIDAL_WORKFLOW_BUNDLE: builtWorkflowBundle }),
    TIDAL_IDENTITY: `${name}-in-cluster`,
    ...malloc.env,
    ...controllerEnv,
  };
  const node = root ? '/usr/local/bin/node' : process.execPath;
  const controller = root ? '/app/dist/controller.js' : builtController;
  return procs.start(
    name,
    'unshare',
    ['--mount', '--propagation', 'private', 'sh', '-c', script, src, node, ...CONTROLLER_NODE_FLAGS, controller],
    env,
    root ? '/' : repoRoot,
    node,
  );
}
