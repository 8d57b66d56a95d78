// Time from `create Service` to `Revision Ready`, for batches of Services created at once.
import path from 'node:path';
import { rmSync, readFileSync } from 'node:fs';
import { Client, Connection } from '@temporalio/client';
import { Resources, type ResourceType } from '../api/kinds.js';
import type { KubeObject } from '../api/meta.js';
import type { Service } from '../api/serving.js';
import { KubeClient } from '../activities/kube/client.js';
import { repoRoot, stackDown, stackUp, type StackPorts } from '../dev/stack.js';
import { ProcessTable } from '../dev/processes.js';
import { Informer } from '../watcher/informer.js';
import { makeLogger } from '../workers/logger.js';

const ports: StackPorts = {
  etcdClient: 32379,
  etcdPeer: 32380,
  apiserver: 36443,
  controllerManager: 40257,
  scheduler: 40259,
  temporal: 37233,
  temporalUi: 38233,
  temporalHttp: 37243,
  temporalMetrics: 37244,
  controllerMetrics: 39464,
};
const dir = path.join(repoRoot, '.tidal', 'bench');
const counts = (process.env.BENCH_COUNTS ?? '1,50').split(',').map(Number);
const log = makeLogger('warn', 'bench');

/** CPU seconds (user + system) a process has used so far, from /proc. */
function cpuSeconds(pid: number | undefined): number {
  if (pid === undefined) return NaN;
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100; // utime, stime in clock ticks (USER_HZ = 100)
}

function rssMiB(pid: number | undefined): number {
  if (pid === undefined) return NaN;
  return Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]) / 1024;
}

function pct(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? NaN;
}

