// KIngress status transitions (knative/networking pkg/apis/networking/v1alpha1/ingress_lifecycle.go), as
// net-istio drives them (its readiness prober).
// Every function mutates the status it is given; `now` is an RFC3339 timestamp.
import { ConditionReady, conditionSet } from '../conditions.js';
import type { Ingress, IngressStatus, LoadBalancerIngressStatus, LoadBalancerStatus } from '../networking.js';

export const IngressConditionReady = ConditionReady;
/** The underlying network programming (e.g. VirtualServices) is in place. */
export const IngressConditionNetworkConfigured = 'NetworkConfigured';
/** The Ingress has a ready load balancer (probed). */
export const IngressConditionLoadBalancerReady = 'LoadBalancerReady';

/** Ready = NetworkConfigured ∧ LoadBalancerReady. */
export const ingressConditionSet = conditionSet(IngressConditionReady, IngressConditionNetworkConfigured, IngressConditionLoadBalancerReady);

export function initializeIngressConditions(status: IngressStatus, now: string): void {
  ingressConditionSet.initialize(status, now);
}

/** The status says Ready (upstream `IngressStatus.IsReady`, which ignores the generation). */
export function isIngressStatusReady(status: IngressStatus | undefined): boolean {
  return ingressConditionSet.isHappy(status);
}

/** Ready is True and the status is of the current generation (upstream `Ingress.IsReady`). */
export function isIngressReady(ingress: Pick<Ingress, 'metadata' | 'status'>): boolean {
  return (ingress.status?.observedGeneration ?? 0) === (ingress.metadata.generation ?? 0) && isIngressStatusReady(ingress.status);
}

/** Ready is False and the status is of the current generation. */
export function isIngressFailed(ingress: Pick<Ingress, 'metadata' | 'status'>): boolean {
  return (
    (ingress.status?.observedGeneration ?? 0) === (ingress.metadata.generation ?? 0) &&
    ingressConditionSet.get(ingress.status, IngressConditionReady)?.status === 'False'
  );
}

export function markNetworkConfigured(status: IngressStatus, now: string): void {
  ingressConditionSet.markTrue(status, IngressConditionNetworkConfigured, now);
}

/** A resource of that kind and name exists but is not ours: NetworkConfigured False `NotOwned`. */
export function markIngressResourceNotOwned(status: IngressStatus, kind: string, name: string, now: string): void {
  ingressConditionSet.markFalse(
    status,
    IngressConditionNetworkConfigured,
    'NotOwned',
    `There is an existing ${kind} ${JSON.stringify(name)} that we do not own.`,
    now,
  );
}

function lbStatus(lbs: readonly LoadBalancerIngressStatus[]): LoadBalancerStatus {
  // Go: LoadBalancerStatus{Ingress: lbs} with `omitempty` — an empty list is not written.
  return lbs.length ? { ingress: lbs.map((lb) => ({ ...lb })) } : {};
}

/** Records both load balancers (replacing what was there) and marks LoadBalancerReady True. */
export function markLoadBalancerReady(
  status: IngressStatus,
  publicLbs: readonly LoadBalancerIngressStatus[],
  privateLbs: readonly LoadBalancerIngressStatus[],
  now: string,
): void {
  status.publicLoadBalancer = lbStatus(publicLbs);
  status.privateLoadBalancer = lbStatus(privateLbs);
  ingressConditionSet.markTrue(status, IngressConditionLoadBalancerReady, now);
}

/** LoadBalancerReady Unknown `Uninitialized` "Waiting for load balancer to be ready". */
export function markLoadBalancerNotReady(status: IngressStatus, now: string): void {
  ingressConditionSet.markUnknown(status, IngressConditionLoadBalancerReady, 'Uninitialized', 'Waiting for load balancer to be ready', now);
}

/** LoadBalancerReady False with the caller's reason (net-istio: `ReconcileVirtualServiceFailed`). */
export function markLoadBalancerFailed(status: IngressStatus, reason: string, message: string, now: string): void {
  ingressConditionSet.markFalse(status, IngressConditionLoadBalancerReady, reason, message, now);
}

/** Ready Unknown with the caller's reason (net-istio: `ReconcileIngressFailed`). */
export function markIngressNotReady(status: IngressStatus, reason: string, message: string, now: string): void {
  ingressConditionSet.markUnknown(status, IngressConditionReady, reason, message, now);
}
