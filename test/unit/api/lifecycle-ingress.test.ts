import { describe, expect, it } from 'vitest';
import {
  IngressConditionLoadBalancerReady,
  IngressConditionNetworkConfigured,
  ingressConditionSet,
  initializeIngressConditions,
  isIngressFailed,
  isIngressReady,
  isIngressStatusReady,
  markIngressNotReady,
  markIngressResourceNotOwned,
  markLoadBalancerFailed,
  markLoadBalancerNotReady,
  markLoadBalancerReady,
  markNetworkConfigured,
} from '../../../api/lifecycle/ingress.js';
import type { IngressStatus } from '../../../api/networking.js';

const T0 = '2025-01-01T00:00:00Z';
const T1 = '2025-01-01T00:01:00Z';
const T2 = '2025-01-01T00:02:00Z';

function fresh(): IngressStatus {
  const status: IngressStatus = {};
  initializeIngressConditions(status, T0);
  return status;
}

describe('Ingress condition set', () => {
  it('is Ready over NetworkConfigured and LoadBalancerReady', () => {
    expect(ingressConditionSet.happy).toBe('Ready');
    expect(ingressConditionSet.dependents).toEqual([IngressConditionNetworkConfigured, IngressConditionLoadBalancerReady]);
    expect(fresh()).toEqual({
      conditions: [
        { type: 'LoadBalancerReady', status: 'Unknown', lastTransitionTime: T0 },
        { type: 'NetworkConfigured', status: 'Unknown', lastTransitionTime: T0 },
        { type: 'Ready', status: 'Unknown', lastTransitionTime: T0 },
      ],
    });
  });
});

describe('Ingress transitions (net-istio flow)', () => {
  it('network configured, then the load balancer ready → Ready True with both load balancers recorded (golden)', () => {
    const status = fresh();
    markNetworkConfigured(status, T1);
    expect(isIngressStatusReady(status)).toBe(false);
    markLoadBalancerReady(
      status,
      [{ domainInternal: 'istio-ingressgateway.istio-system.svc.cluster.local' }],
      [{ domainInternal: 'knative-local-gateway.istio-system.svc.cluster.local' }],
      T2,
    );
    expect(status).toEqual({
      conditions: [
        { type: 'LoadBalancerReady', status: 'True', lastTransitionTime: T2 },
        { type: 'NetworkConfigured', status: 'True', lastTransitionTime: T1 },
        { type: 'Ready', status: 'True', lastTransitionTime: T2 },
      ],
      publicLoadBalancer: { ingress: [{ domainInternal: 'istio-ingressgateway.istio-system.svc.cluster.local' }] },
      privateLoadBalancer: { ingress: [{ domainInternal: 'knative-local-gateway.istio-system.svc.cluster.local' }] },
    });
    expect(isIngressStatusReady(status)).toBe(true);
  });

  it('an empty load balancer list is written as {} (Go omitempty)', () => {
    const status = fresh();
    markLoadBalancerReady(status, [{ meshOnly: true }], [], T1);
    expect(status.publicLoadBalancer).toEqual({ ingress: [{ meshOnly: true }] });
    expect(status.privateLoadBalancer).toEqual({});
  });

  it('waiting for the load balancer → LoadBalancerReady and Ready Unknown Uninitialized', () => {
    const status = fresh();
    markNetworkConfigured(status, T1);
    markLoadBalancerNotReady(status, T2);
    const message = 'Waiting for load balancer to be ready';
    expect(status.conditions).toEqual([
      { type: 'LoadBalancerReady', status: 'Unknown', reason: 'Uninitialized', message, lastTransitionTime: T2 },
      { type: 'NetworkConfigured', status: 'True', lastTransitionTime: T1 },
      { type: 'Ready', status: 'Unknown', reason: 'Uninitialized', message, lastTransitionTime: T2 },
    ]);
  });

  it('a VirtualService failure → LoadBalancerReady False, then Ready Unknown ReconcileIngressFailed keeps Ready False', () => {
    const status = fresh();
    markLoadBalancerFailed(status, 'ReconcileVirtualServiceFailed', 'boom', T1);
    expect(ingressConditionSet.get(status, 'Ready')).toMatchObject({ status: 'False', reason: 'ReconcileVirtualServiceFailed', message: 'boom' });
    markIngressNotReady(status, 'ReconcileIngressFailed', 'Ingress reconciliation failed', T2);
    // A failed dependent trumps Unknown (condition set semantics).
    expect(ingressConditionSet.get(status, 'Ready')?.status).toBe('False');
  });

  it('markIngressNotReady on a healthy set → Ready Unknown with that reason', () => {
    const status = fresh();
    markIngressNotReady(status, 'ReconcileIngressFailed', 'Ingress reconciliation failed', T1);
    expect(ingressConditionSet.get(status, 'Ready')).toEqual({
      type: 'Ready',
      status: 'Unknown',
      reason: 'ReconcileIngressFailed',
      message: 'Ingress reconciliation failed',
      lastTransitionTime: T1,
    });
  });

  it('a foreign VirtualService → NetworkConfigured False NotOwned', () => {
    const status = fresh();
    markIngressResourceNotOwned(status, 'VirtualService', 'hello-ingress', T1);
    const message = 'There is an existing VirtualService "hello-ingress" that we do not own.';
    expect(status.conditions).toEqual([
      { type: 'LoadBalancerReady', status: 'Unknown', lastTransitionTime: T0 },
      { type: 'NetworkConfigured', status: 'False', reason: 'NotOwned', message, lastTransitionTime: T1 },
      { type: 'Ready', status: 'False', reason: 'NotOwned', message, lastTransitionTime: T1 },
    ]);
  });
});

describe('Ingress predicates', () => {
  const ready = (): IngressStatus => {
    const s = fresh();
    markNetworkConfigured(s, T1);
    markLoadBalancerReady(s, [], [], T1);
    return s;
  };

  it('isIngressReady needs Ready True and observedGeneration == generation', () => {
    expect(isIngressReady({ metadata: { generation: 2 }, status: { ...ready(), observedGeneration: 2 } })).toBe(true);
    expect(isIngressReady({ metadata: { generation: 3 }, status: { ...ready(), observedGeneration: 2 } })).toBe(false);
    expect(isIngressReady({ metadata: { generation: 2 }, status: { ...fresh(), observedGeneration: 2 } })).toBe(false);
    expect(isIngressReady({ metadata: {} })).toBe(false);
  });

  it('isIngressFailed needs Ready False of the current generation', () => {
    const s = fresh();
    markLoadBalancerFailed(s, 'X', 'y', T1);
    expect(isIngressFailed({ metadata: { generation: 1 }, status: { ...s, observedGeneration: 1 } })).toBe(true);
    expect(isIngressFailed({ metadata: { generation: 2 }, status: { ...s, observedGeneration: 1 } })).toBe(false);
  });
});
