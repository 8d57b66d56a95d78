import { defineConfig } from 'vitest/config';

// Three layers. The Temporal native addon is not thread-safe, so every layer runs in forked processes, and the
// layers that share a server run their files one after another.
export default defineConfig({
  test: {
    pool: 'forks',
    fileParallelism: false,
    teardownTimeout: 30_000,
    projects: [
      {
        test: {
          name: 'unit',
          include: ['test/unit/**/*.test.ts'],
          pool: 'forks',
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
    ],
  },
});
