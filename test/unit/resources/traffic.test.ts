import { describe, expect, it } from 'vitest';
import { routeConditionSet, type RouteStatus } from '../../../api/lifecycle/route.js';
import type { Configuration, Revision, Route, TrafficTarget } from '../../../api/serving.js';
import {
  awaitsPods,
  buildTrafficConfiguration,
  isTargetFailure,
  markBadTrafficTarget,
  statusTraffic,
  trafficNames,
  type TrafficTargetError,
} from '../../../resources/traffic.js';

const NS = 'default';
const T0 = '2025-01-01T00:00:00Z';

type ReadyState = 'True' | 'False' | 'Unknown';

function rev(
  name: string,
  opts: { config?: string | null; service?: string | null; ready?: ReadyState; h2c?: boolean; stale?: boolean } = {},
): Revision {
  const labels: Record<string, string> = {};
  if (opts.config !== null) labels['serving.knative.dev/configuration'] = opts.config ?? 'hello';
  if (opts.service !== null) labels['serving.knative.dev/service'] = opts.service ?? 'hello';
  return {
    apiVersion: 'serving.knative.dev/v1',
    kind: 'Revision',
    metadata: { name, namespace: NS, generation: 1, labels },
    spec: { containers: [{ image: 'nginx', ...(opts.h2c ? { ports: [{ name: 'h2c', containerPort: 8080 }] } : {}) }] },
    status: { observedGeneration: opts.stale ? 0 : 1, conditions: [{ type: 'Ready', status: opts.ready ?? 'True' }] },
  };
}

function cfg(name: string, latestReady?: string, ready: ReadyState = 'True'): Configuration {
  return {
    apiVersion: 'serving.knative.dev/v1',
    kind: 'Configuration',
    metadata: { name, namespace: NS },
    spec: { template: { spec: { containers: [{ image: 'nginx' }] } } },
    status: { ...(latestReady ? { latestReadyRevisionName: latestReady } : {}), conditions: [{ type: 'Ready', status: ready }] },
  };
}

function route(traffic: TrafficTarget[], labels: Record<string, string> = {}): Route {
  return { apiVersion: 'serving.knative.dev/v1', kind: 'Route', metadata: { name: 'hello', namespace: NS, labels }, spec: { traffic } };
}

const byName = <T extends { metadata: { name?: string } }>(...objs: T[]): Record<string, T> =>
  Object.fromEntries(objs.map((o) => [o.metadata.name!, o]));

function conditionFor(err: TrafficTargetError) {
  const status: RouteStatus = {};
  routeConditionSet.initialize(status, T0);
  markBadTrafficTarget(status, err, T0);
  return routeConditionSet.get(status, 'AllTrafficAssigned');
}

