// Tidal's controller process: the watcher and a worker in one process, as hakn runs everything in one pod.
// Any number of replicas may run. SIGTERM drains: the watcher stops, running activities finish, then exit.
import { Client, Connection } from '@temporalio/client';
import { Runtime } from '@temporalio/worker';
import { Registry, collectDefaultMetrics } from 'prom-client';
import { EntityKinds, type EntityKind } from '../api/entity.js';
import { KubeClient } from '../activities/kube/client.js';
import { Poker } from '../watcher/poker.js';
import { Watcher } from '../watcher/watcher.js';
import { loadConfig } from './config.js';
import { makeLogger, temporalLogger } from './logger.js';
import { serveHttp } from './http.js';
import { createWorker } from './worker.js';

/** Entity workflows this build implements; the watcher pokes only these. */
export const enabledKinds: ReadonlySet<EntityKind> = new Set<EntityKind>(['Service'].filter((k): k is EntityKind => (EntityKinds as readonly string[]).includes(k)));

async function main(): Promise<void> {
  const cfg = loadConfig();
  const log = makeLogger(cfg.logLevel);
  Runtime.install({ logger: temporalLogger(log.child({ component: 'temporal' })), shutdownSignals: [] });
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const kube = new KubeClient({ kubeconfig: cfg.kubeconfig, fieldManager: cfg.fieldManager });

  let watcher: Watcher | undefined;
  let poker: Poker | undefined;
  let clientConnection: Connection | undefined;
  if (cfg.runWatcher) {
    clientConnection = await Connection.connect({ address: cfg.temporalAddress });
    const client = new Client({ connection: clientConnection, namespace: cfg.temporalNamespace });
    poker = new Poker(client, { taskQueue: cfg.taskQueue, concurrency: 16, maxBackoffMs: 30_000, workflowOptions: { resyncSeconds: cfg.resyncSeconds } }, log.child({ component: 'poker' }), registry);
    watcher = new Watcher(kube, poker, { enabled: enabledKinds, watched: ['Service', 'Configuration'], relistMs: cfg.relistSeconds * 1000, maxBackoffMs: 30_000 }, log.child({ component: 'watcher' }), registry);
    watcher.start();
  }
  const built = cfg.runWorker ? await createWorker(cfg, kube, log.child({ component: 'worker' })) : undefined;
  const server = serveHttp(cfg.metricsPort, registry, () => (watcher?.hasSynced ?? true) && (built ? built.worker.getState() === 'RUNNING' : true));
  log.info({ temporal: cfg.temporalAddress, taskQueue: cfg.taskQueue, watcher: cfg.runWatcher, worker: cfg.runWorker, metricsPort: cfg.metricsPort }, 'tidal controller started');

  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'shutting down');
    void (async () => {
      await watcher?.close();
      await poker?.close();
      built?.worker.shutdown();
    })();
    if (!built) void finish();
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));

  const finish = async () => {
    await clientConnection?.close();
    await built?.connection.close();
    server.close();
    kube.close();
    log.info('stopped');
    process.exit(0);
  };
  if (built) {
    await built.worker.run();
    await finish();
  }
}

main().catch((err: unknown) => {
  // A start-up failure (bad config, unreachable server) exits non-zero with the reason; the supervisor restarts.
  console.error(JSON.stringify({ level: 'fatal', msg: 'tidal controller failed', err: String(err instanceof Error ? err.stack : err) }));
  process.exit(1);
});
