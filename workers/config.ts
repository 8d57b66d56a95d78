// Process configuration from the environment, validated once at start-up.
import { defaultHeapGrowingPercent } from './heap-growth.js';
import { loadTemporalSettings, type TemporalSettings } from './temporal.js';
import { bool, int } from '../api/config/env.js';

export interface TidalConfig {
  kubeconfig: string | undefined;
  temporalAddress: string;
  temporalNamespace: string;
  /** Address, namespace, TLS, API key and whether to register the namespace (workers/temporal.ts). */
  temporal: TemporalSettings;
  taskQueue: string;
  systemNamespace: string;
  metricsPort: number;
  logLevel: string;
  runWatcher: boolean;
  runWorker: boolean;
  resyncSeconds: number;
  /** An entity run with nothing to do for this long ends; the next poke starts a fresh one (ADR 0006). 0: never. */
  idleSeconds: number;
  relistSeconds: number;
  /** List pages the informers have in flight at once (watcher/list-gate.ts). */
  listPagesInFlight: number;
  sweepSeconds: number;
  /** Catch-up pokes (start-up list of settled objects, sweeps) delivered per second at most. */
  catchUpPokesPerSecond: number;
  /** The same while no other poke has waited or been delivered for 2 s (default twice the rate above). */
  catchUpQuietPokesPerSecond: number;
  fieldManager: string;
  maxCachedWorkflows: number;
  /**
   * How long a workflow task waits on the sticky queue of the worker that last ran the workflow before Temporal hands
   * it to any worker: after a replica dies, the first task of each run it held waits this long.
   */
  stickyQueueTimeoutSeconds: number;
  /** How long a new Revision's first pass waits for its pods to be Ready in the watcher's cache (ADR 0012; 0: not at all). */
  newRevisionReadyWaitMs: number;
  /**
   * Where workflow code runs: 'main', the process's own thread (no second V8 isolate, no message copying per
   * activation; the SDK's `debugMode`), or 'worker', the SDK's worker thread.
   */
  workflowThread: 'main' | 'worker';
  /** Keep the SDK's 5 s watchdog on every call into main-thread workflows (workers/workflow-watchdog.ts). */
  workflowWatchdog: boolean;
  /** Keep the SDK's per-Promise stack traces for the UI's "Stack Trace" query (workers/stack-traces.ts). */
  workflowStackTraces: boolean;
  /** V8's heap growing percent, set at start-up (workers/heap-growth.ts); 0 leaves V8's own factor. */
  heapGrowingPercent: number;
  /**
   * A new object's workflow is started with the watcher's poke as its input and its first task handed straight to this
   * process's worker (Temporal's eager workflow start), not sent through the task queue (watcher/poker.ts).
   */
  eagerStart: boolean;
  /** Steps read objects this process just read or wrote from memory while the watch cache vouches for them (kube/recent-objects.ts). */
  recentObjects: boolean;
  identity: string | undefined;
  /** PEM files of extra CAs trusted for registries (plus the in-cluster CA when present). */
  registryCAFiles: string[];
  /** Registries spoken to over plain HTTP. */
  insecureRegistries: string[];
  /** hakn's gateway certificate: lifetime and how long before expiry it is renewed. */
  gatewayCertValidityHours: number;
  gatewayCertRenewBeforeHours: number;
  /** The watcher runs only on the holder of the Lease `leaseName` in the system namespace (workers/leadership.ts). */
  leaderElection: boolean;
  /** The Lease's timings come from config-leader-election (workers/leader-election-config.ts). */
  leaseName: string;
  /** Where the Temporal Core exports its Prometheus metrics (appended to /metrics); default a free loopback port. */
  temporalMetricsAddress: string | undefined;
  /** Readiness checks of Temporal and the API server: how often, and how long each may take. */
  healthIntervalMs: number;
  healthTimeoutMs: number;
}

function oneOf<T extends string>(env: NodeJS.ProcessEnv, name: string, values: readonly T[], def: T): T {
  const raw = env[name];
  if (raw === undefined || raw === '') return def;
  if (!(values as readonly string[]).includes(raw)) throw new Error(`${name}=${raw}: expected one of ${values.join(', ')}`);
  return raw as T;
}

