// `npm run bench:scale`: Tidal with thousands of resident Services (kwok makes their pods cheap). Creates
// BENCH_SCALE_COUNTS Services cumulatively (default 1000,5000) on the unthrottled local stack and, at each level,
// measures a new Service's create → Ready, the CPU Tidal and the Temporal server burn per minute while nothing
// changes, their memory, and what a leader change costs: the controller killed with SIGKILL and started again
// (BENCH_SCALE_RESTARTS times), the leader of three replicas killed with SIGKILL while the other two stand by
// (BENCH_SCALE_FAILOVERS times) and a rolling restart of three replicas (BENCH_SCALE_ROLLING times), each with a
// Service's image changed, a KIngress deleted and a Deployment scaled to 0 while no leader watched — how long after
// the new leader took the Lease each converged and the control plane was idle again, and the CPU it cost — and
// BENCH_SCALE_CONFIG_EDITS more SIGKILL restarts with config-gc edited as well; then a storm of BENCH_SCALE_STORM
// changes (scale-storm.ts).
// BENCH_SCALE_KEEP=1 reuses a stack kept by an earlier run and keeps it. Aborts with a message when creation stalls.
// BENCH_SCALE_CONTROL_PLANE=upstream runs upstream Knative Serving on the same stack shape instead (its own ports and
// folder; "Upstream in Tidal's place", below). It asserts nothing.
import path from 'node:path';
import { rmSync } from 'node:fs';
import { Client, Connection } from '@temporalio/client';
import { Resources } from '../api/kinds.js';
import type { KubeObject } from '../api/meta.js';
import type { Service } from '../api/serving.js';
import { KubeClient } from '../kube/client.js';
import { ProcessTable } from '../dev/processes.js';
import { httpOk } from '../dev/probes.js';
import { replicaPorts, repoRoot, stackDown, stackUp, startController, type StackInfo, type StackOptions } from '../dev/stack.js';
import type * as UpstreamServing from '../dev/upstream-serving.js';
import type { UpstreamInstall } from '../dev/upstream-serving.js';
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
  rssMiB,
  sleep,
  StackProcesses,
  table,
  waitQuiet,
  waitRunsEnded,
  type Memory,
  progressLog,
} from './measure.js';
import { benchPorts } from './ports.js';
import { ChangeStorm, type StormResult } from './scale-storm.js';
import { changeImage, deleteIngress, editGcConfig, ingressBack, replicasBack, scaleToZero } from './service-changes.js';
import { createService } from './services.js';
import { ServiceTimeline } from './timeline.js';

/** Whose control plane runs: Tidal's, or upstream Knative Serving's (with stand-ins for the network it lacks). */
const controlPlane = process.env.BENCH_SCALE_CONTROL_PLANE === 'upstream' ? 'upstream' : 'tidal';
const ports = controlPlane === 'upstream' ? { ...benchPorts(21), webhook: 21843 } : benchPorts(15);
/** The stack's folder under .tidal/ (BENCH_SCALE_DIR): a second kept stack, of another size, beside the first. */
const dir = path.join(repoRoot, '.tidal', process.env.BENCH_SCALE_DIR ?? (controlPlane === 'upstream' ? 'bench-scale-upstream' : 'bench-scale'));
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
/** How long several quiet replicas are watched for their idle rate before a failover or a roll. */
const baselineSeconds = envNumber('BENCH_SCALE_BASELINE_SECONDS', 20);
/** After the entity runs have ended: time for V8's memory reducer to give the burst's heap back. */
const settleSeconds = envNumber('BENCH_SCALE_SETTLE_SECONDS', 60);
/** Controller restarts measured at each level (0: none, e.g. while only populating a stack kept for later runs). */
const restarts = envNumber('BENCH_SCALE_RESTARTS', 1);
/** SIGKILL restarts whose changes while down include a config-gc edit (every Service then passes), after the others. */
const configEdits = envNumber('BENCH_SCALE_CONFIG_EDITS', 1);
/** Reuse the stack a previous run kept (its Services count as resident) and leave it running at the end. */
const keep = process.env.BENCH_SCALE_KEEP === '1';
const podsPerNode = 500;
/** Names and images of this run's own, unlike any a kept stack already holds. */
const runTag = Date.now().toString(36);
const podsPerService = 2; // hakn's min-scale
const progress = progressLog('scale', 5);

interface Level {
  resident: number;
  createdCount: number;
  createSeconds: number;
  probeMs: number[];
  idle: { tidalPerMin: number; temporalPerMin: number; requestsPerMin: number; seconds: number };
  memory: Memory;
  restarts: Restart[];
  storm?: StormResult;
}

/** A leader change with changes made while no leader watched; times from the new leader's Lease acquisition. */
interface Restart {
  how: 'kill' | 'failover' | 'rolling';
  /** config-gc was edited too while no leader watched. */
  configEdited: boolean;
  /** kill: the controller's start → /readyz. */
  readyzMs: number;
  /**
   * kill: the controller's start → the Lease taken; failover: the SIGKILL → the Lease taken; rolling: the changes →
   * the Lease taken after them.
   */
  leaseMs: number;
  leaderChanges: number;
  /** The Service given a new image: Ready on its new Revision. */
  serviceReadyMs: number;
  /** The deleted KIngress: there again. */
  ingressBackMs: number;
  /** The Deployment scaled to 0: its replicas back. */
  replicasBackMs: number;
  /** Idle again: the start of the quiet stretch. */
  idleMs: number;
  tidalCpu: number;
  temporalCpu: number;
  /** The CPU from the Lease's acquisition to idle again: the leader change's own part of `tidalCpu` and `temporalCpu`. */
  fromLease: { tidal: number; temporal: number };
  rebuilt: boolean;
}

