// The Revision GC step: deletes with a precondition, one Event per deletion, the next eligibility time, and no API
// reads when the watcher's cache shows nothing collectable.
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { createRevisionGcActivities } from '../../../activities/revision-gc.js';
import { GcDisabled, type GcConfig } from '../../../api/config/index.js';
import type { MetadataCache } from '../../../activities/deps.js';
import { Resources } from '../../../api/kinds.js';
import type { Configuration, Revision } from '../../../api/serving.js';
import { revision } from '../../fixtures/revision.js';
import { configuration } from '../../fixtures/serving.js';
import { fakeDeps, KubeFake } from './kube-fake.js';

const key = { namespace: 'default', name: 'hello' };
const now = Date.parse('2025-01-01T00:00:00Z'); // fakeDeps' clock
const hakn: GcConfig = {
  retainSinceCreateTimeMs: GcDisabled,
  retainSinceLastActiveTimeMs: GcDisabled,
  minNonActiveRevisions: 0,
  maxNonActiveRevisions: 0,
};

function rev(name: string, state: string, createdAgoS: number, extra: Record<string, string> = {}): Revision {
  return revision(name, 'default', (r) => {
    r.metadata.creationTimestamp = new Date(now - createdAgoS * 1000).toISOString();
    r.metadata.labels = { ...r.metadata.labels, 'serving.knative.dev/routingState': state };
    r.metadata.annotations = {
      ...r.metadata.annotations,
      'serving.knative.dev/routingStateModified': new Date(now - createdAgoS * 500).toISOString(),
      ...extra,
    };
  });
}

function setup(gc: GcConfig, revisions: Revision[], cache?: MetadataCache) {
  const fake = new KubeFake();
  fake.seed(
    Resources.Configuration,
    configuration('hello', 'default', (c) => {
      c.status = { latestReadyRevisionName: 'hello-00003', latestCreatedRevisionName: 'hello-00003' };
    }),
  );
  for (const r of revisions) fake.seed(Resources.Revision, r);
  const { deps, recorded } = fakeDeps(fake);
  deps.config = { ...deps.config, gcConfig: () => gc };
  if (cache) deps.cache = cache;
  return { fake, recorded, deps, acts: createRevisionGcActivities(deps) };
}

