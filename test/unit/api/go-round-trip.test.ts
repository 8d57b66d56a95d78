import { describe, expect, it } from 'vitest';
import { goRoundTrip } from '../../../api/go-round-trip.js';
import type { KubeObject } from '../../../api/meta.js';

const svc = (spec: Record<string, unknown>): KubeObject =>
  ({ apiVersion: 'serving.knative.dev/v1', kind: 'Service', metadata: { name: 'web' }, spec }) as KubeObject;

describe("goRoundTrip: the zero-valued fields Knative's Go types add", () => {
  it('adds resources, probe ports and a port without containerPort; keeps the rest', () => {
    const input = svc({
      template: {
        metadata: { annotations: { a: 'b' } },
        spec: {
          containers: [
            {
              image: 'x',
              ports: [{ name: 'h2c' }],
              readinessProbe: { grpc: {} },
              livenessProbe: { httpGet: { path: '/' } },
              resources: { limits: { cpu: '1' } },
            },
          ],
          initContainers: [{ image: 'i', startupProbe: { tcpSocket: { port: 'http' } } }],
        },
      },
      traffic: [{ latestRevision: true, percent: 100 }],
    });
    expect(goRoundTrip('Service', input)).toEqual(
      svc({
        template: {
          metadata: { annotations: { a: 'b' } },
          spec: {
            containers: [
              {
                image: 'x',
                ports: [{ name: 'h2c', containerPort: 0 }],
                readinessProbe: { grpc: { port: 0 } },
                livenessProbe: { httpGet: { path: '/', port: 0 } },
                resources: { limits: { cpu: '1' } },
              },
            ],
            initContainers: [{ image: 'i', startupProbe: { tcpSocket: { port: 'http' } }, resources: {} }],
          },
        },
        traffic: [{ latestRevision: true, percent: 100 }],
      }),
    );
    expect(input).not.toHaveProperty('spec.template.spec.containers.0.ports.0.containerPort'); // a copy: the input is untouched
  });

  it("stores a template's metadata as {}, as apimachinery v0.36 encodes a zero creationTimestamp (omitzero)", () => {
    const bare = { template: { spec: { containers: [{ image: 'x', resources: {} }] } } };
    expect(goRoundTrip('Configuration', { ...svc(bare), kind: 'Configuration' })).toHaveProperty('spec.template.metadata', {});
    const nulled = { template: { metadata: { creationTimestamp: null, labels: { a: 'b' } }, spec: bare.template.spec } };
    expect(goRoundTrip('Service', svc(nulled))).toHaveProperty('spec.template.metadata', { labels: { a: 'b' } });
  });

  it('treats a Revision spec as the pod spec and leaves a Route alone', () => {
    const rev = {
      apiVersion: 'serving.knative.dev/v1',
      kind: 'Revision',
      metadata: { name: 'r' },
      spec: { containers: [{ image: 'x' }] },
    } as KubeObject;
    expect(goRoundTrip('Revision', rev)).toEqual({ ...rev, spec: { containers: [{ image: 'x', resources: {} }] } });
    const route = { apiVersion: 'serving.knative.dev/v1', kind: 'Route', metadata: { name: 'r' }, spec: { traffic: [] } } as KubeObject;
    expect(goRoundTrip('Route', route)).toEqual(route);
  });
});