const replicaName = (i: number) => (i === 0 ? 'tidal-controller' : `tidal-replica-${i + 1}`);
/** Each replica's identity base, so the Lease's holder names the replica. */
const replicaEnv = (i: number) => ({ TIDAL_IDENTITY: `replica-${i + 1}` });
/** Rolling restarts of three replicas measured at each level, after the SIGKILL restarts. */
const rolling = envNumber('BENCH_SCALE_ROLLING', 1);
/** SIGKILLs of the leader of three replicas (two standing by) measured at each level, before the rolling restarts. */
const failovers = envNumber('BENCH_SCALE_FAILOVERS', 1);
/** Changes of the storm at each level, after the leader changes (0: none), and its writers. */
const stormChanges = envNumber('BENCH_SCALE_STORM', 1000);
const stormWriters = envNumber('BENCH_SCALE_STORM_WRITERS', 8);
/** How long after the storm's last change its objects are awaited (each new Revision's pods take the Kubernetes side ~1 s). */
const stormConvergeSeconds = envNumber('BENCH_SCALE_STORM_CONVERGE_SECONDS', 1800);

/** When each of `changeWhileDown`'s changes converged (performance time; NaN until then), polled by a restart's loop. */
class ChangesConverged {
  serviceReady = NaN;
  ingressBack = NaN;
  replicasBack = NaN;

  constructor(
    private readonly kube: KubeClient,
    private readonly timeline: ServiceTimeline,
    private readonly changes: Changes,
  ) {}

  async poll(): Promise<void> {
    const [ingress, replicas] = await Promise.all([
      Number.isNaN(this.ingressBack) && ingressBack(this.kube, 's-1'),
      Number.isNaN(this.replicasBack) && replicasBack(this.kube, this.changes.deployment, this.changes.replicas),
    ]);
    const now = performance.now();
    if (Number.isNaN(this.serviceReady)) this.serviceReady = this.timeline.serviceReadySince('s-0', this.changes.generation) ?? NaN;
    if (ingress) this.ingressBack = now;
    if (replicas) this.replicasBack = now;
  }

  get done(): boolean {
    return ![this.serviceReady, this.ingressBack, this.replicasBack].some(Number.isNaN);
  }

  /**
   * Polls every 250 ms from now until done (or `stop()`): for changes that may converge while the bench is busy
   * elsewhere — a rolling restart starts its replicas one by one before `converge` looks.
   */
  follow(): void {
    const loop = async () => {
      while (!this.done && !this.stopped) {
        await this.poll().catch(() => undefined);
        await sleep(250);
      }
    };
    void loop();
  }

  private stopped = false;

  stop(): void {
    this.stopped = true;
  }

  /** Each one's time after `from`. */
  since(from: number): { serviceReadyMs: number; ingressBackMs: number; replicasBackMs: number } {
    const after = (at: number) => Math.max(0, at - from);
    return { serviceReadyMs: after(this.serviceReady), ingressBackMs: after(this.ingressBack), replicasBackMs: after(this.replicasBack) };
  }
}

type LeaseObject = KubeObject & { spec?: { holderIdentity?: string; acquireTime?: string } };
/** Who holds a Lease and since when (wall-clock ms: the holders run on this machine, on its clock). */
interface LeaseHeld {
  holder: string;
  acquiredAt: number;
}
const leaseHeld = (l: LeaseObject | undefined): LeaseHeld => ({
  holder: l?.spec?.holderIdentity ?? '',
  acquiredAt: l?.spec?.acquireTime ? Date.parse(l.spec.acquireTime) : NaN,
});

