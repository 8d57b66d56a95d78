// What the benchmarks measure with (ready.ts, scale.ts, floor.ts and the others): progress lines, CPU and memory of
// the stack's processes (from /proc), percentiles, the controller's Prometheus counters, and the history events and
// reconcile passes of a Service's workflows (from Temporal).
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import type { Client } from '@temporalio/client';
import { flagValues, ProcessTable } from '../dev/processes.js';
import { defaultHeapGrowingPercent } from '../workers/heap-growth.js';

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Environment knobs: a number, or a comma-separated list. */
export const envNumber = (name: string, fallback: number): number => Number(process.env[name] ?? fallback);
export const envList = (name: string, fallback: string): string[] =>
  (process.env[name] ?? fallback)
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');

/** A benchmark's progress lines on stderr, each stamped with the seconds since it started; `elapsed()` reads them. */
export interface Progress {
  (line: string): void;
  elapsed(): number;
}

/** Progress lines tagged `[<tag>   12s]`, the seconds padded to `width`. */
export function progressLog(tag: string, width = 4): Progress {
  const started = performance.now();
  const elapsed = () => (performance.now() - started) / 1000;
  return Object.assign((line: string) => console.error(`[${tag} ${elapsed().toFixed(0).padStart(width)}s] ${line}`), { elapsed });
}

// ── percentiles and formatting ──────────────────────────────────────────────────────────────────────────────────

/** Nearest-rank percentile; a missing value (a Service never Ready) counts as Infinity, so it shows. */
export function percentile(values: number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = values.map((v) => (Number.isNaN(v) ? Infinity : v)).sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

export interface Spread {
  p50: number;
  p95: number;
  max: number;
  n: number;
}

export function spread(values: number[]): Spread {
  return { p50: percentile(values, 50), p95: percentile(values, 95), max: percentile(values, 100), n: values.length };
}

export function median(values: number[]): number {
  return percentile(values, 50);
}

/** Milliseconds as `123 ms` or `4.56 s`; `—` when unknown, `never` for a Service that did not get there. */
export function fmtMs(ms: number): string {
  if (Number.isNaN(ms)) return '—';
  if (ms === Infinity) return 'never';
  return Math.abs(ms) < 1000 ? `${ms.toFixed(0)} ms` : `${(ms / 1000).toFixed(2)} s`;
}

export const fmt = (v: number | undefined, digits = 2): string => (v === undefined || Number.isNaN(v) ? '—' : v.toFixed(digits));

/** A table with left-aligned first column and right-aligned others. */
export function table(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('   ');
  return [line(header), widths.map((w) => '─'.repeat(w)).join('   '), ...rows.map(line)].join('\n');
}

// ── CPU and memory from /proc ───────────────────────────────────────────────────────────────────────────────────

const CLOCK_TICKS = 100; // USER_HZ on Linux

interface ProcStat {
  pid: number;
  ppid: number;
  /** utime + stime + cutime + cstime, seconds: the process's own CPU and that of its children it has reaped. */
  cpu: number;
}

function readStat(pid: number): ProcStat | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = text.slice(text.lastIndexOf(') ') + 2).split(' ');
    const ticks = Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14]);
    return { pid, ppid: Number(f[1]), cpu: ticks / CLOCK_TICKS };
  } catch {
    return undefined; // gone meanwhile
  }
}

function allStats(): ProcStat[] {
  const out: ProcStat[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const st = readStat(Number(entry));
    if (st) out.push(st);
  }
  return out;
}

/** The pid and all its live descendants (PostgreSQL runs one process per connection; tsx may spawn esbuild). */
function tree(root: number, stats: ProcStat[]): ProcStat[] {
  const children = new Map<number, ProcStat[]>();
  for (const st of stats) {
    const siblings = children.get(st.ppid);
    if (siblings) siblings.push(st);
    else children.set(st.ppid, [st]);
  }
  const out: ProcStat[] = [];
  const queue = stats.filter((s) => s.pid === root);
  while (queue.length) {
    const st = queue.shift()!;
    out.push(st);
    queue.push(...(children.get(st.pid) ?? []));
  }
  return out;
}

