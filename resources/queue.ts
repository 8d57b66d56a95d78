// The queue-proxy sidecar (Knative's queue.go) and the serving-port facts the Deployment and the
// revision Service share.
import { isQuantity } from '../api/config/index.js';
import type { RevisionConfig } from '../api/config/types.js';
import { Labels } from '../api/labels.js';
import { controllerOf } from '../api/meta.js';
import type { Container, EnvVar, Revision, RevisionSpec } from '../api/serving.js';
import { DEFAULT_OBSERVABILITY_CONFIG } from './queue-observability.js';

export const QUEUE_CONTAINER_NAME = 'queue-proxy';
/** Name of the single port Knative gives the serving container. */
export const USER_PORT_NAME = 'user-port';
/** The serving container's port when it declares none. */
export const DEFAULT_USER_PORT = 8080;
/** Port name that selects HTTP/2 cleartext end to end. */
export const H2C_PORT_NAME = 'h2c';

/** Ports queue-proxy listens on (knative.dev/serving pkg/networking). */
export const QueuePorts = {
  /** Serving port for HTTP/1 (and h2c upgrade) traffic. */
  http: 8012,
  /** Serving port when the user port is named h2c. */
  http2: 8013,
  /** TLS serving port. */
  https: 8112,
  /** Admin port: /wait-for-drain for the user container's preStop hook. */
  admin: 8022,
  autoscalingMetrics: 9090,
  userMetrics: 9091,
} as const;

/** preStop path on the queue-proxy admin port that blocks until in-flight requests drained. */
export const DRAIN_PATH = '/wait-for-drain';
/** Header queue-proxy recognises as its own readiness probe. */
export const PROBE_HEADER = 'K-Network-Probe';
export const PROBE_HEADER_VALUE = 'queue';
/** Address the queue-proxy uses to reach the user container inside the pod. */
const LOCAL_ADDRESS = '127.0.0.1';
/** queue-sidecar-cpu-request when config-deployment leaves it unset. */
export const DEFAULT_QUEUE_CPU_REQUEST = '25m';

export { DEFAULT_OBSERVABILITY_CONFIG };

/** Revision annotation enabling full-duplex HTTP in queue-proxy (value `Enabled`, case-insensitive). */
export const HTTP_FULL_DUPLEX_ANNOTATION = 'features.knative.dev/http-full-duplex';

/** Per-revision queue-proxy resource overrides (`queue.sidecar.serving.knative.dev/<resource>-resource-<kind>`). */
export const QueueResourceAnnotations = {
  cpuRequest: 'queue.sidecar.serving.knative.dev/cpu-resource-request',
  cpuLimit: 'queue.sidecar.serving.knative.dev/cpu-resource-limit',
  memoryRequest: 'queue.sidecar.serving.knative.dev/memory-resource-request',
  memoryLimit: 'queue.sidecar.serving.knative.dev/memory-resource-limit',
  ephemeralStorageRequest: 'queue.sidecar.serving.knative.dev/ephemeral-storage-resource-request',
  ephemeralStorageLimit: 'queue.sidecar.serving.knative.dev/ephemeral-storage-resource-limit',
} as const;

// ---- probes ----

export interface HTTPHeader {
  name: string;
  value: string;
}

/** A core/v1 Probe, as far as Tidal reads it. Ports are numbers or (named) strings, as intstr allows. */
export interface Probe {
  exec?: { command?: string[] };
  httpGet?: { path?: string; port?: number | string; host?: string; scheme?: string; httpHeaders?: HTTPHeader[] };
  tcpSocket?: { port?: number | string; host?: string };
  grpc?: { port?: number; service?: string | null };
  initialDelaySeconds?: number;
  timeoutSeconds?: number;
  periodSeconds?: number;
  successThreshold?: number;
  failureThreshold?: number;
  terminationGracePeriodSeconds?: number;
  [field: string]: unknown;
}

/** The probe under `field` of a container, if it is an object. */
export function probeOf(c: Container, field: 'readinessProbe' | 'livenessProbe' | 'startupProbe'): Probe | undefined {
  const p = c[field];
  return p !== null && typeof p === 'object' ? (p as Probe) : undefined;
}

/** intstr's IntValue(): a number as is, a numeric string parsed, anything else 0. */
function intValue(port: number | string | undefined): number {
  if (typeof port === 'number') return port;
  if (typeof port === 'string' && /^[+-]?\d+$/.test(port)) return Number.parseInt(port, 10);
  return 0;
}

