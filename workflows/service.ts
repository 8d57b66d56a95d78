// The Service entity workflow (spec §1): owns the Configuration (and, next, the Route) named after the Service.
import type { ObjectKey } from '../api/meta.js';
import { runEntity, type EntityInput, type PassResult } from './entity.js';
import { step } from './activities.js';

export async function serviceWorkflow(input: EntityInput): Promise<string> {
  const key: ObjectKey = { namespace: input.namespace, name: input.name };
  return runEntity(input, async (): Promise<PassResult> => {
    const cfg = await step(`apply Configuration ${key.namespace}/${key.name}`).reconcileServiceConfiguration(key);
    switch (cfg.outcome) {
      case 'gone':
        return { gone: true, summary: 'Service deleted; its children go with their ownerReferences' };
      case 'notOwned':
        return { gone: false, summary: `Configuration ${cfg.name} exists and is not owned by this Service (NotOwned)` };
      case 'applied':
        return { gone: false, uid: cfg.ownerUid, summary: `Configuration ${cfg.name} ${cfg.action} (generation ${cfg.generation})` };
    }
  });
}
