// `npm run soak`: the randomized convergence run of test/e2e/convergence.test.ts at a larger scale (300 Services by
// default), on its own stack and ports, with the controller's resync, relist and sweep at an hour. Prints the seed
// and the last-change → converged figures; exits non-zero when anything did not converge.
// SOAK_SERVICES, SOAK_WRITERS, SOAK_SECONDS, SOAK_CONVERGE_SECONDS and TIDAL_CONVERGENCE_SEED change the run;
// SOAK_CHANGES=n makes the storm n changes however long they take instead of SOAK_SECONDS of them (one size of storm
// on either control plane: the writers' pace depends on the API server's and webhooks' answers);
// TIDAL_KEEP_SOAK_STACK=1 keeps the stack running afterwards (for a look at what did not converge).
// SOAK_CONTROL_PLANE=upstream runs the same storm against upstream Knative Serving on the same stack shape (its own
// ports and folder), with the stand-ins of dev/upstream-serving.ts's UPSTREAM_KWOK_STAND_INS, hakn's two pods per
// Revision and hakn's Revision GC, and the checks that are Tidal's own left out (test/harness/convergence.ts).
import path from 'node:path';
import { rmSync } from 'node:fs';
import { Resources } from '../api/kinds.js';
import { KubeClient } from '../kube/client.js';
import { repoRoot, stackDown, stackUp } from '../dev/stack.js';
import { cleanUp, runConvergence, SuiteLabel } from '../test/harness/convergence.js';
import { percentile } from './measure.js';
import { benchPorts } from './ports.js';

const controlPlane = process.env.SOAK_CONTROL_PLANE === 'upstream' ? 'upstream' : 'tidal';
const ports = controlPlane === 'upstream' ? { ...benchPorts(22), webhook: 22843 } : benchPorts(20);
const dir = path.join(repoRoot, '.tidal', controlPlane === 'upstream' ? 'soak-upstream' : 'soak');
const num = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
const log = (s: string) => console.error(`[soak] ${s}`);
const namespace = 'convergence';
const domain = 'conv.example.com';

async function main(): Promise<number> {
  const seed = num('TIDAL_CONVERGENCE_SEED', Math.floor(Math.random() * 2 ** 31));
  await stackDown(dir);
  rmSync(dir, { recursive: true, force: true });
  const info = await stackUp({
    dir,
    ports,
    ui: false,
    // hakn keeps every Revision's Deployment at its min-scale: room for ~3,000 pods (110 per kwok node).
    nodes: num('SOAK_NODES', 30),
    controller: true,
    controllerEnv: { TIDAL_RESYNC_SECONDS: '3600', TIDAL_RELIST_SECONDS: '3600', TIDAL_SWEEP_SECONDS: '3600' },
    ...(controlPlane === 'upstream'
      ? {
          controlPlane,
          // What the checks expect of any control plane, as hakn ships it: two pods per Revision, at most 30, and
          // old Revisions collected soon after they stop serving.
          config: {
            'config-autoscaler': { 'min-scale': '2', 'max-scale': '30' },
            'config-gc': {
              'retain-since-create-time': 'disabled',
              'retain-since-last-active-time': 'disabled',
              'min-non-active-revisions': '1',
              'max-non-active-revisions': '1',
            },
          },
        }
      : {}),
    log,
  });
  const readyAt = Date.now();
  const kube = new KubeClient({ kubeconfig: info.kubeconfig, fieldManager: 'convergence' });
  try {
    await kube.apply(Resources.Namespace, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } });
    await kube.mergePatch(Resources.ConfigMap, 'knative-serving', 'config-domain', {
      data: { [domain]: `selector:\n  ${SuiteLabel.key}: ${SuiteLabel.value}\n` },
    });
    const report = await runConvergence({
      kube,
      kubeconfig: info.kubeconfig,
      namespace,
      domain,
      seed,
      services: num('SOAK_SERVICES', 300),
      writers: num('SOAK_WRITERS', 8),
      writeMs: num('SOAK_SECONDS', 120) * 1000,
      ...(process.env.SOAK_CHANGES ? { changes: num('SOAK_CHANGES', 0) } : {}),
      thinkMs: [200, 1200],
      // A burst of ~1,300 changes over 300 Services takes the controller minutes to work off (throughput).
      convergeTimeoutMs: num('SOAK_CONVERGE_SECONDS', 900) * 1000,
      notBefore: readyAt + 31_000,
      controlPlane,
      log,
    });
    console.log(`\nsoak: seed ${report.seed}, ${num('SOAK_SERVICES', 300)} Services, operations ${JSON.stringify(report.operations)}`);
    console.log(
      `last change → converged: p50 ${report.p50} ms, p95 ${percentile(report.times, 95)} ms, p99 ${report.p99} ms, max ${report.max} ms; ` +
        `${report.failures.length} not converged`,
    );
    const logName = controlPlane === 'upstream' ? 'knative-controller' : 'tidal-controller';
    console.log(`controller log: ${path.join(dir, 'logs', `${logName}.log`)}`);
    if (!process.env.TIDAL_KEEP_SOAK_STACK) await cleanUp(kube, info.kubeconfig, namespace);
    return report.failures.length ? 1 : 0;
  } finally {
    kube.close();
    if (process.env.TIDAL_KEEP_SOAK_STACK) log(`kept running in ${dir} (KUBECONFIG=${info.kubeconfig})`);
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
