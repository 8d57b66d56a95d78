// The local stack's real node: a kubelet and containerd (with runc) registered with the stack's API server, whose pods
// run for real on a bridge inside a network namespace the stack makes (`tidal-<API server port>`). The host's own
// namespace gets no pod address and no route: the kubelet, containerd (and so every probe and CNI call) and the
// ingress's data plane live in the node's namespace, reach the API server and the registry through socat forwards over
// unix sockets, and the host reaches the node only through loopback ports forwarded into it. The kubelet and
// containerd also share a private mount namespace, held open by a pause process, so every mount they make (pod
// volumes, container root filesystems, pod network namespaces) vanishes with them; `stopRealNode` kills what runs,
// removes the cgroups, the namespace and the runtime state, and leaves nothing behind.
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, readlinkSync, rmSync, rmdirSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { ProcessTable, isAlive, tail, type ProcessRecord } from './processes.js';
import { fileURLToPath } from 'node:url';

const run = promisify(execFile);
const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** The node's name in the cluster. */
export const REAL_NODE_NAME = 'tidal-node';
/** The pods' subnet on the node's bridge; the bridge (and the node's InternalIP) is its first address. */
export const REAL_NODE_SUBNET = { cidr: '10.250.0.0/24', gateway: '10.250.0.1', prefix: 24 } as const;
const BRIDGE = 'tidal0';
/** The sandbox image the runtime uses, pushed to the stack's registry by `startRealNode`. */
export const PAUSE_REPOSITORY = 'tidal/pause';
export const PAUSE_TAG = '1.0';

export interface NodeBinaries {
  KUBELET: string;
  CNI_BIN: string;
  PAUSE: string;
}

export interface Forward {
  /** Short name, used for the processes and the socket. */
  name: string;
  /** Port on the host's 127.0.0.1 (host → node) or inside the node's namespace (node → host). */
  port: number;
  /** For host → node forwards: the port inside the node's namespace, on its 127.0.0.1. Default: `port`. */
  targetPort?: number;
}

export interface RealNodeOptions {
  /** The stack's folder: the node keeps its state in `<dir>/node` and its processes in the stack's table. */
  dir: string;
  /** The API server's port on 127.0.0.1 (also names the namespace, so two stacks can each have a node). */
  apiserverPort: number;
  /** A kubeconfig for the node's kubelet, its server `https://127.0.0.1:<apiserverPort>`. */
  kubeconfig: string;
  /** The stack's registry on 127.0.0.1, and the CA file the runtime trusts for it. */
  registry: { port: number; caFile: string };
  /** Ports of the host's 127.0.0.1 forwarded into the node (the ingress's entry points). */
  inbound?: Forward[];
  log?: (s: string) => void;
}

export interface RealNode {
  name: string;
  /** The network namespace (`ip netns`) holding the bridge, the kubelet, the runtime and the ingress. */
  netns: string;
  /** The node's InternalIP: the bridge's address inside the namespace. */
  nodeIp: string;
  /** The pid whose namespaces (mount and network) the node's processes enter with `nsenter -t`. */
  holderPid: number;
  /** Runtime state (sockets, containerd state) under /run. */
  runDir: string;
}

/** The node namespace's name for a stack whose API server listens on `apiserverPort`. */
export function nodeNetns(apiserverPort: number): string {
  return `tidal-${apiserverPort}`;
}

function runDirOf(apiserverPort: number): string {
  return `/run/tidal-${apiserverPort}`;
}

/**
 * The cgroups of the node's containers, in every mounted hierarchy, deepest first. Without per-QoS cgroups the runtime
 * puts each container at `/k8s.io/<container id>`; the ids are those of the tasks in this node's runtime state, so a
 * second stack's node is never touched.
 */