describe('buildTrafficConfiguration: resolution', () => {
  it('a configuration target resolves to latestReadyRevisionName (golden)', () => {
    const r1 = rev('hello-00001');
    const c = cfg('hello', 'hello-00001');
    const result = buildTrafficConfiguration(
      route([{ configurationName: 'hello', latestRevision: true, percent: 100 }]),
      byName(c, cfg('unrelated', 'x')),
      byName(r1, rev('hello-00002')),
    );
    expect(result).toEqual({
      config: {
        targets: {
          '': [{ revisionName: 'hello-00001', configurationName: 'hello', latestRevision: true, percent: 100, protocol: 'http1' }],
        },
        revisionTargets: [{ revisionName: 'hello-00001', configurationName: 'hello', latestRevision: true, percent: 100, protocol: 'http1' }],
        configurations: { hello: c },
        revisions: { 'hello-00001': r1 },
        missingTargets: [],
      },
    });
  });

  it("revision + configuration targets with a tag; the revision's configuration label is recorded (golden)", () => {
    const r1 = rev('hello-00001');
    const r2 = rev('hello-00002', { h2c: true });
    const c = cfg('hello', 'hello-00002');
    const { config, error } = buildTrafficConfiguration(
      route([
        { configurationName: 'hello', latestRevision: true, percent: 90 },
        { revisionName: 'hello-00001', latestRevision: false, percent: 10, tag: 'old' },
      ]),
      byName(c),
      byName(r1, r2),
    );
    expect(error).toBeUndefined();
    expect(config.targets).toEqual({
      '': [
        { revisionName: 'hello-00002', configurationName: 'hello', latestRevision: true, percent: 90, protocol: 'h2c' },
        { revisionName: 'hello-00001', configurationName: 'hello', latestRevision: false, percent: 10, protocol: 'http1', tag: 'old' },
      ],
      old: [{ revisionName: 'hello-00001', configurationName: 'hello', latestRevision: false, percent: 100, protocol: 'http1', tag: 'old' }],
    });
    expect(config.revisionTargets).toEqual([
      { revisionName: 'hello-00002', configurationName: 'hello', latestRevision: true, percent: 90, protocol: 'h2c' },
      { revisionName: 'hello-00001', configurationName: 'hello', latestRevision: false, percent: 10, protocol: 'http1', tag: 'old' },
    ]);
    expect(config.configurations).toEqual({ hello: c });
    expect(config.revisions).toEqual({ 'hello-00002': r2, 'hello-00001': r1 });
    expect(trafficNames(config)).toEqual(['', 'old']);
  });

  it('one unready revision among ready ones → nothing is programmed', () => {
    const { config, error } = buildTrafficConfiguration(
      route([
        { revisionName: 'hello-00001', percent: 50 },
        { revisionName: 'hello-00002', percent: 50 },
      ]),
      byName(cfg('hello', 'hello-00001')),
      byName(rev('hello-00001'), rev('hello-00002', { ready: 'Unknown' })),
    );
    expect(error).toEqual({ type: 'UnreadyRevision', name: 'hello-00002', failed: false });
    expect(config.targets).toEqual({});
    expect(config.revisionTargets).toEqual([]);
    expect(Object.keys(config.revisions)).toEqual(['hello-00001', 'hello-00002']);
  });

  it('a Revision that has not observed its generation is not ready', () => {
    const { error } = buildTrafficConfiguration(
      route([{ revisionName: 'hello-00001', percent: 100 }]),
      byName(cfg('hello')),
      byName(rev('hello-00001', { stale: true })),
    );
    expect(error).toEqual({ type: 'UnreadyRevision', name: 'hello-00001', failed: false });
  });

  it('a failed Revision → failure', () => {
    const { error } = buildTrafficConfiguration(
      route([{ revisionName: 'hello-00001', percent: 100 }]),
      byName(cfg('hello')),
      byName(rev('hello-00001', { ready: 'False' })),
    );
    expect(error).toEqual({ type: 'UnreadyRevision', name: 'hello-00001', failed: true });
    expect(conditionFor(error!)).toMatchObject({
      status: 'False',
      reason: 'RevisionMissing',
      message: 'Revision "hello-00001" failed to become ready.',
    });
  });

  it("reads undefaulted traffic with Knative's defaults (latestRevision ← no revisionName, percent ← 0)", () => {
    const { config } = buildTrafficConfiguration(
      route([
        { configurationName: 'hello', percent: 100 },
        { revisionName: 'hello-00001', tag: 'pinned' },
      ]),
      byName(cfg('hello', 'hello-00002')),
      byName(rev('hello-00001'), rev('hello-00002')),
    );
    expect(config.revisionTargets.map((t) => [t.revisionName, t.latestRevision, t.percent])).toEqual([
      ['hello-00002', true, 100],
      ['hello-00001', false, 0],
    ]);
  });
});

