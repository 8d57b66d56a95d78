// Tidal's controller process: the watcher and a worker in one process, as hakn runs everything in one pod.
// Any number of replicas may run. SIGTERM drains: the watcher stops, running activities finish, then exit.
import { Client, Connection } from '@temporalio/client';
import { GracefulShutdownPeriodExpiredError, Runtime } from '@temporalio/worker';
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import net from 'node:net';
import { Resources } from '../api/kinds.js';
import { Health } from './health.js';
import type { EntityKind, Poke } from '../api/entity.js';
import type { KubeObject } from '../api/meta.js';
import { writtenAfter } from '../watcher/bookmark.js';
import { failedRunObjects } from '../watcher/failed-runs.js';
import { makeEventRecorder } from '../activities/events.js';
import { ConfigStore } from '../watcher/config-store.js';
import { GcConfigName } from '../api/config/gc.js';
import { ModulesConfigName } from '../api/config/modules.js';
import { GATEWAY_TLS_SECRET_NAME, GATEWAY_TLS_SECRET_NAMESPACE } from '../resources/istio/gateways.js';
import { KubeClient } from '../kube/client.js';
import { RecentObjects } from '../kube/recent-objects.js';
import { Poker } from '../watcher/poker.js';
import { Watcher } from '../watcher/watcher.js';
import { servesCertManager } from '../watcher/cert-manager.js';
import { Leadership } from './leadership.js';
import { kubeLeaseApi } from '../watcher/lease-api.js';
import { loadConfig, type TidalConfig } from './config.js';
import { makeLogger, temporalLogger } from './logger.js';
import { serveHttp } from './http.js';
import { newMetricsRegistry } from './metrics.js';
import { createWorker } from './worker.js';
import { limitHeapGrowth } from './heap-growth.js';
import { CONTROLLER_NODE_FLAGS, semiSpaceFlag } from './node-flags.js';
import { OwnWrites } from '../watcher/own-writes.js';
import { describeTemporal, ensureTemporalNamespace, temporalConnectOptions } from './temporal.js';
import { loadWebhookSettings } from '../webhook/settings.js';
import { runWebhook } from '../webhook/run.js';
import { WEBHOOK_CERTS_SECRET } from '../pki/webhook-certificates.js';
import { loadLeaderElectionTimings } from './leader-election-config.js';
import { LiveLogLevels } from './log-levels.js';
import { LoggingConfigName } from '../api/config/logging.js';
import { IstioConfigName } from '../api/config/istio.js';
import { ObservabilityConfigName } from '../api/config/observability.js';
import { StepsInFlight } from './steps-in-flight.js';

/** Entity workflows this build implements; the watcher pokes only these. */
export const enabledKinds: ReadonlySet<EntityKind> = new Set<EntityKind>([
  'Service',
  'Configuration',
  'Revision',
  'Route',
  'Ingress',
  'DomainMapping',
]);

/**
 * hakn's self-signed gateway certificate (and the admission webhook's certificates) each live in one durable workflow
 * that renews them on a timer. Starting it is idempotent (signalWithStart, USE_EXISTING); a failure (Temporal not up
 * yet) is retried until it works.
 */
function startCertificateKeeper(
  client: Client,
  cfg: ReturnType<typeof loadConfig>,
  log: ReturnType<typeof makeLogger>,
  keeper: { prefix: string; namespace: string; name: string; certificate?: 'webhook'; validityHours: number; renewBeforeHours: number },
): void {
  const { prefix, namespace, name, ...rest } = keeper;
  const attempt = (delayMs: number) => {
    client.workflow
      .signalWithStart('gatewayCertificateWorkflow', {
        workflowId: `${prefix}/${namespace}/${name}`,
        taskQueue: cfg.taskQueue,
        args: [{ namespace, name, ...rest }],
        signal: 'poke',
        signalArgs: [{ source: 'Tidal/start', reason: 'resync' }],
        workflowIdConflictPolicy: 'USE_EXISTING',
        staticSummary: `${keeper.certificate ?? 'gateway'} certificate ${namespace}/${name}`,
      })
      .then(() => log.info({ kind: 'Secret', namespace, name }, 'certificate workflow running'))
      .catch((err: unknown) => {
        log.warn({ err, kind: 'Secret', namespace, name, retryMs: delayMs }, 'could not start the certificate workflow; retrying');
        setTimeout(() => attempt(Math.min(delayMs * 2, 30_000)), delayMs).unref();
      });
  };
  attempt(1000);
}

