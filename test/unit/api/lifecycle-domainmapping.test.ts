// DomainMapping conditions (upstream domainmapping_lifecycle.go): Ready over DomainClaimed, ReferenceResolved,
// IngressReady and CertificateProvisioned, with upstream's reasons and messages; and the validation the reconciler
// reports for a mapping stored bypassing the webhook.
import { describe, expect, it } from 'vitest';
import type { DomainMapping, DomainMappingStatus } from '../../../api/domainmapping.js';
import {
  domainMappingConditionSet,
  isDomainMappingReady,
  markCertificateNotRequired,
  markDomainClaimed,
  markDomainClaimNotOwned,
  markIngressNotConfigured,
  markInvalidSpec,
  markReferenceNotResolved,
  markReferenceResolved,
  markTLSNotEnabled,
  propagateIngressStatus,
} from '../../../api/lifecycle/domainmapping.js';
import { fqdnError, setDomainMappingDefaults, validateDomainMapping } from '../../../api/validation-domainmapping.js';

const now = '2026-01-01T00:00:00Z';
const cond = (s: DomainMappingStatus, type: string) => {
  const c = domainMappingConditionSet.get(s, type);
  return c ? { status: c.status, reason: c.reason, message: c.message } : undefined;
};

describe('DomainMapping condition set', () => {
  it('is Ready only when the claim, the reference, the Ingress and the certificate are', () => {
    const s: DomainMappingStatus = {};
    domainMappingConditionSet.initialize(s, now);
    expect(s.conditions?.map((c) => c.type)).toEqual(['CertificateProvisioned', 'DomainClaimed', 'IngressReady', 'Ready', 'ReferenceResolved']);
    markTLSNotEnabled(s, now);
    expect(cond(s, 'CertificateProvisioned')).toEqual({ status: 'True', reason: 'TLSNotEnabled', message: 'external-domain-tls is not enabled' });
    markDomainClaimed(s, now);
    markReferenceResolved(s, now);
    expect(cond(s, 'Ready')?.status).toBe('Unknown');
    propagateIngressStatus(s, { conditions: [{ type: 'Ready', status: 'True' }] }, now);
    expect(cond(s, 'Ready')?.status).toBe('True');
    const dm = { metadata: { generation: 2 }, status: { ...s, observedGeneration: 2 } } as DomainMapping;
    expect(isDomainMappingReady(dm)).toBe(true);
    expect(isDomainMappingReady({ ...dm, metadata: { generation: 3 } })).toBe(false);
  });

  it('says DomainAlreadyClaimed, ResolveFailed, IngressNotConfigured and CertificateExternallyProvided as upstream', () => {
    const s: DomainMappingStatus = {};
    domainMappingConditionSet.initialize(s, now);
    markDomainClaimNotOwned(s, now);
    expect(cond(s, 'DomainClaimed')).toEqual({
      status: 'False',
      reason: 'DomainAlreadyClaimed',
      message: 'The domain name is already in use by another DomainMapping',
    });
    expect(cond(s, 'Ready')).toEqual(cond(s, 'DomainClaimed'));
    markDomainClaimed(s, now);
    markReferenceNotResolved(s, 'failed to get object default/x: services.serving.knative.dev "x" not found', now);
    expect(cond(s, 'Ready')).toMatchObject({ status: 'False', reason: 'ResolveFailed' });
    markReferenceResolved(s, now);
    markIngressNotConfigured(s, now);
    expect(cond(s, 'IngressReady')).toEqual({ status: 'Unknown', reason: 'IngressNotConfigured', message: 'Ingress has not yet been reconciled.' });
    markCertificateNotRequired(s, now);
    expect(cond(s, 'CertificateProvisioned')).toEqual({
      status: 'True',
      reason: 'CertificateExternallyProvided',
      message: 'TLS certificate was provided externally',
    });
    propagateIngressStatus(s, { conditions: [{ type: 'Ready', status: 'False', reason: 'NotOwned', message: 'm' }] }, now);
    expect(cond(s, 'Ready')).toEqual({ status: 'False', reason: 'NotOwned', message: 'm' });
    markInvalidSpec(s, 'bad', now);
    expect(cond(s, 'Ready')).toEqual({ status: 'False', reason: 'InvalidSpec', message: 'bad' });
  });
});

describe('DomainMapping validation and defaults', () => {
  const base = (name: string, ref: Record<string, string>): DomainMapping => ({
    apiVersion: 'serving.knative.dev/v1beta1',
    kind: 'DomainMapping',
    metadata: { name, namespace: 'default' },
    spec: { ref },
  });
  const ref = { apiVersion: 'serving.knative.dev/v1', kind: 'Service', name: 's' };

  it('defaults the ref namespace to the mapping’s and leaves the input alone', () => {
    const d = base('a.b', ref);
    expect(setDomainMappingDefaults(d).spec.ref.namespace).toBe('default');
    expect(d.spec.ref.namespace).toBeUndefined();
  });

  it('checks the name as an FQDN (k8s IsFullyQualifiedDomainName) and not under cluster.local', () => {
    expect(fqdnError('coolcoffee.company')).toBe('');
    expect(fqdnError('coolcoffee.company.')).toBe('');
    expect(fqdnError('')).toBe('name: Required value');
    expect(fqdnError('a')).toBe('name: Invalid value: "a": should be a domain with at least two segments separated by dots');
    expect(validateDomainMapping(base('x.default.svc.cluster.local', ref))).toEqual([
      {
        path: 'metadata.name',
        message: 'invalid name "x.default.svc.cluster.local": must not be a subdomain of cluster local domain "cluster.local"',
      },
    ]);
    expect(validateDomainMapping(base('coolcoffee.company', ref))).toEqual([]);
    expect(validateDomainMapping(base('coolcoffee.company', { ...ref, namespace: 'other' }))).toEqual([
      { path: 'spec.ref.namespace', message: 'mismatched namespaces', details: 'parent namespace: "default" does not match ref: "other"' },
    ]);
    expect(validateDomainMapping(base('coolcoffee.company', ref), { subResource: 'status' })).toEqual([]);
  });
});
