// The local stack: etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kwok with fake Nodes, the
// Temporal dev server, and (optionally) Tidal's controller — all on 127.0.0.1, each logging to a file.
// `stackUp` is idempotent (healthy processes are reused); `stackDown` stops exactly what was started.
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { parseAllDocuments } from 'yaml';
import { controllerMalloc } from './allocator.js';
import { applyConfigMaps, type EditedConfigMap } from './config-maps.js';
import { CONTROLLER_NODE_FLAGS } from '../workers/node-flags.js';
import { ensurePki, writeKubeconfig } from './pki.js';
import { ProcessTable, type ProcessRecord } from './processes.js';
import { startTemporalPostgres, stopTemporalPostgres, temporalModeFromEnv } from './temporal-postgres.js';
import type { RealNode } from './node.js';

const run = promisify(execFile);
export { kubectl, repoRoot } from './kubectl.js';
export { httpOk, portOpen, waitFor, yamlFiles } from './probes.js';
import { httpOk, portOpen, waitFor, yamlFiles } from './probes.js';
import { kubectl, repoRoot } from './kubectl.js';

export interface StackPorts {
  etcdClient: number;
  etcdPeer: number;
  apiserver: number;
  controllerManager: number;
  scheduler: number;
  temporal: number;
  temporalUi: number;
  temporalHttp: number;
  temporalMetrics: number;
  controllerMetrics: number;
  /**
   * The admission webhook's address, registered in the webhook configurations (the loopback balancer,
   * dev/webhook-balancer.ts), and the first controller replica's own webhook port: replica i listens on
   * `controllerWebhook + i` with metrics on `controllerMetrics + i` (see {@link replicaPorts}). Unset: no webhook.
   */
  webhook?: number;
  controllerWebhook?: number;
  /** With a real node: the ingress's public and cluster-local entry points on 127.0.0.1. */
  ingress?: number;
  ingressPrivate?: number;
  /** With a real node: the ingress's public entry point over TLS on 127.0.0.1 (unset: none). */
  ingressTls?: number;
}

/** Replicas the webhook balancer knows about: replica i has webhook port `controllerWebhook + i`. */
export const WEBHOOK_REPLICA_SLOTS = 4;

/** The ports of controller replica `i` (0 is the stack's own controller). */
export function replicaPorts(base: StackPorts, i: number): StackPorts {
  return {
    ...base,
    controllerMetrics: base.controllerMetrics + i,
    ...(base.controllerWebhook !== undefined ? { controllerWebhook: base.controllerWebhook + i } : {}),
  };
}

/** `npm run up`'s ports: the usual ones, so `kubectl` and the Temporal UI are where users expect them. */
export const devPorts: StackPorts = {
  etcdClient: 2379,
  etcdPeer: 2380,
  apiserver: 6443,
  controllerManager: 10257,
  scheduler: 10259,
  temporal: 7233,
  temporalUi: 8233,
  temporalHttp: 7243,
  temporalMetrics: 7244,
  controllerMetrics: 9464,
  webhook: 8443,
  controllerWebhook: 8444,
  ingress: 8080,
  ingressPrivate: 8081,
  ingressTls: 8082,
};

/** The test stack's ports, clear of a running `npm run up`. */
export const testPorts: StackPorts = {
  etcdClient: 22379,
  etcdPeer: 22380,
  apiserver: 26443,
  controllerManager: 30257,
  scheduler: 30259,
  temporal: 27233,
  temporalUi: 28233,
  temporalHttp: 27243,
  temporalMetrics: 27244,
  controllerMetrics: 29464,
  webhook: 28443,
  controllerWebhook: 28444,
  ingress: 28080,
  ingressPrivate: 28081,
};

/** The real-node test layer's ports (test/harness/real-setup.ts), clear of both `npm run up` and the e2e stack. */
export const realTestPorts: StackPorts = {
  etcdClient: 19379,
  etcdPeer: 19380,
  apiserver: 19443,
  controllerManager: 19257,
  scheduler: 19259,
  temporal: 19233,
  temporalUi: 19283,
  temporalHttp: 19243,
  temporalMetrics: 19244,
  controllerMetrics: 19564,
  webhook: 19843,
  controllerWebhook: 19844,
  ingress: 19080,
  ingressPrivate: 19081,
  ingressTls: 19082,
};

/** The ephemeral port range, where an outgoing connection can take a port a moment before a process listens on it. */
const EPHEMERAL = { first: 32768, last: 60999 };

/**
 * A stack's ports at `prefix` thousands, the layout of the benchmarks' and the conformance runs' stacks (14: etcd
 * 14379/14380, API server 14443, Temporal 14233 with HTTP 14243 and metrics 14244, the controller's metrics 14464). The Temporal UI's port (`…283`) stays clear of the eight ports the
 * PostgreSQL Temporal takes after its frontend's (dev/temporal-postgres.ts). A prefix whose ports would fall in the
 * ephemeral range is refused (EADDRINUSE was seen there).
 */
export function portsAt(prefix: number): StackPorts {
  const base = prefix * 1000;
  if (base + 999 >= EPHEMERAL.first && base <= EPHEMERAL.last) throw new Error(`ports ${base}–${base + 999} are in the ephemeral range`);
  const at = (n: number) => base + n;
  return {
    etcdClient: at(379),
    etcdPeer: at(380),
    apiserver: at(443),
    controllerManager: at(257),
    scheduler: at(259),
    temporal: at(233),
    temporalUi: at(283),
    temporalHttp: at(243),
    temporalMetrics: at(244),
    controllerMetrics: at(464),
  };
}

/**
 * The conformance run's ports (dev/conformance.ts), clear of the others. Its public ingress port lies in the API
 * server's NodePort range: the suites find the ingress through a NodePort Service whose nodePort is that port.
 */
export const conformancePorts: StackPorts = { ...portsAt(17), webhook: 17843, controllerWebhook: 17844, ingress: 31080, ingressPrivate: 31081 };

/**
 * The ports of dev/upstream-check.ts's stack (upstream Knative on a real node), clear of the others. Its public ingress
 * port lies in the NodePort range, as the conformance run's does.
 */
export const upstreamCheckPorts: StackPorts = { ...portsAt(23), webhook: 23843, controllerWebhook: 23844, ingress: 30080, ingressPrivate: 30081 };

