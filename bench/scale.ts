// `npm run bench:scale`: Tidal with thousands of resident Services (kwok makes their pods cheap). Creates
// BENCH_SCALE_COUNTS Services cumulatively (default 1000,5000) on the unthrottled local stack and, at each level,
// measures a new Service's create → Ready, the CPU Tidal and the Temporal server burn per minute while nothing
// changes, their memory, and how long a controller killed with SIGKILL takes after its restart to bring a Service
// changed while it was down to Ready and to be idle again. Aborts with a message when creation stalls.
// It asserts nothing.
import path from 'node:path';
import { rmSync } from 'node:fs';
import { Client, Connection } from '@temporalio/client';
import { Resources } from '../api/kinds.js';
import type { Service } from '../api/serving.js';
import { KubeClient } from '../kube/client.js';
import { ProcessTable } from '../dev/processes.js';
import { repoRoot, stackDown, stackUp, startController, type StackInfo } from '../dev/stack.js';
import { makeLogger } from '../workers/logger.js';
import {
  controllerCounters,
  cpuUsed,
  envList,
  envNumber,
  fmt,
  fmtMemory,
  fmtMs,
  median,
  sleep,
  StackProcesses,
  table,
  waitQuiet,
  waitRunsEnded,
  type Memory,
  progressLog,
} from './measure.js';
import { benchPorts } from './ports.js';
import { createService } from './services.js';
import { ServiceTimeline } from './timeline.js';

const ports = benchPorts(15);
const dir = path.join(repoRoot, '.tidal', 'bench-scale');
const counts = envList('BENCH_SCALE_COUNTS', '1000,5000').map(Number);
const idleSeconds = envNumber('BENCH_SCALE_IDLE_SECONDS', 60);
const probes = envNumber('BENCH_SCALE_PROBES', 3);
const concurrency = envNumber('BENCH_SCALE_CONCURRENCY', 32);
/** Created and not yet Ready at most: the levels are reached at Tidal's pace rather than as one burst. */
const backlog = envNumber('BENCH_SCALE_BACKLOG', 200);
/** Creation is abandoned when for this long no Service turned Ready and Tidal wrote nothing, or when a level takes longer. */
const stallSeconds = envNumber('BENCH_SCALE_STALL_SECONDS', 180);
const levelMinutes = envNumber('BENCH_SCALE_LEVEL_MINUTES', 120);
const catchUpSeconds = envNumber('BENCH_SCALE_CATCHUP_SECONDS', 600);
/** After the entity runs have ended: time for V8's memory reducer to give the burst's heap back. */
const settleSeconds = envNumber('BENCH_SCALE_SETTLE_SECONDS', 60);
const podsPerNode = 500;
const podsPerService = 2; // hakn's min-scale
const progress = progressLog('scale', 5);

interface Level {
  resident: number;
  createdCount: number;
  createSeconds: number;
  probeMs: number[];
  idle: { tidalPerMin: number; temporalPerMin: number; requestsPerMin: number; seconds: number };
  memory: Memory;
  restart: { readyzMs: number; serviceReadyMs: number; idleMs: number; tidalCpu: number; temporalCpu: number; rebuilt: boolean };
}

class ScaleBench {
  /** Services created, probes included. */
  resident = 0;
  /** Services `s-0` … `s-<populated - 1>` created so far. */
  populated = 0;
  /** CPU-s/s of the controller and the Temporal server on the quiet stack, for the "idle again" test. */
  idleRate = { tidal: 0, temporal: 0 };
  readonly levels: Level[] = [];

  constructor(
    readonly info: StackInfo,
    readonly kube: KubeClient,
    readonly timeline: ServiceTimeline,
    readonly procs: StackProcesses,
    readonly client: Client,
  ) {}

  async create(name: string): Promise<void> {
    this.timeline.created.set(name, performance.now());
    await createService(this.kube, name);
    this.resident += 1;
  }

