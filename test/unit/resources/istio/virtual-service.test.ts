// Golden cases (net-istio pkg/reconciler/ingress/resources/virtual_service_test.go
// and an end-to-end Route with a tag), compared as whole objects. The expected objects are the JSON net-istio sends
// (Istio jsonpb): empty lists/maps are absent.
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  distinctHostPrefixes,
  expandedHosts,
  insertProbe,
  makeIngressVirtualService,
  makeMeshVirtualService,
  makeVirtualServiceRoute,
  makeVirtualServices,
  type HTTPIngressPathLike,
  type HTTPRoute,
  type IngressLike,
  type IngressRuleLike,
} from '../../../../resources/istio/virtual-service.js';
import { ingressVirtualServiceName, meshVirtualServiceName, serviceHostname } from '../../../../resources/istio/names.js';

const VS_API = 'networking.istio.io/v1beta1';
const INGRESS_LABEL = 'networking.internal.knative.dev/ingress';
const ROUTE_LABEL = 'serving.knative.dev/route';
const ROUTE_NS_LABEL = 'serving.knative.dev/routeNamespace';
const INGRESS_GW = 'knative-serving/knative-ingress-gateway';
const LOCAL_GW = 'knative-serving/knative-local-gateway';

function ownerRef(name: string, uid: string) {
  return { apiVersion: 'networking.internal.knative.dev/v1alpha1', kind: 'Ingress', name, uid, controller: true, blockOwnerDeletion: true };
}

function ingress(name: string, rules: IngressRuleLike[], meta: Partial<IngressLike['metadata']> = {}): IngressLike {
  return {
    apiVersion: 'networking.internal.knative.dev/v1alpha1',
    kind: 'Ingress',
    metadata: { name, namespace: 'test-ns', uid: `uid-${name}`, ...meta },
    spec: { rules },
  };
}

function gateways(ingressGateways: string[], localGateways: string[]) {
  return { ingressGateways, localGateways };
}

// ---------------------------------------------------------------------------------------------------------------

describe('Case 1: two weighted splits (TestMakeVirtualServiceRoute_TwoTargets)', () => {
  const path: HTTPIngressPathLike = {
    splits: [
      { serviceNamespace: 'test-ns', serviceName: 'revision-service', servicePort: 80, percent: 90 },
      { serviceNamespace: 'test-ns', serviceName: 'new-revision-service', servicePort: 81, percent: 10 },
    ],
  };
  const expectedRoute: HTTPRoute = {
    retries: {},
    match: [{ gateways: ['knative-testing/gateway-1'], authority: { prefix: 'test.org' } }],
    route: [
      { destination: { host: 'revision-service.test-ns.svc.cluster.local', port: { number: 80 } }, weight: 90 },
      { destination: { host: 'new-revision-service.test-ns.svc.cluster.local', port: { number: 81 } }, weight: 10 },
    ],
  };

  it('builds the HTTPRoute', () => {
    expect(makeVirtualServiceRoute(['test.org'], path, ['knative-testing/gateway-1'])).toEqual(expectedRoute);
  });

  it('builds the whole ingress VirtualService', () => {
    const ing = ingress('two-targets', [{ hosts: ['test.org'], visibility: 'ExternalIP', http: { paths: [path] } }]);
    expect(makeIngressVirtualService(ing, gateways(['knative-testing/gateway-1'], []))).toEqual({
      apiVersion: VS_API,
      kind: 'VirtualService',
      metadata: {
        name: 'two-targets-ingress',
        namespace: 'test-ns',
        labels: { [INGRESS_LABEL]: 'two-targets' },
        ownerReferences: [ownerRef('two-targets', 'uid-two-targets')],
      },
      spec: { hosts: ['test.org'], gateways: ['knative-testing/gateway-1'], http: [expectedRoute] },
    });
  });
});

