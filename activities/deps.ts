import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { FeaturesConfig, GcConfig, ModulesConfig, ObservabilityConfig, RevisionConfig } from '../api/config/index.js';
import type { NetworkConfig } from '../api/config/network.js';
import type { DomainConfig } from '../api/config/domain.js';
import type { IstioConfig } from '../api/config/istio.js';
import type { LoggingConfig } from '../api/config/logging.js';
import type { DigestResolver } from '../registry/digest-resolver.js';
import type { EventRecorder } from './events.js';
import type { KubeClient } from '../kube/client.js';
import type { CachedVersion } from '../kube/recent-objects.js';
import type { ResourceType } from '../api/kinds.js';
import type { KubeObject } from '../api/meta.js';

/** The current config maps of the system namespace, as last parsed successfully. */
export interface ConfigSource {
  revisionConfig(): RevisionConfig;
  networkConfig(): NetworkConfig;
  domainConfig(): DomainConfig;
  /** config-features. */
  featuresConfig(): FeaturesConfig;
  /** config-gc (absent: Knative's defaults). */
  gcConfig?(): GcConfig;
  /** config-modules (absent: no foreign module is known). */
  modulesConfig?(): ModulesConfig;
  /** config-observability (absent: Knative's defaults, no log URL). */
  observabilityConfig?(): ObservabilityConfig;
  /** config-logging (absent: no queue-proxy logging settings). */
  loggingConfig?(): LoggingConfig;
  /** config-istio (absent: net-istio's default gateways). */
  istioConfig?(): IstioConfig;
  readonly systemNamespace: string;
}

/** The versions entity workflows' own steps wrote, and when their steps run (watcher/own-writes.ts implements it). */
export interface OwnWriteLog {
  note(workflowId: string, source: string, resourceVersion: string): void;
  stepStarted(workflowId: string): void;
  /** `failed`: the step failed, and these are the writes it made (watcher/own-writes.ts). */
  stepEnded(workflowId: string, failed?: readonly { source: string; resourceVersion: string }[]): void;
}

/**
 * The watcher's informer caches of this process (Knative's listers), when it runs one: metadata only — identity,
 * labels, owners and the `serving.knative.dev/routes` annotation. A namespace-wide list from here costs nothing;
 * from the API server it costs a read of every object of the namespace, on every pass.
 */
export interface MetadataCache {
  /**
   * The cached objects of `type` in `namespace` matching `labels`, once the cache reflects `after` (the newest version
   * the caller wrote of that type, so it reads its own writes); undefined when the cache cannot vouch for that within a
   * short wait, or does not hold the type: the caller lists from the API server instead.
   */
  list(
    type: ResourceType,
    namespace: string,
    opts?: { labels?: Readonly<Record<string, string>>; after?: string },
  ): Promise<KubeObject[] | undefined>;
  /**
   * Waits until `test` holds of the cached objects of `type` in `namespace` with `labels` (checked now and after each
   * change of one of them), at most `timeoutMs`: true when it held, false on time-out or when the cache cannot answer
   * (no watcher here, between terms).
   */
  until?(
    type: ResourceType,
    namespace: string,
    labels: Readonly<Record<string, string>>,
    test: (objects: KubeObject[]) => boolean,
    timeoutMs: number,
  ): Promise<boolean>;
  /** What the cache holds of one object (kube/recent-objects.ts); undefined when it does not follow the type. */
  versionOf?(type: ResourceType, namespace: string, name: string): CachedVersion | undefined;
}

/** What activities are built from; injected so tests and workers choose the clients. */
export interface ActivityDeps {
  kube: KubeClient;
  events: EventRecorder;
  log: Logger;
  config: ConfigSource;
  digests: DigestResolver;
  /** The entity loop's options from this worker's configuration (read by workflows at each run and resync). */
  entityOptions?: () => { resyncSeconds?: number; idleSeconds?: number };
  /** The watcher's caches, when this process runs the watcher (a worker-only process lists from the API server). */
  cache?: MetadataCache;
  /** How long a new Revision's first pass waits in the cache for its pods to be Ready (ADR 0012); none when absent. */
  newRevisionReadyWaitMs?: number;
  /** Where steps record the versions they write, for this process's poker (watcher/own-writes.ts). */
  ownWrites?: OwnWriteLog;
  /** Where activities register their Prometheus metrics (the controller's `/metrics`), when they have any. */
  registry?: Registry;
  /** The activity clock (activities may read time; workflows may not). */
  now?: () => Date;
}

export function nowOf(deps: ActivityDeps): string {
  return (deps.now?.() ?? new Date()).toISOString();
}
