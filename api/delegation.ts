// Which workflow reconciles an object (ADR 0005). A Service's pass reconciles the Configuration and the Route it
// controls, and a Route's or DomainMapping's pass the KIngress it controls, in the same workflow task: such children
// have no workflow of their own, and every event of theirs pokes the owner's workflow instead. Objects nobody controls
// (a Route or Configuration applied by hand, a KIngress of another owner) keep their own workflows.
import { SERVING_GROUP } from './kinds.js';
import { controllerOf, type KubeObject, type ObjectKey } from './meta.js';
import type { EntityKind } from './entity.js';

/** Child kind → the kinds of controlling owner whose pass reconciles it. */
export const reconciledByOwner: Readonly<Partial<Record<EntityKind, readonly EntityKind[]>>> = {
  Configuration: ['Service'],
  Route: ['Service'],
  Ingress: ['Route', 'DomainMapping'],
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
  const ownerKinds = reconciledByOwner[kind];
  const ref = controllerOf(obj);
  const ownerKind = ownerKinds?.find((k) => k === ref?.kind);
  if (!ownerKind || !ref || !ref.apiVersion.startsWith(`${SERVING_GROUP}/`)) return undefined;
  return { kind: ownerKind, key: { namespace: obj.metadata.namespace ?? '', name: ref.name } };
}