export interface StackOptions {
  dir: string;
  ports: StackPorts;
  ui: boolean;
  /** kwok's fake Nodes. */
  nodes: number;
  /**
   * A real node as well (dev/node.ts: kubelet, containerd and runc in a network namespace of the stack's own) and the
   * ingress that serves its pods (dev/traefik.ts), pulling from the stack's registry at `registryPort` (which must be
   * running, with `registryCaFile` its CA). Needs root. The config maps then name that registry's queue-proxy and
   * Traefik's ingress class.
   */
  realNode?: { registryPort: number; registryCaFile: string; queueImage: string };
  /**
   * Start the control plane too: Tidal's controller, or with `controlPlane: 'upstream'` upstream's controller, webhook,
   * activator and autoscaler.
   */
  controller: boolean;
  /**
   * Whose Knative control plane: Tidal's (default: deploy/'s CRDs, config maps and webhook configurations, Temporal, the
   * controller) or upstream Knative Serving's (dev/upstream-serving.ts: its own CRDs, config maps, webhook
   * configurations and four binaries, built by dev/build-knative.sh; no Temporal). Without `realNode` it runs on kwok's
   * pods with the stand-ins of dev/upstream-serving.ts's UPSTREAM_KWOK_STAND_INS (no activator).
   */
  controlPlane?: 'tidal' | 'upstream';
  /**
   * Run it the way a pod does (dev/incluster.ts): deploy/'s ServiceAccount and RBAC, its token at the in-cluster path
   * in a private mount namespace, no kubeconfig. Needs root. Default: the admin kubeconfig.
   */
  controllerInCluster?: boolean;
  /**
   * Extra dynamic config settings (`key=JSON value`, the dev server's `--dynamic-config-value`) for either Temporal;
   * env TIDAL_TEMPORAL_DYNAMIC_CONFIG adds more, separated by spaces (benchmarks try Temporal's settings with it).
   */
  temporalDynamicConfig?: string[];
  /**
   * Which Temporal: 'dev' (`temporal server start-dev`, SQLite, one history shard) or 'postgres' (the Temporal server
   * on PostgreSQL with many shards, as production runs it: dev/temporal-postgres.ts). Default: env TIDAL_TEMPORAL, else 'dev'.
   */
  temporal?: 'dev' | 'postgres';
  /** History shards of the PostgreSQL server (default: env TIDAL_TEMPORAL_SHARDS, else 16; fixed once its database exists). */
  temporalHistoryShards?: number;
  controllerEnv?: Record<string, string>;
  /** Config map keys applied over the control plane's shipped ones (config map name → keys; null removes a key). */
  config?: Record<string, Record<string, string | null>>;
  /** Registries added to config-deployment's registries-skipping-tag-resolving (Docker Hub always is). */
  skipRegistries?: string[];
  /**
   * Lift the Kubernetes side's own throttles (benchmarks): API server inflight limits and priority-and-fairness off,
   * controller-manager and scheduler client QPS/burst and the controller-manager's sync workers raised, kwok's stage
   * workers raised (its client has no rate limit). Tidal and Temporal are what a benchmark should measure.
   */
  unthrottled?: boolean;
  /** Pods each kwok Node admits (default 110, a kubelet's default); benchmarks raise it instead of adding Nodes. */
  podsPerNode?: number;
  /**
   * cert-manager (dev/cert-manager.ts): its CRDs and controller, a CA ClusterIssuer `tidal-ca` and config-certmanager
   * naming it, before Tidal's controller starts (so it follows cert-manager's Certificates). Tidal's control plane only.
   */
  certManager?: boolean;
  /**
   * Apply the shipped config map values over the keys someone changed or removed since the last `up`, which are kept
   * otherwise (dev/config-maps.ts; `npm run up -- --reset-config`).
   */
  resetConfig?: boolean;
  log?: (line: string) => void;
}

export interface Binaries {
  ETCD: string;
  KUBE_APISERVER: string;
  KUBE_CONTROLLER_MANAGER: string;
  KUBE_SCHEDULER: string;
  KUBECTL: string;
  KWOK: string;
  TEMPORAL: string;
  /** Knative's client, which the e2e layer drives Tidal with as a Knative user would. */
  KN: string;
  ISTIO_CRDS: string;
}

export interface StackInfo {
  dir: string;
  kubeconfig: string;
  temporalAddress: string;
  temporalUi: string | undefined;
  bins: Binaries;
  ports: StackPorts;
}

export const SearchAttributes = ['KnativeKind', 'KnativeNamespace', 'KnativeName'];

/** Builds (or reuses) the toolchain and returns the binaries' paths. */
export async function ensureToolchain(log: (s: string) => void = console.error, target: 'all' | 'temporal' = 'all'): Promise<Binaries> {
  const script = path.join(repoRoot, 'dev', 'toolchain.sh');
  const started = Date.now();
  await new Promise<void>((resolve, reject) => {
    const child = execFile('bash', [script, target], { maxBuffer: 64 * 1024 * 1024 }, (err) =>
      err ? reject(new Error(`toolchain build failed: ${err.message}`)) : resolve(),
    );
    child.stderr?.on('data', (d: Buffer) =>
      d
        .toString()
        .split('\n')
        .filter((l) => l.startsWith('[toolchain]'))
        .forEach((l) => log(l)),
    );
  });
  const { stdout } = await run('bash', [script, 'paths']);
  const bins = Object.fromEntries(
    stdout
      .trim()
      .split('\n')
      .map((l) => l.split('=', 2) as [string, string]),
  ) as unknown as Binaries;
  for (const [k, v] of Object.entries(bins) as [string, string][]) {
    if (k !== 'KWOK_VERSION' && (target === 'all' || k === 'TEMPORAL') && !existsSync(v)) throw new Error(`toolchain: ${k} not found at ${v}`);
  }
  if (Date.now() - started > 5000) log(`toolchain ready (${Math.round((Date.now() - started) / 1000)}s)`);
  return bins;
}

