// The Service entity workflow (spec §1): the Configuration and Route named after the Service, then its status.
import type { ObjectKey } from '../api/meta.js';
import { specOfObservation } from '../api/content-token.js';
import { runEntity, type EntityInput, type PassResult } from './entity.js';
import { step } from './activities.js';
import { describeChild, describeStatus } from './summaries.js';

export async function serviceWorkflow(input: EntityInput): Promise<string> {
  const key: ObjectKey = { namespace: input.namespace, name: input.name };
  const id = `${key.namespace}/${key.name}`;
  return runEntity(input, async (st): Promise<PassResult> => {
    // Only a child's status changed: the children are as the last pass applied them, the Service's status is not.
    // A Route held for a bring-your-own Revision waits on the Configuration's status, so it takes full passes.
    // Should the Service's own spec have moved on meanwhile, the status step leaves it and the pass goes on in full.
    const selfSpec = specOfObservation(st.observed[`Service/${id}`]);
    if (st.statusOnly && st.facts.routeHeld !== 'yes' && selfSpec !== '-') {
      const status = await step(`update Service ${id} status`).updateServiceStatus(key, selfSpec);
      if (status.outcome === 'gone') return { gone: true, summary: 'Service deleted' };
      if (status.outcome !== 'stale') return { gone: false, statusOnly: true, summary: `children's status changed; ${describeStatus(status)}` };
    }
    // One after the other: local steps run in parallel would resolve in completion order, which a replay cannot
    // reproduce (ADR 0004).
    const cfg = await step(`apply Configuration ${id}`).reconcileServiceConfiguration(key);
    if (cfg.outcome === 'gone') return { gone: true, summary: 'Service deleted; its children go with their ownerReferences' };
    const route = await step(`apply Route ${id}`).reconcileServiceRoute(key);
    const status = await step(`update Service ${id} status`).updateServiceStatus(key);
    if (status.outcome === 'gone') return { gone: true, summary: 'Service deleted' };
    const uid = cfg.outcome === 'applied' ? cfg.ownerUid : route.outcome === 'applied' ? route.ownerUid : undefined;
    return {
      gone: false,
      ...(uid ? { uid } : {}),
      facts: { routeHeld: route.outcome === 'held' ? 'yes' : '' },
      summary: `${describeChild('Configuration', cfg)}; ${describeChild('Route', route)}; ${describeStatus(status)}`,
    };
  });
}
