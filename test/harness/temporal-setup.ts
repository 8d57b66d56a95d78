// Global setup of the workflows layer: a real Temporal dev server (the CLI built by dev/toolchain.sh), in memory,
// on its own port, with Tidal's search attributes; and the bundle of today's workflow code, made once while the server
// starts, for every file that runs it (harness/temporal.ts bundle()). The server keeps its own history limits: a test that wants
// continue-as-new lowers the workflow's thresholds instead (`maxReconcilesPerRun`, `maxPokesPerRun`), so no other
// test is cut short by a history-size suggestion.
import { spawn, type ChildProcess, execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { WorkflowBundleWithSourceMap } from '@temporalio/worker';
import type { TestProject } from 'vitest/node';
import { ensureToolchain, SearchAttributes } from '../../dev/stack.js';

const run = promisify(execFile);
const PORT = 27333;

let server: ChildProcess | undefined;

/** The bundle of workflows/index.ts, as a worker of the workflows layer loads it. */
async function bundleWorkflows(): Promise<WorkflowBundleWithSourceMap> {
  const { bundleWorkflowCode } = await import('@temporalio/worker');
  return bundleWorkflowCode({
    workflowsPath: fileURLToPath(new URL('../../workflows/index.ts', import.meta.url)),
    logger: { log() {}, trace() {}, debug() {}, info() {}, warn() {}, error() {} },
  });
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const bundled = bundleWorkflows();
  // A failed bundle is reported below, after the server: not as an unhandled rejection meanwhile.
  bundled.catch(() => {});
  const bins = await ensureToolchain((s) => console.error(s), 'temporal');
  const address = `127.0.0.1:${PORT}`;
  server = spawn(
    bins.TEMPORAL,
    [
      'server',
      'start-dev',
      '--headless',
      '--ip',
      '127.0.0.1',
      '--port',
      String(PORT),
      '--log-level',
      'error',
      ...SearchAttributes.flatMap((a) => ['--search-attribute', `${a}=Keyword`]),
    ],
    // Kept (TIDAL_KEEP_TEMPORAL): a process group of its own, which outlives vitest's.
    { stdio: ['ignore', 'inherit', 'inherit'], detached: Boolean(process.env.TIDAL_KEEP_TEMPORAL) },
  );
  const deadline = Date.now() + 120_000;
  for (;;) {
    try {
      await run(bins.TEMPORAL, ['operator', 'cluster', 'health', '--address', address]);
      break;
    } catch (err) {
      if (Date.now() > deadline || server.exitCode !== null) throw new Error(`temporal dev server did not start: ${String(err)}`);
      await new Promise((r) => setTimeout(r, 250));
    }
  }
  project.provide('temporalAddress', address);
  project.provide('workflowBundle', await bundled);
  return async () => {
    // TIDAL_KEEP_TEMPORAL=1: the server stays up with every run the layer made (dev/replay-all.ts replays them).
    if (process.env.TIDAL_KEEP_TEMPORAL) {
      server?.unref();
      return console.error(`[workflows] Temporal kept running at ${address} (pid ${server?.pid ?? '?'})`);
    }
    server?.kill('SIGTERM');
    await new Promise((r) => server?.once('exit', r));
  };
}

declare module 'vitest' {
  export interface ProvidedContext {
    temporalAddress: string;
    workflowBundle: WorkflowBundleWithSourceMap;
  }
}
