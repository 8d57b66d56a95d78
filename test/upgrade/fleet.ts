// The controller's three replicas as a Deployment rolls them: each runs one build (the previous release's or this
// checkout's), on its own ports behind the stack's webhook balancer, and a roll replaces them one at a time — SIGTERM,
// wait for the process to exit (SIGKILL once the pod's termination grace period is over, as the kubelet does), start
// the other build, wait for its /readyz.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { isAlive, type ProcessTable } from '../../dev/processes.js';
import { repoRoot, replicaPorts, startController, type ControllerBuild, type StackInfo, type StackPorts } from '../../dev/stack.js';
import { leaderGauge, scrape } from '../harness/replicas.js';
import { eventually } from '../harness/wait.js';

export type Build = 'previous' | 'current';

export interface Replica {
  index: number;
  name: string;
  ports: StackPorts;
  build: Build;
}

/**
 * The worker identity of a replica running `build`: the build is in it, so a run's history tells which code completed
 * each of its workflow tasks (`WorkflowTaskCompleted.identity`).
 */
export const identityOf = (index: number, build: Build) => `replica-${index + 1}-${build}`;

/** How long the kubelet waits after SIGTERM before it kills a controller pod: deploy/'s terminationGracePeriodSeconds. */
export const terminationGraceMs =
  1000 *
  (
    parse(readFileSync(path.join(repoRoot, 'deploy', 'controller', 'deployment.yaml'), 'utf8')) as {
      spec: { template: { spec: { terminationGracePeriodSeconds: number } } };
    }
  ).spec.template.spec.terminationGracePeriodSeconds;

export class Fleet {
  readonly replicas: Replica[];

  constructor(
    private readonly info: StackInfo,
    private readonly procs: ProcessTable,
    private readonly env: Record<string, string>,
    private readonly previous: ControllerBuild,
    private readonly log: (s: string) => void,
  ) {
    this.replicas = [0, 1, 2].map((index) => ({
      index,
      name: index === 0 ? 'tidal-controller' : `tidal-controller-${index + 1}`,
      ports: replicaPorts(info.ports, index),
      build: 'previous',
    }));
  }

  /** Starts the replica on `build` and waits for its /readyz. */
  async start(r: Replica, build: Build): Promise<void> {
    const controllerEnv = { ...this.env, TIDAL_IDENTITY: identityOf(r.index, build) };
    await startController(
      this.info,
      this.procs,
      { ports: r.ports, controllerEnv, ...(build === 'previous' ? { controllerBuild: this.previous } : {}) },
      this.log,
      r.name,
    );
    r.build = build;
  }

  /**
   * SIGTERM, and the time the replica took to exit; `killed` when it was still running at the end of the termination
   * grace period and got SIGKILL.
   */
  async terminate(r: Replica): Promise<{ exitMs: number; killed: boolean }> {
    const rec = this.procs.running(r.name);
    if (!rec) throw new Error(`${r.name} is not running`);
    const started = Date.now();
    process.kill(rec.pid, 'SIGTERM');
    while (isAlive(rec.pid) && Date.now() - started < terminationGraceMs) await new Promise((res) => setTimeout(res, 100));
    const killed = isAlive(rec.pid);
    if (killed) process.kill(rec.pid, 'SIGKILL');
    await eventually(`${r.name} (pid ${rec.pid}) gone`, async () => !isAlive(rec.pid), 10_000, 50);
    await this.procs.stop(r.name); // drops its record
    return { exitMs: Date.now() - started, killed };
  }

  /** Replaces the replica with one on `build`: what a rolling update does to one pod. */
  async replace(r: Replica, build: Build): Promise<{ exitMs: number; killed: boolean; readyMs: number }> {
    const ended = await this.terminate(r);
    const started = Date.now();
    await this.start(r, build);
    return { ...ended, readyMs: Date.now() - started };
  }

  /** The replica that leads (holds the Lease), as the replicas' metrics say. */
  async leader(): Promise<Replica | undefined> {
    for (const r of this.replicas) {
      const s = await scrape(r.ports.controllerMetrics);
      if (s && leaderGauge(s)?.leading) return r;
    }
    return undefined;
  }

  describe(): string {
    return this.replicas.map((r) => `${r.name}=${r.build}`).join(', ');
  }
}