describe('buildTrafficConfiguration: missing targets', () => {
  it('missing Configuration → ConfigurationMissing False, recorded in missingTargets (golden)', () => {
    const result = buildTrafficConfiguration(route([{ configurationName: 'gone', latestRevision: true, percent: 100 }]), {}, {});
    expect(result).toEqual({
      config: {
        targets: {},
        revisionTargets: [],
        configurations: {},
        revisions: {},
        missingTargets: [{ apiVersion: 'serving.knative.dev/v1', kind: 'Configuration', name: 'gone', namespace: NS }],
      },
      error: { type: 'Missing', kind: 'Configuration', name: 'gone' },
    });
    expect(conditionFor(result.error!)).toEqual({
      type: 'AllTrafficAssigned',
      status: 'False',
      reason: 'ConfigurationMissing',
      message: 'Configuration "gone" referenced in traffic not found.',
      lastTransitionTime: T0,
    });
  });

  it('missing Revision → RevisionMissing False', () => {
    const { config, error } = buildTrafficConfiguration(route([{ revisionName: 'hello-00009', percent: 100 }]), byName(cfg('hello')), {});
    expect(error).toEqual({ type: 'Missing', kind: 'Revision', name: 'hello-00009' });
    expect(config.missingTargets).toEqual([{ apiVersion: 'serving.knative.dev/v1', kind: 'Revision', name: 'hello-00009', namespace: NS }]);
    expect(conditionFor(error!)).toMatchObject({
      status: 'False',
      reason: 'RevisionMissing',
      message: 'Revision "hello-00009" referenced in traffic not found.',
    });
  });

  it('a Revision whose configuration label names a missing Configuration → ConfigurationMissing', () => {
    const { error, config } = buildTrafficConfiguration(route([{ revisionName: 'hello-00001', percent: 100 }]), {}, byName(rev('hello-00001')));
    expect(error).toEqual({ type: 'Missing', kind: 'Configuration', name: 'hello' });
    expect(config.missingTargets).toHaveLength(1);
  });

  it('a latestReadyRevisionName that does not exist → RevisionMissing', () => {
    const { error } = buildTrafficConfiguration(route([{ configurationName: 'hello', percent: 100 }]), byName(cfg('hello', 'hello-00003')), {});
    expect(error).toEqual({ type: 'Missing', kind: 'Revision', name: 'hello-00003' });
  });

  it('every reference is collected even after an error', () => {
    const { config } = buildTrafficConfiguration(
      route([
        { configurationName: 'gone', percent: 50 },
        { revisionName: 'hello-00001', percent: 25 },
        { revisionName: 'missing-rev', percent: 25 },
      ]),
      byName(cfg('hello')),
      byName(rev('hello-00001')),
    );
    expect(config.missingTargets.map((m) => `${m.kind}/${m.name}`)).toEqual(['Configuration/gone', 'Revision/missing-rev']);
    expect(Object.keys(config.configurations)).toEqual(['hello']);
    expect(Object.keys(config.revisions)).toEqual(['hello-00001']);
  });
});

