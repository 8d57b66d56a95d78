// A Route's placeholder Services (upstream `reconcilePlaceholderServices` + `updatePlaceholderServices`):
// one per traffic name, an ExternalName at the name's domain until the KIngress reports its load balancer, then at
// that load balancer (a headless Service with its own Endpoints when the load balancer has an IP). Those of names the
// Route no longer has are deleted; a name held by an object the Route does not control fails the pass (NotOwned).
import type { NetworkConfig } from '../api/config/network.js';
import { Resources, type ResourceType } from '../api/kinds.js';
import { isControlledBy, type KubeObject } from '../api/meta.js';
import { IstioIngressClassName, isIstioIngress, type Ingress } from '../api/networking.js';
import type { Route } from '../api/serving.js';
import {
  makeLoadBalancedPlaceholder,
  makePlaceholderService,
  orphanedPlaceholders,
  placeholderServiceName,
  placeholderUpdate,
  withLiveMetadata,
  type PlaceholderEndpoints,
  type PlaceholderService,
} from '../resources/placeholder-service.js';
import { applyIfChanged, eachConcurrently, needsApply, settleAll, type ApplyAction } from './apply.js';
import type { RoutePass } from './route-pass.js';
import type { RouteHosts } from './route-traffic.js';

/** core/v1 Endpoints: the manually managed Endpoints of a headless placeholder (load balancer with an IP). */
const EndpointsType: ResourceType = { group: '', version: 'v1', kind: 'Endpoints', plural: 'endpoints', namespaced: true };

/** What the placeholder step did: the names it created, updated or deleted, or the name it found not ours. */
export interface PlaceholderOutcome {
  created: string[];
  updated: string[];
  deleted: string[];
  /** A Service (or Endpoints) with a placeholder's name that the Route does not control (IngressReady NotOwned). */
  notOwned?: { kind: 'Service' | 'Endpoints'; name: string };
}

/** A placeholder Service as the API server returns it. */
export type LiveService = KubeObject & { spec?: { type?: string; clusterIP?: string } };

/** What a placeholder name holds: its Service, and its Endpoints once read (`null`: read, none there). */
interface LivePlaceholder {
  service: LiveService | undefined;
  endpoints?: KubeObject | null;
}

/** One traffic name's placeholder: the desired Service and, for a load balancer with an IP, its Endpoints. */
interface DesiredPlaceholder {
  name: string;
  service: PlaceholderService;
  endpoints?: PlaceholderEndpoints | undefined;
}

/**
 * Whether the placeholders are written once, at the load balancer, after the KIngress rather than before it (ADR
 * 0011): a KIngress of Tidal's class with readiness probing off is programmed in this step and Ready at once, and
 * nothing foreign can hold it back when every placeholder name is free or already this Route's placeholder without a
 * cluster IP.
 */
export function placeholdersWrittenOnce(
  route: Route,
  ingressClass: string,
  probing: NetworkConfig['ingressReadinessProbing'],
  ingress: Ingress | undefined,
  services: readonly (LiveService | undefined)[],
): boolean {
  const uid = route.metadata.uid;
  return (
    ingressClass === IstioIngressClassName &&
    probing !== 'enabled' &&
    (ingress === undefined || (isControlledBy(ingress, uid) && isIstioIngress(ingress))) &&
    services.every((svc) => svc === undefined || (isControlledBy(svc, uid) && svc.spec?.clusterIP !== 'None'))
  );
}

/** One placeholder name: its Service, then its Endpoints; `h` is updated with what the name holds afterwards. */
async function applyPlaceholder(pass: RoutePass, want: DesiredPlaceholder, h: LivePlaceholder): Promise<ApplyAction> {
  const { kube } = pass.deps;
  const { route } = pass;
  const ns = route.metadata.namespace ?? '';
  let action: ApplyAction;
  const service = withLiveMetadata(h.service, want.service);
  if (h.service && placeholderUpdate(h.service, service) === 'recreate' && needsApply(h.service, service)) {
    await kube.delete(Resources.KubeService, ns, want.name);
    h.service = (await applyIfChanged(kube, Resources.KubeService, undefined, want.service)).obj;
    action = 'updated';
  } else {
    const applied = await applyIfChanged(kube, Resources.KubeService, h.service, service);
    h.service = applied.obj;
    action = applied.action;
    if (action === 'created') pass.record(route, 'Normal', 'Created', `Created placeholder service "${want.name}"`);
  }
  if (want.endpoints) {
    h.endpoints = (await applyIfChanged(kube, EndpointsType, h.endpoints ?? undefined, want.endpoints)).obj;
  } else if (h.endpoints) {
    await kube.delete(EndpointsType, ns, want.name);
    h.endpoints = null;
  }
  return action;
}

/**
 * Each desired placeholder is created, or updated when Tidal's last apply differs or the live one was edited
 * (re-created where the API server refuses a type or cluster IP change); a live one the Route does not control ends
 * the round (NotOwned) — the names before it are still reconciled, as when they went one by one. A load balancer with
 * an IP also gets the Endpoints object, removed again when it no longer has one. Given the Services labelled with the
 * Route, those it controls that no traffic name needs any more are deleted, with their Endpoints. Names are reconciled
 * side by side; `live` holds what each name held as read and is updated with what was applied, so a second round
 * (the load balancer moved) reads nothing again.
 */
