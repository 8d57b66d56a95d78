// Builds the Temporal worker that runs every entity workflow and activity on Tidal's task queue.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { NativeConnection, Worker } from '@temporalio/worker';
import type { Logger } from 'pino';
import { Histogram, type Registry } from 'prom-client';
import { createActivities } from '../activities/index.js';
import { makeEventRecorder } from '../activities/events.js';
import type { KubeClient } from '../kube/client.js';
import type { ConfigSource, MetadataCache, OwnWriteLog } from '../activities/deps.js';
import { existsSync, readFileSync } from 'node:fs';
import { makeRegistryResolver } from '../registry/resolver.js';
import type { TidalConfig } from './config.js';
import { temporalConnectOptions } from './temporal.js';
import { stopWorkflowStackTraces } from './stack-traces.js';
import { stopWorkflowWatchdog } from './workflow-watchdog.js';
import { hostname } from 'node:os';
import { versionedIdentity } from './version.js';
import type { StepsInFlight } from './steps-in-flight.js';
import { aroundEach } from './around-each.js';

/** workflows/index.ts next to this file (or .js once compiled). */
export function workflowsPath(): string {
  const here = fileURLToPath(import.meta.url);
  return path.join(path.dirname(here), '..', 'workflows', `index${path.extname(here)}`);
}

/**
 * The prebuilt workflow bundle (`npm run build`), if any: TIDAL_WORKFLOW_BUNDLE, else workflow-bundle.js next to a
 * built controller (dist/controller.js has no workflows/ to bundle from). Undefined when running from source: the
 * worker then bundles workflows/ itself, which costs CPU at start and RSS for good.
 */
export function workflowBundlePath(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const fromEnv = env.TIDAL_WORKFLOW_BUNDLE;
  if (fromEnv) {
    // Named but missing is a deployment mistake: fail rather than silently pay for bundling in-process.
    if (!existsSync(fromEnv)) throw new Error(`TIDAL_WORKFLOW_BUNDLE=${fromEnv}: no such file`);
    return fromEnv;
  }
  const here = fileURLToPath(import.meta.url);
  const sibling = path.join(path.dirname(here), 'workflow-bundle.js');
  return path.extname(here) === '.js' && existsSync(sibling) ? sibling : undefined;
}

// The cluster's own CA, appended as Knative does, so in-cluster registries with cluster-issued certificates work.
const inClusterCA = '/var/run/secrets/kubernetes.io/serviceaccount/ca.crt';

function registryResolver(cfg: TidalConfig, kube: KubeClient) {
  const pems = [...cfg.registryCAFiles, ...(existsSync(inClusterCA) ? [inClusterCA] : [])].map((f) => readFileSync(f, 'utf8'));
  return makeRegistryResolver({
    kube,
    insecureRegistries: cfg.insecureRegistries,
    ...(pems.length ? { extraCAPem: pems.join('\n') } : {}),
    userAgent: 'tidal (serving)',
  });
}

