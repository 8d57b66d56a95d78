// A KIngress's TLS as net-istio programs it (pkg/reconciler/ingress/resources/gateway_test.go, secret_test.go and
// ingress.go): golden Gateways and Secret copies, and the gateways its VirtualService's ExternalIP rules match on.
import { describe, expect, it } from 'vitest';
import { adler32 } from '../../../../resources/adler32.js';
import {
  DEFAULT_INGRESS_GATEWAY_SERVICE,
  ingressGatewayName,
  makeHTTPServer,
  planIngressTLS,
  targetSecretLabels,
  wildcardGatewayName,
  type OriginSecret,
  type TLSIngressLike,
} from '../../../../resources/istio/ingress-tls.js';
import { DEFAULT_INGRESS_GATEWAY } from '../../../../resources/istio/names.js';

const svc = DEFAULT_INGRESS_GATEWAY_SERVICE;
const owner = {
  apiVersion: 'networking.internal.knative.dev/v1alpha1',
  kind: 'Ingress',
  name: 'hello',
  uid: 'ing-uid',
  controller: true,
  blockOwnerDeletion: true,
};

function ingress(spec: TLSIngressLike['spec']): TLSIngressLike {
  return { metadata: { name: 'hello', namespace: 'default', uid: 'ing-uid' }, spec };
}

const publicRule = { hosts: ['hello.default.example.com'], visibility: 'ExternalIP' as const, http: { paths: [] } };
const localRule = {
  hosts: ['hello.default', 'hello.default.svc', 'hello.default.svc.cluster.local'],
  visibility: 'ClusterLocal' as const,
  http: { paths: [] },
};

function origin(name: string, dnsNames: string[], namespace = 'default'): OriginSecret {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name, namespace, uid: `uid-${name}`, labels: { 'networking.internal.knative.dev/certificate-uid': `cert-${name}` } },
    type: 'kubernetes.io/tls',
    data: { 'tls.crt': 'Y2VydA==', 'tls.key': 'a2V5' },
    dnsNames,
  };
}

describe('adler32 (Go hash/adler32)', () => {
  it('matches known checksums', () => {
    expect(adler32('')).toBe(1);
    expect(adler32('Wikipedia')).toBe(0x11e60398);
    expect(adler32('istio-system/istio-ingressgateway')).toBe(adler32('istio-system/istio-ingressgateway'));
  });
});

describe('names (net-istio GatewayName, WildcardGatewayName, MakeTargetSecretLabels)', () => {
  it('<ingress>-<adler32 of the gateway Service key>, cut to a DNS-1123 label', () => {
    const sum = adler32('istio-system/istio-ingressgateway');
    expect(ingressGatewayName('hello', svc)).toBe(`hello-${sum}`);
    // A label of 60 characters is cut to leave room for the checksum; a longer name is no label: its adler32 stands in.
    expect(ingressGatewayName('a'.repeat(60), svc)).toBe(`${'a'.repeat(63 - String(sum).length - 1)}-${sum}`);
    expect(ingressGatewayName('a'.repeat(70), svc)).toBe(`${adler32('a'.repeat(70))}-${sum}`);
    expect(ingressGatewayName('not.a.label', svc)).toBe(`${adler32('not.a.label')}-${sum}`);
  });

  it('wildcard-<hex adler32(secret-svcNs-svcName)>', () => {
    expect(wildcardGatewayName('wild', 'istio-system', 'istio-ingressgateway')).toBe(
      `wildcard-${adler32('wild-istio-system-istio-ingressgateway').toString(16)}`,
    );
  });

  it('an origin name longer than 63 characters is cut and suffixed with its adler32', () => {
    const name = 's'.repeat(70);
    const suffix = String(adler32(name));
    expect(targetSecretLabels(name, 'default')).toEqual({
      'networking.internal.knative.dev/originSecretNamespace': 'default',
      'networking.internal.knative.dev/originSecretName': `${'s'.repeat(63 - suffix.length - 1)}-${suffix}`,
    });
  });
});

