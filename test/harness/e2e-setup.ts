// Global setup of the e2e layer: the whole local stack on the test ports (clear of `npm run up`), started from a
// clean folder, with Tidal's controller running as a user would run it.
import path from 'node:path';
import { rmSync } from 'node:fs';
import type { TestProject } from 'vitest/node';
import { repoRoot, stackDown, stackUp, testPorts, type Binaries } from '../../dev/stack.js';

const dir = path.join(repoRoot, '.tidal', 'test');

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const log = (s: string) => console.error(`[e2e-stack] ${s}`);
  await stackDown(dir, { log });
  rmSync(dir, { recursive: true, force: true });
  const started = Date.now();
  const info = await stackUp({
    dir,
    ports: testPorts,
    ui: false,
    nodes: 2,
    controller: true,
    controllerEnv: { LOG_LEVEL: 'debug', TIDAL_RESYNC_SECONDS: '30' },
    log,
  });
  log(`stack up in ${Math.round((Date.now() - started) / 1000)}s`);
  project.provide('stack', { dir: info.dir, kubeconfig: info.kubeconfig, temporalAddress: info.temporalAddress, bins: info.bins, controllerMetricsPort: testPorts.controllerMetrics });
  return async () => {
    if (process.env.TIDAL_KEEP_TEST_STACK) return log(`kept running in ${dir}`);
    await stackDown(dir, { log });
  };
}

export interface ProvidedStack {
  dir: string;
  kubeconfig: string;
  temporalAddress: string;
  bins: Binaries;
  controllerMetricsPort: number;
}

declare module 'vitest' {
  export interface ProvidedContext {
    stack: ProvidedStack;
  }
}
