// `npm run bench:run-heap`: what the workflow bundle's module instances cost each cached workflow run, for three ways
// of building the bundle — Tidal's workflow modules one by one (as the SDK bundles them from source), joined into one
// (esbuild), and joined with the SDK's own workflow modules loaded once and shared (the build: workers/build.ts).
// Each bundle is loaded into the SDK's reusable V8 context (the executor the worker runs) and BENCH_RUNS runs of
// serviceWorkflow are initialised in it as a worker initialises a new run (runtime, interceptors, the workflow
// module's import; no activation). Per bundle: the modules each run instantiates for itself (the context's module
// cache per run; the rest were loaded before any run and are shared) and the V8 heap each run holds, after full
// collections. A run's own state (its loop, promises, the SDK's activator after activations) comes on top: these are
// only the bundle's part. No stack needed; it asserts nothing.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { runInNewContext } from 'node:vm';
import { setFlagsFromString } from 'node:v8';
import { bundleWorkflows, distDir, type WorkflowBundleShape } from '../workers/build.js';
import { envNumber, table } from './measure.js';
import { loadReusableContext, newRunOptions } from './reusable-context.js';

const runs = envNumber('BENCH_RUNS', 400);

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;
const heapUsed = () => {
  gc();
  gc();
  return process.memoryUsage().heapUsed;
};

const shapes: [string, WorkflowBundleShape][] = [
  ['Tidal’s modules one by one (as from source)', { joined: false, shared: [] }],
  ['Tidal’s modules joined into one', { joined: true, shared: [] }],
  ['joined, the SDK’s workflow modules shared (the build)', {}],
];
/** One bundle shape, measured in this process: its label, the modules a run instantiates, of them Tidal's, KiB a run. */
async function measure(label: string, shape: WorkflowBundleShape): Promise<string[]> {
  // Inside the repository: the SDK's bundler resolves @temporalio/workflow from the entry's folder upwards.
  const dir = mkdtempSync(path.join(distDir, '.bench-run-heap-'));
  try {
    const code = await bundleWorkflows(dir, shape);
    const creator = await loadReusableContext().create({ code, filename: 'workflow-bundle.js' }, 5000, new Set());
    const held = [await creator.createWorkflow(newRunOptions(-1))]; // the context's first run: lazy V8 state settles
    const before = heapUsed();
    for (let i = 0; i < runs; i++) held.push(await creator.createWorkflow(newRunOptions(i)));
    const perRun = (heapUsed() - before) / runs;
    const own = [...held[1]!.activator.moduleCache.keys()];
    for (const run of held) await run.dispose(); // what the worker does when it evicts a run
    await creator.destroy();
    return [
      label,
      String(own.length),
      String(own.filter((m) => m.startsWith('./') && !m.includes('node_modules')).length),
      (perRun / 1024).toFixed(1),
    ];
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const which = process.argv[2];
if (which !== undefined) {
  // A child: one shape, its row on stdout.
  const [label, shape] = shapes[Number(which)]!;
  console.log(JSON.stringify(await measure(label, shape)));
} else {
  // Each shape in a process of its own: a destroyed context's memory is not reliably collected before the next one.
  const rows: string[][] = [];
  for (const [i, [label]] of shapes.entries()) {
    const out = execFileSync(process.execPath, [...process.execArgv, fileURLToPath(import.meta.url), String(i)], { encoding: 'utf8' });
    const row = JSON.parse(out.trim().split('\n').pop()!) as string[];
    console.error(`[run-heap] ${label}: ${row[1]} modules a run, ${row[3]} KiB a run`);
    rows.push(row);
  }
  console.log(
    `\nThe workflow bundle's module instances per workflow run (${runs} runs of serviceWorkflow initialised; V8 heap after full collections)`,
  );
  console.log(table(['bundle', 'modules a run', 'of them Tidal’s', 'heap a run (KiB)'], rows));
}