async function reconcilePlaceholders(
  pass: RoutePass,
  desired: DesiredPlaceholder[],
  live: Map<string, LivePlaceholder>,
  labelled?: KubeObject[],
): Promise<PlaceholderOutcome> {
  const { kube } = pass.deps;
  const ns = pass.route.metadata.namespace ?? '';
  const uid = pass.route.metadata.uid;
  const held = (name: string): LivePlaceholder => {
    const h = live.get(name) ?? { service: undefined };
    live.set(name, h);
    return h;
  };
  // Endpoints matter only for a headless placeholder, wanted now or left from before.
  await Promise.all(
    desired.map(async (want) => {
      const h = held(want.name);
      if (h.endpoints === undefined && (want.endpoints || h.service?.spec?.clusterIP === 'None')) {
        h.endpoints = (await kube.get<KubeObject>(EndpointsType, ns, want.name)) ?? null;
      }
    }),
  );
  const notOwnedAt = (want: DesiredPlaceholder): PlaceholderOutcome['notOwned'] => {
    const h = held(want.name);
    if (h.service && !isControlledBy(h.service, uid)) return { kind: 'Service', name: want.name };
    if (h.endpoints && !isControlledBy(h.endpoints, uid)) return { kind: 'Endpoints', name: want.name };
    return undefined;
  };
  const firstHeld = desired.findIndex((want) => notOwnedAt(want) !== undefined);
  const notOwned = firstHeld < 0 ? undefined : notOwnedAt(desired[firstHeld]!);
  const owned = firstHeld < 0 ? desired : desired.slice(0, firstHeld);
  const actions = await settleAll(owned.map((want) => applyPlaceholder(pass, want, held(want.name))));
  const out: PlaceholderOutcome = {
    created: owned.filter((_, i) => actions[i] === 'created').map((w) => w.name),
    updated: owned.filter((_, i) => actions[i] === 'updated').map((w) => w.name),
    deleted: [],
  };
  if (notOwned) return { ...out, notOwned };
  if (labelled) {
    out.deleted = orphanedPlaceholders(labelled, uid, new Set(desired.map((d) => d.name)));
    await eachConcurrently(out.deleted, async (name) => {
      await kube.delete(Resources.KubeService, ns, name);
      const ep = await kube.get<KubeObject>(EndpointsType, ns, name);
      if (ep && isControlledBy(ep, uid)) await kube.delete(EndpointsType, ns, name);
    });
  }
  return out;
}

function mergeOutcomes(a: PlaceholderOutcome | undefined, b: PlaceholderOutcome): PlaceholderOutcome {
  if (!a) return b;
  const union = (x: string[], y: string[]) => [...new Set([...x, ...y])];
  return { ...a, created: union(a.created, b.created), updated: union(a.updated, b.updated), deleted: union(a.deleted, b.deleted) };
}

/** "created a, b; deleted c" for the pass summary, or '' when the placeholders were already right. */
export function describePlaceholders(p: PlaceholderOutcome): string {
  const parts: string[] = [];
  if (p.created.length) parts.push(`created ${p.created.join(', ')}`);
  if (p.updated.length) parts.push(`updated ${p.updated.join(', ')}`);
  if (p.deleted.length) parts.push(`deleted ${p.deleted.join(', ')}`);
  return parts.join('; ');
}

/** The placeholders of one pass (`routePlaceholders`): at most two rounds, before and after the KIngress. */
export interface RoutePlaceholders {
  /** The round before the KIngress, as upstream: each name at its domain, or at the load balancer `ingress` reports. */
  first(ingress: Ingress | undefined): Promise<PlaceholderOutcome>;
  /** The round at the load balancer `ingress` reports, started once a pass (a write beside the rest). */
  pointAt(ingress: Ingress): Promise<PlaceholderOutcome>;
  /** The round at the load balancer, once started. */
  readonly moving: Promise<PlaceholderOutcome> | undefined;
  /** Counts what the round at the load balancer did in the outcome. */
  moved(again: PlaceholderOutcome): void;
  /** What the rounds did; undefined when none ran. */
  readonly outcome: PlaceholderOutcome | undefined;
}

/**
 * The placeholders of the pass's traffic names, given what each name and the Route's label held as read
 * (`services`, in the order of `hosts.names`; `labelled`). `once`: written only at the load balancer (then that round
 * deletes the orphans), else first at their domains (which round deletes them).
 */
export function routePlaceholders(
  pass: RoutePass,
  hosts: RouteHosts,
  services: readonly (LiveService | undefined)[],
  labelled: KubeObject[],
  once: boolean,
): RoutePlaceholders {
  const { route, key } = pass;
  const live = new Map<string, LivePlaceholder>(hosts.names.map((name, i) => [placeholderServiceName(key.name, name), { service: services[i] }]));
  const desired = (ingress: Ingress | undefined): DesiredPlaceholder[] =>
    hosts.names.map((name) => {
      const svcName = placeholderServiceName(key.name, name);
      // Once the Ingress reports its load balancer, the placeholder points at it.
      const balanced = ingress?.status ? makeLoadBalancedPlaceholder(route, name, ingress, hosts.clusterLocal) : undefined;
      if (balanced?.ok) return { name: svcName, service: balanced.service, endpoints: balanced.endpoints };
      return { name: svcName, service: makePlaceholderService(route, name, hosts.domains[name] ?? '') };
    });
  let outcome: PlaceholderOutcome | undefined;
  let moving: Promise<PlaceholderOutcome> | undefined;
  return {
    async first(ingress) {
      return (outcome = await reconcilePlaceholders(pass, desired(ingress), live, labelled));
    },
    pointAt(ingress) {
      return (moving ??= pass.track(reconcilePlaceholders(pass, desired(ingress), live, once ? labelled : undefined)));
    },
    get moving() {
      return moving;
    },
    moved(again) {
      outcome = mergeOutcomes(outcome, again);
    },
    get outcome() {
      return outcome;
    },
  };
}
