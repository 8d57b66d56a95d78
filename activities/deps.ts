import type { Logger } from 'pino';
import type { EventRecorder } from './events.js';
import type { KubeClient } from './kube/client.js';

/** What activities are built from; injected so tests and workers choose the clients. */
export interface ActivityDeps {
  kube: KubeClient;
  events: EventRecorder;
  log: Logger;
}