/** A free loopback port for the Temporal Core's metrics exporter (it binds a fixed address only). */
function freeLoopbackPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const port = (srv.address() as net.AddressInfo).port;
      srv.close(() => resolve(port));
    });
  });
}

async function main(): Promise<void> {
  const cfg = loadConfig();
  // Before the worker allocates anything worth collecting: every later limit V8 sets uses it.
  const heapGrowth = limitHeapGrowth(cfg.heapGrowingPercent);
  const webhookSettings = loadWebhookSettings();
  const logLevels = new LiveLogLevels(cfg.logLevel);
  const log = makeLogger(cfg.logLevel, 'tidal', (child) => logLevels.track(child));
  logLevels.track(log);
  const semiSpaceMB = semiSpaceFlag(process.execArgv, process.env.NODE_OPTIONS);
  log.info({ heapGrowingPercent: heapGrowth ? cfg.heapGrowingPercent : 'V8 default', semiSpaceMB: semiSpaceMB ?? 'V8 default' }, 'V8 heap growth');
  if (semiSpaceMB === undefined)
    log.warn({ nodeFlags: CONTROLLER_NODE_FLAGS }, "V8's young generation at its default size: run node with these flags (workers/node-flags.ts)");
  // The Temporal SDK's own metrics (task slots, schedule-to-start and execution latencies, sticky cache, …) are
  // exported by its Core on a loopback port and appended to Tidal's /metrics, so one scrape gets both.
  const temporalMetrics = cfg.temporalMetricsAddress ?? `127.0.0.1:${await freeLoopbackPort()}`;
  Runtime.install({
    logger: temporalLogger(log.child({ component: 'temporal' })),
    // Core's own logs go through pino too, as JSON like everything else.
    telemetryOptions: {
      logging: { filter: { core: 'WARN', other: 'ERROR' }, forward: {} },
      metrics: { metricPrefix: 'temporal_', prometheus: { bindAddress: temporalMetrics, countersTotalSuffix: true, useSecondsForDurations: true } },
    },
    shutdownSignals: [],
  });
  const registry = newMetricsRegistry();
  const kubeRequests = new Counter({
    name: 'tidal_kube_requests_total',
    help: 'Kubernetes API requests made by Tidal',
    labelNames: ['verb', 'resource', 'code'],
    registers: [registry],
  });
  const kubeLatency = new Histogram({
    name: 'tidal_kube_request_duration_seconds',
    help: 'Latency of Kubernetes API requests made by Tidal (not watches)',
    labelNames: ['verb', 'resource'],
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });
  const onRequest = (verb: string, resource: string, code: number, seconds: number) => {
    kubeRequests.inc({ verb, resource, code: String(code) });
    kubeLatency.observe({ verb, resource }, seconds);
  };
  const kube = new KubeClient({ kubeconfig: cfg.kubeconfig, fieldManager: cfg.fieldManager, onRequest });
  const configStore = new ConfigStore(kube, cfg.systemNamespace, log.child({ component: 'config' }), makeEventRecorder(kube, log));
  // config-logging: the controller's and the webhook's levels follow it live.
  configStore.onUpdate((cm) => {
    if (cm.metadata.name === LoggingConfigName) logLevels.apply(configStore.loggingConfig());
  });
  configStore.start();

  let leadership: Leadership | undefined;
  // A new leader's list pages wait their turn behind the steps running here (watcher/list-gate.ts).
  const stepsInFlight = new StepsInFlight();
  // Before anything runs: the namespace and search attributes exist (or are registered, or start-up fails saying how).
  let clientConnection: Connection | undefined = await Connection.connect(temporalConnectOptions(cfg.temporal));
  const ensured = await ensureTemporalNamespace(clientConnection, cfg.temporal);
  log.info({ temporal: describeTemporal(cfg.temporal), ...ensured }, 'temporal namespace ready');
  if (!cfg.runWatcher) {
    await clientConnection.close();
    clientConnection = undefined;
  }
  // What this process's steps wrote, so its poker sends no workflow the echo of its own write (watcher/own-writes.ts).
  const ownWrites = new OwnWrites();
  // A client on the worker's own connection, once it runs: new objects' workflows start eagerly (watcher/poker.ts).
  let eagerClient: Client | undefined;
  // The steps' memory of recent objects (stepClient), which the leader's watcher feeds.
  const recent: { memo?: RecentObjects | undefined } = {};
  // cert-manager's Certificates are followed when the API server serves them (a cluster that runs cert-manager).
  const certManagerServed = cfg.runWatcher ? await servesCertManager(kube) : false;
  if (certManagerServed) log.info('cert-manager.io/v1 is served: following cert-manager Certificates');
  if (clientConnection) {
    const client = new Client({ connection: clientConnection, namespace: cfg.temporalNamespace });
    const timings = await loadLeaderElectionTimings(kube, cfg.systemNamespace, log);
    // Lease requests time out within the renew deadline: a renewal that hangs longer is worth nothing.
    const leaseKube = new KubeClient({ kubeconfig: cfg.kubeconfig, fieldManager: cfg.fieldManager, timeoutMs: timings.renewDeadlineMs, onRequest });
    const l = (leadership = new Leadership(
      {
        enabled: cfg.leaderElection,
        // Config maps are poked from the process-wide config store, into the term's poker in the tick they are seen.
        seenElsewhere: () => ({ ConfigMap: configStore.newestVersion }),
        namespace: cfg.systemNamespace,
        leaseName: cfg.leaseName,
        identityBase: cfg.identity,
        timings,
      },
      kubeLeaseApi(leaseKube, cfg.systemNamespace, cfg.leaseName),
      (isCurrent) => {
        // Entity options are not passed at start: workflows read them from their worker at every run and resync.
        const poker = new Poker(
          client,
          {
            taskQueue: cfg.taskQueue,
            concurrency: 16,
            maxBackoffMs: 30_000,
            catchUpPerSecond: cfg.catchUpPokesPerSecond,
            catchUpQuietPerSecond: cfg.catchUpQuietPokesPerSecond,
            mayDeliver: isCurrent,
            ownWrites,
            eagerClient: () => eagerClient,
          },
          log.child({ component: 'poker' }),
          registry,
        );
        const watcher = new Watcher(
          kube,
          poker,
          {
            enabled: enabledKinds,
            watched: [
              'Service',
              'Configuration',
              'Revision',
              'Route',
              'Ingress',
              'Deployment',
              'HorizontalPodAutoscaler',
              'PodDisruptionBudget',
              'Pod',
              'KubeService',
              'RevisionService',
              'VirtualService',
              'DomainMapping',
              'ClusterDomainClaim',
              'Certificate',
              ...(certManagerServed ? (['CertManagerCertificate'] as const) : []),
            ],
            relistMs: cfg.relistSeconds * 1000,
            listPagesInFlight: cfg.listPagesInFlight,
            listsYieldTo: (maxMs) => stepsInFlight.quiet(maxMs),
            maxBackoffMs: 30_000,
            // Built standing by: `lead` gives the bookmark and the recent-write time when its term begins.
            standby: true,
            // What steps read right after an event wakes them: a Revision's Deployment once its pods are Ready, a
            // Service's Revision once it is Ready.
            delivered: { kinds: ['Revision', 'Deployment'], to: (type, obj) => recent.memo?.delivered(type, obj) },
          },
          log.child({ component: 'watcher' }),
          registry,
        );
        return {
          watcher,
          poker,
          lead: (bookmark, recentSince) => {
            watcher.lead(bookmark, recentSince);
            // A config map changed while no leader watched, or while this term's lists came in (its readers not all
            // cached yet): its readers are poked as for any change, once every kind has listed (ADR 0024). A paused
            // term's poker holds them. Without a bookmark the start-up list pokes every object anyway.
            if (bookmark !== undefined) {
              void watcher.synced().then(() => {
                for (const cm of configStore.maps()) if (writtenAfter(bookmark, 'ConfigMap', cm)) pokeConfigReaders(cm);
              });
            }
          },
        };
      },
      log.child({ component: 'leader' }),
      registry,
    ));
    l.start();
    // Certificate workflows are started by every replica: the start is idempotent and reads no watched state.
    startCertificateKeeper(client, cfg, log, {
      prefix: 'GatewayCertificate',
      namespace: GATEWAY_TLS_SECRET_NAMESPACE,
      name: GATEWAY_TLS_SECRET_NAME,
      validityHours: cfg.gatewayCertValidityHours,
      renewBeforeHours: cfg.gatewayCertRenewBeforeHours,
    });
    if (webhookSettings.enabled) {
      startCertificateKeeper(client, cfg, log, {
        prefix: 'WebhookCertificate',
        namespace: cfg.systemNamespace,
        name: WEBHOOK_CERTS_SECRET,
        certificate: 'webhook',
        validityHours: webhookSettings.certValidityHours,
        renewBeforeHours: webhookSettings.certRenewBeforeHours,
      });
    }
    // Start a run for every object whose run is gone every TIDAL_SWEEP_SECONDS — Knative's global resync, since runs
    // at rest have ended (ADR 0006) and each object so gets a full pass. Only the leader sweeps (from its own view).
    const sweep: Poke = { source: 'Tidal/sweep', reason: 'resync' };
    const sweepOnce = () => {
      const n = l.watcher?.pokeAll([...enabledKinds], sweep, { force: true, catchUp: true });
      log.debug({ poked: n }, 'sweep');
    };
    setInterval(sweepOnce, cfg.sweepSeconds * 1000).unref();
    // Runs that failed (a run that no longer replays on new code fails on its next task, ADR 0002), timed out or were
    // terminated get a fresh run from the leader within half a minute: a leader change pokes only what changed
    // (ADR 0024), so nothing else would start them before the sweep.
    // Each look goes back to the last one (a minute more, for visibility's lag), and at most 10 minutes: a replica
    // that becomes the leader late in its life looks at the handover, not at its whole life.
    const lookBackMs = 10 * 60_000;
    let failedSince = Date.now() - lookBackMs;
    const restartFailedRuns = async () => {
      const watcher = l.watcher;
      if (!watcher?.hasSynced) return;
      const checkedAt = Date.now();
      const since = Math.max(failedSince, checkedAt - lookBackMs) - 60_000;
      const targets = await failedRunObjects(client, cfg.taskQueue, new Date(since));
      const n = watcher.pokeObjects(targets, sweep, { force: true, catchUp: true });
      failedSince = checkedAt;
      if (n > 0) log.info({ poked: n }, 'runs that failed, timed out or were terminated: their objects get a fresh run');
    };
    setInterval(() => void restartFailedRuns().catch((err: unknown) => log.warn({ err }, 'could not list failed runs')), 30_000).unref();
    configStore.onUpdate(pokeConfigReaders);
  }
  /**
   * Pokes the objects that read a changed config map. config-gc is read only by the Configurations' garbage
   * collection, in the Service's or the Configuration's pass, and matters only to those with more than one Revision
   * (upstream resyncs them all; a pass here costs a workflow task and its steps); config-modules only by the status of Revisions (ADR
   * 0009), config-observability and config-logging by Revisions (logUrl; queue-proxy's settings); config-istio by
   * what programs KIngresses.
   */
  function pokeConfigReaders(cm: KubeObject): void {
    const name = cm.metadata.name;
    // config-gc's readers are picked by the watcher (pokeRevisionCollectors); the others' by the map's name.
    const kinds: EntityKind[] =
      name === ModulesConfigName || name === ObservabilityConfigName || name === LoggingConfigName
        ? ['Revision']
        : name === IstioConfigName
          ? ['Route', 'Ingress', 'DomainMapping']
          : ['Service', 'Configuration', 'Revision', 'Route', 'DomainMapping'];
    const poke: Poke = {
      source: `ConfigMap/${cm.metadata.namespace ?? ''}/${cm.metadata.name ?? ''}`,
      reason: 'updated',
      ...(cm.metadata.resourceVersion ? { resourceVersion: cm.metadata.resourceVersion } : {}),
    };
    // config-gc: only the Configurations with something to collect under some setting.
    const watcher = leadership?.watcher;
    const n = name === GcConfigName ? watcher?.pokeRevisionCollectors(poke) : watcher?.pokeAll(kinds, poke);
    if (n !== undefined) log.info({ kind: 'ConfigMap', name: cm.metadata.name, poked: n }, 'config changed; resyncing objects that read it');
  }
  // Activities read the config maps: start the worker once they have been listed.
  await configStore.synced;
  // The admission webhook before the worker: the API server refuses serving writes (ours too) until one answers.
  const webhook = webhookSettings.enabled
    ? await runWebhook({ settings: webhookSettings, kube, config: configStore, log: log.child({ component: 'webhook' }), registry })
    : undefined;
  const stepKube = cfg.runWorker ? stepClient(cfg, kube, leadership, onRequest, registry) : undefined;
  const steps = stepKube?.client;
  recent.memo = stepKube?.memo;
  const built = steps
    ? await createWorker(cfg, steps, configStore, log.child({ component: 'worker' }), leadership?.cache, registry, ownWrites, stepsInFlight)
    : undefined;
  if (built && cfg.eagerStart) eagerClient = new Client({ connection: built.connection, namespace: cfg.temporalNamespace });
  // The client connection's call fails fast while the server is down; the worker's (Core) retries until it answers.
  const temporalHealth = clientConnection?.healthService ?? built?.connection.healthService;
  const health = new Health(
    [
      ...(temporalHealth ? [{ name: 'temporal', probe: () => temporalHealth.check({}) }] : []),
      // A read Tidal's RBAC allows anyway (the config store lists its config maps; it may not get one): the API server
      // answers.
      {
        name: 'kubernetes',
        probe: () => kube.list(Resources.ConfigMap, cfg.systemNamespace, { fieldSelector: 'metadata.name=config-deployment' }),
      },
    ],
    {
      worker: () => (built ? built.worker.getState() === 'RUNNING' : true),
      webhook: () => webhook?.ready() ?? true,
      // A replica whose watcher is still listing is not ready yet, leader or standing by (Leadership.listed).
      watcher: () => leadership?.listed ?? true,
    },
    { intervalMs: cfg.healthIntervalMs, timeoutMs: cfg.healthTimeoutMs, wedgedMs: 30_000 },
    log.child({ component: 'health' }),
    registry,
  );
  const backlog = new Gauge({
    name: 'tidal_poke_backlog',
    help: 'Pokes queued or in flight on this replica (the leader; 0 elsewhere)',
    registers: [registry],
    collect() {
      this.set(leadership?.poker?.backlog ?? 0);
    },
  });
  void backlog;
  const server = serveHttp(cfg.metricsPort, registry, health, `http://${temporalMetrics}/metrics`);
  log.info(
    {
      temporal: cfg.temporalAddress,
      taskQueue: cfg.taskQueue,
      watcher: cfg.runWatcher,
      leaderElection: cfg.runWatcher && cfg.leaderElection,
      identity: leadership?.identity,
      worker: cfg.runWorker,
      metricsPort: cfg.metricsPort,
      webhookPort: webhook ? webhookSettings.port : undefined,
    },
    'tidal controller started',
  );

  let stopping = false;
  let webhookDrained: Promise<void> | undefined;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'shutting down');
    webhookDrained = webhook?.drain();
    void (async () => {
      // No poke after this: the term ends before the Lease is released, so the next leader takes over at once.
      await leadership?.stop();
      await configStore.close();
      built?.worker.shutdown();
    })();
    if (!built) void finish();
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));

  const finish = async () => {
    await webhookDrained;
    await clientConnection?.close();
    await built?.connection.close();
    server.close();
    health.close();
    kube.close();
    if (steps !== kube) steps?.close();
    log.info('stopped');
    process.exit(0);
  };
  if (built) {
    await built.worker.run().catch((err: unknown) => {
      // The shutdown's force time passed: what the worker still held goes to another replica; this one exits cleanly.
      if (!(err instanceof GracefulShutdownPeriodExpiredError)) throw err;
      log.warn({ err: err.message }, 'worker did not drain within its shutdown force time; exiting');
    });
    await finish();
  }
}

