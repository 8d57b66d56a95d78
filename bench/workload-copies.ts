// bench:floor's copies of one Revision's workload objects: what Tidal wrote, made into templates and then into copies
// under other names, so the Kubernetes side can be measured on exactly those objects with no control plane running.
import { randomUUID } from 'node:crypto';
import { apiVersionOf, Resources, type ResourceType } from '../api/kinds.js';
import type { KubeObject } from '../api/meta.js';

export interface Workload {
  type: ResourceType;
  obj: KubeObject;
}

const UID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g;

/**
 * An object as Tidal wrote it: metadata less what the API server adds (uid, resourceVersion, timestamps, managed
 * fields, generation) and less its owner (the copies have no Revision), the spec, no status; a Service without the
 * cluster IPs the API server allocated.
 */
export function asTemplate(obj: KubeObject, type: ResourceType): Workload {
  const {
    uid: _uid,
    resourceVersion: _rv,
    creationTimestamp: _created,
    managedFields: _managed,
    ownerReferences: _owners,
    generation: _generation,
    ...metadata
  } = obj.metadata as Record<string, unknown>;
  const spec = structuredClone((obj as { spec?: Record<string, unknown> }).spec);
  if (type === Resources.KubeService && spec) {
    delete spec.clusterIP;
    delete spec.clusterIPs;
  }
  return { type, obj: { apiVersion: apiVersionOf(type), kind: type.kind, metadata, ...(spec ? { spec } : {}) } };
}

/**
 * The templates as one copy: `from` replaced by `to` wherever it appears (names, labels, selectors) and every uid
 * (the Revision's and its parents' in labels and selectors) by a new one, the same new one across the copy's objects.
 */
export function instantiate(templates: readonly Workload[], from: string, to: string, newUid: () => string = randomUUID): Workload[] {
  const uids = new Map<string, string>();
  const uidFor = (uid: string) => uids.get(uid) ?? uids.set(uid, newUid()).get(uid)!;
  return templates.map(({ type, obj }) => ({ type, obj: JSON.parse(JSON.stringify(obj).replaceAll(from, to).replace(UID, uidFor)) as KubeObject }));
}
