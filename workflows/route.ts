// The Route entity workflow (Knative's Route reconciler) of a Route no Service controls (a Service's own is reconciled in the Service's
// pass, ADR 0005): traffic → placeholder Services → KIngress (programmed in the same step) → status.
import { patched } from '@temporalio/workflow';
import type { ObjectKey } from '../api/meta.js';
import { runEntity, type EntityInput, type PassResult } from './entity.js';
import { step } from './activities.js';
import { describeRollout, describeStatus, isSettled, relabelRecheck, rolloutWake } from './summaries.js';
import { ownFact, ownerReconciles } from './delegation.js';
import { writtenBefore, writtenFacts } from './written.js';

export async function routeWorkflow(input: EntityInput): Promise<string> {
  const key: ObjectKey = { namespace: input.namespace, name: input.name };
  const id = `${key.namespace}/${key.name}`;
  return runEntity(input, async (st): Promise<PassResult> => {
    const delegated = await ownerReconciles(st, 'Route', key);
    if (delegated) return delegated;
    const res = await step(`program Route ${id} (traffic, placeholder Services, Ingress and its VirtualServices, status)`).reconcileRoute(key, {
      written: writtenBefore(st),
    });
    if (res.outcome === 'gone') return { gone: true, summary: 'Route deleted; its Ingress and Services go with their ownerReferences' };
    return {
      gone: false,
      settled: isSettled(res),
      facts: { ...ownFact, ...writtenFacts(res) },
      ...rolloutWake(id, res),
      ...relabelRecheck(res, () => patched('relabel-recheck')),
      summary: [describeRollout(res), `Ingress ${res.ingress}`, describeStatus(res)].filter(Boolean).join('; '),
    };
  });
}