  /** Creates Services `s-<from>` … `s-<to - 1>`, `concurrency` requests in flight, and waits until all are Ready. */
  async populate(from: number, to: number): Promise<number> {
    const names = Array.from({ length: to - from }, (_, i) => `s-${from + i}`);
    const t0 = performance.now();
    let next = 0;
    // Resident Services, not one burst: creation waits while `backlog` Services are created and not yet Ready.
    const waiting = () => names.slice(0, next).reduce((a, n) => a + (this.timeline.serviceReady(n) === undefined ? 1 : 0), 0);
    const worker = async () => {
      while (next < names.length) {
        if (waiting() >= backlog) {
          await sleep(250);
          continue;
        }
        await this.create(names[next++]!);
      }
    };
    const creating = Promise.all(Array.from({ length: concurrency }, worker));
    let failed: Error | undefined;
    creating.catch((err: unknown) => (failed = err instanceof Error ? err : new Error(String(err))));
    const ready = () => names.reduce((a, n) => a + (this.timeline.serviceReady(n) === undefined ? 0 : 1), 0);
    // Progress is a Service turning Ready or Tidal writing anything: with a deep backlog every Service advances a step
    // at a time and the first ones turn Ready only minutes after the creates.
    let lastProgress = '';
    let lastChange = performance.now();
    let lastReport = 0;
    for (;;) {
      if (failed) throw new Error(`creating Services failed: ${failed.message}`);
      const now = performance.now();
      const r = ready();
      if (r === names.length) break;
      if (now - lastReport > 10_000) {
        const writes = await controllerCounters(ports.controllerMetrics).then(
          (c) => c.writes,
          () => NaN,
        );
        const state = `${r} ${writes}`;
        if (state !== lastProgress) [lastProgress, lastChange] = [state, now];
        const logs = `see ${path.join(dir, 'logs')}`;
        if (now - lastChange > stallSeconds * 1000) {
          throw new Error(
            `creation stalled: for ${stallSeconds} s no Service turned Ready and Tidal wrote nothing (${r} of ${names.length} Ready, ` +
              `${next} created); ${logs} (BENCH_SCALE_STALL_SECONDS changes the limit)`,
          );
        }
        if (now - t0 > levelMinutes * 60_000) {
          throw new Error(`creation too slow: ${r} of ${names.length} Ready after ${levelMinutes} min; ${logs} (BENCH_SCALE_LEVEL_MINUTES)`);
        }
        lastReport = now;
        const s = (now - t0) / 1000;
        progress(`${from + next} created, ${from + r} Ready (${fmt(r / s, 1)} Ready/s over ${s.toFixed(0)} s)`);
      }
      await sleep(250);
    }
    await creating;
    return (performance.now() - t0) / 1000;
  }

  /** create → Ready of a new Service on the populated stack, one at a time on a quiet controller. */
  async probe(level: number): Promise<number[]> {
    const out: number[] = [];
    for (let k = 0; k < probes; k++) {
      const name = `probe-${level}-${k}`;
      await this.create(name);
      await this.timeline.waitUntil(() => this.timeline.serviceReady(name) !== undefined, 120_000);
      out.push(this.timeline.intervals(name).serviceReady);
      await waitQuiet(ports.controllerMetrics, 2000, 60_000);
    }
    return out;
  }

  async idle(): Promise<Level['idle']> {
    const before = this.procs.cpu();
    const activityBefore = (await controllerCounters(ports.controllerMetrics)).activity;
    await sleep(idleSeconds * 1000);
    const used = cpuUsed(before, this.procs.cpu());
    const activity = (await controllerCounters(ports.controllerMetrics)).activity - activityBefore;
    this.idleRate = { tidal: used.tidal / used.seconds, temporal: used.temporal / used.seconds };
    return {
      tidalPerMin: (used.tidal / used.seconds) * 60,
      temporalPerMin: (used.temporal / used.seconds) * 60,
      requestsPerMin: (activity / used.seconds) * 60,
      seconds: used.seconds,
    };
  }