describe('buildTrafficConfiguration: not-ready Configurations', () => {
  it('no ready Revision yet → Unknown RevisionMissing', () => {
    const { error } = buildTrafficConfiguration(
      route([{ configurationName: 'hello', percent: 100 }]),
      byName(cfg('hello', undefined, 'Unknown')),
      {},
    );
    expect(error).toEqual({ type: 'UnreadyConfiguration', name: 'hello', failed: false });
    expect(isTargetFailure(error!)).toBe(false);
    expect(conditionFor(error!)).toMatchObject({
      status: 'Unknown',
      reason: 'RevisionMissing',
      message: 'Configuration "hello" is waiting for a Revision to become ready.',
    });
  });

  it('failed Configuration → False RevisionMissing', () => {
    const { error } = buildTrafficConfiguration(route([{ configurationName: 'hello', percent: 100 }]), byName(cfg('hello', undefined, 'False')), {});
    expect(error).toEqual({ type: 'UnreadyConfiguration', name: 'hello', failed: true });
    expect(conditionFor(error!)).toMatchObject({
      status: 'False',
      reason: 'RevisionMissing',
      message: 'Configuration "hello" does not have any ready Revision.',
    });
  });

  it('a later failure overrides an earlier wait; a later wait does not override a failure', () => {
    const waitThenFail = buildTrafficConfiguration(
      route([
        { configurationName: 'slow', percent: 50 },
        { configurationName: 'gone', percent: 50 },
      ]),
      byName(cfg('slow', undefined, 'Unknown')),
      {},
    );
    expect(waitThenFail.error).toEqual({ type: 'Missing', kind: 'Configuration', name: 'gone' });
    const failThenWait = buildTrafficConfiguration(
      route([
        { configurationName: 'gone', percent: 50 },
        { configurationName: 'slow', percent: 50 },
      ]),
      byName(cfg('slow', undefined, 'Unknown')),
      {},
    );
    expect(failThenWait.error).toEqual({ type: 'Missing', kind: 'Configuration', name: 'gone' });
    const waitThenWait = buildTrafficConfiguration(
      route([
        { configurationName: 'a', percent: 50 },
        { configurationName: 'b', percent: 50 },
      ]),
      byName(cfg('a', undefined, 'Unknown'), cfg('b', undefined, 'Unknown')),
      {},
    );
    expect(waitThenWait.error).toEqual({ type: 'UnreadyConfiguration', name: 'a', failed: false });
  });
});

describe('buildTrafficConfiguration: ownership', () => {
  const svcRoute = (traffic: TrafficTarget[]) => route(traffic, { 'serving.knative.dev/service': 'hello' });

  it("a Service-owned Route naming another Service's Revision → RevisionNotOwned False", () => {
    const { error, config } = buildTrafficConfiguration(
      svcRoute([
        { configurationName: 'hello', percent: 50 },
        { revisionName: 'other-00001', percent: 50 },
      ]),
      byName(cfg('hello', 'hello-00001'), cfg('other')),
      byName(rev('hello-00001'), rev('other-00001', { config: 'other', service: 'other' })),
    );
    expect(error).toEqual({ type: 'RevisionNotOwned', name: 'other-00001', revisionService: 'other', routeService: 'hello' });
    expect(isTargetFailure(error!)).toBe(true);
    expect(config.targets).toEqual({});
    expect(conditionFor(error!)).toEqual({
      type: 'AllTrafficAssigned',
      status: 'False',
      reason: 'RevisionNotOwned',
      message: 'Revision "other-00001" belongs to Service "other", not Service "hello".',
      lastTransitionTime: T0,
    });
  });

  it('a Revision of no Service → RevisionNotOwned "does not belong to"', () => {
    const { error } = buildTrafficConfiguration(
      svcRoute([{ revisionName: 'loose-00001', percent: 100 }]),
      byName(cfg('loose')),
      byName(rev('loose-00001', { config: 'loose', service: null })),
    );
    expect(error).toEqual({ type: 'RevisionNotOwned', name: 'loose-00001', revisionService: undefined, routeService: 'hello' });
    expect(conditionFor(error!)?.message).toBe('Revision "loose-00001" does not belong to Service "hello".');
  });

  it("a standalone Route may name any Revision; its own Service's Revision is fine", () => {
    const revs = byName(rev('other-00001', { config: 'other', service: 'other' }), rev('hello-00001'));
    const cfgs = byName(cfg('other'), cfg('hello'));
    expect(buildTrafficConfiguration(route([{ revisionName: 'other-00001', percent: 100 }]), cfgs, revs).error).toBeUndefined();
    expect(buildTrafficConfiguration(svcRoute([{ revisionName: 'hello-00001', percent: 100 }]), cfgs, revs).error).toBeUndefined();
  });
});