/** What `changeWhileDown` changed, for `ChangesConverged` to follow. */
interface Changes {
  /** The generation of `s-0` its image change made. */
  generation: number;
  deployment: string;
  replicas: number;
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
  async probe(level: number, quiet: () => Promise<unknown> = () => waitQuiet(ports.controllerMetrics, 2000, 60_000)): Promise<number[]> {
    const out: number[] = [];
    for (let k = 0; k < probes; k++) {
      const name = `probe-${level}-${runTag}-${k}`;
      await this.create(name);
      await this.timeline.waitUntil(() => this.timeline.serviceReady(name) !== undefined, 120_000);
      out.push(this.timeline.intervals(name).serviceReady);
      await quiet();
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
   * CPU-s/s of each of `replicas` (their mean) and of the Temporal server while they all run and are quiet, over
   * BENCH_SCALE_BASELINE_SECONDS: the idle rate of several replicas, for the "idle again" test after a leader change
   * among them (three replicas' idle is not one process's: each reads the Lease, and Temporal serves more pollers).
   */
  async replicasIdleRate(replicas: readonly number[]): Promise<{ tidalPerReplica: number; temporal: number }> {
    const names = replicas.map(replicaName);
    const before = { at: performance.now(), tidal: this.procs.cpuOf(names), temporal: this.procs.cpu().temporal };
    await sleep(baselineSeconds * 1000);
    const secs = (performance.now() - before.at) / 1000;
    const rate = {
      tidalPerReplica: (this.procs.cpuOf(names) - before.tidal) / secs / replicas.length,
      temporal: (this.procs.cpu().temporal - before.temporal) / secs,
    };
    progress(
      `idle rate of ${replicas.length} replicas over ${secs.toFixed(0)} s: ${rate.tidalPerReplica.toFixed(3)} CPU-s/s each, ` +
        `Temporal ${rate.temporal.toFixed(3)} (one controller alone: ${this.idleRate.tidal.toFixed(3)}, ${this.idleRate.temporal.toFixed(3)})`,
    );
    return rate;
  }

  /** The leader Lease: who holds it and since when. */
  async lease(): Promise<LeaseHeld> {
    return leaseHeld(await this.kube.get<LeaseObject>(Resources.Lease, 'knative-serving', 'tidal-controller'));
  }

  /**
   * The changes made while no leader watches: a new image for `s-0` (it must be Ready having observed that generation), the
   * KIngress of `s-1` deleted (it must come back), the Deployment of `s-2`'s Revision scaled to 0 (its replicas
   * must come back); with `configEdit`, config-gc edited as well. An edit of a config map makes every reader pass, a
   * cost of the edit itself (as upstream's global resync), so those restarts are reported apart.
   */
  async changeWhileDown(round: number, configEdit = false): Promise<Changes> {
    const generation = await changeImage(this.kube, 's-0', `nginx:1.27-${runTag}-${round}`);
    await deleteIngress(this.kube, 's-1');
    const scaled = await scaleToZero(this.kube, 's-2');
    if (configEdit) await editGcConfig(this.kube);
    return { generation, ...scaled };
  }

  /**
   * After `changeWhileDown`: follows the leader that took the Lease after `after` (wall clock) until the changes have
   * converged and the control plane is idle again — no API request, watch event or poke for 5 s on any replica, and
   * the controllers' and Temporal's CPU over those 5 s within 0.1 CPU-s/s of their idle rates — and measures each
   * from the Lease's acquisition. `minQuietFrom` (performance time): the quiet stretch must last past it.
   */
  async converge(
    changes: Changes,
    after: number,
    metrics: number[],
    minQuietFrom: number,
    cpuFrom: { tidal: number; temporal: number },
    {
      following,
      notBefore = -Infinity,
      idle = this.idleRate,
    }: {
      /** The changes already followed since they were made (a roll's). */
      following?: ChangesConverged;
      /** Performance time the figures count from when it is later than the Lease (a roll's Lease handed over first). */
      notBefore?: number;
      /** CPU-s/s of the processes followed, and of Temporal, when all is quiet. */
      idle?: { tidal: number; temporal: number };
    } = {},
  ): Promise<Omit<Restart, 'how' | 'configEdited' | 'readyzMs' | 'rebuilt' | 'leaderChanges' | 'leaseMs'> & { leaseAt: number }> {
    const t0 = performance.now();
    const windowMs = 5000;
    const samples: { at: number; tidal: number; temporal: number; activity: number[] }[] = [];
    let leaseAt = NaN;
    let atLease: { tidal: number; temporal: number } | undefined;
    const converging = following ?? new ChangesConverged(this.kube, this.timeline, changes);
    let quietFrom: { at: number; tidal: number; temporal: number } | undefined;
    /** What last broke a quiet stretch, for the log: which counters moved, or whose CPU ran above its idle rate. */
    let busy = '';
    const activity = () =>
      Promise.all(
        metrics.map((m) =>
          controllerCounters(m).then(
            (c) => c.activity,
            () => NaN,
          ),
        ),
      );
    while (performance.now() - t0 < catchUpSeconds * 1000) {
      const cpu = this.procs.cpu();
      const [act, lease] = await Promise.all([activity(), Number.isNaN(leaseAt) ? this.lease() : undefined, converging.poll()]);
      if (lease && lease.acquiredAt > after) leaseAt = performance.now() - (Date.now() - lease.acquiredAt);
      // Sampled at the first look that finds it: within a tick (250 ms) of the acquisition.
      if (!Number.isNaN(leaseAt)) atLease ??= { tidal: cpu.tidal, temporal: cpu.temporal };
      samples.push({ at: cpu.at, tidal: cpu.tidal, temporal: cpu.temporal, activity: act });
      const converged = !Number.isNaN(leaseAt) && converging.done;
      const first = [...samples].reverse().find((x) => x.at <= cpu.at - windowMs);
      if (first && converged) {
        const secs = (cpu.at - first.at) / 1000;
        const moved = act.map((a, i) => a - first.activity[i]!);
        const quiet = moved.every((d) => d === 0);
        const rates = { tidal: (cpu.tidal - first.tidal) / secs, temporal: (cpu.temporal - first.temporal) / secs };
        const calm = rates.tidal <= idle.tidal + 0.1 && rates.temporal <= idle.temporal + 0.1;
        if (!(quiet && calm)) {
          quietFrom = undefined;
          busy =
            `${((cpu.at - leaseAt) / 1000).toFixed(1)} s after the Lease: activity ${moved.join('/')} ` +
            `(per controller followed), CPU-s/s Tidal ${rates.tidal.toFixed(2)} (idle ${idle.tidal.toFixed(2)}), ` +
            `Temporal ${rates.temporal.toFixed(2)} (idle ${idle.temporal.toFixed(2)})`;
        } else quietFrom ??= first;
        if (quietFrom && cpu.at >= minQuietFrom) break;
      }
      await sleep(250);
    }
    if (!quietFrom) progress(`restart: not idle within ${catchUpSeconds} s (BENCH_SCALE_CATCHUP_SECONDS)`);
    if (busy) progress(`last busy over the 5 s before ${busy}`);
    const end = quietFrom ?? this.procs.cpu();
    return {
      leaseAt,
      ...converging.since(Math.max(leaseAt, notBefore)),
      idleMs: quietFrom ? Math.max(0, quietFrom.at - Math.max(leaseAt, notBefore)) : NaN,
      tidalCpu: end.tidal - cpuFrom.tidal,
      temporalCpu: end.temporal - cpuFrom.temporal,
      fromLease: atLease ? { tidal: end.tidal - atLease.tidal, temporal: end.temporal - atLease.temporal } : { tidal: NaN, temporal: NaN },
    };
  }

  /**
   * SIGKILL the controller, make `changeWhileDown`'s changes, start it again; measure from the Lease's acquisition.
   * The new controller's CPU counts from its start (boot included), the Temporal server's from the kill.
   */
  async restart(round: number, configEdited = false): Promise<Restart> {
    const table = new ProcessTable(dir);
    const rec = table.running('tidal-controller');
    if (!rec) throw new Error('the controller is not running');
    const temporalBefore = this.procs.cpu().temporal;
    process.kill(rec.pid, 'SIGKILL');
    while (table.running('tidal-controller')) await sleep(50);
    const killedAt = Date.now();
    const changes = await this.changeWhileDown(round, configEdited);
    const t0 = performance.now();
    // The launcher rebuilds dist/ first when the sources changed since the last build (someone editing meanwhile).
    let rebuilt = false;
    // Followed from its start, not from /readyz: the replica is ready once its lists are in, which the new leader's
    // work does not wait for.
    await startController(
      this.info,
      table,
      { ports, controllerEnv: replicaEnv(0) },
      (line) => {
        if (/build/i.test(line)) rebuilt = true;
        progress(line);
      },
      'tidal-controller',
      false,
    );
    let readyzMs = NaN;
    let following = true;
    const readiness = (async () => {
      while (following && Number.isNaN(readyzMs)) {
        if (await httpOk(`http://127.0.0.1:${ports.controllerMetrics}/readyz`)) readyzMs = performance.now() - t0;
        else await sleep(100);
      }
    })();
    const { leaseAt, ...r } = await this.converge(changes, killedAt, [ports.controllerMetrics], t0 + 60_000, { tidal: 0, temporal: temporalBefore });
    following = false;
    await readiness;
    return { how: 'kill', configEdited, readyzMs, rebuilt, leaderChanges: 1, leaseMs: leaseAt - t0, ...r };
  }

  /** After a leader change of several replicas: the first slot's controller started again, `others` stopped, quiet. */
  private async backToFirstSlot(table: ProcessTable, others: readonly number[]): Promise<void> {
    await startController(this.info, table, { ports: replicaPorts(ports, 0), controllerEnv: replicaEnv(0) }, progress, replicaName(0));
    for (const i of others) {
      const rec = table.running(replicaName(i));
      if (rec) process.kill(rec.pid, 'SIGTERM');
      while (table.running(replicaName(i))) await sleep(50);
    }
    await waitQuiet(ports.controllerMetrics, 5000, 300_000);
  }

  /**
   * The leader of three replicas killed with SIGKILL, the other two standing by with their caches listed (the shipped
   * Deployment's three replicas): `changeWhileDown`'s changes are made at once, and one of the two takes the Lease when
   * the dead leader's expires. Figures from that Lease; CPU from the kill. The bench then goes on with the first
   * slot's controller alone: started again, the others stopped, and quiet.
   */
  async failover(round: number): Promise<Restart> {
    const table = new ProcessTable(dir);
    for (let i = 1; i < 3; i++)
      await startController(this.info, table, { ports: replicaPorts(ports, i), controllerEnv: replicaEnv(i) }, progress, replicaName(i));
    for (const i of [0, 1, 2]) await waitQuiet(replicaPorts(ports, i).controllerMetrics, 5000, 120_000);
    const rate = await this.replicasIdleRate([0, 1, 2]);
    const leader = table.running(replicaName(0));
    if (!leader || !(await this.lease()).holder.startsWith('replica-1_')) throw new Error(`${replicaName(0)} does not hold the Lease`);
    const followers = [1, 2];
    const cpuFrom = { tidal: this.procs.cpuOf(followers.map(replicaName)), temporal: this.procs.cpu().temporal };
    const killedAt = Date.now();
    const killedPerf = performance.now();
    process.kill(leader.pid, 'SIGKILL');
    while (table.running(replicaName(0))) await sleep(50);
    const changes = await this.changeWhileDown(round);
    const { leaseAt, ...r } = await this.converge(
      changes,
      killedAt,
      followers.map((i) => replicaPorts(ports, i).controllerMetrics),
      performance.now() + 60_000,
      cpuFrom,
      { idle: { tidal: rate.tidalPerReplica * followers.length, temporal: rate.temporal } },
    );
    await this.backToFirstSlot(table, followers);
    return { how: 'failover', configEdited: false, readyzMs: NaN, rebuilt: false, leaderChanges: 1, leaseMs: leaseAt - killedPerf, ...r };
  }

  /**
   * A rolling restart of three replicas as the shipped Deployment's rollout makes it (deploy/controller/deployment.yaml:
   * `maxSurge: 1`, `maxUnavailable: 0`): a new replica is started in a fourth slot and awaited ready, then an old one
   * gets SIGTERM (a leader hands its Lease over), and the slot it leaves takes the next new one. The old ones go
   * youngest first, as a ReplicaSet ranks its pods for deletion (the controller, started before the other two, holds
   * the Lease). `changeWhileDown`'s changes are made as the leader ends; the figures count from the Lease taken after
   * its SIGTERM, or from the changes when the Lease was handed over before them, CPU over the whole roll (three boots
   * included) and from the Lease. The bench then goes on with the first slot's controller
   * alone: started again, the others stopped, and quiet.
   */
  async rollingRestart(round: number): Promise<Restart> {
    const table = new ProcessTable(dir);
    for (let i = 1; i < 3; i++)
      await startController(this.info, table, { ports: replicaPorts(ports, i), controllerEnv: replicaEnv(i) }, progress, replicaName(i));
    for (const i of [0, 1, 2]) await waitQuiet(replicaPorts(ports, i).controllerMetrics, 5000, 120_000);
    const rate = await this.replicasIdleRate([0, 1, 2]);
    const before = this.procs.cpu();
    // The CPU of each replica the roll ends, from `before` to its end (the new processes count from their start).
    const cpuBefore = [0, 1, 2].map((i) => this.procs.cpuOf([replicaName(i)]));
    let ended = 0;
    let changes: Changes | undefined;
    let following: ChangesConverged | undefined;
    let changesPerf = NaN;
    /** When the leader the changes were made after got its SIGTERM: it hands the Lease over before it exits. */
    let leaderEndedAt = NaN;
    let leaderChanges = 0;
    let spare = 3;
    for (const i of [2, 1, 0]) {
      await startController(this.info, table, { ports: replicaPorts(ports, spare), controllerEnv: replicaEnv(spare) }, progress, replicaName(spare));
      const rec = table.running(replicaName(i));
      if (!rec) throw new Error(`${replicaName(i)} is not running`);
      const leading = (await this.lease()).holder.startsWith(`replica-${i + 1}_`);
      ended += this.procs.cpuOf([replicaName(i)]) - cpuBefore[i]!;
      const terminatedAt = Date.now();
      process.kill(rec.pid, 'SIGTERM');
      while (table.running(replicaName(i))) await sleep(50);
      spare = i;
      if (leading) {
        leaderChanges += 1;
        if (!changes) {
          leaderEndedAt = terminatedAt;
          changesPerf = performance.now();
          changes = await this.changeWhileDown(round);
          // They may converge while the roll goes on: watched from now, not from when the roll is done.
          following = new ChangesConverged(this.kube, this.timeline, changes);
          following.follow();
        }
      }
    }
    if (!changes) throw new Error('no replica held the Lease during the roll');
    // Running now: the fourth slot and the last two (the first is the spare).
    const running = [3, 2, 1];
    // The Lease taken after the leader's SIGTERM, maybe before its process exited and the changes were made: the
    // figures count from the later of the two.
    const { leaseAt, ...r } = await this.converge(
      changes,
      leaderEndedAt - 1,
      running.map((i) => replicaPorts(ports, i).controllerMetrics),
      performance.now() + 60_000,
      { tidal: -ended, temporal: before.temporal },
      { following, notBefore: changesPerf, idle: { tidal: rate.tidalPerReplica * running.length, temporal: rate.temporal } },
    );
    following?.stop();
    await this.backToFirstSlot(table, running);
    return { how: 'rolling', configEdited: false, readyzMs: NaN, rebuilt: false, leaderChanges, leaseMs: leaseAt - changesPerf, ...r };
  }

  /** A kept stack's Services: `s-<n>` up to the highest n are populated, all of them resident. */
  async adopt(): Promise<void> {
    const names = ((await this.kube.list<Service>(Resources.Service, 'default')).items ?? []).map((s) => s.metadata.name ?? '');
    this.resident = names.length;
    this.populated = names.reduce((n, name) => (/^s-\d+$/.test(name) ? Math.max(n, Number(name.slice(2)) + 1) : n), 0);
  }

  async level(target: number): Promise<void> {
    const from = Math.min(this.populated, target);
    progress(`creating ${target - from} Services (${from} → ${target}), ${concurrency} requests in flight`);
    const createSeconds = await this.populate(from, target);
    this.populated = Math.max(this.populated, target);
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
    const measured: Restart[] = [];
    for (let k = 0; k < restarts; k++) {
      progress(`controller restart ${k + 1} of ${restarts}`);
      measured.push(await this.restart(target * 100 + k));
      await waitQuiet(ports.controllerMetrics, 5000, 120_000);
    }
    for (let k = 0; k < configEdits; k++) {
      progress(`controller restart with config-gc edited ${k + 1} of ${configEdits}`);
      measured.push(await this.restart(target * 100 + restarts + rolling + k, true));
      await waitQuiet(ports.controllerMetrics, 5000, 120_000);
    }
    for (let k = 0; k < failovers; k++) {
      progress(`SIGKILL of the leader of three replicas ${k + 1} of ${failovers}`);
      measured.push(await this.failover(target * 100 + restarts + configEdits + rolling + k));
      await waitQuiet(ports.controllerMetrics, 5000, 120_000);
    }
    for (let k = 0; k < rolling; k++) {
      progress(`rolling restart of three replicas ${k + 1} of ${rolling}`);
      measured.push(await this.rollingRestart(target * 100 + restarts + k));
      await waitQuiet(ports.controllerMetrics, 5000, 120_000);
    }
    let storm: StormResult | undefined;
    if (stormChanges > 0) {
      progress(`a storm of ${stormChanges} changes by ${stormWriters} writers`);
      storm = await new ChangeStorm(this.kube, this.timeline, this.procs, {
        changes: stormChanges,
        writers: stormWriters,
        // s-0 … s-2 are the leader changes' own.
        from: 3,
        to: this.populated,
        seed: target,
        tag: runTag,
        metricsPort: ports.controllerMetrics,
        convergeSeconds: stormConvergeSeconds,
        progress,
      })
        .run()
        .catch((err: unknown) => {
          progress(`storm failed: ${err instanceof Error ? err.message : String(err)}`);
          return undefined;
        });
    }
    const lvl: Level = {
      resident: this.resident,
      createdCount: target - from,
      createSeconds,
      probeMs,
      idle,
      memory,
      restarts: measured,
      ...(storm ? { storm } : {}),
    };
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
    for (const r of l.restarts) {
      const how =
        r.how === 'kill'
          ? `SIGKILL${r.configEdited ? ', config-gc edited too,' : ''} and start again: ready ${fmtMs(r.readyzMs)}${r.rebuilt ? ' (a rebuild of dist/ included)' : ''}, Lease taken ${fmtMs(r.leaseMs)} after the start`
          : r.how === 'failover'
            ? `SIGKILL of the leader, two replicas standing by: Lease taken ${fmtMs(r.leaseMs)} after the kill`
            : `rolling restart of 3 replicas (${r.leaderChanges} leader changes): Lease taken ${fmtMs(r.leaseMs)} after the changes`;
      console.log(
        `${how}; after the Lease: the changed Service Ready ${fmtMs(r.serviceReadyMs)}, the deleted KIngress back ${fmtMs(r.ingressBackMs)}, ` +
          `the scaled-down Deployment back ${fmtMs(r.replicasBackMs)}, idle again ${fmtMs(r.idleMs)}; CPU Tidal ${fmt(r.tidalCpu, 1)} s + Temporal ${fmt(r.temporalCpu, 1)} s` +
          `${r.how === 'rolling' ? ' (the whole roll, its boots included)' : ''}, from the Lease Tidal ${fmt(r.fromLease.tidal, 1)} s + Temporal ${fmt(r.fromLease.temporal, 1)} s`,
      );
    }
    const st = l.storm;
    if (st) {
      console.log(
        `storm of ${st.changes} changes (${st.byKind.image} images, ${st.byKind.ingress} KIngresses deleted, ${st.byKind.replicas} Deployments scaled to 0) ` +
          `by ${stormWriters} writers in ${fmt(st.writeSeconds, 1)} s: last change → converged p50 ${fmtMs(st.p50)}, p95 ${fmtMs(st.p95)}, ` +
          `p99 ${fmtMs(st.p99)}, max ${fmtMs(st.max)}; all converged ${fmtMs(st.allConvergedMs)} and quiet ${fmtMs(st.quietMs)} after the last change; ` +
          `CPU Tidal ${fmt(st.tidalCpu, 1)} s + Temporal ${fmt(st.temporalCpu, 1)} s (the Kubernetes side ${fmt(st.kubernetesCpu, 1)} s)` +
          (st.unconverged.length
            ? `; NOT converged within ${stormConvergeSeconds} s (BENCH_SCALE_STORM_CONVERGE_SECONDS): ${st.unconverged.length}, ${st.unconverged.slice(0, 10).join(', ')}`
            : ''),
      );
    }
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
          'leader change: Service Ready after the Lease',
          'child back',
          'idle again',
          'CPU-s Tidal + Temporal',
          'storm: p99 last change → converged; CPU-s',
        ],
        this.levels.map((l) => [
          String(l.resident),
          fmt(l.createdCount / l.createSeconds, 1),
          fmtMs(median(l.probeMs)),
          `${fmt(l.idle.tidalPerMin, 2)} + ${fmt(l.idle.temporalPerMin, 2)}`,
          `${fmt(l.memory.tidal, 0)} / ${fmt(l.memory.temporal, 0)} MiB`,
          l.restarts.map((r) => `${fmtMs(r.serviceReadyMs)} (${r.how}${r.configEdited ? ' + config' : ''})`).join(', '),
          l.restarts.map((r) => fmtMs(Math.max(r.ingressBackMs, r.replicasBackMs))).join(', '),
          l.restarts.map((r) => fmtMs(r.idleMs)).join(', '),
          l.restarts.map((r) => `${fmt(r.tidalCpu, 1)} + ${fmt(r.temporalCpu, 1)}`).join(', '),
          l.storm ? `${fmtMs(l.storm.p99)}; ${fmt(l.storm.tidalCpu, 1)} + ${fmt(l.storm.temporalCpu, 1)}` : '—',
        ]),
      ),
    );
    if (!Number.isNaN(growth)) console.log(`Tidal RSS growth between the levels: ${fmt(growth, 3)} MiB per resident Service (goal ≤ 0.2)`);
  }
}

