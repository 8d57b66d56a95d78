import { describe, expect, it } from 'vitest';
import type { Configuration, Revision, Route, TrafficTarget } from '../../../api/serving.js';
import {
  expandedHosts,
  httpOptionForRoute,
  ingressClassForRoute,
  InvalidHTTPProtocolError,
  makeIngress,
  makeIngressSpec,
  type TrafficHosts,
} from '../../../resources/ingress.js';
import { buildTrafficConfiguration, type TrafficConfig } from '../../../resources/traffic.js';

const NS = 'default';
const ISTIO = 'istio.ingress.networking.knative.dev';

function rev(name: string, h2c = false): Revision {
  return {
    apiVersion: 'serving.knative.dev/v1',
    kind: 'Revision',
    metadata: {
      name,
      namespace: NS,
      generation: 1,
      labels: { 'serving.knative.dev/configuration': 'hello', 'serving.knative.dev/service': 'hello' },
    },
    spec: { containers: [{ image: 'nginx', ...(h2c ? { ports: [{ name: 'h2c', containerPort: 8080 }] } : {}) }] },
    status: { observedGeneration: 1, conditions: [{ type: 'Ready', status: 'True' }] },
  };
}

const helloCfg: Configuration = {
  apiVersion: 'serving.knative.dev/v1',
  kind: 'Configuration',
  metadata: { name: 'hello', namespace: NS },
  spec: { template: { spec: { containers: [{ image: 'nginx' }] } } },
  status: { latestReadyRevisionName: 'hello-00002', conditions: [{ type: 'Ready', status: 'True' }] },
};

function route(traffic: TrafficTarget[], meta: { labels?: Record<string, string>; annotations?: Record<string, string> } = {}): Route {
  return {
    apiVersion: 'serving.knative.dev/v1',
    kind: 'Route',
    metadata: { name: 'hello', namespace: NS, uid: 'uid-route-hello', generation: 1, ...meta },
    spec: { traffic },
  };
}

function resolve(r: Route, revs: Revision[] = [rev('hello-00001'), rev('hello-00002')]): TrafficConfig {
  const { config, error } = buildTrafficConfiguration(r, { hello: helloCfg }, Object.fromEntries(revs.map((x) => [x.metadata.name!, x])));
  if (error) throw new Error(JSON.stringify(error));
  return config;
}

const hostsFor = (name: string, external = true): TrafficHosts => ({
  clusterLocal: `${name}.${NS}.svc.cluster.local`,
  external: external ? [`${name}.${NS}.example.com`] : [],
});

const revHeaders = (r: string) => ({ 'Knative-Serving-Revision': r, 'Knative-Serving-Namespace': NS });
const split = (r: string, percent: number, port = 80) => ({
  serviceNamespace: NS,
  serviceName: r,
  servicePort: port,
  percent,
  appendHeaders: revHeaders(r),
});
const localHosts = (name: string) => [`${name}.${NS}`, `${name}.${NS}.svc`, `${name}.${NS}.svc.cluster.local`];
const ownerRef = {
  apiVersion: 'serving.knative.dev/v1',
  kind: 'Route',
  name: 'hello',
  uid: 'uid-route-hello',
  controller: true,
  blockOwnerDeletion: true,
};

