// The chaos run shared by test/e2e/chaos.test.ts (short) and bench/chaos.ts (`npm run chaos`): three controller
// replicas; every `killEveryMs` one of them (seeded choice) is killed with SIGKILL and restarted; at fixed points
// the Temporal server and the API server are each restarted once; meanwhile the convergence writers
// (test/harness/convergence.ts) create, update, split and delete Services. At the end every object must reflect its
// latest spec (the convergence checker: one Revision per generation at most, the latest generation reconciled, no
// Service stuck), and the run reports duplicate side effects: a Revision name created twice for one Configuration
// (seen with two uids), which a re-run activity would cause.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { Resources } from '../../api/kinds.js';
import type { Revision } from '../../api/serving.js';
import type { ProcessTable } from '../../dev/processes.js';
import { startController, temporalGoEnv, type StackInfo, type StackPorts } from '../../dev/stack.js';
import { restartApiServer, restartControllerManager, restartProcess as restartProcessOf } from './restarts.js';
import { rng, runConvergence, type ConvergenceOptions, type ConvergenceReport } from './convergence.js';
import { leaderGauge, scrape } from './replicas.js';

const run = promisify(execFile);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export interface ChaosReplica {
  name: string;
  ports: StackPorts;
  env: Record<string, string>;
}

export interface ChaosOptions {
  info: StackInfo;
  procs: ProcessTable;
  replicas: ChaosReplica[];
  killEveryMs: number;
  /** When (ms after the writers start) the Temporal server and the API server are restarted. */
  restartTemporalAtMs: number;
  restartApiServerAtMs: number;
  /** How long the Temporal server and the API server stay down when restarted (default 3 s). */
  downtimeMs?: number;
  convergence: Omit<ConvergenceOptions, 'tolerateOutagesMs' | 'onWritesDone'>;
  log: (s: string) => void;
}

export interface ChaosReport {
  convergence: ConvergenceReport;
  kills: number;
  /** Controller restarts that came back ready. */
  restarts: number;
  temporalRestarted: boolean;
  apiServerRestarted: boolean;
  /** Whether some replica's /readyz said 503 naming Temporal while it was down (readiness tells the truth). */
  readinessSawTemporalDown: boolean;
  /** Leaders seen over the run (identities). */
  leaders: string[];
  /** Revision names created more than once for the same Configuration (a duplicate side effect). */
  duplicateRevisions: string[];
}

async function readyz(port: number): Promise<{ status: number; body: string } | undefined> {
  try {
    const res = await fetch(`http://127.0.0.1:${port}/readyz`, { signal: AbortSignal.timeout(2000) });
    return { status: res.status, body: await res.text() };
  } catch {
    return undefined;
  }
}

