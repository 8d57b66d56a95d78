// `npm run bench:real`: what a user of the stack with a real node sees through its ingress (Traefik in the node's
// network namespace, reached on 127.0.0.1:<ports.ingress> with a Service's host), and what the data path costs.
// 1. create → first 200 through the ingress, per Service: BENCH_REAL_SINGLES (10) Services one after another, then
//    BENCH_REAL_BATCH (20) at once, each polled through the ingress every BENCH_REAL_POLL_MS (50) from its create on;
//    beside it when this process's watch saw the Service Ready (what `kubectl get ksvc` shows), and every request
//    that started after Ready and still failed (Knative's Ready says the Service is served).
// 2. requests/s to one Revision on keep-alive connections, BENCH_REAL_LOAD_SECONDS (30) at each concurrency of
//    BENCH_REAL_CONCURRENCY (1,16,64), with wrk (installed with apt-get as root when missing; Node's own client when
//    it cannot be, or with BENCH_REAL_LOADGEN=node), and the CPU each process on the path used meanwhile.
// 3. RSS at rest of Traefik, containerd, the kubelet, and one pod's queue-proxy and user container.
// By default on a stack of its own (.tidal/bench-real, ports 18xxx, its registry on 127.0.0.1:18543), stopped at the end
// unless BENCH_KEEP_STACK=1 (the next run stops it); TIDAL_REAL_STACK=.tidal measures the running
// `npm run up -- --real-node` stack instead. Its Services live in the namespace bench-real, deleted at the end.
// It asserts nothing.
import { execFile, execSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import path from 'node:path';
import { Resources } from '../api/kinds.js';
import type { KubeObject } from '../api/meta.js';
import type { Service } from '../api/serving.js';
import { KubeClient } from '../kube/client.js';
import { isConflict, KubeApiError } from '../kube/errors.js';
import { startRealNodeRegistry } from '../dev/knative-images.js';
import { ProcessTable } from '../dev/processes.js';
import { stopRegistry } from '../dev/registry.js';
import { devPorts, REAL_NODE_DOMAIN, repoRoot, stackDown, stackUp, type StackPorts } from '../dev/stack.js';
import { makeLogger } from '../workers/logger.js';
import { envList, envNumber, fmt, fmtMs, percentile, progressLog, rssMiB, sleep, spread, table } from './measure.js';
import { benchPorts } from './ports.js';
import { ServiceTimeline } from './timeline.js';

const PREFIX = 18;
const ownPorts: StackPorts = {
  ...benchPorts(PREFIX),
  webhook: PREFIX * 1000 + 843,
  controllerWebhook: PREFIX * 1000 + 844,
  ingress: PREFIX * 1000 + 80,
  ingressPrivate: PREFIX * 1000 + 81,
};
const OWN_REGISTRY_PORT = PREFIX * 1000 + 543;
/** `npm run up`'s registry (dev/cli.ts). */
const DEV_REGISTRY_PORT = 5443;
const ownDir = path.join(repoRoot, '.tidal', 'bench-real');
const reuse = process.env.TIDAL_REAL_STACK;
const keepStack = process.env.BENCH_KEEP_STACK === '1';

const singles = envNumber('BENCH_REAL_SINGLES', 10);
const batch = envNumber('BENCH_REAL_BATCH', 20);
const pollMs = envNumber('BENCH_REAL_POLL_MS', 50);
const loadSeconds = envNumber('BENCH_REAL_LOAD_SECONDS', 30);
const concurrencies = envList('BENCH_REAL_CONCURRENCY', '1,16,64').map(Number);
/** How long the first Service may take to answer: the node pulls its images first. */
const firstServiceSeconds = envNumber('BENCH_REAL_FIRST_SECONDS', 300);
const loadgenChoice = process.env.BENCH_REAL_LOADGEN ?? 'wrk';

const NAMESPACE = 'bench-real';
const IMAGE_NAME = 'helloworld';
/** The Service the load runs against; created first, so it also takes the node's image pulls off the measured ones. */
const LOAD_SERVICE = 'rb-load';
const SERVICE_LABEL = 'serving.knative.dev/service';
const CLOCK_TICKS = 100; // USER_HZ
const progress = progressLog('bench-real');

interface RealStack {
  dir: string;
  kubeconfig: string;
  ports: StackPorts & { ingress: number };
  registryHost: string;
  caPem: string;
  own: boolean;
}

// ── the stack ───────────────────────────────────────────────────────────────────────────────────────────────────

/** Its own stack as test/harness/real-setup.ts starts one: registry, Knative's images pushed, real node, controller. */
async function ownStack(): Promise<RealStack> {
  await stackDown(ownDir, { log: progress });
  await stopRegistry(path.join(ownDir, 'registry'));
  rmSync(ownDir, { recursive: true, force: true });
  mkdirSync(ownDir, { recursive: true });
  progress("building and pushing Knative's images");
  const { registry, caFile, realNode } = await startRealNodeRegistry(ownDir, OWN_REGISTRY_PORT);
  progress('starting the stack with a real node');
  const info = await stackUp({
    dir: ownDir,
    ports: ownPorts,
    ui: false,
    nodes: 0,
    realNode,
    controller: true,
    controllerEnv: { TIDAL_REGISTRY_CA_FILES: caFile },
    log: progress,
  });
  return {
    dir: info.dir,
    kubeconfig: info.kubeconfig,
    ports: { ...ownPorts, ingress: ownPorts.ingress! },
    registryHost: registry.host,
    caPem: registry.caPem ?? '',
    own: true,
  };
}

/** A running `npm run up -- --real-node` stack: its folder, `npm run up`'s ports and registry. */
function reusedStack(rel: string): RealStack {
  const dir = path.resolve(repoRoot, rel);
  return {
    dir,
    kubeconfig: path.join(dir, 'kubeconfig'),
    ports: { ...devPorts, ingress: devPorts.ingress! },
    registryHost: `127.0.0.1:${DEV_REGISTRY_PORT}`,
    caPem: readFileSync(path.join(dir, 'registry-cas.pem'), 'utf8'),
    own: false,
  };
}

const POD_LOGS = '/var/log/pods';

/**
 * Stops the stack, then removes the log folders (`<namespace>_<pod>_<uid>`) its kubelet left in the host's
 * /var/log/pods for pods deleted shortly before: the kubelet removes them at a later cleanup, and it is stopped first.
 */
async function stopOwnStack(): Promise<void> {
  await stackDown(ownDir, { log: progress });
  await stopRegistry(path.join(ownDir, 'registry'));
  let entries: string[] = [];
  try {
    entries = readdirSync(POD_LOGS);
  } catch {
    return;
  }
  for (const e of entries) if (e.startsWith(`${NAMESPACE}_rb-`)) rmSync(path.join(POD_LOGS, e), { recursive: true, force: true });
}

/** Whether the registry has `<repository>:<tag>` (HEAD of its manifest). */
function registryHas(stack: RealStack, repository: string, tag: string): Promise<boolean> {
  return new Promise((resolve) => {
    const req = https.request(
      `https://${stack.registryHost}/v2/${repository}/manifests/${tag}`,
      {
        method: 'HEAD',
        ca: stack.caPem,
        timeout: 5000,
        headers: {
          Accept:
            'application/vnd.oci.image.index.v1+json, application/vnd.oci.image.manifest.v1+json, application/vnd.docker.distribution.manifest.v2+json',
        },
      },
      (res) => {
        res.resume();
        resolve(res.statusCode === 200);
      },
    );
    req.on('error', () => resolve(false));
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.end();
  });
}

// ── Services ────────────────────────────────────────────────────────────────────────────────────────────────────

const hostOf = (name: string) => `${name}.${NAMESPACE}.${REAL_NODE_DOMAIN}`;

/** As dev/sample/helloworld.yaml: Knative's helloworld with an HTTP readiness probe on `/`. */
function helloworld(name: string, image: string): Service {
  return {
    apiVersion: 'serving.knative.dev/v1',
    kind: 'Service',
    metadata: { name, namespace: NAMESPACE },
    spec: { template: { spec: { containers: [{ image, readinessProbe: { httpGet: { path: '/' } } }] } } },
  };
}

/** Creates a Service; a dropped keep-alive connection is retried, and a 409 on a retry means the first got through. */
async function createService(kube: KubeClient, svc: Service): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await kube.create(Resources.Service, svc);
      return;
    } catch (err) {
      if (attempt > 1 && isConflict(err)) return;
      if (err instanceof KubeApiError || attempt >= 5) throw err;
      await sleep(100 * attempt);
    }
  }
}