describe('makeIngress metadata', () => {
  it('named like the Route, route labels, ingress.class, rollout JSON, tag-to-host, controller ownerRef (golden)', () => {
    const r = route(
      [
        { configurationName: 'hello', latestRevision: true, percent: 100 },
        { revisionName: 'hello-00001', latestRevision: false, percent: 0, tag: 'old' },
      ],
      {
        labels: { team: 'a', 'serving.knative.dev/route': 'try-to-override', 'serving.knative.dev/routeNamespace': 'try-to-override' },
        annotations: {
          'kubectl.kubernetes.io/last-applied-configuration': '{}',
          'networking.knative.dev/certificate-class': 'x',
          note: 'kept',
        },
      },
    );
    const ing = makeIngress(r, resolve(r), { '': hostsFor('hello'), old: hostsFor('old-hello') }, ISTIO);
    expect(ing).toEqual({
      apiVersion: 'networking.internal.knative.dev/v1alpha1',
      kind: 'Ingress',
      metadata: {
        name: 'hello',
        namespace: NS,
        labels: { team: 'a', 'serving.knative.dev/route': 'hello', 'serving.knative.dev/routeNamespace': NS },
        annotations: {
          'networking.knative.dev/ingress.class': ISTIO,
          'networking.internal.knative.dev/rollout':
            '{"configurations":[{"configurationName":"hello","percent":100,"revisions":[{"revisionName":"hello-00002","percent":100}],"stepParams":{}}]}',
          'networking.internal.knative.dev/tag-to-host': '{"old":["old-hello.default.example.com","old-hello.default.svc.cluster.local"]}',
          note: 'kept',
        },
        ownerReferences: [ownerRef],
      },
      spec: {
        rules: [
          { hosts: localHosts('hello'), visibility: 'ClusterLocal', http: { paths: [{ splits: [split('hello-00002', 100)] }] } },
          { hosts: ['hello.default.example.com'], visibility: 'ExternalIP', http: { paths: [{ splits: [split('hello-00002', 100)] }] } },
          { hosts: localHosts('old-hello'), visibility: 'ClusterLocal', http: { paths: [{ splits: [split('hello-00001', 100)] }] } },
          { hosts: ['old-hello.default.example.com'], visibility: 'ExternalIP', http: { paths: [{ splits: [split('hello-00001', 100)] }] } },
        ],
        httpOption: 'Enabled',
      },
    });
  });

  it("the Route's ingress.class annotation beats config; the alternative key is honoured and dropped", () => {
    const r = route([{ revisionName: 'hello-00001', percent: 100 }], {
      annotations: { 'networking.knative.dev/ingress.class': 'kourier.ingress.networking.knative.dev' },
    });
    expect(makeIngress(r, resolve(r), { '': hostsFor('hello') }, ISTIO).metadata.annotations).toEqual({
      'networking.knative.dev/ingress.class': 'kourier.ingress.networking.knative.dev',
      'networking.internal.knative.dev/rollout': '{}',
    });
    const alt = route([{ revisionName: 'hello-00001', percent: 100 }], {
      annotations: { 'networking.knative.dev/ingress-class': 'contour.ingress.networking.knative.dev' },
    });
    expect(makeIngress(alt, resolve(alt), { '': hostsFor('hello') }, ISTIO).metadata.annotations).toEqual({
      'networking.knative.dev/ingress.class': 'contour.ingress.networking.knative.dev',
      'networking.internal.knative.dev/rollout': '{}',
    });
    expect(ingressClassForRoute(route([]), ISTIO)).toBe(ISTIO);
    expect(ingressClassForRoute(route([], { annotations: { 'networking.knative.dev/ingress.class': '' } }), ISTIO)).toBe(ISTIO);
  });

  it('no tags → no tag-to-host annotation; no labels on the Route → only the two route labels', () => {
    const r = route([{ configurationName: 'hello', percent: 100 }]);
    const ing = makeIngress(r, resolve(r), { '': hostsFor('hello') }, ISTIO);
    expect(Object.keys(ing.metadata.annotations!)).toEqual(['networking.knative.dev/ingress.class', 'networking.internal.knative.dev/rollout']);
    expect(ing.metadata.labels).toEqual({ 'serving.knative.dev/route': 'hello', 'serving.knative.dev/routeNamespace': NS });
  });
});