// ── Upstream in Tidal's place ──────────────────────────────────────────────────────────────────────────────────────
// BENCH_SCALE_CONTROL_PLANE=upstream: upstream Knative Serving (dev/build-knative.sh's build) on the same stack shape,
// with the stand-ins of UPSTREAM_KWOK_STAND_INS and two pods per Revision as hakn ships (config-autoscaler min-scale 2).
// The same population, at its pace; its idle CPU and memory; new Services one at a time; and its controller killed
// with SIGKILL and started again with the same changes made while it was down. Upstream's controller takes one Lease
// per reconciler, and a new process (a new identity) waits until the dead one's expire (config-leader-election's
// lease-duration, 60 s as shipped): times are given from the start and from the last Lease taken. Idle again: its
// work queues empty (`kn_workqueue_depth`, config-observability's Prometheus exporter) and, over 5 s, its processes'
// CPU within 0.1 CPU-s/s of their idle rate.

/** Upstream's processes measured, as far as they run (no activator on kwok). */
const upstreamRoles = ['controller', 'webhook', 'autoscaler', 'activator'] as const;
type UpstreamRole = (typeof upstreamRoles)[number];

interface UpstreamRestart {
  readyMs: number;
  /** start → the last of the controller's Leases taken by the new process. */
  leaseMs: number;
  leases: number;
  /** From the start: */
  serviceReadyMs: number;
  ingressBackMs: number;
  replicasBackMs: number;
  idleMs: number;
  /** CPU-s per process: the controller from its start, the others from the kill, to the start of the quiet stretch. */
  cpu: Record<UpstreamRole, number>;
  /** The kill → the start of the quiet stretch, s: the idle rate over it is what `cpu` would have been without a restart. */
  seconds: number;
}

