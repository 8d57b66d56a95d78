// The Route entity workflow (spec §4): traffic → placeholder Services → KIngress → status.
import type { ObjectKey } from '../api/meta.js';
import { runEntity, type EntityInput, type PassResult } from './entity.js';
import { step } from './activities.js';
import { describeStatus } from './summaries.js';

export async function routeWorkflow(input: EntityInput): Promise<string> {
  const key: ObjectKey = { namespace: input.namespace, name: input.name };
  const id = `${key.namespace}/${key.name}`;
  return runEntity(input, async (): Promise<PassResult> => {
    const res = await step(`program Route ${id} (traffic, placeholder Services, Ingress, status)`).reconcileRoute(key);
    if (res.outcome === 'gone') return { gone: true, summary: 'Route deleted; its Ingress and Services go with their ownerReferences' };
    return {
      gone: false,
      summary: `Ingress ${res.ingress}; ${describeStatus(res)}`,
    };
  });
}
