// Activities of the Route workflow. One pass reads as upstream's `ReconcileKind`: the traffic, the
// placeholder Services, the KIngress (with its rollout and TLS), the labeler's bookkeeping, the status. Each part is a
// file of its own: route-traffic.ts, route-placeholders.ts, route-ingress.ts, route-rollout.ts, route-tls.ts,
// route-labeler.ts, route-status.ts. Children are applied through activities/apply.ts, so a field the Route no
// longer asks for leaves the child too.
import { beginReconcile, cloneJson } from '../api/conditions.js';
import { setRouteDefaults } from '../api/defaults.js';
import { Resources } from '../api/kinds.js';
import {
  markDomainNameError,
  markEndpointNotOwned,
  markIngressNotConfigured,
  markRolloutHeld,
  markServiceNotOwned,
  markTrafficAssigned,
  routeConditionSet,
  type RouteStatus,
} from '../api/lifecycle/route.js';
import type { ObjectKey } from '../api/meta.js';
import { IstioIngressClassName } from '../api/networking.js';
import type { Route } from '../api/serving.js';
import { servingReplicas } from '../resources/deployment.js';
import { domainNameErrorMessage, routeAddressURL } from '../resources/domains.js';
import { ingressClassForRoute } from '../resources/ingress.js';
import { applyRolloutToTraffic } from '../resources/rollout.js';
import { isActivationRequired } from '../api/lifecycle/revision.js';
import { awaitsPods, buildTrafficConfiguration, markBadTrafficTarget, statusTraffic } from '../resources/traffic.js';
import { recordLater } from './apply.js';
import type { SeenConfiguration } from './configuration.js';
import { nowOf, type ActivityDeps } from './deps.js';
import { certificateContext } from './knative-certificate.js';
import { httpOptionOf, readChildren, readForProgramming, reconcileRouteIngress, type IngressAction, type RouteIngress } from './route-ingress.js';
import { addRouteFinalizer, finalizeRoute, routeLabeler } from './route-labeler.js';
import type { RoutePass } from './route-pass.js';
import { describePlaceholders, placeholdersWrittenOnce, routePlaceholders, type PlaceholderOutcome } from './route-placeholders.js';
import { planRouteRollout, rolloutClock, rolloutSummary, untilStepDue, type RolloutSummary } from './route-rollout.js';
import { routeStatusWrite } from './route-status.js';
import { reconcileRouteTLS, withScheme } from './route-tls.js';
import { readReferenced, routeHosts } from './route-traffic.js';
import { statusOutcome, type StatusOutcome } from './status.js';
import { writtenSoFar, type WrittenVersions } from './written.js';

export { RouteFinalizer } from './route-labeler.js';
export type { PlaceholderOutcome } from './route-placeholders.js';
export type { RolloutSummary } from './route-rollout.js';

export type RouteOutcome =
  | { outcome: 'gone' }
  | (StatusOutcome & {
      ingress: IngressAction;
      ingressResourceVersion?: string;
      /** Placeholder Services created, updated and deleted (names), when any. */
      placeholders?: string;
      /** The domain-template / tag-template error the Route reports (ErrorConfig); nothing was programmed. */
      domainError?: string;
      /** `<Kind> <name>` of a foreign object holding a placeholder's name (only with `reportNotOwned`). */
      notOwned?: string;
      /** The newest versions this Route's passes wrote of the kinds they list, for the next pass (activities/written.ts). */
      written?: WrittenVersions;
      /** A gradual rollout this pass stepped, holds or just finished; absent when there is none. */
      rollout?: RolloutSummary;
      /**
       * Revisions held only for their `reserve` label (resources/traffic.ts `awaitsPods`), which this pass's labeler
       * makes active. That write's echo does not come back to the Route's workflow, and the Revision's status may
       * not change, so the workflow looks again shortly (`relabelRecheck`).
       */
      relabelled?: string[];
    });

/** How a Route's pass is asked for (`reconcileRoute`). */
export interface RouteOptions {
  /** A Service's pass: a placeholder name held by a foreign object is reported in the outcome, not thrown. */
  reportNotOwned?: boolean;
  /** The versions the workflow's passes wrote before (activities/written.ts). */
  written?: WrittenVersions;
  /** What the Configuration's status step beside this one hands over (activities/combined.ts). */
  seen?: Promise<SeenConfiguration | undefined>;
  /** Gets the Route with the status this pass is about to write (or found already there), just before the write. */
  toWrite?: (route: Route) => void;
}

