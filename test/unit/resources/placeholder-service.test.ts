import { describe, expect, it } from 'vitest';
import type { Ingress } from '../../../api/networking.js';
import type { Route } from '../../../api/serving.js';
import {
  makeLoadBalancedPlaceholder,
  makePlaceholderService,
  minVisibility,
  orphanedPlaceholders,
  placeholderServiceName,
  placeholderUpdate,
  placeholderVisibility,
  withLiveMetadata,
} from '../../../resources/placeholder-service.js';

const route: Route = {
  apiVersion: 'serving.knative.dev/v1',
  kind: 'Route',
  metadata: {
    name: 'hello',
    namespace: 'default',
    uid: 'uid-route-hello',
    labels: { 'serving.knative.dev/service': 'hello', 'networking.knative.dev/visibility': 'cluster-local', team: 'a' },
    annotations: { 'serving.knative.dev/creator': 'alice' },
  },
  spec: { traffic: [{ configurationName: 'hello', latestRevision: true, percent: 100 }] },
};

const metadata = (name: string) => ({
  name,
  namespace: 'default',
  labels: { 'serving.knative.dev/service': 'hello', team: 'a', 'serving.knative.dev/route': 'hello' },
  annotations: { 'serving.knative.dev/creator': 'alice' },
  ownerReferences: [
    { apiVersion: 'serving.knative.dev/v1', kind: 'Route', name: 'hello', uid: 'uid-route-hello', controller: true, blockOwnerDeletion: true },
  ],
});
const h2c = { name: 'http2', appProtocol: 'kubernetes.io/h2c', port: 80, targetPort: 80 };

describe('makePlaceholderService', () => {
  it('the default target: named like the Route, ExternalName to its domain, owned, labelled S/route (golden)', () => {
    expect(makePlaceholderService(route, '', 'hello.default.example.com')).toEqual({
      apiVersion: 'v1',
      kind: 'Service',
      metadata: metadata('hello'),
      spec: { type: 'ExternalName', externalName: 'hello.default.example.com', sessionAffinity: 'None', ports: [h2c] },
    });
  });

  it('a tag: named <tag>-<route>, ExternalName to the tag domain (golden)', () => {
    expect(makePlaceholderService(route, 'canary', 'canary-hello.default.example.com')).toEqual({
      apiVersion: 'v1',
      kind: 'Service',
      metadata: metadata('canary-hello'),
      spec: { type: 'ExternalName', externalName: 'canary-hello.default.example.com', sessionAffinity: 'None', ports: [h2c] },
    });
  });

  it('a custom tag-template hostname is used as the name; a Route without annotations gives none', () => {
    const bare: Route = { ...route, metadata: { name: 'hello', namespace: 'default', uid: 'u' } };
    const svc = makePlaceholderService(bare, 'canary', 'hello-canary.default.example.com', 'hello-canary');
    expect(svc.metadata.name).toBe('hello-canary');
    expect(svc.metadata.labels).toEqual({ 'serving.knative.dev/route': 'hello' });
    expect(svc.metadata.annotations).toBeUndefined();
    expect(placeholderServiceName('hello', '')).toBe('hello');
    expect(placeholderServiceName('hello', 'v2')).toBe('v2-hello');
  });
});

describe('placeholder visibility', () => {
  it("the Route's visibility label is not copied; a placeholder carrying one makes its name cluster-local", () => {
    expect(makePlaceholderService(route, 'v1', 'v1-hello.default.svc.cluster.local').metadata.labels).not.toHaveProperty(
      'networking.knative.dev/visibility',
    );
    expect(placeholderVisibility(undefined)).toBe('ExternalIP');
    expect(placeholderVisibility({ metadata: { labels: { 'networking.knative.dev/visibility': 'cluster-local' } } })).toBe('ClusterLocal');
    expect(placeholderVisibility({ metadata: { labels: { 'networking.knative.dev/visibility': '' } } })).toBe('ExternalIP');
    expect(minVisibility('ExternalIP', 'ClusterLocal')).toBe('ClusterLocal');
    expect(minVisibility('ClusterLocal', 'ExternalIP')).toBe('ClusterLocal');
    expect(minVisibility('ExternalIP', 'ExternalIP')).toBe('ExternalIP');
  });
});

