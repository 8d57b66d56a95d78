// What wakes a gradual rollout: the control annotation `tidal.dev/rollout` on the Service or Route, and
// the newest Revision's Ready condition. Each must change the content token the watcher sends, or the workflow would
// find the poke covered by its last pass and the rollout would not react (ADR 0001). Who is poked is poke-map's
// (a Revision → the Service reconciling its Configuration and Route: test/unit/watcher/poke-map.test.ts).
import { describe, expect, it } from 'vitest';
import { contentToken, observationCovers, observationOf } from '../../../api/content-token.js';
import type { KubeObject } from '../../../api/meta.js';

type Obj = KubeObject & { spec?: unknown; status?: { conditions?: { type: string; status: string; reason?: string }[] } };

const service = (annotations: Record<string, string>): Obj => ({
  apiVersion: 'serving.knative.dev/v1',
  kind: 'Service',
  metadata: { name: 'nginx', namespace: 'default', uid: 'u1', generation: 2, annotations },
  spec: { template: { spec: { containers: [{ image: 'nginx:1.28' }] } } },
});

const revision = (ready: string, reason?: string): Obj => ({
  apiVersion: 'serving.knative.dev/v1',
  kind: 'Revision',
  metadata: { name: 'nginx-00002', namespace: 'default', uid: 'u2', generation: 1 },
  spec: { containers: [{ image: 'nginx:1.28' }] },
  status: { conditions: [{ type: 'Ready', status: ready, ...(reason ? { reason } : {}) }] },
});

describe('pokes that drive a rollout are never covered by the pass before them', () => {
  it('tidal.dev/rollout set, changed or removed on the Service', () => {
    const base = service({ 'serving.knative.dev/rollout-duration': '60s' });
    const paused = service({ 'serving.knative.dev/rollout-duration': '60s', 'tidal.dev/rollout': 'pause' });
    const aborted = service({ 'serving.knative.dev/rollout-duration': '60s', 'tidal.dev/rollout': 'abort' });
    expect(observationCovers(observationOf(base), contentToken(paused, 'self'))).toBe(false);
    expect(observationCovers(observationOf(paused), contentToken(aborted, 'self'))).toBe(false);
    expect(observationCovers(observationOf(paused), contentToken(base, 'self'))).toBe(false);
    // The same value again (kubectl apply of an unchanged manifest) is covered.
    expect(observationCovers(observationOf(paused), contentToken(service({ ...paused.metadata.annotations }), 'self'))).toBe(true);
  });

  it('the newest Revision turning Ready False (rollback) or True again', () => {
    const ready = revision('True');
    const failed = revision('False', 'ExitCode1');
    expect(observationCovers(observationOf(ready), contentToken(failed, 'dependency'))).toBe(false);
    expect(observationCovers(observationOf(failed), contentToken(ready, 'dependency'))).toBe(false);
  });
});
