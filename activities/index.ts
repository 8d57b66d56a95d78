// All activities, built from injected clients. Workflows import only the *type* of this module.
import type { ActivityDeps } from './deps.js';
import { createServiceActivities } from './service.js';

export function createActivities(deps: ActivityDeps) {
  return {
    ...createServiceActivities(deps),
  };
}

export type Activities = ReturnType<typeof createActivities>;
export type { ChildOutcome } from './service.js';