describe('Case 2: header matches × several hosts (TestMakeVirtualServiceRoute_Vanilla)', () => {
  const path: HTTPIngressPathLike = {
    headers: { 'my-header': { exact: 'my-header-value' }, 'my-second-header': { exact: 'my-second-header-value' } },
    splits: [{ serviceNamespace: 'test-ns', serviceName: 'revision-service', servicePort: 80, percent: 100 }],
  };
  const headers = { 'my-header': { exact: 'my-header-value' }, 'my-second-header': { exact: 'my-second-header-value' } };
  const expectedRoute: HTTPRoute = {
    retries: {},
    match: [
      { gateways: ['gateway-1'], authority: { prefix: 'a.com' }, headers },
      { gateways: ['gateway-1'], authority: { prefix: 'b.org' }, headers },
    ],
    route: [{ destination: { host: 'revision-service.test-ns.svc.cluster.local', port: { number: 80 } }, weight: 100 }],
  };

  it('builds the HTTPRoute, every match carrying both header matches', () => {
    expect(makeVirtualServiceRoute(new Set(['b.org', 'a.com']), path, ['gateway-1'])).toEqual(expectedRoute);
  });

  it('builds the whole ingress VirtualService', () => {
    const ing = ingress('vanilla', [{ hosts: ['a.com', 'b.org'], visibility: 'ExternalIP', http: { paths: [path] } }]);
    expect(makeIngressVirtualService(ing, gateways(['gateway-1'], []))).toEqual({
      apiVersion: VS_API,
      kind: 'VirtualService',
      metadata: {
        name: 'vanilla-ingress',
        namespace: 'test-ns',
        labels: { [INGRESS_LABEL]: 'vanilla' },
        ownerReferences: [ownerRef('vanilla', 'uid-vanilla')],
      },
      spec: { hosts: ['a.com', 'b.org'], gateways: ['gateway-1'], http: [expectedRoute] },
    });
  });

  it('a tag route has the same shape, with Knative-Serving-Tag as the header', () => {
    const tagPath: HTTPIngressPathLike = {
      headers: { 'Knative-Serving-Tag': { exact: 'v1' } },
      splits: [{ serviceNamespace: 'ns', serviceName: 'v1', servicePort: 80, percent: 100 }],
    };
    expect(makeVirtualServiceRoute(['r.ns.example.com'], tagPath, [INGRESS_GW])).toEqual({
      retries: {},
      match: [{ gateways: [INGRESS_GW], authority: { prefix: 'r.ns.example.com' }, headers: { 'Knative-Serving-Tag': { exact: 'v1' } } }],
      route: [{ destination: { host: 'v1.ns.svc.cluster.local', port: { number: 80 } }, weight: 100 }],
    });
  });
});

describe('Case 3: cluster-local host collapse (TestMakeVirtualServiceRoute_Internal)', () => {
  const hosts = ['a.default', 'a.default.svc', 'a.default.svc.cluster.local'];
  const path: HTTPIngressPathLike = { splits: [{ serviceNamespace: 'test-ns', serviceName: 'revision-service', servicePort: 80, percent: 100 }] };
  const expectedRoute: HTTPRoute = {
    retries: {},
    match: [{ gateways: ['gateway-1'], authority: { prefix: 'a.default' } }],
    route: [{ destination: { host: 'revision-service.test-ns.svc.cluster.local', port: { number: 80 } }, weight: 100 }],
  };

  it('builds one match for the three names', () => {
    expect(makeVirtualServiceRoute(hosts, path, ['gateway-1'])).toEqual(expectedRoute);
  });

  it('builds the whole ingress VirtualService', () => {
    const ing = ingress('internal', [{ hosts, visibility: 'ExternalIP', http: { paths: [path] } }]);
    expect(makeIngressVirtualService(ing, gateways(['gateway-1'], []))).toEqual({
      apiVersion: VS_API,
      kind: 'VirtualService',
      metadata: {
        name: 'internal-ingress',
        namespace: 'test-ns',
        labels: { [INGRESS_LABEL]: 'internal' },
        ownerReferences: [ownerRef('internal', 'uid-internal')],
      },
      spec: { hosts: ['a.default', 'a.default.svc', 'a.default.svc.cluster.local'], gateways: ['gateway-1'], http: [expectedRoute] },
    });
  });
});

