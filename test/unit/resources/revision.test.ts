import { describe, expect, it } from 'vitest';
import type { Configuration } from '../../../api/serving.js';
import { makeRevision, revisionNameFor, rfc3339 } from '../../../resources/revision.js';
import { configuration } from '../../fixtures/serving.js';

const now = '2024-05-01T12:34:56.789Z';

/** The Configuration a Service `hello` owns, at generation 3, last edited by bob. */
function serviceConfig(...opts: ((c: Configuration) => void)[]): Configuration {
  return configuration(
    'hello',
    'default',
    (c) => {
      c.metadata.uid = 'uid-hello';
      c.metadata.generation = 3;
      c.metadata.labels = { 'serving.knative.dev/service': 'hello', 'serving.knative.dev/serviceUID': 'uid-svc', team: 'a' };
      c.metadata.annotations = { 'serving.knative.dev/creator': 'alice', 'serving.knative.dev/lastModifier': 'bob', 'example.com/note': 'x' };
      c.spec.template = {
        metadata: { labels: { tier: 'web' }, annotations: { 'autoscaling.knative.dev/min-scale': '2' } },
        spec: { containers: [{ name: 'user-container', image: 'ghcr.io/example/hello:1' }], timeoutSeconds: 300 },
      };
    },
    ...opts,
  );
}

describe('makeRevision', () => {
  it('builds the pending Revision of the current generation (golden)', () => {
    expect(makeRevision(serviceConfig(), { now })).toEqual({
      apiVersion: 'serving.knative.dev/v1',
      kind: 'Revision',
      metadata: {
        name: 'hello-00003',
        namespace: 'default',
        labels: {
          tier: 'web',
          'serving.knative.dev/configuration': 'hello',
          'serving.knative.dev/configurationGeneration': '3',
          'serving.knative.dev/configurationUID': 'uid-hello',
          'serving.knative.dev/service': 'hello',
          'serving.knative.dev/serviceUID': 'uid-svc',
          'serving.knative.dev/routingState': 'pending',
        },
        annotations: {
          'autoscaling.knative.dev/min-scale': '2',
          'serving.knative.dev/creator': 'bob',
          'serving.knative.dev/routingStateModified': '2024-05-01T12:34:56Z',
        },
        ownerReferences: [
          {
            apiVersion: 'serving.knative.dev/v1',
            kind: 'Configuration',
            name: 'hello',
            uid: 'uid-hello',
            controller: true,
            blockOwnerDeletion: true,
          },
        ],
      },
      spec: { containers: [{ name: 'user-container', image: 'ghcr.io/example/hello:1' }], timeoutSeconds: 300 },
    });
  });

  it('a Configuration with serving.knative.dev/routes makes the Revision active and copies the routes', () => {
    const cfg = serviceConfig((c) => void (c.metadata.annotations!['serving.knative.dev/routes'] = 'hello,other'));
    const rev = makeRevision(cfg, { now });
    expect(rev.metadata.labels?.['serving.knative.dev/routingState']).toBe('active');
    expect(rev.metadata.annotations).toEqual({
      'autoscaling.knative.dev/min-scale': '2',
      'serving.knative.dev/creator': 'bob',
      'serving.knative.dev/routes': 'hello,other',
      'serving.knative.dev/routingStateModified': '2024-05-01T12:34:56Z',
    });
  });

  it('a BYO template name is used as is (and generateName is copied)', () => {
    const cfg = serviceConfig((c) => {
      c.spec.template.metadata = { ...c.spec.template.metadata, name: 'hello-blue', generateName: 'ignored-' };
    });
    const rev = makeRevision(cfg, { now });
    expect(rev.metadata.name).toBe('hello-blue');
    expect(rev.metadata.generateName).toBe('ignored-');
    expect(revisionNameFor(cfg)).toBe('hello-blue');
  });

  it('long Configuration names are ChildName-truncated to 63 characters', () => {
    const long = 'x'.repeat(60);
    const cfg = configuration(long, 'default', (c) => void (c.metadata.generation = 1));
    const rev = makeRevision(cfg, { now });
    expect(rev.metadata.name).toHaveLength(63);
    expect(rev.metadata.name).toBe(revisionNameFor(cfg));
    expect(rev.metadata.name).toMatch(/^x{25}[0-9a-f]{32}-00001$/);
    expect(rev.metadata.labels?.['serving.knative.dev/configuration']).toBe(long);
  });

  it('a standalone Configuration (no Service labels, no lastModifier) gets only its own labels', () => {
    const cfg = configuration('solo', 'ns1', (c) => {
      c.metadata.uid = 'uid-solo';
      c.metadata.generation = 1;
    });
    expect(makeRevision(cfg, { now: '2024-05-01T00:00:00Z' })).toEqual({
      apiVersion: 'serving.knative.dev/v1',
      kind: 'Revision',
      metadata: {
        name: 'solo-00001',
        namespace: 'ns1',
        labels: {
          'serving.knative.dev/configuration': 'solo',
          'serving.knative.dev/configurationGeneration': '1',
          'serving.knative.dev/configurationUID': 'uid-solo',
          'serving.knative.dev/routingState': 'pending',
        },
        annotations: { 'serving.knative.dev/routingStateModified': '2024-05-01T00:00:00Z' },
        ownerReferences: [
          { apiVersion: 'serving.knative.dev/v1', kind: 'Configuration', name: 'solo', uid: 'uid-solo', controller: true, blockOwnerDeletion: true },
        ],
      },
      spec: { containers: [{ image: 'nginx' }] },
    });
  });

  it('the Configuration template labels cannot override the reconciler-owned keys', () => {
    const cfg = serviceConfig((c) => {
      c.spec.template.metadata!.labels = { 'serving.knative.dev/configurationGeneration': '99', 'serving.knative.dev/routingState': 'reserve' };
    });
    const labels = makeRevision(cfg, { now }).metadata.labels ?? {};
    expect(labels['serving.knative.dev/configurationGeneration']).toBe('3');
    expect(labels['serving.knative.dev/routingState']).toBe('pending');
  });

  it('copies the template: later edits of the Configuration do not leak into the Revision', () => {
    const cfg = serviceConfig();
    const rev = makeRevision(cfg, { now });
    cfg.spec.template.spec.containers[0]!.image = 'changed';
    cfg.spec.template.metadata!.labels!.tier = 'changed';
    expect(rev.spec.containers[0]!.image).toBe('ghcr.io/example/hello:1');
    expect(rev.metadata.labels?.tier).toBe('web');
  });

  it('routingStateModified is RFC3339 UTC in whole seconds', () => {
    expect(rfc3339('2024-05-01T14:34:56.999+02:00')).toBe('2024-05-01T12:34:56Z');
    expect(rfc3339('2024-05-01T12:34:56Z')).toBe('2024-05-01T12:34:56Z');
    expect(rfc3339('not a date')).toBe('not a date');
  });
});