export function createRouteActivities(deps: ActivityDeps) {
  return {
    /**
     * One Route pass: traffic → placeholder Services → KIngress → status, the labeler's marks beside the
     * programming and its clear before the status write. A placeholder name taken by a foreign object
     * fails the step after reporting it, so it is retried with backoff — unless `reportNotOwned` (a Service's pass,
     * which must go on to write the Service's status): then the outcome names it and the caller schedules the retry.
     * `seen`: what the Configuration's status step beside it hands over (activities/combined.ts), awaited before the
     * Route reads what its traffic names; `toWrite`: for the Service's status step beside it.
     */
    async reconcileRoute(key: ObjectKey, opts: RouteOptions = {}): Promise<RouteOutcome> {
      const inFlight: Promise<unknown>[] = [];
      const track = <T>(write: Promise<T>): Promise<T> => (inFlight.push(write), write);
      try {
        return await reconcileRoute(deps, key, opts, track);
      } finally {
        await Promise.allSettled(inFlight); // no write of the pass outlives its step, even one that fails
      }
    },
  };
}

/** One Route pass, in upstream's order; each write it starts beside the rest goes to `track`. */
async function reconcileRoute(deps: ActivityDeps, key: ObjectKey, opts: RouteOptions, track: RoutePass['track']): Promise<RouteOutcome> {
  const { kube, config } = deps;
  const wrote = opts.written ?? {};
  // Handed what the Configuration's part read (a Service's status pass: a Revision turned Ready, so the Route is about
  // to be programmed), the pass reads its children meanwhile; otherwise only once it knows it will program.
  const early = opts.seen ? readChildren(deps, key, wrote, config.networkConfig().ingressClass) : undefined;
  const raw = await kube.get<Route>(Resources.Route, key.namespace, key.name);
  if (!raw) return { outcome: 'gone' };
  if (raw.metadata.deletionTimestamp) {
    await finalizeRoute(deps, key, raw, wrote);
    return { outcome: 'gone' };
  }
  await addRouteFinalizer(kube, key, raw);
  const route = setRouteDefaults(raw);
  const now = nowOf(deps);
  const [net, dom] = [config.networkConfig(), config.domainConfig()];
  const reconciled = cloneJson(route);
  const before = beginReconcile(reconciled, routeConditionSet, now);
  const status = reconciled.status as RouteStatus;
  const pass: RoutePass = { deps, key, raw, route, reconciled, status, now, wrote, record: recordLater(deps.events), track };
  // A new generation is not Ready before its KIngress is programmed, whatever ends the pass early (route.go).
  if ((raw.status?.observedGeneration ?? 0) !== (raw.metadata.generation ?? 0)) markIngressNotConfigured(status, now);

  // 1. Traffic. A Revision this Route does not serve yet gets traffic only once its pods are up (a `reserve` one
  // scaled to zero comes back first: the labeler's marks make it active); until then the KIngress keeps its split.
  const referenced = await readReferenced(kube, route, await opts.seen);
  const served = new Set((raw.status?.traffic ?? []).map((t) => t.revisionName ?? ''));
  const relabelled: string[] = [];
  const { config: traffic, error } = buildTrafficConfiguration(route, referenced.configs, referenced.revs, {
    awaitsPods: (rev) => {
      const held = awaitsPods(rev, served, (r) => servingReplicas(r, config.revisionConfig()));
      if (held && !isActivationRequired(rev.status)) relabelled.push(rev.metadata.name ?? '');
      return held;
    },
  });
  const hosts = routeHosts(route, traffic, error !== undefined, net, dom);
  if (hosts.url !== undefined) status.url = hosts.url;
  const labeler = routeLabeler(pass, referenced);
  const statusWrite = routeStatusWrite(pass, before, labeler, opts.toWrite);
  if (hosts.error !== undefined || error) {
    // Knative's ErrDomainName, or a target missing or not ready: nothing is programmed; a change pokes again.
    if (hosts.error !== undefined) markDomainNameError(status, domainNameErrorMessage(hosts.error), now);
    else if (error) markBadTrafficTarget(status, error, now);
    return routeOutcome(await statusWrite.write(), reconciled, wrote, {
      ...(hosts.error !== undefined ? { domainError: hosts.error } : {}),
      ...(relabelled.length ? { relabelled } : {}),
    });
  }
  markTrafficAssigned(status, now);
  // external-domain-tls: the Route's Certificates are made (or found) first; each URL takes the scheme its
  // certificate gives, and a Ready one's Secret goes into the KIngress's spec.tls.
  const external = Object.fromEntries(hosts.names.map((name) => [name, hosts.hosts[name]?.external ?? []]));
  const certs = await reconcileRouteTLS(certificateContext(deps), { route, status, external, net, dom, now, record: pass.record });
  if (status.url) status.url = withScheme(status.url, certs.schemes);
  const tagUrls = Object.fromEntries(Object.entries(hosts.tagUrls).map(([name, u]) => [name, withScheme(u, certs.schemes)]));
  status.traffic = statusTraffic(traffic, tagUrls);
  status.address = { url: routeAddressURL(route) };
  const ingressClass = ingressClassForRoute(route, net.ingressClass);
  const { tagHeaderBasedRouting } = config.featuresConfig();
  // The labeler's targets are known now that status.traffic is; a KIngress of Tidal's class settles the Route in this
  // step, so the clear's lists go meanwhile.
  labeler.target(ingressClass === IstioIngressClassName);
  const [ingressRead, services, labelled, virtualServices] = await readForProgramming(pass, hosts.names, ingressClass, early);
  const children = { ingress: ingressRead, services, labelled, virtualServices };

  // 2. The gradual rollout. Its split names Revisions the plain traffic does not (the rollout's older
  // ones): the labeler must keep them routed, so its targets are taken again from that status.traffic.
  const clock = rolloutClock(deps);
  for (let wait = untilStepDue(children.ingress, clock); wait > 0; wait = untilStepDue(children.ingress, clock)) {
    await new Promise((resolve) => setTimeout(resolve, wait));
  }
  const rollout = planRouteRollout(route, raw, traffic, children.ingress, net, clock);
  const rolled = applyRolloutToTraffic(traffic, rollout.plan.rollout, tagUrls);
  if (JSON.stringify(rolled) !== JSON.stringify(status.traffic)) {
    status.traffic = rolled;
    labeler.target(ingressClass === IstioIngressClassName);
  }
  // 3. Labels: the targets are final, the marks go beside the programming; the clear waits for the Route to settle.
  labeler.mark();
  const hold = rollout.plan.holds[0];
  if (hold) markRolloutHeld(status, hold.reason, hold.message, now);

  // 4. Placeholders, before the KIngress as upstream — unless written once, at its load balancer (ADR 0011).
  const once = placeholdersWrittenOnce(route, ingressClass, net.ingressReadinessProbing, children.ingress, children.services);
  const placeholders = routePlaceholders(pass, hosts, children.services, children.labelled, once);
  const held = once ? undefined : (await placeholders.first(children.ingress)).notOwned;
  if (held) (held.kind === 'Service' ? markServiceNotOwned : markEndpointNotOwned)(status, held.name, now);

  // 5. The KIngress, unless something foreign holds a placeholder's name or a Certificate's.
  const ingress =
    held === undefined && certs.notOwned === undefined && certs.failed === undefined
      ? await reconcileRouteIngress(
          pass,
          {
            traffic,
            hosts: hosts.hosts,
            ingressClass,
            options: { tagHeaderBasedRouting, tls: certs.tls, httpOption: httpOptionOf(net.httpProtocol) },
          },
          children,
          rollout,
          { once, placeholders, statusWrite, clock },
        )
      : undefined;

  // 6. Status, then what the pass reports.
  const written = await statusWrite.write(placeholders);
  const programmed = ingress !== undefined && ingress.action !== 'notOwned' ? ingress : undefined;
  // Each step and control action of the rollout as an Event on the Route.
  for (const e of programmed?.plan.events ?? []) pass.record(route, e.type, e.reason, e.message);
  // As upstream, a name held by another object fails the pass after reporting it (status and one InternalError
  // Event), so it is retried with backoff until the foreign object goes: nothing pokes the Route when it changes.
  const refuse = async (kind: string, name: string): Promise<void> => {
    const message = `route "${key.name}" does not own ${kind} "${name}"`;
    await deps.events.record(route, 'Warning', 'InternalError', message);
    if (!opts.reportNotOwned) throw new Error(message);
  };
  const stolen = placeholders.outcome?.notOwned;
  if (certs.notOwned !== undefined) await refuse('Certificate', certs.notOwned);
  if (certs.failed !== undefined) throw new Error(certs.failed);
  if (stolen) await refuse(stolen.kind, stolen.name);
  return routeOutcome(written, reconciled, wrote, {
    ...(ingress ? { ingress } : {}),
    ...(placeholders.outcome ? { placeholders: placeholders.outcome } : {}),
    ...(certs.notOwned !== undefined ? { notOwned: `Certificate ${certs.notOwned}` } : stolen ? { notOwned: `${stolen.kind} ${stolen.name}` } : {}),
    ...(programmed ? { rollout: rolloutSummary(rollout.previous, programmed.plan, clock()) } : {}),
  });
}

/** What the pass reports to its workflow, once its status is written (`written`: the new resourceVersion, if any). */
function routeOutcome(
  written: string | undefined,
  reconciled: Route,
  wrote: WrittenVersions,
  parts: {
    ingress?: RouteIngress;
    placeholders?: PlaceholderOutcome;
    domainError?: string;
    notOwned?: string;
    rollout?: RolloutSummary | undefined;
    relabelled?: string[];
  },
): RouteOutcome {
  const touched = parts.placeholders ? describePlaceholders(parts.placeholders) : '';
  return {
    ...statusOutcome(written, reconciled.status),
    ingress: parts.ingress?.action ?? 'none',
    ...(parts.ingress?.resourceVersion ? { ingressResourceVersion: parts.ingress.resourceVersion } : {}),
    ...(touched ? { placeholders: touched } : {}),
    ...(parts.domainError !== undefined ? { domainError: parts.domainError } : {}),
    ...(parts.notOwned !== undefined ? { notOwned: parts.notOwned } : {}),
    written: writtenSoFar(wrote),
    ...(parts.rollout ? { rollout: parts.rollout } : {}),
    ...(parts.relabelled ? { relabelled: parts.relabelled } : {}),
  };
}
