import { describe, expect, it } from 'vitest';
import { makeRevisionService, revisionServicePort } from '../../../resources/revision-service.js';
import { revision, revisionConfig, withRevLabels, withUserContainer, withoutQueueProxy } from '../../fixtures/revision.js';

const metadata = {
  name: 'hello-00001',
  namespace: 'default',
  labels: {
    'serving.knative.dev/configuration': 'hello',
    'serving.knative.dev/configurationGeneration': '1',
    'serving.knative.dev/configurationUID': 'uid-hello',
    'serving.knative.dev/service': 'hello',
    'serving.knative.dev/serviceUID': 'uid-svc-hello',
    'serving.knative.dev/revision': 'hello-00001',
    'serving.knative.dev/revisionUID': 'uid-hello-00001',
    app: 'hello-00001',
  },
  ownerReferences: [
    {
      apiVersion: 'serving.knative.dev/v1',
      kind: 'Revision',
      name: 'hello-00001',
      uid: 'uid-hello-00001',
      controller: true,
      blockOwnerDeletion: true,
    },
  ],
};
const selector = { 'serving.knative.dev/revisionUID': 'uid-hello-00001' };

describe('makeRevisionService (the Service Routes target)', () => {
  it('with queue-proxy: http 80 → 8012 and https 443 → 8112 (golden)', () => {
    const rev = revision('hello-00001', 'default', withRevLabels({ 'serving.knative.dev/route': 'hello' }));
    expect(makeRevisionService(rev, revisionConfig())).toEqual({
      apiVersion: 'v1',
      kind: 'Service',
      metadata,
      spec: {
        type: 'ClusterIP',
        selector,
        ports: [
          { name: 'http', protocol: 'TCP', port: 80, targetPort: 8012 },
          { name: 'https', protocol: 'TCP', port: 443, targetPort: 8112 },
        ],
      },
    });
  });

  it('with queue-proxy and h2c: http2 81 → 8013, appProtocol kubernetes.io/h2c', () => {
    const rev = revision('hello-00001', 'default', withUserContainer({ ports: [{ name: 'h2c', containerPort: 9000 }] }));
    expect(makeRevisionService(rev, revisionConfig()).spec.ports).toEqual([
      { name: 'http2', protocol: 'TCP', appProtocol: 'kubernetes.io/h2c', port: 81, targetPort: 8013 },
      { name: 'https', protocol: 'TCP', port: 443, targetPort: 8112 },
    ]);
    expect(revisionServicePort(rev)).toEqual({ name: 'http2', port: 81 });
  });

  it('without queue-proxy: http 80 → the user port (golden)', () => {
    const rev = revision('hello-00001', 'default', withUserContainer({ ports: [{ containerPort: 3000 }] }));
    expect(makeRevisionService(rev, revisionConfig(withoutQueueProxy))).toEqual({
      apiVersion: 'v1',
      kind: 'Service',
      metadata,
      spec: { type: 'ClusterIP', selector, ports: [{ name: 'http', protocol: 'TCP', port: 80, targetPort: 3000 }] },
    });
  });

  it('without queue-proxy and h2c: http2 81 → the user port; default user port 8080', () => {
    const h2c = revision('r', 'ns', withUserContainer({ ports: [{ name: 'h2c', containerPort: 0 }] }));
    expect(makeRevisionService(h2c, revisionConfig(withoutQueueProxy)).spec.ports).toEqual([
      { name: 'http2', protocol: 'TCP', appProtocol: 'kubernetes.io/h2c', port: 81, targetPort: 8080 },
    ]);
    expect(revisionServicePort(revision('r', 'ns'))).toEqual({ name: 'http', port: 80 });
  });

  it('carries no hash label and keeps a user app label', () => {
    const svc = makeRevisionService(revision('hello-00001', 'default', withRevLabels({ app: 'mine' })), revisionConfig());
    expect(svc.metadata.labels.app).toBe('mine');
    expect(svc.metadata.labels).not.toHaveProperty(['serving.knative.dev/deployment-hash']);
  });
});