class UpstreamScale {
  idleRate = 0;

  constructor(
    readonly bench: ScaleBench,
    readonly info: StackInfo,
    readonly install: UpstreamInstall,
    readonly upstream: typeof UpstreamServing,
  ) {}

  get kube(): KubeClient {
    return this.bench.kube;
  }

  pid(role: UpstreamRole): number | undefined {
    return new ProcessTable(dir).running(this.upstream.UpstreamProcesses[role])?.pid;
  }

  /** CPU-s so far of each of upstream's processes (0 for one not running). */
  cpu(): { at: number } & Record<UpstreamRole, number> {
    const procs = this.bench.procs;
    const P = this.upstream.UpstreamProcesses;
    return {
      at: performance.now(),
      controller: procs.cpuOf([P.controller]),
      webhook: procs.cpuOf([P.webhook]),
      autoscaler: procs.cpuOf([P.autoscaler]),
      activator: procs.cpuOf([P.activator]),
    };
  }

  static total(c: Record<UpstreamRole, number>): number {
    return upstreamRoles.reduce((a, r) => a + c[r], 0);
  }

  /** The controller's work queues: keys waiting, summed over its queues (NaN when its metrics do not answer). */
  async queued(): Promise<number> {
    try {
      const text = await (await fetch(`http://127.0.0.1:${ports.controllerMetrics}/metrics`)).text();
      let depth = 0;
      let seen = false;
      for (const line of text.split('\n')) {
        const m = /^kn_workqueue_depth(?:\{[^}]*\})? (\S+)/.exec(line);
        if (m) [depth, seen] = [depth + Number(m[1]), true];
      }
      return seen ? depth : NaN;
    } catch {
      return NaN;
    }
  }

  /**
   * Waits until the queues are empty and the CPU calm: within 0.1 CPU-s/s of the idle rate once it is known, before
   * that of the previous 5 s (the autoscaler's deciders tick at a rate that grows with the Revisions).
   */
  async waitQuiet(maxMs: number): Promise<void> {
    const t0 = performance.now();
    let from = this.cpu();
    let last = Infinity;
    while (performance.now() - t0 < maxMs) {
      await sleep(5000);
      const now = this.cpu();
      const rate = (UpstreamScale.total(now) - UpstreamScale.total(from)) / ((now.at - from.at) / 1000);
      if ((await this.queued()) === 0 && rate <= (this.idleRate || last) + 0.1) return;
      [from, last] = [now, rate];
    }
  }

  async idle(): Promise<{ perMin: Record<UpstreamRole, number>; seconds: number }> {
    const before = this.cpu();
    await sleep(idleSeconds * 1000);
    const after = this.cpu();
    const seconds = (after.at - before.at) / 1000;
    const perMin = Object.fromEntries(upstreamRoles.map((r) => [r, ((after[r] - before[r]) / seconds) * 60])) as Record<UpstreamRole, number>;
    this.idleRate = UpstreamScale.total(perMin) / 60;
    return { perMin, seconds };
  }

  /** The controller's Leases (one per reconciler and bucket): name → holder and acquisition (wall-clock ms). */
  async leases(): Promise<Map<string, LeaseHeld>> {
    const list = await this.kube.list<LeaseObject>(Resources.Lease, this.upstream.UPSTREAM_NAMESPACE);
    return new Map(list.items.filter((l) => (l.metadata.name ?? '').startsWith('controller.')).map((l) => [l.metadata.name ?? '', leaseHeld(l)]));
  }

  async restart(round: number): Promise<UpstreamRestart> {
    const table = new ProcessTable(dir);
    const name = this.upstream.UpstreamProcesses.controller;
    const rec = table.running(name);
    if (!rec) throw new Error("upstream's controller is not running");
    const held = await this.leases();
    const before = this.cpu();
    process.kill(rec.pid, 'SIGKILL');
    const killedAt = performance.now();
    while (table.running(name)) await sleep(50);
    const changes = await this.bench.changeWhileDown(round);
    const t0 = performance.now();
    await this.upstream.restartUpstreamController(this.info, table, this.install, progress);
    const readyMs = performance.now() - t0;

    const windowMs = 5000;
    const samples: ({ queued: number } & ReturnType<UpstreamScale['cpu']>)[] = [];
    let leaseAt = NaN;
    const converging = new ChangesConverged(this.kube, this.bench.timeline, changes);
    let quietFrom: (typeof samples)[number] | undefined;
    while (performance.now() - t0 < catchUpSeconds * 1000) {
      const cpu = this.cpu();
      const [queued, leases] = await Promise.all([this.queued(), Number.isNaN(leaseAt) ? this.leases() : undefined, converging.poll()]);
      const now = performance.now();
      if (leases && [...held].every(([n, h]) => leases.get(n) && leases.get(n)!.holder !== h.holder && leases.get(n)!.holder !== '')) {
        const last = Math.max(...[...held.keys()].map((n) => leases.get(n)!.acquiredAt));
        leaseAt = now - (Date.now() - last);
      }
      samples.push({ ...cpu, queued });
      const converged = !Number.isNaN(leaseAt) && converging.done;
      const first = [...samples].reverse().find((x) => x.at <= cpu.at - windowMs);
      if (first && converged) {
        const secs = (cpu.at - first.at) / 1000;
        const empty = samples.filter((x) => x.at >= first.at).every((x) => x.queued === 0);
        const calm = (UpstreamScale.total(cpu) - UpstreamScale.total(first)) / secs <= this.idleRate + 0.1;
        if (!(empty && calm)) quietFrom = undefined;
        else quietFrom ??= first;
        if (quietFrom) break;
      }
      await sleep(250);
    }
    if (!quietFrom) progress(`restart: not idle within ${catchUpSeconds} s (BENCH_SCALE_CATCHUP_SECONDS)`);
    const end = quietFrom ?? this.cpu();
    return {
      readyMs,
      leaseMs: leaseAt - t0,
      leases: held.size,
      ...converging.since(t0),
      idleMs: quietFrom ? Math.max(0, quietFrom.at - t0) : NaN,
      // The killed controller's CPU is gone with it: the new one's counts from its start.
      cpu: Object.fromEntries(upstreamRoles.map((r) => [r, r === 'controller' ? end[r] : end[r] - before[r]])) as Record<UpstreamRole, number>,
      seconds: (end.at - killedAt) / 1000,
    };
  }

  async level(target: number): Promise<void> {
    const bench = this.bench;
    const from = Math.min(bench.populated, target);
    progress(`creating ${target - from} Services (${from} → ${target}), ${concurrency} requests in flight`);
    const createSeconds = await bench.populate(from, target);
    bench.populated = Math.max(bench.populated, target);
    progress(`all ${target} Ready after ${createSeconds.toFixed(0)} s; waiting for upstream to go quiet`);
    await this.waitQuiet(300_000);
    await sleep(settleSeconds * 1000);
    progress(`idle CPU over ${idleSeconds} s`);
    const idle = await this.idle();
    const memory = upstreamRoles.flatMap((r) => {
      const pid = this.pid(r);
      return pid === undefined ? [] : [`${r} ${fmt(rssMiB(pid), 0)}`];
    });
    progress(`${probes} new Services, one at a time`);
    const probeMs = await bench.probe(target, () => this.waitQuiet(60_000));
    const measured: UpstreamRestart[] = [];
    for (let k = 0; k < restarts; k++) {
      progress(`controller restart ${k + 1} of ${restarts}`);
      measured.push(await this.restart(target * 100 + k));
      await this.waitQuiet(120_000);
    }
    const created = target - from;
    const lines = [
      `\n── ${bench.resident} resident Services (upstream)`,
      `created ${created} (${concurrency} requests in flight): all Ready in ${fmt(createSeconds, 1)} s (${fmt(created / createSeconds, 1)} Services/s)`,
      `new Service create → Ready: median ${fmtMs(median(probeMs))} (${probeMs.map(fmtMs).join(', ')})`,
      `idle over ${fmt(idle.seconds, 0)} s: ${upstreamRoles.map((r) => `${r} ${fmt(idle.perMin[r], 2)}`).join(' + ')} CPU-s per minute`,
      `memory (RSS, MiB): ${memory.join(', ')}`,
      ...measured.map(
        (r) =>
          `SIGKILL and start again: ready ${fmtMs(r.readyMs)}, its ${r.leases} Leases taken ${fmtMs(r.leaseMs)} after the start; after the start: ` +
          `the changed Service Ready ${fmtMs(r.serviceReadyMs)}, the deleted KIngress back ${fmtMs(r.ingressBackMs)}, the scaled-down Deployment back ` +
          `${fmtMs(r.replicasBackMs)}, idle again ${fmtMs(r.idleMs)}; after the Leases: ${[
            r.serviceReadyMs,
            r.ingressBackMs,
            r.replicasBackMs,
            r.idleMs,
          ]
            .map((ms) => fmtMs(Math.max(0, ms - r.leaseMs)))
            .join(', ')}; CPU ${fmt(UpstreamScale.total(r.cpu), 1)} s (${upstreamRoles.map((x) => `${x} ${fmt(r.cpu[x], 1)}`).join(' + ')}), ` +
          `${fmt(UpstreamScale.total(r.cpu) - this.idleRate * r.seconds, 1)} s net of the idle rate over its ${fmt(r.seconds, 0)} s`,
      ),
    ];
    for (const l of lines) console.log(l);
  }
}

