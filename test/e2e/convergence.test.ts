// No lost updates. 30 Services get random concurrent changes from several writers (images, splits, tags, visibility,
// annotations, BYO names, delete/re-create, edits to owned children), and the API server is restarted halfway through
// them; then every object must reflect the latest spec. This file runs its own controller with the resync timer, the
// relist and the sweep at an hour, so only the watch → poke → pass path can make things converge — across the watches
// broken and resumed by the restart. The seed is printed; replay a failure with
// TIDAL_CONVERGENCE_SEED=<seed>. The longer variant is `npm run soak` (bench/soak.ts).
import path from 'node:path';
import { copyFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Resources } from '../../api/kinds.js';
import { KubeClient } from '../../kube/client.js';
import { replicaPorts, startController, testPorts, type StackInfo } from '../../dev/stack.js';
import { ProcessTable } from '../../dev/processes.js';
import { apply, getObject, kubectl, stack, temporalClient } from '../harness/cluster.js';
import { eventually } from '../harness/wait.js';
import { deliveredInputs, runHistories } from '../harness/history.js';
import type { Condition, Revision, Service } from '../../api/serving.js';
import { addKwokNodes, cleanUp, deleteObject, NodeResource, runConvergence, SuiteLabel } from '../harness/convergence.js';
import { restartApiServer, restartControllerManager } from '../harness/restarts.js';
import { convergenceFailureMessage } from '../harness/evidence.js';

const log = (s: string) => console.error(`[convergence] ${new Date().toISOString()} ${s}`);
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