  /**
   * SIGKILL the controller, change one Service's image while it is down, start it again; time (from the start) its
   * readiness, that Service Ready on its new Revision, and the control plane idle again: no API request, watch event
   * or poke for 5 s, and the controller's and Temporal's CPU over those 5 s within 0.1 CPU-s/s of their idle rates.
   */
  async restart(level: number): Promise<Level['restart']> {
    const table = new ProcessTable(dir);
    const rec = table.running('tidal-controller');
    if (!rec) throw new Error('the controller is not running');
    process.kill(rec.pid, 'SIGKILL');
    while (table.running('tidal-controller')) await sleep(50);
    const name = 's-0';
    const image = `nginx:1.27-r${level}`;
    const svc = await this.kube.get<Service>(Resources.Service, 'default', name);
    await this.kube.mergePatch(Resources.Service, 'default', name, {
      spec: { template: { spec: { containers: [{ image, ports: [{ containerPort: 80 }] }] } } },
    });
    const generation = (svc?.metadata.generation ?? 1) + 1;
    const revision = `${name}-${String(generation).padStart(5, '0')}`;
    const temporalBefore = this.procs.cpu().temporal;
    const t0 = performance.now();
    // The launcher rebuilds dist/ first when the sources changed since the last build (someone editing meanwhile).
    let rebuilt = false;
    await startController(this.info, table, { ports }, (line) => {
      if (/build/i.test(line)) rebuilt = true;
      progress(line);
    });
    const readyzMs = performance.now() - t0;
    const windowMs = 5000;
    const samples: { at: number; tidal: number; temporal: number; activity: number }[] = [];
    let serviceReadyMs = NaN;
    // The start of the quiet stretch that lasts to the end of the watch: a burst after a first lull (the controller's
    // sweep some seconds after its start, say) counts as catch-up too, so the watch goes on at least `minWatchMs`.
    let quietFrom: { at: number; tidal: number; temporal: number } | undefined;
    const minWatchMs = 60_000;
    while (performance.now() - t0 < catchUpSeconds * 1000) {
      const cpu = this.procs.cpu();
      const activity = await controllerCounters(ports.controllerMetrics).then(
        (c) => c.activity,
        () => NaN,
      );
      samples.push({ at: cpu.at, tidal: cpu.tidal, temporal: cpu.temporal, activity });
      const ready = this.timeline.serviceReady(name, revision);
      if (ready !== undefined && Number.isNaN(serviceReadyMs)) serviceReadyMs = ready - t0;
      // The newest sample at least a window old: the window is [first, now].
      const first = [...samples].reverse().find((s) => s.at <= cpu.at - windowMs);
      if (first && !Number.isNaN(serviceReadyMs)) {
        const secs = (cpu.at - first.at) / 1000;
        const quiet = first.activity === activity;
        const calm =
          (cpu.tidal - first.tidal) / secs <= this.idleRate.tidal + 0.1 && (cpu.temporal - first.temporal) / secs <= this.idleRate.temporal + 0.1;
        if (!(quiet && calm)) quietFrom = undefined;
        else quietFrom ??= first;
        if (quietFrom && cpu.at - t0 >= minWatchMs) break;
      }
      await sleep(500);
    }
    if (!quietFrom) {
      progress(`restart: not idle within ${catchUpSeconds} s (BENCH_SCALE_CATCHUP_SECONDS)`);
      const end = this.procs.cpu();
      return { readyzMs, serviceReadyMs, idleMs: NaN, tidalCpu: end.tidal, temporalCpu: end.temporal - temporalBefore, rebuilt };
    }
    // The new controller's CPU counts from its start (boot included); the Temporal server's from the kill.
    return {
      readyzMs,
      rebuilt,
      serviceReadyMs,
      idleMs: quietFrom.at - t0,
      tidalCpu: quietFrom.tidal,
      temporalCpu: quietFrom.temporal - temporalBefore,
    };
  }

  async level(target: number): Promise<void> {
    const from = this.populated;
    progress(`creating ${target - from} Services (${from} → ${target}), ${concurrency} requests in flight`);
    const createSeconds = await this.populate(from, target);
    this.populated = target;
    progress(`all ${target} Ready after ${createSeconds.toFixed(0)} s; waiting for the controller to go quiet`);
    await waitQuiet(ports.controllerMetrics, 5000, 300_000);
    // At rest: the entity runs end a minute after their last pass (ADR 0006); then V8 shrinks its heap.
    const running = await waitRunsEnded(this.client, 1, 300_000);
    progress(`${running} workflows running; ${settleSeconds} s for the heap to shrink`);
    await sleep(settleSeconds * 1000);
    progress(`idle CPU over ${idleSeconds} s`);
    const idle = await this.idle();
    const memory = this.procs.memory();
    progress(`${probes} new Services, one at a time`);
    const probeMs = await this.probe(target);
    await waitQuiet(ports.controllerMetrics, 5000, 120_000);
    progress('controller restart');
    const restart = await this.restart(target);
    const lvl: Level = { resident: this.resident, createdCount: target - from, createSeconds, probeMs, idle, memory, restart };
    this.levels.push(lvl);
    this.print(lvl);
  }

