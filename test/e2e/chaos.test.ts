// The short chaos run (the long one is `npm run chaos`, bench/chaos.ts): three controller replicas,
// one killed with SIGKILL and restarted every 10 s, the Temporal server and the API server each restarted once,
// while writers create, update, split and delete Services. Everything must converge on its latest spec with no
// Revision made twice, and /readyz must have said 503 while Temporal was down.
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Resources } from '../../api/kinds.js';
import { KubeClient } from '../../kube/client.js';
import { replicaPorts, startController, testPorts, type StackInfo } from '../../dev/stack.js';
import { ProcessTable } from '../../dev/processes.js';
import { stack } from '../harness/cluster.js';
import { convergenceFailureMessage } from '../harness/evidence.js';
import { addKwokNodes, cleanUp, deleteObject, NodeResource, SuiteLabel } from '../harness/convergence.js';
import { runChaos, type ChaosReplica } from '../harness/chaos.js';

const log = (s: string) => console.error(`[chaos] ${s}`);
const namespace = 'chaos';
const domain = 'chaos.example.com';
const seed = Number(process.env.TIDAL_CONVERGENCE_SEED ?? Math.floor(Math.random() * 2 ** 31));

let procs: ProcessTable;
let info: StackInfo;
let kube: KubeClient;
let replicas: ChaosReplica[];
let extraNodes: string[] = [];

const setDomain = (value: string | null) => kube.mergePatch(Resources.ConfigMap, 'knative-serving', 'config-domain', { data: { [domain]: value } });

beforeAll(async () => {
  const s = stack();
  procs = new ProcessTable(s.dir);
  info = { dir: s.dir, kubeconfig: s.kubeconfig, temporalAddress: s.temporalAddress, temporalUi: undefined, bins: s.bins, ports: testPorts };
  kube = new KubeClient({ kubeconfig: s.kubeconfig, fieldManager: 'convergence' });
  // Readiness checked every 0.5 s, so the test sees the 3 s outages (the main replica keeps the stack's settings).
  const env = { ...s.controllerEnv, TIDAL_HEALTH_INTERVAL_MS: '500' };
  replicas = [
    { name: 'tidal-controller', ports: testPorts, env: s.controllerEnv },
    { name: 'tidal-controller-2', ports: replicaPorts(testPorts, 1), env: { ...env, TIDAL_IDENTITY: 'controller-2' } },
    { name: 'tidal-controller-3', ports: replicaPorts(testPorts, 2), env: { ...env, TIDAL_IDENTITY: 'controller-3' } },
  ];
  for (const r of replicas) await startController(info, procs, { ports: r.ports, controllerEnv: r.env }, log, r.name);
  extraNodes = await addKwokNodes(kube, 2, 'kwok-chaos');
  await kube.apply(Resources.Namespace, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } });
  await setDomain(`selector:\n  ${SuiteLabel.key}: ${SuiteLabel.value}\n`);
});

afterAll(async () => {
  try {
    await cleanUp(kube, stack().kubeconfig, namespace);
    await deleteObject(stack().kubeconfig, Resources.Namespace, '', namespace).catch(() => false);
    await setDomain(null);
    for (const n of extraNodes) await deleteObject(stack().kubeconfig, NodeResource, '', n).catch(() => false);
  } finally {
    // Leave the stack as the other files expect it: the main controller running, the extra ones gone.
    await startController(info, procs, { ports: testPorts, controllerEnv: stack().controllerEnv }, log);
    await procs.stop('tidal-controller-2');
    await procs.stop('tidal-controller-3');
    kube.close();
  }
});

describe('chaos (short)', () => {
  it('loses nothing while replicas are killed every 10 s and Temporal and the API server restart', async () => {
    const report = await runChaos({
      info,
      procs,
      replicas,
      killEveryMs: 10_000,
      restartTemporalAtMs: 25_000,
      restartApiServerAtMs: 50_000,
      convergence: {
        kube,
        kubeconfig: stack().kubeconfig,
        namespace,
        domain,
        seed,
        services: 10,
        writers: 3,
        writeMs: 75_000,
        thinkMs: [300, 1200],
        convergeTimeoutMs: 180_000,
        log,
      },
      log,
    });
    const c = report.convergence;
    log(
      `seed ${seed}: ${report.kills} kills survived, ${report.restarts} restarts, leaders ${report.leaders.join(', ')}; ` +
        `last change → converged p50 ${c.p50} ms, max ${c.max} ms; duplicate Revisions ${report.duplicateRevisions.length}`,
    );
    const logFiles = replicas.map((r) => path.join(info.dir, 'logs', `${r.name}.log`));
    const message = await convergenceFailureMessage({ seed, namespace, failures: c.failures, logFiles, log });
    expect(
      c.failures.map((f) => f.name),
      message,
    ).toEqual([]);
    expect(report.duplicateRevisions).toEqual([]);
    expect(report.kills).toBeGreaterThanOrEqual(5);
    expect(report.temporalRestarted).toBe(true);
    expect(report.apiServerRestarted).toBe(true);
    expect(report.readinessSawTemporalDown, '/readyz said 503 (temporal) while Temporal was down').toBe(true);
    expect(report.leaders.length).toBeGreaterThanOrEqual(1);
  }, 600_000);
});