/** The run's stack — a fresh one, or the one an earlier run kept — its client and the Services' timeline. */
async function benchStack(what: string, opts: Partial<StackOptions>) {
  if (!keep) {
    await stackDown(dir);
    rmSync(dir, { recursive: true, force: true });
  }
  const maxServices = Math.max(...counts) + probes * counts.length;
  const nodes = Math.max(2, Math.ceil((maxServices * podsPerService * 1.1) / podsPerNode));
  progress(`starting the stack${what} (unthrottled, ${nodes} kwok Nodes of ${podsPerNode} pods)`);
  const info = await stackUp({ dir, ports, ui: false, nodes, podsPerNode, unthrottled: true, controller: true, log: progress, ...opts });
  const kube = new KubeClient({ kubeconfig: info.kubeconfig, fieldManager: 'bench' });
  const timeline = new ServiceTimeline(kube, makeLogger('warn', 'bench'), { workloads: false });
  await timeline.start();
  return { info, kube, timeline, nodes };
}

/** Measures each level in turn; 1 when one aborted (its message printed), else 0. */
async function runLevels(level: (target: number) => Promise<void>): Promise<number> {
  try {
    for (const target of counts) await level(target);
    return 0;
  } catch (err) {
    console.log(`\naborted: ${err instanceof Error ? err.message : String(err)}`);
    return 1;
  }
}