interface Pod extends KubeObject {
  status?: { phase?: string; containerStatuses?: { name: string; containerID?: string; ready?: boolean }[] };
}

async function podsOf(kube: KubeClient, names: string[]): Promise<Pod[]> {
  const { items } = await kube.list<Pod>(Resources.Pod, NAMESPACE, { labelSelector: SERVICE_LABEL });
  return items.filter((p) => names.includes(p.metadata.labels?.[SERVICE_LABEL] ?? ''));
}

/** Deletes the Services and waits (bounded) until their pods are gone, so the next phase starts from the same node. */
async function deleteServices(kube: KubeClient, names: string[], timeoutMs = 240_000): Promise<void> {
  if (names.length === 0) return;
  for (const n of names) await kube.delete(Resources.Service, NAMESPACE, n);
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const left = (await podsOf(kube, names)).length;
    if (left === 0) return;
    if (performance.now() > deadline) return progress(`${left} pods of the deleted Services still there after ${timeoutMs / 1000} s; going on`);
    await sleep(1000);
  }
}

async function createNamespace(kube: KubeClient): Promise<void> {
  await deleteNamespace(kube, true);
  await kube.create(Resources.Namespace, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NAMESPACE } });
}

/**
 * Deletes every Service in the namespace and waits (bounded) for their pods to go, then the namespace. With `wait`, also
 * until the namespace is gone: the namespace controller rechecks only after the longest grace period its pods had
 * (a Revision's pods get its timeout, 300 s), so that can take minutes after the pods went.
 */