describe('Case 4: mesh VirtualService (TestMakeMeshVirtualServiceSpec_CorrectRoutes, ...CorrectHosts)', () => {
  // The upstream test puts the Ingress in the system namespace; here it has none, which also selects knative-serving.
  const ing: IngressLike = {
    metadata: { name: 'test-ingress', uid: 'uid-test-ingress' },
    spec: {
      rules: [
        {
          hosts: ['test-route.test-ns.svc.cluster.local'],
          visibility: 'ClusterLocal',
          http: {
            paths: [
              {
                path: '/pets/',
                splits: [{ serviceNamespace: 'test-ns', serviceName: 'v2-service', servicePort: 80, percent: 100, appendHeaders: { ugh: 'blah' } }],
                appendHeaders: { foo: 'bar' },
              },
            ],
          },
        },
        {
          hosts: ['v1.domain.com'],
          visibility: 'ClusterLocal',
          http: {
            paths: [
              {
                path: '/pets/',
                splits: [{ serviceNamespace: 'test-ns', serviceName: 'v1-service', servicePort: 80, percent: 100 }],
                appendHeaders: { foo: 'baz' },
              },
            ],
          },
        },
      ],
    },
  };
  const expectedHttp: HTTPRoute[] = [
    {
      retries: {},
      match: [{ uri: { prefix: '/pets/' }, authority: { prefix: 'test-route.test-ns' }, gateways: ['mesh'] }],
      route: [
        {
          destination: { host: 'v2-service.test-ns.svc.cluster.local', port: { number: 80 } },
          weight: 100,
          headers: { request: { set: { ugh: 'blah' } } },
        },
      ],
      headers: { request: { set: { foo: 'bar' } } },
    },
  ];
  const metadata = {
    name: 'test-ingress-mesh',
    namespace: 'knative-serving',
    labels: { [INGRESS_LABEL]: 'test-ingress' },
    ownerReferences: [ownerRef('test-ingress', 'uid-test-ingress')],
  };

  it('with a private gateway: hosts expanded, one route (the non-mesh host is dropped)', () => {
    expect(makeMeshVirtualService(ing, gateways(['gateway'], ['private-gateway']))).toEqual({
      apiVersion: VS_API,
      kind: 'VirtualService',
      metadata,
      spec: {
        hosts: ['test-route.test-ns', 'test-route.test-ns.svc', 'test-route.test-ns.svc.cluster.local'],
        gateways: ['mesh'],
        http: expectedHttp,
      },
    });
  });

  it('without a local gateway: only the FQDN host', () => {
    expect(makeMeshVirtualService(ing, gateways([], []))).toEqual({
      apiVersion: VS_API,
      kind: 'VirtualService',
      metadata,
      spec: { hosts: ['test-route.test-ns.svc.cluster.local'], gateways: ['mesh'], http: expectedHttp },
    });
  });

  it('defaults to config-istio (a local gateway exists, hosts expanded)', () => {
    expect(makeMeshVirtualService(ing)?.spec.hosts).toEqual(['test-route.test-ns', 'test-route.test-ns.svc', 'test-route.test-ns.svc.cluster.local']);
  });

  it('is undefined without a cluster-local host', () => {
    expect(makeMeshVirtualService(ingress('pub', [{ hosts: ['a.example.com'], visibility: 'ExternalIP', http: { paths: [] } }]))).toBeUndefined();
  });

  it('every match is on mesh, whatever the visibility (TestMakeMeshVirtualServiceSpec_CorrectGateways)', () => {
    const ext = ingress('ext', [
      {
        hosts: ['test-route.test-ns.svc.cluster.local'],
        visibility: 'ExternalIP',
        http: { paths: [{ splits: [{ serviceNamespace: 'test', serviceName: 'test', servicePort: 8080, percent: 100 }] }] },
      },
    ]);
    const vs = makeMeshVirtualService(ext, gateways(['gateway'], ['private-gateway']))!;
    expect(vs.spec.gateways).toEqual(['mesh']);
    expect(vs.spec.http?.[0]?.match).toEqual([{ gateways: ['mesh'], authority: { prefix: 'test-route.test-ns' } }]);
  });
});

describe('Case 5: ingress VS, mixed public/local hosts in one rule (TestMakeIngressVirtualServiceSpec_CorrectRoutes)', () => {
  const ing: IngressLike = {
    metadata: { name: 'test-ingress', namespace: 'knative-testing', uid: 'uid-5' },
    spec: {
      rules: [
        {
          hosts: ['domain.com', 'test-route.test-ns.svc.cluster.local'],
          visibility: 'ExternalIP',
          http: {
            paths: [
              {
                path: '/pets/',
                splits: [{ serviceNamespace: 'test-ns', serviceName: 'v2-service', servicePort: 80, percent: 100, appendHeaders: { ugh: 'blah' } }],
                appendHeaders: { foo: 'bar' },
              },
            ],
          },
        },
        {
          hosts: ['v1.domain.com'],
          // visibility unset: the upstream test skips SetDefaults, so this rule has no gateways.
          http: {
            paths: [
              {
                path: '/pets/',
                splits: [{ serviceNamespace: 'test-ns', serviceName: 'v1-service', servicePort: 80, percent: 100 }],
                appendHeaders: { foo: 'baz' },
              },
            ],
          },
        },
      ],
    },
  };

  it('builds the whole ingress VirtualService', () => {
    expect(makeIngressVirtualService(ing, gateways(['gateway.public'], ['gateway.private']))).toEqual({
      apiVersion: VS_API,
      kind: 'VirtualService',
      metadata: {
        name: 'test-ingress-ingress',
        namespace: 'knative-testing',
        labels: { [INGRESS_LABEL]: 'test-ingress' },
        ownerReferences: [ownerRef('test-ingress', 'uid-5')],
      },
      spec: {
        hosts: ['domain.com', 'test-route.test-ns', 'test-route.test-ns.svc', 'test-route.test-ns.svc.cluster.local', 'v1.domain.com'],
        gateways: ['gateway.public'],
        http: [
          {
            retries: {},
            match: [
              { uri: { prefix: '/pets/' }, authority: { prefix: 'domain.com' }, gateways: ['gateway.public'] },
              { uri: { prefix: '/pets/' }, authority: { prefix: 'test-route.test-ns' }, gateways: ['gateway.public'] },
            ],
            route: [
              {
                destination: { host: 'v2-service.test-ns.svc.cluster.local', port: { number: 80 } },
                weight: 100,
                headers: { request: { set: { ugh: 'blah' } } },
              },
            ],
            headers: { request: { set: { foo: 'bar' } } },
          },
          {
            retries: {},
            // Upstream's Go struct has `Gateways: []string{}`; Istio's jsonpb leaves the empty list out.
            match: [{ uri: { prefix: '/pets/' }, authority: { prefix: 'v1.domain.com' } }],
            route: [{ destination: { host: 'v1-service.test-ns.svc.cluster.local', port: { number: 80 } }, weight: 100 }],
            headers: { request: { set: { foo: 'baz' } } },
          },
        ],
      },
    });
  });
});

