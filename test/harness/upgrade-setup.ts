// Global setup of the upgrade layer (test/upgrade/): the stack the real layer runs — a real node (kubelet, containerd,
// runc in a network namespace of the stack's own), Traefik as the ingress, Knative's queue-proxy and test images in
// the stack's registry — on ports and in a folder of its own, with no controller: the test starts the previous
// release's three replicas itself and rolls them. The previous release (dev/previous-release.ts) and this checkout's
// dist/ are built here, before the clock of any test runs. What a previous run left is torn down first.
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import type { TestProject } from 'vitest/node';
import { startRealNodeRegistry } from '../../dev/knative-images.js';
import { realNodeLeftovers } from '../../dev/node.js';
import { ensurePreviousRelease, type ReleaseBuild } from '../../dev/previous-release.js';
import { ProcessTable } from '../../dev/processes.js';
import { stopRegistry } from '../../dev/registry.js';
import { kubectl, portsAt, repoRoot, stackDown, stackUp, startWebhookFront, type StackPorts } from '../../dev/stack.js';
import type { ProvidedRealStack } from './real-setup.js';

const run = promisify(execFile);
const dir = path.join(repoRoot, '.tidal', 'upgrade');

/**
 * Clear of every other stack: `npm run up`, the e2e and real layers, the conformance runs and the benchmarks (whose
 * prefixes are 11, 12–13, 14, 15, 16, 17, 18, 20, 21, 23, 61 and 62).
 */
export const upgradeTestPorts: StackPorts = { ...portsAt(24), webhook: 24843, controllerWebhook: 24844, ingress: 24080, ingressPrivate: 24081 };
const REGISTRY_PORT = 24543;

declare module 'vitest' {
  export interface ProvidedContext {
    /** The release the upgrade starts from, built from source. */
    previousRelease: ReleaseBuild;
  }
}

/** This checkout's dist/, built when stale, as `startController` would build it (under the same lock). */
async function buildCurrent(log: (s: string) => void): Promise<void> {
  const build = await import('../../workers/build.js');
  if (build.isBuildFresh()) return;
  log('building dist/ (npm run build)');
  mkdirSync(build.distDir, { recursive: true });
  const out = await run(
    'flock',
    [path.join(build.distDir, '.build.lock'), process.execPath, '--import', 'tsx', path.join(repoRoot, 'workers', 'build.ts'), '--if-stale'],
    {
      cwd: repoRoot,
    },
  );
  for (const line of out.stderr.split('\n')) if (line.trim() !== '') log(line);
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const log = (s: string) => console.error(`[upgrade-stack] ${s}`);
  const teardown = async () => {
    await stackDown(dir, { log });
    await stopRegistry(path.join(dir, 'registry'));
  };
  await teardown();
  rmSync(dir, { recursive: true, force: true });
  try {
    return await start(project, log, teardown);
  } catch (err) {
    // vitest runs no teardown for a setup that failed: what it started goes now.
    await teardown().catch((e: unknown) => log(`teardown after the failed setup: ${String(e)}`));
    throw err;
  }
}

async function start(project: TestProject, log: (s: string) => void, teardown: () => Promise<void>): Promise<() => Promise<void>> {
  const started = Date.now();
  mkdirSync(dir, { recursive: true });
  const previous = await ensurePreviousRelease(log);
  await buildCurrent(log);
  const { registry, caFile, images, realNode } = await startRealNodeRegistry(dir, REGISTRY_PORT);
  // Info, not the real layer's debug: three replicas logging every poke take CPU the rollout's passes need.
  const controllerEnv = { LOG_LEVEL: 'info', TIDAL_REGISTRY_CA_FILES: caFile };
  const info = await stackUp({ dir, ports: upgradeTestPorts, ui: false, nodes: 0, realNode, controller: false, controllerEnv, log });
  // The previous release's CRDs, as its install left them (the stack applied this checkout's); the test applies this
  // checkout's again when it upgrades, as `kubectl apply` of a release's manifests does before its Deployment rolls.
  await kubectl(info, ['apply', '--server-side', '--force-conflicts', '-f', path.join(previous.dir, 'deploy', 'crds')]);
  // The admission webhook's balancer and configurations, as a stack with a controller has them; the replicas behind it
  // are the test's.
  await startWebhookFront(info, new ProcessTable(dir), log);
  log(`stack with a real node up in ${Math.round((Date.now() - started) / 1000)}s, no controller; previous release ${previous.commit.slice(0, 12)}`);
  const provided: ProvidedRealStack = {
    dir: info.dir,
    kubeconfig: info.kubeconfig,
    temporalAddress: info.temporalAddress,
    bins: info.bins,
    ports: upgradeTestPorts,
    controllerEnv,
    registryHost: registry.host,
    images,
  };
  // Under the real layer's name too, so test/harness/real.ts serves this stack as it serves the real layer's.
  project.provide('realStack', provided);
  project.provide('previousRelease', previous);
  return async () => {
    if (process.env.TIDAL_KEEP_TEST_STACK) return log(`kept running in ${dir}`);
    await teardown();
    const left = realNodeLeftovers(dir, upgradeTestPorts.apiserver);
    if (left.length > 0) throw new Error(`the real node left behind: ${left.join(', ')}`);
    if (existsSync(path.join(dir, 'node'))) throw new Error('the real node left its folder behind');
  };
}
