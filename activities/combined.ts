// Steps that run several steps of a pass in one local activity. Between two local activities the result goes back
// to the workflow and the next step is scheduled: a few milliseconds each on an idle machine, 5–20 ms on two busy
// cores, on the path from a Revision's pods to the Service Ready and from a new Revision to its Deployment. Each part
// is the step it replaces, with its own observations (activities/observe.ts), returned in the order the parts ran:
// the workflow pools them one after the other, exactly as it pools separate steps (workflows/activities.ts
// `combinedStep`). A part that throws fails the whole step; the parts are idempotent, so a retry runs them again.
import type { ObjectKey } from '../api/meta.js';
import type { DigestOutcome, ResourcesOutcome } from './revision.js';
import type { RouteOutcome } from './route.js';
import type { StatusOutcome } from './status.js';
import type { ObservedResult } from './observe.js';
import type { WrittenVersions } from './written.js';

/** The steps the combined ones are made of, each already wrapped with its own observations. */
export interface PartSteps {
  updateConfigurationStatus(key: ObjectKey, createError?: string, opts?: { written?: WrittenVersions }): Promise<StatusOutcome & ObservedResult>;
  reconcileRoute(key: ObjectKey, opts?: { reportNotOwned?: boolean; written?: WrittenVersions }): Promise<RouteOutcome & ObservedResult>;
  updateServiceStatus(key: ObjectKey, expectSpec?: string): Promise<StatusOutcome & ObservedResult>;
  resolveRevisionDigests(key: ObjectKey): Promise<DigestOutcome & ObservedResult>;
  reconcileRevisionResources(key: ObjectKey): Promise<ResourcesOutcome & ObservedResult>;
  updateRevisionStatus(key: ObjectKey): Promise<StatusOutcome & ObservedResult>;
}

/** What a combined step returns: its parts by name, in the order they ran (a part not run is absent). */
export interface ServiceStatusParts {
  configuration?: StatusOutcome & ObservedResult;
  route?: RouteOutcome & ObservedResult;
  service: StatusOutcome & ObservedResult;
}

export interface NewRevisionParts {
  digests: DigestOutcome & ObservedResult;
  resources?: ResourcesOutcome & ObservedResult;
  status?: StatusOutcome & ObservedResult;
}

export function createCombinedActivities(s: PartSteps) {
  return {
    /**
     * A Service's status-only pass (workflows/service.ts): the Configuration's status, then its Route programmed, then
     * the Service's status — the three steps that stand between a Revision turning Ready and the Service Ready.
     */
    async reconcileServiceStatus(
      key: ObjectKey,
      opts: { configuration: boolean; route: boolean; written: WrittenVersions; expectSpec: string },
    ): Promise<ServiceStatusParts> {
      const configuration = opts.configuration ? await s.updateConfigurationStatus(key, undefined, { written: opts.written }) : undefined;
      const route = opts.route ? await s.reconcileRoute(key, { reportNotOwned: true, written: opts.written }) : undefined;
      const service = await s.updateServiceStatus(key, opts.expectSpec);
      return { ...(configuration ? { configuration } : {}), ...(route ? { route } : {}), service };
    },

    /**
     * A new Revision's first pass (workflows/revision.ts) when the registry answers: digests, then its Deployment,
     * Service, HPA and PodDisruptionBudget, then its status. A registry failure throws from the first part, and the
     * workflow goes on with the digest step retried as a regular activity.
     */
    async reconcileNewRevision(key: ObjectKey): Promise<NewRevisionParts> {
      const digests = await s.resolveRevisionDigests(key);
      if (digests.outcome === 'gone') return { digests };
      const resources = await s.reconcileRevisionResources(key);
      const status = await s.updateRevisionStatus(key);
      return { digests, resources, status };
    },
  };
}