describe('Case 6: rewrite host, DomainMapping style (TestMakeVirtualServiceRoute_RewriteHost)', () => {
  const path: HTTPIngressPathLike = {
    rewriteHost: 'the.target.host',
    splits: [{ serviceNamespace: 'the-ns', serviceName: 'the-svc', servicePort: 8080, percent: 100 }],
  };
  const expectedRoute: HTTPRoute = {
    retries: {},
    match: [
      { gateways: ['gateway-1'], authority: { prefix: 'a.vanity.url' } },
      { gateways: ['gateway-1'], authority: { prefix: 'another.vanity.url' } },
    ],
    rewrite: { authority: 'the.target.host' },
    route: [{ destination: { host: 'the-svc.the-ns.svc.cluster.local', port: { number: 8080 } }, weight: 100 }],
  };

  it('builds the HTTPRoute', () => {
    expect(makeVirtualServiceRoute(['another.vanity.url', 'a.vanity.url'], path, ['gateway-1'])).toEqual(expectedRoute);
  });

  it('builds the whole ingress VirtualService', () => {
    const ing = ingress('a.vanity.url', [{ hosts: ['a.vanity.url', 'another.vanity.url'], visibility: 'ExternalIP', http: { paths: [path] } }], {
      namespace: 'the-ns',
    });
    expect(makeIngressVirtualService(ing, gateways(['gateway-1'], []))).toEqual({
      apiVersion: VS_API,
      kind: 'VirtualService',
      metadata: {
        name: 'a.vanity.url-ingress',
        namespace: 'the-ns',
        labels: { [INGRESS_LABEL]: 'a.vanity.url' },
        ownerReferences: [ownerRef('a.vanity.url', 'uid-a.vanity.url')],
      },
      spec: { hosts: ['a.vanity.url', 'another.vanity.url'], gateways: ['gateway-1'], http: [expectedRoute] },
    });
  });
});

describe('Case 7: whole-object metadata (TestMakeVirtualServices_CorrectMetadata)', () => {
  const routeLabels = { [ROUTE_LABEL]: 'test-route', [ROUTE_NS_LABEL]: 'test-ns' };
  const rule = (host: string): IngressRuleLike => ({ hosts: [host], visibility: 'ExternalIP', http: { paths: [] } });
  const localHosts = ['test-route.test-ns', 'test-route.test-ns.svc', 'test-route.test-ns.svc.cluster.local'];
  const vs = (name: string, namespace: string, owner: string, hosts: string[]) => ({
    apiVersion: VS_API,
    kind: 'VirtualService',
    metadata: { name, namespace, labels: { [INGRESS_LABEL]: owner, ...routeLabels }, ownerReferences: [ownerRef(owner, `uid-${owner}`)] },
    spec: { hosts },
  });

  it('mesh and ingress', () => {
    const ci = ingress('test', [rule('test-route.test-ns.svc.cluster.local')], {
      namespace: 'knative-testing',
      labels: { [INGRESS_LABEL]: 'test-ingress', ...routeLabels },
    });
    expect(makeVirtualServices(ci, gateways(['gateway'], ['private-gateway']), 'h')).toEqual([
      vs('test-mesh', 'knative-testing', 'test', localHosts),
      vs('test-ingress', 'knative-testing', 'test', localHosts),
    ]);
  });

  it('ingress only', () => {
    const ci = ingress('test', [rule('test-route.test-ns.example.com')], { namespace: 'knative-testing', labels: routeLabels });
    expect(makeVirtualServices(ci, gateways(['gateway'], ['private-gateway']), 'h')).toEqual([
      vs('test-ingress', 'knative-testing', 'test', ['test-route.test-ns.example.com']),
    ]);
  });

  it('mesh only (no gateways configured: mesh-only mode, hosts not expanded)', () => {
    const ci = ingress('test-ingress', [rule('test-route.test-ns.svc.cluster.local')], { namespace: undefined, labels: routeLabels });
    expect(makeVirtualServices(ci, gateways([], []), 'h')).toEqual([
      vs('test-ingress-mesh', 'knative-serving', 'test-ingress', ['test-route.test-ns.svc.cluster.local']),
    ]);
  });

  it('mesh only with namespace', () => {
    const ci = ingress('test-ingress', [rule('test-route.test-ns.svc.cluster.local')], { labels: routeLabels });
    expect(makeVirtualServices(ci, gateways([], []), 'h')).toEqual([
      vs('test-ingress-mesh', 'test-ns', 'test-ingress', ['test-route.test-ns.svc.cluster.local']),
    ]);
  });

  it('copies every annotation and keeps only the route labels', () => {
    const ci = ingress('test', [rule('a.example.com')], {
      labels: { ...routeLabels, other: 'dropped', [ROUTE_LABEL + 'x']: 'dropped' },
      annotations: { 'networking.knative.dev/ingress.class': 'istio.ingress.networking.knative.dev', 'custom/anno': 'kept' },
    });
    const out = makeIngressVirtualService(ci, gateways([INGRESS_GW], [LOCAL_GW]));
    expect(out.metadata.labels).toEqual({ [INGRESS_LABEL]: 'test', ...routeLabels });
    expect(out.metadata.annotations).toEqual({
      'networking.knative.dev/ingress.class': 'istio.ingress.networking.knative.dev',
      'custom/anno': 'kept',
    });
    expect(out.metadata.annotations).not.toBe(ci.metadata.annotations);
  });
});

