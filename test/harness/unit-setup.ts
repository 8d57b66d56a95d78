// Setup file of the unit layer, which is pure code and in-process fakes, its files side by side in worker threads.
// It starts no processes: every function of node:child_process that starts one throws here, so a test that needs one
// (a tsx child, a registry, kubectl, esbuild's service) fails at once and says where it belongs: test/integration/.
// In a worker thread it refuses the Temporal native addon too, which is not thread-safe: a file that loads it
// (@temporalio/testing, @temporalio/worker) is listed in vitest.config.ts to run in a forked process.
import childProcess from 'node:child_process';
import { syncBuiltinESMExports } from 'node:module';
import { isMainThread } from 'node:worker_threads';

const starters = ['spawn', 'spawnSync', 'exec', 'execSync', 'execFile', 'execFileSync', 'fork'] as const;

for (const name of starters) {
  Object.defineProperty(childProcess, name, {
    configurable: true,
    writable: true,
    value: () => {
      throw new Error(`child_process.${name}: the unit layer starts no processes; a test that needs one belongs in test/integration/`);
    },
  });
}
// ES module importers of node:child_process read its named exports: bring them in line with the object above.
syncBuiltinESMExports();

type Dlopen = typeof process.dlopen & { refusesTemporal?: true };
if (!isMainThread && !(process.dlopen as Dlopen).refusesTemporal) {
  const dlopen = process.dlopen.bind(process);
  const guarded: Dlopen = (module, filename, flags) => {
    if (filename.includes('@temporalio/core-bridge')) {
      throw new Error(`the Temporal native addon in a worker thread: list this file in vitest.config.ts's nativeUnitFiles (forked processes)`);
    }
    return flags === undefined ? dlopen(module, filename) : dlopen(module, filename, flags);
  };
  guarded.refusesTemporal = true;
  process.dlopen = guarded;
}
