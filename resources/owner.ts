import type { KubeObject, OwnerReference } from '../api/meta.js';

/** A controller owner reference to `owner`, as metav1.NewControllerRef makes it. */
export function controllerRef(owner: KubeObject): OwnerReference {
  return {
    apiVersion: owner.apiVersion,
    kind: owner.kind,
    name: owner.metadata.name ?? '',
    uid: owner.metadata.uid ?? '',
    controller: true,
    blockOwnerDeletion: true,
  };
}
