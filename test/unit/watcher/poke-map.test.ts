import { describe, expect, it } from 'vitest';
import type { EntityKind } from '../../../api/entity.js';
import type { KubeObject } from '../../../api/meta.js';
import { pokeTargets, reconcilerOf, type EntityLookup } from '../../../watcher/poke-map.js';

const all = new Set<EntityKind>(['Service', 'Configuration', 'Revision', 'Route']);
const owned = (kind: string, name: string, ownerKind: string, owner: string, apiVersion = 'serving.knative.dev/v1'): KubeObject => ({
  apiVersion: 'x',
  kind,
  metadata: { name, namespace: 'ns', ownerReferences: [{ apiVersion, kind: ownerKind, name: owner, uid: 'u', controller: true }] },
});

describe('pokeTargets', () => {
  it('a Service pokes itself', () => {
    expect(pokeTargets('Service', { apiVersion: 'v', kind: 'Service', metadata: { name: 's', namespace: 'ns' } }, all)).toEqual([
      { kind: 'Service', key: { namespace: 'ns', name: 's' } },
    ]);
  });

  it('a Configuration controlled by a Service pokes only that Service, which reconciles it (ADR 0005)', () => {
    expect(pokeTargets('Configuration', owned('Configuration', 'c', 'Service', 's'), all)).toEqual([
      { kind: 'Service', key: { namespace: 'ns', name: 's' } },
    ]);
  });

  it('a Configuration or Route nobody controls pokes its own workflow', () => {
    const bare = (kind: string): KubeObject => ({ apiVersion: 'serving.knative.dev/v1', kind, metadata: { name: 'x', namespace: 'ns' } });
    expect(pokeTargets('Configuration', bare('Configuration'), all)).toEqual([{ kind: 'Configuration', key: { namespace: 'ns', name: 'x' } }]);
    expect(pokeTargets('Route', bare('Route'), all)).toEqual([{ kind: 'Route', key: { namespace: 'ns', name: 'x' } }]);
    // A controller of another kind or group does not take it over.
    expect(pokeTargets('Route', owned('Route', 'x', 'Service', 's', 'other.io/v1'), all)).toEqual([
      { kind: 'Route', key: { namespace: 'ns', name: 'x' } },
    ]);
  });

  it('a Deployment pokes its Revision; an owner from another API group is ignored', () => {
    expect(pokeTargets('Deployment', owned('Deployment', 'd', 'Revision', 'r'), all)).toEqual([
      { kind: 'Revision', key: { namespace: 'ns', name: 'r' } },
    ]);
    expect(pokeTargets('Deployment', owned('Deployment', 'd', 'Revision', 'r', 'other.io/v1'), all)).toEqual([]);
  });

  it("an HPA pokes the Revision that controls it (its status is the Revision's replica counts)", () => {
    expect(pokeTargets('HorizontalPodAutoscaler', owned('HorizontalPodAutoscaler', 'r', 'Revision', 'r'), all)).toEqual([
      { kind: 'Revision', key: { namespace: 'ns', name: 'r' } },
    ]);
    expect(pokeTargets('HorizontalPodAutoscaler', owned('HorizontalPodAutoscaler', 'r', 'Revision', 'r', 'other.io/v1'), all)).toEqual([]);
  });

  it('a PodDisruptionBudget pokes the Revision that controls it (an edit or deletion is repaired by its pass)', () => {
    expect(pokeTargets('PodDisruptionBudget', owned('PodDisruptionBudget', 'r', 'Revision', 'r'), all)).toEqual([
      { kind: 'Revision', key: { namespace: 'ns', name: 'r' } },
    ]);
    expect(pokeTargets('PodDisruptionBudget', owned('PodDisruptionBudget', 'r', 'Revision', 'r', 'other.io/v1'), all)).toEqual([]);
  });

  it('a placeholder Service pokes its controlling Route', () => {
    expect(pokeTargets('KubeService', owned('Service', 'web-tag', 'Route', 'web'), all)).toEqual([
      { kind: 'Route', key: { namespace: 'ns', name: 'web' } },
    ]);
    expect(pokeTargets('KubeService', owned('Service', 'x', 'Route', 'web', 'other.io/v1'), all)).toEqual([]);
  });

  it("a Revision's Service pokes its controlling Revision (one deleted by hand or by the garbage collector is made again)", () => {
    expect(pokeTargets('RevisionService', owned('Service', 'r-00001', 'Revision', 'r-00001'), all)).toEqual([
      { kind: 'Revision', key: { namespace: 'ns', name: 'r-00001' } },
    ]);
    expect(pokeTargets('RevisionService', owned('Service', 'r-00001', 'Route', 'r'), all)).toEqual([]);
    expect(pokeTargets('RevisionService', owned('Service', 'r-00001', 'Revision', 'r-00001', 'other.io/v1'), all)).toEqual([]);
  });

  it('a VirtualService pokes the workflow that programs its KIngress (the Route, or the Service above it)', () => {
    const withIngress = new Set<EntityKind>([...all, 'Ingress']);
    const vs = owned('VirtualService', 'web-ingress', 'Ingress', 'web', 'networking.internal.knative.dev/v1alpha1');
    expect(pokeTargets('VirtualService', vs, withIngress)).toEqual([{ kind: 'Ingress', key: { namespace: 'ns', name: 'web' } }]);
    // Resolved through the caches: the KIngress is its Route's, the Route its Service's (ADR 0005).
    const ingress = owned('Ingress', 'web', 'Route', 'web');
    const route = owned('Route', 'web', 'Service', 'web');
    const service: KubeObject = { apiVersion: 'serving.knative.dev/v1', kind: 'Service', metadata: { name: 'web', namespace: 'ns' } };
    const lookup = (kind: string) => (kind === 'Ingress' ? ingress : kind === 'Route' ? route : kind === 'Service' ? service : undefined);
    expect(pokeTargets('VirtualService', vs, withIngress, lookup)).toEqual([{ kind: 'Service', key: { namespace: 'ns', name: 'web' } }]);
    // Not a KIngress's (another group's Ingress): nobody's.
    expect(pokeTargets('VirtualService', owned('VirtualService', 'x', 'Ingress', 'web', 'networking.k8s.io/v1'), withIngress)).toEqual([]);
  });

  it("a Certificate pokes its Route's reconciler (the Service above it) or its DomainMapping", () => {
    const withDm = new Set<EntityKind>([...all, 'DomainMapping']);
    const route = owned('Route', 'web', 'Service', 'web');
    const service: KubeObject = { apiVersion: 'serving.knative.dev/v1', kind: 'Service', metadata: { name: 'web', namespace: 'ns' } };
    const lookup = (kind: string) => (kind === 'Route' ? route : kind === 'Service' ? service : undefined);
    expect(pokeTargets('Certificate', owned('Certificate', 'route-u', 'Route', 'web'), withDm, lookup)).toEqual([
      { kind: 'Service', key: { namespace: 'ns', name: 'web' } },
    ]);
    expect(
      pokeTargets('Certificate', owned('Certificate', 'a.example', 'DomainMapping', 'a.example', 'serving.knative.dev/v1beta1'), withDm),
    ).toEqual([{ kind: 'DomainMapping', key: { namespace: 'ns', name: 'a.example' } }]);
    expect(pokeTargets('Certificate', owned('Certificate', 'x', 'Route', 'web', 'other.io/v1'), withDm)).toEqual([]);
  });

  it('a cert-manager Certificate pokes the Route or DomainMapping its labels name (copied from its Knative Certificate)', () => {
    const withDm = new Set<EntityKind>([...all, 'DomainMapping']);
    const cm = (labels: Record<string, string>): KubeObject => ({
      apiVersion: 'cert-manager.io/v1',
      kind: 'Certificate',
      metadata: { name: 'c', namespace: 'ns', labels },
    });
    expect(pokeTargets('CertManagerCertificate', cm({ 'serving.knative.dev/route': 'web' }), withDm)).toEqual([
      { kind: 'Route', key: { namespace: 'ns', name: 'web' } },
    ]);
    expect(pokeTargets('CertManagerCertificate', cm({ 'serving.knative.dev/domainMappingUID': 'a.example' }), withDm)).toEqual([
      { kind: 'DomainMapping', key: { namespace: 'ns', name: 'a.example' } },
    ]);
    expect(pokeTargets('CertManagerCertificate', cm({}), withDm)).toEqual([]);
  });

  it('a Pod pokes the Revision named by its label', () => {
    const pod: KubeObject = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'p', namespace: 'ns', labels: { 'serving.knative.dev/revision': 'r-00001' } },
    };
    expect(pokeTargets('Pod', pod, all)).toEqual([{ kind: 'Revision', key: { namespace: 'ns', name: 'r-00001' } }]);
  });

  it('only kinds whose workflows run are poked; an owner whose workflow does not run leaves the child its own', () => {
    expect(pokeTargets('Revision', owned('Revision', 'r', 'Configuration', 'c'), new Set<EntityKind>(['Service']))).toEqual([]);
    expect(pokeTargets('Configuration', owned('Configuration', 'c', 'Service', 's'), new Set<EntityKind>(['Configuration']))).toEqual([
      { kind: 'Configuration', key: { namespace: 'ns', name: 'c' } },
    ]);
  });
});