export async function runChaos(o: ChaosOptions): Promise<ChaosReport> {
  const { info, procs, log } = o;
  const r = rng(o.convergence.seed + 7);
  let stop = false;
  let kills = 0;
  let restarts = 0;
  let temporalRestarted = false;
  let apiServerRestarted = false;
  let readinessSawTemporalDown = false;
  const leaders = new Set<string>();
  const revisionUids = new Map<string, Set<string>>();
  const restarting = new Set<string>();
  const pending: Promise<void>[] = [];

  /** Starts a replica again, retrying while a dependency is down (a controller exits when it cannot connect at start). */
  const bringBack = async (rep: ChaosReplica): Promise<void> => {
    restarting.add(rep.name);
    try {
      const deadline = Date.now() + 180_000;
      while (Date.now() < deadline) {
        const rec = await startController(info, procs, { ports: rep.ports, controllerEnv: rep.env }, log, rep.name, false);
        for (let i = 0; i < 120; i++) {
          if ((await readyz(rep.ports.controllerMetrics))?.status === 200) {
            restarts += 1;
            return;
          }
          if (!procs.running(rep.name)) break; // exited (Temporal or the API server down at its start): start again
          await sleep(500);
        }
        log(`${rep.name} (pid ${rec.pid}) did not come back ready; starting it again`);
        await sleep(1000);
      }
      throw new Error(`${rep.name} did not come back within 180 s`);
    } finally {
      restarting.delete(rep.name);
    }
  };

  const restartProcess = (name: string, env: NodeJS.ProcessEnv, healthy: () => Promise<true | string>) =>
    restartProcessOf(procs, name, env, healthy, log, o.downtimeMs);

  const killer = async () => {
    while (!stop) {
      await sleep(o.killEveryMs);
      if (stop) break;
      const up = o.replicas.filter((x) => !restarting.has(x.name) && procs.running(x.name));
      if (up.length === 0) continue;
      const victim = up[Math.floor(r() * up.length)]!;
      const rec = procs.running(victim.name)!;
      process.kill(rec.pid, 'SIGKILL');
      kills += 1;
      log(`kill #${kills}: ${victim.name} (pid ${rec.pid})`);
      restarting.add(victim.name);
      // Gone before it is started again (a process still dying would count as running).
      for (let i = 0; i < 100 && procs.running(victim.name); i++) await sleep(50);
      pending.push(bringBack(victim));
    }
  };

  const watcher = async () => {
    while (!stop) {
      for (const rep of o.replicas) {
        const s = await scrape(rep.ports.controllerMetrics, 1000);
        const g = s && leaderGauge(s);
        if (g?.leading) leaders.add(g.identity);
      }
      try {
        const revs = await o.convergence.kube.list<Revision>(Resources.Revision, o.convergence.namespace);
        for (const rev of revs.items) {
          const owner = rev.metadata.ownerReferences?.find((x) => x.controller)?.uid ?? '';
          const key = `${owner}/${rev.metadata.name ?? ''}`;
          const uids = revisionUids.get(key) ?? new Set<string>();
          uids.add(rev.metadata.uid ?? '');
          revisionUids.set(key, uids);
        }
      } catch {
        /* the API server is restarting */
      }
      await sleep(1000);
    }
  };

  const outages = async (t0: number) => {
    const at = async (ms: number) => sleep(Math.max(0, t0 + ms - Date.now()));
    const ordered = [
      { at: o.restartTemporalAtMs, what: 'temporal' as const },
      { at: o.restartApiServerAtMs, what: 'apiserver' as const },
    ].sort((a, b) => a.at - b.at);
    for (const step of ordered) {
      await at(step.at);
      if (step.what === 'temporal') {
        // Readiness must say so while Temporal is down: poll every replica during the outage.
        let down = true;
        const probe = (async () => {
          while (down) {
            for (const rep of o.replicas) {
              const res = await readyz(rep.ports.controllerMetrics);
              if (res?.status === 503 && res.body.includes('temporal:')) readinessSawTemporalDown = true;
            }
            await sleep(200);
          }
        })();
        await restartProcess('temporal', temporalGoEnv(), async () => {
          await run(info.bins.TEMPORAL, ['operator', 'cluster', 'health', '--address', info.temporalAddress]);
          return true as const;
        }).finally(() => (down = false));
        await probe;
        temporalRestarted = true;
      } else {
        await restartApiServer(info, procs, log, o.downtimeMs);
        apiServerRestarted = true;
      }
    }
  };

  // Kills and outages run from the start: creation of the Services runs under them too.
  const background = Promise.all([killer(), watcher()]);
  const outagesDone = outages(Date.now());
  outagesDone.catch(() => {}); // awaited below
  // Should the writers fail, the kills and restarts still stop, and every replica brought back, before the caller
  // tears the stack down: a replica started after that would hold its ports into the next run.
  const settle = async () => {
    stop = true;
    await background;
    await outagesDone.catch(() => {});
    await Promise.allSettled(pending);
  };
  const convergence = await runConvergence({
    ...o.convergence,
    tolerateOutagesMs: 180_000,
    onWritesDone: async () => {
      stop = true;
      await background;
      await outagesDone;
      await Promise.all(pending);
      log(`writes done; ${kills} kills, ${restarts} restarts; every replica back`);
      // The collector's backoff after discovery was incomplete would leave orphans for ~20 min (restarts.ts).
      if (apiServerRestarted) await restartControllerManager(info, procs, log);
    },
  }).catch(async (err: unknown) => {
    await settle();
    throw err;
  });
  const duplicateRevisions = [...revisionUids].filter(([, uids]) => uids.size > 1).map(([key]) => key);
  return {
    convergence,
    kills,
    restarts,
    temporalRestarted,
    apiServerRestarted,
    readinessSawTemporalDown,
    leaders: [...leaders],
    duplicateRevisions,
  };
}
