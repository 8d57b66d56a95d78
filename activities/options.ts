// The entity loop's options as this worker is configured now (TIDAL_RESYNC_SECONDS, TIDAL_IDLE_SECONDS). A workflow reads them with a
// local activity at the start of every run and at every resync, so a changed setting reaches running workflows.
import type { ActivityDeps } from './deps.js';

export interface EntityOptionsRead {
  resyncSeconds?: number;
  idleSeconds?: number;
}

export function createOptionsActivities(deps: ActivityDeps) {
  return {
    readEntityOptions(): Promise<EntityOptionsRead> {
      return Promise.resolve(deps.entityOptions?.() ?? {});
    },
  };
}
