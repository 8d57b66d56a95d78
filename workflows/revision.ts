// The Revision entity workflow (Knative's Revision reconciler): digests, then `<rev>-deployment` and the `<rev>` Service, then status.
import type { ObjectKey } from '../api/meta.js';
import { patched } from '@temporalio/workflow';
import type { DigestOutcome, ResourcesOutcome } from '../activities/revision.js';
import type { StatusOutcome } from '../activities/index.js';
import { runEntity, type EntityInput, type PassResult } from './entity.js';
import { combinedStep, remoteStep, step } from './activities.js';
import { describeStatus, isSettled } from './summaries.js';

/** `Deployment created (2 replicas), Service created, PodDisruptionBudget created` — what the step did. */
function describeResources(res: Extract<ResourcesOutcome, { outcome: 'applied' }>): string {
  const sizing = res.replicas !== undefined ? `${res.replicas} replicas` : 'replicas from its HPA';
  const parts = [`Deployment ${res.deployment} (${sizing})`, `Service ${res.service}`];
  if (res.hpa !== undefined && res.hpa !== 'none') parts.push(`HPA ${res.hpa}`);
  if (res.pdb !== undefined && res.pdb !== 'none') parts.push(`PodDisruptionBudget ${res.pdb}`);
  return parts.join(', ');
}

export async function revisionWorkflow(input: EntityInput): Promise<string> {
  const key: ObjectKey = { namespace: input.namespace, name: input.name };
  const id = `${key.namespace}/${key.name}`;
  // A reserve Revision whose pods have just reached their threshold for the first time holds none from now on
  // (ADR 0018): its children are applied once more, in the same pass.
  const scaleReserve = async (): Promise<string> => {
    const res = await step(`scale reserve Revision ${id} to zero`).reconcileRevisionResources(key);
    return res.outcome === 'applied' ? `reserve: ${describeResources(res)}` : 'reserve';
  };
  return runEntity(
    input,
    async (st): Promise<PassResult> => {
      // Only the Deployment's or pods' status changed: nothing to apply, readiness to recompute.
      if (st.statusOnly && st.facts.digests === 'resolved') {
        const status = await step(`update Revision ${id} status`).updateRevisionStatus(key);
        if (status.outcome === 'gone') return { gone: true, summary: 'Revision deleted' };
        const rescaled = status.rescale ? `; ${await scaleReserve()}` : '';
        return {
          gone: false,
          statusOnly: true,
          settled: isSettled(status),
          summary: `Deployment's or pods' status changed; ${describeStatus(status)}${rescaled}`,
        };
      }
      // Digests are resolved once per Revision (Knative's tag-to-digest resolution); later passes skip the step.
      let digestNote = 'digests pinned';
      let res: ResourcesOutcome | undefined;
      let status: StatusOutcome | undefined;
      if (st.facts.digests !== 'resolved') {
        // A registry usually answers at once: one local attempt inside this workflow task (bounded by config-deployment's
        // 10 s resolution timeout) saves a round trip through the server. Should it fail, a regular activity retries
        // with backoff until the registry answers; each failure is in the Revision's status meanwhile.
        const summary = `resolve image digests of Revision ${id}`;
        const local = { startToCloseTimeout: '20s', retry: { maximumAttempts: 1 } } as const;
        const retried = () =>
          remoteStep(`${summary} (retried until the registry answers)`, {
            retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '30s' },
          }).resolveRevisionDigests(key);
        let digests: DigestOutcome;
        if (patched('new-revision-in-one-step')) {
          // The local attempt goes on to the resources and the status in the same local activity: no step boundaries
          // on the way to the Deployment (activities/combined.ts). Should any part fail, the pass goes on step by step.
          const parts = await combinedStep(`${summary}, apply its Deployment, Service, HPA and PodDisruptionBudget, update its status`, local)
            .reconcileNewRevision(key)
            .catch(() => undefined);
          digests = parts?.digests ?? (await retried());
          res = parts?.resources;
          status = parts?.status;
        } else {
          digests = await step(summary, local).resolveRevisionDigests(key).catch(retried);
        }
        if (digests.outcome === 'gone') return { gone: true, summary: 'Revision deleted; its Deployment and Service go with their ownerReferences' };
        digestNote = digests.cached ? 'digests pinned' : `digests resolved (${digests.images} images)`;
      }
      res ??= await step(`apply Deployment ${key.name}-deployment, Service, HPA and PodDisruptionBudget ${key.name}`).reconcileRevisionResources(key);
      status ??= await step(`update Revision ${id} status`).updateRevisionStatus(
        key,
        undefined,
        res.outcome === 'applied' ? res.service === 'notOwned' : undefined,
      );
      if (res.outcome === 'gone' || status.outcome === 'gone') return { gone: true, summary: 'Revision deleted' };
      const rescaled = status.rescale ? `; ${await scaleReserve()}` : '';
      const resources =
        res.outcome === 'applied'
          ? describeResources(res)
          : res.outcome === 'module'
            ? `Service ${res.service}; Deployment left to module ${res.module}'s operator (ADR 0009)`
            : 'waiting for digests';
      return {
        gone: false,
        settled: isSettled(status),
        summary: `${digestNote}; ${resources}; ${describeStatus(status)}${rescaled}`,
        // A Revision waiting for digests (recreated under the same name) must not be marked resolved.
        facts: { digests: res.outcome === 'applied' || res.outcome === 'module' ? 'resolved' : '' },
      };
    },
    // Pods are the Deployment's and the HPA's status is the HPA controller's: their changes only ever move the
    // Revision's status.
    { statusKinds: ['Pod', 'HorizontalPodAutoscaler'] },
  );
}
