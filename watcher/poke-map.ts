// Which entity workflows an event on an object must poke: the inverse of each workflow's "reads" (design.md §4).
// Pure, so it is unit-tested without a cluster.
import { SERVING_GROUP } from '../api/kinds.js';
import { Annotations, Labels } from '../api/labels.js';
import { controllerOf, type KubeObject, type ObjectKey } from '../api/meta.js';
import type { EntityKind } from '../api/entity.js';

/**
 * Kinds the watcher follows. `Deployment` and `Pod` are the objects Tidal owns for Revisions; `KubeService` the
 * placeholder Services of Routes (Kubernetes Services labelled `serving.knative.dev/route`).
 */
export type WatchedKind = 'Service' | 'Configuration' | 'Revision' | 'Route' | 'Ingress' | 'Deployment' | 'Pod' | 'KubeService';

export interface PokeTarget {
  kind: EntityKind;
  key: ObjectKey;
}

/** The controlling owner of `obj` when it is a serving.knative.dev object of `kind`. */
function servingOwner(obj: KubeObject, kind: EntityKind): PokeTarget | undefined {
  const ref = controllerOf(obj);
  if (!ref || ref.kind !== kind || !ref.apiVersion.startsWith(`${SERVING_GROUP}/`)) return undefined;
  return { kind, key: { namespace: obj.metadata.namespace ?? '', name: ref.name } };
}

/** The Routes that carry this Configuration or Revision (the `serving.knative.dev/routes` annotation). */
function routesOf(obj: KubeObject): PokeTarget[] {
  const routes = obj.metadata.annotations?.[Annotations.routes] ?? '';
  return routes
    .split(',')
    .map((r) => r.trim())
    .filter((r) => r !== '')
    .map((name) => ({ kind: 'Route' as const, key: { namespace: obj.metadata.namespace ?? '', name } }));
}

function self(kind: EntityKind, obj: KubeObject): PokeTarget {
  return { kind, key: { namespace: obj.metadata.namespace ?? '', name: obj.metadata.name ?? '' } };
}

/**
 * The workflows to poke for a change of `obj` (of watched kind `kind`), limited to the kinds in `enabled`
 * (the entity workflows this build runs).
 */
export function pokeTargets(kind: WatchedKind, obj: KubeObject, enabled: ReadonlySet<EntityKind>): PokeTarget[] {
  const out: (PokeTarget | undefined)[] = [];
  switch (kind) {
    case 'Service':
      out.push(self('Service', obj));
      break;
    case 'Configuration':
      out.push(self('Configuration', obj), servingOwner(obj, 'Service'), ...routesOf(obj));
      break;
    case 'Revision':
      out.push(self('Revision', obj), servingOwner(obj, 'Configuration'), ...routesOf(obj));
      break;
    case 'Route':
      out.push(self('Route', obj), servingOwner(obj, 'Service'));
      break;
    case 'Ingress':
      out.push(self('Ingress', obj), servingOwner(obj, 'Route'));
      break;
    case 'Deployment':
      out.push(servingOwner(obj, 'Revision'));
      break;
    case 'KubeService':
      out.push(servingOwner(obj, 'Route'));
      break;
    case 'Pod': {
      const rev = obj.metadata.labels?.[Labels.revision];
      if (rev) out.push({ kind: 'Revision', key: { namespace: obj.metadata.namespace ?? '', name: rev } });
      break;
    }
  }
  return out.filter((t): t is PokeTarget => t !== undefined && t.key.name !== '' && enabled.has(t.kind));
}
