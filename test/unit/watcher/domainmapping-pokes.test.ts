// Which workflows a change pokes for DomainMappings: a mapping pokes itself; its KIngress pokes the mapping,
// which programs it (ADR 0005); its target Service or Route pokes it (the DomainMapping index), also before the target
// exists; a ClusterDomainClaim pokes the mappings of its name in every namespace.
import { describe, expect, it } from 'vitest';
import type { EntityKind } from '../../../api/entity.js';
import type { KubeObject } from '../../../api/meta.js';
import { DomainMappingIndex } from '../../../watcher/domainmapping-index.js';
import { pokeTargets } from '../../../watcher/poke-map.js';

const all = new Set<EntityKind>(['Service', 'Configuration', 'Revision', 'Route', 'Ingress', 'DomainMapping']);

const mapping = (namespace: string, name: string, ref: Record<string, string>): KubeObject =>
  ({ apiVersion: 'serving.knative.dev/v1beta1', kind: 'DomainMapping', metadata: { name, namespace }, spec: { ref } }) as KubeObject;
const ksvc = (namespace: string, name: string): KubeObject => ({
  apiVersion: 'serving.knative.dev/v1',
  kind: 'Service',
  metadata: { name, namespace },
});
const dm = (namespace: string, name: string) => ({ kind: 'DomainMapping', key: { namespace, name } });

describe('DomainMapping pokes', () => {
  it('a DomainMapping pokes itself', () => {
    expect(pokeTargets('DomainMapping', mapping('default', 'coolcoffee.company', {}), all)).toEqual([dm('default', 'coolcoffee.company')]);
  });

  it('the KIngress a DomainMapping controls pokes the mapping only, whose pass programs it', () => {
    const ing: KubeObject = {
      apiVersion: 'networking.internal.knative.dev/v1alpha1',
      kind: 'Ingress',
      metadata: {
        name: 'coolcoffee.company',
        namespace: 'default',
        ownerReferences: [
          { apiVersion: 'serving.knative.dev/v1beta1', kind: 'DomainMapping', name: 'coolcoffee.company', uid: 'u', controller: true },
        ],
      },
    };
    expect(pokeTargets('Ingress', ing, all)).toEqual([dm('default', 'coolcoffee.company')]);
    // Without the DomainMapping workflow in this build, the KIngress keeps its own.
    expect(pokeTargets('Ingress', ing, new Set<EntityKind>(['Route', 'Ingress']))).toEqual([
      { kind: 'Ingress', key: { namespace: 'default', name: 'coolcoffee.company' } },
    ]);
  });

  it('the index finds the mappings of a Service or Route (ref namespace defaulted), and follows edits and deletions', () => {
    const idx = new DomainMappingIndex();
    idx.update(mapping('default', 'coolcoffee.company', { apiVersion: 'serving.knative.dev/v1', kind: 'Service', name: 'coolcoffee-company' }));
    idx.update(
      mapping('default', 'www.coolcoffee.company', {
        apiVersion: 'serving.knative.dev/v1',
        kind: 'Service',
        name: 'coolcoffee-company',
        namespace: 'default',
      }),
    );
    idx.update(mapping('other', 'coolcoffee.company', { apiVersion: 'serving.knative.dev/v1', kind: 'Route', name: 'r' }));
    const byService = idx.mappingsOf('serving.knative.dev', 'Service', ksvc('default', 'coolcoffee-company'));
    expect(byService.map((k) => k.name).sort()).toEqual(['coolcoffee.company', 'www.coolcoffee.company']);
    expect(idx.mappingsOf('serving.knative.dev', 'Route', ksvc('other', 'r'))).toEqual([{ namespace: 'other', name: 'coolcoffee.company' }]);
    // A core Service of the same name is another object.
    expect(idx.mappingsOf('', 'Service', ksvc('default', 'coolcoffee-company'))).toEqual([]);
    expect(
      idx
        .mappingsNamed('coolcoffee.company')
        .map((k) => k.namespace)
        .sort(),
    ).toEqual(['default', 'other']);

    idx.update(mapping('default', 'www.coolcoffee.company', { apiVersion: 'serving.knative.dev/v1', kind: 'Service', name: 'tea' }));
    expect(idx.mappingsOf('serving.knative.dev', 'Service', ksvc('default', 'coolcoffee-company'))).toEqual([
      { namespace: 'default', name: 'coolcoffee.company' },
    ]);
    expect(idx.mappingsOf('serving.knative.dev', 'Service', ksvc('default', 'tea'))).toEqual([
      { namespace: 'default', name: 'www.coolcoffee.company' },
    ]);
    idx.update(mapping('other', 'coolcoffee.company', {}), true);
    expect(idx.mappingsNamed('coolcoffee.company')).toEqual([{ namespace: 'default', name: 'coolcoffee.company' }]);
  });

  it('a Service pokes itself and the mappings the index names; a claim pokes the mappings of its name', () => {
    const targets = pokeTargets(
      'Service',
      ksvc('default', 'coolcoffee-company'),
      all,
      undefined,
      [],
      [{ namespace: 'default', name: 'coolcoffee.company' }],
    );
    expect(targets).toEqual([{ kind: 'Service', key: { namespace: 'default', name: 'coolcoffee-company' } }, dm('default', 'coolcoffee.company')]);
    const claim: KubeObject = {
      apiVersion: 'networking.internal.knative.dev/v1alpha1',
      kind: 'ClusterDomainClaim',
      metadata: { name: 'coolcoffee.company' },
    };
    expect(pokeTargets('ClusterDomainClaim', claim, all, undefined, [], [{ namespace: 'default', name: 'coolcoffee.company' }])).toEqual([
      dm('default', 'coolcoffee.company'),
    ]);
    expect(pokeTargets('ClusterDomainClaim', claim, all)).toEqual([]);
  });
});
