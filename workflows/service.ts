// The Service entity workflow (spec §1): the Configuration and Route named after the Service, then its status.
import type { ObjectKey } from '../api/meta.js';
import { runEntity, type EntityInput, type PassResult } from './entity.js';
import { step } from './activities.js';
import { describeChild, describeStatus } from './summaries.js';

export async function serviceWorkflow(input: EntityInput): Promise<string> {
  const key: ObjectKey = { namespace: input.namespace, name: input.name };
  const id = `${key.namespace}/${key.name}`;
  return runEntity(input, async (): Promise<PassResult> => {
    // The two children are independent: converge them side by side.
    const [cfg, route] = await Promise.all([
      step(`apply Configuration ${id}`).reconcileServiceConfiguration(key),
      step(`apply Route ${id}`).reconcileServiceRoute(key),
    ]);
    if (cfg.outcome === 'gone') return { gone: true, summary: 'Service deleted; its children go with their ownerReferences' };
    const status = await step(`update Service ${id} status`).updateServiceStatus(key);
    if (status.outcome === 'gone') return { gone: true, summary: 'Service deleted' };
    const uid = cfg.outcome === 'applied' ? cfg.ownerUid : route.outcome === 'applied' ? route.ownerUid : undefined;
    return {
      gone: false,
      ...(uid ? { uid } : {}),
      summary: `${describeChild('Configuration', cfg)}; ${describeChild('Route', route)}; ${describeStatus(status)}`,
    };
  });
}
