// `npm run bench:ready`: what one Service costs Tidal's control plane and how fast it gets Ready, on the local stack
// with the Kubernetes side unthrottled (dev/stack.ts `unthrottled`). Phases (BENCH_PHASES, default 1,50,200,rate,passes):
// - a number N: N Services created at once (N = 1: BENCH_SINGLES single Services one after another);
// - rate: Services arriving at R per second for BENCH_RATE_SECONDS, R rising through BENCH_RATES until p95 create →
//   Ready exceeds 2 s or the backlog grows;
// - passes: reconcile passes per object for one Service create and one image update.
// BENCH_WORKERS=n adds n − 1 worker-only Tidal processes (throughput with more workers; CPU and memory summed).
// BENCH_API_LATENCY_MS=d puts d ms each way between Tidal and the API server (bench/latency-proxy.ts): a remote API
// server in front of an etcd that syncs to disk, where requests wait on latency rather than on these two cores.
// Per phase: head (create → Deployment), tail (last pod Ready → Service Ready), create → Revision/Service Ready, CPU
// seconds of the controller and the Temporal server, API writes, passes and history events per Service, memory.
// Times are when this process's watches saw the events arrive. It asserts nothing.
import path from 'node:path';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { Client, Connection } from '@temporalio/client';
import { Resources } from '../api/kinds.js';
import { KubeClient } from '../kube/client.js';
import { repoRoot, stackDown, stackUp, startController, type StackInfo } from '../dev/stack.js';
import { ProcessTable } from '../dev/processes.js';
import { makeLogger } from '../workers/logger.js';
import {
  controllerCounters,
  cpuUsed,
  envList,
  envNumber,
  fmt,
  fmtByKind,
  fmtMemory,
  type PerRole,
  fmtMs,
  percentile,
  serviceCost,
  serviceWorkflowIds,
  sleep,
  spread,
  StackProcesses,
  table,
  waitQuiet,
  waitRunsEnded,
  workflowCost,
  type CpuSample,
  type CpuUsed,
  type Memory,
  type ServiceCost,
  progressLog,
} from './measure.js';
import { startLatencyProxy } from './latency-proxy.js';
import { benchPorts } from './ports.js';
import { createService } from './services.js';
import { ServiceTimeline, type ServiceIntervals } from './timeline.js';

const ports = benchPorts(14);
const dir = path.join(repoRoot, '.tidal', 'bench');
const phases = envList('BENCH_PHASES', '1,50,200,rate,passes');
const singles = envNumber('BENCH_SINGLES', 10);
const workers = envNumber('BENCH_WORKERS', 1);
const apiLatencyMs = envNumber('BENCH_API_LATENCY_MS', 0);
// From 1/s: on a small machine the answer is a few Services a second, and it should still be a number.
const rates = envList('BENCH_RATES', '1,2,3,4,5,10,20,30,40,50,60').map(Number);
const rateWindowSeconds = envNumber('BENCH_RATE_SECONDS', 15);
const idleSeconds = envNumber('BENCH_IDLE_SECONDS', 10);
/** After the phases: how long to wait for entity runs to end idle (TIDAL_IDLE_SECONDS, 60) and V8 to shrink its heap. */
const settleSeconds = envNumber('BENCH_SETTLE_SECONDS', 120);
/** After the warm-up Service's runs have ended: how long before memory idle is read. */
const idleSettleSeconds = envNumber('BENCH_IDLE_SETTLE_SECONDS', 15);
/** The steady rate's bound on p95 create → Service Ready. */
const rateBoundMs = 2000;
/** kwok Nodes are free to make big: fewer of them means less lease and status traffic on the API server. */
const podsPerNode = 500;
const podsPerService = 2; // hakn's min-scale
const progress = progressLog('bench');

interface PhaseResult {
  label: string;
  names: string[];
  intervals: ServiceIntervals[];
  /** First create → last Service Ready, per group created at once (one for a batch, one per single). */
  allReadyMs: number[];
  /** How long a group was waited for. */
  timeoutMs: number;
  cpu: CpuUsed;
  writes: number;
  /** GETs and LISTs per Service. */
  reads: number;
  cost: ServiceCost;
  memory: Memory;
  /** The highest RSS through the phase (its start to its memory reading). */
  peak: PerRole;
  resident: number;
}