export async function createWorker(
  cfg: TidalConfig,
  kube: KubeClient,
  config: ConfigSource,
  log: Logger,
  cache?: MetadataCache,
  registry?: Registry,
  ownWrites?: OwnWriteLog,
  stepsInFlight?: StepsInFlight,
): Promise<{ worker: Worker; connection: NativeConnection }> {
  const connection = await NativeConnection.connect(temporalConnectOptions(cfg.temporal));
  const codePath = workflowBundlePath();
  if (codePath) log.info({ workflowBundle: codePath }, 'loading the prebuilt workflow bundle');
  else log.info({ workflowsPath: workflowsPath() }, 'bundling the workflow code in-process (npm run build and TIDAL_WORKFLOW_BUNDLE avoid this)');
  const worker = await Worker.create({
    connection,
    namespace: cfg.temporalNamespace,
    taskQueue: cfg.taskQueue,
    ...(codePath ? { workflowBundle: { codePath } } : { workflowsPath: workflowsPath() }),
    activities: timed(
      registry,
      counted(
        stepsInFlight,
        createActivities({
          kube,
          events: makeEventRecorder(kube, log),
          log,
          config,
          digests: registryResolver(cfg, kube),
          entityOptions: () => ({ resyncSeconds: cfg.resyncSeconds, idleSeconds: cfg.idleSeconds }),
          newRevisionReadyWaitMs: cfg.newRevisionReadyWaitMs,
          ...(cache ? { cache } : {}),
          ...(ownWrites ? { ownWrites } : {}),
          ...(registry ? { registry } : {}),
        }),
      ),
    ),
    maxCachedWorkflows: cfg.maxCachedWorkflows,
    stickyQueueScheduleToStartTimeout: `${cfg.stickyQueueTimeoutSeconds}s`,
    // Workflow code in this thread (a second isolate costs memory of its own, and every activation and its completion
    // are copied between threads). The SDK calls this debugMode. Its 5 s isolate timeout (a looping task fails instead
    // of stalling the process) holds only with TIDAL_WORKFLOW_WATCHDOG=true: it costs a thread per call (below).
    ...(cfg.workflowThread === 'main' ? { debugMode: true, isolateExecutionTimeout: '5s' } : {}),
    // Let running steps finish on SIGTERM; anything longer is retried by another replica. Past the force time the
    // worker gives up on what it still holds (another replica takes those tasks over), well inside the Deployment's
    // 40 s terminationGracePeriodSeconds, so a stopping replica does not keep taking work until it is killed.
    shutdownGraceTime: '20s',
    shutdownForceTime: '30s',
    // An entity workflow keeps its state in the cluster, not in its history: a run that no longer replays on new
    // code fails instead of retrying forever, and the watcher's next poke (or sweep) starts a fresh run.
    workflowFailureErrorTypes: { '*': ['NondeterminismError'] },
    // The version in the identity: `npm run version` reads it from the task queue's pollers.
    identity: versionedIdentity(cfg.identity ?? `${process.pid}@${hostname()}`),
  });
  if (cfg.workflowThread === 'main' && !cfg.workflowStackTraces) {
    if (stopWorkflowStackTraces()) log.info('workflow stack traces off (TIDAL_WORKFLOW_STACK_TRACES=true keeps them)');
    else log.warn('could not turn workflow stack traces off: this Temporal SDK has no such hook');
  }
  if (cfg.workflowThread === 'main' && !cfg.workflowWatchdog) {
    if (stopWorkflowWatchdog(worker)) log.info('no watchdog thread per call into workflows (TIDAL_WORKFLOW_WATCHDOG=true keeps it)');
    else log.warn('could not drop the per-call workflow watchdog: this Temporal SDK keeps its timeout elsewhere');
  }
  return { worker, connection };
}

/** The activities counted while they run, when someone asks (`StepsInFlight`). */
function counted<A extends object>(steps: StepsInFlight | undefined, activities: A): A {
  return steps ? steps.wrap(activities) : activities;
}

/**
 * Every step's latency in `tidal_step_duration_seconds{step,outcome}`: a pass is a few steps, each a (local)
 * activity, so these are the parts of every pass (the Temporal SDK's own metrics beside them time the workflow tasks).
 */
function timed<A extends object>(registry: Registry | undefined, activities: A): A {
  if (!registry) return activities;
  const hist = new Histogram({
    name: 'tidal_step_duration_seconds',
    help: 'Duration of each reconcile step (activity), by outcome',
    labelNames: ['step', 'outcome'],
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [registry],
  });
  return aroundEach(activities, async (step, call) => {
    const end = hist.startTimer({ step });
    try {
      const out = await call();
      end({ outcome: 'ok' });
      return out;
    } catch (err) {
      end({ outcome: 'error' });
      throw err;
    }
  });
}
