// The Ingress entity workflow (KIngress of class istio): VirtualServices, then status.
import type { ObjectKey } from '../api/meta.js';
import { runEntity, type EntityInput, type PassResult } from './entity.js';
import { step } from './activities.js';
import { describeStatus } from './summaries.js';

export async function ingressWorkflow(input: EntityInput): Promise<string> {
  const key: ObjectKey = { namespace: input.namespace, name: input.name };
  const id = `${key.namespace}/${key.name}`;
  return runEntity(input, async (): Promise<PassResult> => {
    const res = await step(`apply VirtualServices ${key.name}-ingress/-mesh and Ingress ${id} status`).reconcileIngress(key);
    if (res.outcome === 'gone') return { gone: true, summary: 'Ingress deleted; its VirtualServices go with their ownerReferences' };
    if (res.outcome === 'otherClass') return { gone: false, summary: `class ${res.ingressClass} is not Tidal's; left alone` };
    return { gone: false, summary: `${res.virtualServices} VirtualServices; ${describeStatus(res)}` };
  });
}