function list(raw: string | undefined): string[] {
  return (raw ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): TidalConfig {
  const temporal = loadTemporalSettings(env);
  const catchUpPokesPerSecond = int(env, 'TIDAL_CATCHUP_POKES_PER_SECOND', 10);
  return {
    kubeconfig: env.KUBECONFIG || undefined,
    temporalAddress: temporal.address,
    temporalNamespace: temporal.namespace,
    temporal,
    taskQueue: env.TIDAL_TASK_QUEUE || 'tidal',
    systemNamespace: env.SYSTEM_NAMESPACE || 'knative-serving',
    metricsPort: int(env, 'METRICS_PORT', 9464),
    logLevel: env.LOG_LEVEL || 'info',
    runWatcher: bool(env, 'TIDAL_WATCHER', true),
    runWorker: bool(env, 'TIDAL_WORKER', true),
    resyncSeconds: int(env, 'TIDAL_RESYNC_SECONDS', 36_000),
    idleSeconds: int(env, 'TIDAL_IDLE_SECONDS', 60),
    relistSeconds: int(env, 'TIDAL_RELIST_SECONDS', 36_000),
    listPagesInFlight: int(env, 'TIDAL_LIST_PAGES_IN_FLIGHT', 2, 1),
    // Knative's global resync: every object gets a run and a full pass (ADR 0006: runs at rest have ended).
    sweepSeconds: int(env, 'TIDAL_SWEEP_SECONDS', 36_000),
    catchUpPokesPerSecond,
    catchUpQuietPokesPerSecond: int(env, 'TIDAL_CATCHUP_QUIET_POKES_PER_SECOND', 2 * catchUpPokesPerSecond),
    fieldManager: env.TIDAL_FIELD_MANAGER || 'tidal',
    // Fewer than the runs a burst leaves waiting out their idle minute (two per Service): an evicted run replays its
    // short history when poked or when its idle timer ends it — less memory right after a burst for a little more CPU
    // (docs/benchmarks.md).
    maxCachedWorkflows: int(env, 'TIDAL_MAX_CACHED_WORKFLOWS', 150),
    // The SDK's 10 s made a change to a run the killed leader held wait 10 s; a live worker polls its sticky queue
    // within milliseconds, and a task moved off it costs one replay of a short history.
    stickyQueueTimeoutSeconds: int(env, 'TIDAL_STICKY_QUEUE_TIMEOUT_SECONDS', 3, 1),
    newRevisionReadyWaitMs: int(env, 'TIDAL_NEW_REVISION_READY_WAIT_MS', 1000),
    workflowThread: oneOf(env, 'TIDAL_WORKFLOW_THREAD', ['main', 'worker'] as const, 'main'),
    workflowStackTraces: bool(env, 'TIDAL_WORKFLOW_STACK_TRACES', false),
    workflowWatchdog: bool(env, 'TIDAL_WORKFLOW_WATCHDOG', false),
    heapGrowingPercent: int(env, 'TIDAL_HEAP_GROWING_PERCENT', defaultHeapGrowingPercent),
    recentObjects: bool(env, 'TIDAL_RECENT_OBJECTS', true),
    eagerStart: bool(env, 'TIDAL_EAGER_START', true),
    identity: env.TIDAL_IDENTITY || undefined,
    registryCAFiles: list(env.TIDAL_REGISTRY_CA_FILES),
    insecureRegistries: list(env.TIDAL_INSECURE_REGISTRIES),
    gatewayCertValidityHours: int(env, 'TIDAL_GATEWAY_CERT_VALIDITY_HOURS', 168),
    gatewayCertRenewBeforeHours: int(env, 'TIDAL_GATEWAY_CERT_RENEW_BEFORE_HOURS', 24),
    leaderElection: bool(env, 'TIDAL_LEADER_ELECTION', true),
    leaseName: env.TIDAL_LEASE_NAME || 'tidal-controller',
    temporalMetricsAddress: env.TIDAL_TEMPORAL_METRICS_ADDRESS || undefined,
    healthIntervalMs: int(env, 'TIDAL_HEALTH_INTERVAL_MS', 2000),
    healthTimeoutMs: int(env, 'TIDAL_HEALTH_TIMEOUT_MS', 2000),
  };
}