/** A kwok Node (32 CPUs, 256 GiB, 110 pods unless told): kwok makes pods scheduled onto it Running and Ready. */
export function kwokNode(name: string, pods = 110) {
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name,
      annotations: { 'kwok.x-k8s.io/node': 'fake', 'node.alpha.kubernetes.io/ttl': '0' },
      labels: { 'kubernetes.io/arch': 'amd64', 'kubernetes.io/os': 'linux', 'kubernetes.io/hostname': name, type: 'kwok' },
    },
    status: {
      allocatable: { cpu: '32', memory: '256Gi', pods: String(pods) },
      capacity: { cpu: '32', memory: '256Gi', pods: String(pods) },
    },
  };
}

function nodeManifest(name: string, pods?: number): string {
  return JSON.stringify(kwokNode(name, pods));
}

/** kwok's own parallelism (the defaults are 4 stage workers and 1 pods-on-node syncer); it has no client QPS limit. */
function kwokUnthrottledConfig(dir: string): string {
  const file = path.join(dir, 'kwok-unthrottled.yaml');
  writeFileSync(
    file,
    [
      'apiVersion: config.kwok.x-k8s.io/v1alpha1',
      'kind: KwokConfiguration',
      'options:',
      '  podPlayStageParallelism: 32',
      '  nodePlayStageParallelism: 8',
      '  nodeLeaseParallelism: 8',
      '  podsOnNodeSyncParallelism: 4',
      '',
    ].join('\n'),
  );
  return file;
}

/** client-go QPS/burst for the controller-manager and scheduler when unthrottled (kwokctl's "unlimited" values). */
const unlimitedClient = ['--kube-api-qps=5000', '--kube-api-burst=10000'];