/** True for the probe kinds queue-proxy performs for the user container (HTTP, TCP, gRPC). */
export function isNetworkProbe(p: Probe | undefined): boolean {
  return p !== undefined && (p.httpGet !== undefined || p.tcpSocket !== undefined || p.grpc !== undefined);
}

const handlerKeys = ['exec', 'httpGet', 'tcpSocket', 'grpc'] as const;
const timingKeys = [
  'initialDelaySeconds',
  'timeoutSeconds',
  'periodSeconds',
  'successThreshold',
  'failureThreshold',
  'terminationGracePeriodSeconds',
] as const;
const knownProbeKeys = new Set<string>([...handlerKeys, ...timingKeys]);

/** A probe's settings without its handler (exec/httpGet/tcpSocket/grpc). */
function probeTimings(p: Probe): Probe {
  const out: Probe = { ...p };
  for (const k of handlerKeys) delete out[k];
  return out;
}

/**
 * The user's readiness probe as queue-proxy runs it (Knative's applyReadinessProbeDefaultsForExec): HTTP and TCP
 * probes aimed at `127.0.0.1` on the probe's own port (or the user port when it has none), HTTP scheme defaulted;
 * an exec probe (which stays on the user container for the kubelet) becomes a TCP probe of the user port; a gRPC
 * probe is kept as is. With a period set, the timeout is at least 1 s.
 */
export function queueSideReadinessProbe(userProbe: Probe, userPort: number): Probe {
  const p = structuredClone(userProbe);
  let probePort = userPort;
  if (p.httpGet && intValue(p.httpGet.port) !== 0) probePort = intValue(p.httpGet.port);
  if (p.tcpSocket && intValue(p.tcpSocket.port) !== 0) probePort = intValue(p.tcpSocket.port);
  if (p.httpGet) {
    p.httpGet = { ...p.httpGet, host: LOCAL_ADDRESS, port: probePort, scheme: p.httpGet.scheme || 'HTTP' };
  } else if (p.tcpSocket) {
    p.tcpSocket = { ...p.tcpSocket, host: LOCAL_ADDRESS, port: probePort };
  } else if (p.exec) {
    delete p.exec;
    p.tcpSocket = { host: LOCAL_ADDRESS, port: probePort };
  }
  if ((p.periodSeconds ?? 0) > 0 && (p.timeoutSeconds ?? 0) < 1) p.timeoutSeconds = 1;
  return p;
}

function omitEmpty(obj: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(obj)) {
    if (v === undefined || v === 0 || v === '' || (Array.isArray(v) && v.length === 0)) continue;
    out[k] = v;
  }
  return out;
}

/**
 * JSON of a probe with the field order and `omitempty` rules of Go's encoding of corev1.Probe, so
 * `SERVING_READINESS_PROBE` reads exactly as Knative writes it, e.g. `{"tcpSocket":{"port":8080,"host":"127.0.0.1"}}`.
 * Fields Tidal does not model are appended after the known ones.
 */
export function encodeProbe(p: Probe): string {
  const ordered: Record<string, unknown> = {};
  if (p.exec) ordered.exec = omitEmpty({ command: p.exec.command });
  if (p.httpGet) {
    const h = p.httpGet;
    ordered.httpGet = {
      ...omitEmpty({ path: h.path }),
      port: h.port ?? 0,
      ...omitEmpty({ host: h.host, scheme: h.scheme, httpHeaders: h.httpHeaders }),
    };
  }
  if (p.tcpSocket) ordered.tcpSocket = { port: p.tcpSocket.port ?? 0, ...omitEmpty({ host: p.tcpSocket.host }) };
  if (p.grpc) ordered.grpc = { port: p.grpc.port ?? 0, service: p.grpc.service ?? null };
  for (const k of timingKeys) {
    const v = p[k];
    if (v !== undefined && v !== 0) ordered[k] = v;
  }
  for (const [k, v] of Object.entries(p)) {
    if (!knownProbeKeys.has(k) && v !== undefined) ordered[k] = v;
  }
  return JSON.stringify(ordered);
}

// ---- serving container and ports ----

/**
 * Index of the serving container (Knative's `RevisionSpec.GetContainer`): the only container, else the first one
 * declaring ports; -1 when a multi-container spec declares none (the webhook rejects that).
 */
export function servingContainerIndex(spec: RevisionSpec): number {
  if (spec.containers.length === 1) return 0;
  return spec.containers.findIndex((c) => (c.ports?.length ?? 0) > 0);
}

function servingContainer(spec: RevisionSpec): Container | undefined {
  const i = servingContainerIndex(spec);
  return i < 0 ? undefined : spec.containers[i];
}