// ---------------------------------------------------------------------------------------------------------------
// Case 8: end to end, a Route `test-route` in `test-ns` with default → v2 and tag v1 → v1 (serving
// TestMakeIngressSpecCorrectRules / ...WithTagBasedRouting), default config-istio, with the probe routes.

const HASH = createHash('sha256').update('tidal-case-8').digest('hex');
const revHeaders = (rev: string) => ({ 'Knative-Serving-Namespace': 'test-ns', 'Knative-Serving-Revision': rev });
const split = (rev: string) => ({ serviceNamespace: 'test-ns', serviceName: rev, servicePort: 80, percent: 100, appendHeaders: revHeaders(rev) });
const localHostsOf = (name: string) => [`${name}.test-ns`, `${name}.test-ns.svc`, `${name}.test-ns.svc.cluster.local`];
const dest = (rev: string) => ({
  destination: { host: `${rev}.test-ns.svc.cluster.local`, port: { number: 80 } },
  weight: 100,
  headers: { request: { set: revHeaders(rev) } },
});
const probeHeader = { 'K-Network-Hash': { exact: 'override' } };
const probeSet = { headers: { request: { set: { 'K-Network-Hash': HASH } } } };

function routeIngress(rules: IngressRuleLike[]): IngressLike {
  return {
    apiVersion: 'networking.internal.knative.dev/v1alpha1',
    kind: 'Ingress',
    metadata: {
      name: 'test-route',
      namespace: 'test-ns',
      uid: 'uid-test-route',
      labels: { [ROUTE_LABEL]: 'test-route', [ROUTE_NS_LABEL]: 'test-ns' },
      annotations: {
        'networking.knative.dev/ingress.class': 'istio.ingress.networking.knative.dev',
        'networking.internal.knative.dev/rollout': '{}',
      },
    },
    spec: { rules },
  };
}

const caseMetadata = (name: string) => ({
  name,
  namespace: 'test-ns',
  labels: { [INGRESS_LABEL]: 'test-route', [ROUTE_LABEL]: 'test-route', [ROUTE_NS_LABEL]: 'test-ns' },
  annotations: {
    'networking.knative.dev/ingress.class': 'istio.ingress.networking.knative.dev',
    'networking.internal.knative.dev/rollout': '{}',
  },
  ownerReferences: [ownerRef('test-route', 'uid-test-route')],
});

const allHosts = [
  'test-route.test-ns',
  'test-route.test-ns.example.com',
  'test-route.test-ns.svc',
  'test-route.test-ns.svc.cluster.local',
  'v1-test-route.test-ns',
  'v1-test-route.test-ns.example.com',
  'v1-test-route.test-ns.svc',
  'v1-test-route.test-ns.svc.cluster.local',
];
const meshHosts = [...localHostsOf('test-route'), ...localHostsOf('v1-test-route')];

