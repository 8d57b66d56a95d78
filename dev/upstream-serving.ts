// Upstream Knative Serving as the stack's control plane, in Tidal's place (`stackUp({ controlPlane: 'upstream' })`), so
// Knative's own suites can run against upstream on the same node, registry and ingress as against Tidal. The binaries
// are dev/build-knative.sh's; the CRDs, config maps and webhook configurations come from the same modules' config/.
//
// Where each part runs, since nothing on the host may dial anything but loopback:
// - controller and webhook: host processes with the stack's kubeconfig. The webhook configurations keep upstream's
//   `service:` references (the webhook reconciles them so), and the Service `webhook` is an ExternalName on 127.0.0.1,
//   so the API server dials loopback, at the port the configurations name.
// - activator and autoscaler: in the node's network and mount namespaces, where pod IPs route. They reach the API
//   server through the node's forward (same URL as on the host). The Service names they dial resolve through a DNS
//   responder of our own named by an /etc/resolv.conf bind-mounted in the node's private mount namespace only.
// - `activator-service` and `autoscaler` are Services without selectors whose Endpoints name the node IP, so
//   serverless Services in proxy mode send Traefik to the activator.
//
// Without a real node (kwok's pods, which nothing can reach: the benchmarks' stacks), `startUpstreamOnKwok` runs it with
// the stand-ins of UPSTREAM_KWOK_STAND_INS: no activator, the autoscaler in a network namespace of its own (its stats
// port is fixed at :8080, where the controller's probes listen on the host) reaching the API server through a socat
// forward over a unix socket, and dev/kingress-stand-in.ts in net-istio's place.
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import tls from 'node:tls';
import { promisify } from 'node:util';
import { parseAllDocuments } from 'yaml';
import type { KnativeBinaries } from './knative-images.js';
import { ensureForward, type RealNode } from './node.js';
import type { ProcessTable } from './processes.js';
import { kubectl, repoRoot } from './kubectl.js';
import { httpOk, portOpen, waitFor, yamlFiles } from './probes.js';
import type { StackInfo, StackPorts } from './stack.js';

const run = promisify(execFile);

export const UPSTREAM_NAMESPACE = 'knative-serving';

/** The processes' names in the stack's table. */
export const UpstreamProcesses = {
  controller: 'knative-controller',
  webhook: 'knative-webhook',
  activator: 'knative-activator',
  autoscaler: 'knative-autoscaler',
} as const;

/** On kwok: the KIngress stand-in, and the autoscaler's network namespace (its holder; its forwards add suffixes). */
const KINGRESS_STAND_IN = 'kingress-stand-in';
const AUTOSCALER_NETNS = 'knative-autoscaler-netns';

/** Upstream's webhook configurations (config/core/webhooks), removed while no webhook answers them. */
const WEBHOOK_CONFIGURATIONS = [
  ['mutatingwebhookconfiguration', 'webhook.serving.knative.dev'],
  ['validatingwebhookconfiguration', 'validation.webhook.serving.knative.dev'],
  ['validatingwebhookconfiguration', 'config.webhook.serving.knative.dev'],
] as const;

/**
 * The controller's health probes: fixed by knative.dev/pkg (`injection.HealthCheckDefaultPort`) on all of the host's
 * addresses, so this port must be free on the host.
 */
export const CONTROLLER_PROBES_PORT = 8080;

/** Ports in the node's namespace. The autoscaler's websocket port is fixed (the activator dials :8080). */
export const ActivatorPorts = { http: 8012, http2: 8013, https: 8112, metrics: 9090, profiling: 8008 } as const;
export const AutoscalerPorts = { websocket: 8080, metrics: 9091, profiling: 8009 } as const;

/** Ports on the host: the webhook where its configurations say, and metrics and profiling clear of each other. */
export function upstreamHostPorts(p: StackPorts) {
  if (p.webhook === undefined) throw new Error("controlPlane 'upstream' needs ports.webhook (its webhook's loopback port)");
  return {
    webhook: p.webhook,
    controllerMetrics: p.controllerMetrics,
    webhookMetrics: p.controllerMetrics + 1,
    controllerProfiling: p.controllerMetrics + 2,
    webhookProfiling: p.controllerMetrics + 3,
  };
}

export interface UpstreamInstall {
  /** Serving's, networking's (internal) and caching's CRDs. */
  crds: string[];
  namespace: string;
  /** Serving's config maps and networking's config-network. */
  configMaps: string[];
  /** The webhook configurations and the webhook's certificate Secret. */
  webhooks: string[];
  binaries: Record<keyof typeof UpstreamProcesses, string>;
}

