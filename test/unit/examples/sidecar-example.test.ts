// The example module operator's pure part (examples/module-operator/sidecar-example.ts): its config, the Deployment it
// makes of a Revision (user container + its sidecar, no queue-proxy, labelled for Tidal's revision Service, owned by
// the Revision) and the conditions it reads off that Deployment.
import { describe, expect, it } from 'vitest';
import type { Revision } from '../../../api/serving.js';
import { makeSidecarDeployment, mergeConditions, moduleStatus, parseSidecarConfig } from '../../../examples/module-operator/sidecar-example.js';
import { revision, withContainerStatuses, withRevAnnotations, withUserContainer } from '../../fixtures/revision.js';

const config = (c: string): Revision =>
  revision(
    'hello-00001',
    'default',
    withRevAnnotations({ 'tidal.dev/module': 'sidecar-example', 'tidal.dev/module-config': c }),
    withUserContainer({ ports: [{ containerPort: 9000 }] }),
    withContainerStatuses([{ name: 'user-container', imageDigest: 'ghcr.io/example/hello@sha256:' + 'b'.repeat(64) }]),
  );

describe('sidecar-example', () => {
  it('parses its config; a missing sidecarImage or a bad replicas is a reason, not a crash', () => {
    expect(parseSidecarConfig(config('{"sidecarImage":"s:1"}'))).toEqual({ ok: true, value: { sidecarImage: 's:1', replicas: 1, logLevel: 'info' } });
    expect(parseSidecarConfig(config('{}'))).toEqual({ ok: false, reason: 'sidecarImage: a non-empty string is required' });
    expect(parseSidecarConfig(config('{"sidecarImage":"s","replicas":-1}'))).toEqual({
      ok: false,
      reason: 'replicas: must be a non-negative integer',
    });
  });

  it('builds the Deployment: pinned user image, probe on the user port, its sidecar on 8012, no queue-proxy', () => {
    const rev = config('{"sidecarImage":"s:1","replicas":2,"logLevel":"debug"}');
    const parsed = parseSidecarConfig(rev);
    if (!parsed.ok) throw new Error(parsed.reason);
    const d = makeSidecarDeployment(rev, parsed.value) as unknown as {
      metadata: { name: string; ownerReferences: unknown[] };
      spec: { replicas: number; selector: unknown; template: { metadata: { labels: Record<string, string> }; spec: Record<string, unknown> } };
    };
    expect(d.metadata.name).toBe('hello-00001-deployment');
    expect(d.metadata.ownerReferences).toEqual([expect.objectContaining({ kind: 'Revision', name: 'hello-00001', controller: true })]);
    expect(d.spec.replicas).toBe(2);
    expect(d.spec.selector).toEqual({ matchLabels: { 'serving.knative.dev/revisionUID': 'uid-hello-00001' } });
    expect(d.spec.template.metadata.labels['serving.knative.dev/revisionUID']).toBe('uid-hello-00001');
    const containers = d.spec.template.spec.containers as { name: string; image: string; readinessProbe?: unknown; env?: unknown[] }[];
    expect(containers.map((c) => c.name)).toEqual(['user-container', 'sidecar-example']);
    expect(containers[0]!.image).toBe('ghcr.io/example/hello@sha256:' + 'b'.repeat(64));
    expect(containers[0]!.readinessProbe).toEqual({ tcpSocket: { port: 9000 }, successThreshold: 1 });
    expect(containers[1]).toMatchObject({ image: 's:1', ports: [{ name: 'http', containerPort: 8012 }] });
    expect(containers[1]!.env).toContainEqual({ name: 'USER_PORT', value: '9000' });
    // Knative-only fields are not pod fields.
    expect(d.spec.template.spec).not.toHaveProperty('timeoutSeconds');
    expect(d.spec.template.spec).not.toHaveProperty('containerConcurrency');
  });

  it("reads its conditions off the Deployment, and lays them over the Revision keeping Tidal's", () => {
    expect(moduleStatus(undefined).conditions.map((c) => c.reason)).toEqual(['Deploying', 'Deploying']);
    expect(moduleStatus({ spec: { replicas: 2 }, status: { availableReplicas: 1, readyReplicas: 1 } })).toEqual({
      conditions: [
        { type: 'ResourcesAvailable', status: 'True' },
        { type: 'ContainerHealthy', status: 'True' },
      ],
      actualReplicas: 1,
      desiredReplicas: 2,
    });
    const stuck = moduleStatus({
      spec: { replicas: 1 },
      status: { conditions: [{ type: 'Progressing', status: 'False', reason: 'ProgressDeadlineExceeded' }] },
    });
    expect(stuck.conditions[0]).toMatchObject({ status: 'False', reason: 'ProgressDeadlineExceeded' });
    expect(moduleStatus(undefined, 'bad').conditions[0]).toMatchObject({ status: 'False', reason: 'InvalidModuleConfig' });

    const ready = { type: 'Ready', status: 'Unknown' as const, reason: 'AwaitingModule' };
    const merged = mergeConditions([ready], moduleStatus(undefined).conditions, '2026-01-01T00:00:00Z');
    expect(merged?.map((c) => c.type)).toEqual(['Ready', 'ResourcesAvailable', 'ContainerHealthy']);
    expect(mergeConditions(merged, moduleStatus(undefined).conditions, 'later')).toBeUndefined();
  });
});