/** A process's resident set (`VmRSS`) or its peak since its start or the last `resetPeakRss` (`VmHWM`), in MiB. */
export function rssMiB(pid: number, field: 'VmRSS' | 'VmHWM' = 'VmRSS'): number {
  try {
    return Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]) / 1024;
  } catch {
    return NaN;
  }
}

/** Starts a process's peak RSS (`VmHWM`) over from what it holds now (Linux's `clear_refs`); false if it could not. */
export function resetPeakRss(pid: number): boolean {
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, '5');
    return true;
  } catch {
    return false; // gone meanwhile, or not ours to reset: the peak then counts from the process's start
  }
}

/** Of a process's RSS, the pages mapped from files (RSS less its anonymous pages). */
export function fileMiB(pid: number): number {
  try {
    const rollup = readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8');
    const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(rollup)?.[1] ?? NaN);
    return (kb('Rss') - kb('Anonymous')) / 1024;
  } catch {
    return NaN;
  }
}

/** Proportional set size of a process tree: shared memory (PostgreSQL's buffers) counted once, not per process. */
function treePssMiB(members: ProcStat[]): number {
  let kb = 0;
  for (const st of members) {
    try {
      kb += Number(/^Pss:\s+(\d+) kB/m.exec(readFileSync(`/proc/${st.pid}/smaps_rollup`, 'utf8'))?.[1] ?? 0);
    } catch {
      /* gone meanwhile */
    }
  }
  return kb / 1024;
}

/** The processes a benchmark measures: Tidal's controller, the Temporal server and, with TIDAL_TEMPORAL=postgres, its database. */
export type Role = 'tidal' | 'temporal' | 'postgres';
const processName: Record<Role, string> = { tidal: 'tidal-controller', temporal: 'temporal', postgres: 'postgres' };

export interface CpuSample {
  at: number;
  tidal: number;
  temporal: number;
  postgres: number;
  /** The Kubernetes side: API server, etcd, controller-manager, scheduler and kwok (context, not a goal). */
  kubernetes: number;
}

export interface CpuUsed {
  seconds: number;
  kubernetes: number;
  tidal: number;
  /** The Temporal server plus its PostgreSQL when there is one. */
  temporal: number;
  postgres: number;
}

export interface Memory {
  /** RSS of the controller (and of extra worker processes, summed). */
  tidal: number;
  /** RSS of the Temporal server. */
  temporal: number;
  /** PSS of PostgreSQL's process tree, when present. */
  postgres: number | undefined;
  /** Of `tidal` and `temporal`: the pages mapped from files (their binaries and libraries; clean, the kernel may drop them). */
  filePages: PerRole;
}

/** A figure of the controller (its processes summed) and of the Temporal server, in MiB. */
export interface PerRole {
  tidal: number;
  temporal: number;
}

const kubernetesProcesses = ['kube-apiserver', 'etcd', 'kube-controller-manager', 'kube-scheduler', 'kwok'];

export class StackProcesses {
  private readonly table: ProcessTable;

  constructor(dir: string) {
    this.table = new ProcessTable(dir);
  }

  /** Read afresh every time: a restarted controller has a new pid. */
  pid(role: Role): number | undefined {
    return this.table.running(processName[role])?.pid;
  }

  /**
   * Tidal's processes: the controller, any extra worker-only processes (`tidal-worker-<n>`, BENCH_WORKERS) and any
   * further replicas (`tidal-replica-<n>`, bench:scale's rolling restart).
   */
  tidalPids(): number[] {
    const names = [processName.tidal, ...Array.from({ length: 8 }, (_, i) => [`tidal-worker-${i + 2}`, `tidal-replica-${i + 2}`]).flat()];
    return names.flatMap((n) => this.table.running(n)?.pid ?? []);
  }

  /** Which Temporal this stack runs (the launcher's TIDAL_TEMPORAL, passed through untouched). */
  temporalDescription(): string {
    const env = process.env.TIDAL_TEMPORAL;
    if (this.pid('postgres') !== undefined) return `Temporal server on PostgreSQL (TIDAL_TEMPORAL=${env ?? ''}; CPU and memory include PostgreSQL)`;
    return env ? `TIDAL_TEMPORAL=${env}` : '`temporal server start-dev` (SQLite)';
  }