describe('Case 8: end to end, Route with a tag', () => {
  const ing = routeIngress([
    { hosts: localHostsOf('test-route'), visibility: 'ClusterLocal', http: { paths: [{ splits: [split('v2')] }] } },
    { hosts: ['test-route.test-ns.example.com'], visibility: 'ExternalIP', http: { paths: [{ splits: [split('v2')] }] } },
    { hosts: localHostsOf('v1-test-route'), visibility: 'ClusterLocal', http: { paths: [{ splits: [split('v1')] }] } },
    { hosts: ['v1-test-route.test-ns.example.com'], visibility: 'ExternalIP', http: { paths: [{ splits: [split('v1')] }] } },
  ]);

  // A probe route followed by the real route, for one rule.
  const pair = (prefix: string, gateway: string, rev: string): HTTPRoute[] => [
    { retries: {}, match: [{ gateways: [gateway], authority: { prefix }, headers: probeHeader }], route: [dest(rev)], ...probeSet },
    { retries: {}, match: [{ gateways: [gateway], authority: { prefix } }], route: [dest(rev)] },
  ];

  it('makes the mesh VS (6 local hosts, 4 routes) then the ingress VS (8 hosts, 8 routes)', () => {
    expect(makeVirtualServices(ing, gateways([INGRESS_GW], [LOCAL_GW]), HASH)).toEqual([
      {
        apiVersion: VS_API,
        kind: 'VirtualService',
        metadata: caseMetadata('test-route-mesh'),
        spec: {
          hosts: meshHosts,
          gateways: ['mesh'],
          http: [...pair('test-route.test-ns', 'mesh', 'v2'), ...pair('v1-test-route.test-ns', 'mesh', 'v1')],
        },
      },
      {
        apiVersion: VS_API,
        kind: 'VirtualService',
        metadata: caseMetadata('test-route-ingress'),
        spec: {
          hosts: allHosts,
          gateways: [INGRESS_GW, LOCAL_GW],
          http: [
            ...pair('test-route.test-ns', LOCAL_GW, 'v2'),
            ...pair('test-route.test-ns.example.com', INGRESS_GW, 'v2'),
            ...pair('v1-test-route.test-ns', LOCAL_GW, 'v1'),
            ...pair('v1-test-route.test-ns.example.com', INGRESS_GW, 'v1'),
          ],
        },
      },
    ]);
  });

  it('does not modify the Ingress it is given', () => {
    const before = structuredClone(ing);
    makeVirtualServices(ing, gateways([INGRESS_GW], [LOCAL_GW]), HASH);
    expect(ing).toEqual(before);
  });
});

describe('Case 8 with tag-header-based-routing enabled', () => {
  const tagPath = { headers: { 'Knative-Serving-Tag': { exact: 'v1' } }, splits: [split('v1')] };
  const defaultPath = { appendHeaders: { 'Knative-Serving-Default-Route': 'true' }, splits: [split('v2')] };
  const tagHostPath = { appendHeaders: { 'Knative-Serving-Tag': 'v1' }, splits: [split('v1')] };
  const ing = routeIngress([
    { hosts: localHostsOf('test-route'), visibility: 'ClusterLocal', http: { paths: [tagPath, defaultPath] } },
    { hosts: ['test-route.test-ns.example.com'], visibility: 'ExternalIP', http: { paths: [tagPath, defaultPath] } },
    { hosts: localHostsOf('v1-test-route'), visibility: 'ClusterLocal', http: { paths: [tagHostPath] } },
    { hosts: ['v1-test-route.test-ns.example.com'], visibility: 'ExternalIP', http: { paths: [tagHostPath] } },
  ]);

  // Routes of a default-host rule: probe(tag path), probe(default path), tag path, default path.
  const defaultRule = (prefix: string, gateway: string): HTTPRoute[] => [
    {
      retries: {},
      // The probe copy of the tag path needs both header matches (net-istio PR #1349; hakn's v0.39.1 kept one).
      match: [
        { gateways: [gateway], authority: { prefix }, headers: { 'K-Network-Hash': { exact: 'override' }, 'Knative-Serving-Tag': { exact: 'v1' } } },
      ],
      route: [dest('v1')],
      ...probeSet,
    },
    {
      retries: {},
      match: [{ gateways: [gateway], authority: { prefix }, headers: probeHeader }],
      route: [dest('v2')],
      headers: { request: { set: { 'K-Network-Hash': HASH, 'Knative-Serving-Default-Route': 'true' } } },
    },
    {
      retries: {},
      match: [{ gateways: [gateway], authority: { prefix }, headers: { 'Knative-Serving-Tag': { exact: 'v1' } } }],
      route: [dest('v1')],
    },
    {
      retries: {},
      match: [{ gateways: [gateway], authority: { prefix } }],
      route: [dest('v2')],
      headers: { request: { set: { 'Knative-Serving-Default-Route': 'true' } } },
    },
  ];
  const tagRule = (prefix: string, gateway: string): HTTPRoute[] => [
    {
      retries: {},
      match: [{ gateways: [gateway], authority: { prefix }, headers: probeHeader }],
      route: [dest('v1')],
      headers: { request: { set: { 'K-Network-Hash': HASH, 'Knative-Serving-Tag': 'v1' } } },
    },
    {
      retries: {},
      match: [{ gateways: [gateway], authority: { prefix } }],
      route: [dest('v1')],
      headers: { request: { set: { 'Knative-Serving-Tag': 'v1' } } },
    },
  ];

  it('makes the mesh VS then the ingress VS with the tag-header paths and their probes', () => {
    expect(makeVirtualServices(ing, gateways([INGRESS_GW], [LOCAL_GW]), HASH)).toEqual([
      {
        apiVersion: VS_API,
        kind: 'VirtualService',
        metadata: caseMetadata('test-route-mesh'),
        spec: {
          hosts: meshHosts,
          gateways: ['mesh'],
          http: [...defaultRule('test-route.test-ns', 'mesh'), ...tagRule('v1-test-route.test-ns', 'mesh')],
        },
      },
      {
        apiVersion: VS_API,
        kind: 'VirtualService',
        metadata: caseMetadata('test-route-ingress'),
        spec: {
          hosts: allHosts,
          gateways: [INGRESS_GW, LOCAL_GW],
          http: [
            ...defaultRule('test-route.test-ns', LOCAL_GW),
            ...defaultRule('test-route.test-ns.example.com', INGRESS_GW),
            ...tagRule('v1-test-route.test-ns', LOCAL_GW),
            ...tagRule('v1-test-route.test-ns.example.com', INGRESS_GW),
          ],
        },
      },
    ]);
  });
});

