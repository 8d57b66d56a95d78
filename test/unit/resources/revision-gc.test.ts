// Revision GC selection: upstream's cases (pkg/reconciler/gc/gc_test.go: TestCollectMin, TestCollectMax,
// TestCollectSettings, TestGCInOrder), Tidal's additions (latest created, rollouts) and the next eligibility time.
import { describe, expect, it } from 'vitest';
import { GcDisabled, type GcConfig } from '../../../api/config/index.js';
import type { Revision } from '../../../api/serving.js';
import { planRevisionGc, revisionsInRollout, staleAtMs } from '../../../resources/revision-gc.js';

const now = Date.parse('2026-11-25T12:00:00Z');
const min = (m: number) => now - m * 60_000;
const old = min(11);
const older = min(12);
const oldest = min(13);
const iso = (ms: number) => new Date(ms).toISOString().replace('.000Z', 'Z');

interface RevOpts {
  state?: 'active' | 'reserve' | 'pending' | undefined;
  modified?: number;
  created?: number;
  noGc?: string;
}

/** A Revision of Configuration `cfg` as upstream's fixtures build it; `WithRoutingState` stamps the clock's now. */
function rev(name: string, o: RevOpts = {}): Revision {
  const annotations: Record<string, string> = {};
  if (o.state !== undefined) annotations['serving.knative.dev/routingStateModified'] = iso(now);
  if (o.modified !== undefined) annotations['serving.knative.dev/routingStateModified'] = iso(o.modified);
  if (o.noGc !== undefined) annotations['serving.knative.dev/no-gc'] = o.noGc;
  return {
    apiVersion: 'serving.knative.dev/v1',
    kind: 'Revision',
    metadata: {
      name,
      namespace: 'foo',
      uid: `uid-${name}`,
      resourceVersion: '7',
      creationTimestamp: iso(o.created ?? min(60 * 24 * 10)),
      labels: { 'serving.knative.dev/configuration': 'cfg', ...(o.state ? { 'serving.knative.dev/routingState': o.state } : {}) },
      annotations,
    },
    spec: { containers: [{ image: 'busybox' }] },
  };
}

const names = (p: ReturnType<typeof planRevisionGc>) => p.collect.map((c) => c.name);
const gc = (c: Partial<GcConfig>): GcConfig => ({
  retainSinceCreateTimeMs: GcDisabled,
  retainSinceLastActiveTimeMs: GcDisabled,
  minNonActiveRevisions: 0,
  maxNonActiveRevisions: GcDisabled,
  ...c,
});

describe('upstream TestCollectMin (5 min retention, min 1, max disabled)', () => {
  const config = gc({ retainSinceCreateTimeMs: 300_000, retainSinceLastActiveTimeMs: 300_000, minNonActiveRevisions: 1 });
  it('too few revisions', () => {
    const p = planRevisionGc({
      config,
      latestReadyRevisionName: '5556',
      latestCreatedRevisionName: '5556',
      revisions: [rev('5556', { state: 'active', created: old })],
      nowMs: now,
    });
    expect(names(p)).toEqual([]);
    expect(p.nextAtMs).toBeUndefined();
  });
  it('delete oldest, keep one recent, one active', () => {
    const revisions = [
      rev('5554', { state: 'reserve', modified: oldest }),
      rev('5555', { state: 'reserve', modified: older }),
      rev('5556', { state: 'active', modified: old }),
    ];
    expect(names(planRevisionGc({ config, latestReadyRevisionName: '5556', latestCreatedRevisionName: '5556', revisions, nowMs: now }))).toEqual([
      '5554',
    ]);
    // no latest ready, one active: the same
    expect(names(planRevisionGc({ config, revisions, nowMs: now }))).toEqual(['5554']);
  });
  it('keep oldest when none reserved (pending, unset and active are all kept)', () => {
    const revisions = [
      rev('5554', { state: 'pending', created: oldest }),
      { ...rev('5555', { created: older }) },
      rev('5556', { state: 'active', created: old }),
    ];
    expect(names(planRevisionGc({ config, latestReadyRevisionName: '5556', latestCreatedRevisionName: '5556', revisions, nowMs: now }))).toEqual([]);
  });
  it('none stale: all reserve but active just now; the next falls due 5 min on', () => {
    const revisions = ['5554', '5555', '5556'].map((n) => rev(n, { state: 'reserve', modified: now }));
    const p = planRevisionGc({ config, revisions, nowMs: now });
    expect(names(p)).toEqual([]);
    expect(p.nextAtMs).toBe(now + 300_000);
  });
  it('keep oldest because of the preserve annotation (no-gc, any case)', () => {
    const revisions = [
      rev('5554', { state: 'reserve', modified: oldest, noGc: 'TRUE' }),
      rev('5555', { state: 'reserve', modified: older }),
      rev('5556', { state: 'reserve', modified: old }),
    ];
    expect(names(planRevisionGc({ config, revisions, nowMs: now }))).toEqual(['5555']);
  });
});

