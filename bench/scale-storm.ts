// bench:scale's change storm: a fixed number of changes to resident Services by concurrent writers, as users and
// other controllers make them — a new image (a spec edit: a new Revision must turn Ready), a KIngress deleted (it must
// come back) and a Deployment scaled to 0 (its replicas must come back). Each kind of change goes to its own Services
// (by name modulo 5: 0–2 spec edits, 3 KIngress deletions, 4 Deployment edits), so no change undoes another's check.
// Measured: each changed object's last change → converged (percentiles), the writers' pace, and the CPU of Tidal and
// the Temporal server from the first change until the control plane is quiet again.
import type { KubeClient } from '../kube/client.js';
import { rng } from '../test/harness/convergence.js';
import { percentile, sleep, waitQuiet, type StackProcesses } from './measure.js';
import { changeImage, deleteIngress, ingressBack, replicasBack, scaleToZero } from './service-changes.js';
import type { ServiceTimeline } from './timeline.js';

export interface StormOptions {
  /** Changes made in all. */
  changes: number;
  writers: number;
  /** Resident Services `s-<from>` … `s-<to - 1>` take the changes. */
  from: number;
  to: number;
  seed: number;
  /** Tag in the new images, unlike any a kept stack already holds. */
  tag: string;
  metricsPort: number;
  /** Give up waiting for convergence after this long past the last change. */
  convergeSeconds: number;
  progress: (line: string) => void;
}

export interface StormResult {
  changes: number;
  byKind: Record<ChangeKind, number>;
  /** The first change → the last, s. */
  writeSeconds: number;
  /** Last change of each changed object → converged, ms. */
  p50: number;
  p95: number;
  p99: number;
  max: number;
  /** The last change → everything converged, and → the control plane quiet again, ms. */
  allConvergedMs: number;
  quietMs: number;
  unconverged: string[];
  tidalCpu: number;
  temporalCpu: number;
  /** The API server, etcd, controller-manager, scheduler and kwok over the same stretch: the pods' side of the storm. */
  kubernetesCpu: number;
}

type ChangeKind = 'image' | 'ingress' | 'replicas';

/** What a target must show again, and when it was last changed. */
interface Target {
  kind: ChangeKind;
  service: string;
  lastChange: number;
  convergedAt?: number;
  /** image: the generation the Service must be Ready having observed. replicas: the Deployment and the replicas it must have again. */
  generation?: number;
  deployment?: string;
  replicas?: number;
}

const kindOf = (n: number): ChangeKind => (n % 5 <= 2 ? 'image' : n % 5 === 3 ? 'ingress' : 'replicas');

export class ChangeStorm {
  private readonly targets = new Map<string, Target>();

  constructor(
    private readonly kube: KubeClient,
    private readonly timeline: ServiceTimeline,
    private readonly procs: StackProcesses,
    private readonly o: StormOptions,
  ) {}

  async run(): Promise<StormResult> {
    const before = this.procs.cpu();
    const started = performance.now();
    let next = 0;
    const busy = new Set<number>();
    const byKind: Record<ChangeKind, number> = { image: 0, ingress: 0, replicas: 0 };
    await Promise.all(
      Array.from({ length: this.o.writers }, async (_, w) => {
        const pick = rng(this.o.seed * 31 + w + 1);
        while (next < this.o.changes) {
          const n = this.o.from + Math.floor(pick() * (this.o.to - this.o.from));
          // One change at a time per Service: a second scale-down must find what the first recorded.
          if (busy.has(n)) {
            await sleep(10);
            continue;
          }
          busy.add(n);
          const k = next++;
          const kind = kindOf(n);
          await this.change(kind, `s-${n}`, k).finally(() => busy.delete(n));
          byKind[kind] += 1;
        }
      }),
    );
    const lastChange = performance.now();
    this.o.progress(
      `storm: ${this.o.changes} changes to ${this.targets.size} objects in ${((lastChange - started) / 1000).toFixed(1)} s; waiting for them`,
    );
    await this.converge(lastChange + this.o.convergeSeconds * 1000);
    const converged = [...this.targets.values()].filter((t) => t.convergedAt !== undefined);
    const allConverged = converged.length === this.targets.size ? Math.max(...converged.map((t) => t.convergedAt!)) : NaN;
    // Quiet: nothing done for 5 s; NaN when that did not come within 5 minutes.
    const quiet = (await waitQuiet(this.o.metricsPort, 5000, 300_000)) < 300_000 ? performance.now() - 5000 : NaN;
    const after = this.procs.cpu();
    const times = converged.map((t) => Math.max(0, t.convergedAt! - t.lastChange)).sort((a, b) => a - b);
    return {
      changes: this.o.changes,
      byKind,
      writeSeconds: (lastChange - started) / 1000,
      p50: percentile(times, 50),
      p95: percentile(times, 95),
      p99: percentile(times, 99),
      max: times.at(-1) ?? NaN,
      allConvergedMs: allConverged - lastChange,
      quietMs: quiet - lastChange,
      unconverged: [...this.targets.entries()].filter(([, t]) => t.convergedAt === undefined).map(([key]) => key),
      tidalCpu: after.tidal - before.tidal,
      temporalCpu: after.temporal - before.temporal,
      kubernetesCpu: after.kubernetes - before.kubernetes,
    };
  }

  private async change(kind: ChangeKind, service: string, k: number): Promise<void> {
    const key = `${kind} ${service}`;
    const target: Target = this.targets.get(key) ?? { kind, service, lastChange: 0 };
    if (kind === 'image') target.generation = await changeImage(this.kube, service, `nginx:1.27-${this.o.tag}-${k}`);
    else if (kind === 'ingress') await deleteIngress(this.kube, service);
    else Object.assign(target, await scaleToZero(this.kube, service, target.deployment, target.replicas));
    target.lastChange = performance.now();
    delete target.convergedAt;
    this.targets.set(key, target);
  }

  /** Polls the targets not yet converged until all are, or the deadline. */
  private async converge(deadline: number): Promise<void> {
    for (;;) {
      const open = [...this.targets.values()].filter((t) => t.convergedAt === undefined);
      if (open.length === 0 || performance.now() > deadline) return;
      for (let i = 0; i < open.length; i += 16) await Promise.all(open.slice(i, i + 16).map((t) => this.check(t)));
      await sleep(250);
    }
  }

  private async check(t: Target): Promise<void> {
    if (t.kind === 'image') t.convergedAt = this.timeline.serviceReadySince(t.service, t.generation ?? 1);
    else if (t.kind === 'ingress' ? await ingressBack(this.kube, t.service) : await replicasBack(this.kube, t.deployment ?? '', t.replicas ?? 1))
      t.convergedAt = performance.now();
  }
}
