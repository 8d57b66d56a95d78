import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

// Five layers. The unit layer is pure code and in-process fakes: its files run side by side in worker threads (the
// few that load the Temporal native addon, which is not thread-safe, in forked processes). Every other layer runs in
// forked processes, one file at a time: integration files start processes of their own, and the workflows, e2e and
// real layers share a server or a stack on fixed ports. `npm test` (dev/test.ts) runs the layers side by side, each
// in a vitest of its own.
const unitThreads = Math.max(2, availableParallelism());

// Unit files that load the Temporal native addon (@temporalio/testing, @temporalio/worker): forked processes.
const nativeUnitFiles = ['test/unit/activities/observe.test.ts', 'test/unit/workers/stack-traces.test.ts'];

export default defineConfig({
  test: {
    pool: 'forks',
    poolOptions: {
      // The unit layer's threads. Not isolated: each thread keeps one module graph for the files it runs, which share
      // no state (`npm run test:unit -- --sequence.shuffle` runs them in any order).
      threads: { maxThreads: unitThreads, minThreads: 1, isolate: false },
      forks: { maxForks: 1, minForks: 1 },
    },
    teardownTimeout: 30_000,
    projects: [
      {
        test: {
          name: 'unit',
          include: ['test/unit/**/*.test.ts'],
          exclude: nativeUnitFiles,
          pool: 'threads',
          setupFiles: ['test/harness/unit-setup.ts'],
        },
      },
      {
        test: {
          name: 'unit-native',
          include: nativeUnitFiles,
          pool: 'forks',
          setupFiles: ['test/harness/unit-setup.ts'],
        },
      },
      {
        // Real processes without a stack: tsx and node children, Debian's docker-registry, kubectl kustomize,
        // esbuild and webpack, typed ESLint over the tree, the controller image.
        test: {
          name: 'integration',
          include: ['test/integration/**/*.test.ts'],
          pool: 'forks',
          // Starting a process takes seconds on a busy machine (a tsx child compiles what it imports).
          testTimeout: 60_000,
          hookTimeout: 120_000,
        },
      },
      {
        test: {
          name: 'workflows',
          include: ['test/workflows/**/*.test.ts'],
          globalSetup: ['test/harness/temporal-setup.ts'],
          pool: 'forks',
          testTimeout: 120_000,
          hookTimeout: 180_000,
        },
      },
      {
        test: {
          name: 'e2e',
          include: ['test/e2e/**/*.test.ts'],
          exclude: ['test/e2e/real/**'],
          globalSetup: ['test/harness/e2e-setup.ts'],
          pool: 'forks',
          testTimeout: 300_000,
          hookTimeout: 300_000,
        },
      },
      {
        // Requests served for real: the stack with a real node (kubelet, containerd, runc) and Traefik, no kwok.
        test: {
          name: 'real',
          include: ['test/e2e/real/**/*.test.ts'],
          globalSetup: ['test/harness/real-setup.ts'],
          pool: 'forks',
          testTimeout: 300_000,
          hookTimeout: 300_000,
        },
      },
      {
        // An upgrade under live traffic: the previous release's three replicas rolled to this checkout's and back, on a
        // real-node stack of its own (test/harness/upgrade-setup.ts). `npm run test:upgrade`; not part of `npm test`.
        test: {
          name: 'upgrade',
          include: ['test/upgrade/**/*.test.ts'],
          globalSetup: ['test/harness/upgrade-setup.ts'],
          pool: 'forks',
          testTimeout: 900_000,
          hookTimeout: 600_000,
        },
      },
    ],
  },
});
