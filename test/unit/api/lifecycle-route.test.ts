import { describe, expect, it } from 'vitest';
import type { Ingress } from '../../../api/networking.js';
import {
  ExternalDomainTLSNotEnabledMessage,
  initializeRouteConditions,
  isRouteFailed,
  isRouteReady,
  markCertificateNotEnabled,
  markCertificateNotOwned,
  markCertificateNotReady,
  markCertificateProvisionFailed,
  markCertificateReady,
  markConfigurationFailed,
  markConfigurationNotReady,
  markDomainNameError,
  markEndpointNotOwned,
  markHTTPDowngrade,
  markIngressNotConfigured,
  markIngressRolloutInProgress,
  markMissingTrafficTarget,
  markRevisionFailed,
  markRevisionNotOwned,
  markRevisionNotReady,
  markRevisionTargetTrafficError,
  markServiceNotOwned,
  markTLSNotEnabled,
  markTrafficAssigned,
  markUnknownTrafficError,
  propagateIngressStatus,
  routeConditionSet,
  TLSNotEnabledForClusterLocalMessage,
  type RouteStatus,
} from '../../../api/lifecycle/route.js';

const T0 = '2025-01-01T00:00:00Z';
const T1 = '2025-01-01T00:01:00Z';
const T2 = '2025-01-01T00:02:00Z';
const T3 = '2025-01-01T00:03:00Z';

function fresh(): RouteStatus {
  const status: RouteStatus = {};
  initializeRouteConditions(status, T0);
  return status;
}

const cond = (status: RouteStatus, type: string) => routeConditionSet.get(status, type);

function ingress(
  generation: number,
  observedGeneration: number | undefined,
  ready?: { status: 'True' | 'False' | 'Unknown'; reason?: string; message?: string },
): Pick<Ingress, 'metadata' | 'status'> {
  return {
    metadata: { name: 'hello', namespace: 'default', generation },
    status: {
      ...(observedGeneration === undefined ? {} : { observedGeneration }),
      ...(ready ? { conditions: [{ type: 'Ready', ...ready }] } : {}),
    },
  };
}

describe('Route condition set', () => {
  it('Ready over AllTrafficAssigned, IngressReady, CertificateProvisioned', () => {
    expect(routeConditionSet.happy).toBe('Ready');
    expect(routeConditionSet.dependents).toEqual(['AllTrafficAssigned', 'IngressReady', 'CertificateProvisioned']);
    expect(fresh()).toEqual({
      conditions: [
        { type: 'AllTrafficAssigned', status: 'Unknown', lastTransitionTime: T0 },
        { type: 'CertificateProvisioned', status: 'Unknown', lastTransitionTime: T0 },
        { type: 'IngressReady', status: 'Unknown', lastTransitionTime: T0 },
        { type: 'Ready', status: 'Unknown', lastTransitionTime: T0 },
      ],
    });
  });

  it('traffic assigned + TLS not enabled + Ingress ready → Ready True; CertificateProvisioned True TLSNotEnabled (golden)', () => {
    const status = fresh();
    markTrafficAssigned(status, T1);
    markCertificateNotEnabled(status, T1);
    propagateIngressStatus(status, ingress(1, 1, { status: 'True' }), T2);
    expect(status).toEqual({
      conditions: [
        { type: 'AllTrafficAssigned', status: 'True', lastTransitionTime: T1 },
        {
          type: 'CertificateProvisioned',
          status: 'True',
          reason: 'TLSNotEnabled',
          message: 'external-domain-tls is not enabled',
          lastTransitionTime: T1,
        },
        { type: 'IngressReady', status: 'True', lastTransitionTime: T2 },
        { type: 'Ready', status: 'True', lastTransitionTime: T2 },
      ],
    });
    expect(ExternalDomainTLSNotEnabledMessage).toBe('external-domain-tls is not enabled');
  });

  it('any dependent not True keeps Ready from True', () => {
    const status = fresh();
    markTrafficAssigned(status, T1);
    markCertificateNotEnabled(status, T1);
    expect(cond(status, 'Ready')?.status).toBe('Unknown');
    markIngressNotConfigured(status, T2);
    expect(cond(status, 'Ready')).toMatchObject({ status: 'Unknown', reason: 'IngressNotConfigured' });
  });
});