async function deleteNamespace(kube: KubeClient, wait: boolean, timeoutMs = 360_000): Promise<void> {
  const { items } = await kube.list<Service>(Resources.Service, NAMESPACE);
  await deleteServices(
    kube,
    items.map((s) => s.metadata.name ?? ''),
  );
  if (!(await kube.delete(Resources.Namespace, '', NAMESPACE)) || !wait) return;
  progress(`waiting for the namespace ${NAMESPACE} left by an earlier run to go`);
  const deadline = performance.now() + timeoutMs;
  while (await kube.get(Resources.Namespace, '', NAMESPACE)) {
    if (performance.now() > deadline) throw new Error(`namespace ${NAMESPACE} still terminating after ${timeoutMs / 1000} s`);
    await sleep(2000);
  }
}

// ── requests through the ingress ────────────────────────────────────────────────────────────────────────────────

interface Answer {
  status: number;
  body: string;
}

/** One GET through the ingress with `host`; status 0 when the exchange failed (refused, reset, timeout). */
function get(port: number, host: string, agent: http.Agent, timeoutMs: number): Promise<Answer> {
  return new Promise((resolve) => {
    const req = http.get({ host: '127.0.0.1', port, path: '/', agent, headers: { Host: host }, timeout: timeoutMs }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', () => resolve({ status: 0, body: '' }));
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', () => resolve({ status: 0, body: '' }));
  });
}

interface Attempt {
  start: number;
  end: number;
  status: number;
}

interface Polled {
  /** When the first 200 arrived (performance.now()), NaN if none before the deadline. */
  first200: number;
  body: string;
  attempts: Attempt[];
}

/** Polls `host` every `pollMs` (from one request's start to the next's) until a 200 or the deadline. */
async function pollUntil200(port: number, host: string, deadline: number): Promise<Polled> {
  // One keep-alive connection per Service, as a client retrying would hold; each new one is a fork of the socat forward.
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const attempts: Attempt[] = [];
  try {
    while (performance.now() < deadline) {
      const start = performance.now();
      const a = await get(port, host, agent, 2000);
      const end = performance.now();
      attempts.push({ start, end, status: a.status });
      if (a.status === 200) return { first200: end, body: a.body.trim(), attempts };
      const next = start + pollMs;
      if (next > performance.now()) await sleep(next - performance.now());
    }
    return { first200: NaN, body: '', attempts };
  } finally {
    agent.destroy();
  }
}

// ── part 1: create → first 200 ──────────────────────────────────────────────────────────────────────────────────

interface Created {
  name: string;
  created: number;
  firstPodReady: number;
  /** The last of its pods Ready by its first 200 or its Ready, whichever came later: what the Revision waited for. */
  lastPodReady: number;
  ready: number;
  polled: Polled;
}

class CreatePhase {
  constructor(
    readonly kube: KubeClient,
    readonly timeline: ServiceTimeline,
    readonly stack: RealStack,
    readonly image: string,
  ) {}

  /** Creates one Service, polls it until a 200, and waits (bounded) for its Ready as well. */
  async one(name: string, timeoutMs: number): Promise<Created> {
    const created = performance.now();
    await createService(this.kube, helloworld(name, this.image));
    const polled = await pollUntil200(this.stack.ports.ingress, hostOf(name), created + timeoutMs);
    // Ready and the first 200 come close together, in either order: give Ready its chance once a 200 came.
    await this.timeline.waitUntil(() => this.timeline.serviceReady(name) !== undefined, Math.max(30_000, created + timeoutMs - performance.now()));
    const ready = this.timeline.serviceReady(name) ?? NaN;
    const by = Math.max(ready, polled.first200);
    const pods = [...(this.timeline.podsReady.get(`${name}-00001`)?.values() ?? [])];
    const before = Number.isNaN(by) ? pods : pods.filter((t) => t <= by);
    return {
      name,
      created,
      firstPodReady: pods.length ? Math.min(...pods) : NaN,
      lastPodReady: before.length ? Math.max(...before) : NaN,
      ready,
      polled,
    };
  }

  async sequential(names: string[], timeoutMs: number): Promise<Created[]> {
    const out: Created[] = [];
    for (const n of names) {
      out.push(await this.one(n, timeoutMs));
      progress(`${n}: first 200 after ${fmtMs(out.at(-1)!.polled.first200 - out.at(-1)!.created)}`);
    }
    return out;
  }

  async atOnce(names: string[], timeoutMs: number): Promise<Created[]> {
    return Promise.all(names.map((n) => this.one(n, timeoutMs)));
  }
}

/** Requests that started after the Service was seen Ready and still failed: Ready before a request could succeed. */
function failedAfterReady(c: Created): Attempt[] {
  return Number.isNaN(c.ready) ? [] : c.polled.attempts.filter((a) => a.start >= c.ready && a.status !== 200);
}

function statusCounts(results: Created[]): string {
  const counts = new Map<number, number>();
  for (const r of results) for (const a of r.polled.attempts) counts.set(a.status, (counts.get(a.status) ?? 0) + 1);
  return [...counts.entries()]
    .sort((a, b) => a[0] - b[0])
    .map(([s, n]) => `${s === 0 ? 'no answer' : s} ×${n}`)
    .join(', ');
}

function printCreate(title: string, results: Created[], atOnce = false): void {
  const served = results.filter((r) => !Number.isNaN(r.polled.first200)).length;
  const ready = results.filter((r) => !Number.isNaN(r.ready)).length;
  console.log(`\n── ${title}: ${served} of ${results.length} served, ${ready} Ready`);
  const row = (what: string, values: number[]) => {
    const s = spread(values);
    const min = Math.min(...values.map((v) => (Number.isNaN(v) ? Infinity : v)));
    return [what, fmtMs(s.p50), fmtMs(s.p95), fmtMs(s.max), fmtMs(min)];
  };
  console.log(
    table(
      ['per Service', 'p50', 'p95', 'max', 'min'],
      [
        row(
          'create → first pod Ready',
          results.map((r) => r.firstPodReady - r.created),
        ),
        row(
          'create → last pod Ready (of min-scale)',
          results.map((r) => r.lastPodReady - r.created),
        ),
        row(
          'create → Service Ready (watch)',
          results.map((r) => r.ready - r.created),
        ),
        row(
          'create → first 200 through the ingress',
          results.map((r) => r.polled.first200 - r.created),
        ),
        row(
          'Ready → first 200 (+: Ready came first)',
          results.map((r) => r.polled.first200 - r.ready),
        ),
        row(
          'first pod Ready → first 200',
          results.map((r) => r.polled.first200 - r.firstPodReady),
        ),
        row(
          'last pod Ready → first 200',
          results.map((r) => r.polled.first200 - r.lastPodReady),
        ),
      ],
    ),
  );
  if (atOnce) {
    const t0 = Math.min(...results.map((r) => r.created));
    const last = Math.max(...results.map((r) => (Number.isNaN(r.polled.first200) ? Infinity : r.polled.first200)));
    console.log(`first create → every Service served: ${fmtMs(last - t0)}`);
  }
  console.log(`answers while polling: ${statusCounts(results)}`);
  const bodies = new Set(results.map((r) => r.polled.body).filter((b) => b !== ''));
  console.log(`first 200's body: ${[...bodies].map((b) => JSON.stringify(b.slice(0, 60))).join(', ') || '—'}`);
  const early = results.map((r) => ({ r, failed: failedAfterReady(r) })).filter((x) => x.failed.length > 0);
  if (early.length === 0) console.log('Ready before a request could succeed: none (no request started after Ready failed)');
  for (const { r, failed } of early) {
    const statuses = [...new Set(failed.map((a) => a.status))].join('/');
    console.log(
      `Ready before a request could succeed: ${r.name} — ${failed.length} requests started after Ready failed (${statuses}), the first 200 ${fmtMs(r.polled.first200 - r.ready)} after Ready`,
    );
  }
}

// ── CPU and memory from /proc ───────────────────────────────────────────────────────────────────────────────────

interface ProcStat {
  ppid: number;
  /** utime + stime + cutime + cstime in seconds: its own CPU and that of the children it reaped. */
  cpu: number;
  /** utime + stime: its own only (a shim's children are its pod's containers, counted apart). */
  self: number;
}

function readStat(pid: number): ProcStat | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = text.slice(text.lastIndexOf(') ') + 2).split(' ');
    const self = (Number(f[11]) + Number(f[12])) / CLOCK_TICKS;
    return { ppid: Number(f[1]), cpu: self + (Number(f[13]) + Number(f[14])) / CLOCK_TICKS, self };
  } catch {
    return undefined;
  }
}