describe('collectRevisions', () => {
  it("hakn's config: every reserve Revision but the latest goes, with a uid/resourceVersion precondition and a RevisionDeleted Event", async () => {
    const { fake, recorded, acts } = setup(hakn, [
      rev('hello-00001', 'reserve', 300),
      rev('hello-00002', 'reserve', 200, { 'serving.knative.dev/no-gc': 'true' }),
      rev('hello-00003', 'active', 100),
    ]);
    const out = await acts.collectRevisions(key);
    expect(out).toMatchObject({ outcome: 'collected', deleted: [{ name: 'hello-00001', rule: 'max' }] });
    expect(out.outcome !== 'gone' && out.nextAtMs).toBeUndefined();
    const del = fake.writes('delete');
    expect(del).toHaveLength(1);
    expect(del[0]).toMatchObject({ name: 'hello-00001', body: { uid: 'uid-hello-00001', resourceVersion: expect.any(String) } });
    expect(fake.get(Resources.Revision, 'default', 'hello-00001')).toBeUndefined();
    expect(recorded).toEqual([
      {
        type: 'Normal',
        reason: 'RevisionDeleted',
        message: 'Deleted Revision "hello-00001": beyond max-non-active-revisions 0, oldest non-active first',
      },
    ]);
  });

  it("keeps a reserve Revision its Service's or Route's traffic names (the labeler has not marked it yet), collects the rest", async () => {
    const { fake, acts } = setup(hakn, [
      rev('hello-00001', 'reserve', 400),
      rev('hello-00002', 'reserve', 300),
      rev('hello-00004', 'reserve', 200),
      rev('hello-00003', 'active', 100),
    ]);
    fake.seed(
      Resources.Configuration,
      configuration('hello', 'default', (c) => {
        c.status = { latestReadyRevisionName: 'hello-00003', latestCreatedRevisionName: 'hello-00003' };
        c.metadata.ownerReferences = [
          { apiVersion: 'serving.knative.dev/v1', kind: 'Service', name: 'hello', uid: 'uid-svc', controller: true, blockOwnerDeletion: true },
        ];
        c.metadata.annotations = { ...c.metadata.annotations, 'serving.knative.dev/routes': 'other' };
      }),
    );
    fake.seed(Resources.Service, {
      apiVersion: 'serving.knative.dev/v1',
      kind: 'Service',
      metadata: { name: 'hello', namespace: 'default' },
      spec: {
        traffic: [
          { latestRevision: true, percent: 60 },
          { revisionName: 'hello-00002', percent: 40 },
        ],
      },
    });
    fake.seed(Resources.Route, {
      apiVersion: 'serving.knative.dev/v1',
      kind: 'Route',
      metadata: { name: 'other', namespace: 'default' },
      spec: { traffic: [{ revisionName: 'hello-00004', percent: 100 }] },
    });
    const out = await acts.collectRevisions(key);
    expect(out).toMatchObject({ outcome: 'collected', deleted: [{ name: 'hello-00001', rule: 'max' }] });
    expect(fake.writes('delete').map((d) => d.name)).toEqual(['hello-00001']);
  });

  it('retain-since-create-time 20 s: nothing yet, the next at creation + 20 s; once due it is deleted and its lateness reported', async () => {
    const gc = { ...hakn, retainSinceCreateTimeMs: 20_000, maxNonActiveRevisions: GcDisabled };
    const { fake, acts } = setup(gc, [rev('hello-00001', 'reserve', 5), rev('hello-00003', 'active', 1)]);
    const out = await acts.collectRevisions(key);
    expect(out).toMatchObject({ outcome: 'nothing', deleted: [], nextAtMs: now + 15_000, nextInMs: 15_000, next: 'hello-00001' });
    expect(fake.writes('delete')).toEqual([]);
    const later = setup(gc, [rev('hello-00001', 'reserve', 20.25), rev('hello-00003', 'active', 1)]);
    const registry = new Registry();
    later.deps.registry = registry;
    const due = await createRevisionGcActivities(later.deps).collectRevisions(key);
    const metrics = await registry.getMetricsAsJSON();
    expect(metrics.find((m) => m.name === 'tidal_revisions_collected_total')?.values).toEqual([
      expect.objectContaining({ value: 1, labels: { rule: 'stale' } }),
    ]);
    expect(await registry.getSingleMetricAsString('tidal_revision_gc_lateness_seconds')).toContain(
      'tidal_revision_gc_lateness_seconds_bucket{le="0.25"} 1',
    );
    expect(due).toMatchObject({ outcome: 'collected', deleted: [{ name: 'hello-00001', rule: 'stale', lateMs: 250 }] });
    expect(later.recorded[0]?.message).toMatch(
      /^Deleted Revision "hello-00001": not routed since .*; collectable at 2024-12-31T23:59:59.750Z \(retain-since-create-time 20s/,
    );
  });

  it('a Revision changed since it was read (its precondition fails) is read again and decided on as it is now', async () => {
    const { fake, acts, recorded, deps } = setup(hakn, [rev('hello-00001', 'reserve', 300), rev('hello-00003', 'active', 100)]);
    const del = deps.kube.delete.bind(deps.kube);
    // Its own workflow writes its status (no one is poked for that) between the step's first read and its delete.
    let writes = 0;
    deps.kube.delete = async (...args: Parameters<typeof del>) => {
      if (writes++ === 0) {
        const live = fake.get<Revision>(Resources.Revision, 'default', 'hello-00001')!;
        fake.seed(Resources.Revision, { ...live, status: { actualReplicas: 0 } });
      }
      return del(...args);
    };
    expect(await acts.collectRevisions(key)).toMatchObject({ outcome: 'collected', deleted: [{ name: 'hello-00001', rule: 'max' }] });
    expect(fake.writes('delete')).toHaveLength(2);
    expect(fake.get(Resources.Revision, 'default', 'hello-00001')).toBeUndefined();
    expect(recorded.map((e) => e.reason)).toEqual(['RevisionDeleted']);
  });

  it('a Revision routed again since it was read is kept: the second decision sees it active', async () => {
    const { fake, acts, recorded, deps } = setup(hakn, [rev('hello-00001', 'reserve', 300), rev('hello-00003', 'active', 100)]);
    const del = deps.kube.delete.bind(deps.kube);
    deps.kube.delete = async (...args: Parameters<typeof del>) => {
      const live = fake.get<Revision>(Resources.Revision, 'default', 'hello-00001')!;
      fake.seed(Resources.Revision, {
        ...live,
        metadata: { ...live.metadata, labels: { ...live.metadata.labels, 'serving.knative.dev/routingState': 'active' } },
      });
      return del(...args);
    };
    expect(await acts.collectRevisions(key)).toMatchObject({ outcome: 'nothing', deleted: [] });
    expect(fake.writes('delete')).toHaveLength(1);
    expect(fake.get(Resources.Revision, 'default', 'hello-00001')).toBeDefined();
    expect(recorded).toEqual([]);
  });

  it('a Revision that changes under every decision fails the step, for its retry to decide later', async () => {
    const { fake, acts, recorded, deps } = setup(hakn, [rev('hello-00001', 'reserve', 300), rev('hello-00003', 'active', 100)]);
    const del = deps.kube.delete.bind(deps.kube);
    let n = 0;
    deps.kube.delete = async (...args: Parameters<typeof del>) => {
      const live = fake.get<Revision>(Resources.Revision, 'default', 'hello-00001')!;
      fake.seed(Resources.Revision, { ...live, status: { actualReplicas: n++ } });
      return del(...args);
    };
    await expect(acts.collectRevisions(key)).rejects.toThrow('Revisions hello-00001 changed under each of 3 collections; retrying');
    expect(fake.writes('delete')).toHaveLength(3);
    expect(fake.get(Resources.Revision, 'default', 'hello-00001')).toBeDefined();
    expect(recorded).toEqual([]);
  });

  it('reads nothing from the API server when the cache shows no reserve Revision', async () => {
    const cache: MetadataCache = {
      list: async () => [
        {
          apiVersion: 'serving.knative.dev/v1',
          kind: 'Revision',
          metadata: { name: 'hello-00003', labels: { 'serving.knative.dev/routingState': 'active' } },
        },
      ],
    };
    const { fake, acts } = setup(hakn, [rev('hello-00003', 'active', 100)], cache);
    expect(await acts.collectRevisions(key)).toEqual({ outcome: 'nothing', deleted: [], summary: 'no reserve Revision' });
    expect(fake.calls).toEqual([]);
  });

  it('does nothing at all with every limit disabled', async () => {
    const { fake, acts } = setup({ ...hakn, maxNonActiveRevisions: GcDisabled }, [rev('hello-00001', 'reserve', 300)]);
    expect(await acts.collectRevisions(key)).toMatchObject({ outcome: 'nothing', summary: 'config-gc: every limit disabled' });
    expect(fake.calls).toEqual([]);
  });

  it('a Configuration being deleted: gone', async () => {
    const { fake, acts } = setup(hakn, [rev('hello-00001', 'reserve', 300)]);
    const cfg = fake.get<Configuration>(Resources.Configuration, 'default', 'hello')!;
    fake.seed(Resources.Configuration, { ...cfg, metadata: { ...cfg.metadata, deletionTimestamp: new Date(now).toISOString() } });
    expect(await acts.collectRevisions(key)).toEqual({ outcome: 'gone' });
  });
});