main().catch((err: unknown) => {
  // A start-up failure (bad config, unreachable server) exits non-zero with the reason; the supervisor restarts.
  console.error(JSON.stringify({ level: 'fatal', msg: 'tidal controller failed', err: String(err instanceof Error ? err.stack : err) }));
  process.exit(1);
});

/**
 * The steps' Kubernetes client: with the watcher in this process, a GET of an object a step just read or wrote (or
 * the watch just delivered) is answered from memory while the watch cache vouches nothing newer exists
 * (kube/recent-objects.ts), and `memo` is that memory; without it, the process's own client.
 */
function stepClient(
  cfg: TidalConfig,
  kube: KubeClient,
  leadership: Leadership | undefined,
  onRequest: (verb: string, resource: string, code: number, seconds: number) => void,
  registry: Registry,
): { client: KubeClient; memo?: RecentObjects } {
  const cache = leadership?.cache;
  if (!cfg.recentObjects || !cache) return { client: kube };
  const recent = new RecentObjects((type, ns, name) => cache.versionOf?.(type, ns, name));
  const served = new Counter({
    name: 'tidal_recent_objects_total',
    help: "Steps' GETs of watched kinds, by whether an object just read or written answered them from memory",
    labelNames: ['served'],
    registers: [registry],
  });
  let counted = { hits: 0, misses: 0 };
  // Expired entries go even while nothing is written, so a process at rest holds none.
  setInterval(() => {
    recent.sweep();
    served.inc({ served: 'memory' }, recent.hits - counted.hits);
    served.inc({ served: 'api' }, recent.misses - counted.misses);
    counted = { hits: recent.hits, misses: recent.misses };
  }, 5_000).unref();
  return { client: new KubeClient({ kubeconfig: cfg.kubeconfig, fieldManager: cfg.fieldManager, onRequest, memo: recent }), memo: recent };
}