const pids = () =>
  readdirSync('/proc')
    .filter((e) => /^\d+$/.test(e))
    .map(Number);

interface Snapshot {
  at: number;
  stats: Map<number, ProcStat>;
  /** Busy CPU seconds of the whole machine (/proc/stat: all but idle and iowait). */
  machine: number;
}

function snapshot(): Snapshot {
  const stats = new Map<number, ProcStat>();
  for (const pid of pids()) {
    const st = readStat(pid);
    if (st) stats.set(pid, st);
  }
  const cpu = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
  const busy = cpu.reduce((a, b) => a + b, 0) - (cpu[3] ?? 0) - (cpu[4] ?? 0);
  return { at: performance.now(), stats, machine: busy / CLOCK_TICKS };
}

/** CPU seconds of the roots and all their descendants in a snapshot (a forking socat's children included). */
function treeCpu(s: Snapshot, roots: number[]): number {
  const children = new Map<number, number[]>();
  for (const [pid, st] of s.stats) children.set(st.ppid, [...(children.get(st.ppid) ?? []), pid]);
  let sum = 0;
  const queue = roots.filter((r) => s.stats.has(r));
  const seen = new Set<number>();
  while (queue.length) {
    const pid = queue.shift()!;
    if (seen.has(pid)) continue;
    seen.add(pid);
    sum += s.stats.get(pid)?.cpu ?? 0;
    queue.push(...(children.get(pid) ?? []));
  }
  return sum;
}

const selfCpu = (s: Snapshot, ps: number[]) => ps.reduce((a, p) => a + (s.stats.get(p)?.self ?? 0), 0);

