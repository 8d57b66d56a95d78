// `npm run bench:failover`: how long a kill -9 of the leader leaves the cluster unwatched. Three controller replicas
// on a stack of their own (ports clear of `npm run up` and `npm test`); `FAILOVER_ROUNDS` (10) times: find the leader
// from the replicas' metrics, SIGKILL it, change a Service's spec right after, and poll the survivors' /metrics every
// 20 ms for (1) a survivor reporting `tidal_leader 1` (Lease acquired) and (2) its first delivered poke
// (`tidal_pokes_delivered_total` rising: the new leader's start-up list), then wait for the change to converge;
// restart the killed replica as a follower and go again. Prints p50/p95/max of each. It asserts nothing.
import path from 'node:path';
import { rmSync } from 'node:fs';
import { KubeClient } from '../kube/client.js';
import { Resources } from '../api/kinds.js';
import type { Service } from '../api/serving.js';
import { ProcessTable } from '../dev/processes.js';
import { replicaPorts, repoRoot, stackDown, stackUp, startController } from '../dev/stack.js';
import { leaderGauge, pokesDelivered, scrape } from '../test/harness/replicas.js';
import { eventually } from '../test/harness/wait.js';
import { benchPorts } from './ports.js';

const ports = benchPorts(11);
const dir = path.join(repoRoot, '.tidal', 'bench-failover');
const rounds = Number(process.env.FAILOVER_ROUNDS ?? 10);
const log = (s: string) => console.error(`[failover] ${s}`);
const controllerEnv = { TIDAL_RESYNC_SECONDS: '3600', TIDAL_RELIST_SECONDS: '3600', TIDAL_SWEEP_SECONDS: '3600' };

const names = ['tidal-controller', 'tidal-controller-2', 'tidal-controller-3'];
const replicaOf = (i: number) => ({ name: names[i]!, ports: replicaPorts(ports, i), env: { ...controllerEnv, TIDAL_IDENTITY: `replica-${i + 1}` } });
const replicas = names.map((_, i) => replicaOf(i));

function pct(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)] ?? NaN;
}

async function main(): Promise<void> {
  await stackDown(dir);
  rmSync(dir, { recursive: true, force: true });
  const info = await stackUp({ dir, ports, ui: false, nodes: 2, controller: true, controllerEnv: replicas[0]!.env, log });
  const procs = new ProcessTable(dir);
  const kube = new KubeClient({ kubeconfig: info.kubeconfig, fieldManager: 'bench-failover' });
  const svc = (generation: number) => ({
    apiVersion: 'serving.knative.dev/v1',
    kind: 'Service',
    metadata: { name: 'failover', namespace: 'default' },
    spec: { template: { metadata: { labels: { round: String(generation) } }, spec: { containers: [{ image: 'nginx:1.27' }] } } },
  });
  const convergedOn = async (round: number) =>
    eventually(
      `round ${round} converged`,
      async () => {
        const s = await kube.get<Service>(Resources.Service, 'default', 'failover');
        return (
          s?.spec.template.metadata?.labels?.round === String(round) &&
          s.status?.observedGeneration === s.metadata.generation &&
          s.status?.conditions?.find((c) => c.type === 'Ready')?.status === 'True'
        );
      },
      120_000,
      50,
    );
  const acquire: number[] = [];
  const firstPoke: number[] = [];
  const converge: number[] = [];
  try {
    for (const r of replicas.slice(1)) await startController(info, procs, { ports: r.ports, controllerEnv: r.env }, log, r.name);
    await kube.apply(Resources.Service, svc(0));
    await convergedOn(0);
    for (let round = 1; round <= rounds; round++) {
      const views = await Promise.all(replicas.map(async (r) => ({ r, s: await scrape(r.ports.controllerMetrics) })));
      const leader = views.find((v) => v.s && leaderGauge(v.s)?.leading);
      if (!leader) throw new Error('no replica leads');
      const survivors = views.filter((v) => v !== leader);
      const baseline = new Map(survivors.map((v) => [v.r.name, v.s ? pokesDelivered(v.s) : 0]));
      const victim = procs.running(leader.r.name);
      if (!victim) throw new Error(`${leader.r.name} is not running`);
      const killedAt = performance.now();
      process.kill(victim.pid, 'SIGKILL');
      await kube.apply(Resources.Service, svc(round));
      let acquiredMs: number | undefined;
      let pokedMs: number | undefined;
      while (pokedMs === undefined && performance.now() - killedAt < 60_000) {
        for (const v of survivors) {
          const s = await scrape(v.r.ports.controllerMetrics, 500);
          if (!s) continue;
          if (acquiredMs === undefined && leaderGauge(s)?.leading) acquiredMs = performance.now() - killedAt;
          if (pokesDelivered(s) > (baseline.get(v.r.name) ?? 0)) {
            acquiredMs ??= performance.now() - killedAt;
            pokedMs = performance.now() - killedAt;
          }
        }
        await new Promise((r) => setTimeout(r, 20));
      }
      if (pokedMs === undefined || acquiredMs === undefined) throw new Error(`round ${round}: no new leader poked within 60 s`);
      await convergedOn(round);
      const convergedMs = performance.now() - killedAt;
      acquire.push(acquiredMs);
      firstPoke.push(pokedMs);
      converge.push(convergedMs);
      log(
        `round ${round}: killed ${leader.r.name}; Lease taken after ${Math.round(acquiredMs)} ms, first poke ${Math.round(pokedMs)} ms, change converged ${Math.round(convergedMs)} ms`,
      );
      await startController(info, procs, { ports: leader.r.ports, controllerEnv: leader.r.env }, log, leader.r.name);
      await new Promise((r) => setTimeout(r, 1000));
    }
    const row = (what: string, xs: number[]) =>
      console.log(`${what.padEnd(40)} p50 ${Math.round(pct(xs, 50))} ms  p95 ${Math.round(pct(xs, 95))} ms  max ${Math.round(Math.max(...xs))} ms`);
    console.log(`\nfailover over ${rounds} kill -9 of the leader (3 replicas; lease 3 s, renew deadline 2 s, renew/retry 0.5 s):`);
    row('kill → Lease taken by a survivor', acquire);
    row('kill → first poke from the new leader', firstPoke);
    row('kill → a change made at the kill converged', converge);
  } finally {
    kube.close();
    await stackDown(dir, { log });
  }
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(2);
  },
);
