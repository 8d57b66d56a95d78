// Kubernetes object metadata as Tidal uses it. Plain JSON types: safe inside workflows.

export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
}

export interface ObjectMeta {
  name?: string;
  generateName?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  ownerReferences?: OwnerReference[];
  finalizers?: string[];
}

export interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: ObjectMeta;
}

/** Identity of one namespaced object; the unit a workflow and a poke are about. */
export interface ObjectKey {
  namespace: string;
  name: string;
}

export function keyOf(obj: KubeObject): ObjectKey {
  return { namespace: obj.metadata.namespace ?? '', name: obj.metadata.name ?? '' };
}

/** The owner reference with `controller: true`, if any (Knative's metav1.GetControllerOf). */
export function controllerOf(obj: KubeObject): OwnerReference | undefined {
  return obj.metadata.ownerReferences?.find((ref) => ref.controller === true);
}

/** True when `child` is controlled by the object with `ownerUid`. */
export function isControlledBy(child: KubeObject, ownerUid: string | undefined): boolean {
  return ownerUid !== undefined && controllerOf(child)?.uid === ownerUid;
}

/**
 * A resourceVersion as a number, or undefined when it is not one. Kubernetes calls versions opaque, but every API
 * server stores etcd's revision, one counter for all kinds: caches compare them to know which copy is newer.
 */
export function resourceVersionNumber(resourceVersion: string | undefined): bigint | undefined {
  return resourceVersion && /^[0-9]{1,30}$/.test(resourceVersion) ? BigInt(resourceVersion) : undefined;
}