function containerCgroups(runDir: string): string[] {
  const ids = new Set<string>();
  for (const d of [path.join(runDir, 'runc', 'k8s.io'), path.join(runDir, 'containerd', 'io.containerd.runtime.v2.task', 'k8s.io')]) {
    if (existsSync(d)) for (const e of readdirSync(d)) if (/^[0-9a-f]{64}$/.test(e)) ids.add(e);
  }
  const base = '/sys/fs/cgroup';
  if (ids.size === 0 || !existsSync(base)) return [];
  const parents = existsSync(path.join(base, 'cgroup.controllers'))
    ? [path.join(base, 'k8s.io')]
    : readdirSync(base).map((h) => path.join(base, h, 'k8s.io'));
  const out: string[] = [];
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) if (e.isDirectory()) walk(path.join(d, e.name));
    out.push(d);
  };
  for (const parent of parents) for (const id of ids) if (existsSync(path.join(parent, id))) walk(path.join(parent, id));
  return out;
}

/** Builds (or reuses) the kubelet, the CNI plugins and the pause program. */
export async function ensureNodeBinaries(log: (s: string) => void): Promise<NodeBinaries> {
  const script = path.join(repoRoot, 'dev', 'toolchain.sh');
  const { stdout, stderr } = await run('bash', [script, 'node'], { maxBuffer: 16 * 1024 * 1024 });
  stderr
    .split('\n')
    .filter((l) => l.startsWith('[toolchain]'))
    .forEach((l) => log(l));
  const bins = Object.fromEntries(
    stdout
      .trim()
      .split('\n')
      .map((l) => l.split('=', 2) as [string, string]),
  ) as unknown as NodeBinaries;
  for (const [k, v] of Object.entries(bins) as [string, string][]) if (!existsSync(v)) throw new Error(`toolchain: ${k} not found at ${v}`);
  return bins;
}

const which = async (cmd: string): Promise<string | undefined> => {
  try {
    return (await run('bash', ['-c', `command -v ${cmd}`])).stdout.trim() || undefined;
  } catch {
    return undefined;
  }
};

/** The Debian packages the real node runs on. */
export const NODE_PACKAGES = { containerd: 'containerd', runc: 'runc', socat: 'socat', ip: 'iproute2', nsenter: 'util-linux', jq: 'jq' } as const;

/**
 * What keeps this machine from running the real node, or [] when nothing does: root, the runtime's and the
 * forwards' programs, and cgroups the runtime can use.
 */
export async function realNodePreflight(): Promise<string[]> {
  const problems: string[] = [];
  if (process.getuid?.() !== 0) problems.push('the real node needs root (network namespaces, bridges, mounts and cgroups)');
  const missing: string[] = [];
  for (const [cmd, pkg] of Object.entries(NODE_PACKAGES)) if (!(await which(cmd))) missing.push(`${cmd} (Debian package ${pkg})`);
  if (missing.length > 0)
    problems.push(`missing programs: ${missing.join(', ')} — apt-get install -y ${[...new Set(Object.values(NODE_PACKAGES))].join(' ')}`);
  if (!existsSync('/sys/fs/cgroup/pids') && !existsSync('/sys/fs/cgroup/cgroup.controllers'))
    problems.push('no cgroup hierarchy at /sys/fs/cgroup (neither v1 controllers nor a v2 root)');
  return problems;
}

function write(file: string, text: string): string {
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, text);
  return file;
}

/** The CNI network: host-local addresses on the node's bridge, the bridge as the pods' gateway, no NAT. */
export function cniConfig(ipamDir: string): string {
  return JSON.stringify(
    {
      cniVersion: '1.0.0',
      name: 'tidal',
      plugins: [
        {
          type: 'bridge',
          bridge: BRIDGE,
          isGateway: true,
          ipMasq: false,
          hairpinMode: true,
          ipam: {
            type: 'host-local',
            dataDir: ipamDir,
            ranges: [[{ subnet: REAL_NODE_SUBNET.cidr, gateway: REAL_NODE_SUBNET.gateway }]],
            routes: [{ dst: '0.0.0.0/0' }],
          },
        },
        { type: 'loopback' },
      ],
    },
    null,
    2,
  );
}