/**
 * The sources of knative.dev/networking and knative.dev/caching the binaries were built with (dev/build-knative.sh's
 * module, which may replace the versions serving pins): their config/ has the CRDs that go with them. Read offline.
 */
async function companionModules(k: KnativeBinaries): Promise<{ networking: string; caching: string }> {
  const script = `source ${JSON.stringify(path.join(repoRoot, 'dev', 'go-env.sh'))} && GOPROXY=off go list -m -f '{{.Path}}={{.Dir}}' knative.dev/networking knative.dev/caching`;
  const { stdout } = await run('bash', ['-c', script], { cwd: path.join(path.dirname(k.binDir), 'src') });
  const dirs = Object.fromEntries(
    stdout
      .trim()
      .split('\n')
      .map((l) => l.split('=', 2) as [string, string]),
  );
  const networking = dirs['knative.dev/networking'];
  const caching = dirs['knative.dev/caching'];
  if (!networking || !caching) throw new Error(`the Knative build's module names no networking or caching source: ${stdout}`);
  return { networking, caching };
}

/** What to install and run, from dev/build-knative.sh's binaries and the module sources they were built from. */
export async function upstreamInstall(k: KnativeBinaries): Promise<UpstreamInstall> {
  const modules = await companionModules(k);
  const core = path.join(k.moduleDir, 'config', 'core');
  const networking = path.join(modules.networking, 'config');
  const install: UpstreamInstall = {
    crds: [
      ...yamlFiles(path.join(core, '300-resources')),
      ...['certificate', 'domain-claim', 'ingress', 'serverlessservice'].map((f) => path.join(networking, `${f}.yaml`)),
      // The revision reconciler makes caching.internal.knative.dev Images.
      path.join(modules.caching, 'config', 'image.yaml'),
    ],
    namespace: path.join(core, '100-namespace.yaml'),
    configMaps: [...yamlFiles(path.join(core, 'configmaps')), path.join(networking, 'config-network.yaml')],
    webhooks: yamlFiles(path.join(core, 'webhooks')),
    binaries: {
      controller: path.join(k.binDir, 'controller'),
      webhook: path.join(k.binDir, 'webhook'),
      activator: path.join(k.binDir, 'activator'),
      autoscaler: path.join(k.binDir, 'autoscaler'),
    },
  };
  const files = [...install.crds, install.namespace, ...install.configMaps, ...install.webhooks, ...Object.values(install.binaries)];
  const missing = files.filter((f) => !existsSync(f));
  if (missing.length > 0) throw new Error(`upstream Knative Serving: missing ${missing.join(', ')} (run dev/build-knative.sh)`);
  return install;
}

/** What upstream runs with on kwok's pods in place of what a network would give it (printed by the benchmarks). */
export const UPSTREAM_KWOK_STAND_INS = [
  "every KIngress marked Ready with net-istio's load balancers the moment it appears (dev/kingress-stand-in.ts; net-istio's part, not counted)",
  'config-autoscaler target-burst-capacity "-1", so the autoscaler scrapes no pod (a Metric without a scrape target)',
  'no activator: `activator-service` has an empty Endpoints, so each SKS serves from its pods',
  'the autoscaler in a network namespace of its own, reaching the API server through a socat forward (not counted)',
] as const;

/** The config map keys the kwok stand-ins need (the stack applies them over upstream's config maps). */
export const UPSTREAM_KWOK_CONFIG: Record<string, Record<string, string>> = {
  'config-autoscaler': { 'target-burst-capacity': '-1' },
};

/** Deletes upstream's webhook configurations (failurePolicy Fail): left without a webhook they refuse the config maps. */
export async function unregisterUpstreamWebhooks(info: StackInfo): Promise<void> {
  for (const [kind, name] of WEBHOOK_CONFIGURATIONS) await kubectl(info, ['delete', kind, name, '--ignore-not-found']);
}

type Doc = Record<string, unknown>;

function docs(files: string[]): Doc[] {
  return files.flatMap((f) => parseAllDocuments(readFileSync(f, 'utf8')).map((d) => d.toJSON() as Doc | null)).filter((d): d is Doc => d !== null);
}