export async function stackUp(opts: StackOptions): Promise<StackInfo> {
  const log = opts.log ?? ((s: string) => console.error(`[stack] ${s}`));
  const upstream = opts.controlPlane === 'upstream' ? await import('./upstream-serving.js') : undefined;
  const bins = await ensureToolchain(log);
  const dir = path.resolve(opts.dir);
  mkdirSync(dir, { recursive: true });
  const procs = new ProcessTable(dir);
  const pki = ensurePki(path.join(dir, 'pki'));
  const p = opts.ports;
  const kubeconfig = path.join(dir, 'kubeconfig');
  writeKubeconfig(kubeconfig, pki, `https://127.0.0.1:${p.apiserver}`);
  const info: StackInfo = {
    dir,
    kubeconfig,
    temporalAddress: `127.0.0.1:${p.temporal}`,
    temporalUi: opts.ui && !upstream ? `http://127.0.0.1:${p.temporalUi}` : undefined,
    bins,
    ports: p,
  };
  const ensure = (name: string, bin: string, args: string[], env?: NodeJS.ProcessEnv) => {
    const existing = procs.running(name);
    if (existing) return existing;
    log(`starting ${name}`);
    return procs.start(name, bin, args, env);
  };
  // Webhook configurations left from an earlier run (failurePolicy Fail) would refuse the config maps below while no
  // controller answers: drop them until the controller is back (registered again just before it starts).
  const webhooksLeftBehind =
    opts.controller && !procs.running(upstream ? upstream.UpstreamProcesses.webhook : 'tidal-controller') && existsSync(path.join(dir, 'etcd'));

  const dynamicConfig = temporalDynamicConfig(opts.temporalDynamicConfig);

  // Temporal first: it is independent of Kubernetes and the slowest to open its database. The PostgreSQL one (database,
  // schemas, server, namespace, search attributes) comes up in the background and is awaited where the dev one is.
  // Upstream's control plane has no use for Temporal.
  const temporalPostgres =
    !upstream && (opts.temporal ?? temporalModeFromEnv()) === 'postgres'
      ? startTemporalPostgres({
          dir,
          procs,
          port: p.temporal,
          httpPort: p.temporalHttp,
          metricsPort: p.temporalMetrics,
          cli: bins.TEMPORAL,
          searchAttributes: SearchAttributes,
          historyShards: opts.temporalHistoryShards,
          dynamicConfig,
          log,
        })
      : undefined;
  temporalPostgres?.catch(() => {}); // awaited below: an earlier failure must not count as unhandled meanwhile
  if (temporalPostgres && info.temporalUi) {
    log('the PostgreSQL Temporal server has no UI (the dev server embeds it)');
    info.temporalUi = undefined;
  }
  if (!temporalPostgres) await stopTemporalPostgres(procs, bins.TEMPORAL, log);
  const devTemporalArgs = () => [
    'server',
    'start-dev',
    '--ip',
    '127.0.0.1',
    '--port',
    String(p.temporal),
    '--http-port',
    String(p.temporalHttp),
    '--metrics-port',
    String(p.temporalMetrics),
    ...(opts.ui ? ['--ui-port', String(p.temporalUi)] : ['--headless']),
    '--db-filename',
    path.join(dir, DevTemporalDatabaseFile),
    '--log-level',
    'warn',
    // WAL: far fewer fsyncs per history event on a small machine, and still durable across a process crash.
    ...['journal_mode=wal', 'synchronous=normal', ...DevTemporalSqlitePageCache, ...devTemporalSqlitePragmas()].flatMap((p) => [
      '--sqlite-pragma',
      p,
    ]),
    ...SearchAttributes.flatMap((a) => ['--search-attribute', `${a}=Keyword`]),
    ...[
      ...DevTemporalWorkerPools,
      ...DevTemporalScannersOff,
      ...DevTemporalReplicationCacheFloor,
      ...DevTemporalHistoryCacheSize,
      ...taskQueuePartitionSettings(devTemporalPartitions(dir)),
      ...dynamicConfig,
    ].flatMap((d) => ['--dynamic-config-value', d]),
  ];
  const temporal = temporalPostgres || upstream ? undefined : ensure('temporal', bins.TEMPORAL, devTemporalArgs(), temporalGoEnv());

  const etcd = ensure('etcd', bins.ETCD, [
    '--name',
    'n0',
    '--data-dir',
    path.join(dir, 'etcd'),
    '--listen-client-urls',
    `http://127.0.0.1:${p.etcdClient}`,
    '--advertise-client-urls',
    `http://127.0.0.1:${p.etcdClient}`,
    '--listen-peer-urls',
    `http://127.0.0.1:${p.etcdPeer}`,
    '--initial-advertise-peer-urls',
    `http://127.0.0.1:${p.etcdPeer}`,
    '--initial-cluster',
    `n0=http://127.0.0.1:${p.etcdPeer}`,
    '--unsafe-no-fsync',
    '--quota-backend-bytes',
    String(4 * 1024 ** 3),
    '--auto-compaction-retention',
    '1',
  ]);
  await waitFor('etcd', () => httpOk(`http://127.0.0.1:${p.etcdClient}/health`), 30_000, etcd);

  const apiserver = ensure('kube-apiserver', bins.KUBE_APISERVER, [
    `--etcd-servers=http://127.0.0.1:${p.etcdClient}`,
    '--bind-address=127.0.0.1',
    '--advertise-address=127.0.0.1',
    `--secure-port=${p.apiserver}`,
    `--tls-cert-file=${pki.apiserverCert}`,
    `--tls-private-key-file=${pki.apiserverKey}`,
    `--client-ca-file=${pki.caCert}`,
    '--service-account-issuer=https://kubernetes.default.svc.cluster.local',
    `--service-account-key-file=${pki.saPub}`,
    `--service-account-signing-key-file=${pki.saKey}`,
    '--service-cluster-ip-range=10.96.0.0/16',
    '--authorization-mode=RBAC',
    // kwok's pods need no token; a real node's get one, as in any cluster (Knative's conformance suite checks it).
    ...(opts.realNode ? [] : ['--disable-admission-plugins=ServiceAccount']),
    '--allow-privileged=true',
    // The advertise address is loopback, so the kubernetes Service's endpoints cannot be reconciled.
    '--endpoint-reconciler-type=none',
    `--cert-dir=${pki.dir}`,
    // 0 disables the inflight limits, which only apply with priority-and-fairness off (as kwokctl does).
    ...(opts.unthrottled ? ['--max-requests-inflight=0', '--max-mutating-requests-inflight=0', '--enable-priority-and-fairness=false'] : []),
  ]);
  const readyz = () => httpOk(`https://127.0.0.1:${p.apiserver}/readyz`);
  await waitFor('kube-apiserver', readyz, 90_000, apiserver);
  if (webhooksLeftBehind) await (upstream ? upstream.unregisterUpstreamWebhooks(info) : unregisterWebhooks(info));

  const kcm = ensure('kube-controller-manager', bins.KUBE_CONTROLLER_MANAGER, [
    `--kubeconfig=${kubeconfig}`,
    '--leader-elect=false',
    '--bind-address=127.0.0.1',
    `--secure-port=${p.controllerManager}`,
    `--root-ca-file=${pki.caCert}`,
    `--service-account-private-key-file=${pki.saKey}`,
    // The node lifecycle controller only has to lift the initial not-ready taint; a loaded 2-core machine must not
    // make it declare kwok's nodes dead and evict everything.
    '--node-monitor-grace-period=5m',
    // The HPA controller sizes Revisions of the `hpa.autoscaling.knative.dev` class (no metrics server here: it scales
    // to minReplicas and reports FailedGetResourceMetric); it costs nothing while there are no HPAs.
    // With a real node, the root CA publisher too: a pod's service account token volume carries kube-root-ca.crt.
    `--controllers=deployment-controller,replicaset-controller,garbage-collector-controller,endpoints-controller,endpointslice-controller,endpointslice-mirroring-controller,namespace-controller,serviceaccount-controller,serviceaccount-token-controller,node-lifecycle-controller,horizontal-pod-autoscaler-controller${opts.realNode ? ',root-ca-certificate-publisher-controller' : ''}`,
    ...(opts.unthrottled
      ? [
          ...unlimitedClient,
          '--concurrent-deployment-syncs=50',
          '--concurrent-replicaset-syncs=50',
          '--concurrent-endpoint-syncs=50',
          '--concurrent-service-endpoint-syncs=50',
          '--mirroring-concurrent-service-endpoint-syncs=50',
          '--concurrent-gc-syncs=50',
        ]
      : []),
  ]);
  const scheduler = ensure('kube-scheduler', bins.KUBE_SCHEDULER, [
    `--kubeconfig=${kubeconfig}`,
    '--leader-elect=false',
    '--bind-address=127.0.0.1',
    `--secure-port=${p.scheduler}`,
    // Deprecated but still honoured without a --config file.
    ...(opts.unthrottled ? unlimitedClient : []),
  ]);
  // A restarted kwok cannot take over node leases the previous one left behind; clear them first.
  if (!procs.running('kwok')) await kubectl(info, ['delete', 'lease', '-n', 'kube-node-lease', '--all', '--ignore-not-found']);
  const kwok = ensure('kwok', bins.KWOK, [
    `--kubeconfig=${kubeconfig}`,
    '--manage-all-nodes=false',
    '--manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake',
    '--cidr=10.244.0.0/16',
    '--node-ip=10.244.255.254',
    '--node-lease-duration-seconds=40',
    `--config=${path.join(repoRoot, 'dev', 'kwok-stages.yaml')}`,
    ...(opts.unthrottled ? [`--config=${kwokUnthrottledConfig(dir)}`] : []),
  ]);
  await waitFor('kube-controller-manager', () => httpOk(`https://127.0.0.1:${p.controllerManager}/healthz`), 60_000, kcm);
  await waitFor('kube-scheduler', () => httpOk(`https://127.0.0.1:${p.scheduler}/healthz`), 60_000, scheduler);

  // Fake nodes, Knative's and Istio's CRDs, the system namespace.
  for (let i = 0; i < opts.nodes; i++) await kubectl(info, ['apply', '-f', '-'], nodeManifest(`kwok-node-${i}`, opts.podsPerNode));
  const upstreamFiles = upstream ? await upstream.upstreamInstall(await (await import('./knative-images.js')).buildKnativeBinaries(log)) : undefined;
  if (upstreamFiles) await kubectl(info, ['apply', '--server-side', '--force-conflicts', ...upstreamFiles.crds.flatMap((f) => ['-f', f])]);
  else {
    await kubectl(info, ['apply', '--server-side', '--force-conflicts', '-f', path.join(repoRoot, 'deploy', 'crds')]);
    await kubectl(info, ['apply', '--server-side', '--force-conflicts', '-f', bins.ISTIO_CRDS]);
  }
  // A CRD created a moment ago may have no conditions yet, which `kubectl wait` reports as an error instead of waiting.
  await waitFor(
    'CRDs established',
    () => kubectl(info, ['wait', '--for=condition=Established', '--timeout=60s', 'crd', '--all']).then(() => true),
    90_000,
  );
  // With a real node the installer's own apply names its queue-proxy and ingress class, so a later `up` without one
  // sets them back without a conflict between field managers.
  const overrides: Record<string, Record<string, string | null>> = opts.realNode
    ? {
        'config-deployment': { 'queue-sidecar-image': opts.realNode.queueImage },
        'config-network': { 'ingress-class': (await import('./traefik.js')).TRAEFIK_INGRESS_CLASS },
        // Public URLs on the ingress's loopback entry point, as Knative's quickstart has them (hakn's default makes
        // every Route cluster-local, reachable from outside only through a DomainMapping).
        'config-domain': { [REAL_NODE_DOMAIN]: '', 'svc.cluster.local': null },
      }
    : {};
  // Upstream on kwok's pods: what its stand-ins need of its config maps; then the caller's keys.
  for (const extra of [upstream && !opts.realNode ? upstream.UPSTREAM_KWOK_CONFIG : {}, opts.config ?? {}])
    for (const [name, keys] of Object.entries(extra)) overrides[name] = { ...overrides[name], ...keys };
  // With the Temporal UI, every object's status links to its workflow there (api/story-link.ts).
  if (info.temporalUi) overrides['config-observability'] = { 'temporal-ui-url': info.temporalUi };
  const configOpts = { reset: opts.resetConfig, log };
  if (upstreamFiles) {
    await kubectl(info, ['apply', '-f', upstreamFiles.namespace]);
    // Upstream's config maps with its own defaults and the real node's overrides.
    await applyConfigMaps((args, input) => kubectl(info, args, input), configMapsWith(upstreamFiles.configMaps, overrides), configOpts);
  } else {
    await kubectl(info, ['apply', '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'knative-serving' } }));
    await kubectl(info, ['apply', '-f', '-'], JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'istio-system' } }));
    // hakn's two Istio Gateways (external with the self-signed certificate's Secret, and cluster-local).
    await kubectl(info, ['apply', '--server-side', '--field-manager=tidal-installer', '-f', path.join(repoRoot, 'deploy', 'istio')]);
    // Tidal's config maps with hakn's values; a later `up` keeps a key a user changed or removed, as a re-install of
    // Knative does, unless `resetConfig`.
    await applyTidalConfigMaps(info, overrides, configOpts);
  }
  // The local stack has no route to public registries: never try to resolve Docker Hub tags from it.
  const skip = ['kind.local', 'ko.local', 'dev.local', 'index.docker.io', 'docker.io', ...(opts.skipRegistries ?? [])].join(',');
  await kubectl(info, [
    'patch',
    'configmap',
    'config-deployment',
    '-n',
    'knative-serving',
    '--type=merge',
    '-p',
    JSON.stringify({ data: { 'registries-skipping-tag-resolving': skip } }),
  ]);
  await waitFor(
    'kwok nodes',
    async () => {
      // Ready, and without the not-ready taint the node lifecycle controller lifts: until then nothing schedules.
      const out = await kubectl(info, [
        'get',
        'nodes',
        '-o',
        'jsonpath={range .items[*]}{.status.conditions[?(@.type=="Ready")].status}/{.spec.taints}{"\\n"}{end}',
      ]);
      return out.split('\n').filter((s) => s === 'True/').length >= opts.nodes;
    },
    60_000,
    kwok,
  );

  if (opts.certManager && !upstream) {
    const { startCertManager } = await import('./cert-manager.js');
    await startCertManager({
      kubeconfig,
      kubectl: (args, input) => kubectl(info, args, input),
      start: (name, bin, args) => ensure(name, bin, args),
      waitFor,
      resetConfig: opts.resetConfig,
      log,
    });
  }

  const node = opts.realNode ? await startRealNodeAndIngress(info, opts.realNode, log) : undefined;

  if (upstream) {
    if (opts.controller && node && upstreamFiles && opts.realNode)
      await upstream.startUpstreamServing(info, procs, node, upstreamFiles, opts.realNode.registryCaFile, log);
    else if (opts.controller && upstreamFiles) await upstream.startUpstreamOnKwok(info, procs, upstreamFiles, log);
    return info;
  }
  if (temporalPostgres) await temporalPostgres;
  else {
    await waitFor(
      'temporal',
      async () => {
        await run(bins.TEMPORAL, ['operator', 'cluster', 'health', '--address', info.temporalAddress]);
        return true;
      },
      120_000,
      temporal,
    );
  }

  if (opts.controller && p.webhook !== undefined && p.controllerWebhook !== undefined) await startWebhookFront(info, procs, log);
  if (opts.controller) await startController(info, procs, opts, log);
  return info;
}