describe('upstream TestCollectMax (1 h retention, min 1, max 2)', () => {
  const config = gc({
    retainSinceCreateTimeMs: 3_600_000,
    retainSinceLastActiveTimeMs: 3_600_000,
    minNonActiveRevisions: 1,
    maxNonActiveRevisions: 2,
  });
  const latest = { latestReadyRevisionName: '5556', latestCreatedRevisionName: '5556' };
  it('at max', () => {
    const revisions = [
      rev('5554', { state: 'reserve', modified: older }),
      rev('5555', { state: 'reserve', modified: older }),
      rev('5556', { state: 'active', modified: old }),
    ];
    expect(names(planRevisionGc({ config, ...latest, revisions, nowMs: now }))).toEqual([]);
  });
  it('delete oldest, keep three max', () => {
    const revisions = [
      rev('5553', { state: 'reserve', modified: oldest }),
      rev('5554', { state: 'reserve', modified: older }),
      rev('5555', { state: 'reserve', modified: older }),
      rev('5556', { state: 'active', modified: old }),
    ];
    const p = planRevisionGc({ config, ...latest, revisions, nowMs: now });
    expect(p.collect).toEqual([expect.objectContaining({ name: '5553', rule: 'max', uid: 'uid-5553', resourceVersion: '7' })]);
    expect(p.collect[0]?.eligibleAtMs).toBeUndefined();
  });
  it('over max, all active', () => {
    const revisions = ['5553', '5554', '5555', '5556'].map((n) => rev(n, { state: 'active' }));
    expect(names(planRevisionGc({ config, ...latest, revisions, nowMs: now }))).toEqual([]);
  });
});

describe('upstream TestCollectSettings', () => {
  const revisions = [
    rev('5554', { state: 'reserve', modified: oldest }),
    rev('5555', { state: 'reserve', modified: older }),
    rev('5556', { state: 'active', modified: old }),
  ];
  const latest = { latestReadyRevisionName: '5556', latestCreatedRevisionName: '5556' };
  it.each([
    ['all disabled', gc({ minNonActiveRevisions: 1 }), []],
    ['staleness disabled', gc({ minNonActiveRevisions: 0, maxNonActiveRevisions: 1 }), ['5554']],
    ['max disabled', gc({ retainSinceLastActiveTimeMs: 60_000, minNonActiveRevisions: 1 }), ['5554']],
  ])('%s', (_name, config, want) => {
    expect(names(planRevisionGc({ config, ...latest, revisions, nowMs: now }))).toEqual(want);
  });
});

describe('upstream TestGCInOrder', () => {
  const revisions = [
    rev('5553', { state: 'reserve', modified: min(15) }),
    rev('5554', { state: 'reserve', modified: min(14) }),
    rev('5555', { state: 'reserve', modified: min(13) }),
    rev('5556', { state: 'reserve', modified: min(12) }),
    rev('5557', { state: 'active', modified: min(11) }),
  ].reverse(); // list order does not matter: oldest last-active first
  const latest = { latestReadyRevisionName: '5557', latestCreatedRevisionName: '5557' };
  it('retain one item', () => {
    expect(names(planRevisionGc({ config: gc({ minNonActiveRevisions: 1, maxNonActiveRevisions: 1 }), ...latest, revisions, nowMs: now }))).toEqual([
      '5553',
      '5554',
      '5555',
    ]);
  });
  it('retain two items', () => {
    expect(names(planRevisionGc({ config: gc({ minNonActiveRevisions: 2, maxNonActiveRevisions: 2 }), ...latest, revisions, nowMs: now }))).toEqual([
      '5553',
      '5554',
    ]);
  });
});