interface RateResult {
  rate: number;
  created: number;
  serviceReady: number[];
  backlogEarly: number;
  backlogLate: number;
  cpu: CpuUsed;
  passed: boolean;
  why: string;
}

class Bench {
  resident = 0;
  idleRate = { tidal: 0, temporal: 0 };
  readonly phases: PhaseResult[] = [];
  readonly rateResults: RateResult[] = [];
  baseline: Memory | undefined;
  /** Memory once the runs have ended idle, the Services at rest; and the entity runs still running then. */
  atRest: { memory: Memory; resident: number; running: number } | undefined;

  constructor(
    readonly kube: KubeClient,
    readonly client: Client,
    readonly timeline: ServiceTimeline,
    readonly procs: StackProcesses,
  ) {}

  async create(name: string, image?: string): Promise<void> {
    this.timeline.created.set(name, performance.now());
    this.resident += 1;
    await createService(this.kube, name, image);
  }

  cpu(): CpuSample {
    return this.procs.cpu();
  }

  async requests(): Promise<{ writes: number; reads: number }> {
    return controllerCounters(ports.controllerMetrics);
  }

  /** CPU net of what the processes burn idle over the same time (the Temporal server is never quite idle). */
  net(cpu: CpuUsed): number {
    return cpu.tidal + cpu.temporal - (this.idleRate.tidal + this.idleRate.temporal) * cpu.seconds;
  }

  /** One Service first, so the measured phases see a warm controller; then the idle CPU rate of a quiet stack. */
  async warmUp(): Promise<void> {
    progress('warm-up Service');
    await this.create('warmup');
    await this.timeline.waitUntil(() => this.timeline.serviceReady('warmup') !== undefined, 120_000);
    await waitQuiet(ports.controllerMetrics, 3000, 30_000);
    progress(`idle CPU over ${idleSeconds} s`);
    const before = this.cpu();
    await sleep(idleSeconds * 1000);
    const idle = cpuUsed(before, this.cpu());
    this.idleRate = { tidal: idle.tidal / idle.seconds, temporal: idle.temporal / idle.seconds };
    const warm = this.procs.memory();
    console.log(
      `idle CPU (1 resident Service): Tidal ${fmt(this.idleRate.tidal, 3)} + Temporal ${fmt(this.idleRate.temporal, 3)} CPU-s/s; memory: ${fmtMemory(warm)}`,
    );
    // Idle as between bursts: the warm-up Service's runs ended (ADR 0006) and start-up's garbage given back (the
    // reading above comes ~15 s after the warm-up, while the controller still holds what its start allocated).
    progress('waiting for the warm-up runs to end idle');
    const running = await waitRunsEnded(this.client, 1, 180_000);
    await sleep(idleSettleSeconds * 1000);
    this.baseline = this.procs.memory();
    console.log(`memory idle at rest (1 resident Service, ${running} workflows running): ${fmtMemory(this.baseline)}`);
  }

  /** Creates each group at once, waits for it to be Ready and for Tidal to go quiet, then the next group. */
  async phase(label: string, groups: string[][]): Promise<PhaseResult> {
    const names = groups.flat();
    const timeoutMs = 60_000 + 600 * Math.max(...groups.map((g) => g.length));
    const cpuBefore = this.cpu();
    const before = await this.requests();
    this.procs.resetPeaks();
    const allReadyMs: number[] = [];
    for (const group of groups) {
      const t0 = performance.now();
      await Promise.all(group.map((n) => this.create(n)));
      const ok = await this.timeline.waitUntil(() => group.every((n) => this.timeline.serviceReady(n) !== undefined), timeoutMs);
      if (!ok) progress(`${label}: not all Ready after ${timeoutMs / 1000} s; going on`);
      allReadyMs.push(ok ? Math.max(...group.map((n) => this.timeline.serviceReady(n)!)) - t0 : Infinity);
      await waitQuiet(ports.controllerMetrics);
    }
    const cpu = cpuUsed(cpuBefore, this.cpu());
    const after = await this.requests();
    const writes = (after.writes - before.writes) / names.length;
    const reads = (after.reads - before.reads) / names.length;
    progress(`${label}: sampling passes and history`);
    const cost = await serviceCost(this.client, names);
    const result: PhaseResult = {
      label,
      names,
      intervals: names.map((n) => this.timeline.intervals(n)),
      allReadyMs,
      timeoutMs,
      cpu,
      writes,
      reads,
      cost,
      memory: this.procs.memory(),
      peak: this.procs.peaks(),
      resident: this.resident,
    };
    this.phases.push(result);
    this.print(result, groups.length);
    return result;
  }