/** The default domain of a stack with a real node: `<route>.<namespace>.127.0.0.1.sslip.io`. */
export const REAL_NODE_DOMAIN = '127.0.0.1.sslip.io';

/**
 * Tidal's config maps (deploy/config/, hakn's values) with `overrides`, over those the stack holds: what every `up`
 * applies. A key someone changed or removed since is kept unless `reset` (dev/config-maps.ts).
 */
export async function applyTidalConfigMaps(
  info: { kubeconfig: string; bins: { KUBECTL: string } },
  overrides: Record<string, Record<string, string | null>>,
  opts: { reset?: boolean; log: (s: string) => void },
): Promise<EditedConfigMap[]> {
  const configDir = path.join(repoRoot, 'deploy', 'config');
  if (!existsSync(configDir)) return [];
  return applyConfigMaps((args, input) => kubectl(info, args, input), configMapsWith(yamlFiles(configDir), overrides), opts);
}

/**
 * The config maps of `files` (and any other object in them), with `overrides` (config map name → keys) merged into
 * their data; a null value removes the key.
 */
export function configMapsWith(files: string[], overrides: Record<string, Record<string, string | null>>): Record<string, unknown>[] {
  return files
    .flatMap((f) => parseAllDocuments(readFileSync(f, 'utf8')).map((d) => d.toJSON() as Record<string, unknown> | null))
    .filter((o): o is Record<string, unknown> => o !== null && typeof o === 'object')
    .map((o) => {
      const name = (o.metadata as { name?: string } | undefined)?.name ?? '';
      const extra = o.kind === 'ConfigMap' ? overrides[name] : undefined;
      if (!extra) return o;
      const data: Record<string, string> = { ...((o.data as Record<string, string> | undefined) ?? {}) };
      for (const [k, v] of Object.entries(extra)) {
        if (v === null) delete data[k];
        else data[k] = v;
      }
      return { ...o, data };
    });
}