/** Upstream's webhook configurations with their Service port set to the webhook's loopback port. */
export function webhookDocs(files: string[], port: number): Doc[] {
  return docs(files).map((d) => {
    const hooks = d.webhooks as { clientConfig?: { service?: Record<string, unknown> } }[] | undefined;
    if (!hooks) return d;
    return { ...d, webhooks: hooks.map((h) => ({ ...h, clientConfig: { ...h.clientConfig, service: { ...h.clientConfig?.service, port } } })) };
  });
}

/** A Service without a selector and its Endpoints at `ip`: `ports` are [name, Service port, port at `ip`]. */
function pinnedService(name: string, app: string, ip: string, ports: [string, number, number][]): Doc[] {
  const metadata = {
    name,
    namespace: UPSTREAM_NAMESPACE,
    labels: { app, 'app.kubernetes.io/component': app, 'app.kubernetes.io/name': 'knative-serving' },
  };
  return [
    {
      apiVersion: 'v1',
      kind: 'Service',
      metadata,
      spec: { type: 'ClusterIP', ports: ports.map(([n, port, targetPort]) => ({ name: n, port, targetPort })) },
    },
    {
      apiVersion: 'v1',
      kind: 'Endpoints',
      metadata,
      subsets: [{ addresses: [{ ip }], ports: ports.map(([n, , port]) => ({ name: n, port, protocol: 'TCP' })) }],
    },
  ];
}

/** The Services upstream's Deployments would have, pointing where the processes run. */
export function upstreamServices(webhookPort: number, nodeIp: string): Doc[] {
  const a = ActivatorPorts;
  const s = AutoscalerPorts;
  return [
    {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'webhook', namespace: UPSTREAM_NAMESPACE, labels: { app: 'webhook', role: 'webhook' } },
      // The API server resolves an ExternalName reference to `<externalName>:<the configuration's port>`.
      spec: { type: 'ExternalName', externalName: '127.0.0.1', ports: [{ name: 'https-webhook', port: webhookPort }] },
    },
    ...pinnedService('activator-service', 'activator', nodeIp, [
      ['http-metrics', 9090, a.metrics],
      ['http-profiling', 8008, a.profiling],
      ['http', 80, a.http],
      ['http2', 81, a.http2],
      ['https', 443, a.https],
    ]),
    ...pinnedService('autoscaler', 'autoscaler', nodeIp, [
      ['http-metrics', 9090, s.metrics],
      ['http-profiling', 8008, s.profiling],
      ['http', 8080, s.websocket],
    ]),
  ];
}

/** The Services upstream's Deployments would have on kwok: the webhook on loopback, an activator with no endpoints. */
export function upstreamKwokServices(webhookPort: number): Doc[] {
  const metadata = {
    name: 'activator-service',
    namespace: UPSTREAM_NAMESPACE,
    labels: { app: 'activator', 'app.kubernetes.io/component': 'activator', 'app.kubernetes.io/name': 'knative-serving' },
  };
  return [
    upstreamServices(webhookPort, '127.0.0.1')[0]!,
    {
      apiVersion: 'v1',
      kind: 'Service',
      metadata,
      spec: { type: 'ClusterIP', ports: [{ name: 'http', port: 80, targetPort: ActivatorPorts.http }] },
    },
    // No subsets: the SKS reconciler then serves every Revision from its pods.
    { apiVersion: 'v1', kind: 'Endpoints', metadata, subsets: [] },
  ];
}

/** Where the node's cluster DNS (dev/node-dns.ts) listens, inside the node's namespace. */
const NODE_DNS = '127.0.0.1:53';
const NODE_RESOLV_CONF = `nameserver ${NODE_DNS.split(':')[0]}\noptions ndots:1 timeout:2 attempts:2\n`;

/**
 * Service names for the processes in the node's mount namespace: dev/node-dns.ts answers `<svc>.<ns>.svc.cluster.local`
 * with the node IP for Services whose Endpoints are there (the activator dials the autoscaler's; the autoscaler probes a
 * Revision's public Service, which names the activator once it is in the path, before it scales to zero), and an
 * /etc/resolv.conf naming it is bind-mounted there only (private propagation: the host never sees it; it goes with the
 * namespace when the node stops). The Service ports a Revision's public Service has (80 http, 81 h2c) are forwarded on
 * the node IP to the activator's.
 */
