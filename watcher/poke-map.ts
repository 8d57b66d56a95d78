// Which entity workflows an event on an object must poke: the inverse of each workflow's "reads" (docs/architecture.md),
// each resolved to the workflow that reconciles the object concerned (ADR 0005: a Service's pass reconciles its
// Configuration and Route, a Route's pass its KIngress). Pure, so it is unit-tested without a cluster.
import { Resources, SERVING_GROUP } from '../api/kinds.js';
import { Annotations, Labels } from '../api/labels.js';
import { controllerOf, type KubeObject, type ObjectKey } from '../api/meta.js';
import type { EntityKind } from '../api/entity.js';
import { reconciledByOwner, reconcilingOwner } from '../api/delegation.js';

/**
 * Kinds the watcher follows. `Deployment`, `HorizontalPodAutoscaler`, `PodDisruptionBudget`, `Pod` and
 * `RevisionService` (Kubernetes Services labelled `serving.knative.dev/revision`) are the objects Tidal owns for
 * Revisions; `KubeService` the placeholder Services of Routes (Kubernetes Services labelled `serving.knative.dev/route`);
 * `VirtualService` the Istio VirtualServices of KIngresses (labelled `networking.internal.knative.dev/ingress`);
 * `Certificate` the Knative Certificates of Routes and DomainMappings (external-domain-tls); `CertManagerCertificate`
 * cert-manager's Certificates made for them (labelled `networking.knative.dev/certificate-type`, as theirs).
 */
export type WatchedKind =
  | 'Service'
  | 'Configuration'
  | 'Revision'
  | 'Route'
  | 'Ingress'
  | 'Deployment'
  | 'HorizontalPodAutoscaler'
  | 'PodDisruptionBudget'
  | 'Pod'
  | 'KubeService'
  | 'RevisionService'
  | 'VirtualService'
  | 'DomainMapping'
  | 'ClusterDomainClaim'
  | 'Certificate'
  | 'CertManagerCertificate';

export interface PokeTarget {
  kind: EntityKind;
  key: ObjectKey;
}