/** Beside a stack with a real node: which API server port named its namespace, for `stackDown`. */
const REAL_NODE_MARKER = 'real-node.json';

/**
 * The real node and its ingress (the config maps, applied before, name their queue-proxy image and ingress class).
 */
async function startRealNodeAndIngress(info: StackInfo, rn: NonNullable<StackOptions['realNode']>, log: (s: string) => void): Promise<RealNode> {
  const { startRealNode } = await import('./node.js');
  const p = info.ports;
  if (p.ingress === undefined || p.ingressPrivate === undefined) throw new Error('a real node needs ports.ingress and ports.ingressPrivate');
  writeFileSync(path.join(info.dir, REAL_NODE_MARKER), JSON.stringify({ apiserverPort: p.apiserver }));
  const { TRAEFIK_PUBLIC_PORT, TRAEFIK_PRIVATE_PORT, TRAEFIK_SECURE_PORT, startTraefik } = await import('./ingress.js');
  const node = await startRealNode(
    {
      dir: info.dir,
      apiserverPort: p.apiserver,
      kubeconfig: info.kubeconfig,
      registry: { port: rn.registryPort, caFile: rn.registryCaFile },
      inbound: [
        { name: 'ingress', port: p.ingress, targetPort: TRAEFIK_PUBLIC_PORT },
        { name: 'ingress-private', port: p.ingressPrivate, targetPort: TRAEFIK_PRIVATE_PORT },
        ...(p.ingressTls !== undefined ? [{ name: 'ingress-tls', port: p.ingressTls, targetPort: TRAEFIK_SECURE_PORT }] : []),
      ],
      log,
    },
    info.bins.KUBECTL,
  );
  await startTraefik(info, node, log);
  return node;
}

async function stopRealNodeOf(dir: string, log?: (s: string) => void): Promise<void> {
  const marker = path.join(dir, REAL_NODE_MARKER);
  if (!existsSync(marker)) return;
  const { apiserverPort } = JSON.parse(readFileSync(marker, 'utf8')) as { apiserverPort: number };
  const { REAL_NODE_NAME, stopRealNode } = await import('./node.js');
  await stopRealNode(dir, apiserverPort, log);
  // Its Node object would go on saying Ready until the node lifecycle controller notices, and attract pods meanwhile.
  const kubectlBin = /^KUBECTL=(.+)$/m.exec((await run('bash', [path.join(repoRoot, 'dev', 'toolchain.sh'), 'paths'])).stdout)?.[1];
  if (kubectlBin && existsSync(path.join(dir, 'kubeconfig'))) {
    await run(kubectlBin, [
      '--kubeconfig',
      path.join(dir, 'kubeconfig'),
      'delete',
      'node',
      REAL_NODE_NAME,
      '--ignore-not-found',
      '--request-timeout=10s',
    ]).catch(() => log?.("could not delete the real node's Node object (the API server is not answering)"));
  }
  rmSync(marker, { force: true });
}

const webhookConfigurationKinds = ['mutatingwebhookconfiguration', 'validatingwebhookconfiguration'];

async function unregisterWebhooks(info: StackInfo): Promise<void> {
  const { webhookConfigurations, urlClientConfig } = await import('../webhook/configurations.js');
  const names = webhookConfigurations('knative-serving', urlClientConfig('')).map((c) => (c.metadata as { name: string }).name);
  for (const kind of webhookConfigurationKinds) await kubectl(info, ['delete', kind, ...names, '--ignore-not-found']);
}

/**
 * The admission webhook's front door on the local stack: the loopback balancer (dev/webhook-balancer.ts) on
 * `ports.webhook`, forwarding to the replicas' webhook ports, and the three webhook configurations registered with
 * `url: https://127.0.0.1:<ports.webhook>/…` — never a `service:` reference, which the API server would resolve to an
 * unroutable ClusterIP. The controller publishes its CA into their caBundle when it starts.
 */
export async function startWebhookFront(info: StackInfo, procs: ProcessTable, log: (s: string) => void): Promise<void> {
  const p = info.ports;
  if (p.webhook === undefined || p.controllerWebhook === undefined) return;
  if (!procs.running('webhook-balancer')) {
    log('starting webhook-balancer');
    const backends = Array.from({ length: WEBHOOK_REPLICA_SLOTS }, (_, i) => {
      const r = replicaPorts(p, i);
      return ['--backend', `${r.controllerWebhook ?? 0}=http://127.0.0.1:${r.controllerMetrics}/readyz`];
    }).flat();
    const rec = procs.start(
      'webhook-balancer',
      process.execPath,
      ['--import', 'tsx', path.join(repoRoot, 'dev', 'webhook-balancer.ts'), '--listen', String(p.webhook), ...backends],
      process.env,
      repoRoot,
    );
    await waitFor('webhook-balancer', () => portOpen(p.webhook ?? 0), 30_000, rec);
  }
  const { webhookConfigurations, urlClientConfig } = await import('../webhook/configurations.js');
  const docs = webhookConfigurations('knative-serving', urlClientConfig(`https://127.0.0.1:${p.webhook}`));
  await kubectl(info, ['apply', '--server-side', '--field-manager=tidal-installer', '-f', '-'], docs.map((d) => JSON.stringify(d)).join('\n---\n'));
}

/** Another build of the controller than this checkout's dist/: an earlier release's (dev/previous-release.ts). */
export interface ControllerBuild {
  controller: string;
  workflowBundle: string;
}

/**
 * Tidal's controller (watcher + worker) as a background process: the built dist/controller.js on plain node with the
 * prebuilt workflow bundle, as production runs it (no tsx, no bundling in the controller). dist/ is rebuilt
 * first, in a child process under a lock, when the sources changed since it was built (workers/build.ts).
 * `controllerBuild` runs another build's controller and bundle instead (not the in-cluster way).
 */
