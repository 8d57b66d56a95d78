// The Service entity workflow (spec §1): the Configuration and Route named after the Service, then its status.
import type { ObjectKey } from '../api/meta.js';
import type { ChildOutcome, StatusOutcome } from '../activities/index.js';
import { runEntity, type EntityInput, type PassResult } from './entity.js';
import { step } from './activities.js';

function describeChild(kind: string, o: ChildOutcome): string {
  if (o.outcome === 'notOwned') return `${kind} ${o.name} not owned (NotOwned)`;
  if (o.outcome === 'applied') return `${kind} ${o.action}`;
  return `${kind} gone`;
}

export function describeStatus(o: StatusOutcome): string {
  return `status ${o.outcome}${o.ready ? `, Ready=${o.ready}${o.reason ? ` (${o.reason})` : ''}` : ''}`;
}

export async function serviceWorkflow(input: EntityInput): Promise<string> {
  const key: ObjectKey = { namespace: input.namespace, name: input.name };
  const id = `${key.namespace}/${key.name}`;
  return runEntity(input, async (): Promise<PassResult> => {
    const cfg = await step(`apply Configuration ${id}`).reconcileServiceConfiguration(key);
    if (cfg.outcome === 'gone') return { gone: true, summary: 'Service deleted; its children go with their ownerReferences' };
    const route = await step(`apply Route ${id}`).reconcileServiceRoute(key);
    const status = await step(`update Service ${id} status`).updateServiceStatus(key);
    if (status.outcome === 'gone') return { gone: true, summary: 'Service deleted' };
    const uid = cfg.outcome === 'applied' ? cfg.ownerUid : route.outcome === 'applied' ? route.ownerUid : undefined;
    return { gone: false, ...(uid ? { uid } : {}), summary: `${describeChild('Configuration', cfg)}; ${describeChild('Route', route)}; ${describeStatus(status)}` };
  });
}
