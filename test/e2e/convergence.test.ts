// Issue 8 item 2: no lost updates. 30 Services get random concurrent changes from several writers (images, splits,
// tags, visibility, annotations, BYO names, delete/re-create, edits to owned children); then every object must
// reflect the latest spec. This file runs its own controller with the resync timer, the relist and the sweep at an
// hour, so only the watch → poke → pass path can make things converge. The seed is printed; replay a failure with
// TIDAL_CONVERGENCE_SEED=<seed>. The longer variant is `npm run soak` (bench/soak.ts).
import path from 'node:path';
import { copyFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Resources } from '../../api/kinds.js';
import { KubeClient } from '../../activities/kube/client.js';
import { replicaPorts, startController, testPorts, type StackInfo } from '../../dev/stack.js';
import { ProcessTable } from '../../dev/processes.js';
import { stack } from '../harness/cluster.js';
import { addKwokNodes, cleanUp, deleteObject, NodeResource, runConvergence, SuiteLabel } from '../harness/convergence.js';

const log = (s: string) => console.error(`[convergence] ${s}`);
const namespace = 'convergence';
const domain = 'conv.example.com';
const controllerName = 'tidal-controller-convergence';
const seed = Number(process.env.TIDAL_CONVERGENCE_SEED ?? Math.floor(Math.random() * 2 ** 31));

let procs: ProcessTable;
let info: StackInfo;
let kube: KubeClient;
let readyAt = 0;
let extraNodes: string[] = [];

const setDomain = (value: string | null) => kube.mergePatch(Resources.ConfigMap, 'knative-serving', 'config-domain', { data: { [domain]: value } });

beforeAll(async () => {
  const s = stack();
  procs = new ProcessTable(s.dir);
  info = { dir: s.dir, kubeconfig: s.kubeconfig, temporalAddress: s.temporalAddress, temporalUi: undefined, bins: s.bins, ports: testPorts };
  kube = new KubeClient({ kubeconfig: s.kubeconfig, fieldManager: 'convergence' });
  // Only a controller whose timers cannot repair anything within the test may run.
  await procs.stop('tidal-controller');
  await startController(
    info,
    procs,
    {
      ports: replicaPorts(testPorts, 2),
      controllerEnv: {
        ...s.controllerEnv,
        TIDAL_RESYNC_SECONDS: '3600',
        TIDAL_RELIST_SECONDS: '3600',
        TIDAL_SWEEP_SECONDS: '3600',
        TIDAL_IDENTITY: 'controller-convergence',
      },
    },
    log,
    controllerName,
  );
  readyAt = Date.now();
  // Room for every Revision's pods (hakn keeps them all running): 4 more nodes beside the stack's two.
  extraNodes = await addKwokNodes(kube, 4);
  await kube.apply(Resources.Namespace, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } });
  // An external domain for these Services only, so that cluster-local visibility changes the hosts.
  await setDomain(`selector:\n  ${SuiteLabel.key}: ${SuiteLabel.value}\n`);
});

afterAll(async () => {
  try {
    await cleanUp(kube, stack().kubeconfig, namespace);
    await deleteObject(stack().kubeconfig, Resources.Namespace, '', namespace).catch(() => false);
    await setDomain(null);
    for (const n of extraNodes) await deleteObject(stack().kubeconfig, NodeResource, '', n).catch(() => false);
  } finally {
    // Leave the stack as the other files expect it: the main controller running, this one gone.
    await startController(info, procs, { ports: testPorts, controllerEnv: stack().controllerEnv }, log);
    await procs.stop(controllerName);
    kube.close();
  }
});

describe('randomized convergence (resync at 1 h)', () => {
  it('every object reflects the latest spec shortly after the last change', async () => {
    const report = await runConvergence({
      kube,
      kubeconfig: stack().kubeconfig,
      namespace,
      domain,
      seed,
      services: 30,
      writers: 4,
      writeMs: 45_000,
      thinkMs: [200, 900],
      convergeTimeoutMs: 60_000,
      // The controller sweeps every object once, 30 s after it starts: that pass could hide a lost change.
      notBefore: readyAt + 31_000,
      log,
    });
    // The next e2e run wipes the stack's folder: keep this controller's log beside it for a failure's evidence.
    const kept = path.join(path.dirname(info.dir), `convergence-${seed}.log`);
    copyFileSync(path.join(info.dir, 'logs', `${controllerName}.log`), kept);
    log(`controller log: ${kept}`);
    expect(report.failures, `seed ${seed}`).toEqual([]);
  }, 300_000);
});