// ---------------------------------------------------------------------------------------------------------------

describe('gateways per visibility (TestMakeVirtualServicesSpec_CorrectGateways, ...IngressVirtualServiceSpec_CorrectGateways)', () => {
  const http = { paths: [{ splits: [{ serviceNamespace: 'test', serviceName: 'test.svc.cluster.local', servicePort: 8080, percent: 100 }] }] };
  const gw = gateways(['knative-ingress-gateway/knative-serving'], ['knative-local-gateway/knative-serving']);

  it.each([
    [
      'local visibility',
      [{ hosts: ['test.svc.cluster.local'], visibility: 'ClusterLocal' as const, http }],
      ['knative-local-gateway/knative-serving'],
    ],
    ['public visibility', [{ hosts: ['test.example.com'], visibility: 'ExternalIP' as const, http }], ['knative-ingress-gateway/knative-serving']],
    [
      'local and public visibility',
      [
        { hosts: ['test.example.com'], visibility: 'ExternalIP' as const, http },
        { hosts: ['test.svc.cluster.local'], visibility: 'ClusterLocal' as const, http },
      ],
      ['knative-ingress-gateway/knative-serving', 'knative-local-gateway/knative-serving'],
    ],
  ])('%s', (_name, rules, expected) => {
    expect(makeIngressVirtualService(ingress('t', rules), gw).spec.gateways).toEqual(expected);
  });

  it('lists several gateways of one visibility, sorted, in the spec and in each match', () => {
    const ci = ingress('t', [{ hosts: ['test-route.test-ns.svc.cluster.local'], visibility: 'ExternalIP', http }]);
    const vs = makeIngressVirtualService(ci, gateways(['knative-testing/gateway-two', 'knative-testing/gateway-one'], []));
    expect(vs.spec.gateways).toEqual(['knative-testing/gateway-one', 'knative-testing/gateway-two']);
    expect(vs.spec.http?.[0]?.match?.[0]?.gateways).toEqual(['knative-testing/gateway-one', 'knative-testing/gateway-two']);
  });
});

describe('makeVirtualServices: which VirtualServices are made', () => {
  const http = { paths: [{ splits: [{ serviceNamespace: 'ns', serviceName: 'rev', servicePort: 80, percent: 100 }] }] };
  const names = (ci: IngressLike, opts: { ingressGateways: string[]; localGateways: string[] }) =>
    makeVirtualServices(ci, opts, 'h').map((v) => v.metadata.name);

  it('no ingress VS when a public-only Ingress has no ingress gateway', () => {
    expect(names(ingress('r', [{ hosts: ['r.ns.example.com'], visibility: 'ExternalIP', http }]), gateways([], [LOCAL_GW]))).toEqual([]);
  });

  it('an unset visibility counts as public', () => {
    expect(names(ingress('r', [{ hosts: ['r.ns.example.com'], http }]), gateways([INGRESS_GW], []))).toEqual(['r-ingress']);
  });

  it('a cluster-local rule needs a local gateway', () => {
    const ci = ingress('r', [{ hosts: ['r.ns.svc.cluster.local'], visibility: 'ClusterLocal', http }]);
    expect(names(ci, gateways([INGRESS_GW], []))).toEqual(['r-mesh']);
    expect(names(ci, gateways([], [LOCAL_GW]))).toEqual(['r-mesh', 'r-ingress']);
  });

  it('throws for a rule without an http block, as InsertProbe errors', () => {
    expect(() => makeVirtualServices(ingress('r', [{ hosts: ['a.b'] }]), gateways([INGRESS_GW], []), 'h')).toThrow(/missing HTTP block/);
  });
});