  /** The controller's malloc, read from what its process has mapped (dev/allocator.ts chooses it). */
  allocatorDescription(): string {
    const pid = this.pid('tidal');
    if (pid === undefined) return 'unknown (no controller)';
    try {
      return readFileSync(`/proc/${pid}/maps`, 'utf8').includes('libjemalloc')
        ? 'jemalloc'
        : "glibc's (TIDAL_CONTROLLER_MALLOC=glibc or no libjemalloc2)";
    } catch {
      return 'unknown';
    }
  }

  /**
   * The garbage collectors' settings the processes run with, read from their environments and command lines: the
   * controller's V8 heap growing percent (`TIDAL_HEAP_GROWING_PERCENT`, the controller's default when unset) and node
   * flags (its own, workers/node-flags.ts, and `TIDAL_CONTROLLER_NODE_ARGS`), the Temporal server's `GOGC` /
   * `GOMEMLIMIT` and the dev server's SQLite pragmas (`--sqlite-pragma`).
   */
  runtimeDescription(): string {
    const read = (role: Role, file: 'environ' | 'cmdline'): string[] => {
      const pid = this.pid(role);
      try {
        return pid === undefined ? [] : readFileSync(`/proc/${pid}/${file}`, 'utf8').split('\0');
      } catch {
        return [];
      }
    };
    const env = (role: Role) => new Map(read(role, 'environ').map((e) => [e.slice(0, e.indexOf('=')), e.slice(e.indexOf('=') + 1)]));
    const [tidal, temporal] = [env('tidal'), env('temporal')];
    const flags = read('tidal', 'cmdline').filter((a) => a.startsWith('--'));
    const percent = tidal.get('TIDAL_HEAP_GROWING_PERCENT') || String(defaultHeapGrowingPercent);
    const controller = `controller V8 heap growing ${percent === '0' ? "V8's own" : `${percent} %`}${flags.length ? ` (node ${flags.join(' ')})` : ''}`;
    const limit = temporal.get('GOMEMLIMIT');
    const pragmas = flagValues(read('temporal', 'cmdline'), '--sqlite-pragma');
    return `${controller}; Temporal GOGC ${temporal.get('GOGC') ?? '100 (unset)'}${limit ? `, GOMEMLIMIT ${limit}` : ''}${pragmas.length ? `, SQLite ${pragmas.join(' ')}` : ''}`;
  }

  cpu(): CpuSample {
    const stats = allStats();
    // Each process counts once, for the first role whose tree holds it (PostgreSQL may run under the Temporal server).
    const claimed = new Set<number>();
    const sum = (role: Role) => {
      let cpu = 0;
      for (const pid of role === 'tidal' ? this.tidalPids() : [this.pid(role) ?? -1]) {
        for (const st of tree(pid, stats)) {
          if (claimed.has(st.pid)) continue;
          claimed.add(st.pid);
          cpu += st.cpu;
        }
      }
      return cpu;
    };
    const postgres = sum('postgres');
    return { at: performance.now(), postgres, temporal: sum('temporal'), tidal: sum('tidal'), kubernetes: this.cpuOf(kubernetesProcesses) };
  }

  /** CPU seconds so far of the named stack processes (`kube-apiserver`, `etcd`, …), children not included. */
  cpuOf(names: string[]): number {
    return names.reduce((a, n) => a + (readStat(this.table.running(n)?.pid ?? -1)?.cpu ?? 0), 0);
  }

  /** Starts the processes' peak RSS (`VmHWM`) over from what they hold now (Linux's `clear_refs`). */
  resetPeaks(): void {
    for (const pid of [...this.tidalPids(), this.pid('temporal')]) if (pid !== undefined) resetPeakRss(pid);
  }

  /**
   * `read` of the controller (summed over its processes when there are extra workers) and of the Temporal server; NaN
   * for a role with no process.
   */
  private perRole(read: (pid: number) => number): PerRole {
    const tidal = this.tidalPids();
    const temporal = this.pid('temporal');
    return {
      tidal: tidal.length === 0 ? NaN : tidal.reduce((a, pid) => a + read(pid), 0),
      temporal: temporal === undefined ? NaN : read(temporal),
    };
  }

