import type { Logger } from 'pino';
import type { RevisionConfig } from '../api/config/index.js';
import type { NetworkConfig } from '../api/config/network.js';
import type { DomainConfig } from '../api/config/domain.js';
import type { DigestResolver } from './digests.js';
import type { EventRecorder } from './events.js';
import type { KubeClient } from './kube/client.js';

/** The current config maps of the system namespace, as last parsed successfully. */
export interface ConfigSource {
  revisionConfig(): RevisionConfig;
  networkConfig(): NetworkConfig;
  domainConfig(): DomainConfig;
  readonly systemNamespace: string;
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
  /** The activity clock (activities may read time; workflows may not). */
  now?: () => Date;
}

export function nowOf(deps: ActivityDeps): string {
  return (deps.now?.() ?? new Date()).toISOString();
}