describe('AllTrafficAssigned', () => {
  it('missing Configuration → False ConfigurationMissing, Ready False', () => {
    const status = fresh();
    markMissingTrafficTarget(status, 'Configuration', 'hello', T1);
    const message = 'Configuration "hello" referenced in traffic not found.';
    expect(status.conditions).toEqual([
      { type: 'AllTrafficAssigned', status: 'False', reason: 'ConfigurationMissing', message, lastTransitionTime: T1 },
      { type: 'CertificateProvisioned', status: 'Unknown', lastTransitionTime: T0 },
      { type: 'IngressReady', status: 'Unknown', lastTransitionTime: T0 },
      { type: 'Ready', status: 'False', reason: 'ConfigurationMissing', message, lastTransitionTime: T1 },
    ]);
  });

  it('missing Revision → False RevisionMissing', () => {
    const status = fresh();
    markMissingTrafficTarget(status, 'Revision', 'hello-00001', T1);
    expect(cond(status, 'AllTrafficAssigned')).toMatchObject({
      status: 'False',
      reason: 'RevisionMissing',
      message: 'Revision "hello-00001" referenced in traffic not found.',
    });
  });

  it('Configuration without a ready Revision → Unknown RevisionMissing', () => {
    const status = fresh();
    markConfigurationNotReady(status, 'hello', T1);
    const message = 'Configuration "hello" is waiting for a Revision to become ready.';
    expect(cond(status, 'AllTrafficAssigned')).toEqual({
      type: 'AllTrafficAssigned',
      status: 'Unknown',
      reason: 'RevisionMissing',
      message,
      lastTransitionTime: T1,
    });
    expect(cond(status, 'Ready')).toEqual({ type: 'Ready', status: 'Unknown', reason: 'RevisionMissing', message, lastTransitionTime: T1 });
  });

  it('failed Configuration → False RevisionMissing', () => {
    const status = fresh();
    markConfigurationFailed(status, 'hello', T1);
    const message = 'Configuration "hello" does not have any ready Revision.';
    expect(cond(status, 'AllTrafficAssigned')).toEqual({
      type: 'AllTrafficAssigned',
      status: 'False',
      reason: 'RevisionMissing',
      message,
      lastTransitionTime: T1,
    });
    expect(cond(status, 'Ready')).toEqual({ type: 'Ready', status: 'False', reason: 'RevisionMissing', message, lastTransitionTime: T1 });
  });

  it('a named Revision not ready → Unknown; failed → False (RevisionMissing)', () => {
    const a = fresh();
    markRevisionNotReady(a, 'hello-00002', T1);
    expect(cond(a, 'AllTrafficAssigned')).toMatchObject({
      status: 'Unknown',
      reason: 'RevisionMissing',
      message: 'Revision "hello-00002" is not yet ready.',
    });
    const b = fresh();
    markRevisionFailed(b, 'hello-00002', T1);
    expect(cond(b, 'AllTrafficAssigned')).toMatchObject({
      status: 'False',
      reason: 'RevisionMissing',
      message: 'Revision "hello-00002" failed to become ready.',
    });
  });

  it("another Service's Revision → False RevisionNotOwned", () => {
    const a = fresh();
    markRevisionNotOwned(a, 'other-00001', 'other', 'hello', T1);
    const message = 'Revision "other-00001" belongs to Service "other", not Service "hello".';
    expect(cond(a, 'AllTrafficAssigned')).toEqual({
      type: 'AllTrafficAssigned',
      status: 'False',
      reason: 'RevisionNotOwned',
      message,
      lastTransitionTime: T1,
    });
    expect(cond(a, 'Ready')).toMatchObject({ status: 'False', reason: 'RevisionNotOwned', message });
    const b = fresh();
    markRevisionNotOwned(b, 'loose-00001', undefined, 'hello', T1);
    expect(cond(b, 'AllTrafficAssigned')?.message).toBe('Revision "loose-00001" does not belong to Service "hello".');
  });

  it('traffic errors: Unknown "Unknown"; False with the caller\'s reason (ErrorConfig)', () => {
    const a = fresh();
    markUnknownTrafficError(a, 'something broke', T1);
    expect(cond(a, 'AllTrafficAssigned')).toMatchObject({ status: 'Unknown', reason: 'Unknown', message: 'something broke' });
    const b = fresh();
    markRevisionTargetTrafficError(b, 'ErrorConfig', 'bad domain template', T1);
    expect(cond(b, 'AllTrafficAssigned')).toMatchObject({ status: 'False', reason: 'ErrorConfig', message: 'bad domain template' });
    const c = fresh();
    markDomainNameError(c, 'domain name error: invalid domain name "a..b.com"', T1);
    expect(cond(c, 'AllTrafficAssigned')).toMatchObject({
      status: 'False',
      reason: 'ErrorConfig',
      message: 'domain name error: invalid domain name "a..b.com"',
    });
    expect(cond(c, 'Ready')).toMatchObject({ status: 'False', reason: 'ErrorConfig' });
  });

  it('markTrafficAssigned clears a previous error', () => {
    const status = fresh();
    markMissingTrafficTarget(status, 'Revision', 'x', T1);
    markTrafficAssigned(status, T2);
    expect(cond(status, 'AllTrafficAssigned')).toEqual({ type: 'AllTrafficAssigned', status: 'True', lastTransitionTime: T2 });
    expect(cond(status, 'Ready')?.status).toBe('Unknown');
  });
});