/** The controlling owner of `obj` when it is an object of `kind` in `group` (serving.knative.dev unless given). */
function controllingOwner(obj: KubeObject, kind: EntityKind, group = SERVING_GROUP): PokeTarget | undefined {
  const ref = controllerOf(obj);
  if (!ref || ref.kind !== kind || !ref.apiVersion.startsWith(`${group}/`)) return undefined;
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

/** What the watcher's caches know: the object of an entity kind by key, if listed (metadata and owners suffice). */
export type EntityLookup = (kind: EntityKind, key: ObjectKey) => KubeObject | undefined;

/**
 * The workflow that reconciles `target` (ADR 0005): the target's own, or — for a Configuration or Route controlled by
 * a Service, a KIngress controlled by a Route — its owner's, followed up the chain. `cause` is the object whose event
 * this is: when the caches do not know the target yet (its own event has not arrived), the
 * `serving.knative.dev/service` label Tidal puts on everything it makes for a Service names that Service, provided
 * such a Service is known; otherwise the target's own workflow is poked, and that run ends itself if its object turns
 * out to be its owner's (workflows/delegation.ts). Never guessing nothing: a poke dropped here could be lost for good,
 * as the target's own event later carries content the owner's pass has already seen.
 */
export function reconcilerOf(target: PokeTarget, cause: KubeObject, lookup: EntityLookup, enabled: ReadonlySet<EntityKind>): PokeTarget {
  if (!reconciledByOwner[target.kind]) return target;
  const obj = lookup(target.kind, target.key);
  let owner: PokeTarget | undefined;
  if (obj) {
    const ref = reconcilingOwner(target.kind, obj);
    owner = ref ? reconcilerOf(ref, cause, lookup, enabled) : undefined;
  } else {
    const service = cause.metadata.labels?.[Labels.service];
    const key = { namespace: target.key.namespace, name: service ?? '' };
    if (service && lookup('Service', key)) owner = { kind: 'Service', key };
  }
  return owner && enabled.has(owner.kind) ? owner : target;
}

const noLookup: EntityLookup = () => undefined;

/**
 * The workflows to poke for a change of `obj` (of watched kind `kind`), limited to the kinds in `enabled`
 * (the entity workflows this build runs), each resolved to the workflow that reconciles it, without duplicates.
 * `routes` adds the Routes whose traffic names the object (the watcher's Route index); `mappings` the DomainMappings
 * that reference it, or that map a ClusterDomainClaim's name (the watcher's DomainMapping index).
 */
export function pokeTargets(
  kind: WatchedKind,
  obj: KubeObject,
  enabled: ReadonlySet<EntityKind>,
  lookup: EntityLookup = noLookup,
  routes: readonly string[] = [],
  mappings: readonly ObjectKey[] = [],
): PokeTarget[] {
  const out: (PokeTarget | undefined)[] = [];
  const ns = obj.metadata.namespace ?? '';
  switch (kind) {
    case 'Service':
      out.push(self('Service', obj));
      break;
    // The controlling owner too: while the child lives both resolve to the owner, but a child being deleted is
    // finalized by its own workflow and its owner must hear of it (to create it again).
    case 'Configuration':
      out.push(self('Configuration', obj), controllingOwner(obj, 'Service'), ...routesOf(obj));
      break;
    case 'Revision':
      out.push(self('Revision', obj), controllingOwner(obj, 'Configuration'), ...routesOf(obj));
      break;
    case 'Route':
      out.push(self('Route', obj), controllingOwner(obj, 'Service'));
      break;
    case 'Ingress':
      out.push(self('Ingress', obj), controllingOwner(obj, 'Route'), controllingOwner(obj, 'DomainMapping'));
      break;
    case 'DomainMapping':
      out.push(self('DomainMapping', obj));
      break;
    case 'ClusterDomainClaim':
      // Cluster-scoped: the mappings of its name come from the index (`mappings`).
      break;
    case 'Deployment':
    case 'HorizontalPodAutoscaler':
    case 'PodDisruptionBudget':
    case 'RevisionService':
      out.push(controllingOwner(obj, 'Revision'));
      break;
    case 'KubeService':
      out.push(controllingOwner(obj, 'Route'));
      break;
    case 'VirtualService':
      // Programmed from its KIngress, by the pass that reconciles the KIngress (a Route's or a DomainMapping's).
      out.push(controllingOwner(obj, 'Ingress', Resources.KIngress.group));
      break;
    case 'Certificate':
      // Its readiness (and a renewal's notAfter) decides its owner's spec.tls, URL scheme and CertificateProvisioned.
      out.push(controllingOwner(obj, 'Route'), controllingOwner(obj, 'DomainMapping'));
      break;
    case 'CertManagerCertificate': {
      // It carries its Knative Certificate's labels: the Route's name, or the DomainMapping's (upstream's label key).
      const route = obj.metadata.labels?.[Labels.route];
      const mapping = obj.metadata.labels?.['serving.knative.dev/domainMappingUID'];
      if (route) out.push({ kind: 'Route', key: { namespace: ns, name: route } });
      if (mapping) out.push({ kind: 'DomainMapping', key: { namespace: ns, name: mapping } });
      break;
    }
    case 'Pod': {
      const rev = obj.metadata.labels?.[Labels.revision];
      if (rev) out.push({ kind: 'Revision', key: { namespace: ns, name: rev } });
      break;
    }
  }
  for (const name of routes) out.push({ kind: 'Route', key: { namespace: ns, name } });
  for (const key of mappings) out.push({ kind: 'DomainMapping', key });
  // The object's own owner chain is in its metadata; only the targets further up need the caches.
  const own: EntityLookup = (k, key) => (k === kind && key.namespace === ns && key.name === obj.metadata.name ? obj : lookup(k, key));
  const seen = new Set<string>();
  const targets: PokeTarget[] = [];
  for (const t of out) {
    if (t === undefined || t.key.name === '' || !enabled.has(t.kind)) continue;
    const r = reconcilerOf(t, obj, own, enabled);
    const id = `${r.kind}/${r.key.namespace}/${r.key.name}`;
    if (seen.has(id)) continue;
    seen.add(id);
    targets.push(r);
  }
  return targets;
}