/** Write requests (POST, PUT, PATCH, DELETE) Tidal's controller has made, from its Prometheus metrics. */
async function tidalWrites(): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${ports.controllerMetrics}/metrics`)).text();
  let sum = 0;
  for (const line of text.split('\n')) {
    const m = /^tidal_kube_requests_total\{[^}]*verb="(POST|PUT|PATCH|DELETE)"[^}]*\} (\d+)/.exec(line);
    if (m) sum += Number(m[2]);
  }
  return sum;
}

function service(name: string): Service {
  return {
    apiVersion: 'serving.knative.dev/v1',
    kind: 'Service',
    metadata: { name, namespace: 'default' },
    spec: { template: { spec: { containers: [{ image: 'nginx:1.27', ports: [{ containerPort: 80 }] }] } } },
  };
}

/** Reconcile passes per workflow of one Service, read from each workflow's `state` query (0 when it never ran). */
async function passesOf(client: Client, name: string, revisions: string[]): Promise<Record<string, number>> {
  const ids = [
    `Service/default/${name}`,
    `Configuration/default/${name}`,
    `Route/default/${name}`,
    `Ingress/default/${name}`,
    ...revisions.map((r) => `Revision/default/${r}`),
  ];
  const out: Record<string, number> = {};
  for (const id of ids) {
    const [kind, , objName] = id.split('/') as [string, string, string];
    const label = kind === 'Revision' ? objName : kind;
    // A workflow that never ran (or is gone) counts 0 passes.
    out[label] = await client.workflow
      .getHandle(id)
      .query<{ totalReconciles: number }>('state')
      .then((st) => st.totalReconciles)
      .catch(() => 0);
  }
  return out;
}

/** Waits until no workflow of the Service has run a pass for `quietMs`. */
async function settledPasses(client: Client, name: string, revisions: string[], quietMs = 3000): Promise<Record<string, number>> {
  let last = JSON.stringify(await passesOf(client, name, revisions));
  let since = Date.now();
  for (;;) {
    await new Promise((r) => setTimeout(r, 250));
    const now = JSON.stringify(await passesOf(client, name, revisions));
    if (now !== last) [last, since] = [now, Date.now()];
    else if (Date.now() - since >= quietMs) return JSON.parse(now) as Record<string, number>;
  }
}

/** Passes per object for one Service create and for one image update (issue 8 item 4: fewer passes, none lost). */
async function countPasses(kube: KubeClient, client: Client, serviceReadyAt: Map<string, number>): Promise<void> {
  const name = 'passes';
  await kube.create(Resources.Service, service(name));
  while (!serviceReadyAt.has(name)) await new Promise((r) => setTimeout(r, 50));
  const created = await settledPasses(client, name, [`${name}-00001`]);
  await kube.mergePatch(Resources.Service, 'default', name, {
    spec: { template: { spec: { containers: [{ image: 'nginx:1.28', ports: [{ containerPort: 80 }] }] } } },
  });
  const deadline = Date.now() + 120_000;
  for (;;) {
    const svc = await kube.get<Service>(Resources.Service, 'default', name);
    const ready = svc?.status?.conditions?.find((c) => c.type === 'Ready')?.status === 'True';
    if ((ready && svc?.status?.latestReadyRevisionName === `${name}-00002`) || Date.now() > deadline) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  const updated = await settledPasses(client, name, [`${name}-00001`, `${name}-00002`]);
  const total = (o: Record<string, number>) => Object.values(o).reduce((a, b) => a + b, 0);
  console.log(`\npasses for one Service create: ${JSON.stringify(created)} (total ${total(created)})`);
  const delta = Object.fromEntries(Object.entries(updated).map(([k, v]) => [k, v - (created[k] ?? 0)]));
  console.log(`passes for one image update:   ${JSON.stringify(delta)} (total ${total(delta)})`);
}

async function main(): Promise<void> {
  await stackDown(dir);
  rmSync(dir, { recursive: true, force: true });
  const info = await stackUp({ dir, ports, ui: false, nodes: 2, controller: true, log: (s) => console.error(`[bench] ${s}`) });
  const kube = new KubeClient({ kubeconfig: info.kubeconfig, fieldManager: 'bench' });
  const readyAt = new Map<string, number>();
  const serviceReadyAt = new Map<string, number>();
  // When each Service, and the first Revision of each Service, was first seen Ready.
  const readyInformer = async (type: ResourceType, keyOf: (o: KubeObject) => string | undefined, seen: Map<string, number>) => {
    const informer = new Informer(
      kube,
      type,
      {
        relistMs: 3_600_000,
        maxBackoffMs: 1000,
        onChange: (_t, obj: KubeObject) => {
          const ready = (obj as Service).status?.conditions?.find((c) => c.type === 'Ready')?.status === 'True';
          const key = keyOf(obj);
          if (ready && key && !seen.has(key)) seen.set(key, performance.now());
        },
      },
      log,
    );
    informer.start();
    await informer.synced;
    return informer;
  };
  const services = await readyInformer(Resources.Service, (o) => o.metadata.name, serviceReadyAt);
  const revisions = await readyInformer(Resources.Revision, (o) => o.metadata.labels?.['serving.knative.dev/service'], readyAt);
  const connection = await Connection.connect({ address: info.temporalAddress });
  const client = new Client({ connection });

  console.log('\nTidal: create N Services at once → Revision Ready and → Service Ready (local stack, kwok nodes, 2 cores)');
  const procs = new ProcessTable(dir);
  const controllerPid = procs.running('tidal-controller')?.pid;
  const temporalPid = procs.running('temporal')?.pid;
  console.log('N\trev p50\trev p95\tsvc p50\tsvc p95\tsvc max\tall ready s\tServices/s\tAPI writes/Service\tCPU s/Service (Tidal + Temporal)');
  for (const n of counts) {
    const cpuBefore = [cpuSeconds(controllerPid), cpuSeconds(temporalPid)];
    const names = Array.from({ length: n }, (_, i) => `b${n}-${i}`);
    const start = new Map<string, number>();
    const t0 = performance.now();
    await Promise.all(
      names.map(async (name) => {
        start.set(name, performance.now());
        await kube.create(Resources.Service, service(name));
      }),
    );
    const writesBefore = await tidalWrites();
    const deadline = Date.now() + 600_000;
    while (names.some((x) => !serviceReadyAt.has(x) || !readyAt.has(x)) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    // Let the echoes settle, then count what Tidal wrote for this batch.
    await new Promise((r) => setTimeout(r, 3000));
    const writes = ((await tidalWrites()) - writesBefore) / n;
    // CPU over the batch including the 3 s settle: what creating these Services cost, idle included.
    const cpuTidal = (cpuSeconds(controllerPid) - cpuBefore[0]!) / n;
    const cpuTemporal = (cpuSeconds(temporalPid) - cpuBefore[1]!) / n;
    const rev = names.map((x) => (readyAt.get(x) ?? NaN) - (start.get(x) ?? 0)).sort((a, b) => a - b);
    const svc = names.map((x) => (serviceReadyAt.get(x) ?? NaN) - (start.get(x) ?? 0)).sort((a, b) => a - b);
    const all = (Math.max(...names.map((x) => serviceReadyAt.get(x) ?? NaN)) - t0) / 1000;
    console.log(
      `${n}\t${pct(rev, 50).toFixed(0)}\t${pct(rev, 95).toFixed(0)}\t${pct(svc, 50).toFixed(0)}\t${pct(svc, 95).toFixed(0)}\t${svc.at(-1)?.toFixed(0)}\t${all.toFixed(2)}\t${(n / all).toFixed(1)}\t${writes.toFixed(1)}\t${(cpuTidal + cpuTemporal).toFixed(2)} (${cpuTidal.toFixed(2)} + ${cpuTemporal.toFixed(2)})`,
    );
  }

  await countPasses(kube, client, serviceReadyAt);

  // What a reconcile pass costs in history: events per pass, from one Service's three workflows.
  const sample = `b${counts[0]}-0`;
  await new Promise((r) => setTimeout(r, 3000));
  for (const [kind, name] of [
    ['Service', sample],
    ['Configuration', sample],
    ['Revision', `${sample}-00001`],
  ] as const) {
    const handle = client.workflow.getHandle(`${kind}/default/${name}`);
    const st = await handle.query<{ totalReconciles: number; totalPokes: number }>('state');
    const events = (await handle.fetchHistory()).events?.length ?? 0;
    console.log(
      `history ${kind}/default/${name}: ${events} events, ${st.totalReconciles} passes, ${st.totalPokes} pokes → ${(events / st.totalReconciles).toFixed(1)} events/pass`,
    );
  }
  console.log(`RSS after the run: controller ${rssMiB(controllerPid).toFixed(0)} MiB, Temporal server ${rssMiB(temporalPid).toFixed(0)} MiB`);
  await revisions.close();
  await services.close();
  await connection.close();
  kube.close();
  await stackDown(dir);
}

main().catch(async (err: unknown) => {
  console.error(err);
  await stackDown(dir);
  process.exit(1);
});