/** containerd 1.6's config: everything under the node's folders, the stack's registry trusted, runc via dev/node/runc.sh. */
export function containerdConfig(o: {
  root: string;
  state: string;
  socket: string;
  cniBin: string;
  cniConf: string;
  certsDir: string;
  runcRoot: string;
  sandboxImage: string;
}): string {
  return `version = 2
root = "${o.root}"
state = "${o.state}"
[grpc]
  address = "${o.socket}"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "${o.sandboxImage}"
  # Pod network namespaces are mounted in the node's private mount namespace, not in the host's /run/netns.
  netns_mounts_under_state_dir = true
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "${o.cniBin}"
    conf_dir = "${o.cniConf}"
  [plugins."io.containerd.grpc.v1.cri".registry]
    config_path = "${o.certsDir}"
  [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
    runtime_type = "io.containerd.runc.v2"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
      BinaryName = "${path.join(repoRoot, 'dev', 'node', 'runc.sh')}"
      Root = "${o.runcRoot}"
`;
}

/**
 * containerd's hosts.toml for the stack's registry: pulled over TLS with the stack's CA. containerd tries every
 * `[host]` and then the `server` itself (containerd 1.6 refuses a file without a `[host]`), so both trust the CA: a
 * missing manifest's 404 is then asked again of the `server` and reported as `not found`, not as that second
 * attempt's certificate error.
 */
export function registryHostsToml(port: number, caFile: string): string {
  return `server = "https://127.0.0.1:${port}"
ca = "${caFile}"
[host."https://127.0.0.1:${port}"]
  capabilities = ["pull", "resolve"]
  ca = "${caFile}"
`;
}

/**
 * The kubelet's configuration. Hosts like this one mount cgroup v1, which kubelets since 1.35 refuse unless told;
 * without systemd the cgroupfs driver; no per-QoS cgroups (their hierarchy wants controllers such hosts lack), so the
 * runtime places each container's cgroup itself. Anonymous, always-allow access to the kubelet's own
 * API: only the node's namespace can reach it.
 */
export function kubeletConfig(o: { runtimeSocket: string; nodeIp: string }): string {
  return `apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
failCgroupV1: false
cgroupDriver: cgroupfs
cgroupsPerQOS: false
enforceNodeAllocatable: []
containerRuntimeEndpoint: unix://${o.runtimeSocket}
failSwapOn: false
authentication:
  anonymous: {enabled: true}
  webhook: {enabled: false}
authorization: {mode: AlwaysAllow}
address: ${o.nodeIp}
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: 10248
serializeImagePulls: false
# Evict nothing on a developer's disk: the node is a test fixture, not a production machine.
evictionHard: {memory.available: "1Mi", nodefs.available: "0%", imagefs.available: "0%"}
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
localStorageCapacityIsolation: false
resolvConf: ""
nodeStatusReportFrequency: 10s
syncFrequency: 10s
fileCheckFrequency: 10s
`;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Waits for `check`; fails at the deadline, or at once when one of `procs` (whose logs it quotes) has exited. */
async function waitFor(what: string, check: () => Promise<boolean>, timeoutMs: number, procs: ProcessRecord[]): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      if (await check()) return;
    } catch {
      /* not yet */
    }
    const dead = procs.find((p) => !isAlive(p.pid));
    if (dead || Date.now() > deadline) {
      const tails = procs.map((p) => `--- ${p.log}\n${tail(p.log, 15)}`).join('\n');
      throw new Error(`${what} ${dead ? `(${dead.name} exited)` : `within ${timeoutMs / 1000}s`}; last lines:\n${tails}`);
    }
    await sleep(250);
  }
}

/** A process inside the node's namespaces: `nsenter -t <holder> [-m] -n <bin> …`. */
function startInNode(procs: ProcessTable, holderPid: number, name: string, bin: string, args: string[], mount: boolean): ProcessRecord {
  return procs.start(name, 'nsenter', ['-t', String(holderPid), ...(mount ? ['-m'] : []), '-n', '--', bin, ...args], process.env, undefined, bin);
}