describe('insertProbe (knative/networking InsertProbe)', () => {
  it('prepends a probe copy of every path, keeping existing headers', () => {
    const ci = ingress('r', [
      {
        hosts: ['a.example.com'],
        http: {
          paths: [
            {
              path: '/x',
              headers: { h: { exact: 'v' } },
              appendHeaders: { a: 'b' },
              splits: [{ serviceNamespace: 'ns', serviceName: 's', servicePort: 80, percent: 100 }],
            },
          ],
        },
      },
    ]);
    const out = insertProbe(ci, 'HASH');
    expect(out.spec.rules?.[0]?.http?.paths).toEqual([
      {
        path: '/x',
        headers: { h: { exact: 'v' }, 'K-Network-Hash': { exact: 'override' } },
        appendHeaders: { a: 'b', 'K-Network-Hash': 'HASH' },
        splits: [{ serviceNamespace: 'ns', serviceName: 's', servicePort: 80, percent: 100 }],
      },
      {
        path: '/x',
        headers: { h: { exact: 'v' } },
        appendHeaders: { a: 'b' },
        splits: [{ serviceNamespace: 'ns', serviceName: 's', servicePort: 80, percent: 100 }],
      },
    ]);
    expect(ci.spec.rules?.[0]?.http?.paths).toHaveLength(1);
  });
});

describe('hosts and prefixes', () => {
  it('expandedHosts: x.ns.svc.cluster.local → x.ns, x.ns.svc and itself; public hosts unchanged', () => {
    expect(expandedHosts(['x.ns.svc.cluster.local', 'x.ns.example.com'])).toEqual(['x.ns', 'x.ns.example.com', 'x.ns.svc', 'x.ns.svc.cluster.local']);
  });

  it('expandedHosts drops candidates whose last label is all digits or longer than 63 characters', () => {
    const long = 'a'.repeat(64);
    expect(expandedHosts(['10.0.0.1', 'foo.123', `x.${long}`, 'ok.io', '123.svc.cluster.local'])).toEqual([
      '123.svc',
      '123.svc.cluster.local',
      'ok.io',
    ]);
  });

  it('expandedHosts follows the cluster domain', () => {
    expect(expandedHosts(['x.ns.svc.corp.internal'], 'corp.internal')).toEqual(['x.ns', 'x.ns.svc', 'x.ns.svc.corp.internal']);
    expect(serviceHostname('s', 'ns', 'corp.internal')).toBe('s.ns.svc.corp.internal');
  });

  it.each([
    [[], []],
    [['a'], ['a']],
    [
      ['a', 'b'],
      ['a', 'b'],
    ],
    [['a', 'ab', 'abc'], ['a']],
    [
      ['a', 'ab', 'abc', 'xyz', 'xy', 'm'],
      ['a', 'm', 'xy'],
    ],
  ])('distinctHostPrefixes(%j) = %j (TestGetDistinctHostPrefixes)', (input, out) => {
    expect(distinctHostPrefixes(input)).toEqual(out);
  });

  it('a prefix also covers host:port, so no port-stripping regex is needed', () => {
    const route = makeVirtualServiceRoute(['x.ns.svc.cluster.local'], { splits: [] }, ['mesh']);
    expect(route.match).toEqual([{ gateways: ['mesh'], authority: { prefix: 'x.ns' } }]);
  });

  it('reads a string servicePort as Go IntOrString.IntValue does', () => {
    const route = makeVirtualServiceRoute(['a.b'], { splits: [{ serviceNamespace: 'ns', serviceName: 's', servicePort: '8080', percent: 100 }] }, []);
    expect(route.route).toEqual([{ destination: { host: 's.ns.svc.cluster.local', port: { number: 8080 } }, weight: 100 }]);
  });
});

describe('names (kmeta.ChildName)', () => {
  it('suffixes -ingress and -mesh', () => {
    expect(ingressVirtualServiceName('hello')).toBe('hello-ingress');
    expect(meshVirtualServiceName('hello')).toBe('hello-mesh');
  });

  it('hashes names that would pass 63 characters', () => {
    const long = 'r'.repeat(60);
    const md5 = createHash('md5').update(long).digest('hex');
    expect(ingressVirtualServiceName(long)).toBe(`${long.slice(0, 63 - 32 - '-ingress'.length)}${md5}-ingress`);
    expect(meshVirtualServiceName(long)).toBe(`${long.slice(0, 63 - 32 - '-mesh'.length)}${md5}-mesh`);
    expect(ingressVirtualServiceName(long)).toHaveLength(63);
  });
});
