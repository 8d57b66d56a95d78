// Knative Certificates of cert-manager's class (serving pkg/reconciler/certificate resources/
// cert_manager_certificate_test.go, certificate_test.go, config/cert_manager_test.go): config-certmanager, the
// cert-manager Certificate (golden) and the Knative Certificate's status from it.
import { describe, expect, it } from 'vitest';
import type { Certificate } from '../../../api/certificate.js';
import {
  certificateStatusFromCertManager,
  makeCertManagerCertificate,
  parseCertManagerConfig,
  type CertManagerCertificate,
} from '../../../resources/certmanager.js';

const kcert = (dnsNames = ['hello.default.example.com'], domain = 'example.com'): Certificate => ({
  apiVersion: 'networking.internal.knative.dev/v1alpha1',
  kind: 'Certificate',
  metadata: {
    name: 'route-1234',
    namespace: 'default',
    uid: 'kcert-uid',
    generation: 2,
    labels: { 'serving.knative.dev/route': 'hello', 'networking.knative.dev/certificate-type': 'external-domain' },
    annotations: { 'networking.knative.dev/certificate.class': 'cert-manager.certificate.networking.knative.dev' },
  },
  spec: { dnsNames, domain, secretName: 'route-1234' },
});

describe('parseCertManagerConfig', () => {
  it("defaults to Knative's self-signed ClusterIssuer; issuerRef is YAML", () => {
    expect(parseCertManagerConfig({}).issuerRef).toEqual({ kind: 'ClusterIssuer', name: 'knative-selfsigned-issuer' });
    expect(parseCertManagerConfig({ issuerRef: 'kind: ClusterIssuer\nname: tidal-ca\n' }).issuerRef).toEqual({
      kind: 'ClusterIssuer',
      name: 'tidal-ca',
    });
  });

  it('refuses a value that is not an issuer reference, naming the key', () => {
    expect(() => parseCertManagerConfig({ issuerRef: '- a\n- b\n' })).toThrow('config-certmanager issuerRef: must be an issuer reference');
    expect(() => parseCertManagerConfig({ issuerRef: 'name: [1]\n' })).toThrow('config-certmanager issuerRef.name: must be a string');
  });
});

describe('makeCertManagerCertificate', () => {
  const cfg = parseCertManagerConfig({ issuerRef: 'kind: ClusterIssuer\nname: tidal-ca\n' });

  it('same name, labels and annotations, controlled by the Knative Certificate, Secret labelled with its uid (golden)', () => {
    expect(makeCertManagerCertificate(cfg, kcert())).toEqual({
      apiVersion: 'cert-manager.io/v1',
      kind: 'Certificate',
      metadata: {
        name: 'route-1234',
        namespace: 'default',
        ownerReferences: [
          {
            apiVersion: 'networking.internal.knative.dev/v1alpha1',
            kind: 'Certificate',
            name: 'route-1234',
            uid: 'kcert-uid',
            controller: true,
            blockOwnerDeletion: true,
          },
        ],
        annotations: { 'networking.knative.dev/certificate.class': 'cert-manager.certificate.networking.knative.dev' },
        labels: { 'serving.knative.dev/route': 'hello', 'networking.knative.dev/certificate-type': 'external-domain' },
      },
      spec: {
        commonName: 'hello.default.example.com',
        secretName: 'route-1234',
        dnsNames: ['hello.default.example.com'],
        issuerRef: { kind: 'ClusterIssuer', name: 'tidal-ca' },
        secretTemplate: { labels: { 'networking.internal.knative.dev/certificate-uid': 'kcert-uid' } },
      },
    });
  });

  it('a common name over 63 characters becomes k.<domain>, added to the DNS names; without a domain it fails', () => {
    const long = `${'a'.repeat(60)}.default.example.com`;
    const made = makeCertManagerCertificate(cfg, kcert([long]));
    expect('spec' in made && [made.spec.commonName, made.spec.dnsNames]).toEqual(['k.example.com', ['k.example.com', long]]);
    expect(makeCertManagerCertificate(cfg, kcert([long], ''))).toEqual({
      reason: 'CommonName Too Long',
      message: `error creating cert-manager certificate: CommonName (${long}) too long and field spec.Domain on Kcert is empty, cannot attempt to shorten`,
    });
  });
});

describe('certificateStatusFromCertManager', () => {
  const cm = (status: CertManagerCertificate['status']): CertManagerCertificate => {
    const made = makeCertManagerCertificate(parseCertManagerConfig({}), kcert());
    if (!('spec' in made)) throw new Error('not made');
    return { ...made, status };
  };
  const now = '2026-12-06T10:00:00Z';
  const nowMs = Date.parse(now);
  const ready = (c: ReturnType<typeof certificateStatusFromCertManager>) => c.conditions?.map((x) => [x.type, x.status, x.reason]);

  it('no condition yet: Unknown NoCertManagerCertCondition', () => {
    expect(ready(certificateStatusFromCertManager(kcert(), cm({}), nowMs, now))).toEqual([['Ready', 'Unknown', 'NoCertManagerCertCondition']]);
  });

  it('Ready True: Ready, notAfter copied, observed generation', () => {
    const s = certificateStatusFromCertManager(
      kcert(),
      cm({ conditions: [{ type: 'Ready', status: 'True' }], notAfter: '2027-01-01T00:00:00Z' }),
      nowMs,
      now,
    );
    expect([ready(s), s.notAfter, s.observedGeneration]).toEqual([[['Ready', 'True', undefined]], '2027-01-01T00:00:00Z', 2]);
  });

  it('False for a "not yet" reason is Unknown; for another reason False', () => {
    expect(
      ready(certificateStatusFromCertManager(kcert(), cm({ conditions: [{ type: 'Ready', status: 'False', reason: 'InProgress' }] }), nowMs, now)),
    ).toEqual([['Ready', 'Unknown', 'InProgress']]);
    expect(
      ready(certificateStatusFromCertManager(kcert(), cm({ conditions: [{ type: 'Ready', status: 'False', reason: 'Failed' }] }), nowMs, now)),
    ).toEqual([['Ready', 'False', 'Failed']]);
  });

  it('past its renewal time: Renewing True beside the Ready it had', () => {
    const before: Certificate = {
      ...kcert(),
      status: { conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: '2026-12-01T00:00:00Z' }] },
    };
    const s = certificateStatusFromCertManager(
      before,
      cm({ conditions: [{ type: 'Ready', status: 'True' }], renewalTime: '2026-12-06T09:00:00Z' }),
      nowMs,
      now,
    );
    expect(ready(s)).toEqual([
      ['Ready', 'True', undefined],
      ['Renewing', 'True', undefined],
    ]);
  });
});