/** The user port: the serving container's first declared containerPort, else 8080. */
export function userPortOf(rev: Revision): number {
  const port = servingContainer(rev.spec)?.ports?.[0]?.containerPort;
  return port !== undefined && port !== 0 ? port : DEFAULT_USER_PORT;
}

/** True when the serving container's first port is named `h2c` (Knative's Revision.GetProtocol() == h2c). */
export function isH2C(rev: Revision): boolean {
  return servingContainer(rev.spec)?.ports?.[0]?.name === H2C_PORT_NAME;
}

/** Whether this config injects queue-proxy (hakn: only when config-deployment names an image). */
export function hasQueueProxy(cfg: RevisionConfig): boolean {
  return cfg.deployment.queueSidecarImage !== '';
}

/** queue-proxy's serving port for this revision: 8013 for h2c, else 8012. */
export function queueServingPort(rev: Revision): number {
  return isH2C(rev) ? QueuePorts.http2 : QueuePorts.http;
}

// ---- the sidecar ----

/** Values for queue-proxy's environment that do not come from the Revision or the RevisionConfig. */
export interface QueueProxyOptions {
  /** SYSTEM_NAMESPACE: where Tidal's config maps live (Knative: knative-serving). */
  systemNamespace: string;
  /** SERVING_LOGGING_CONFIG (config-logging zap-logger-config); default ''. */
  loggingConfig?: string;
  /** SERVING_LOGGING_LEVEL (config-logging loglevel.queueproxy); default ''. */
  loggingLevel?: string;
  /** OBSERVABILITY_CONFIG JSON (queue-observability.ts); default {@link DEFAULT_OBSERVABILITY_CONFIG}, Knative's defaults. */
  observabilityConfig?: string;
  /** ROOT_CA (config-deployment queue-sidecar-rootca); default ''. */
  rootCA?: string;
  /** ENABLE_HTTP2_AUTO_DETECTION (config-features autodetect-http2); default false. */
  enableHTTP2AutoDetection?: boolean;
  /** QUEUE_PROXY_TLS_* values; default ''. */
  tlsMinVersion?: string;
  tlsMaxVersion?: string;
  tlsCipherSuites?: string;
  tlsCurvePreferences?: string;
}

function queueResources(rev: Revision, cfg: RevisionConfig): Record<string, Record<string, string>> {
  const d = cfg.deployment;
  const requests: Record<string, string> = { cpu: d.queueSidecarCpuRequest ?? DEFAULT_QUEUE_CPU_REQUEST };
  const limits: Record<string, string> = {};
  if (d.queueSidecarCpuLimit !== undefined) limits.cpu = d.queueSidecarCpuLimit;
  if (d.queueSidecarMemoryRequest !== undefined) requests.memory = d.queueSidecarMemoryRequest;
  if (d.queueSidecarMemoryLimit !== undefined) limits.memory = d.queueSidecarMemoryLimit;
  if (d.queueSidecarEphemeralStorageRequest !== undefined) requests['ephemeral-storage'] = d.queueSidecarEphemeralStorageRequest;
  if (d.queueSidecarEphemeralStorageLimit !== undefined) limits['ephemeral-storage'] = d.queueSidecarEphemeralStorageLimit;

  const ann = rev.metadata.annotations ?? {};
  const overrides: [string, Record<string, string>, string][] = [
    [QueueResourceAnnotations.cpuRequest, requests, 'cpu'],
    [QueueResourceAnnotations.cpuLimit, limits, 'cpu'],
    [QueueResourceAnnotations.memoryRequest, requests, 'memory'],
    [QueueResourceAnnotations.memoryLimit, limits, 'memory'],
    [QueueResourceAnnotations.ephemeralStorageRequest, requests, 'ephemeral-storage'],
    [QueueResourceAnnotations.ephemeralStorageLimit, limits, 'ephemeral-storage'],
  ];
  for (const [key, target, resource] of overrides) {
    const v = ann[key];
    if (v !== undefined && isQuantity(v)) target[resource] = v;
  }
  return Object.keys(limits).length > 0 ? { requests, limits } : { requests };
}

const env = (name: string, value: string): EnvVar => ({ name, value });
const fieldEnv = (name: string, fieldPath: string, apiVersion?: string): EnvVar => ({
  name,
  valueFrom: { fieldRef: apiVersion !== undefined ? { apiVersion, fieldPath } : { fieldPath } },
});