/** Ends the run: the stack stops unless BENCH_SCALE_KEEP=1 keeps it. */
async function endBench(kube: KubeClient, timeline: ServiceTimeline): Promise<void> {
  progress(`done in ${progress.elapsed().toFixed(0)} s`);
  await timeline.close();
  kube.close();
  if (!keep) await stackDown(dir);
  else progress('the stack keeps running (BENCH_SCALE_KEEP=1): the next run without it stops it');
}

async function upstreamMain(): Promise<number> {
  const upstream = await import('../dev/upstream-serving.js');
  const { buildKnativeBinaries } = await import('../dev/knative-images.js');
  const knative = await buildKnativeBinaries(progress);
  const install = await upstream.upstreamInstall(knative);
  const { info, kube, timeline, nodes } = await benchStack(` with upstream Knative Serving ${knative.version}`, {
    controlPlane: 'upstream',
    config: {
      // The population Tidal's run has: hakn's two pods per Revision.
      'config-autoscaler': { 'min-scale': String(podsPerService) },
      // Its work queues' depth, read for "idle again".
      'config-observability': { 'metrics-protocol': 'prometheus' },
    },
  });
  // No Temporal here: of ScaleBench only the population and the changes are used.
  const bench = new ScaleBench(info, kube, timeline, new StackProcesses(dir), undefined as unknown as Client);
  if (keep) await bench.adopt();
  const run = new UpstreamScale(bench, info, install, upstream);
  console.log(
    `Upstream Knative Serving ${knative.version} at scale: ${counts.join(', ')} resident Services on ${nodes} kwok Nodes, Kubernetes unthrottled; ` +
      `config-autoscaler min-scale ${podsPerService}; stand-ins: ${upstream.UPSTREAM_KWOK_STAND_INS.join('; ')}`,
  );
  try {
    return await runLevels((target) => run.level(target));
  } finally {
    await endBench(kube, timeline);
  }
}

async function main(): Promise<number> {
  if (controlPlane === 'upstream') return upstreamMain();
  const { info, kube, timeline, nodes } = await benchStack('', { controllerEnv: replicaEnv(0) });
  const procs = new StackProcesses(dir);
  const temporal = procs.temporalDescription();
  const connection = await Connection.connect({ address: info.temporalAddress });
  const bench = new ScaleBench(info, kube, timeline, procs, new Client({ connection }));
  if (keep) await bench.adopt();
  console.log(
    `Tidal at scale: ${counts.join(', ')} resident Services on ${nodes} kwok Nodes, Kubernetes unthrottled; Temporal: ${temporal}; controller malloc: ${procs.allocatorDescription()}`,
  );
  try {
    return await runLevels((target) => bench.level(target));
  } finally {
    if (bench.levels.length) bench.summary(temporal);
    await connection.close();
    await endBench(kube, timeline);
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
