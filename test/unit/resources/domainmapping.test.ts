// The DomainMapping's children and reference rules: the KIngress as upstream's
// resources/ingress.go builds it (TestMakeIngress), the claim, the resolved-URL checks with upstream's messages, and
// the Istio programming of that KIngress as net-istio renders it (rewrite, K-Original-Host, 100 %, ingress gateway).
import { describe, expect, it } from 'vitest';
import type { DomainMapping } from '../../../api/domainmapping.js';
import {
  checkResolvedURL,
  domainMappingHTTPOption,
  domainMappingIngressClass,
  domainMappingTLS,
  kindToPlural,
  makeDomainClaim,
  makeDomainMappingIngress,
  notFoundMessage,
  refType,
} from '../../../resources/domainmapping.js';
import { DEFAULT_ISTIO_GATEWAYS, makeVirtualServices } from '../../../resources/istio/virtual-service.js';

function dm(edit: (d: DomainMapping) => void = () => undefined): DomainMapping {
  const d: DomainMapping = {
    apiVersion: 'serving.knative.dev/v1beta1',
    kind: 'DomainMapping',
    metadata: {
      name: 'coolcoffee.company',
      namespace: 'default',
      uid: 'dm-uid',
      labels: { team: 'coffee' },
      annotations: {
        'serving.knative.dev/creator': 'alice',
        'kubectl.kubernetes.io/last-applied-configuration': '{}',
      },
    },
    spec: { ref: { apiVersion: 'serving.knative.dev/v1', kind: 'Service', name: 'coolcoffee-company', namespace: 'default' } },
  };
  edit(d);
  return d;
}

const target = { serviceName: 'coolcoffee-company', host: 'coolcoffee-company.default.svc.cluster.local' };

describe('makeDomainMappingIngress (upstream MakeIngress)', () => {
  it('builds the KIngress: name, labels, annotations, owner, one ExternalIP rule with rewriteHost and K-Original-Host', () => {
    expect(makeDomainMappingIngress(dm(), target, 'istio.ingress.networking.knative.dev', { httpOption: 'Enabled' })).toEqual({
      apiVersion: 'networking.internal.knative.dev/v1alpha1',
      kind: 'Ingress',
      metadata: {
        name: 'coolcoffee.company',
        namespace: 'default',
        labels: { team: 'coffee', 'serving.knative.dev/domainMappingUID': 'dm-uid', 'serving.knative.dev/domainMappingNamespace': 'default' },
        annotations: { 'networking.knative.dev/ingress.class': 'istio.ingress.networking.knative.dev', 'serving.knative.dev/creator': 'alice' },
        ownerReferences: [
          {
            apiVersion: 'serving.knative.dev/v1beta1',
            kind: 'DomainMapping',
            name: 'coolcoffee.company',
            uid: 'dm-uid',
            controller: true,
            blockOwnerDeletion: true,
          },
        ],
      },
      spec: {
        rules: [
          {
            hosts: ['coolcoffee.company'],
            visibility: 'ExternalIP',
            http: {
              paths: [
                {
                  rewriteHost: 'coolcoffee-company.default.svc.cluster.local',
                  splits: [
                    {
                      serviceNamespace: 'default',
                      serviceName: 'coolcoffee-company',
                      servicePort: 80,
                      percent: 100,
                      appendHeaders: { 'K-Original-Host': 'coolcoffee.company' },
                    },
                  ],
                },
              ],
            },
          },
        ],
        httpOption: 'Enabled',
      },
    });
  });

  it('carries spec.tls as the KIngress TLS of the mapping’s host; a long name is shortened as kmeta.ChildName does', () => {
    const withTLS = dm((d) => void (d.spec.tls = { secretName: 'coffee-cert' }));
    const ing = makeDomainMappingIngress(withTLS, target, 'c', { tls: domainMappingTLS(withTLS) });
    expect(ing.spec.tls).toEqual([{ hosts: ['coolcoffee.company'], secretName: 'coffee-cert', secretNamespace: 'default' }]);
    expect(ing.spec.httpOption).toBeUndefined();
    const long = dm((d) => void (d.metadata.name = `${'a'.repeat(60)}.example.com`));
    expect(makeDomainMappingIngress(long, target, 'c').metadata.name).toHaveLength(63);
    expect(domainMappingTLS(dm())).toBeUndefined();
  });

  it('takes the ingress class from the mapping’s annotation, else config-network; httpOption from http-protocol', () => {
    expect(domainMappingIngressClass(dm(), 'configured')).toBe('configured');
    expect(
      domainMappingIngressClass(
        dm((d) => void (d.metadata.annotations = { 'networking.knative.dev/ingress.class': 'x' })),
        'configured',
      ),
    ).toBe('x');
    expect(domainMappingHTTPOption('enabled')).toBe('Enabled');
    expect(domainMappingHTTPOption('redirected')).toBe('Redirected');
    expect(domainMappingHTTPOption('disabled')).toBeUndefined();
  });
});