  print(r: PhaseResult, groups: number): void {
    const n = r.names.length;
    const ready = r.intervals.filter((i) => !Number.isNaN(i.serviceReady)).length;
    const title =
      groups > 1
        ? `N = 1, ${groups} Services one after another (each once Tidal is quiet again)`
        : r.allReadyMs[0] === Infinity
          ? `N = ${n} at once: not all Ready within ${fmtMs(r.timeoutMs)} (the phase's limit)`
          : `N = ${n} at once: all Ready in ${fmtMs(r.allReadyMs[0]!)} (${fmt(n / (r.allReadyMs[0]! / 1000), 1)} Services/s)`;
    console.log(`\n── ${title}; ${ready} of ${n} Ready`);
    const row = (what: string, pick: (i: ServiceIntervals) => number) => {
      const s = spread(r.intervals.map(pick));
      return [what, fmtMs(s.p50), fmtMs(s.p95), fmtMs(s.max)];
    };
    console.log(
      table(
        ['per Service', 'p50', 'p95', 'max'],
        [
          row('head: create → Deployment seen', (i) => i.head),
          row('Deployment → last pod Ready (Kubernetes, kwok)', (i) => i.podsReady),
          row('tail: last pod Ready → Service Ready', (i) => i.tail),
          row('  pod Ready → Revision Ready (Revision pass)', (i) => i.tailRevision),
          row('  → Service Ready (Service pass)', (i) => i.tailService),
          row('  (pod Ready → Deployment available: Kubernetes)', (i) => i.tailKubernetes),
          row('create → Revision Ready', (i) => i.revisionReady),
          row('create → Service Ready', (i) => i.serviceReady),
        ],
      ),
    );
    const perService = (v: number) => fmt(v / n, 3);
    console.log(
      `CPU s per Service: Tidal ${perService(r.cpu.tidal)} + Temporal ${perService(r.cpu.temporal)} = ${perService(r.cpu.tidal + r.cpu.temporal)}` +
        ` (net of idle ${perService(this.net(r.cpu))}; ${fmt(r.cpu.seconds, 1)} s measured); Kubernetes side ${perService(r.cpu.kubernetes)}`,
    );
    console.log(`API writes per Service: ${fmt(r.writes, 1)}; reads (GET, LIST): ${fmt(r.reads, 1)}`);
    console.log(`passes per Service: ${fmt(r.cost.passes, 1)} (${fmtByKind(r.cost.passesByKind)}) [${r.cost.services} sampled]`);
    console.log(
      `history events per Service: ${fmt(r.cost.events, 0)} (${fmtByKind(r.cost.eventsByKind, 0)})` +
        (r.cost.laterRuns ? `, ${r.cost.laterRuns} later runs included (continued-as-new or after an idle end)` : ', one run each'),
    );
    console.log(
      `memory after: ${fmtMemory(r.memory)} with ${r.resident} resident Services; peak RSS in the phase: Tidal ${fmt(r.peak.tidal, 0)}, Temporal ${fmt(r.peak.temporal, 0)} MiB`,
    );
  }

  /** Waits for the entity runs to end idle, then reads memory: what the resident Services cost at rest. */
  async settle(): Promise<void> {
    progress(`waiting ${settleSeconds} s for the entity runs to end idle`);
    const samples: string[] = [];
    for (let t = 15; t <= settleSeconds; t += 15) {
      await sleep(15_000);
      const m = this.procs.memory();
      samples.push(`${t} s: ${fmt(m.tidal, 0)} + ${fmt(m.temporal, 0)}`);
    }
    const running = await waitRunsEnded(this.client, 1, 0);
    this.atRest = { memory: this.procs.memory(), resident: this.resident, running };
    console.log(`\nmemory while settling (Tidal + Temporal MiB): ${samples.join(', ')}`);
    console.log(`memory at rest: ${fmtMemory(this.atRest.memory)} with ${this.resident} resident Services, ${running} workflows running`);
  }