describe('IngressReady', () => {
  it('new Route generation → IngressReady Unknown IngressNotConfigured', () => {
    const status = fresh();
    markIngressNotConfigured(status, T1);
    const message = 'Ingress has not yet been reconciled.';
    expect(cond(status, 'IngressReady')).toEqual({
      type: 'IngressReady',
      status: 'Unknown',
      reason: 'IngressNotConfigured',
      message,
      lastTransitionTime: T1,
    });
  });

  it('an Ingress that has not observed its generation → IngressNotConfigured, even if its status says Ready', () => {
    const status = fresh();
    markTrafficAssigned(status, T1);
    markCertificateNotEnabled(status, T1);
    propagateIngressStatus(status, ingress(2, 1, { status: 'True' }), T2);
    expect(cond(status, 'IngressReady')).toMatchObject({ status: 'Unknown', reason: 'IngressNotConfigured' });
    expect(cond(status, 'Ready')).toMatchObject({ status: 'Unknown', reason: 'IngressNotConfigured' });
  });

  it('an Ingress without a Ready condition → IngressNotConfigured', () => {
    const status = fresh();
    propagateIngressStatus(status, ingress(1, 1), T1);
    expect(cond(status, 'IngressReady')).toMatchObject({ status: 'Unknown', reason: 'IngressNotConfigured' });
    const none = fresh();
    propagateIngressStatus(none, { metadata: { generation: 1 } }, T1);
    expect(cond(none, 'IngressReady')).toMatchObject({ status: 'Unknown', reason: 'IngressNotConfigured' });
  });

  it('an up-to-date Ingress waiting for its load balancer → Unknown with its reason', () => {
    const status = fresh();
    propagateIngressStatus(
      status,
      ingress(3, 3, { status: 'Unknown', reason: 'Uninitialized', message: 'Waiting for load balancer to be ready' }),
      T1,
    );
    expect(cond(status, 'IngressReady')).toEqual({
      type: 'IngressReady',
      status: 'Unknown',
      reason: 'Uninitialized',
      message: 'Waiting for load balancer to be ready',
      lastTransitionTime: T1,
    });
  });

  it('a failed Ingress → IngressReady False with its reason; becoming Ready later → True', () => {
    const status = fresh();
    markTrafficAssigned(status, T1);
    markCertificateNotEnabled(status, T1);
    propagateIngressStatus(status, ingress(1, 1, { status: 'False', reason: 'NotOwned', message: 'nope' }), T2);
    expect(cond(status, 'IngressReady')).toMatchObject({ status: 'False', reason: 'NotOwned', message: 'nope' });
    expect(cond(status, 'Ready')).toMatchObject({ status: 'False', reason: 'NotOwned' });
    propagateIngressStatus(status, ingress(2, 2, { status: 'True' }), T3);
    expect(cond(status, 'IngressReady')).toEqual({ type: 'IngressReady', status: 'True', lastTransitionTime: T3 });
    expect(cond(status, 'Ready')).toEqual({ type: 'Ready', status: 'True', lastTransitionTime: T3 });
  });

  it('rollout in progress → Unknown RolloutInProgress', () => {
    const status = fresh();
    markIngressRolloutInProgress(status, T1);
    expect(cond(status, 'IngressReady')).toMatchObject({
      status: 'Unknown',
      reason: 'RolloutInProgress',
      message: 'A gradual rollout of the latest revision(s) is in progress.',
    });
  });

  it('foreign placeholder Service / Endpoints → IngressReady False NotOwned', () => {
    const a = fresh();
    markServiceNotOwned(a, 'hello', T1);
    expect(cond(a, 'IngressReady')).toMatchObject({
      status: 'False',
      reason: 'NotOwned',
      message: 'There is an existing placeholder Service "hello" that we do not own.',
    });
    const b = fresh();
    markEndpointNotOwned(b, 'hello', T1);
    expect(cond(b, 'IngressReady')).toMatchObject({
      status: 'False',
      reason: 'NotOwned',
      message: 'There is an existing placeholder Endpoint "hello" that we do not own.',
    });
  });
});

