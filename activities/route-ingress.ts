// The Route's KIngress (upstream `reconcileIngress`): what programming reads of the Route's children,
// then the KIngress applied with the rollout's split and, when it is of Tidal's class, programmed in the same step
// (activities/ingress.ts `programIngress`, ADR 0005) — the placeholders, and when nothing waits on its readiness the
// Route's status, beside its writes (ADR 0011). Its readiness and load balancer come back into the Route's status and
// placeholders.
import { Resources } from '../api/kinds.js';
import { Labels } from '../api/labels.js';
import { markIngressRolloutInProgress, markIngressRolloutPaused, propagateIngressStatus } from '../api/lifecycle/route.js';
import { isIngressReady } from '../api/lifecycle/ingress.js';
import { isControlledBy, type KubeObject, type ObjectKey } from '../api/meta.js';
import { IstioIngressClassName, isIstioIngress, type HTTPOption, type Ingress } from '../api/networking.js';
import { makeIngress, type IngressOptions, type TrafficHosts } from '../resources/ingress.js';
import { placeholderServiceName } from '../resources/placeholder-service.js';
import type { Rollout, RolloutPlan } from '../resources/rollout.js';
import type { TrafficConfig } from '../resources/traffic.js';
import { applyIfChanged, ownedWhole, type ApplyAction } from './apply.js';
import type { ActivityDeps } from './deps.js';
import { programIngress, readVirtualServices, type BesideIngress } from './ingress.js';
import type { RoutePass } from './route-pass.js';
import type { LiveService, RoutePlaceholders } from './route-placeholders.js';
import { observeReadyStep, type RouteRollout } from './route-rollout.js';
import type { RouteStatusWrite } from './route-status.js';
import { listOwnWrites, type WrittenVersions } from './written.js';

/** What the pass did to its KIngress: applied (or found right), found held by another owner, or nothing. */
export type IngressAction = ApplyAction | 'notOwned' | 'none';

/** What programming reads of the Route's children by their names alone (`readChildren`), each read started. */
export interface ChildReads {
  ingress: Promise<Ingress | undefined>;
  virtualServices: Promise<Map<string, KubeObject | undefined>> | undefined;
  placeholder: Promise<LiveService | undefined>;
  labelled: Promise<KubeObject[]>;
}

/**
 * Starts the reads of the Route's KIngress, the KIngress's VirtualServices when `ingressClass` is Tidal's, its
 * default placeholder (every traffic target is in the default name) and the Services labelled with it. A Service's
 * status pass starts them beside the Route's own read, with the configured class.
 */
export function readChildren(deps: ActivityDeps, key: ObjectKey, wrote: WrittenVersions, ingressClass: string): ChildReads {
  const { kube } = deps;
  const reads = {
    ingress: kube.get<Ingress>(Resources.KIngress, key.namespace, key.name),
    virtualServices: ingressClass === IstioIngressClassName ? readVirtualServices(kube, key.namespace, key.name) : undefined,
    placeholder: kube.get<LiveService>(Resources.KubeService, key.namespace, placeholderServiceName(key.name, '')),
    labelled: listOwnWrites<KubeObject>(deps, 'Service', key.namespace, { [Labels.route]: key.name }, wrote).then((l) => l.items),
  };
  // Awaited only by a pass that programs; the catch keeps a failure from counting as unhandled before that.
  for (const read of Object.values(reads)) void read?.catch(() => undefined);
  return reads;
}

/** The Route's children as programming finds them: the KIngress, each name's placeholder, the labelled Services, the VirtualServices. */
export type ChildrenRead = [Children['ingress'], Children['services'], Children['labelled'], Children['virtualServices']];

/** The Route's children as programming finds them. */
export interface Children {
  ingress: Ingress | undefined;
  /** What each traffic name's placeholder name holds, in the order of `names`. */
  services: (LiveService | undefined)[];
  /** The Services labelled with the Route (the orphaned placeholders are among them). */
  labelled: KubeObject[];
  /** The KIngress's VirtualServices, for a KIngress of Tidal's class. */
  virtualServices: Map<string, KubeObject | undefined> | undefined;
}

/**
 * What programming reads, in one round (in a Service's status pass, most of it read beside the Route already): the
 * KIngress, each traffic name's placeholder, the Services labelled with the Route and, for a KIngress of Tidal's
 * class, its VirtualServices (read early under the configured class, which the Route's annotation may override).
 */
export function readForProgramming(pass: RoutePass, names: string[], ingressClass: string, early?: ChildReads): Promise<ChildrenRead> {
  const { deps, key, wrote } = pass;
  const { kube } = deps;
  const reads = early ?? readChildren(deps, key, wrote, ingressClass);
  return Promise.all([
    reads.ingress,
    Promise.all(
      names.map((name) =>
        name === '' ? reads.placeholder : kube.get<LiveService>(Resources.KubeService, key.namespace, placeholderServiceName(key.name, name)),
      ),
    ),
    reads.labelled,
    ingressClass === IstioIngressClassName ? (reads.virtualServices ?? readVirtualServices(kube, key.namespace, key.name)) : undefined,
  ]);
}