  /** Services arriving at `rate` per second for the window; passes when p95 create → Ready ≤ 2 s and the backlog holds. */
  async steadyRate(rate: number): Promise<RateResult> {
    const count = Math.round(rate * rateWindowSeconds);
    const names = Array.from({ length: count }, (_, i) => `r${rate}-${i}`);
    progress(`rate ${rate}/s: ${count} Services over ${rateWindowSeconds} s`);
    const cpuBefore = this.cpu();
    const backlog: number[] = [];
    let sent = 0;
    const sample = setInterval(() => backlog.push(names.slice(0, sent).filter((n) => this.timeline.serviceReady(n) === undefined).length), 1000);
    const t0 = performance.now();
    const creates: Promise<void>[] = [];
    const failures: unknown[] = [];
    for (const [i, name] of names.entries()) {
      const due = t0 + (i * 1000) / rate;
      if (due > performance.now()) await sleep(due - performance.now());
      creates.push(this.create(name).catch((err: unknown) => void failures.push(err)));
      sent += 1;
    }
    clearInterval(sample);
    await Promise.all(creates);
    // Whatever is left drains before the next rate starts (bounded): the next rate must start from a quiet stack.
    const drained = await this.timeline.waitUntil(() => names.every((n) => this.timeline.serviceReady(n) !== undefined), 60_000);
    await waitQuiet(ports.controllerMetrics);
    const cpu = cpuUsed(cpuBefore, this.cpu());
    const serviceReady = names.map((n) => this.timeline.intervals(n).serviceReady);
    const third = Math.max(1, Math.floor(backlog.length / 3));
    const mean = (xs: number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : 0);
    const backlogEarly = mean(backlog.slice(third - 1, third + 2));
    const backlogLate = mean(backlog.slice(-3));
    const p95 = percentile(serviceReady, 95);
    // Growing: over the last two thirds of the window more than one second's arrivals piled up.
    const why = failures.length
      ? `${failures.length} creates failed`
      : p95 > rateBoundMs
        ? p95 === Infinity
          ? 'over 5% not Ready 60 s after the window'
          : `p95 ${fmtMs(p95)} > 2 s`
        : !drained
          ? 'not all Ready 60 s after the window'
          : backlogLate - backlogEarly > rate
            ? `backlog grew ${fmt(backlogEarly, 0)} → ${fmt(backlogLate, 0)}`
            : '';
    const result: RateResult = { rate, created: count, serviceReady, backlogEarly, backlogLate, cpu, passed: why === '', why };
    this.rateResults.push(result);
    return result;
  }

  async rateSearch(): Promise<void> {
    for (const rate of rates) {
      const r = await this.steadyRate(rate);
      progress(`rate ${rate}/s: ${r.passed ? 'holds' : `fails (${r.why})`}`);
      if (!r.passed) break;
    }
    console.log(
      `\n── Steady arrivals, ${rateWindowSeconds} s per rate (a rate holds when p95 create → Service Ready ≤ 2 s and the backlog does not grow)`,
    );
    console.log(
      table(
        ['Services/s', 'created', 'p50', 'p95', 'max', 'backlog ⅓ → end', 'CPU s/Service', 'holds'],
        this.rateResults.map((r) => {
          const s = spread(r.serviceReady);
          return [
            String(r.rate),
            String(r.created),
            fmtMs(s.p50),
            fmtMs(s.p95),
            fmtMs(s.max),
            `${fmt(r.backlogEarly, 0)} → ${fmt(r.backlogLate, 0)}`,
            `${fmt((r.cpu.tidal + r.cpu.temporal) / r.created, 3)} (${fmt(r.cpu.tidal / r.created, 3)} + ${fmt(r.cpu.temporal / r.created, 3)})`,
            r.passed ? 'yes' : `no: ${r.why}`,
          ];
        }),
      ),
    );
    const highest = this.highestRate();
    console.log(`highest steady rate: ${highest ? `${highest} Services/s` : `none: the lowest tried, ${rates[0]}/s, does not hold`}`);
  }

