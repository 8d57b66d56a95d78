import { describe, expect, it } from 'vitest';
import type { EntityKind } from '../../../api/entity.js';
import type { KubeObject } from '../../../api/meta.js';
import { pokeTargets } from '../../../watcher/poke-map.js';

const all = new Set<EntityKind>(['Service', 'Configuration', 'Revision', 'Route']);
const owned = (kind: string, name: string, ownerKind: string, owner: string, apiVersion = 'serving.knative.dev/v1'): KubeObject => ({
  apiVersion: 'x',
  kind,
  metadata: { name, namespace: 'ns', ownerReferences: [{ apiVersion, kind: ownerKind, name: owner, uid: 'u', controller: true }] },
});

describe('pokeTargets (design.md §4)', () => {
  it('a Service pokes itself', () => {
    expect(pokeTargets('Service', { apiVersion: 'v', kind: 'Service', metadata: { name: 's', namespace: 'ns' } }, all)).toEqual([
      { kind: 'Service', key: { namespace: 'ns', name: 's' } },
    ]);
  });

  it('a Configuration pokes itself and its controlling Service', () => {
    expect(pokeTargets('Configuration', owned('Configuration', 'c', 'Service', 's'), all)).toEqual([
      { kind: 'Configuration', key: { namespace: 'ns', name: 'c' } },
      { kind: 'Service', key: { namespace: 'ns', name: 's' } },
    ]);
  });

  it('a Deployment pokes its Revision; an owner from another API group is ignored', () => {
    expect(pokeTargets('Deployment', owned('Deployment', 'd', 'Revision', 'r'), all)).toEqual([
      { kind: 'Revision', key: { namespace: 'ns', name: 'r' } },
    ]);
    expect(pokeTargets('Deployment', owned('Deployment', 'd', 'Revision', 'r', 'other.io/v1'), all)).toEqual([]);
  });

  it('a placeholder Service pokes its controlling Route', () => {
    expect(pokeTargets('KubeService', owned('Service', 'web-tag', 'Route', 'web'), all)).toEqual([
      { kind: 'Route', key: { namespace: 'ns', name: 'web' } },
    ]);
    expect(pokeTargets('KubeService', owned('Service', 'x', 'Route', 'web', 'other.io/v1'), all)).toEqual([]);
  });

  it('a Pod pokes the Revision named by its label', () => {
    const pod: KubeObject = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'p', namespace: 'ns', labels: { 'serving.knative.dev/revision': 'r-00001' } },
    };
    expect(pokeTargets('Pod', pod, all)).toEqual([{ kind: 'Revision', key: { namespace: 'ns', name: 'r-00001' } }]);
  });

  it('only kinds whose workflows run are poked', () => {
    expect(pokeTargets('Configuration', owned('Configuration', 'c', 'Service', 's'), new Set<EntityKind>(['Service']))).toEqual([
      { kind: 'Service', key: { namespace: 'ns', name: 's' } },
    ]);
  });
});
