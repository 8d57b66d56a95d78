// Which workflow reconciles an object (ADR 0005). A Service's pass reconciles the Configuration and the Route it
// controls, and a Route's pass the KIngress it controls, in the same workflow task: such children have no workflow
// of their own, and every event of theirs pokes the owner's workflow instead. Objects nobody controls (a Route or
// Configuration applied by hand, a KIngress of another owner) keep their own workflows.
import { SERVING_GROUP } from './kinds.js';
import { controllerOf, type KubeObject, type ObjectKey } from './meta.js';
import type { EntityKind } from './entity.js';

/** Child kind → the kind of controlling owner whose pass reconciles it. */
export const reconciledByOwner: Readonly<Partial<Record<EntityKind, EntityKind>>> = {
  Configuration: 'Service',
  Route: 'Service',
  Ingress: 'Route',
};

export interface EntityRef {
  kind: EntityKind;
  key: ObjectKey;
}

/**
 * The owner whose workflow reconciles `obj` (of `kind`), or undefined when `obj` has a workflow of its own. An object
 * being deleted is its own again: its finalizer (a Route's) must be run after its owner, deleted first, is gone.
 */
export function reconcilingOwner(kind: EntityKind, obj: KubeObject): EntityRef | undefined {
  if (obj.metadata.deletionTimestamp) return undefined;
  const ownerKind = reconciledByOwner[kind];
  const ref = controllerOf(obj);
  if (!ownerKind || !ref || ref.kind !== ownerKind || !ref.apiVersion.startsWith(`${SERVING_GROUP}/`)) return undefined;
  return { kind: ownerKind, key: { namespace: obj.metadata.namespace ?? '', name: ref.name } };
}