describe("hakn's config (min 0, max 0, retentions disabled)", () => {
  const config = gc({ minNonActiveRevisions: 0, maxNonActiveRevisions: 0 });
  it('every reserve Revision goes at once, never-ready ones included; routed, latest and no-gc ones stay; nothing is scheduled', () => {
    const revisions = [
      rev('a-00001', { state: 'reserve', modified: min(30) }),
      rev('a-00002', { state: 'reserve', modified: min(20) }), // never became Ready: collected all the same
      rev('a-00003', { state: 'active', modified: min(10) }), // 10 % of a split
      rev('a-00004', { state: 'reserve', modified: min(9), noGc: 'true' }),
      rev('a-00005', { state: 'active', modified: min(1) }),
    ];
    const p = planRevisionGc({ config, latestReadyRevisionName: 'a-00005', latestCreatedRevisionName: 'a-00005', revisions, nowMs: now });
    expect(names(p)).toEqual(['a-00001', 'a-00002']);
    expect(p.collect.every((c) => c.rule === 'max')).toBe(true);
    expect(p.nextAtMs).toBeUndefined();
  });
  it('never the latest created Revision, even reserve and not yet ready (latest ready is older)', () => {
    const revisions = [rev('a-00001', { state: 'active' }), rev('a-00002', { state: 'reserve' })];
    expect(
      names(planRevisionGc({ config, latestReadyRevisionName: 'a-00001', latestCreatedRevisionName: 'a-00002', revisions, nowMs: now })),
    ).toEqual([]);
  });
  it('never a Revision an in-flight gradual rollout still routes to', () => {
    const rollout = { configurations: [{ revisions: [{ revisionName: 'a-00001' }, { revisionName: 'a-00003' }] }] };
    const revisions = [rev('a-00001', { state: 'reserve' }), rev('a-00002', { state: 'reserve' }), rev('a-00003', { state: 'active' })];
    const p = planRevisionGc({ config, latestReadyRevisionName: 'a-00003', revisions, rolloutRevisions: revisionsInRollout(rollout), nowMs: now });
    expect(names(p)).toEqual(['a-00002']);
  });
  it('never a reserve Revision that traffic names, before the labeler has marked it active', () => {
    const revisions = [rev('a-00001', { state: 'reserve' }), rev('a-00002', { state: 'reserve' }), rev('a-00003', { state: 'active' })];
    const p = planRevisionGc({ config, latestReadyRevisionName: 'a-00003', revisions, trafficRevisions: ['a-00001'], nowMs: now });
    expect(names(p)).toEqual(['a-00002']);
  });
});

describe('the next eligibility time', () => {
  it('retain-since-create-time 20 s, min 0: a reserve Revision falls due 20 s after its creationTimestamp, to the millisecond', () => {
    const config = gc({ retainSinceCreateTimeMs: 20_000 });
    const created = now - 5_000;
    const revisions = [
      rev('a-00001', { state: 'reserve', created, modified: now - 1_000 }),
      rev('a-00002', { state: 'active', created: now - 2_000 }),
    ];
    const before = planRevisionGc({ config, latestReadyRevisionName: 'a-00002', revisions, nowMs: now });
    expect(names(before)).toEqual([]);
    expect(before).toMatchObject({ nextAtMs: created + 20_000, next: 'a-00001' });
    // One millisecond early: still kept; at the time: collected as stale, eligible then.
    expect(names(planRevisionGc({ config, latestReadyRevisionName: 'a-00002', revisions, nowMs: created + 19_999 }))).toEqual([]);
    const at = planRevisionGc({ config, latestReadyRevisionName: 'a-00002', revisions, nowMs: created + 20_000 });
    expect(at.collect).toEqual([expect.objectContaining({ name: 'a-00001', rule: 'stale', eligibleAtMs: created + 20_000 })]);
    expect(at.nextAtMs).toBeUndefined();
  });
  it('both retentions: the later of create + retain and last active + retain', () => {
    const config = gc({ retainSinceCreateTimeMs: 60_000, retainSinceLastActiveTimeMs: 30_000 });
    const r = rev('x', { state: 'reserve', created: now - 50_000, modified: now - 5_000 });
    expect(staleAtMs(config, r)).toBe(now + 25_000);
    expect(staleAtMs(gc({}), r)).toBe(Number.POSITIVE_INFINITY);
  });
  it('the earliest of several, and none once only min remain', () => {
    const config = gc({ retainSinceLastActiveTimeMs: 60_000, minNonActiveRevisions: 1 });
    const revisions = [
      rev('a', { state: 'reserve', modified: now - 10_000 }),
      rev('b', { state: 'reserve', modified: now - 40_000 }),
      rev('c', { state: 'reserve', modified: now - 20_000 }),
    ];
    expect(planRevisionGc({ config, revisions, nowMs: now })).toMatchObject({ nextAtMs: now + 20_000, next: 'b' });
    const p = planRevisionGc({ config, revisions, nowMs: now + 50_000 });
    expect(names(p)).toEqual(['b', 'c']);
    expect(p.nextAtMs).toBeUndefined();
  });
  it('an unparseable routingStateModified counts from creation, as upstream', () => {
    const r = rev('x', { state: 'reserve', created: now - 50_000 });
    r.metadata.annotations!['serving.knative.dev/routingStateModified'] = 'yesterday';
    expect(staleAtMs(gc({ retainSinceLastActiveTimeMs: 60_000 }), r)).toBe(now + 10_000);
  });
});
