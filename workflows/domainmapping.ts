// The DomainMapping entity workflow (Knative's DomainMapping reconciler): one step per pass — the claim, `spec.ref` resolved, the KIngress and,
// for class istio, its VirtualServices (ADR 0005), then the status; the finalizer's step when it is deleted.
import type { ObjectKey } from '../api/meta.js';
import { runEntity, type EntityInput, type PassResult } from './entity.js';
import { step } from './activities.js';
import { describeStatus, isSettled } from './summaries.js';

/** A mapping whose target is of a kind the watcher does not follow looks again this often while unresolved. */
const UNWATCHED_REF_RETRY_SECONDS = 30;

export async function domainMappingWorkflow(input: EntityInput): Promise<string> {
  const key: ObjectKey = { namespace: input.namespace, name: input.name };
  const id = `${key.namespace}/${key.name}`;
  return runEntity(input, async (): Promise<PassResult> => {
    const res = await step(`map DomainMapping ${id} (ClusterDomainClaim, spec.ref, Ingress and its VirtualServices, status)`).reconcileDomainMapping(
      key,
    );
    if (res.outcome === 'gone') {
      const claimDeleted = 'claimDeleted' in res && res.claimDeleted === true;
      return {
        gone: true,
        summary: `DomainMapping deleted${claimDeleted ? '; its ClusterDomainClaim deleted' : ''}; its Ingress goes with its ownerReference`,
      };
    }
    const parts = [
      `${res.url ?? ''}`,
      `claim ${res.claim}`,
      res.target ? `→ ${res.target}` : 'ref not resolved',
      `Ingress ${res.ingress}`,
      describeStatus(res),
    ];
    const unresolvedUnwatched = res.unwatchedRef === true && res.target === undefined && res.claim !== 'missing' && res.claim !== 'notOwned';
    return {
      gone: false,
      settled: isSettled(res),
      summary: parts.join('; '),
      ...(unresolvedUnwatched ? { retryInSeconds: UNWATCHED_REF_RETRY_SECONDS } : {}),
    };
  });
}