async function serviceNamesInNode(info: StackInfo, procs: ProcessTable, node: RealNode): Promise<void> {
  const inNet = (name: string, bin: string, args: string[], execs: string) =>
    procs.running(name) ?? procs.start(name, 'nsenter', ['-t', String(node.holderPid), '-n', '--', bin, ...args], process.env, repoRoot, execs);
  const dnsScript = path.join(repoRoot, 'dev', 'node-dns.ts');
  inNet(
    'knative-node-dns',
    process.execPath,
    ['--import', 'tsx', dnsScript, '--listen', NODE_DNS, '--node-ip', node.nodeIp, '--kubeconfig', info.kubeconfig, '--kubectl', info.bins.KUBECTL],
    dnsScript,
  );
  for (const [port, target] of [
    [80, ActivatorPorts.http],
    [81, ActivatorPorts.http2],
  ] as const)
    inNet(`knative-node-fwd-${port}`, 'socat', [`TCP-LISTEN:${port},bind=${node.nodeIp},fork,reuseaddr`, `TCP:${node.nodeIp}:${target}`], 'socat');
  // /proc/<pid>/root resolves paths through that process's mounts.
  if (readFileSync(`/proc/${node.holderPid}/root/etc/resolv.conf`, 'utf8') === NODE_RESOLV_CONF) return;
  const file = path.join(info.dir, 'upstream', 'resolv.conf');
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, NODE_RESOLV_CONF);
  await run('nsenter', ['-t', String(node.holderPid), '-m', '--', 'mount', '--bind', file, '/etc/resolv.conf']);
}

/** The system CAs and the registry's, for Go's SSL_CERT_FILE: the controller resolves tags to digests there. */
function caBundle(dir: string, registryCaFile: string): string {
  const file = path.join(dir, 'upstream', 'ca-bundle.pem');
  mkdirSync(path.dirname(file), { recursive: true });
  const system = ['/etc/ssl/certs/ca-certificates.crt', '/etc/pki/tls/certs/ca-bundle.crt'].find((f) => existsSync(f));
  writeFileSync(file, `${system ? readFileSync(system, 'utf8').trimEnd() + '\n' : ''}${readFileSync(registryCaFile, 'utf8')}`);
  return file;
}

/** What every component's Deployment gives it (config/core/deployments), minus what the host's environment would add. */
function componentEnv(podName: string, extra: Record<string, string>): NodeJS.ProcessEnv {
  const env = { ...process.env };
  for (const k of ['KUBECONFIG', 'KUBERNETES_SERVICE_HOST', 'KUBERNETES_SERVICE_PORT']) delete env[k];
  return {
    ...env,
    POD_NAME: podName,
    SYSTEM_NAMESPACE: UPSTREAM_NAMESPACE,
    CONFIG_LOGGING_NAME: 'config-logging',
    CONFIG_OBSERVABILITY_NAME: 'config-observability',
    METRICS_DOMAIN: 'knative.dev/serving',
    ...extra,
  };
}

function applyObjects(info: StackInfo, objects: Doc[]): Promise<string> {
  return kubectl(
    info,
    ['apply', '--server-side', '--force-conflicts', '--field-manager=tidal-installer', '-f', '-'],
    JSON.stringify({ apiVersion: 'v1', kind: 'List', items: objects }),
  );
}

/**
 * The webhook and the controller, as host processes: the webhook waited for until its CA is in every configuration,
 * the controller until its readiness probe answers.
 */
async function startOnHost(
  info: StackInfo,
  procs: ProcessTable,
  install: UpstreamInstall,
  controllerEnv: Record<string, string>,
  log: (s: string) => void,
): Promise<void> {
  const hp = upstreamHostPorts(info.ports);
  const kubeconfig = ['--kubeconfig', info.kubeconfig];
  const P = UpstreamProcesses;
  if (!procs.running(P.webhook)) {
    log(`starting upstream's webhook on 127.0.0.1:${hp.webhook}`);
    procs.start(
      P.webhook,
      install.binaries.webhook,
      kubeconfig,
      componentEnv('webhook-0', {
        WEBHOOK_NAME: 'webhook',
        WEBHOOK_PORT: String(hp.webhook),
        METRICS_PROMETHEUS_HOST: '127.0.0.1',
        METRICS_PROMETHEUS_PORT: String(hp.webhookMetrics),
        PROFILING_PORT: String(hp.webhookProfiling),
      }),
    );
  }
  const webhook = procs.running(P.webhook);
  if (webhook)
    await waitFor(
      P.webhook,
      async () => (await tlsServes(hp.webhook, 'webhook.knative-serving.svc')) && (await caBundlesSet(info)),
      120_000,
      webhook,
    );

  if (!procs.running(P.controller)) {
    if (await portOpen(CONTROLLER_PROBES_PORT))
      throw new Error(`127.0.0.1:${CONTROLLER_PROBES_PORT} is taken: upstream's controller serves its probes on :${CONTROLLER_PROBES_PORT}`);
    log("starting upstream's controller");
    procs.start(
      P.controller,
      install.binaries.controller,
      kubeconfig,
      componentEnv('controller-0', {
        METRICS_PROMETHEUS_HOST: '127.0.0.1',
        METRICS_PROMETHEUS_PORT: String(hp.controllerMetrics),
        PROFILING_PORT: String(hp.controllerProfiling),
        ...controllerEnv,
      }),
    );
  }
  const controller = procs.running(P.controller);
  if (controller) await waitFor(P.controller, () => httpOk(`http://127.0.0.1:${CONTROLLER_PROBES_PORT}/readiness`), 120_000, controller);
}