describe('makeLoadBalancedPlaceholder', () => {
  const ing = (status: Ingress['status']): Pick<Ingress, 'metadata' | 'status'> => ({ metadata: { name: 'hello', namespace: 'default' }, status });

  it('private domainInternal preferred → ExternalName to it', () => {
    const got = makeLoadBalancedPlaceholder(
      route,
      '',
      ing({
        publicLoadBalancer: { ingress: [{ domainInternal: 'istio-ingressgateway.istio-system.svc.cluster.local' }] },
        privateLoadBalancer: { ingress: [{ domainInternal: 'knative-local-gateway.istio-system.svc.cluster.local' }] },
      }),
      false,
    );
    expect(got).toEqual({
      ok: true,
      service: {
        apiVersion: 'v1',
        kind: 'Service',
        metadata: metadata('hello'),
        spec: { type: 'ExternalName', externalName: 'knative-local-gateway.istio-system.svc.cluster.local', sessionAffinity: 'None', ports: [h2c] },
      },
    });
  });

  it('an LB IP → headless ClusterIP + Endpoints (golden)', () => {
    const got = makeLoadBalancedPlaceholder(route, 'v1', ing({ publicLoadBalancer: { ingress: [{ ip: '10.0.0.7' }] } }), false);
    expect(got).toEqual({
      ok: true,
      service: { apiVersion: 'v1', kind: 'Service', metadata: metadata('v1-hello'), spec: { type: 'ClusterIP', clusterIP: 'None', ports: [h2c] } },
      endpoints: {
        apiVersion: 'v1',
        kind: 'Endpoints',
        metadata: metadata('v1-hello'),
        subsets: [{ addresses: [{ ip: '10.0.0.7' }], ports: [{ name: 'http2', port: 80 }] }],
      },
    });
  });

  it('domain → ExternalName; meshOnly → ClusterIP http 80', () => {
    const dom = makeLoadBalancedPlaceholder(route, '', ing({ publicLoadBalancer: { ingress: [{ domain: 'lb.example.com' }] } }), false);
    expect(dom.ok && dom.service.spec).toEqual({ type: 'ExternalName', externalName: 'lb.example.com', ports: [h2c] });
    const mesh = makeLoadBalancedPlaceholder(route, '', ing({ publicLoadBalancer: { ingress: [{ meshOnly: true }] } }), false);
    expect(mesh.ok && mesh.service.spec).toEqual({ type: 'ClusterIP', ports: [{ name: 'http', port: 80 }] });
  });

  it('cluster-local names use the private LB; none or several is an error', () => {
    expect(makeLoadBalancedPlaceholder(route, '', ing({ publicLoadBalancer: { ingress: [{ ip: '1.2.3.4' }] } }), true)).toEqual({
      ok: false,
      error: 'failed to fetch loadbalancer domain/IP from ingress status',
    });
    expect(makeLoadBalancedPlaceholder(route, '', ing({ publicLoadBalancer: { ingress: [{ ip: '1.2.3.4' }, { ip: '1.2.3.5' }] } }), false)).toEqual({
      ok: false,
      error: 'more than one ingress are specified in status(LoadBalancer) of Ingress hello',
    });
    expect(makeLoadBalancedPlaceholder(route, '', ing({ publicLoadBalancer: { ingress: [{}] } }), false)).toEqual({
      ok: false,
      error: 'failed to fetch loadbalancer domain/IP from ingress status',
    });
  });
});

describe('placeholderUpdate (upstream updatePlaceholderServices type rules)', () => {
  const external = makePlaceholderService(route, '', 'hello.default.example.com');
  const headless = { spec: { type: 'ClusterIP' as const, clusterIP: 'None', ports: [h2c] } };
  const meshOnly = { spec: { type: 'ClusterIP' as const, ports: [{ name: 'http', port: 80 }] } };

  it('ExternalName → anything, and same-type changes, are updated in place', () => {
    expect(placeholderUpdate({ spec: { type: 'ExternalName' } }, headless)).toBe('inPlace');
    expect(placeholderUpdate({ spec: { type: 'ExternalName' } }, external)).toBe('inPlace');
    expect(placeholderUpdate({ spec: { type: 'ClusterIP', clusterIP: 'None' } }, headless)).toBe('inPlace');
    expect(placeholderUpdate({ spec: { type: 'ClusterIP', clusterIP: '10.96.0.12' } }, meshOnly)).toBe('inPlace');
  });

  it('ClusterIP → ExternalName, and a cluster IP change, need delete + create', () => {
    expect(placeholderUpdate({ spec: { type: 'ClusterIP', clusterIP: 'None' } }, external)).toBe('recreate');
    expect(placeholderUpdate({ spec: { type: 'ClusterIP', clusterIP: 'None' } }, meshOnly)).toBe('recreate');
    expect(placeholderUpdate({ spec: { type: 'ClusterIP', clusterIP: '10.96.0.12' } }, headless)).toBe('recreate');
  });
});

describe('orphanedPlaceholders (upstream deleteOrphanedServices)', () => {
  it('the labelled Services the Route controls that no traffic name wants; never a foreign one', () => {
    const mine = (name: string) => ({ apiVersion: 'v1', kind: 'Service', metadata: metadata(name) });
    const foreign = { apiVersion: 'v1', kind: 'Service', metadata: { name: 'x-hello', labels: { 'serving.knative.dev/route': 'hello' } } };
    expect(orphanedPlaceholders([mine('hello'), mine('v2-hello'), mine('v1-hello'), foreign], 'uid-route-hello', new Set(['hello']))).toEqual([
      'v1-hello',
      'v2-hello',
    ]);
    expect(orphanedPlaceholders([mine('v1-hello')], undefined, new Set())).toEqual([]);
  });
});

describe('withLiveMetadata (upstream kmap.Union of the live and desired placeholder metadata)', () => {
  it("keeps the live labels and annotations the desired object lacks; the desired object's values win", () => {
    const desired = makePlaceholderService(route, '', 'istio-ingressgateway.istio-system.svc.cluster.local');
    const live = {
      metadata: {
        labels: { juicy: 'jamba', team: 'b' },
        annotations: { juicy: 'jamba', 'serving.knative.dev/creator': 'bob' },
      },
    };
    const merged = withLiveMetadata(live, desired);
    expect(merged.metadata.labels).toEqual({ ...desired.metadata.labels, juicy: 'jamba' });
    expect(merged.metadata.annotations).toEqual({ ...desired.metadata.annotations, juicy: 'jamba' });
    expect(merged.spec).toEqual(desired.spec);
    expect(withLiveMetadata(undefined, desired)).toBe(desired);
  });
});
