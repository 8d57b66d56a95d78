import { describe, expect, it } from 'vitest';
import { makeRoute } from '../../../resources/route.js';
import { service, withAnnotations, withLabels } from '../../fixtures/serving.js';

describe('makeRoute', () => {
  it('builds the Route named after the Service with configurationName filled in (golden)', () => {
    const svc = service(
      'web',
      'prod',
      withLabels({ team: 'a' }),
      withAnnotations({
        'kubectl.kubernetes.io/last-applied-configuration': '{}',
        'serving.knative.dev/rollout-duration': '120s',
      }),
    );
    svc.spec.traffic = [
      { latestRevision: true, percent: 90 },
      { revisionName: 'web-00001', percent: 10, tag: 'old' },
    ];
    expect(makeRoute(svc)).toEqual({
      apiVersion: 'serving.knative.dev/v1',
      kind: 'Route',
      metadata: {
        name: 'web',
        namespace: 'prod',
        labels: { team: 'a', 'serving.knative.dev/service': 'web' },
        annotations: { 'serving.knative.dev/rollout-duration': '120s' },
        ownerReferences: [
          { apiVersion: 'serving.knative.dev/v1', kind: 'Service', name: 'web', uid: 'uid-web', controller: true, blockOwnerDeletion: true },
        ],
      },
      spec: {
        traffic: [
          { latestRevision: true, percent: 90, configurationName: 'web' },
          { revisionName: 'web-00001', percent: 10, tag: 'old' },
        ],
      },
    });
  });

  it('a Service without traffic routes 100 % to its latest revision', () => {
    expect(makeRoute(service('web', 'prod')).spec.traffic).toEqual([{ percent: 100, latestRevision: true, configurationName: 'web' }]);
  });

  it('does not put the serviceUID label on the Route', () => {
    expect(makeRoute(service('web', 'prod')).metadata.labels).toEqual({ 'serving.knative.dev/service': 'web' });
  });
});