describe('grouping, merging, 0 % and tags', () => {
  const revs = byName(rev('hello-00001'), rev('hello-00002'), rev('hello-00003'));
  const cfgs = byName(cfg('hello', 'hello-00003'));

  it('duplicate targets are merged: status by tag+revision+latestRevision, groups by revision', () => {
    const { config } = buildTrafficConfiguration(
      route([
        { revisionName: 'hello-00001', percent: 20 },
        { revisionName: 'hello-00001', percent: 30 },
        { configurationName: 'hello', latestRevision: true, percent: 25 },
        { revisionName: 'hello-00003', latestRevision: false, percent: 25 },
      ]),
      cfgs,
      revs,
    );
    expect(config.revisionTargets.map((t) => [t.revisionName, t.latestRevision, t.percent])).toEqual([
      ['hello-00001', false, 50],
      ['hello-00003', true, 25],
      ['hello-00003', false, 25],
    ]);
    expect(config.targets['']!.map((t) => [t.revisionName, t.latestRevision, t.percent])).toEqual([
      ['hello-00001', false, 50],
      ['hello-00003', true, 50],
    ]);
  });

  it('0 % targets stay in the groups (the Ingress leaves them out) and a lone 0 % tag gets 100 %', () => {
    const { config } = buildTrafficConfiguration(
      route([
        { configurationName: 'hello', latestRevision: true, percent: 100 },
        { revisionName: 'hello-00001', percent: 0, tag: 'v1' },
        { revisionName: 'hello-00002', percent: 0, tag: 'v2' },
      ]),
      cfgs,
      revs,
    );
    expect(config.targets['']!.map((t) => [t.revisionName, t.percent])).toEqual([
      ['hello-00003', 100],
      ['hello-00001', 0],
      ['hello-00002', 0],
    ]);
    expect(config.targets['v1']!.map((t) => [t.revisionName, t.percent])).toEqual([['hello-00001', 100]]);
    expect(config.targets['v2']!.map((t) => [t.revisionName, t.percent])).toEqual([['hello-00002', 100]]);
    expect(trafficNames(config)).toEqual(['', 'v1', 'v2']);
  });

  it('a single default entry is forced to 100 %', () => {
    const { config } = buildTrafficConfiguration(route([{ revisionName: 'hello-00001', percent: 37 }]), cfgs, revs);
    expect(config.targets['']!.map((t) => t.percent)).toEqual([100]);
    expect(config.revisionTargets.map((t) => t.percent)).toEqual([37]);
  });
});

describe('statusTraffic', () => {
  it('revisionName, percent, latestRevision, tag and url for tags; never configurationName (golden)', () => {
    const { config } = buildTrafficConfiguration(
      route([
        { configurationName: 'hello', latestRevision: true, percent: 90 },
        { revisionName: 'hello-00001', latestRevision: false, percent: 10, tag: 'old' },
        { configurationName: 'hello', latestRevision: true, percent: 0, tag: 'latest' },
      ]),
      byName(cfg('hello', 'hello-00002')),
      byName(rev('hello-00001'), rev('hello-00002')),
    );
    expect(
      statusTraffic(config, {
        old: 'http://old-hello.default.example.com',
        latest: 'http://latest-hello.default.example.com',
      }),
    ).toEqual([
      { revisionName: 'hello-00002', latestRevision: true, percent: 90 },
      { tag: 'old', revisionName: 'hello-00001', latestRevision: false, percent: 10, url: 'http://old-hello.default.example.com' },
      { tag: 'latest', revisionName: 'hello-00002', latestRevision: true, percent: 0, url: 'http://latest-hello.default.example.com' },
    ]);
  });

  it('a tag without a known URL gets none; an error config yields an empty list', () => {
    const ok = buildTrafficConfiguration(
      route([{ revisionName: 'hello-00001', percent: 100, tag: 't' }]),
      byName(cfg('hello')),
      byName(rev('hello-00001')),
    );
    expect(statusTraffic(ok.config)).toEqual([{ tag: 't', revisionName: 'hello-00001', latestRevision: false, percent: 100 }]);
    const bad = buildTrafficConfiguration(route([{ revisionName: 'nope', percent: 100 }]), {}, {});
    expect(statusTraffic(bad.config)).toEqual([]);
  });
});