  /** The highest RSS since `resetPeaks` (or the processes' start); with extra worker processes, each one's own, summed. */
  peaks(): PerRole {
    return this.perRole((pid) => rssMiB(pid, 'VmHWM'));
  }

  memory(): Memory {
    const postgres = this.pid('postgres');
    return {
      ...this.perRole((pid) => rssMiB(pid)),
      postgres: postgres === undefined ? undefined : treePssMiB(tree(postgres, allStats())),
      filePages: this.perRole(fileMiB),
    };
  }
}

export function cpuUsed(before: CpuSample, after: CpuSample): CpuUsed {
  const postgres = after.postgres - before.postgres;
  return {
    seconds: (after.at - before.at) / 1000,
    kubernetes: after.kubernetes - before.kubernetes,
    tidal: after.tidal - before.tidal,
    temporal: after.temporal - before.temporal + postgres,
    postgres,
  };
}

export function fmtMemory(m: Memory): string {
  const pg = m.postgres === undefined ? '' : `, PostgreSQL ${m.postgres.toFixed(0)} MiB (PSS)`;
  const file = `of which file pages ${m.filePages.tidal.toFixed(0)} and ${m.filePages.temporal.toFixed(0)}`;
  return `Tidal ${m.tidal.toFixed(0)} MiB, Temporal server ${m.temporal.toFixed(0)} MiB (${file})${pg}`;
}

// ── the controller's Prometheus counters ───────────────────────────────────────────────────────────────────────

export interface ControllerCounters {
  /** Kubernetes writes (POST, PUT, PATCH, DELETE) Tidal has made, the leader Lease's renewals aside. */
  writes: number;
  /** Kubernetes GETs and LISTs Tidal has made (watches, the Lease's, config maps' and Secrets' aside). */
  reads: number;
  /** Anything Tidal does: every API request (the Lease's aside), watch event and delivered poke. Unchanged means idle. */
  activity: number;
}

