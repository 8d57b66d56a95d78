// The Ingress entity workflow of a KIngress no Route controls (a Route's own is programmed in the Route's pass,
// ADR 0005), class istio: VirtualServices, then status.
import type { ObjectKey } from '../api/meta.js';
import { runEntity, type EntityInput, type PassResult } from './entity.js';
import { step } from './activities.js';
import { describeStatus, isSettled } from './summaries.js';
import { ownFact, ownerReconciles } from './delegation.js';

export async function ingressWorkflow(input: EntityInput): Promise<string> {
  const key: ObjectKey = { namespace: input.namespace, name: input.name };
  const id = `${key.namespace}/${key.name}`;
  return runEntity(input, async (st): Promise<PassResult> => {
    const delegated = await ownerReconciles(st, 'Ingress', key);
    if (delegated) return delegated;
    const res = await step(`apply VirtualServices ${key.name}-ingress/-mesh and Ingress ${id} status`).reconcileIngress(key);
    if (res.outcome === 'gone') return { gone: true, summary: 'Ingress deleted; its VirtualServices go with their ownerReferences' };
    if (res.outcome === 'otherClass') return { gone: false, facts: ownFact, summary: `class ${res.ingressClass} is not Tidal's; left alone` };
    return { gone: false, settled: isSettled(res), facts: ownFact, summary: `${res.virtualServices} VirtualServices; ${describeStatus(res)}` };
  });
}
