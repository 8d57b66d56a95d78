// Global setup of the real layer: the stack `npm run up -- --real-node` runs, on its own ports — a real node (kubelet,
// containerd, runc in a network namespace of the stack's own), Traefik as the ingress, Knative's queue-proxy and test
// images built here and pushed to the stack's registry, no kwok nodes — with Tidal's controller as a user runs it.
// `TIDAL_REAL_STACK=.tidal` runs the tests against an `npm run up -- --real-node` stack that is already up instead.
import path from 'node:path';
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import type { TestProject } from 'vitest/node';
import { startRealNodeRegistry, type PushedImage } from '../../dev/knative-images.js';
import { realNodeLeftovers } from '../../dev/node.js';
import { stopRegistry } from '../../dev/registry.js';
import { devPorts, ensureToolchain, realTestPorts, repoRoot, stackDown, stackUp, type Binaries, type StackPorts } from '../../dev/stack.js';

const dir = path.join(repoRoot, '.tidal', 'real');
const REGISTRY_PORT = 19543;

export interface ProvidedRealStack {
  dir: string;
  kubeconfig: string;
  temporalAddress: string;
  bins: Binaries;
  ports: StackPorts;
  controllerEnv: Record<string, string>;
  /** `127.0.0.1:<port>`: the registry the node pulls from. */
  registryHost: string;
  /** Knative's images by name (helloworld, pizzaplanetv1, …, queue), as pushed. */
  images: Record<string, PushedImage>;
}

declare module 'vitest' {
  export interface ProvidedContext {
    realStack: ProvidedRealStack;
  }
}

/** The images an `npm run up -- --real-node` stack pushed, read back from its registry's tags. */
async function existingStack(stackDir: string): Promise<ProvidedRealStack> {
  const { pushKnativeImages: push } = await import('../../dev/knative-images.js');
  const caPem = readFileSync(path.join(stackDir, 'registry-cas.pem'), 'utf8');
  const images = await push({ url: 'https://127.0.0.1:5443', host: '127.0.0.1:5443', caPem });
  return {
    dir: stackDir,
    kubeconfig: path.join(stackDir, 'kubeconfig'),
    temporalAddress: `127.0.0.1:${devPorts.temporal}`,
    bins: await ensureToolchain(() => {}),
    ports: devPorts,
    // As dev/cli.ts starts it, so a test that restarts the controller restarts it the same way.
    controllerEnv: { TIDAL_REGISTRY_CA_FILES: path.join(stackDir, 'registry-cas.pem') },
    registryHost: '127.0.0.1:5443',
    images,
  };
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const log = (s: string) => console.error(`[real-stack] ${s}`);
  const reuse = process.env.TIDAL_REAL_STACK;
  if (reuse) {
    project.provide('realStack', await existingStack(path.resolve(repoRoot, reuse)));
    return async () => {};
  }
  await stackDown(dir, { log });
  await stopRegistry(path.join(dir, 'registry'));
  rmSync(dir, { recursive: true, force: true });
  const started = Date.now();
  mkdirSync(dir, { recursive: true });
  const { registry, caFile, images, realNode } = await startRealNodeRegistry(dir, REGISTRY_PORT);
  const controllerEnv = { LOG_LEVEL: 'debug', TIDAL_REGISTRY_CA_FILES: caFile };
  const info = await stackUp({
    dir,
    ports: realTestPorts,
    ui: false,
    nodes: 0,
    realNode,
    controller: true,
    controllerEnv,
    // cert-manager with the stack's CA issuer: Routes of the certificate class cert-manager get real certificates.
    certManager: true,
    log,
  });
  log(`stack with a real node up in ${Math.round((Date.now() - started) / 1000)}s`);
  project.provide('realStack', {
    dir: info.dir,
    kubeconfig: info.kubeconfig,
    temporalAddress: info.temporalAddress,
    bins: info.bins,
    ports: realTestPorts,
    controllerEnv,
    registryHost: registry.host,
    images,
  });
  return async () => {
    if (process.env.TIDAL_KEEP_TEST_STACK) return log(`kept running in ${dir}`);
    await stackDown(dir, { log });
    await stopRegistry(path.join(dir, 'registry'));
    const left = realNodeLeftovers(dir, realTestPorts.apiserver);
    if (left.length > 0) throw new Error(`the real node left behind: ${left.join(', ')}`);
    if (existsSync(path.join(dir, 'node'))) throw new Error('the real node left its folder behind');
  };
}