  highestRate(): number | undefined {
    return this.rateResults.filter((r) => r.passed).at(-1)?.rate;
  }

  /** Passes per object for one Service create and one image update (fewer passes, none lost). */
  async passes(): Promise<void> {
    const name = 'passes';
    progress('passes: one create, one image update');
    await this.create(name);
    await this.timeline.waitUntil(() => this.timeline.serviceReady(name) !== undefined, 120_000);
    await waitQuiet(ports.controllerMetrics, 3000);
    const costs = async (revisions: string[]) =>
      Object.fromEntries(
        await Promise.all(
          serviceWorkflowIds(name, revisions).map(async (id) => {
            const [kind, , obj] = id.split('/') as [string, string, string];
            return [kind === 'Revision' ? obj : kind, await workflowCost(this.client, id)] as const;
          }),
        ),
      );
    const created = await costs([`${name}-00001`]);
    const t0 = performance.now();
    await this.kube.mergePatch(Resources.Service, 'default', name, {
      spec: { template: { spec: { containers: [{ image: 'nginx:1.28', ports: [{ containerPort: 80 }] }] } } },
    });
    await this.timeline.waitUntil(() => this.timeline.serviceReady(name, `${name}-00002`) !== undefined, 120_000);
    const updateMs = (this.timeline.serviceReady(name, `${name}-00002`) ?? NaN) - t0;
    await waitQuiet(ports.controllerMetrics, 3000);
    const updated = await costs([`${name}-00001`, `${name}-00002`]);
    const total = (o: Record<string, number>) => Object.values(o).reduce((a, b) => a + b, 0);
    const createdPasses = Object.fromEntries(Object.entries(created).map(([k, c]) => [k, c.passes]));
    const updatePasses = Object.fromEntries(Object.entries(updated).map(([k, c]) => [k, c.passes - (created[k]?.passes ?? 0)]));
    console.log('\n── Reconcile passes');
    console.log(`one Service create: ${JSON.stringify(createdPasses)} (total ${total(createdPasses)})`);
    console.log(`one image update:   ${JSON.stringify(updatePasses)} (total ${total(updatePasses)}); update → Service Ready ${fmtMs(updateMs)}`);
    console.log(
      `history events per pass: ${Object.entries(updated)
        .map(([k, c]) => `${k} ${fmt(c.events / Math.max(1, c.passes), 1)}`)
        .join(', ')}`,
    );
  }