/** Starts upstream's controller of a kwok stack again (after a kill), waited for until its readiness probe answers. */
export async function restartUpstreamController(
  info: StackInfo,
  procs: ProcessTable,
  install: UpstreamInstall,
  log: (s: string) => void,
): Promise<void> {
  await startOnHost(info, procs, install, {}, log);
}

/**
 * Upstream on kwok's pods, with UPSTREAM_KWOK_STAND_INS (the stack has applied UPSTREAM_KWOK_CONFIG): the webhook and
 * the controller on the host, the autoscaler in a network namespace of its own, the KIngress stand-in; no activator.
 */
export async function startUpstreamOnKwok(info: StackInfo, procs: ProcessTable, install: UpstreamInstall, log: (s: string) => void): Promise<void> {
  const hp = upstreamHostPorts(info.ports);
  await applyObjects(info, upstreamKwokServices(hp.webhook));
  await applyObjects(info, webhookDocs(install.webhooks, hp.webhook));
  const standIn = path.join(repoRoot, 'dev', 'kingress-stand-in.ts');
  if (!procs.running(KINGRESS_STAND_IN))
    procs.start(KINGRESS_STAND_IN, process.execPath, ['--import', 'tsx', standIn, '--kubeconfig', info.kubeconfig], process.env, repoRoot, standIn);
  await startOnHost(info, procs, install, {}, log);

  const P = UpstreamProcesses;
  let holder = procs.running(AUTOSCALER_NETNS);
  if (!holder) {
    holder = procs.start(AUTOSCALER_NETNS, 'unshare', ['--net', '--', 'sleep', 'infinity'], process.env, undefined, 'sleep');
    const pid = holder.pid;
    await waitFor(AUTOSCALER_NETNS, () => Promise.resolve(readlinkSync(`/proc/${pid}/ns/net`) !== readlinkSync('/proc/self/ns/net')), 5000, holder);
    await run('nsenter', ['-t', String(pid), '-n', '--', 'ip', 'link', 'set', 'lo', 'up']);
  }
  const inNs = ['-t', String(holder.pid), '-n', '--'];
  // Its 127.0.0.1:<API server port> → a unix socket → the host's: the same kubeconfig works inside.
  const runDir = path.join(info.dir, 'upstream');
  mkdirSync(runDir, { recursive: true });
  await ensureForward(procs, holder.pid, runDir, { name: 'apiserver', port: info.ports.apiserver }, 'out', `${AUTOSCALER_NETNS}-fwd`);
  if (!procs.running(P.autoscaler)) {
    log("starting upstream's autoscaler in a network namespace of its own");
    procs.start(
      P.autoscaler,
      'nsenter',
      [...inNs, install.binaries.autoscaler, '--kubeconfig', info.kubeconfig],
      componentEnv('autoscaler-0', {
        // What it publishes in its bucket's Endpoints for other replicas and the activator (none here): an address
        // the API server accepts there (not loopback) and nothing routes (TEST-NET-1).
        POD_IP: '192.0.2.1',
        METRICS_PROMETHEUS_PORT: String(AutoscalerPorts.metrics),
        PROFILING_PORT: String(AutoscalerPorts.profiling),
      }),
      undefined,
      install.binaries.autoscaler,
    );
  }
  const autoscaler = procs.running(P.autoscaler);
  if (autoscaler) await waitFor(P.autoscaler, async () => (await probeInNode(holder.pid, AutoscalerPorts.websocket)) === 200, 120_000, autoscaler);
  log('upstream Knative Serving is up on kwok (controller and webhook on the host, the autoscaler apart, no activator)');
}