/** The processes of the containers with these ids (runc puts each in the cgroup `/k8s.io/<id>`). */
function containerPids(ids: string[]): number[] {
  const out: number[] = [];
  for (const pid of pids()) {
    try {
      const cg = readFileSync(`/proc/${pid}/cgroup`, 'utf8');
      if (ids.some((id) => cg.includes(id))) out.push(pid);
    } catch {
      /* exited */
    }
  }
  return out;
}

function cmdline(pid: number): string[] {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
  } catch {
    return [];
  }
}

interface PodProcesses {
  pods: number;
  queue: number[];
  user: number[];
  /** One pod's: what memory at rest is read from. */
  firstQueue: number[];
  firstUser: number[];
}

const containerId = (id: string | undefined) => (id ?? '').replace(/^[a-z]+:\/\//, '');

/** The queue-proxy and user-container processes of a Service's running pods. */
async function podProcesses(kube: KubeClient, name: string): Promise<PodProcesses> {
  const pods = (await podsOf(kube, [name])).filter((p) => p.status?.phase === 'Running' && !p.metadata.deletionTimestamp);
  const ids = (pod: Pod | undefined, container: string) =>
    (pod?.status?.containerStatuses ?? []).filter((c) => c.name === container).map((c) => containerId(c.containerID));
  const all = (container: string) => containerPids(pods.flatMap((p) => ids(p, container)));
  return {
    pods: pods.length,
    queue: all('queue-proxy'),
    user: all('user-container'),
    firstQueue: containerPids(ids(pods[0], 'queue-proxy')),
    firstUser: containerPids(ids(pods[0], 'user-container')),
  };
}

/** The pid of a process of the stack's table (the forwards and Traefik are started through nsenter, which execs). */
function stackPid(dir: string, name: string): number[] {
  const rec = new ProcessTable(dir).running(name);
  return rec ? [rec.pid] : [];
}

/** The runtime's shims of this node: containerd-shim-runc-v2 processes whose -address is this node's socket. */
function shimPids(apiserverPort: number): number[] {
  const socket = `/run/tidal-${apiserverPort}/`;
  return pids().filter((pid) => {
    const args = cmdline(pid);
    return (args[0] ?? '').includes('containerd-shim') && args.some((a) => a.startsWith(socket));
  });
}

const rssSum = (ps: number[]) => ps.reduce((a, p) => a + (rssMiB(p) || 0), 0);

interface MemoryReading {
  traefik: number;
  containerd: number;
  kubelet: number;
  shims: { count: number; total: number };
  queue: number;
  user: number;
  pods: number;
}

async function memory(kube: KubeClient, stack: RealStack): Promise<MemoryReading> {
  const pp = await podProcesses(kube, LOAD_SERVICE);
  const shims = shimPids(stack.ports.apiserver);
  const { items } = await kube.list<Pod>(Resources.Pod);
  return {
    traefik: rssSum(stackPid(stack.dir, 'traefik')),
    containerd: rssSum(stackPid(stack.dir, 'containerd')),
    kubelet: rssSum(stackPid(stack.dir, 'kubelet')),
    shims: { count: shims.length, total: rssSum(shims) },
    queue: rssSum(pp.firstQueue),
    user: rssSum(pp.firstUser),
    pods: items.filter((p) => p.status?.phase === 'Running').length,
  };
}

// ── part 2: load ────────────────────────────────────────────────────────────────────────────────────────────────

interface LoadResult {
  concurrency: number;
  tool: string;
  seconds: number;
  requests: number;
  rps: number;
  p50: number;
  p99: number;
  /** Non-2xx/3xx answers and failed exchanges. */
  errors: number;
  /** What the errors were. */
  errorKinds: string;
  /** CPU seconds the load generator used. */
  loadgenCpu: number;
}

const has = (cmd: string) => {
  try {
    execSync(`command -v ${cmd}`, { stdio: 'ignore', shell: '/bin/bash' });
    return true;
  } catch {
    return false;
  }
};

/** wrk from Debian, installed as dev/ensure-deps.mjs installs the stack's packages: only root can, so only root does. */
function ensureWrk(): boolean {
  if (has('wrk')) return true;
  if (process.getuid?.() !== 0) {
    progress('wrk is missing (sudo apt-get install -y wrk); using Node’s HTTP client instead');
    return false;
  }
  progress('installing wrk (apt-get)');
  try {
    execSync('apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wrk', { stdio: 'inherit', shell: '/bin/bash' });
    return has('wrk');
  } catch (err) {
    progress(`apt-get install wrk failed (${err instanceof Error ? err.message.split('\n')[0] : String(err)}); using Node’s HTTP client instead`);
    return false;
  }
}

/** `1.23ms`, `456.78us`, `2.01s`, `1.00m` → ms. */
function wrkDuration(s: string | undefined): number {
  const m = /^([\d.]+)(us|ms|s|m)$/.exec(s ?? '');
  if (!m) return NaN;
  const scale: Record<string, number> = { us: 0.001, ms: 1, s: 1000, m: 60_000 };
  return Number(m[1]) * scale[m[2]!]!;
}

/**
 * wrk on keep-alive connections; its CPU read from the shell that ran it (cutime + cstime once it reaped wrk), which
 * counts all of wrk's threads to its last tick.
 */
function wrkLoad(port: number, host: string, concurrency: number, seconds: number): Promise<LoadResult> {
  const threads = Math.min(2, concurrency);
  const args = [`-t${threads}`, `-c${concurrency}`, `-d${seconds}s`, '--latency', '-H', `Host: ${host}`, `http://127.0.0.1:${port}/`];
  const script = 'wrk "$@"; rc=$?; cat /proc/$$/stat >&2; exit $rc';
  return new Promise((resolve, reject) => {
    execFile('bash', ['-c', script, 'wrk', ...args], { maxBuffer: 16 * 1024 * 1024 }, (err, stdout, stderr) => {
      if (err) return reject(new Error(`wrk ${args.join(' ')}: ${stderr || err.message}`));
      const statLine = stderr.trim().split('\n').at(-1) ?? '';
      const f = statLine.slice(statLine.lastIndexOf(') ') + 2).split(' ');
      const loadgenCpu = (Number(f[13]) + Number(f[14])) / CLOCK_TICKS;
      const pct = (p: string) => wrkDuration(new RegExp(`^\\s+${p}%\\s+(\\S+)`, 'm').exec(stdout)?.[1]);
      const done = /(\d+) requests in ([\d.]+)(\w+)/.exec(stdout);
      const socket = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(stdout);
      const non2xx = Number(/Non-2xx or 3xx responses: (\d+)/.exec(stdout)?.[1] ?? 0);
      resolve({
        concurrency,
        tool: `wrk -t${threads}`,
        seconds: wrkDuration(`${done?.[2]}${done?.[3]}`) / 1000,
        requests: Number(done?.[1] ?? NaN),
        rps: Number(/Requests\/sec:\s+([\d.]+)/.exec(stdout)?.[1] ?? NaN),
        p50: pct('50'),
        p99: pct('99'),
        errors: non2xx + (socket ? socket.slice(1).reduce((a, b) => a + Number(b), 0) : 0),
        errorKinds: [
          ...(non2xx ? [`${non2xx} non-2xx`] : []),
          ...['connect', 'read', 'write', 'timeout'].flatMap((k, i) => (Number(socket?.[i + 1] ?? 0) ? [`${socket?.[i + 1]} ${k}`] : [])),
        ].join(', '),
        loadgenCpu,
      });
    });
  });
}

/** The fallback: this process's own client, `concurrency` requests in flight on as many keep-alive connections. */
async function nodeLoad(port: number, host: string, concurrency: number, seconds: number): Promise<LoadResult> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency });
  const latencies: number[] = [];
  let errors = 0;
  let failed = 0;
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const end = t0 + seconds * 1000;
  const worker = async () => {
    while (performance.now() < end) {
      const start = performance.now();
      const a = await get(port, host, agent, 10_000);
      latencies.push(performance.now() - start);
      if (a.status < 200 || a.status >= 400) errors++;
      if (a.status === 0) failed++;
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  const wall = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  agent.destroy();
  return {
    concurrency,
    tool: 'node',
    seconds: wall,
    requests: latencies.length,
    rps: latencies.length / wall,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    errors,
    errorKinds: [...(errors - failed ? [`${errors - failed} non-2xx`] : []), ...(failed ? [`${failed} failed`] : [])].join(', '),
    loadgenCpu: (cpu.user + cpu.system) / 1e6,
  };
}

interface CpuRow {
  what: string;
  /** % of one core over the window. */
  pct: number;
}

interface Window {
  /** Undefined for the idle window before the runs. */
  result: LoadResult | undefined;
  cpu: CpuRow[];
  /** The whole machine's busy CPU, % of one core. */
  machine: number;
}

interface CpuGroup {
  what: string;
  cpu: (s: Snapshot) => number;
}

const IDLE_SECONDS = 10;

class LoadPhase {
  readonly windows: Window[] = [];
  readonly useWrk: boolean;
  pods = 0;

  constructor(
    readonly kube: KubeClient,
    readonly stack: RealStack,
  ) {
    this.useWrk = loadgenChoice !== 'node' && ensureWrk();
  }

  generate(concurrency: number, seconds: number): Promise<LoadResult> {
    const host = hostOf(LOAD_SERVICE);
    return this.useWrk
      ? wrkLoad(this.stack.ports.ingress, host, concurrency, seconds)
      : nodeLoad(this.stack.ports.ingress, host, concurrency, seconds);
  }

  /**
   * The processes a window reports: those on the request path (the pods' by their containers' cgroups), the node's,
   * and the rest of this stack; what is left of the machine's busy time is other processes (other stacks, builds).
   */
  async groups(): Promise<CpuGroup[]> {
    const pp = await podProcesses(this.kube, LOAD_SERVICE);
    this.pods = pp.pods;
    const dir = this.stack.dir;
    const onPath = ['traefik', 'node-fwd-ingress-host', 'node-fwd-ingress-node'];
    const node = ['kubelet', 'containerd'];
    const rest = new ProcessTable(dir)
      .read()
      .filter((r) => !onPath.includes(r.name) && !node.includes(r.name))
      .flatMap((r) => stackPid(dir, r.name));
    const registry = stackPid(path.join(dir, 'registry'), 'docker-registry');
    const shims = shimPids(this.stack.ports.apiserver);
    const forwards = [...stackPid(dir, 'node-fwd-ingress-host'), ...stackPid(dir, 'node-fwd-ingress-node')];
    return [
      { what: `queue-proxy (/ko-app/queue, ${pp.pods} pods)`, cpu: (s) => treeCpu(s, pp.queue) },
      { what: `user container (/ko-app/${IMAGE_NAME}, ${pp.pods} pods)`, cpu: (s) => treeCpu(s, pp.user) },
      { what: 'traefik', cpu: (s) => treeCpu(s, stackPid(dir, 'traefik')) },
      { what: 'socat forwards of the ingress (host → socket → node)', cpu: (s) => treeCpu(s, forwards) },
      { what: "containerd (the CRI plugin copies the containers' logs)", cpu: (s) => treeCpu(s, stackPid(dir, 'containerd')) },
      { what: `containerd-shim-runc-v2 (${shims.length})`, cpu: (s) => selfCpu(s, shims) },
      { what: 'kubelet', cpu: (s) => treeCpu(s, stackPid(dir, 'kubelet')) },
      { what: "this stack's control plane and other forwards", cpu: (s) => treeCpu(s, [...rest, ...registry]) },
    ];
  }

  /** CPU over `work` (the load, or a pause for the idle window). */
  async window(work: () => Promise<LoadResult | undefined>): Promise<Window> {
    const groups = await this.groups();
    const before = snapshot();
    const result = await work();
    // A forward's per-connection children exit with the connections: their CPU reaches the parent once reaped.
    if (result) await sleep(200);
    const after = snapshot();
    const wall = (after.at - before.at - (result ? 200 : 0)) / 1000;
    const pct = (cpuSeconds: number) => (cpuSeconds / wall) * 100;
    const cpu: CpuRow[] = groups.map((g) => ({ what: g.what, pct: pct(g.cpu(after) - g.cpu(before)) }));
    cpu.push({ what: 'load generator', pct: result ? pct(result.loadgenCpu) : 0 });
    const machine = pct(after.machine - before.machine);
    cpu.push({ what: 'other processes (other stacks, builds, tests)', pct: machine - cpu.reduce((a, r) => a + r.pct, 0) });
    const w: Window = { result, cpu, machine };
    this.windows.push(w);
    return w;
  }

  async idle(): Promise<void> {
    progress(`CPU with no load, ${IDLE_SECONDS} s`);
    await this.window(async () => {
      await sleep(IDLE_SECONDS * 1000);
      return undefined;
    });
  }

  async run(concurrency: number): Promise<void> {
    progress(`load: ${concurrency} connections for ${loadSeconds} s (${this.useWrk ? 'wrk' : 'node'})`);
    await this.window(() => this.generate(concurrency, loadSeconds));
  }

  print(): void {
    const runs = this.windows.filter((w): w is Window & { result: LoadResult } => w.result !== undefined);
    console.log(
      `\n── Requests/s through the ingress to one Revision (${LOAD_SERVICE}, ${this.pods} pods), ${loadSeconds} s per concurrency, keep-alive`,
    );
    console.log(
      table(
        ['connections', 'tool', 'requests', 'req/s', 'p50', 'p99', 'errors (wrk: socket errors by kind; 2 s timeout)'],
        runs.map(({ result: r }) => [
          String(r.concurrency),
          r.tool,
          String(r.requests),
          fmt(r.rps, 0),
          `${fmt(r.p50, 2)} ms`,
          `${fmt(r.p99, 2)} ms`,
          r.errors ? `${r.errors} (${r.errorKinds})` : '0',
        ]),
      ),
    );
    const cores = 100 * Number(execSync('nproc', { encoding: 'utf8' }).trim());
    console.log(`\nCPU over each window, % of one core (the machine has ${cores} %); "idle": ${IDLE_SECONDS} s with no load before the runs:`);
    const whats = this.windows[0]?.cpu.map((c) => c.what) ?? [];
    console.log(
      table(
        ['process', ...this.windows.map((w) => (w.result ? `c=${w.result.concurrency}` : 'idle'))],
        [
          ...whats.map((what, i) => [what, ...this.windows.map((w) => fmt(w.cpu[i]?.pct, 0))]),
          ['machine, all busy', ...this.windows.map((w) => fmt(w.machine, 0))],
        ],
      ),
    );
    for (const w of runs) {
      // The first four groups serve the requests: queue-proxy, the user container, Traefik and the forwards.
      const onPath = w.cpu.slice(0, 4).reduce((a, r) => a + r.pct, 0);
      const top = [...w.cpu.slice(0, -1)].sort((a, b) => b.pct - a.pct);
      const saturated = w.machine >= 0.9 * cores;
      console.log(
        `c=${w.result.concurrency}: machine ${fmt(w.machine, 0)} of ${cores} % (${saturated ? 'saturated' : 'not saturated'}); serving ${fmt(onPath, 0)} %; ` +
          `most CPU: ${top
            .slice(0, 3)
            .map((t) => `${t.what} ${fmt(t.pct, 0)} %`)
            .join(', ')}; ${fmt((w.result.rps * 100) / Math.max(1, onPath), 0)} requests per CPU-second of serving`,
      );
    }
  }
}

// ── main ────────────────────────────────────────────────────────────────────────────────────────────────────────

function printMemory(label: string, m: MemoryReading): void {
  console.log(`\n── Memory (RSS) ${label}, ${m.pods} pods running on the node`);
  console.log(
    table(
      ['process', 'RSS'],
      [
        ['traefik', `${fmt(m.traefik, 1)} MiB`],
        ['containerd', `${fmt(m.containerd, 1)} MiB`],
        ['kubelet', `${fmt(m.kubelet, 1)} MiB`],
        [
          `containerd-shim-runc-v2 (${m.shims.count}, one per pod)`,
          `${fmt(m.shims.total, 1)} MiB (${fmt(m.shims.total / Math.max(1, m.shims.count), 1)} each)`,
        ],
        ["one pod's queue-proxy (/ko-app/queue)", `${fmt(m.queue, 1)} MiB`],
        [`one pod's user container (/ko-app/${IMAGE_NAME})`, `${fmt(m.user, 1)} MiB`],
      ],
    ),
  );
}

async function main(): Promise<void> {
  const started = new Date();
  const stack = reuse ? reusedStack(reuse) : await ownStack();
  const kube = new KubeClient({ kubeconfig: stack.kubeconfig, fieldManager: 'bench-real' });
  const timeline = new ServiceTimeline(kube, makeLogger('warn', 'bench-real'), { workloads: true });
  try {
    const image = `${stack.registryHost}/knative/${IMAGE_NAME}:latest`;
    if (!(await registryHas(stack, `knative/${IMAGE_NAME}`, 'latest'))) throw new Error(`${image} is not in the stack's registry`);
    await createNamespace(kube);
    await timeline.start();
    console.log(
      `Real-node benchmark (${started.toISOString()}): ${stack.own ? `own stack in ${stack.dir}` : `the running stack in ${stack.dir}`}, ingress 127.0.0.1:${stack.ports.ingress}, image ${image}; poll every ${pollMs} ms`,
    );
    const create = new CreatePhase(kube, timeline, stack, image);

    // The first Service pulls helloworld and queue-proxy onto the node; it stays, as the load's target.
    progress(`first Service ${LOAD_SERVICE} (the node pulls the images); waiting up to ${firstServiceSeconds} s for a 200 through the ingress`);
    const first = await create.one(LOAD_SERVICE, firstServiceSeconds * 1000);
    printCreate('first Service on the node (image pulls included)', [first]);
    if (Number.isNaN(first.polled.first200)) {
      const last = first.polled.attempts.at(-1);
      throw new Error(`no 200 through the ingress for ${hostOf(LOAD_SERVICE)} in ${firstServiceSeconds} s (last answer: ${last?.status ?? 'none'})`);
    }

    if (singles > 0) {
      const names = Array.from({ length: singles }, (_, i) => `rb-seq-${i + 1}`);
      progress(`${singles} Services one after another`);
      printCreate(`${singles} Service${singles === 1 ? '' : 's'} one after another`, await create.sequential(names, 180_000));
      progress('deleting them; waiting for their pods to go');
      await deleteServices(kube, names);
    }
    if (batch > 0) {
      const names = Array.from({ length: batch }, (_, i) => `rb-batch-${i + 1}`);
      progress(`${batch} Services at once`);
      printCreate(`${batch} Services created at once`, await create.atOnce(names, 120_000 + 6_000 * batch), true);
      progress('deleting them; waiting for their pods to go');
      await deleteServices(kube, names);
    }

    progress('memory at rest (15 s after the last pods went)');
    await sleep(15_000);
    const rest = await memory(kube, stack);

    const load = new LoadPhase(kube, stack);
    await load.idle();
    // Unmeasured: connections between Traefik and the pods made, and the Go runtimes' heaps grown, before the runs.
    progress('load warm-up, 5 s');
    await load.generate(Math.max(...concurrencies), 5);
    for (const c of concurrencies) await load.run(c);
    const afterLoad = await memory(kube, stack);
    load.print();
    printMemory('at rest, before the load', rest);
    printMemory('right after the load', afterLoad);
    progress(`done in ${progress.elapsed().toFixed(0)} s`);
  } finally {
    await timeline.close();
    progress(`deleting the namespace ${NAMESPACE} and its Services`);
    await deleteNamespace(kube, false).catch((err: unknown) => progress(`cleaning up ${NAMESPACE} failed: ${String(err)}`));
    kube.close();
    if (stack.own) {
      if (keepStack) progress(`stack kept: KUBECONFIG=${stack.kubeconfig}, ingress 127.0.0.1:${stack.ports.ingress} (the next run stops it)`);
      else await stopOwnStack();
    }
  }
}

main().catch(async (err: unknown) => {
  console.error(err);
  if (!reuse && !keepStack) await stopOwnStack().catch(() => {});
  process.exit(1);
});
