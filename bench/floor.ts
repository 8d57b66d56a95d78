// `npm run bench:floor`: the Kubernetes side alone, with no control plane running — the floor under any Knative
// control plane's figures on this machine. On the same unthrottled stack as bench:ready it lets Tidal make one
// Service, takes the workload objects Tidal wrote for its Revision (its Deployment, Service and PodDisruptionBudget,
// and an HPA when its class has one) as templates and 30 more Services to write to, stops the controller, and then:
// - the cost of one write: the API server's and etcd's CPU per status write of a Knative Service (server-side apply,
//   as Tidal writes every status) and per Event created (Knative's reconcilers send eleven per Service);
// - copies of the templates created directly, each copy's objects side by side as a control plane would: N = 1
//   (BENCH_SINGLES times), 50 and 200 at once, and `rate`: copies arriving at R per second for BENCH_RATE_SECONDS, R
//   rising through BENCH_FLOOR_RATES until p95 create → last pod Ready exceeds 2 s.
// Per phase: create → Deployment seen, → last pod Ready (what a control plane must see before it can call a Service
// Ready), → Deployment available, and the Kubernetes side's CPU seconds per copy (API server, etcd,
// controller-manager, scheduler, kwok). No Knative object is written in the phases, so a control plane's own writes
// and passes come on top of every figure. It asserts nothing.
import path from 'node:path';
import { rmSync } from 'node:fs';
import { Resources, type ResourceType } from '../api/kinds.js';
import { asTemplate, instantiate, type Workload } from './workload-copies.js';
import { KubeClient } from '../kube/client.js';
import { repoRoot, stackDown, stackUp } from '../dev/stack.js';
import { ProcessTable } from '../dev/processes.js';
import { makeLogger } from '../workers/logger.js';
import {
  cpuUsed,
  envList,
  envNumber,
  fmt,
  fmtMs,
  percentile,
  sleep,
  StackProcesses,
  table,
  waitQuiet,
  type CpuSample,
  progressLog,
} from './measure.js';
import { benchPorts } from './ports.js';
import { createService } from './services.js';
import { ServiceTimeline } from './timeline.js';

const ports = benchPorts(16);
const dir = path.join(repoRoot, '.tidal', 'bench-floor');
const phases = envList('BENCH_PHASES', '1,50,200,rate');
const singles = envNumber('BENCH_SINGLES', 10);
const rates = envList('BENCH_FLOOR_RATES', '5,10,15,20,30,40').map(Number);
const rateWindowSeconds = envNumber('BENCH_RATE_SECONDS', 15);
const idleSeconds = envNumber('BENCH_IDLE_SECONDS', 10);
const rateBoundMs = 2000;
/** Writes per verb, and objects written side by side, for the cost of one write. */
const writeCount = envNumber('BENCH_FLOOR_WRITES', 600);
const writeObjects = 30;
const podsPerNode = 500;
const template = 'floortemplate';
const workloadKinds: ResourceType[] = [Resources.Deployment, Resources.KubeService, Resources.HorizontalPodAutoscaler, Resources.PodDisruptionBudget];
const progress = progressLog('floor');

interface SetTimes {
  deployment: number;
  lastPod: number;
  available: number;
}

class Floor {
  idleRate = 0;
  templates: Workload[] = [];

  constructor(
    readonly kube: KubeClient,
    readonly timeline: ServiceTimeline,
    readonly procs: StackProcesses,
  ) {}

  cpu(): CpuSample {
    return this.procs.cpu();
  }

  async takeTemplates(): Promise<void> {
    progress(`one Service through Tidal, as the template (${template})`);
    await createService(this.kube, template);
    if (!(await this.timeline.waitUntil(() => this.timeline.serviceReady(template) !== undefined, 120_000)))
      throw new Error('the template Service did not turn Ready');
    const selector = `serving.knative.dev/revision=${template}-00001`;
    for (const type of workloadKinds) {
      const { items } = await this.kube.list(type, 'default', { labelSelector: selector });
      // Which of them a Revision has depends on its autoscaling class and config (no HPA with the default class).
      if (items.length > 1) throw new Error(`expected at most one ${type.kind} of ${template}-00001, found ${items.length}`);
      if (items[0]) this.templates.push(asTemplate(items[0], type));
      else if (type === Resources.Deployment) throw new Error(`no Deployment of ${template}-00001`);
    }
    await this.writeCostObjects();
    progress(`templates: ${this.templates.map((t) => `${t.type.kind} ${t.obj.metadata.name ?? ''}`).join(', ')}; stopping Tidal's controller`);
    await new ProcessTable(dir).stop('tidal-controller');
    await sleep(2000);
    const before = this.cpu();
    await sleep(idleSeconds * 1000);
    const idle = cpuUsed(before, this.cpu());
    this.idleRate = idle.kubernetes / idle.seconds;
    console.log(`Kubernetes side idle (no control plane): ${fmt(this.idleRate, 3)} CPU-s/s`);
    await this.writeCost();
  }