describe('makeIngressSpec rules and splits', () => {
  it('cluster-local rule with expanded hosts + one external rule per host; 0 % omitted; h2c on 81 (golden)', () => {
    const r = route([
      { configurationName: 'hello', latestRevision: true, percent: 80 },
      { revisionName: 'hello-00001', latestRevision: false, percent: 20 },
      { revisionName: 'hello-00003', latestRevision: false, percent: 0 },
    ]);
    const config = resolve(r, [rev('hello-00001'), rev('hello-00002', true), rev('hello-00003')]);
    const spec = makeIngressSpec(r, config, {
      '': { clusterLocal: 'hello.default.svc.cluster.local', external: ['hello.default.example.com', 'hello.example.org'] },
    });
    const paths = [{ splits: [split('hello-00002', 80, 81), split('hello-00001', 20)] }];
    expect(spec).toEqual({
      rules: [
        { hosts: ['hello.default', 'hello.default.svc', 'hello.default.svc.cluster.local'], visibility: 'ClusterLocal', http: { paths } },
        { hosts: ['hello.default.example.com'], visibility: 'ExternalIP', http: { paths } },
        { hosts: ['hello.example.org'], visibility: 'ExternalIP', http: { paths } },
      ],
      httpOption: 'Enabled',
    });
  });

  it('a cluster-local name gets only the ClusterLocal rule', () => {
    const r = route([
      { configurationName: 'hello', percent: 100 },
      { revisionName: 'hello-00001', percent: 0, tag: 'internal' },
    ]);
    const spec = makeIngressSpec(r, resolve(r), { '': hostsFor('hello'), internal: hostsFor('internal-hello', false) });
    expect(spec.rules!.map((x) => [x.visibility, x.hosts])).toEqual([
      ['ClusterLocal', localHosts('hello')],
      ['ExternalIP', ['hello.default.example.com']],
      ['ClusterLocal', localHosts('internal-hello')],
    ]);
  });

  it("a tag's path sends 100 % to its revision regardless of its percent", () => {
    const r = route([
      { configurationName: 'hello', latestRevision: true, percent: 90, tag: 'current' },
      { revisionName: 'hello-00001', latestRevision: false, percent: 10, tag: 'old' },
    ]);
    const spec = makeIngressSpec(r, resolve(r), { '': hostsFor('hello'), current: hostsFor('current-hello'), old: hostsFor('old-hello') });
    const byHost = Object.fromEntries(spec.rules!.map((x) => [x.hosts![0], x.http!.paths[0]!.splits]));
    expect(byHost['hello.default']).toEqual([split('hello-00002', 90), split('hello-00001', 10)]);
    expect(byHost['current-hello.default']).toEqual([split('hello-00002', 100)]);
    expect(byHost['old-hello.default.example.com']).toEqual([split('hello-00001', 100)]);
  });

  it('tag-header-based routing only when enabled: default paths get Default-Route and per-tag header paths; tag rules append their tag (golden)', () => {
    const r = route([
      { configurationName: 'hello', latestRevision: true, percent: 100 },
      { revisionName: 'hello-00001', latestRevision: false, percent: 0, tag: 'v1' },
    ]);
    const config = resolve(r);
    const hosts = { '': hostsFor('hello'), v1: hostsFor('v1-hello') };
    const off = makeIngressSpec(r, config, hosts);
    expect(off.rules!.every((x) => x.http!.paths.length === 1 && !x.http!.paths[0]!.appendHeaders && !x.http!.paths[0]!.headers)).toBe(true);

    const on = makeIngressSpec(r, config, hosts, { tagHeaderBasedRouting: true });
    const defaultPaths = [
      { headers: { 'Knative-Serving-Tag': { exact: 'v1' } }, splits: [split('hello-00001', 100)] },
      { splits: [split('hello-00002', 100)], appendHeaders: { 'Knative-Serving-Default-Route': 'true' } },
    ];
    const tagPaths = [{ splits: [split('hello-00001', 100)], appendHeaders: { 'Knative-Serving-Tag': 'v1' } }];
    expect(on.rules).toEqual([
      { hosts: localHosts('hello'), visibility: 'ClusterLocal', http: { paths: defaultPaths } },
      { hosts: ['hello.default.example.com'], visibility: 'ExternalIP', http: { paths: defaultPaths } },
      { hosts: localHosts('v1-hello'), visibility: 'ClusterLocal', http: { paths: tagPaths } },
      { hosts: ['v1-hello.default.example.com'], visibility: 'ExternalIP', http: { paths: tagPaths } },
    ]);
  });

  it('httpOption: the Route annotation (httpOption, then http-protocol, case-insensitive) beats config; invalid throws', () => {
    expect(httpOptionForRoute(route([]), 'Enabled')).toBe('Enabled');
    expect(httpOptionForRoute(route([]), 'Redirected')).toBe('Redirected');
    expect(httpOptionForRoute(route([], { annotations: { 'networking.knative.dev/http-protocol': 'Redirected' } }), 'Enabled')).toBe('Redirected');
    expect(
      httpOptionForRoute(
        route([], { annotations: { 'networking.knative.dev/httpOption': 'enabled', 'networking.knative.dev/http-protocol': 'redirected' } }),
        'Redirected',
      ),
    ).toBe('Enabled');
    expect(() => httpOptionForRoute(route([], { annotations: { 'networking.knative.dev/http-protocol': 'Disabled' } }), 'Enabled')).toThrow(
      new InvalidHTTPProtocolError('disabled'),
    );
    const r = route([{ revisionName: 'hello-00001', percent: 100 }]);
    expect(
      makeIngressSpec(
        r,
        resolve(r),
        { '': hostsFor('hello') },
        { httpOption: 'Redirected', tls: [{ hosts: ['hello.default.example.com'], secretName: 's', secretNamespace: NS }] },
      ),
    ).toMatchObject({
      tls: [{ hosts: ['hello.default.example.com'], secretName: 's', secretNamespace: NS }],
      httpOption: 'Redirected',
    });
  });

  it('a rollout of two or more revisions expands the latestRevision split', () => {
    const r = route([{ configurationName: 'hello', latestRevision: true, percent: 100 }]);
    const spec = makeIngressSpec(
      r,
      resolve(r),
      { '': hostsFor('hello') },
      {
        rollout: {
          configurations: [
            {
              configurationName: 'hello',
              percent: 100,
              revisions: [
                { revisionName: 'hello-00001', percent: 99 },
                { revisionName: 'hello-00002', percent: 1 },
              ],
              stepParams: {},
            },
          ],
        },
      },
    );
    expect(spec.rules![0]!.http!.paths[0]!.splits).toEqual([split('hello-00001', 99), split('hello-00002', 1)]);
  });

  it('a traffic name without hosts is a programming error', () => {
    const r = route([{ revisionName: 'hello-00001', percent: 100 }]);
    expect(() => makeIngressSpec(r, resolve(r), {})).toThrow(/no hosts given for traffic target ""/);
  });
});

describe('expandedHosts (knative/networking ExpandedHosts)', () => {
  it('adds the short forms of cluster-local names, sorted; keeps other hosts as they are', () => {
    expect(expandedHosts(['hello.default.svc.cluster.local'])).toEqual(['hello.default', 'hello.default.svc', 'hello.default.svc.cluster.local']);
    expect(expandedHosts(['a.b.svc.corp.internal'], 'corp.internal')).toEqual(['a.b', 'a.b.svc', 'a.b.svc.corp.internal']);
    expect(expandedHosts(['hello.default.example.com'])).toEqual(['hello.default.example.com']);
  });

  it('drops forms whose TLD is all digits', () => {
    expect(expandedHosts(['foo.1234.svc.cluster.local'])).toEqual(['foo.1234.svc', 'foo.1234.svc.cluster.local']);
  });
});