/**
 * Host paths that containerd 1.6 and the kubelet write whatever they are told: the CNI result cache, the shims'
 * sockets, the pods' logs (and their links), the kubelet's default folder. Inside the node's mount namespace each is
 * a bind mount of a folder of the node's own, so nothing lands on the host; a mount point the host lacked is made
 * for it and removed again by `stopRealNode`.
 */
const PRIVATE_PATHS = ['/var/lib/cni', '/run/containerd', '/var/lib/kubelet', '/var/log/pods', '/var/log/containers'];
const CREATED_MOUNT_POINTS = 'created-mount-points.json';

async function privatizeHostPaths(holderPid: number, nodeDir: string, runDir: string): Promise<void> {
  const created: string[] = [];
  for (const p of PRIVATE_PATHS) {
    if (!existsSync(p)) {
      mkdirSync(p, { recursive: true });
      created.push(p);
    }
  }
  writeFileSync(path.join(runDir, CREATED_MOUNT_POINTS), JSON.stringify(created));
  for (const p of PRIVATE_PATHS) {
    const own = path.join(nodeDir, 'host', p.slice(1).replace(/\//g, '-'));
    mkdirSync(own, { recursive: true });
    await run('nsenter', ['-t', String(holderPid), '-m', '--', 'mount', '--bind', own, p]);
  }
}

const NETNS_DIR_BEFORE = 'netns-dir-before.json';

function isMountPoint(p: string): boolean {
  return readFileSync('/proc/self/mountinfo', 'utf8')
    .split('\n')
    .some((l) => l.split(' ')[4] === p);
}

/** Undoes what `ip netns add` did to /run/netns for this node, once no namespace is left in it. */
async function restoreNetnsDir(runDir: string): Promise<void> {
  const file = path.join(runDir, NETNS_DIR_BEFORE);
  if (!existsSync(file) || !existsSync('/run/netns') || readdirSync('/run/netns').length > 0) return;
  const before = JSON.parse(readFileSync(file, 'utf8')) as { existed: boolean; mounted: boolean };
  // iproute2 mounts it twice over (a bind mount, then made shared), so unmount until it is a plain folder again.
  if (!before.mounted) for (let i = 0; i < 4 && isMountPoint('/run/netns'); i++) await run('umount', ['/run/netns']).catch(() => undefined);
  if (!before.existed && !isMountPoint('/run/netns')) rmdirSync('/run/netns');
}

/** Removes the mount points `privatizeHostPaths` made on the host, when they are still empty. */
function removeCreatedMountPoints(runDir: string): void {
  const file = path.join(runDir, CREATED_MOUNT_POINTS);
  if (!existsSync(file)) return;
  for (const p of (JSON.parse(readFileSync(file, 'utf8')) as string[]).reverse()) {
    try {
      rmdirSync(p);
    } catch {
      /* not empty: something else wrote there since */
    }
  }
}

/** The node's forwards: out to the API server and the registry, in from the host's ports to the ingress. */
function nodeForwards(o: RealNodeOptions): [Forward, 'in' | 'out'][] {
  return [
    [{ name: 'apiserver', port: o.apiserverPort }, 'out'],
    [{ name: 'registry', port: o.registry.port }, 'out'],
    ...(o.inbound ?? []).map((f): [Forward, 'in'] => [f, 'in']),
  ];
}

/**
 * A forward across the boundary of the network namespace `holderPid` is in, started unless both its processes run (a
 * half that died is stopped and both started again). `prefix` names its processes `<prefix>-<name>-host|node`.
 */
export async function ensureForward(
  procs: ProcessTable,
  holderPid: number,
  runDir: string,
  f: Forward,
  direction: 'in' | 'out',
  prefix = 'node-fwd',
): Promise<void> {
  if (procs.running(`${prefix}-${f.name}-host`) && procs.running(`${prefix}-${f.name}-node`)) return;
  for (const side of ['host', 'node']) await procs.stop(`${prefix}-${f.name}-${side}`, 1000);
  startForward(procs, holderPid, runDir, f, direction, prefix);
}

/** One forward: a listener on one side of the namespace boundary, a unix socket between, a connector on the other. */
function startForward(procs: ProcessTable, holderPid: number, runDir: string, f: Forward, direction: 'in' | 'out', prefix = 'node-fwd'): void {
  const sock = path.join(runDir, `fwd-${f.name}.sock`);
  rmSync(sock, { force: true });
  const target = f.targetPort ?? f.port;
  if (direction === 'out') {
    // node's 127.0.0.1:port → socket → host's 127.0.0.1:port
    procs.start(
      `${prefix}-${f.name}-host`,
      'socat',
      [`UNIX-LISTEN:${sock},fork,mode=600`, `TCP:127.0.0.1:${f.port}`],
      process.env,
      undefined,
      'socat',
    );
    startInNode(
      procs,
      holderPid,
      `${prefix}-${f.name}-node`,
      'socat',
      [`TCP-LISTEN:${f.port},bind=127.0.0.1,fork,reuseaddr`, `UNIX-CONNECT:${sock}`],
      false,
    );
  } else {
    // host's 127.0.0.1:port → socket → node's 127.0.0.1:target
    startInNode(procs, holderPid, `${prefix}-${f.name}-node`, 'socat', [`UNIX-LISTEN:${sock},fork,mode=600`, `TCP:127.0.0.1:${target}`], false);
    procs.start(
      `${prefix}-${f.name}-host`,
      'socat',
      [`TCP-LISTEN:${f.port},bind=127.0.0.1,fork,reuseaddr`, `UNIX-CONNECT:${sock}`],
      process.env,
      undefined,
      'socat',
    );
  }
}

/** The sandbox image: dev/node/pause on distroless/static's essentials, pushed to the stack's registry. */
async function pushPause(bins: NodeBinaries, registry: { port: number; caFile: string }): Promise<string> {
  const { IMAGE_UID, fileEntry, makeImage, makeLayer, nonrootEntries, pushImageLayout } = await import('./oci-layout.js');
  const { withParentDirs } = await import('./tar.js');
  const img = makeImage(
    [makeLayer('base', withParentDirs(nonrootEntries())), makeLayer('pause', withParentDirs([fileEntry('pause', bins.PAUSE, 0o755)]))],
    { Entrypoint: ['/pause'], User: `${IMAGE_UID}:${IMAGE_UID}`, WorkingDir: '/' },
    'dev/node/pause',
  );
  const digest = await pushImageLayout(img, {
    url: `https://127.0.0.1:${registry.port}`,
    caPem: readFileSync(registry.caFile, 'utf8'),
    repository: PAUSE_REPOSITORY,
    tag: PAUSE_TAG,
  });
  return `127.0.0.1:${registry.port}/${PAUSE_REPOSITORY}@${digest}`;
}

async function kubectlJson(kubeconfig: string, kubectlBin: string, args: string[]): Promise<unknown> {
  const { stdout } = await run(kubectlBin, ['--kubeconfig', kubeconfig, ...args, '-o', 'json'], { maxBuffer: 64 * 1024 * 1024 });
  return JSON.parse(stdout) as unknown;
}

/** Whether the node is registered and Ready. */
export async function realNodeReady(kubeconfig: string, kubectlBin: string): Promise<boolean> {
  const node = (await kubectlJson(kubeconfig, kubectlBin, ['get', 'node', REAL_NODE_NAME])) as {
    status?: { conditions?: { type: string; status: string }[] };
    spec?: { taints?: unknown[] };
  };
  const ready = node.status?.conditions?.find((c) => c.type === 'Ready')?.status === 'True';
  return ready && (node.spec?.taints ?? []).length === 0;
}

/**
 * Starts the real node (or keeps the one running) and waits until it is Ready. On any failure it stops whatever it
 * started, so the machine is left as it was, and throws with the reason and the logs' last lines.
 */
export async function startRealNode(o: RealNodeOptions, kubectlBin: string): Promise<RealNode> {
  const log = o.log ?? (() => {});
  const problems = await realNodePreflight();
  if (problems.length > 0) throw new Error(`the real node cannot start on this machine:\n  - ${problems.join('\n  - ')}`);
  const procs = new ProcessTable(o.dir);
  const netns = nodeNetns(o.apiserverPort);
  const runDir = runDirOf(o.apiserverPort);
  const holder = procs.running('node-holder');
  if (holder && procs.running('kubelet') && procs.running('containerd') && existsSync(`/run/netns/${netns}`)) {
    // A forward that died (a host that killed its processes, say) is started again.
    for (const [f, direction] of nodeForwards(o)) await ensureForward(procs, holder.pid, runDir, f, direction);
    return { name: REAL_NODE_NAME, netns, nodeIp: REAL_NODE_SUBNET.gateway, holderPid: holder.pid, runDir };
  }
  // Half a node (a crash, a killed `up`) is taken down before a new one starts.
  await stopRealNode(o.dir, o.apiserverPort, log);
  try {
    return await bringUp(o, procs, kubectlBin, log);
  } catch (err) {
    log(`real node failed to start; removing what was made`);
    await stopRealNode(o.dir, o.apiserverPort, log);
    throw err;
  }
}

async function bringUp(o: RealNodeOptions, procs: ProcessTable, kubectlBin: string, log: (s: string) => void): Promise<RealNode> {
  const bins = await ensureNodeBinaries(log);
  const netns = nodeNetns(o.apiserverPort);
  const runDir = runDirOf(o.apiserverPort);
  const nodeDir = path.join(o.dir, 'node');
  const ip = (...args: string[]) => run('ip', args);
  mkdirSync(runDir, { recursive: true, mode: 0o700 });

  log(`real node: network namespace ${netns}, bridge ${BRIDGE} ${REAL_NODE_SUBNET.gateway}/${REAL_NODE_SUBNET.prefix}`);
  // `ip netns add` makes /run/netns (and a mount of it) on first use: note whether this node did, so its stop undoes it.
  writeFileSync(path.join(runDir, NETNS_DIR_BEFORE), JSON.stringify({ existed: existsSync('/run/netns'), mounted: isMountPoint('/run/netns') }));
  await ip('netns', 'add', netns);
  await ip('-n', netns, 'link', 'set', 'lo', 'up');
  await ip('-n', netns, 'link', 'add', BRIDGE, 'type', 'bridge');
  await ip('-n', netns, 'addr', 'add', `${REAL_NODE_SUBNET.gateway}/${REAL_NODE_SUBNET.prefix}`, 'dev', BRIDGE);
  await ip('-n', netns, 'link', 'set', BRIDGE, 'up');

  // The holder: a pause process in a private mount namespace, inside the node's network namespace.
  const holder = procs.start(
    'node-holder',
    'unshare',
    ['--mount', '--propagation', 'private', 'nsenter', `--net=/run/netns/${netns}`, '--', bins.PAUSE],
    process.env,
    undefined,
    bins.PAUSE,
  );
  await waitFor(
    'the node holder did not start',
    () => Promise.resolve(readlinkSync(`/proc/${holder.pid}/ns/net`) !== readlinkSync('/proc/self/ns/net')),
    5000,
    [holder],
  );

  for (const [f, direction] of nodeForwards(o)) startForward(procs, holder.pid, runDir, f, direction);
  await privatizeHostPaths(holder.pid, nodeDir, runDir);

  const sandboxImage = await pushPause(bins, o.registry);
  const socket = path.join(runDir, 'containerd.sock');
  const cniConf = path.join(nodeDir, 'cni');
  write(path.join(cniConf, '10-tidal.conflist'), cniConfig(path.join(runDir, 'ipam')));
  const certsDir = path.join(nodeDir, 'certs.d');
  write(path.join(certsDir, `127.0.0.1:${o.registry.port}`, 'hosts.toml'), registryHostsToml(o.registry.port, o.registry.caFile));
  const containerdToml = write(
    path.join(nodeDir, 'containerd.toml'),
    containerdConfig({
      root: path.join(nodeDir, 'containerd'),
      state: path.join(runDir, 'containerd'),
      socket,
      cniBin: bins.CNI_BIN,
      cniConf,
      certsDir,
      runcRoot: path.join(runDir, 'runc'),
      sandboxImage,
    }),
  );
  const containerd = startInNode(procs, holder.pid, 'containerd', 'containerd', ['--config', containerdToml], true);
  await waitFor('containerd did not open its socket', () => Promise.resolve(existsSync(socket)), 30_000, [containerd]);

  // A Node left from an earlier run still says Ready: start from none, so Ready below is this kubelet's word.
  await run(kubectlBin, ['--kubeconfig', o.kubeconfig, 'delete', 'node', REAL_NODE_NAME, '--ignore-not-found', '--wait=false']);
  const kubeletYaml = write(path.join(nodeDir, 'kubelet.yaml'), kubeletConfig({ runtimeSocket: socket, nodeIp: REAL_NODE_SUBNET.gateway }));
  const kubelet = startInNode(
    procs,
    holder.pid,
    'kubelet',
    bins.KUBELET,
    [
      `--config=${kubeletYaml}`,
      `--kubeconfig=${o.kubeconfig}`,
      `--root-dir=${path.join(nodeDir, 'kubelet')}`,
      `--cert-dir=${path.join(nodeDir, 'kubelet-pki')}`,
      `--hostname-override=${REAL_NODE_NAME}`,
      `--node-ip=${REAL_NODE_SUBNET.gateway}`,
      '--node-labels=tidal.dev/node=real',
      '--v=1',
    ],
    true,
  );
  await waitFor(`node ${REAL_NODE_NAME} did not turn Ready`, () => realNodeReady(o.kubeconfig, kubectlBin), 90_000, [kubelet, containerd]);
  log(`real node ${REAL_NODE_NAME} Ready (kubelet, containerd, runc; pods on ${REAL_NODE_SUBNET.cidr})`);
  return { name: REAL_NODE_NAME, netns, nodeIp: REAL_NODE_SUBNET.gateway, holderPid: holder.pid, runDir };
}

function pidsIn(dirs: string[]): number[] {
  const pids = new Set<number>();
  for (const d of dirs) {
    try {
      for (const l of readFileSync(path.join(d, 'cgroup.procs'), 'utf8').split('\n')) if (l.trim()) pids.add(Number(l));
    } catch {
      /* gone */
    }
  }
  return [...pids];
}

/**
 * Processes whose network or mount namespace is the node's (the shims the runtime detached, a stray forward). The
 * host's own namespaces never count: whatever this process shares them with is not the node's.
 */
function pidsInNamespaces(netns: string, mountNs: string | undefined): number[] {
  const own = { net: readlinkSync('/proc/self/ns/net'), mnt: readlinkSync('/proc/self/ns/mnt') };
  let netInode: string | undefined;
  try {
    netInode = `net:[${statSync(`/run/netns/${netns}`).ino}]`;
  } catch {
    netInode = undefined;
  }
  if (netInode === own.net) netInode = undefined;
  const mnt = mountNs === own.mnt ? undefined : mountNs;
  if (netInode === undefined && mnt === undefined) return [];
  const out: number[] = [];
  for (const e of readdirSync('/proc')) {
    if (!/^\d+$/.test(e) || Number(e) === process.pid || Number(e) === 1) continue;
    try {
      const net = readlinkSync(`/proc/${e}/ns/net`);
      const m = readlinkSync(`/proc/${e}/ns/mnt`);
      if (net === own.net && m === own.mnt) continue;
      if ((netInode !== undefined && net === netInode) || (mnt !== undefined && m === mnt)) out.push(Number(e));
    } catch {
      /* exited */
    }
  }
  return out;
}

function killAll(pids: number[]): void {
  for (const p of pids) {
    try {
      process.kill(p, 'SIGKILL');
    } catch {
      /* gone */
    }
  }
}

/**
 * Stops the real node and removes all it made: its pods' processes and cgroups, the runtime's shims, containerd, the
 * kubelet, the forwards, the namespace (with its bridge and the pods' veths), the runtime state under /run and the
 * node's folder. Safe to call when nothing runs.
 */
export async function stopRealNode(dir: string, apiserverPort: number, log: (s: string) => void = () => {}): Promise<void> {
  const procs = new ProcessTable(dir);
  const netns = nodeNetns(apiserverPort);
  const runDir = runDirOf(apiserverPort);
  // The holder's mount namespace, only while the holder is the pause process this stack started (pids wrap).
  const holder = procs.running('node-holder');
  let mountNs: string | undefined;
  if (holder) {
    try {
      mountNs = readlinkSync(`/proc/${holder.pid}/ns/mnt`);
    } catch {
      mountNs = undefined;
    }
  }
  const hadAnything = procs.read().some((r) => r.name === 'node-holder') || existsSync(`/run/netns/${netns}`) || existsSync(runDir);
  if (!hadAnything) return;
  log(`stopping the real node (${netns})`);
  // The kubelet first, so it does not restart what is killed next.
  await procs.stop('kubelet', 5000);
  // Containers: every process in the pods' cgroups, then the shims and whatever else runs in the node's namespaces.
  const cgroups = containerCgroups(runDir);
  for (let i = 0; i < 20; i++) {
    const pids = [...pidsIn(cgroups), ...pidsInNamespaces(netns, mountNs)];
    if (pids.length === 0) break;
    killAll(pids);
    await sleep(150);
  }
  for (const r of procs.read().filter((p) => p.name.startsWith('node-') || p.name === 'containerd')) await procs.stop(r.name, 2000);
  for (let i = 0; i < 20; i++) {
    const left = cgroups.filter((d) => existsSync(d));
    if (left.length === 0) break;
    for (const d of left) {
      try {
        rmdirSync(d);
      } catch {
        /* still has processes, or a child not removed yet */
      }
    }
    await sleep(100);
  }
  if (existsSync(`/run/netns/${netns}`)) await run('ip', ['netns', 'delete', netns]);
  removeCreatedMountPoints(runDir);
  await restoreNetnsDir(runDir);
  rmSync(runDir, { recursive: true, force: true });
  rmSync(path.join(dir, 'node'), { recursive: true, force: true });
}

/** What the node left on the machine: namespaces, runtime state, mounts, cgroups (empty when it is clean). */
export function realNodeLeftovers(dir: string, apiserverPort: number): string[] {
  const out: string[] = [];
  const netns = nodeNetns(apiserverPort);
  const runDir = runDirOf(apiserverPort);
  if (existsSync(`/run/netns/${netns}`)) out.push(`network namespace ${netns}`);
  if (existsSync(runDir)) out.push(`runtime state ${runDir}`);
  if (existsSync(path.join(dir, 'node'))) out.push(`node folder ${path.join(dir, 'node')}`);
  for (const l of readFileSync('/proc/self/mountinfo', 'utf8').split('\n')) {
    const mountPoint = l.split(' ')[4];
    if (mountPoint && (mountPoint.startsWith(runDir) || mountPoint.startsWith(path.join(dir, 'node')) || mountPoint === `/run/netns/${netns}`))
      out.push(`mount ${mountPoint}`);
  }
  for (const d of containerCgroups(runDir)) out.push(`cgroup ${d}`);
  for (const l of readFileSync('/proc/self/mountinfo', 'utf8').split('\n')) {
    const mountPoint = l.split(' ')[4];
    if (mountPoint && PRIVATE_PATHS.includes(mountPoint)) out.push(`host mount ${mountPoint}`);
  }
  return out;
}