export async function startController(
  info: StackInfo,
  procs: ProcessTable,
  opts: Pick<StackOptions, 'ports' | 'controllerEnv' | 'controllerInCluster'> & { controllerBuild?: ControllerBuild },
  log: (s: string) => void,
  name = 'tidal-controller',
  /** Wait for /readyz (default); false returns once the process is started (the chaos run watches it itself). */
  wait = true,
): Promise<ProcessRecord> {
  const existing = procs.running(name);
  if (existing) return existing;
  const build = await import('../workers/build.js');
  if (opts.controllerBuild && opts.controllerInCluster) throw new Error('controllerBuild runs a build of its own, not the in-cluster way');
  if (!opts.controllerBuild && !build.isBuildFresh()) {
    log('building dist/ (npm run build)');
    mkdirSync(build.distDir, { recursive: true });
    // Under flock: concurrent stacks (npm test while npm run up) build once; the script re-checks under the lock.
    const lock = path.join(build.distDir, '.build.lock');
    const built = await run('flock', [lock, process.execPath, '--import', 'tsx', path.join(repoRoot, 'workers', 'build.ts'), '--if-stale'], {
      cwd: repoRoot,
    }).catch((err: Error & { stderr?: string }) => {
      throw new Error(`npm run build failed: ${err.stderr || err.message}`);
    });
    for (const line of built.stderr.split('\n')) if (line.trim() !== '') log(line);
  }
  if (opts.controllerInCluster) {
    log(`starting ${name} the in-cluster way (ServiceAccount controller, no kubeconfig)`);
    const rec = await (await import('./incluster.js')).startInClusterController(info, procs, opts, name);
    await waitFor(name, () => httpOk(`http://127.0.0.1:${opts.ports.controllerMetrics}/readyz`), 120_000, rec);
    return rec;
  }
  const malloc = controllerMalloc();
  const from = opts.controllerBuild ? ` from ${opts.controllerBuild.controller}` : '';
  log(`starting ${name}${from} (malloc: ${malloc.allocator}${malloc.note ? `; ${malloc.note}` : ''})`);
  const rec = procs.start(
    name,
    process.execPath,
    [
      // TIDAL_CPU_PROF_DIR: a V8 CPU profile of the controller, written there when it stops (benchmarks' "why").
      ...(process.env.TIDAL_CPU_PROF_DIR ? ['--cpu-prof', `--cpu-prof-dir=${process.env.TIDAL_CPU_PROF_DIR}`] : []),
      ...CONTROLLER_NODE_FLAGS,
      // TIDAL_CONTROLLER_NODE_ARGS: extra node/V8 flags for the controller, after its own (the last one wins; benchmarks
      // try heap settings with it).
      ...spaceSeparated(process.env.TIDAL_CONTROLLER_NODE_ARGS),
      opts.controllerBuild?.controller ?? build.builtController,
    ],
    {
      ...process.env,
      // jemalloc when the machine has it, else glibc's with two arenas (dev/allocator.ts; the image does the same).
      ...malloc.env,
      KUBECONFIG: info.kubeconfig,
      TEMPORAL_ADDRESS: info.temporalAddress,
      METRICS_PORT: String(opts.ports.controllerMetrics),
      TIDAL_WORKFLOW_BUNDLE: opts.controllerBuild?.workflowBundle ?? build.builtWorkflowBundle,
      // The admission webhook on this replica's own loopback port, behind the stack's balancer; none without one.
      ...(opts.ports.controllerWebhook !== undefined && opts.ports.webhook !== undefined
        ? { TIDAL_WEBHOOK_PORT: String(opts.ports.controllerWebhook), TIDAL_WEBHOOK_HOST: '127.0.0.1' }
        : { TIDAL_WEBHOOK: 'false' }),
      ...opts.controllerEnv,
    },
    repoRoot,
  );
  if (wait) await waitFor(name, () => httpOk(`http://127.0.0.1:${opts.ports.controllerMetrics}/readyz`), 120_000, rec);
  return rec;
}

/**
 * The dev server's Go garbage collector target: the heap may grow to 1.4× what survived the last collection instead of
 * Go's 2×, for a little more of its CPU; lower values cost much more CPU for little memory (docs/benchmarks.md has the
 * figures of each). The PostgreSQL Temporal, the production shape, keeps Go's default.
 */
export const DevTemporalGoGC = '40';

/**
 * The Go runtime's memory settings for the local stack's dev Temporal: `GOGC` from `TIDAL_TEMPORAL_GOGC`, else
 * `DevTemporalGoGC` (`100` is Go's own default), and a soft memory limit from `TIDAL_TEMPORAL_GOMEMLIMIT` (unset or
 * '': none), which makes its garbage collector give memory back sooner for more of its CPU (docs/benchmarks.md).
 */
export function temporalGoEnv(env: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  const limit = env.TIDAL_TEMPORAL_GOMEMLIMIT ?? '';
  const gogc = env.TIDAL_TEMPORAL_GOGC || DevTemporalGoGC;
  return { ...env, ...(limit ? { GOMEMLIMIT: limit } : {}), GOGC: gogc };
}

/**
 * The dev server's SQLite page cache at 256 KiB instead of SQLite's 2,000 KiB. Its C memory comes from modernc's
 * allocator, which rounds each allocation up to a power of two, so a 4 KiB page and its header take an 8 KiB slot: the
 * default cache holds twice its size once a burst has filled it, and keeps it. A miss reads the page from the kernel's
 * page cache (WAL mode), at the same CPU (docs/benchmarks.md). The PostgreSQL Temporal has no SQLite.
 */
export const DevTemporalSqlitePageCache = ['cache_size=-256'];

/**
 * The dev server's extra SQLite pragmas (`name=value`), from env TIDAL_TEMPORAL_SQLITE_PRAGMAS, separated by spaces.
 * Given after the stack's own, so one of the same name wins (`cache_size=-2000` gives back SQLite's default).
 */
export function devTemporalSqlitePragmas(env: NodeJS.ProcessEnv = process.env): string[] {
  return spaceSeparated(env.TIDAL_TEMPORAL_SQLITE_PRAGMAS);
}

/**
 * Temporal's extra dynamic config settings (`key=JSON value`): the caller's, then those of env
 * TIDAL_TEMPORAL_DYNAMIC_CONFIG, separated by spaces (a JSON value with a space cannot be given there).
 */