describe('makeDomainClaim (upstream MakeDomainClaim)', () => {
  it('claims the mapping’s name for its namespace, with no owner reference (it is cluster-scoped)', () => {
    expect(makeDomainClaim(dm())).toEqual({
      apiVersion: 'networking.internal.knative.dev/v1alpha1',
      kind: 'ClusterDomainClaim',
      metadata: { name: 'coolcoffee.company' },
      spec: { namespace: 'default' },
    });
  });
});

describe('resolving spec.ref (upstream resolveRef)', () => {
  it('accepts <name>.<namespace>.svc.cluster.local of the mapping’s namespace, with or without a trailing slash', () => {
    expect(checkResolvedURL('http://coolcoffee-company.default.svc.cluster.local', 'default')).toEqual({ ok: true, ...target });
    expect(checkResolvedURL('https://coolcoffee-company.default.svc.cluster.local/', 'default')).toEqual({ ok: true, ...target });
  });

  it('refuses a path, another host form and another namespace with upstream’s messages', () => {
    expect(checkResolvedURL('http://a.default.svc.cluster.local/foo', 'default')).toEqual({
      ok: false,
      message: 'resolved URI "http://a.default.svc.cluster.local/foo" contains a path',
    });
    expect(checkResolvedURL('http://a.example.com', 'default')).toEqual({
      ok: false,
      message: 'resolved URI "http://a.example.com" must be of the form {name}.{namespace}.svc.cluster.local',
    });
    expect(checkResolvedURL('http://a.b.default.svc.cluster.local', 'default')).toMatchObject({ ok: false });
    expect(checkResolvedURL('http://a.other.svc.cluster.local', 'default')).toEqual({
      ok: false,
      message: 'resolved URI "http://a.other.svc.cluster.local" must be in same namespace as DomainMapping',
    });
  });

  it('guesses plurals as apis.KindToResource and names a missing object as client-go does', () => {
    expect(kindToPlural('Service')).toBe('services');
    expect(kindToPlural('Ingress')).toBe('ingresses');
    expect(kindToPlural('Gateway')).toBe('gateways');
    expect(kindToPlural('Policy')).toBe('policys');
    const t = refType({ apiVersion: 'serving.knative.dev/v1', kind: 'Service' });
    expect(t).toEqual({ group: 'serving.knative.dev', version: 'v1', kind: 'Service', plural: 'services' });
    expect(refType({ apiVersion: 'v1', kind: 'Service' }).group).toBe('');
    expect(notFoundMessage(t, 'default', 'x')).toBe('failed to get object default/x: services.serving.knative.dev "x" not found');
  });
});

describe('the mapping’s KIngress programmed by the Istio Ingress workflow (net-istio)', () => {
  it('renders one ingress VirtualService: the host on the ingress gateway, authority rewritten, K-Original-Host set, 100 %', () => {
    const kingress = makeDomainMappingIngress(dm(), target, 'istio.ingress.networking.knative.dev');
    const live = { ...kingress, metadata: { ...kingress.metadata, uid: 'ing-uid' } };
    const vss = makeVirtualServices(live, DEFAULT_ISTIO_GATEWAYS, 'HASH');
    // No host under .svc.cluster.local: no mesh VirtualService.
    expect(vss.map((v) => v.metadata.name)).toEqual(['coolcoffee.company-ingress']);
    const vs = vss[0]!;
    expect(vs.metadata.labels).toEqual({ 'networking.internal.knative.dev/ingress': 'coolcoffee.company' });
    expect(vs.spec).toEqual({
      hosts: ['coolcoffee.company'],
      gateways: ['knative-serving/knative-ingress-gateway'],
      http: [
        {
          retries: {},
          match: [
            {
              gateways: ['knative-serving/knative-ingress-gateway'],
              authority: { prefix: 'coolcoffee.company' },
              headers: { 'K-Network-Hash': { exact: 'override' } },
            },
          ],
          rewrite: { authority: 'coolcoffee-company.default.svc.cluster.local' },
          route: [
            {
              destination: { host: 'coolcoffee-company.default.svc.cluster.local', port: { number: 80 } },
              weight: 100,
              headers: { request: { set: { 'K-Original-Host': 'coolcoffee.company' } } },
            },
          ],
          headers: { request: { set: { 'K-Network-Hash': 'HASH' } } },
        },
        {
          retries: {},
          match: [{ gateways: ['knative-serving/knative-ingress-gateway'], authority: { prefix: 'coolcoffee.company' } }],
          rewrite: { authority: 'coolcoffee-company.default.svc.cluster.local' },
          route: [
            {
              destination: { host: 'coolcoffee-company.default.svc.cluster.local', port: { number: 80 } },
              weight: 100,
              headers: { request: { set: { 'K-Original-Host': 'coolcoffee.company' } } },
            },
          ],
        },
      ],
    });
  });
});