  /** The memory and CPU goals next to what this run measured. */
  summary(temporal: string): void {
    const single = this.phases.find((p) => p.label === '1');
    const batches = this.phases.filter((p) => p.label !== '1');
    const largest = batches.at(-1);
    const at200 = batches.find((p) => p.label === '200') ?? largest;
    const n = (p: PhaseResult | undefined) => (p ? `N=${p.label}` : 'no burst phase run');
    const pair = (p: PhaseResult | undefined, pick: (i: ServiceIntervals) => number) =>
      p ? `${fmtMs(percentile(p.intervals.map(pick), 50))} / ${fmtMs(percentile(p.intervals.map(pick), 95))}` : '—';
    const cpuOf = (p: PhaseResult | undefined) =>
      p
        ? `${fmt((p.cpu.tidal + p.cpu.temporal) / p.names.length, 3)} (${fmt(p.cpu.tidal / p.names.length, 3)} + ${fmt(p.cpu.temporal / p.names.length, 3)})`
        : '—';
    // Memory growth between the first and the last phase: both after load, so V8's one-time heap growth is out.
    const first = this.phases[0];
    const growth =
      first && largest && largest.resident > first.resident ? (largest.memory.tidal - first.memory.tidal) / (largest.resident - first.resident) : NaN;
    const temporalGrowth =
      first && largest && largest.resident > first.resident
        ? (largest.memory.temporal - first.memory.temporal) / (largest.resident - first.resident)
        : NaN;
    const rest = this.atRest;
    const restGrowth =
      rest && this.baseline && rest.resident > 1
        ? {
            tidal: (rest.memory.tidal - this.baseline.tidal) / (rest.resident - 1),
            temporal: (rest.memory.temporal - this.baseline.temporal) / (rest.resident - 1),
          }
        : undefined;
    console.log(`\n── Summary (Temporal: ${temporal})`);
    console.log(
      table(
        ['figure', 'goal', 'measured'],
        [
          [`CPU s per Service, Tidal + Temporal (${n(at200)})`, '≤ 0.3', cpuOf(at200)],
          ['CPU s per Service, Tidal + Temporal (N=1)', '≤ 0.3', cpuOf(single)],
          ['head p50 / p95 (N=1)', '≤ 100 / 300 ms', pair(single, (i) => i.head)],
          ['tail p50 / p95 (N=1)', '≤ 100 / 300 ms', pair(single, (i) => i.tail)],
          ['create → Service Ready p50 / p95 (N=1)', '—', pair(single, (i) => i.serviceReady)],
          [
            `all Ready (${n(at200)} at once)`,
            '≤ 15 s (N=200)',
            at200 ? (at200.allReadyMs[0] === Infinity ? `> ${fmtMs(at200.timeoutMs)}` : fmtMs(at200.allReadyMs[0]!)) : '—',
          ],
          [
            'highest steady rate, p95 create → Ready ≤ 2 s',
            '≥ 20 Services/s',
            this.rateResults.length ? (this.highestRate() ? `${this.highestRate()} Services/s` : `none (${rates[0]}/s fails)`) : '—',
          ],
          [
            'Tidal / Temporal RSS idle at rest (1 resident Service)',
            '—',
            this.baseline ? `${fmt(this.baseline.tidal, 0)} / ${fmt(this.baseline.temporal, 0)} MiB` : '—',
          ],
          [`Tidal RSS right after ${n(at200)} (${at200?.resident ?? 0} resident)`, '≤ 150 MiB', at200 ? `${fmt(at200.memory.tidal, 0)} MiB` : '—'],
          [`Temporal RSS right after ${n(at200)}`, '≤ 150 MiB', at200 ? `${fmt(at200.memory.temporal, 0)} MiB` : '—'],
          [`Tidal / Temporal peak RSS through ${n(at200)}`, '—', at200 ? `${fmt(at200.peak.tidal, 0)} / ${fmt(at200.peak.temporal, 0)} MiB` : '—'],
          [
            `  of the RSS right after: file pages (binaries), Tidal / Temporal`,
            '—',
            at200 ? `${fmt(at200.memory.filePages.tidal, 0)} / ${fmt(at200.memory.filePages.temporal, 0)} MiB` : '—',
          ],
          [
            `Tidal / Temporal RSS at rest (${rest?.resident ?? 0} resident, ${rest?.running ?? 0} runs running)`,
            '≤ 150 / 150 MiB',
            rest ? `${fmt(rest.memory.tidal, 0)} / ${fmt(rest.memory.temporal, 0)} MiB` : '—',
          ],
          [
            `Tidal RSS growth per resident Service (${n(first)} → ${n(largest)}, right after each)`,
            '≤ 0.2 MiB',
            Number.isNaN(growth) ? '—' : `${fmt(growth, 3)} MiB (Temporal ${fmt(temporalGrowth, 3)})`,
          ],
          [
            'Tidal RSS growth per resident Service (1 Service idle → at rest)',
            '≤ 0.2 MiB',
            restGrowth === undefined ? '—' : `${fmt(restGrowth.tidal, 3)} MiB (Temporal ${fmt(restGrowth.temporal, 3)})`,
          ],
          [`API writes per Service (${n(at200)})`, '—', fmt(at200?.writes, 1)],
          [`passes per Service (${n(at200)})`, '—', fmt(at200?.cost.passes, 1)],
          [`history events per Service (${n(at200)})`, '—', fmt(at200?.cost.events, 0)],
        ],
      ),
    );
  }
}