  print(l: Level): void {
    const created = l.createdCount;
    console.log(`\n── ${l.resident} resident Services`);
    console.log(
      `created ${created} (${concurrency} requests in flight): all Ready in ${fmt(l.createSeconds, 1)} s (${fmt(created / l.createSeconds, 1)} Services/s)`,
    );
    console.log(`new Service create → Ready: median ${fmtMs(median(l.probeMs))} (${l.probeMs.map(fmtMs).join(', ')})`);
    console.log(
      `idle over ${fmt(l.idle.seconds, 0)} s: Tidal ${fmt(l.idle.tidalPerMin, 2)} + Temporal ${fmt(l.idle.temporalPerMin, 2)} CPU-s per minute; ` +
        `Tidal's API requests, watch events and pokes: ${fmt(l.idle.requestsPerMin, 0)} per minute`,
    );
    console.log(`memory: ${fmtMemory(l.memory)}`);
    console.log(
      `controller restart (SIGKILL, one Service changed while down): ready ${fmtMs(l.restart.readyzMs)}${l.restart.rebuilt ? ' (a rebuild of dist/ included)' : ''}, that Service Ready ${fmtMs(l.restart.serviceReadyMs)}, ` +
        `idle again ${fmtMs(l.restart.idleMs)} after the start; catch-up CPU Tidal ${fmt(l.restart.tidalCpu, 1)} s + Temporal ${fmt(l.restart.temporalCpu, 1)} s`,
    );
  }

  summary(temporal: string): void {
    console.log(`\n── Summary (Temporal: ${temporal}; times of the restart from the controller's start)`);
    const growth =
      this.levels.length > 1
        ? (this.levels.at(-1)!.memory.tidal - this.levels[0]!.memory.tidal) / (this.levels.at(-1)!.resident - this.levels[0]!.resident)
        : NaN;
    console.log(
      table(
        [
          'resident',
          'created/s',
          'new Service Ready',
          'idle CPU-s/min Tidal + Temporal',
          'RSS Tidal / Temporal',
          'restart: ready',
          'Service Ready',
          'idle again',
        ],
        this.levels.map((l) => [
          String(l.resident),
          fmt(l.createdCount / l.createSeconds, 1),
          fmtMs(median(l.probeMs)),
          `${fmt(l.idle.tidalPerMin, 2)} + ${fmt(l.idle.temporalPerMin, 2)}`,
          `${fmt(l.memory.tidal, 0)} / ${fmt(l.memory.temporal, 0)} MiB`,
          fmtMs(l.restart.readyzMs),
          fmtMs(l.restart.serviceReadyMs),
          fmtMs(l.restart.idleMs),
        ]),
      ),
    );
    if (!Number.isNaN(growth)) console.log(`Tidal RSS growth between the levels: ${fmt(growth, 3)} MiB per resident Service (goal ≤ 0.2)`);
  }
}

async function main(): Promise<number> {
  await stackDown(dir);
  rmSync(dir, { recursive: true, force: true });
  const maxServices = Math.max(...counts) + probes * counts.length;
  const nodes = Math.max(2, Math.ceil((maxServices * podsPerService * 1.1) / podsPerNode));
  progress(`starting the stack (unthrottled, ${nodes} kwok Nodes of ${podsPerNode} pods)`);
  const info = await stackUp({ dir, ports, ui: false, nodes, podsPerNode, unthrottled: true, controller: true, log: progress });
  const kube = new KubeClient({ kubeconfig: info.kubeconfig, fieldManager: 'bench' });
  const timeline = new ServiceTimeline(kube, makeLogger('warn', 'bench'), { workloads: false });
  await timeline.start();
  const procs = new StackProcesses(dir);
  const temporal = procs.temporalDescription();
  const connection = await Connection.connect({ address: info.temporalAddress });
  const bench = new ScaleBench(info, kube, timeline, procs, new Client({ connection }));
  console.log(
    `Tidal at scale: ${counts.join(', ')} resident Services on ${nodes} kwok Nodes, Kubernetes unthrottled; Temporal: ${temporal}; controller malloc: ${procs.allocatorDescription()}`,
  );
  try {
    for (const target of counts) await bench.level(target);
    return 0;
  } catch (err) {
    console.log(`\naborted: ${err instanceof Error ? err.message : String(err)}`);
    return 1;
  } finally {
    if (bench.levels.length) bench.summary(temporal);
    progress(`done in ${progress.elapsed().toFixed(0)} s`);
    await timeline.close();
    await connection.close();
    kube.close();
    await stackDown(dir);
  }
}

main().then(
  (code) => process.exit(code),
  async (err: unknown) => {
    console.error(err);
    await stackDown(dir);
    process.exit(2);
  },
);
