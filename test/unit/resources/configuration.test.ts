import { describe, expect, it } from 'vitest';
import { makeConfiguration, unionRoutes } from '../../../resources/configuration.js';
import { configuration, service, withAnnotations, withLabels } from '../../fixtures/serving.js';

describe('makeConfiguration', () => {
  it('builds the Configuration named after the Service, owned by it (golden)', () => {
    const svc = service(
      'nginx',
      'default',
      withLabels({ app: 'web' }),
      withAnnotations({
        'kubectl.kubernetes.io/last-applied-configuration': '{}',
        'serving.knative.dev/rollout-duration': '60s',
        'serving.knative.dev/rolloutDuration': '60s',
        'example.com/team': 'a',
      }),
    );
    svc.spec.template.spec.containers = [{ image: 'nginx:1.27', ports: [{ containerPort: 80 }] }];
    expect(makeConfiguration(svc)).toEqual({
      apiVersion: 'serving.knative.dev/v1',
      kind: 'Configuration',
      metadata: {
        name: 'nginx',
        namespace: 'default',
        labels: { app: 'web', 'serving.knative.dev/service': 'nginx', 'serving.knative.dev/serviceUID': 'uid-nginx' },
        annotations: { 'example.com/team': 'a', 'serving.knative.dev/routes': 'nginx' },
        ownerReferences: [
          { apiVersion: 'serving.knative.dev/v1', kind: 'Service', name: 'nginx', uid: 'uid-nginx', controller: true, blockOwnerDeletion: true },
        ],
      },
      spec: { template: { metadata: {}, spec: { containers: [{ image: 'nginx:1.27', ports: [{ containerPort: 80 }] }] } } },
    });
  });

  it('keeps the labeler route list of the existing Configuration, sorted and unique', () => {
    const existing = configuration('nginx', 'default', (c) => void (c.metadata.annotations = { 'serving.knative.dev/routes': 'zeta,alpha' }));
    const cfg = makeConfiguration(service('nginx', 'default'), existing);
    expect(cfg.metadata.annotations?.['serving.knative.dev/routes']).toBe('alpha,nginx,zeta');
  });

  it("stores the template's metadata as upstream's Go types encode it: a creationTimestamp: null goes", () => {
    const svc = service('hello', 'default');
    svc.spec.template.metadata = { labels: { a: 'b' }, creationTimestamp: null } as unknown as typeof svc.spec.template.metadata;
    expect(makeConfiguration(svc).spec.template.metadata).toEqual({ labels: { a: 'b' } });
  });

  it('copies the template, so later edits of the Service do not leak into the built object', () => {
    const svc = service('nginx', 'default');
    const cfg = makeConfiguration(svc);
    svc.spec.template.spec.containers[0]!.image = 'changed';
    expect(cfg.spec.template.spec.containers[0]!.image).toBe('nginx');
  });

  it('unionRoutes trims, drops empties and de-duplicates', () => {
    expect(unionRoutes(' b, a ,,b', 'a', 'c')).toBe('a,b,c');
    expect(unionRoutes(undefined, 'x')).toBe('x');
  });
});