describe('awaitsPods: a Route sends a Revision traffic only once its pods are up (ADR 0018)', () => {
  const withActive = (r: Revision, status: ReadyState, reason?: string): Revision => ({
    ...r,
    status: { ...r.status, conditions: [...(r.status?.conditions ?? []), { type: 'Active', status, ...(reason ? { reason } : {}) }] },
  });
  const scaledDown = withActive(rev('hello-00001'), 'False', 'NoTraffic');
  const queued = withActive(rev('hello-00001'), 'Unknown', 'Queued');
  const up = withActive(rev('hello-00001'), 'True');
  const two = () => 2;

  it('holds a ready Revision scaled to zero or scaling back up, unless the Route already serves it or it runs no pods', () => {
    const none = new Set<string>();
    expect(awaitsPods(scaledDown, none, two)).toBe(true);
    expect(awaitsPods(queued, none, two)).toBe(true);
    expect(awaitsPods(up, none, two)).toBe(false);
    expect(awaitsPods(scaledDown, new Set(['hello-00001']), two)).toBe(false);
    expect(awaitsPods(scaledDown, none, () => 0)).toBe(false); // min-scale and initial-scale 0: nothing to wait for
    expect(awaitsPods(rev('hello-00001'), none, two)).toBe(false); // no Active (a foreign module's Revision)
  });

  it('holds a Revision still labelled reserve whatever its Active says: its own pass may be scaling it down', () => {
    const none = new Set<string>();
    const reserve = (r: Revision): Revision => ({
      ...r,
      metadata: { ...r.metadata, labels: { ...r.metadata.labels, 'serving.knative.dev/routingState': 'reserve' } },
    });
    expect(awaitsPods(reserve(up), none, two)).toBe(true);
    expect(awaitsPods(reserve(up), new Set(['hello-00001']), two)).toBe(false);
    expect(awaitsPods(reserve(rev('hello-00001')), none, two)).toBe(false); // no Active: a foreign module's pods
    const active = { ...up, metadata: { ...up.metadata, labels: { ...up.metadata.labels, 'serving.knative.dev/routingState': 'active' } } };
    expect(awaitsPods(active, none, two)).toBe(false);
  });

  it('a held Revision is a wait (UnreadyRevision, AllTrafficAssigned Unknown): nothing is programmed', () => {
    const hold = { awaitsPods: (r: Revision) => awaitsPods(r, new Set(), two) };
    const named = buildTrafficConfiguration(
      route([
        { revisionName: 'hello-00002', percent: 50 },
        { revisionName: 'hello-00001', percent: 50 },
      ]),
      byName(cfg('hello', 'hello-00002')),
      byName(withActive(rev('hello-00002'), 'True'), scaledDown),
      hold,
    );
    expect(named.error).toEqual({ type: 'UnreadyRevision', name: 'hello-00001', failed: false });
    expect(named.config.revisionTargets).toEqual([]);
    expect(conditionFor(named.error!)).toMatchObject({
      status: 'Unknown',
      reason: 'RevisionMissing',
      message: 'Revision "hello-00001" is not yet ready.',
    });
    // A configuration target whose latest ready Revision is scaled down waits for it the same way.
    const latest = buildTrafficConfiguration(
      route([{ configurationName: 'hello', latestRevision: true, percent: 100 }]),
      byName(cfg('hello', 'hello-00001')),
      byName(scaledDown),
      hold,
    );
    expect(latest.error).toEqual({ type: 'UnreadyRevision', name: 'hello-00001', failed: false });
    // Once up, the split is programmed.
    const ready = buildTrafficConfiguration(
      route([{ revisionName: 'hello-00001', percent: 100 }]),
      byName(cfg('hello', 'hello-00001')),
      byName(up),
      hold,
    );
    expect(ready.error).toBeUndefined();
    expect(ready.config.revisionTargets.map((t) => t.revisionName)).toEqual(['hello-00001']);
  });
});
