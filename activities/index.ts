// All activities, built from injected clients. Workflows import only the *type* of this module. Every result
// carries `observed`: the watched objects the activity saw (activities/observe.ts), for the entity loop.
import { createConfigurationActivities } from './configuration.js';
import type { ActivityDeps } from './deps.js';
import { createRevisionActivities } from './revision.js';
import { createServiceActivities } from './service.js';
import { createRouteActivities } from './route.js';
import { createIngressActivities } from './ingress.js';
import { createCertificateActivities } from './certificate.js';
import { withObservations } from './observe.js';
import { createOptionsActivities } from './options.js';
import { createDelegationActivities } from './delegation.js';
import { createDomainMappingActivities } from './domainmapping.js';
import { createRevisionGcActivities } from './revision-gc.js';
import { createCombinedActivities } from './combined.js';
import { asSteps, recordingAtStepEnd } from './background.js';
import { linkingWarnings, withStoryLinks } from './story-link.js';

export function createActivities(given: ActivityDeps) {
  // Each step's Events are sent when its work is done (activities/background.ts); its Warnings link to its workflow.
  const deps = { ...given, events: linkingWarnings(recordingAtStepEnd(given.events, given.now)) };
  const steps = withObservations(
    {
      ...createServiceActivities(deps),
      ...createConfigurationActivities(deps),
      ...createRevisionActivities(deps),
      ...createRouteActivities(deps),
      ...createIngressActivities(deps),
      ...createCertificateActivities(deps),
      ...createOptionsActivities(deps),
      ...createDelegationActivities(deps),
      ...createDomainMappingActivities(deps),
      ...createRevisionGcActivities(deps),
    },
    deps.ownWrites,
  );
  // Made of the steps above, each part with its own observations (activities/combined.ts). Each step knows the
  // workflow it works for, for the link in what it writes (activities/story-link.ts).
  const uiUrl = () => given.config.observabilityConfig?.().temporalUiUrl ?? '';
  return withStoryLinks(asSteps({ ...steps, ...createCombinedActivities(steps, deps.newRevisionReadyWaitMs ?? 0, deps.cache) }), uiUrl);
}

/** What every activity result may carry besides its outcome. */
export interface Observed {
  /** Source (`<Kind>/<ns>/<name>`) → observation (`api/content-token.ts`). */
  observed?: Record<string, string>;
  /** Sources the activity wrote: `all` (apply or create), `status` (a status write); the others it only read. */
  wrote?: Record<string, 'all' | 'status'>;
  /** Earlier versions the activity applied or created, `<resourceVersion> <observation>` per source (activities/observe.ts). */
  echoes?: Record<string, string[]>;
  /** Sources the activity created and did not look at again (activities/observe.ts). */
  created?: string[];
  /** The oldest resourceVersion of each observed source the activity read or wrote (activities/observe.ts). */
  versions?: Record<string, string>;
}

type WithObserved<A> = { [K in keyof A]: A[K] extends (...args: infer P) => Promise<infer R> ? (...args: P) => Promise<R & Observed> : A[K] };

export type Activities = WithObserved<ReturnType<typeof createActivities>>;
export type { ChildOutcome } from './service.js';
export type { StatusOutcome } from './status.js';
export type { RevisionOutcome } from './configuration.js';
export type { DigestOutcome, ResourcesOutcome } from './revision.js';
export type { RouteOutcome } from './route.js';
export type { WrittenVersions } from './written.js';
export type { IngressOutcome } from './ingress.js';
export type { DelegationOutcome } from './delegation.js';
export type { DomainMappingOutcome } from './domainmapping.js';
export type { RevisionGcOutcome } from './revision-gc.js';
export type { NewRevisionParts, ServiceFullParts, ServiceStatusParts } from './combined.js';