function nodesFor(): number {
  let services = 2; // warm-up and passes
  for (const p of phases) {
    if (p === 'rate') services += rates.reduce((a, r) => a + Math.round(r * rateWindowSeconds), 0);
    else if (Number(p) === 1) services += singles;
    else if (Number(p) > 0) services += Number(p);
  }
  return Math.max(2, Math.ceil((services * podsPerService * 1.1) / podsPerNode));
}

async function main(): Promise<void> {
  for (const p of phases) if (!['rate', 'passes'].includes(p) && !(Number(p) > 0)) throw new Error(`BENCH_PHASES: unknown phase ${p}`);
  await stackDown(dir);
  rmSync(dir, { recursive: true, force: true });
  const nodes = nodesFor();
  progress(`starting the stack (unthrottled, ${nodes} kwok Nodes of ${podsPerNode} pods)`);
  const info: StackInfo = await stackUp({ dir, ports, ui: false, nodes, podsPerNode, unthrottled: true, controller: true, log: progress });
  if (apiLatencyMs > 0) {
    // Tidal (only) reaches the API server through the proxy: its controller restarts with a kubeconfig that says so.
    const proxy = await startLatencyProxy(ports.apiserver, apiLatencyMs);
    process.once('exit', proxy.close);
    const kubeconfig = path.join(dir, 'kubeconfig-latency');
    writeFileSync(kubeconfig, readFileSync(info.kubeconfig, 'utf8').replaceAll(`127.0.0.1:${ports.apiserver}`, `127.0.0.1:${proxy.port}`));
    const procs = new ProcessTable(dir);
    await procs.stop('tidal-controller');
    progress(`Tidal reaches the API server ${apiLatencyMs} ms away each way (127.0.0.1:${proxy.port})`);
    await startController(info, procs, { ports, controllerEnv: { KUBECONFIG: kubeconfig } }, progress);
  }
  // BENCH_WORKERS=n: n − 1 more Tidal processes, workers only (TIDAL_WATCHER=false), on the same task queue.
  for (let i = 2; i <= workers; i++) {
    const extraPorts = { ...ports, controllerMetrics: ports.controllerMetrics + i };
    await startController(
      info,
      new ProcessTable(dir),
      { ports: extraPorts, controllerEnv: { TIDAL_WATCHER: 'false' } },
      progress,
      `tidal-worker-${i}`,
    );
  }
  const kube = new KubeClient({ kubeconfig: info.kubeconfig, fieldManager: 'bench' });
  const timeline = new ServiceTimeline(kube, makeLogger('warn', 'bench'), { workloads: true });
  await timeline.start();
  const connection = await Connection.connect({ address: info.temporalAddress });
  const client = new Client({ connection });
  const procs = new StackProcesses(dir);
  const bench = new Bench(kube, client, timeline, procs);
  const temporal = procs.temporalDescription();
  try {
    console.log(
      `Tidal control-plane benchmark: local stack on ${nodes} kwok Nodes, Kubernetes unthrottled; Temporal: ${temporal}; Tidal processes: ${workers}; controller malloc: ${procs.allocatorDescription()}; ${procs.runtimeDescription()}`,
    );
    await bench.warmUp();
    for (const p of phases) {
      if (p === 'rate') await bench.rateSearch();
      else if (p === 'passes') await bench.passes();
      else {
        const n = Number(p);
        progress(n === 1 ? `N = 1, ${singles} times` : `N = ${n} at once`);
        const groups = n === 1 ? Array.from({ length: singles }, (_, i) => [`s-${i}`]) : [Array.from({ length: n }, (_, i) => `b${n}-${i}`)];
        await bench.phase(p, groups);
      }
    }
    if (settleSeconds > 0) await bench.settle();
    bench.summary(temporal);
    progress(`done in ${progress.elapsed().toFixed(0)} s`);
  } finally {
    await timeline.close();
    await connection.close();
    kube.close();
    // BENCH_KEEP_STACK=1: leave the stack running for a look (`npm run down`-style: stackDown(dir) stops it).
    if (process.env.BENCH_KEEP_STACK === '1') progress(`stack kept: KUBECONFIG=${info.kubeconfig}, Temporal ${info.temporalAddress}`);
    else await stackDown(dir);
  }
}

main().catch(async (err: unknown) => {
  console.error(err);
  await stackDown(dir);
  process.exit(1);
});