  /** Services made through Tidal (while it runs: the admission webhook answers) whose status writeCost() rewrites. */
  async writeCostObjects(): Promise<void> {
    progress(`${writeObjects} Services through Tidal for the cost of a write`);
    await Promise.all(this.writeNames.map((n) => createService(this.kube, n)));
    await this.timeline.waitUntil(() => this.writeNames.every((n) => this.timeline.serviceReady(n) !== undefined), 120_000);
    await waitQuiet(ports.controllerMetrics, 3000, 30_000);
  }

  readonly writeNames = Array.from({ length: writeObjects }, (_, i) => `w-${i}`);

  /**
   * The API server's and etcd's CPU per write, with no control plane running: a Knative Service's status written by
   * server-side apply (as Tidal writes every status) and an Event created (Knative's reconcilers send eleven per
   * Service), writeCount of each, writeObjects side by side. Each status write changes the status, so none is a no-op.
   */
  async writeCost(): Promise<void> {
    const servers = ['kube-apiserver', 'etcd'];
    const idle0 = this.procs.cpuOf(servers);
    const idleT0 = performance.now();
    await sleep(5000);
    const idleRate = (this.procs.cpuOf(servers) - idle0) / ((performance.now() - idleT0) / 1000);
    const measure = async (what: string, write: (name: string, i: number) => Promise<unknown>) => {
      const before = this.procs.cpuOf(servers);
      const t0 = performance.now();
      for (let i = 0; i < writeCount; i += writeObjects) await Promise.all(this.writeNames.map((n, j) => write(n, i + j)));
      const cpu = this.procs.cpuOf(servers) - before - idleRate * ((performance.now() - t0) / 1000);
      console.log(
        `  ${what}: ${fmt((cpu / writeCount) * 1000, 2)} ms of API server + etcd CPU per write (net of their idle rate; ${writeCount} writes, ${writeObjects} side by side)`,
      );
    };
    console.log('The cost of one write, no control plane running:');
    const status = (i: number) => ({
      observedGeneration: 1,
      conditions: ['ConfigurationsReady', 'Ready', 'RoutesReady'].map((type) => ({
        type,
        status: i % 2 ? 'True' : 'Unknown',
        ...(i % 2 ? {} : { reason: 'Waiting' }),
        lastTransitionTime: new Date(Date.UTC(2026, 0, 1) + i * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z'),
      })),
    });
    for (const round of [1, 2]) {
      await measure(`a Service's status by server-side apply (round ${round})`, (name, i) =>
        this.kube.apply(
          Resources.Service,
          {
            apiVersion: 'serving.knative.dev/v1',
            kind: 'Service',
            metadata: { name, namespace: 'default' },
            status: status(i + round * writeCount),
          } as never,
          'status',
        ),
      );
      await measure(`an Event created (round ${round})`, (name, i) =>
        this.kube.create(Resources.Event, {
          apiVersion: 'v1',
          kind: 'Event',
          metadata: { generateName: `${name}.`, namespace: 'default' },
          involvedObject: { apiVersion: 'serving.knative.dev/v1', kind: 'Service', name, namespace: 'default' },
          reason: 'Created',
          message: `Created Configuration "${name}" (${i})`,
          type: 'Normal',
          source: { component: 'service-controller' },
        } as never),
      );
    }
  }

  /** Creates one set: its objects side by side (when it was sent goes to the timeline, as bench:ready's creates). */
  async createSet(name: string): Promise<void> {
    this.timeline.created.set(name, performance.now());
    await Promise.all(instantiate(this.templates, template, name).map(({ type, obj }) => this.kube.create(type, obj)));
  }

  times(name: string): SetTimes {
    const revision = `${name}-00001`;
    const t0 = this.timeline.created.get(name) ?? NaN;
    const pods = [...(this.timeline.podsReady.get(revision)?.values() ?? [])];
    return {
      deployment: (this.timeline.deploymentSeen.get(revision) ?? NaN) - t0,
      lastPod: pods.length >= 2 ? Math.max(...pods) - t0 : NaN,
      available: (this.timeline.deploymentAvailable.get(revision) ?? NaN) - t0,
    };
  }

  allDone = (names: string[]) => () => names.every((n) => !Number.isNaN(this.times(n).available));

  /** Each group at once; the CPU counted from the first create until every Deployment is available and 2 s more. */
  async phase(label: string, groups: string[][]): Promise<void> {
    const before = this.cpu();
    const allReady: number[] = [];
    for (const group of groups) {
      const t0 = performance.now();
      await Promise.all(group.map((n) => this.createSet(n)));
      if (!(await this.timeline.waitUntil(this.allDone(group), 60_000 + 600 * group.length))) progress(`${label}: not all available in time`);
      allReady.push(Math.max(...group.map((n) => this.times(n).lastPod + (this.timeline.created.get(n) ?? NaN))) - t0);
      await sleep(2000);
    }
    const used = cpuUsed(before, this.cpu());
    this.report(label, groups.flat(), used.kubernetes, used.kubernetes - this.idleRate * used.seconds);
    console.log(`  all pods Ready (first create → last pod Ready of the group): ${allReady.map((ms) => fmtMs(ms)).join(', ')}`);
  }

  report(label: string, names: string[], cpu: number, net: number): void {
    const t = names.map((n) => this.times(n));
    const row = (what: string, v: number[]) => [what, fmtMs(percentile(v, 50)), fmtMs(percentile(v, 95)), fmtMs(Math.max(...v))];
    console.log(
      `\n${label}: ${names.length} sets; the Kubernetes side ${fmt(cpu / names.length, 3)} CPU-s per set (net of idle ${fmt(net / names.length, 3)})`,
    );
    console.log(
      table(
        ['interval', 'p50', 'p95', 'max'],
        [
          row(
            'create → Deployment seen',
            t.map((x) => x.deployment),
          ),
          row(
            'create → last pod Ready',
            t.map((x) => x.lastPod),
          ),
          row(
            'create → Deployment available',
            t.map((x) => x.available),
          ),
        ],
      ),
    );
  }

  /** Sets arriving at R per second for the window, R rising until p95 create → last pod Ready exceeds 2 s. */
  async rateSearch(): Promise<void> {
    let best = 0;
    for (const rate of rates) {
      const count = Math.round(rate * rateWindowSeconds);
      const names = Array.from({ length: count }, (_, i) => `r${rate}-${i}`);
      progress(`rate ${rate}/s for ${rateWindowSeconds} s`);
      const before = this.cpu();
      const t0 = performance.now();
      const creates: Promise<void>[] = [];
      for (let i = 0; i < count; i++) {
        const due = t0 + (i * 1000) / rate;
        const wait = due - performance.now();
        if (wait > 0) await sleep(wait);
        creates.push(this.createSet(names[i]!));
      }
      await Promise.all(creates);
      await this.timeline.waitUntil(this.allDone(names), 60_000);
      await sleep(2000);
      const used = cpuUsed(before, this.cpu());
      const lastPod = names.map((n) => this.times(n).lastPod);
      const p95 = percentile(lastPod, 95);
      const held = lastPod.every((v) => !Number.isNaN(v)) && p95 <= rateBoundMs;
      console.log(
        `rate ${rate}/s: ${count} sets; create → last pod Ready p50 ${fmtMs(percentile(lastPod, 50))}, p95 ${fmtMs(p95)}, max ${fmtMs(Math.max(...lastPod))}; the Kubernetes side ${fmt(used.kubernetes / count, 3)} CPU-s per set, ${fmt(used.kubernetes / used.seconds, 2)} cores; ${held ? 'held' : 'did not hold'}`,
      );
      if (!held) break;
      best = rate;
    }
    console.log(`highest steady rate with p95 create → last pod Ready ≤ 2 s: ${best} sets/s (of ${rates.join(', ')})`);
  }
}

function nodesFor(): number {
  let sets = 2 + writeObjects;
  for (const p of phases) {
    if (p === 'rate') sets += rates.reduce((a, r) => a + Math.round(r * rateWindowSeconds), 0);
    else if (Number(p) === 1) sets += singles;
    else sets += Number(p);
  }
  return Math.max(2, Math.ceil((sets * 2 * 1.1) / podsPerNode));
}

async function main(): Promise<void> {
  for (const p of phases) if (p !== 'rate' && !(Number(p) > 0)) throw new Error(`BENCH_PHASES: unknown phase ${p}`);
  await stackDown(dir);
  rmSync(dir, { recursive: true, force: true });
  const nodes = nodesFor();
  progress(`starting the stack (unthrottled, ${nodes} kwok Nodes of ${podsPerNode} pods)`);
  const info = await stackUp({ dir, ports, ui: false, nodes, podsPerNode, unthrottled: true, controller: true, log: progress });
  const kube = new KubeClient({ kubeconfig: info.kubeconfig, fieldManager: 'bench' });
  const timeline = new ServiceTimeline(kube, makeLogger('warn', 'bench'), { workloads: true });
  await timeline.start();
  const floor = new Floor(kube, timeline, new StackProcesses(dir));
  try {
    console.log(`The Kubernetes side alone: local stack on ${nodes} kwok Nodes, unthrottled; no control plane after the template`);
    await floor.takeTemplates();
    for (const p of phases) {
      if (p === 'rate') await floor.rateSearch();
      else {
        const n = Number(p);
        progress(n === 1 ? `N = 1, ${singles} times` : `N = ${n} at once`);
        await floor.phase(
          n === 1 ? `N = 1 (${singles} one after another)` : `N = ${n} at once`,
          n === 1 ? Array.from({ length: singles }, (_, i) => [`s-${i}`]) : [Array.from({ length: n }, (_, i) => `b${n}-${i}`)],
        );
      }
    }
    progress(`done in ${progress.elapsed().toFixed(0)} s`);
  } finally {
    await timeline.close();
    kube.close();
    if (process.env.BENCH_KEEP_STACK === '1') progress(`stack kept: KUBECONFIG=${info.kubeconfig}`);
    else await stackDown(dir);
  }
}

main().catch(async (err: unknown) => {
  console.error(err);
  await stackDown(dir);
  process.exit(1);
});
