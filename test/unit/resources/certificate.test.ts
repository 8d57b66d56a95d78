// The Knative Certificates of a Route and a DomainMapping (serving route/resources/certificate_test.go,
// domainmapping/resources/certificate_test.go) against golden objects, and the rules around them.
import { describe, expect, it } from 'vitest';
import type { Certificate } from '../../../api/certificate.js';
import {
  certificateClassFor,
  externalDomainTLSEnabled,
  makeDomainMappingCertificate,
  makeIngressTLS,
  makeRouteCertificates,
  orphanedCertificates,
  routeCertificateName,
  wildcardCertificateMatches,
} from '../../../resources/certificate.js';

const route = {
  apiVersion: 'serving.knative.dev/v1',
  kind: 'Route',
  metadata: { name: 'hello', namespace: 'default', uid: '1234', annotations: { 'networking.knative.dev/certificate-class': 'alt', team: 'a' } },
};

describe('makeRouteCertificates', () => {
  it('one per domain, in domain order, named route-<uid>[-<adler32(tag)>] (golden)', () => {
    const certs = makeRouteCertificates(
      route,
      { 'v1-hello.default.example.com': 'v1', 'hello.default.example.com': '' },
      'cert-manager',
      'example.com',
    );
    const meta = {
      namespace: 'default',
      ownerReferences: [
        { apiVersion: 'serving.knative.dev/v1', kind: 'Route', name: 'hello', uid: '1234', controller: true, blockOwnerDeletion: true },
      ],
      annotations: { 'networking.knative.dev/certificate.class': 'cert-manager', team: 'a' },
      labels: { 'serving.knative.dev/route': 'hello', 'networking.knative.dev/certificate-type': 'external-domain' },
    };
    expect(certs).toEqual([
      {
        apiVersion: 'networking.internal.knative.dev/v1alpha1',
        kind: 'Certificate',
        metadata: { name: 'route-1234', ...meta },
        spec: { dnsNames: ['hello.default.example.com'], domain: 'example.com', secretName: 'route-1234' },
      },
      {
        apiVersion: 'networking.internal.knative.dev/v1alpha1',
        kind: 'Certificate',
        metadata: { name: 'route-1234-18809000', ...meta },
        spec: { dnsNames: ['v1-hello.default.example.com'], domain: 'example.com', secretName: 'route-1234-18809000' },
      },
    ]);
    expect(routeCertificateName(route, 'v1')).toBe('route-1234-18809000');
  });

  it('the certificate class: the annotation (either spelling, the dotted one first), else the configured one', () => {
    expect(certificateClassFor(route.metadata.annotations, 'cfg')).toBe('alt');
    expect(certificateClassFor({ 'networking.knative.dev/certificate.class': 'dot', 'networking.knative.dev/certificate-class': 'alt' }, 'cfg')).toBe(
      'dot',
    );
    expect(certificateClassFor({}, 'cfg')).toBe('cfg');
  });
});

describe('makeDomainMappingCertificate', () => {
  it('named and labelled after the mapping, for its name (golden)', () => {
    const dm = { apiVersion: 'serving.knative.dev/v1beta1', kind: 'DomainMapping', metadata: { name: 'coffee.example', namespace: 'ns', uid: 'u' } };
    expect(makeDomainMappingCertificate(dm, 'cls')).toEqual({
      apiVersion: 'networking.internal.knative.dev/v1alpha1',
      kind: 'Certificate',
      metadata: {
        name: 'coffee.example',
        namespace: 'ns',
        ownerReferences: [
          {
            apiVersion: 'serving.knative.dev/v1beta1',
            kind: 'DomainMapping',
            name: 'coffee.example',
            uid: 'u',
            controller: true,
            blockOwnerDeletion: true,
          },
        ],
        annotations: { 'networking.knative.dev/certificate.class': 'cls' },
        labels: { 'serving.knative.dev/domainMappingUID': 'coffee.example', 'networking.knative.dev/certificate-type': 'external-domain' },
      },
      spec: { dnsNames: ['coffee.example'], domain: 'coffee.example', secretName: 'coffee.example' },
    });
  });
});

describe('externalDomainTLSEnabled', () => {
  it('off in config-network: off; on: unless an annotation says true (ParseBool), the deprecated spellings first', () => {
    expect(externalDomainTLSEnabled(undefined, 'disabled')).toBe(false);
    expect(externalDomainTLSEnabled(undefined, 'enabled')).toBe(true);
    expect(externalDomainTLSEnabled({ 'networking.knative.dev/disable-external-domain-tls': 'True' }, 'enabled')).toBe(false);
    expect(externalDomainTLSEnabled({ 'networking.knative.dev/disable-external-domain-tls': 'false' }, 'enabled')).toBe(true);
    expect(externalDomainTLSEnabled({ 'networking.knative.dev/disable-external-domain-tls': 'yes' }, 'enabled')).toBe(true);
    expect(
      externalDomainTLSEnabled(
        { 'networking.knative.dev/disableAutoTLS': 'false', 'networking.knative.dev/disable-external-domain-tls': 'true' },
        'enabled',
      ),
    ).toBe(true);
  });
});

describe('wildcard, orphans, spec.tls', () => {
  const cert = (name: string, dnsNames: string[], type = 'external-domain'): Certificate => ({
    apiVersion: 'networking.internal.knative.dev/v1alpha1',
    kind: 'Certificate',
    metadata: { name, namespace: 'default', labels: { 'networking.knative.dev/certificate-type': type } },
    spec: { dnsNames, secretName: name },
  });

  it('a wildcard Certificate covers domains whose parent is one of its names', () => {
    const wild = cert('w', ['*.default.example.com']);
    expect(wildcardCertificateMatches(['hello.default.example.com', 'v1-hello.default.example.com'], wild)).toBe(true);
    expect(wildcardCertificateMatches(['hello.other.example.com'], wild)).toBe(false);
  });

  it('orphans: external-domain Certificates none of whose names is wanted', () => {
    const keep = cert('keep', ['a.example.com']);
    const gone = cert('gone', ['b.example.com']);
    const local = cert('local', ['c.example.com'], 'cluster-local-domain');
    expect(orphanedCertificates([keep, gone, local], new Set(['a.example.com']))).toEqual([gone]);
  });

  it('makeIngressTLS: the hosts, the Secret and its namespace', () => {
    expect(makeIngressTLS(cert('c', ['a.example.com']), ['a.example.com'])).toEqual({
      hosts: ['a.example.com'],
      secretName: 'c',
      secretNamespace: 'default',
    });
  });
});