describe('planIngressTLS (net-istio reconcileIngress up to the VirtualServices)', () => {
  it('no TLS and HTTP enabled: nothing added, the shared gateway serves the public rules', () => {
    expect(planIngressTLS(ingress({ rules: [publicRule], httpOption: 'Enabled' }), new Map(), [svc], [DEFAULT_INGRESS_GATEWAY])).toEqual({
      secrets: [],
      gateways: [],
      wildcardGateways: [],
      externalGateways: [DEFAULT_INGRESS_GATEWAY],
    });
  });

  it('one TLS entry: the Secret copied to istio-system, a Gateway of the Ingress with the HTTPS and the HTTP server (golden)', () => {
    const ing = ingress({
      rules: [localRule, publicRule],
      tls: [{ hosts: ['hello.default.example.com'], secretName: 'route-uid', secretNamespace: 'default' }],
      httpOption: 'Enabled',
    });
    const plan = planIngressTLS(
      ing,
      new Map([['default/route-uid', origin('route-uid', ['hello.default.example.com'])]]),
      [svc],
      [DEFAULT_INGRESS_GATEWAY],
    );
    const gwName = ingressGatewayName('hello', svc);
    expect(plan).toEqual({
      secrets: [
        {
          apiVersion: 'v1',
          kind: 'Secret',
          metadata: {
            name: 'hello-uid-route-uid',
            namespace: 'istio-system',
            labels: {
              'networking.internal.knative.dev/originSecretName': 'route-uid',
              'networking.internal.knative.dev/originSecretNamespace': 'default',
              'networking.internal.knative.dev/certificate-uid': 'cert-route-uid',
            },
          },
          type: 'kubernetes.io/tls',
          data: { 'tls.crt': 'Y2VydA==', 'tls.key': 'a2V5' },
        },
      ],
      gateways: [
        {
          apiVersion: 'networking.istio.io/v1beta1',
          kind: 'Gateway',
          metadata: { name: gwName, namespace: 'default', ownerReferences: [owner], labels: { 'networking.internal.knative.dev/ingress': 'hello' } },
          spec: {
            selector: { istio: 'ingressgateway' },
            servers: [
              {
                hosts: ['hello.default.example.com'],
                port: { name: 'default/hello:0', number: 443, protocol: 'HTTPS' },
                tls: {
                  mode: 'SIMPLE',
                  serverCertificate: 'tls.crt',
                  privateKey: 'tls.key',
                  credentialName: 'hello-uid-route-uid',
                  minProtocolVersion: 'TLSV1_2',
                },
              },
              { hosts: ['hello.default.example.com'], port: { name: 'http-server', number: 80, protocol: 'HTTP' } },
            ],
          },
        },
      ],
      wildcardGateways: [],
      // The Ingress's own Gateway serves HTTP too: the shared one is no longer matched.
      externalGateways: [`default/${gwName}`],
    });
  });

  it('a Secret already in the gateway namespace is used as is; Redirected makes the HTTP server redirect', () => {
    const ing = ingress({
      rules: [publicRule],
      tls: [{ hosts: ['hello.default.example.com'], secretName: 'mine', secretNamespace: 'istio-system' }],
      httpOption: 'Redirected',
    });
    const plan = planIngressTLS(ing, new Map([['istio-system/mine', origin('mine', ['hello.default.example.com'], 'istio-system')]]), [svc], []);
    expect(plan.secrets).toEqual([]);
    expect(plan.gateways[0]!.spec.servers.map((s) => [s.port.name, s.tls?.credentialName, s.tls?.httpsRedirect])).toEqual([
      ['default/hello:0', 'mine', undefined],
      ['http-server', undefined, true],
    ]);
  });

  it('Redirected without TLS: a Gateway with only the redirecting HTTP server', () => {
    const plan = planIngressTLS(ingress({ rules: [publicRule], httpOption: 'Redirected' }), new Map(), [svc], [DEFAULT_INGRESS_GATEWAY]);
    expect(plan.gateways.map((g) => g.spec.servers)).toEqual([
      [{ hosts: ['hello.default.example.com'], port: { name: 'http-server', number: 80, protocol: 'HTTP' }, tls: { httpsRedirect: true } }],
    ]);
    expect(plan.externalGateways).toEqual([`default/${ingressGatewayName('hello', svc)}`]);
  });

  it('a cluster-local Ingress gets nothing, TLS or not', () => {
    const ing = ingress({ rules: [localRule], tls: [{ hosts: ['x'], secretName: 's', secretNamespace: 'default' }], httpOption: 'Redirected' });
    expect(planIngressTLS(ing, new Map(), [svc], [DEFAULT_INGRESS_GATEWAY]).gateways).toEqual([]);
  });

  it('a wildcard certificate: copied as <ns>--<name>-wildcard, a shared Gateway in its namespace owned by the Secret', () => {
    const ing = ingress({
      rules: [publicRule],
      tls: [{ hosts: ['hello.default.example.com'], secretName: 'wild', secretNamespace: 'default' }],
      httpOption: 'Enabled',
    });
    const plan = planIngressTLS(ing, new Map([['default/wild', origin('wild', ['*.default.example.com'])]]), [svc], [DEFAULT_INGRESS_GATEWAY]);
    const wildName = wildcardGatewayName('wild', 'istio-system', 'istio-ingressgateway');
    expect(plan.secrets.map((s) => [s.metadata.namespace, s.metadata.name, s.metadata.labels])).toEqual([
      ['istio-system', 'default--wild-wildcard', { 'networking.internal.knative.dev/certificate-uid': 'cert-wild' }],
    ]);
    expect(plan.wildcardGateways).toEqual([
      {
        apiVersion: 'networking.istio.io/v1beta1',
        kind: 'Gateway',
        metadata: {
          name: wildName,
          namespace: 'default',
          ownerReferences: [{ apiVersion: 'v1', kind: 'Secret', name: 'wild', uid: 'uid-wild', controller: true, blockOwnerDeletion: true }],
        },
        spec: {
          selector: { istio: 'ingressgateway' },
          servers: [
            {
              hosts: ['*.default.example.com'],
              port: { name: 'https', number: 443, protocol: 'HTTPS' },
              tls: {
                mode: 'SIMPLE',
                serverCertificate: 'tls.crt',
                privateKey: 'tls.key',
                credentialName: 'default--wild-wildcard',
                minProtocolVersion: 'TLSV1_2',
              },
            },
          ],
        },
      },
    ]);
    // The HTTP server still gets a Gateway of the Ingress (no non-wildcard TLS to hang it on).
    expect(plan.gateways.map((g) => g.spec.servers.map((s) => s.port.name))).toEqual([['http-server']]);
    expect(plan.externalGateways).toEqual([`default/${ingressGatewayName('hello', svc)}`, `default/${wildName}`].sort());
  });

  it('servers are sorted by port name, as net-istio SortServers', () => {
    const tls = Array.from({ length: 11 }, (_, i) => ({ hosts: [`h${i}.example.com`], secretName: `s${i}`, secretNamespace: 'default' }));
    const origins = new Map(tls.map((t) => [`default/${t.secretName}`, origin(t.secretName, t.hosts)]));
    const plan = planIngressTLS(ingress({ rules: [publicRule], tls, httpOption: 'Enabled' }), origins, [svc], []);
    expect(plan.gateways[0]!.spec.servers.map((s) => s.port.name).slice(0, 3)).toEqual(['default/hello:0', 'default/hello:1', 'default/hello:10']);
  });

  it('a Secret that spec.tls names but nobody read, or one without DNS names, is an error', () => {
    const ing = ingress({ rules: [publicRule], tls: [{ hosts: ['a.b'], secretName: 'gone', secretNamespace: 'default' }], httpOption: 'Enabled' });
    expect(() => planIngressTLS(ing, new Map(), [svc], [])).toThrow('secret default/gone not found');
    expect(() => planIngressTLS(ing, new Map([['default/gone', origin('gone', [])]]), [svc], [])).toThrow(
      'certificate should have DNS names, but it has 0',
    );
  });

  it('makeHTTPServer: no server without an option', () => {
    expect(makeHTTPServer(undefined, ['a'])).toBeUndefined();
  });
});