export async function controllerCounters(metricsPort: number): Promise<ControllerCounters> {
  // Only the three counters: rendering every metric (and fetching the SDK's) costs the controller CPU on every scrape.
  const names = ['tidal_kube_requests_total', 'tidal_watch_events_total', 'tidal_pokes_delivered_total'];
  const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics?${names.map((n) => `name=${n}`).join('&')}`)).text();
  let writes = 0;
  let reads = 0;
  let activity = 0;
  for (const line of text.split('\n')) {
    const m = /^(tidal_kube_requests_total|tidal_watch_events_total|tidal_pokes_delivered_total)\{([^}]*)\} (\S+)/.exec(line);
    // The leader's Lease upkeep (two small writes a second) runs whatever happens: part of idle, not of the work.
    if (!m || /resource="leases"/.test(m[2]!)) continue;
    const value = Number(m[3]);
    const write = m[1] === 'tidal_kube_requests_total' && /verb="(POST|PUT|PATCH|DELETE)"/.test(m[2]!);
    if (write) writes += value;
    // So are the health check's read of a ConfigMap (every 2 s) and the webhook's look at its certificate Secret
    // (every 10 s). Reads of those kinds are left out of activity altogether: the benchmark's Services have no pull
    // secrets, so no Service's pass reads a Secret, and passes read config from the watched store, not by GET.
    if (!write && m[1] === 'tidal_kube_requests_total' && /resource="(configmaps|secrets)"/.test(m[2]!)) continue;
    if (!write && m[1] === 'tidal_kube_requests_total') reads += value;
    activity += value;
  }
  return { writes, reads, activity };
}

/**
 * Waits until the controller has done nothing (no API request, watch event or poke) for `quietMs`, at most `maxMs`.
 * Returns how long that took; a controller that is down or never settles just ends the wait.
 */
export async function waitQuiet(metricsPort: number, quietMs = 2000, maxMs = 30_000): Promise<number> {
  const start = Date.now();
  let last = -1;
  let since = Date.now();
  while (Date.now() - start < maxMs) {
    const now = await controllerCounters(metricsPort).then(
      (c) => c.activity,
      () => -2,
    );
    if (now !== last) [last, since] = [now, Date.now()];
    else if (Date.now() - since >= quietMs) break;
    await sleep(200);
  }
  return Date.now() - start;
}

/**
 * Waits until at most `keep` workflows are running (the entity runs have ended idle, ADR 0006; the gateway
 * certificate's always runs), at most `maxMs`; returns how many still run.
 */
export async function waitRunsEnded(client: Client, keep = 1, maxMs = 300_000): Promise<number> {
  const start = Date.now();
  for (;;) {
    const { count } = await client.workflow.count("ExecutionStatus = 'Running'");
    if (count <= keep || Date.now() - start >= maxMs) return count;
    await sleep(5000);
  }
}

// ── history events and passes, from Temporal ──────────────────────────────────────────────────────────────────

/** The entity workflows one Service's create runs (ADR 0001 ids). */
export function serviceWorkflowIds(name: string, revisions = [`${name}-00001`]): string[] {
  return [
    `Service/default/${name}`,
    `Configuration/default/${name}`,
    `Route/default/${name}`,
    `Ingress/default/${name}`,
    ...revisions.map((r) => `Revision/default/${r}`),
  ];
}

export interface WorkflowCost {
  /** Reconcile passes over every run of the id (the `state` query's totalReconciles crosses continue-as-new). */
  passes: number;
  /** History events of every run: continued-as-new ones and runs that ended idle (ADR 0006) included. */
  events: number;
  runs: number;
}

/** Passes and history events of one workflow id over all its runs; zeros when it never ran. */
export async function workflowCost(client: Client, id: string): Promise<WorkflowCost> {
  try {
    const cost: WorkflowCost = { passes: 0, events: 0, runs: 0 };
    for await (const run of client.workflow.list({ query: `WorkflowId = '${id}'` })) {
      const handle = client.workflow.getHandle(id, run.runId);
      cost.runs += 1;
      cost.events += run.status.name === 'RUNNING' ? (await handle.describe()).historyLength : run.historyLength;
      // The last run of a continue-as-new chain counts the chain's passes.
      if (run.status.name !== 'CONTINUED_AS_NEW') cost.passes += (await handle.query<{ totalReconciles: number }>('state')).totalReconciles;
    }
    return cost;
  } catch {
    return { passes: 0, events: 0, runs: 0 };
  }
}

export interface ServiceCost {
  services: number;
  /** Per Service, averaged over the sample. */
  passes: number;
  events: number;
  passesByKind: Record<string, number>;
  eventsByKind: Record<string, number>;
  /** Runs past the first of each workflow (continued-as-new, or started again after ending idle). */
  laterRuns: number;
}

/** Passes and history events per Service, averaged over up to `sampleSize` of `names` spread over the batch. */
export async function serviceCost(client: Client, names: string[], sampleSize = 20): Promise<ServiceCost> {
  const step = Math.max(1, names.length / sampleSize);
  const sample = [...new Set(Array.from({ length: Math.min(sampleSize, names.length) }, (_, i) => names[Math.floor(i * step)]!))];
  const passesByKind: Record<string, number> = {};
  const eventsByKind: Record<string, number> = {};
  let laterRuns = 0;
  for (const name of sample) {
    const costs = await Promise.all(serviceWorkflowIds(name).map(async (id) => [id.split('/')[0]!, await workflowCost(client, id)] as const));
    for (const [kind, c] of costs) {
      passesByKind[kind] = (passesByKind[kind] ?? 0) + c.passes / sample.length;
      eventsByKind[kind] = (eventsByKind[kind] ?? 0) + c.events / sample.length;
      laterRuns += Math.max(0, c.runs - 1);
    }
  }
  const total = (o: Record<string, number>) => Object.values(o).reduce((a, b) => a + b, 0);
  return { services: sample.length, passes: total(passesByKind), events: total(eventsByKind), passesByKind, eventsByKind, laterRuns };
}

export function fmtByKind(o: Record<string, number>, digits = 1): string {
  return Object.entries(o)
    .map(([k, v]) => `${k} ${v.toFixed(digits)}`)
    .join(', ');
}