/**
 * The queue-proxy container for `rev` (only call it when {@link hasQueueProxy}): image from config-deployment,
 * ports `http-autometric` 9090, `http-usermetric` 9091, `queue-port` 8012 (8013 for h2c), `https-port` 8112, the
 * restricted securityContext, resources from config (cpu request 25m by default) and revision annotations, and the
 * environment of Knative's queue.go. When the serving container has a readiness probe, queue-proxy gets a readiness probe
 * with the same timings that GETs its serving port with `K-Network-Probe: queue`, and the user's probe travels, made
 * concrete, in `SERVING_READINESS_PROBE`.
 */
export function makeQueueContainer(rev: Revision, cfg: RevisionConfig, opts: QueueProxyOptions): Container {
  const owner = controllerOf(rev);
  const configName = owner?.kind === 'Configuration' ? owner.name : '';
  const userPort = userPortOf(rev);
  const servingPort = queueServingPort(rev);
  const serving = servingContainer(rev.spec);
  const userProbe = serving ? probeOf(serving, 'readinessProbe') : undefined;
  const fullDuplex = (rev.metadata.annotations?.[HTTP_FULL_DUPLEX_ANNOTATION] ?? '').toLowerCase() === 'enabled';

  const container: Container = {
    name: QUEUE_CONTAINER_NAME,
    image: cfg.deployment.queueSidecarImage,
    resources: queueResources(rev, cfg),
    ports: [
      { name: 'http-autometric', containerPort: QueuePorts.autoscalingMetrics },
      { name: 'http-usermetric', containerPort: QueuePorts.userMetrics },
      { name: 'queue-port', containerPort: servingPort },
      { name: 'https-port', containerPort: QueuePorts.https },
    ],
    securityContext: {
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      runAsNonRoot: true,
      capabilities: { drop: ['ALL'] },
      seccompProfile: { type: 'RuntimeDefault' },
    },
    env: [
      env('SERVING_NAMESPACE', rev.metadata.namespace ?? ''),
      env('SERVING_SERVICE', rev.metadata.labels?.[Labels.service] ?? ''),
      env('SERVING_CONFIGURATION', configName),
      env('SERVING_REVISION', rev.metadata.name ?? ''),
      env('QUEUE_SERVING_PORT', String(servingPort)),
      env('QUEUE_SERVING_TLS_PORT', String(QueuePorts.https)),
      env('CONTAINER_CONCURRENCY', String(rev.spec.containerConcurrency ?? 0)),
      env('REVISION_TIMEOUT_SECONDS', String(rev.spec.timeoutSeconds ?? 0)),
      env('REVISION_RESPONSE_START_TIMEOUT_SECONDS', String(rev.spec.responseStartTimeoutSeconds ?? 0)),
      env('REVISION_IDLE_TIMEOUT_SECONDS', String(rev.spec.idleTimeoutSeconds ?? 0)),
      fieldEnv('SERVING_POD', 'metadata.name'),
      fieldEnv('SERVING_POD_IP', 'status.podIP'),
      env('SERVING_LOGGING_CONFIG', opts.loggingConfig ?? ''),
      env('SERVING_LOGGING_LEVEL', opts.loggingLevel ?? ''),
      env('USER_PORT', String(userPort)),
      env('SYSTEM_NAMESPACE', opts.systemNamespace),
      env('SERVING_READINESS_PROBE', userProbe ? encodeProbe(queueSideReadinessProbe(userProbe, userPort)) : ''),
      fieldEnv('HOST_IP', 'status.hostIP', 'v1'),
      env('ENABLE_HTTP2_AUTO_DETECTION', String(opts.enableHTTP2AutoDetection ?? false)),
      env('ENABLE_HTTP_FULL_DUPLEX', String(fullDuplex)),
      env('ROOT_CA', opts.rootCA ?? ''),
      env('QUEUE_PROXY_TLS_MIN_VERSION', opts.tlsMinVersion ?? ''),
      env('QUEUE_PROXY_TLS_MAX_VERSION', opts.tlsMaxVersion ?? ''),
      env('QUEUE_PROXY_TLS_CIPHER_SUITES', opts.tlsCipherSuites ?? ''),
      env('QUEUE_PROXY_TLS_CURVE_PREFERENCES', opts.tlsCurvePreferences ?? ''),
      env('ENABLE_MULTI_CONTAINER_PROBES', 'false'),
      env('OBSERVABILITY_CONFIG', opts.observabilityConfig ?? DEFAULT_OBSERVABILITY_CONFIG),
    ],
  };
  if (userProbe) {
    container.readinessProbe = {
      ...probeTimings(structuredClone(userProbe)),
      httpGet: { port: servingPort, httpHeaders: [{ name: PROBE_HEADER, value: PROBE_HEADER_VALUE }] },
    } satisfies Probe;
  }
  return container;
}