export function temporalDynamicConfig(settings: string[] = [], env: NodeJS.ProcessEnv = process.env): string[] {
  return [...settings, ...spaceSeparated(env.TIDAL_TEMPORAL_DYNAMIC_CONFIG)];
}

/**
 * The dev server's history service sizes its task worker pools for a production host: 512 goroutines each for the
 * transfer, timer and visibility queues, 64 for in-memory timers and 640 for replication, which a server of one
 * cluster never uses — thousands of goroutines whose stacks it holds and its garbage collector scans. On the local stack
 * (one history shard, a few cores, SQLite's one writer) a few workers per queue keep up, at the same CPU per Service and
 * latency and with less memory (docs/benchmarks.md). Given first, so TIDAL_TEMPORAL_DYNAMIC_CONFIG (or a caller) setting the
 * same key, spelled the same, wins. The PostgreSQL Temporal, the production shape, keeps the production defaults.
 */
export const DevTemporalWorkerPools = [
  'history.transferProcessorSchedulerWorkerCount=16',
  'history.timerProcessorSchedulerWorkerCount=16',
  'history.visibilityProcessorSchedulerWorkerCount=16',
  'history.memoryTimerProcessorSchedulerWorkerCount=8',
  'history.ReplicationProcessorSchedulerWorkerCount=1',
  'history.ReplicationLowPriorityProcessorSchedulerWorkerCount=1',
];

/**
 * The dev server's maintenance scanners off: the task queue scanner sweeps tasks and task queues matching left behind
 * and the history scanner orphaned history branches — a cluster's long-term upkeep, for which a local stack's database
 * is purged instead (`npm run down -- --purge`). Their workers and pollers hold goroutines and memory of the dev server
 * even idle (docs/benchmarks.md). Retention, which deletes closed runs, is the history service's own timer
 * and stays. The PostgreSQL Temporal, the production shape, keeps its scanners.
 */
export const DevTemporalScannersOff = ['worker.taskQueueScannerEnabled=false', 'worker.historyScannerEnabled=false'];

/**
 * The dev server's cache of event batches for cross-cluster replication at its floor (64 KiB; 8 MiB by default): the
 * history service puts every batch it writes there for a replication stream to read, and a server of one cluster has
 * none, so a burst filled it with blobs nothing reads, kept until newer ones push them out; at its floor the dev server
 * holds less after a burst and at rest, at the same CPU (docs/benchmarks.md). The PostgreSQL
 * Temporal, the production shape (which may replicate), keeps the default.
 */
export const DevTemporalReplicationCacheFloor = ['history.xdcCacheMaxSizeBytes=65536'];

/**
 * The dev server's cache of workflow executions' mutable state at 512 entries instead of 128,000: the history service
 * keeps a run's state there after the run has closed, until the cache's bound or its hour's TTL (touched) pushes it out,
 * so every entity run a burst started and ended stayed in the Go heap. 512 is above what a burst of 200 Services has
 * under way at once (two runs each) and far above the requests in flight, each of which pins its entry while it runs
 * (a cache full of pinned entries would refuse a request as overloaded; the client retries). A miss reads the state
 * from SQLite, at the same CPU and with less memory after a burst and at rest, more so the more Services have run
 * (docs/benchmarks.md). The PostgreSQL Temporal, the production
 * shape, keeps the default.
 */
export const DevTemporalHistoryCacheSize = ['history.hostLevelCacheMaxSize=512'];

/** Temporal's own number of partitions per task queue (`matching.numTaskqueueReadPartitions`/`WritePartitions`). */
export const TemporalDefaultTaskQueuePartitions = 4;

/**
 * One partition per task queue for the dev server: its one matching host gains nothing from four, each a set of
 * goroutines and buffers for every queue (Tidal's and the server's own): with one, fewer goroutines and less memory idle,
 * after a burst and at rest, and less of its CPU idle, at the same CPU per Service (docs/benchmarks.md).
 */
export const DevTemporalTaskQueuePartitions = 1;

/** The dev server's SQLite database, in the stack's folder. */
export const DevTemporalDatabaseFile = 'temporal.db';

/** The file beside the dev server's database that records how many task-queue partitions it was made with. */
export const DevTemporalPartitionsFile = 'temporal-task-queue-partitions';

/**
 * How many task-queue partitions the dev server in `dir` runs with: what its database was made with. Fewer read
 * partitions than a database's queues were written with would strand the tasks waiting in the others, so a database
 * made before the stack chose one partition (no record beside it) keeps Temporal's four; a new one gets
 * `DevTemporalTaskQueuePartitions`, recorded before the server creates it.
 */
export function devTemporalPartitions(dir: string): number {
  const recordFile = path.join(dir, DevTemporalPartitionsFile);
  if (existsSync(recordFile)) {
    const text = readFileSync(recordFile, 'utf8');
    const recorded = Number(text.trim());
    if (Number.isInteger(recorded) && recorded >= 1) return recorded;
    throw new Error(`${recordFile}: expected a number of task-queue partitions, found ${JSON.stringify(text)}`);
  }
  if (existsSync(path.join(dir, DevTemporalDatabaseFile))) return TemporalDefaultTaskQueuePartitions;
  writeFileSync(recordFile, `${DevTemporalTaskQueuePartitions}\n`);
  return DevTemporalTaskQueuePartitions;
}

/** The dynamic config that gives every task queue `partitions` read and write partitions. */
export function taskQueuePartitionSettings(partitions: number): string[] {
  return [`matching.numTaskqueueReadPartitions=${partitions}`, `matching.numTaskqueueWritePartitions=${partitions}`];
}

/** The words of an environment variable's value, separated by spaces (none when unset). */
function spaceSeparated(value: string | undefined): string[] {
  return (value ?? '').split(' ').filter((w) => w !== '');
}

export async function stackDown(dir: string, opts: { purge?: boolean; log?: (s: string) => void } = {}): Promise<void> {
  const procs = new ProcessTable(path.resolve(dir));
  await stopRealNodeOf(path.resolve(dir), opts.log);
  await procs.stopAll(10_000, opts.log);
  if (opts.purge && existsSync(dir)) {
    for (const f of readdirSync(dir)) if (f !== 'kubeconfig') rmSync(path.join(dir, f), { recursive: true, force: true });
  }
}
