// bench:scale's change storm: a fixed number of changes to resident Services by concurrent writers, as users and
// other controllers make them — a new image (a spec edit: a new Revision must turn Ready), a KIngress deleted (it must
// come back) and a Deployment scaled to 0 (its replicas must come back). Each kind of change goes to its own Services
// (by name modulo 5: 0–2 spec edits, 3 KIngress deletions, 4 Deployment edits), so no change undoes another's check.
// Measured: each changed object's last change → converged (percentiles), the writers' pace, and the CPU of Tidal and
// the Temporal server from the first change until the control plane is quiet again.
import { Resources } from '../api/kinds.js';
import type { KubeObject } from '../api/meta.js';
import type { KubeClient } from '../kube/client.js';
import { rng } from '../test/harness/convergence.js';
import { percentile, sleep, waitQuiet, type StackProcesses } from './measure.js';
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
type DeploymentLike = KubeObject & { spec?: { replicas?: number } };

/** What a target must show again, and when it was last changed. */
interface Target {
  kind: ChangeKind;
  service: string;
  lastChange: number;
  convergedAt?: number;
  /** image: the Revision the Service must be Ready on. replicas: the Deployment and the replicas it must have again. */
  revision?: string;
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
    const byKind: Record<ChangeKind, number> = { image: 0, ingress: 0, replicas: 0 };
    await Promise.all(
      Array.from({ length: this.o.writers }, async (_, w) => {
        const pick = rng(this.o.seed * 31 + w + 1);
        while (next < this.o.changes) {
          const k = next++;
          const n = this.o.from + Math.floor(pick() * (this.o.to - this.o.from));
          const kind = kindOf(n);
          await this.change(kind, `s-${n}`, k);
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
    await waitQuiet(this.o.metricsPort, 5000, 300_000);
    const quiet = performance.now() - 5000;
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
    if (kind === 'image') {
      const svc = await this.kube.mergePatch<KubeObject>(Resources.Service, 'default', service, {
        spec: { template: { spec: { containers: [{ image: `nginx:1.27-${this.o.tag}-${k}`, ports: [{ containerPort: 80 }] }] } } },
      });
      target.revision = `${service}-${String(svc.metadata.generation ?? 1).padStart(5, '0')}`;
    } else if (kind === 'ingress') {
      await this.kube.delete(Resources.KIngress, 'default', service);
    } else {
      const deployments = (
        await this.kube.list<DeploymentLike>(Resources.Deployment, 'default', { labelSelector: `serving.knative.dev/service=${service}` })
      ).items;
      // A second edit before the first came back finds the Deployment at 0: the replicas it must regain are the first's.
      const deployment =
        deployments.find((d) => d.metadata.name === target.deployment) ?? deployments.find((d) => (d.spec?.replicas ?? 0) > 0) ?? deployments[0];
      if (!deployment) throw new Error(`${service} has no Deployment`);
      target.deployment = deployment.metadata.name ?? '';
      target.replicas = Math.max(target.replicas ?? 0, deployment.spec?.replicas ?? 0);
      await this.kube.mergePatch(Resources.Deployment, 'default', target.deployment, { spec: { replicas: 0 } });
    }
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
    let done = false;
    if (t.kind === 'image') done = this.timeline.serviceReady(t.service, t.revision) !== undefined;
    else if (t.kind === 'ingress') done = (await this.kube.get(Resources.KIngress, 'default', t.service)) !== undefined;
    else
      done = ((await this.kube.get<DeploymentLike>(Resources.Deployment, 'default', t.deployment ?? ''))?.spec?.replicas ?? 0) >= (t.replicas ?? 1);
    if (done) t.convergedAt = t.kind === 'image' ? this.timeline.serviceReady(t.service, t.revision)! : performance.now();
  }
}
