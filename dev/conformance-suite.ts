// One compiled Go test suite run under test2json, its events logged and folded into results; and the objects
// upstream's test/config creates before a run.
import { spawn } from 'node:child_process';
import { createWriteStream, existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { parseAllDocuments } from 'yaml';
import { foldEvents, topLevel, type SuiteRun, type UnitOf } from './conformance-report.js';
import { repoRoot } from './kubectl.js';

const say = (s: string) => console.error(`[conformance] ${s}`);

/** The namespaces, config map and secret upstream's test/config creates before a run. */
export function testResources(moduleDir: string): string {
  const docs = ['cluster-resources.yaml', 'test-resources.yaml'].flatMap((f) =>
    parseAllDocuments(readFileSync(path.join(moduleDir, 'test', 'config', f), 'utf8'))
      .map((d) => d.toJSON() as Record<string, unknown> | null)
      .filter((o): o is Record<string, unknown> => o !== null),
  );
  return JSON.stringify({ apiVersion: 'v1', kind: 'List', items: docs });
}

/** A compiled suite to run: its binary, its package, and the package's folder (where `go test` would run it). */
export interface SuiteBinary {
  binary: string;
  pkg: string;
  dir: string;
  /** What a result row is (default: each top-level test). */
  unitOf?: UnitOf;
}

/** Runs one suite's binary under test2json, logging its events to `logFile`; returns its results. */
export async function runSuite(suite: string, spec: SuiteBinary, args: string[], env: NodeJS.ProcessEnv, logFile: string): Promise<SuiteRun> {
  const started = Date.now();
  const go = existsSync('/usr/local/go/bin/go') ? '/usr/local/go/bin/go' : 'go';
  const child = spawn(go, ['tool', 'test2json', '-t', '-p', spec.pkg, spec.binary, '-test.v=test2json', ...args], {
    cwd: spec.dir,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const log = createWriteStream(logFile);
  const lines: string[] = [];
  const rl = createInterface({ input: child.stdout });
  rl.on('line', (line) => {
    lines.push(line);
    log.write(`${line}\n`);
    if (!line.startsWith('{')) return;
    const e = JSON.parse(line) as { Action: string; Test?: string; Elapsed?: number };
    if (e.Test && (spec.unitOf ?? topLevel)(e.Test) === e.Test && (e.Action === 'pass' || e.Action === 'fail' || e.Action === 'skip'))
      say(`${suite} ${e.Test}: ${e.Action} (${(e.Elapsed ?? 0).toFixed(1)} s)`);
  });
  child.stderr.on('data', (b: Buffer) => log.write(b));
  const code = await new Promise<number>((resolve) => child.on('close', (c) => resolve(c ?? 1)));
  log.end();
  const { results, unfinished } = foldEvents(lines, spec.unitOf);
  const seconds = (Date.now() - started) / 1000;
  const aborted =
    unfinished.length > 0
      ? `exit code ${code}; no verdict for ${unfinished.join(', ')} (see ${path.relative(repoRoot, logFile)})`
      : results.length === 0
        ? `exit code ${code}, no test ran (see ${path.relative(repoRoot, logFile)})`
        : undefined;
  return { suite, results, seconds, ...(aborted ? { aborted } : {}) };
}
