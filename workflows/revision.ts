// The Revision entity workflow (spec §3): digests, then `<rev>-deployment` and the `<rev>` Service, then status.
import type { ObjectKey } from '../api/meta.js';
import { runEntity, type EntityInput, type PassResult } from './entity.js';
import { step } from './activities.js';
import { describeStatus } from './service.js';

export async function revisionWorkflow(input: EntityInput): Promise<string> {
  const key: ObjectKey = { namespace: input.namespace, name: input.name };
  const id = `${key.namespace}/${key.name}`;
  return runEntity(input, async (): Promise<PassResult> => {
    const digests = await step(`resolve image digests of Revision ${id}`).resolveRevisionDigests(key);
    if (digests.outcome === 'gone') return { gone: true, summary: 'Revision deleted; its Deployment and Service go with their ownerReferences' };
    const res = await step(`apply Deployment ${key.name}-deployment and Service ${key.name}`).reconcileRevisionResources(key);
    const status = await step(`update Revision ${id} status`).updateRevisionStatus(key);
    if (res.outcome === 'gone' || status.outcome === 'gone') return { gone: true, summary: 'Revision deleted' };
    const resources = res.outcome === 'applied' ? `Deployment ${res.deployment} (${res.replicas} replicas), Service ${res.service}` : 'waiting for digests';
    return { gone: false, summary: `digests ${digests.cached ? 'pinned' : 'resolved'}; ${resources}; ${describeStatus(status)}` };
  });
}
