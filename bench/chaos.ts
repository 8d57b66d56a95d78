// `npm run chaos`: the long chaos run on a stack of its own (ports clear of `npm run up`, `npm
// test` and the other benches): three controller replicas behind the webhook balancer; every 10 s one is killed
// with SIGKILL and restarted; the Temporal server and the API server are each restarted once, midway; meanwhile
// the convergence writers create, update, split and delete `CHAOS_SERVICES` (200) Services for `CHAOS_SECONDS`
// (600). Prints the convergence time after the last change, the kills survived and the duplicate side effects
// (Revisions created twice: must be 0); exits non-zero when anything did not converge or a duplicate was seen.
// TIDAL_CONVERGENCE_SEED replays a run's choices; TIDAL_KEEP_CHAOS_STACK=1 keeps the stack afterwards.
import path from 'node:path';
import { rmSync } from 'node:fs';
import { Resources } from '../api/kinds.js';
import { KubeClient } from '../kube/client.js';
import { ProcessTable } from '../dev/processes.js';
import { replicaPorts, repoRoot, stackDown, stackUp, startController, type StackPorts } from '../dev/stack.js';
import { addKwokNodes, SuiteLabel } from '../test/harness/convergence.js';
import { runChaos, type ChaosReplica } from '../test/harness/chaos.js';

// Below the ephemeral port range (32768–60999): a fixed port there can be taken by any process's outgoing
// connection or by a controller's Temporal metrics exporter, which binds a free port.
const ports: StackPorts = {
  etcdClient: 12379,
  etcdPeer: 12380,
  apiserver: 16443,
  controllerManager: 13257,
  scheduler: 13259,
  temporal: 17233,
  temporalUi: 18233,
  temporalHttp: 17243,
  temporalMetrics: 17244,
  controllerMetrics: 19464,
  webhook: 18443,
  controllerWebhook: 18444,
};
const dir = path.join(repoRoot, '.tidal', 'chaos');
const num = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
const log = (s: string) => console.error(`[chaos] ${s}`);
const namespace = 'convergence';
const domain = 'conv.example.com';

async function main(): Promise<number> {
  const seed = num('TIDAL_CONVERGENCE_SEED', Math.floor(Math.random() * 2 ** 31));
  const writeMs = num('CHAOS_SECONDS', 600) * 1000;
  await stackDown(dir);
  rmSync(dir, { recursive: true, force: true });
  const controllerEnv = { TIDAL_RESYNC_SECONDS: '3600', TIDAL_RELIST_SECONDS: '3600', TIDAL_SWEEP_SECONDS: '3600' };
  const replicas: ChaosReplica[] = [0, 1, 2].map((i) => ({
    name: i === 0 ? 'tidal-controller' : `tidal-controller-${i + 1}`,
    ports: replicaPorts(ports, i),
    env: { ...controllerEnv, TIDAL_IDENTITY: `replica-${i + 1}` },
  }));
  const info = await stackUp({ dir, ports, ui: false, nodes: 2, controller: true, controllerEnv: replicas[0]!.env, log });
  const procs = new ProcessTable(dir);
  const kube = new KubeClient({ kubeconfig: info.kubeconfig, fieldManager: 'convergence' });
  try {
    for (const r of replicas.slice(1)) await startController(info, procs, { ports: r.ports, controllerEnv: r.env }, log, r.name);
    // hakn keeps every Revision's Deployment at its min-scale: room for the pods of ~200 Services' Revisions.
    await addKwokNodes(kube, num('CHAOS_NODES', 24));
    await kube.apply(Resources.Namespace, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } });
    await kube.mergePatch(Resources.ConfigMap, 'knative-serving', 'config-domain', {
      data: { [domain]: `selector:\n  ${SuiteLabel.key}: ${SuiteLabel.value}\n` },
    });
    const started = Date.now();
    const report = await runChaos({
      info,
      procs,
      replicas,
      killEveryMs: num('CHAOS_KILL_EVERY_SECONDS', 10) * 1000,
      // Midway through the writes (creation of the Services comes first and takes a minute or two).
      restartTemporalAtMs: Math.round(writeMs * 0.45),
      restartApiServerAtMs: Math.round(writeMs * 0.7),
      convergence: {
        kube,
        kubeconfig: info.kubeconfig,
        namespace,
        domain,
        seed,
        services: num('CHAOS_SERVICES', 200),
        writers: num('CHAOS_WRITERS', 8),
        writeMs,
        thinkMs: [300, 1500],
        convergeTimeoutMs: num('CHAOS_CONVERGE_SECONDS', 900) * 1000,
        log,
      },
      log,
    });
    const c = report.convergence;
    const ops = Object.entries(c.operations)
      .map(([k, v]) => `${k} ${v}`)
      .join(', ');
    console.log(
      `\nchaos: seed ${seed}, ${num('CHAOS_SERVICES', 200)} Services, ${writeMs / 1000} s of writes, ${Math.round((Date.now() - started) / 1000)} s in all`,
    );
    console.log(`operations: ${ops}`);
    console.log(
      `kills survived (SIGKILL of a replica, every ${num('CHAOS_KILL_EVERY_SECONDS', 10)} s): ${report.kills}; restarts back ready: ${report.restarts}`,
    );
    console.log(
      `Temporal restarted: ${report.temporalRestarted}; API server restarted: ${report.apiServerRestarted}; /readyz 503 while Temporal was down: ${report.readinessSawTemporalDown}`,
    );
    console.log(`leaders seen: ${report.leaders.length}`);
    console.log(`last change → converged (per Service): p50 ${c.p50} ms, p99 ${c.p99} ms, max ${c.max} ms; not converged: ${c.failures.length}`);
    console.log(
      `duplicate side effects (a Revision created twice for one Configuration): ${report.duplicateRevisions.length}${report.duplicateRevisions.length ? ` ${report.duplicateRevisions.join(', ')}` : ''}`,
    );
    return c.failures.length || report.duplicateRevisions.length ? 1 : 0;
  } finally {
    kube.close();
    if (process.env.TIDAL_KEEP_CHAOS_STACK) log(`kept running in ${dir} (KUBECONFIG=${info.kubeconfig})`);
    else await stackDown(dir, { log });
  }
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(err);
    process.exit(2);
  },
);
