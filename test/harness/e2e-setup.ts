// Global setup of the e2e layer: the whole local stack on the test ports (clear of `npm run up`), started from a
// clean folder, with Tidal's controller running as a user would run it.
import path from 'node:path';
import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { startRegistry, stopRegistry, type RegistryInfo } from '../../dev/registry.js';
import type { TestProject } from 'vitest/node';
import { kubectl, repoRoot, stackDown, stackUp, testPorts, type Binaries } from '../../dev/stack.js';
import { setGcArgs } from './config-gc.js';

const dir = path.join(repoRoot, '.tidal', 'test');

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const log = (s: string) => console.error(`[e2e-stack] ${s}`);
  await stackDown(dir, { log });
  await stopRegistry(path.join(dir, 'registry-public'));
  await stopRegistry(path.join(dir, 'registry-private'));
  rmSync(dir, { recursive: true, force: true });
  const started = Date.now();
  // Two real registries (Debian's docker-registry) on loopback with TLS from their own CAs: one anonymous, one
  // behind htpasswd. Tidal's controller trusts both CAs.
  mkdirSync(dir, { recursive: true });
  const publicRegistry = await startRegistry({ dir: path.join(dir, 'registry-public'), port: 25443, auth: false, tls: true });
  const privateRegistry = await startRegistry({
    dir: path.join(dir, 'registry-private'),
    port: 25444,
    auth: true,
    tls: true,
    users: { tidal: `pw-${randomBytes(12).toString('hex')}` },
  });
  const caFile = path.join(dir, 'registry-cas.pem');
  writeFileSync(caFile, `${publicRegistry.caPem ?? ''}\n${privateRegistry.caPem ?? ''}`);
  // Resync at an hour: no e2e test may pass thanks to the resync timer (every change is delivered).
  const controllerEnv = { LOG_LEVEL: 'debug', TIDAL_RESYNC_SECONDS: '3600', TIDAL_REGISTRY_CA_FILES: caFile };
  const info = await stackUp({
    dir,
    ports: testPorts,
    ui: false,
    nodes: 2,
    controller: true,
    controllerEnv,
    // A real issuer for the certificate class cert-manager.certificate.networking.knative.dev (test/e2e/cert-manager.test.ts).
    certManager: true,
    log,
  });
  // Knative's revision GC defaults, not hakn's shipped ones (deploy/config/config-gc.yaml keeps one inactive Revision):
  // several files read Revisions their Service no longer routes to. gc.test.ts and kn.test.ts set the shipped values
  // for their own Services and put these back.
  await kubectl(info, setGcArgs({}));
  // The example module operator's module (examples/module-operator, test/e2e/modules.test.ts): known, as an
  // administrator installing that operator would list it.
  await kubectl(info, [
    'patch',
    'configmap',
    'config-modules',
    '-n',
    'knative-serving',
    '--type=merge',
    '-p',
    JSON.stringify({ data: { 'sidecar-example': 'examples/module-operator' } }),
  ]);
  log(`stack up in ${Math.round((Date.now() - started) / 1000)}s`);
  project.provide('stack', {
    dir: info.dir,
    kubeconfig: info.kubeconfig,
    temporalAddress: info.temporalAddress,
    bins: info.bins,
    controllerMetricsPort: testPorts.controllerMetrics,
    controllerEnv,
    registries: { public: publicRegistry, private: privateRegistry },
  });
  return async () => {
    const record = process.env.TIDAL_RECORD_HISTORIES;
    if (record) recordHistories(info.bins.TEMPORAL, info.temporalAddress, record, log);
    if (process.env.TIDAL_KEEP_TEST_STACK) return log(`kept running in ${dir}`);
    await stackDown(dir, { log });
    await stopRegistry(publicRegistry.dir);
    await stopRegistry(privateRegistry.dir);
  };
}

/**
 * `TIDAL_RECORD_HISTORIES=<version> npm run test:e2e` records a release's replay fixtures (test/workflows/replay.test.ts)
 * into test/fixtures/histories/<version>/: the history of every workflow named by a file of the newest folder there,
 * as the e2e run left it.
 */
function recordHistories(temporal: string, address: string, version: string, log: (s: string) => void): void {
  const root = path.join(repoRoot, 'test', 'fixtures', 'histories');
  const newest = readdirSync(root, { withFileTypes: true })
    .filter((d) => d.isDirectory() && d.name !== version)
    .map((d) => d.name)
    .sort()
    .at(-1);
  const out = path.join(root, version);
  mkdirSync(out, { recursive: true });
  const named = newest ? readdirSync(path.join(root, newest)).filter((f) => f.endsWith('.json')) : [];
  for (const file of named) {
    const id = file.replace(/\.json$/, '').replace(/_/g, '/');
    try {
      const json = execFileSync(temporal, ['workflow', 'show', '-w', id, '--output', 'json', '--address', address], { maxBuffer: 64 << 20 });
      writeFileSync(path.join(out, file), json);
      log(`recorded ${id}`);
    } catch (err) {
      log(`could not record ${id}: ${String(err)}`);
    }
  }
}

export interface ProvidedStack {
  dir: string;
  kubeconfig: string;
  temporalAddress: string;
  bins: Binaries;
  controllerMetricsPort: number;
  /** The controller's environment, for tests that restart it. */
  controllerEnv: Record<string, string>;
  registries: { public: RegistryInfo; private: RegistryInfo };
}

declare module 'vitest' {
  export interface ProvidedContext {
    stack: ProvidedStack;
  }
}