/** Whether a TLS server answers a handshake for `servername` on 127.0.0.1:`port`. */
function tlsServes(port: number, servername: string): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = tls.connect({ host: '127.0.0.1', port, servername, rejectUnauthorized: false, timeout: 2000 }, () => {
      socket.end();
      resolve(true);
    });
    socket.on('error', () => resolve(false));
    socket.on('timeout', () => {
      socket.destroy();
      resolve(false);
    });
  });
}

/**
 * The status of a kubelet-style probe (GET / as kube-probe) to 127.0.0.1:`port` inside the node's network namespace,
 * where the host cannot dial; 0 when nothing answers.
 */
async function probeInNode(holderPid: number, port: number): Promise<number> {
  const request = 'GET / HTTP/1.1\r\nHost: localhost\r\nUser-Agent: kube-probe/1.35\r\nK-Kubelet-Probe: queue\r\nConnection: close\r\n\r\n';
  const out = await new Promise<string>((resolve) => {
    const child = execFile(
      'nsenter',
      ['-t', String(holderPid), '-n', '--', 'socat', '-T', '3', '-', `TCP:127.0.0.1:${port}`],
      { timeout: 5000 },
      (_err, stdout) => resolve(stdout),
    );
    // Nothing listening yet: socat exits before it reads the request.
    child.stdin?.on('error', () => undefined);
    child.stdin?.end(request);
  });
  return Number(/^HTTP\/1\.[01] (\d{3})/.exec(out)?.[1] ?? 0);
}

async function caBundlesSet(info: StackInfo): Promise<boolean> {
  for (const [kind, name] of WEBHOOK_CONFIGURATIONS) {
    const ca = await kubectl(info, ['get', kind, name, '-o', 'jsonpath={.webhooks[0].clientConfig.caBundle}']);
    if (ca.trim() === '') return false;
  }
  return true;
}

/**
 * Registers upstream's webhook configurations and Services and starts (or keeps) its four processes, each waited for:
 * the webhook until its CA is in every configuration, the controller until its readiness probe answers, the autoscaler
 * until its stats server answers, the activator until it reports ready (which needs its websocket to the autoscaler).
 */
export async function startUpstreamServing(
  info: StackInfo,
  procs: ProcessTable,
  node: RealNode,
  install: UpstreamInstall,
  registryCaFile: string,
  log: (s: string) => void,
): Promise<void> {
  const hp = upstreamHostPorts(info.ports);
  await applyObjects(info, upstreamServices(hp.webhook, node.nodeIp));
  await applyObjects(info, webhookDocs(install.webhooks, hp.webhook));
  await serviceNamesInNode(info, procs, node);
  await startOnHost(info, procs, install, { SSL_CERT_FILE: caBundle(info.dir, registryCaFile) }, log);
  const kubeconfig = ['--kubeconfig', info.kubeconfig];
  const P = UpstreamProcesses;

  const inNode = (name: string, bin: string, env: NodeJS.ProcessEnv) =>
    procs.start(name, 'nsenter', ['-t', String(node.holderPid), '-m', '-n', '--', bin, ...kubeconfig], env, undefined, bin);
  if (!procs.running(P.autoscaler)) {
    log("starting upstream's autoscaler in the node's namespace");
    inNode(
      P.autoscaler,
      install.binaries.autoscaler,
      componentEnv('autoscaler-0', {
        POD_IP: node.nodeIp,
        METRICS_PROMETHEUS_PORT: String(AutoscalerPorts.metrics),
        PROFILING_PORT: String(AutoscalerPorts.profiling),
      }),
    );
  }
  const autoscaler = procs.running(P.autoscaler);
  if (autoscaler)
    await waitFor(P.autoscaler, async () => (await probeInNode(node.holderPid, AutoscalerPorts.websocket)) === 200, 120_000, autoscaler);

  if (!procs.running(P.activator)) {
    log("starting upstream's activator in the node's namespace");
    inNode(
      P.activator,
      install.binaries.activator,
      componentEnv('activator-0', {
        // As its Deployment: collect when new memory is 500 % of the live heap.
        GOGC: '500',
        POD_IP: node.nodeIp,
        METRICS_PROMETHEUS_PORT: String(ActivatorPorts.metrics),
        PROFILING_PORT: String(ActivatorPorts.profiling),
      }),
    );
  }
  const activator = procs.running(P.activator);
  if (activator) await waitFor(P.activator, async () => (await probeInNode(node.holderPid, ActivatorPorts.http)) === 200, 120_000, activator);
  log('upstream Knative Serving is up (controller and webhook on the host, activator and autoscaler on the node)');
}
