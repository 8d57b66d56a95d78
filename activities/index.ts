// All activities, built from injected clients. Workflows import only the *type* of this module.
import { createConfigurationActivities } from './configuration.js';
import type { ActivityDeps } from './deps.js';
import { createRevisionActivities } from './revision.js';
import { createServiceActivities } from './service.js';
import { createRouteActivities } from './route.js';
import { createIngressActivities } from './ingress.js';
import { createCertificateActivities } from './certificate.js';

export function createActivities(deps: ActivityDeps) {
  return {
    ...createServiceActivities(deps),
    ...createConfigurationActivities(deps),
    ...createRevisionActivities(deps),
    ...createRouteActivities(deps),
    ...createIngressActivities(deps),
    ...createCertificateActivities(deps),
  };
}

export type Activities = ReturnType<typeof createActivities>;
export type { ChildOutcome } from './service.js';
export type { StatusOutcome } from './status.js';
export type { RevisionOutcome } from './configuration.js';
export type { DigestOutcome, ResourcesOutcome } from './revision.js';
export type { RouteOutcome } from './route.js';
export type { IngressOutcome } from './ingress.js';