/** This file's controller: its resync, relist and sweep at an hour. */
async function startOwnController(): Promise<void> {
  await startController(
    info,
    procs,
    {
      ports: replicaPorts(testPorts, 2),
      controllerEnv: {
        ...stack().controllerEnv,
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
}

beforeAll(async () => {
  const s = stack();
  procs = new ProcessTable(s.dir);
  info = { dir: s.dir, kubeconfig: s.kubeconfig, temporalAddress: s.temporalAddress, temporalUi: undefined, bins: s.bins, ports: testPorts };
  kube = new KubeClient({ kubeconfig: s.kubeconfig, fieldManager: 'convergence' });
  // Only a controller whose timers cannot repair anything within the test may run.
  await procs.stop('tidal-controller');
  await startOwnController();
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
  it('every object reflects the latest spec shortly after the last change, across an API server restart', async () => {
    const writeMs = 45_000;
    let restart: Promise<void> | undefined;
    const report = await runConvergence({
      kube,
      kubeconfig: stack().kubeconfig,
      namespace,
      domain,
      seed,
      services: 30,
      writers: 4,
      writeMs,
      thinkMs: [200, 900],
      convergeTimeoutMs: 90_000,
      // The controller sweeps every object once, 30 s after it starts: that pass could hide a lost change.
      notBefore: readyAt + 31_000,
      // Writes that fail while the API server is down are made again once it is back, as a user would.
      tolerateOutagesMs: 180_000,
      onWritesStarted: () => {
        restart = (async () => {
          await new Promise((r) => setTimeout(r, writeMs / 2));
          await restartApiServer(info, procs, log);
        })();
      },
      onWritesDone: async () => {
        await restart;
        await restartControllerManager(info, procs, log);
      },
      log,
    });
    // The next e2e run wipes the stack's folder: keep this controller's log beside it for a failure's evidence.
    const kept = path.join(path.dirname(info.dir), `convergence-${seed}.log`);
    copyFileSync(path.join(info.dir, 'logs', `${controllerName}.log`), kept);
    log(`controller log: ${kept}`);
    expect(restart, 'the API server was restarted').toBeDefined();
    const message = await convergenceFailureMessage({ seed, namespace, failures: report.failures, logFiles: kept, log });
    expect(
      report.failures.map((f) => f.name),
      message,
    ).toEqual([]);
  }, 600_000);
});

/** Only the watch may repair what the tests below break: the controller's one sweep, 30 s after its start, is behind them. */
const afterSweep = () => new Promise((r) => setTimeout(r, Math.max(0, readyAt + 31_000 - Date.now())));

const nginxService = (name: string) => ({
  apiVersion: 'serving.knative.dev/v1',
  kind: 'Service',
  metadata: { name, namespace },
  spec: { template: { spec: { containers: [{ image: 'nginx:1.27', ports: [{ containerPort: 80 }] }] } } },
});

/** An nginx Service named `name`, created once the sweep is behind and awaited Ready. */
async function readyAfterSweep(name: string): Promise<void> {
  await afterSweep();
  await apply(nginxService(name), namespace);
  await eventually(
    `Service ${name} Ready`,
    async () => (await getObject<Service>('ksvc', name, namespace))?.status?.conditions?.find((c) => c.type === 'Ready')?.status === 'True',
    120_000,
  );
}

/** The pokes (JSON text) every run of a workflow was started or signalled with. */
async function pokesTo(workflowId: string): Promise<string[]> {
  const t = await temporalClient();
  try {
    return (await runHistories(t.client, workflowId)).flatMap(deliveredInputs);
  } finally {
    await t.close();
  }
}

describe("a Revision recreated under its name while the old one's Service awaits the garbage collector (resync at 1 h)", () => {
  type KubeService = { metadata: { uid?: string; deletionTimestamp?: string; ownerReferences?: { uid: string }[] } };
  const name = 'lingers';
  const rev = `${name}-00001`;
  const hold = 'conv.tidal.dev/hold';
  const ksvc = nginxService(name);
  const cond = (o: { status?: { conditions?: Condition[] } } | undefined, type: string) => o?.status?.conditions?.find((c) => c.type === type);
  const release = () =>
    kubectl(['patch', 'service', rev, '-n', namespace, '--type', 'merge', '-p', JSON.stringify({ metadata: { finalizers: null } })]).catch(() => '');
  afterAll(release);

  it('is NotOwned while the old Service stays, and makes its own as soon as the collector deletes it (the watch, no timer)', async () => {
    await afterSweep();
    await apply(ksvc, namespace);
    const first = await eventually(
      `Revision ${rev} Ready`,
      async () => {
        const r = await getObject<Revision>('revision', rev, namespace);
        return cond(r, 'Ready')?.status === 'True' && r;
      },
      120_000,
    );
    // The old incarnation's Service: held by a finalizer, as the collector's lag would hold it.
    await kubectl(['patch', 'service', rev, '-n', namespace, '--type', 'merge', '-p', JSON.stringify({ metadata: { finalizers: [hold] } })]);
    await kubectl(['delete', 'ksvc', name, '-n', namespace]);
    await eventually(
      'the old Revision gone, its Service deleted but held',
      async () =>
        (await getObject<Revision>('revision', rev, namespace)) === undefined &&
        (await getObject<KubeService>('service', rev, namespace))?.metadata.deletionTimestamp !== undefined,
      120_000,
    );
    await apply(ksvc, namespace);
    const message = `There is an existing Service "${rev}" that we do not own.`;
    const blocked = await eventually(
      'the new Revision reports the old Service NotOwned',
      async () => {
        const r = await getObject<Revision>('revision', rev, namespace);
        return r && r.metadata.uid !== first.metadata.uid && cond(r, 'ResourcesAvailable')?.reason === 'NotOwned' && r;
      },
      120_000,
    );
    expect(cond(blocked, 'ResourcesAvailable')).toMatchObject({ status: 'False', reason: 'NotOwned', message });
    expect(cond(blocked, 'Ready')).toMatchObject({ status: 'False', reason: 'NotOwned', message });

    // The collector's work finishes: the deletion's watch event is all that tells the Revision.
    await release();
    const own = await eventually(
      `Service ${rev} made by the new Revision`,
      async () => {
        const svc = await getObject<KubeService>('service', rev, namespace);
        return svc?.metadata.ownerReferences?.[0]?.uid === blocked.metadata.uid && svc;
      },
      60_000,
    );
    expect(own.metadata.deletionTimestamp).toBeUndefined();
    await eventually(
      `Revision ${rev} and Service ${name} Ready`,
      async () =>
        cond(await getObject<Revision>('revision', rev, namespace), 'Ready')?.status === 'True' &&
        cond(await getObject<Service>('ksvc', name, namespace), 'Ready')?.status === 'True',
      60_000,
    );

    // The history says why it passed: a poke from the Service's deletion (`KubeService/<ns>/<rev>`), then a pass
    // that created the Service.
    const delivered = await pokesTo(`Revision/${namespace}/${rev}`);
    const fromService = delivered.filter((p) => p.includes(`"source":"KubeService/${namespace}/${rev}"`));
    expect(
      fromService.some((p) => p.includes('"reason":"dependency"')),
      delivered.join('\n'),
    ).toBe(true);
  }, 300_000);
});

type VirtualService = { metadata: { uid?: string }; spec: { hosts?: string[] } };

/** Waits for a VirtualService deleted by the test to be made again, as it was (a new object, the same spec). */
async function madeAgain(vsName: string, before: VirtualService): Promise<void> {
  const again = await eventually(
    `VirtualService ${vsName} made again`,
    async () => {
      const vs = await getObject<VirtualService>('virtualservice', vsName, namespace);
      return vs && vs.metadata.uid !== before.metadata.uid && vs;
    },
    60_000,
  );
  expect(again.spec).toEqual(before.spec);
}

describe("a KIngress's VirtualServices edited or deleted by hand (resync at 1 h)", () => {
  const name = 'routed';

  it('are programmed again as soon as the watch sees the change', async () => {
    await readyAfterSweep(name);
    const ingressVs = (await getObject<VirtualService>('virtualservice', `${name}-ingress`, namespace))!;
    const meshVs = (await getObject<VirtualService>('virtualservice', `${name}-mesh`, namespace))!;
    expect(meshVs.spec.hosts?.length).toBeGreaterThan(0);

    await kubectl(['delete', 'virtualservice', `${name}-ingress`, '-n', namespace]);
    await madeAgain(`${name}-ingress`, ingressVs);

    const patch = { spec: { hosts: ['edited.example.com'] } };
    await kubectl(['patch', 'virtualservice', `${name}-mesh`, '-n', namespace, '--type', 'merge', '-p', JSON.stringify(patch)]);
    await eventually(
      `VirtualService ${name}-mesh programmed again`,
      async () => {
        const vs = await getObject<VirtualService>('virtualservice', `${name}-mesh`, namespace);
        return JSON.stringify(vs?.spec.hosts) === JSON.stringify(meshVs.spec.hosts);
      },
      60_000,
    );

    // The history says why: pokes from both VirtualServices reached the Service's workflow (its pass programs its
    // Route's KIngress, ADR 0005).
    const sources = new Set(
      (await pokesTo(`Service/${namespace}/${name}`)).flatMap((p) => [...p.matchAll(/"source":"(VirtualService\/[^"]+)"/g)].map((m) => m[1]!)),
    );
    expect([...sources].sort()).toEqual([`VirtualService/${namespace}/${name}-ingress`, `VirtualService/${namespace}/${name}-mesh`]);
  }, 300_000);
});

describe('a VirtualService deleted while no controller ran (resync at 1 h)', () => {
  const name = 'unwatched';

  it('is programmed again when the next controller starts: its start-up list finds it missing', async () => {
    await readyAfterSweep(name);
    const mesh = (await getObject<VirtualService>('virtualservice', `${name}-mesh`, namespace))!;
    // Within the Service's idle minute (ADR 0006) its run still holds what it last saw, so the start-up list's pokes
    // of the Service, its Route and its KIngress are covered: only the missing VirtualService can say anything.
    await procs.stop(controllerName);
    await kubectl(['delete', 'virtualservice', `${name}-mesh`, '-n', namespace]);
    await startOwnController();
    await madeAgain(`${name}-mesh`, mesh);
    // The history says why: a dependency poke from the missing VirtualService reached the Service's workflow — or,
    // resumed from the bookmark before the Routes and Services had listed, the KIngress's own (ADR 0024).
    const pokes = [...(await pokesTo(`Service/${namespace}/${name}`)), ...(await pokesTo(`Ingress/${namespace}/${name}`))];
    expect(pokes.some((p) => p.includes(`"source":"VirtualService/${namespace}/${name}-mesh","reason":"dependency"`))).toBe(true);
  }, 300_000);
});
