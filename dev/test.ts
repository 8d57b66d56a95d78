// `npm test`: the typecheck, the lint and every vitest layer, in two lanes side by side (the layout is below, at
// `lanes`). Each step runs to its end whatever another's result, and the run fails when any step did. Each step's
// output is passed through line by line, prefixed with its lane; at the end come each step's time and, from vitest's
// JSON reports (.tidal/test-results/), the count of every layer's files and tests together, in vitest's own words
// (`.ci/run` reads that line). `npm test -- <args>` gives the arguments to every vitest run. A run cut short by a
// signal leaves its stacks to the next run's global setups, which take down what a previous run left.
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const resultsDir = path.join(repoRoot, '.tidal', 'test-results');
const bin = (name: string) => path.join(repoRoot, 'node_modules', '.bin', name);
/** `npm test -- <args>`: given to every vitest run (a reporter, `--bail`, a test name filter). */
const vitestArgs = process.argv.slice(2);

interface Step {
  name: string;
  command: string;
  args: string[];
  /** vitest's JSON report of this step, when it is a vitest run. */
  report?: string;
}

interface Lane {
  name: string;
  steps: Step[];
}

/** A vitest run of `projects`, its JSON report under .tidal/test-results/. */
function vitest(name: string, projects: string[]): Step {
  const report = path.join(resultsDir, `${name}.json`);
  return {
    name,
    command: bin('vitest'),
    args: [
      'run',
      ...projects.flatMap((p) => ['--project', p]),
      '--reporter=default',
      '--reporter=json',
      `--outputFile.json=${report}`,
      ...vitestArgs,
    ],
    report,
  };
}

const npmRun = (script: string): Step => ({ name: script, command: 'npm', args: ['run', '--silent', script] });

// Two lanes. The e2e layer is the longest, most of it waiting on durable timers, rollouts and restarts: it starts at
// once and keeps its stack to itself. The other lane runs the rest one step after another, the quick checks first,
// then the layers that keep a CPU busy, and the real layer last, whose stack then runs beside the e2e one (their
// ports differ): a step at a time leaves the e2e stack a core of its own on a 2-core machine.
const lanes: Lane[] = [
  { name: 'e2e', steps: [vitest('e2e', ['e2e'])] },
  {
    name: 'rest',
    steps: [
      vitest('unit', ['unit', 'unit-native']),
      npmRun('typecheck'),
      npmRun('lint'),
      vitest('integration', ['integration']),
      vitest('workflows', ['workflows']),
      vitest('real', ['real']),
    ],
  },
];

interface StepResult {
  lane: string;
  step: Step;
  /** The exit code, or the signal that ended the step. */
  code: number | string;
  ms: number;
}

const children = new Set<ReturnType<typeof spawn>>();

function runStep(lane: string, step: Step): Promise<StepResult> {
  const started = Date.now();
  const width = Math.max(...lanes.map((l) => l.name.length));
  const prefix = `[${lane.padEnd(width)}] `;
  console.log(`${prefix}${step.name}: ${path.basename(step.command)} ${step.args.join(' ')}`);
  return new Promise((resolve) => {
    // Its own process group: a signal to npm test reaches the step's whole tree (vitest's forks, a stack's teardown).
    const child = spawn(step.command, step.args, { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    children.add(child);
    for (const stream of [child.stdout, child.stderr]) {
      createInterface({ input: stream, crlfDelay: Infinity }).on('line', (line) => console.log(`${prefix}${line}`));
    }
    child.on('error', (err) => console.log(`${prefix}${step.name}: ${err.message}`));
    child.on('close', (code, signal) => {
      children.delete(child);
      resolve({ lane, step, code: code ?? signal ?? 'unknown', ms: Date.now() - started });
    });
  });
}

/** Set by a signal: no lane starts another step. */
let interrupted = false;

async function runLane(lane: Lane): Promise<StepResult[]> {
  const results: StepResult[] = [];
  for (const step of lane.steps) {
    if (interrupted) break;
    results.push(await runStep(lane.name, step));
  }
  return results;
}

interface VitestReport {
  numTotalTests: number;
  numPassedTests: number;
  numFailedTests: number;
  numPendingTests: number;
  numTodoTests: number;
  numTotalTestSuites: number;
  testResults: { status: string }[];
}

function readReport(file: string | undefined): VitestReport | undefined {
  if (!file || !existsSync(file)) return undefined;
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as VitestReport;
  } catch {
    return undefined;
  }
}

const duration = (ms: number) => {
  const s = Math.round(ms / 1000);
  return s >= 60 ? `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s` : `${s}s`;
};

/** vitest's own summary words: `1 failed | 2100 passed | 8 skipped (2109)`. */
function tally(counts: { failed: number; passed: number; skipped: number; todo: number }, total: number): string {
  const parts = [
    counts.failed && `${counts.failed} failed`,
    `${counts.passed} passed`,
    counts.skipped && `${counts.skipped} skipped`,
    counts.todo && `${counts.todo} todo`,
  ].filter(Boolean);
  return `${parts.join(' | ')} (${total})`;
}

async function main(): Promise<number> {
  const started = Date.now();
  rmSync(resultsDir, { recursive: true, force: true });
  mkdirSync(resultsDir, { recursive: true });
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.on(signal, () => {
      interrupted = true;
      for (const child of children) {
        try {
          if (child.pid) process.kill(-child.pid, signal);
        } catch {
          // Its group is gone already.
        }
      }
    });
  }
  const results = (await Promise.all(lanes.map(runLane))).flat();

  const tests = { failed: 0, passed: 0, skipped: 0, todo: 0 };
  const files = { failed: 0, passed: 0, skipped: 0 };
  let totalTests = 0;
  console.log(`\nnpm test: ${duration(Date.now() - started)} in ${lanes.length} lanes`);
  const laneWidth = Math.max(...results.map((r) => r.lane.length));
  const stepWidth = Math.max(...results.map((r) => r.step.name.length));
  for (const r of results) {
    const report = readReport(r.step.report);
    const outcome = r.code === 0 ? 'ok' : `failed (${typeof r.code === 'number' ? `exit ${r.code}` : r.code})`;
    let line = `  ${r.lane.padEnd(laneWidth)}  ${r.step.name.padEnd(stepWidth)}  ${duration(r.ms).padStart(6)}  ${outcome}`;
    if (r.step.report) {
      if (report) {
        tests.failed += report.numFailedTests;
        tests.passed += report.numPassedTests;
        tests.skipped += report.numPendingTests;
        tests.todo += report.numTodoTests;
        totalTests += report.numTotalTests;
        for (const f of report.testResults) {
          if (f.status === 'failed') files.failed++;
          else if (f.status === 'passed') files.passed++;
          else files.skipped++;
        }
        line += `, ${report.testResults.length} files, ${report.numTotalTests} tests`;
      } else {
        line += ', no report';
      }
    }
    console.log(line);
  }
  const failed = interrupted || results.some((r) => r.code !== 0);
  const totalFiles = files.failed + files.passed + files.skipped;
  console.log(`\n Test Files  ${tally({ ...files, todo: 0 }, totalFiles)}`);
  console.log(`      Tests  ${tally(tests, totalTests)}`);
  return failed ? 1 : 0;
}

process.exitCode = await main();