describe('CertificateProvisioned', () => {
  it('TLS not enabled for cluster-local, HTTP downgrade: True with a reason', () => {
    const a = fresh();
    markTLSNotEnabled(a, TLSNotEnabledForClusterLocalMessage, T1);
    expect(cond(a, 'CertificateProvisioned')).toMatchObject({
      status: 'True',
      reason: 'TLSNotEnabled',
      message: 'TLS is not enabled for cluster-local',
    });
    const b = fresh();
    markHTTPDowngrade(b, 'route-abc', T1);
    expect(cond(b, 'CertificateProvisioned')).toMatchObject({
      status: 'True',
      reason: 'HTTPDowngrade',
      message: 'Certificate route-abc is not ready downgrade HTTP.',
    });
  });

  it('certificate states: ready, not ready, failed, not owned', () => {
    const a = fresh();
    markCertificateReady(a, T1);
    expect(cond(a, 'CertificateProvisioned')).toEqual({ type: 'CertificateProvisioned', status: 'True', lastTransitionTime: T1 });
    const b = fresh();
    markCertificateNotReady(b, 'route-abc', 'Pending', T1);
    expect(cond(b, 'CertificateProvisioned')).toMatchObject({
      status: 'Unknown',
      reason: 'CertificateNotReady',
      message: 'Certificate route-abc is not ready: Pending',
    });
    const c = fresh();
    markCertificateProvisionFailed(c, 'route-abc', 'Failed', T1);
    expect(cond(c, 'CertificateProvisioned')).toMatchObject({
      status: 'False',
      reason: 'CertificateProvisionFailed',
      message: 'Certificate route-abc fails to be provisioned: Failed',
    });
    const d = fresh();
    markCertificateNotOwned(d, 'route-abc', T1);
    expect(cond(d, 'CertificateProvisioned')).toMatchObject({
      status: 'False',
      reason: 'CertificateNotOwned',
      message: "There is an existing certificate route-abc that we don't own.",
    });
  });
});

describe('Route predicates', () => {
  it('isRouteReady / isRouteFailed need the current generation observed', () => {
    const ok = fresh();
    markTrafficAssigned(ok, T1);
    markCertificateNotEnabled(ok, T1);
    propagateIngressStatus(ok, ingress(1, 1, { status: 'True' }), T1);
    expect(isRouteReady({ metadata: { generation: 4 }, status: { ...ok, observedGeneration: 4 } })).toBe(true);
    expect(isRouteReady({ metadata: { generation: 5 }, status: { ...ok, observedGeneration: 4 } })).toBe(false);
    const bad = fresh();
    markMissingTrafficTarget(bad, 'Revision', 'x', T1);
    expect(isRouteFailed({ metadata: { generation: 1 }, status: { ...bad, observedGeneration: 1 } })).toBe(true);
    expect(isRouteFailed({ metadata: { generation: 2 }, status: { ...bad, observedGeneration: 1 } })).toBe(false);
  });
});