/** config-network `http-protocol` as the KIngress's httpOption (the Route's own annotation wins in makeIngress). */
export function httpOptionOf(httpProtocol: 'enabled' | 'redirected' | 'disabled'): HTTPOption {
  return httpProtocol === 'redirected' ? 'Redirected' : 'Enabled';
}

/** Both report the same load balancer (or neither reports one). */
function sameLoadBalancer(a: Ingress | undefined, b: Ingress): boolean {
  return (
    JSON.stringify(a?.status?.publicLoadBalancer ?? null) === JSON.stringify(b.status?.publicLoadBalancer ?? null) &&
    JSON.stringify(a?.status?.privateLoadBalancer ?? null) === JSON.stringify(b.status?.privateLoadBalancer ?? null)
  );
}

/** The KIngress wanted for the pass's traffic. */
export interface DesiredIngress {
  traffic: Pick<TrafficConfig, 'targets' | 'revisions'>;
  hosts: Readonly<Record<string, TrafficHosts>>;
  ingressClass: string;
  options: Omit<IngressOptions, 'rollout'>;
}

/** The KIngress as the pass left it. */
export interface RouteIngress {
  action: IngressAction;
  /** The KIngress's resourceVersion after a write of this pass. */
  resourceVersion?: string;
  /** The rollout as programmed (its 1 % step observed ready when it became so within the pass). */
  plan: RolloutPlan;
}

/**
 * Applies the Route's KIngress (not one someone else controls: `notOwned`) with the rollout's split and, of Tidal's
 * class, programs it; then mirrors its readiness into the Route's status (upstream does not while a rollout is in
 * progress) and points the placeholders at the load balancer it reports. When nothing waits on the KIngress's
 * readiness (`once`: Tidal's class without a probe, placeholders written once; no rollout under way), the
 * placeholders go beside its VirtualServices and the Route's status beside its status, from the status about to be
 * written: the Route Ready with its KIngress, one round trip sooner.
 */
export async function reconcileRouteIngress(
  pass: RoutePass,
  want: DesiredIngress,
  existing: Children,
  rollout: RouteRollout,
  on: { once: boolean; placeholders: RoutePlaceholders; statusWrite: RouteStatusWrite; clock: () => number },
): Promise<RouteIngress> {
  const { deps, route, status, now } = pass;
  const { once, placeholders, statusWrite } = on;
  const desired = (r: Rollout) => makeIngress(route, want.traffic, want.hosts, want.ingressClass, { ...want.options, rollout: r });
  let plan = rollout.plan;
  const current = existing.ingress;
  if (current && !isControlledBy(current, route.metadata.uid)) return { action: 'notOwned', plan };
  const applied = await applyIfChanged(deps.kube, Resources.KIngress, current, desired(plan.rollout), ownedWhole());
  let resourceVersion = applied.action !== 'unchanged' ? applied.obj.metadata.resourceVersion : undefined;
  if (applied.action === 'created') pass.record(route, 'Normal', 'Created', `Created Ingress "${pass.key.name}"`);
  let ingress = applied.obj;
  const beside: BesideIngress =
    once && !plan.inProgress
      ? {
          virtualServices: (ready) => placeholders.pointAt(ready),
          status: (ready) => {
            propagateIngressStatus(status, ready, now);
            return statusWrite.write(placeholders);
          },
        }
      : { status: (ready) => (once || !sameLoadBalancer(current, ready) ? placeholders.pointAt(ready) : undefined) };
  // A KIngress of Tidal's class is programmed here, in the same step, instead of by a workflow of its own (ADR 0005):
  // the Route sees it Ready without another round trip.
  if (isIstioIngress(ingress)) ingress = (await programIngress(deps, ingress, existing.virtualServices, beside)).ingress;
  const observed = plan.inProgress && isIstioIngress(ingress) && isIngressReady(ingress) ? observeReadyStep(rollout, plan, on.clock) : undefined;
  if (observed) {
    const again = await applyIfChanged(deps.kube, Resources.KIngress, ingress, desired(observed.rollout), ownedWhole());
    resourceVersion = again.obj.metadata.resourceVersion;
    // Only the annotation moves unless a step fell due meanwhile: then the new split is programmed too.
    ingress =
      (again.obj.metadata.generation ?? 0) === (ingress.metadata.generation ?? 0)
        ? { ...again.obj, status: ingress.status }
        : (await programIngress(deps, again.obj)).ingress;
    plan = observed;
  }
  if (!statusWrite.started) propagateIngressStatus(status, ingress, now);
  if (plan.inProgress) (plan.paused ? markIngressRolloutPaused : markIngressRolloutInProgress)(status, now);
  // The load balancer it reports now moves the placeholders in this pass too, unless they went beside its status
  // already: from what the first round left (which deleted the orphans), or, written once, in the only round.
  if (once || !sameLoadBalancer(current, ingress)) void placeholders.pointAt(ingress);
  return { action: applied.action, ...(resourceVersion ? { resourceVersion } : {}), plan };
}
