// Activities of the Service workflow: each converges one child of a Service and reports a short summary.
import { Resources } from '../api/kinds.js';
import { isControlledBy, type ObjectKey } from '../api/meta.js';
import type { Configuration, Service } from '../api/serving.js';
import { makeConfiguration } from '../resources/configuration.js';
import type { ActivityDeps } from './deps.js';

/** What one apply of a child did: small, so the workflow history stays readable. */
export type ChildOutcome =
  | { outcome: 'gone' }
  | { outcome: 'notOwned'; name: string }
  | {
      outcome: 'applied';
      action: 'created' | 'updated' | 'unchanged';
      ownerUid: string;
      ownerGeneration: number;
      name: string;
      generation: number;
    };

export function createServiceActivities({ kube, events }: ActivityDeps) {
  return {
    /** Creates or clobbers the Configuration named after the Service (spec §1.2). */
    async reconcileServiceConfiguration(key: ObjectKey): Promise<ChildOutcome> {
      const svc = await kube.get<Service>(Resources.Service, key.namespace, key.name);
      if (!svc || svc.metadata.deletionTimestamp) return { outcome: 'gone' };
      const existing = await kube.get<Configuration>(Resources.Configuration, key.namespace, key.name);
      if (existing && !isControlledBy(existing, svc.metadata.uid)) {
        return { outcome: 'notOwned', name: key.name };
      }
      let applied: Configuration;
      try {
        applied = await kube.apply(Resources.Configuration, makeConfiguration(svc, existing));
      } catch (err) {
        if (!existing) {
          await events.record(svc, 'Warning', 'CreationFailed', `Failed to create Configuration "${key.name}": ${String(err)}`);
        }
        throw err;
      }
      if (!existing) await events.record(svc, 'Normal', 'Created', `Created Configuration "${key.name}"`);
      const action = !existing ? 'created' : applied.metadata.resourceVersion === existing.metadata.resourceVersion ? 'unchanged' : 'updated';
      return {
        outcome: 'applied',
        action,
        ownerUid: svc.metadata.uid ?? '',
        ownerGeneration: svc.metadata.generation ?? 0,
        name: applied.metadata.name ?? key.name,
        generation: applied.metadata.generation ?? 0,
      };
    },
  };
}