describe('pokeTargets resolved through the caches (ADR 0005)', () => {
  const withLabels = (o: KubeObject, labels: Record<string, string>): KubeObject => ({ ...o, metadata: { ...o.metadata, labels } });
  const cache = new Map<string, KubeObject>([
    ['Service/ns/s', { apiVersion: 'serving.knative.dev/v1', kind: 'Service', metadata: { name: 's', namespace: 'ns' } }],
    ['Configuration/ns/s', owned('Configuration', 's', 'Service', 's')],
    ['Route/ns/s', owned('Route', 's', 'Service', 's')],
    ['Route/ns/lone', { apiVersion: 'serving.knative.dev/v1', kind: 'Route', metadata: { name: 'lone', namespace: 'ns' } }],
  ]);
  const lookup: EntityLookup = (kind, key) => cache.get(`${kind}/${key.namespace}/${key.name}`);
  const five = new Set<EntityKind>(['Service', 'Configuration', 'Revision', 'Route', 'Ingress']);

  it("a Revision pokes itself and the Service that controls its Configuration, once even when that Service's Route names it", () => {
    expect(pokeTargets('Revision', owned('Revision', 's-00001', 'Configuration', 's'), five, lookup, ['s'])).toEqual([
      { kind: 'Revision', key: { namespace: 'ns', name: 's-00001' } },
      { kind: 'Service', key: { namespace: 'ns', name: 's' } },
    ]);
  });

  it('a KIngress pokes the Service at the top of its chain (Ingress → Route → Service), or a lone Route', () => {
    expect(pokeTargets('Ingress', owned('Ingress', 's', 'Route', 's'), five, lookup)).toEqual([
      { kind: 'Service', key: { namespace: 'ns', name: 's' } },
    ]);
    expect(pokeTargets('Ingress', owned('Ingress', 'lone', 'Route', 'lone'), five, lookup)).toEqual([
      { kind: 'Route', key: { namespace: 'ns', name: 'lone' } },
    ]);
    expect(pokeTargets('KubeService', owned('Service', 's-tag', 'Route', 's'), five, lookup)).toEqual([
      { kind: 'Service', key: { namespace: 'ns', name: 's' } },
    ]);
  });

  it('an owner not in the caches yet: the service label names a known Service, otherwise the own workflow is poked', () => {
    const rev = owned('Revision', 'n-00001', 'Configuration', 'n');
    expect(
      reconcilerOf(
        { kind: 'Configuration', key: { namespace: 'ns', name: 'n' } },
        withLabels(rev, { 'serving.knative.dev/service': 's' }),
        lookup,
        five,
      ),
    ).toEqual({
      kind: 'Service',
      key: { namespace: 'ns', name: 's' },
    });
    // A label naming no known Service is not trusted.
    expect(
      reconcilerOf(
        { kind: 'Configuration', key: { namespace: 'ns', name: 'n' } },
        withLabels(rev, { 'serving.knative.dev/service': 'nope' }),
        lookup,
        five,
      ),
    ).toEqual({
      kind: 'Configuration',
      key: { namespace: 'ns', name: 'n' },
    });
    expect(reconcilerOf({ kind: 'Configuration', key: { namespace: 'ns', name: 'n' } }, rev, lookup, five)).toEqual({
      kind: 'Configuration',
      key: { namespace: 'ns', name: 'n' },
    });
  });
});

describe('pokeTargets: a child being deleted (ADR 0005)', () => {
  it('is finalized by its own workflow, and its owner hears of it', () => {
    const route = owned('Route', 'web', 'Service', 'web');
    route.metadata.deletionTimestamp = '2026-11-24T00:00:00Z';
    expect(pokeTargets('Route', route, new Set<EntityKind>(['Service', 'Route']))).toEqual([
      { kind: 'Route', key: { namespace: 'ns', name: 'web' } },
      { kind: 'Service', key: { namespace: 'ns', name: 'web' } },
    ]);
  });
});
