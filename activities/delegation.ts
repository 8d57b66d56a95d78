// Whether an object's own workflow should reconcile it at all (ADR 0005): a Configuration or Route controlled by a
// Service, or a KIngress controlled by a Route, is reconciled in its owner's pass. The watcher pokes the owner for
// such objects; this covers runs started before the object was adopted, by an older version, or by a poke sent
// before the watcher knew the owner.
import { reconcilingOwner } from '../api/delegation.js';
import type { EntityKind } from '../api/entity.js';
import { Resources, type ResourceType } from '../api/kinds.js';
import type { KubeObject, ObjectKey } from '../api/meta.js';
import type { ActivityDeps } from './deps.js';

const typeOf: Partial<Record<EntityKind, ResourceType>> = {
  Configuration: Resources.Configuration,
  Route: Resources.Route,
  Ingress: Resources.KIngress,
};

export type DelegationOutcome = { outcome: 'own' } | { outcome: 'delegated'; owner: string };

export function createDelegationActivities(deps: ActivityDeps) {
  return {
    /** `delegated` (with `<Kind>/<ns>/<name>` of the owner) when another workflow reconciles this object. */
    async findReconcilingOwner(kind: EntityKind, key: ObjectKey): Promise<DelegationOutcome> {
      const type = typeOf[kind];
      if (!type) return { outcome: 'own' };
      const obj = await deps.kube.get<KubeObject>(type, key.namespace, key.name);
      const owner = obj ? reconcilingOwner(kind, obj) : undefined;
      return owner ? { outcome: 'delegated', owner: `${owner.kind}/${owner.key.namespace}/${owner.key.name}` } : { outcome: 'own' };
    },
  };
}
