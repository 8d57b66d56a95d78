import { describe, expect, it } from 'vitest';
import { containsAll } from '../../../activities/apply.js';
import type { EventRecorder } from '../../../activities/events.js';
import { failureStatus, writeStatusWithEvents } from '../../../activities/status.js';
import { Resources } from '../../../api/kinds.js';
import type { Service } from '../../../api/serving.js';
import { service } from '../../fixtures/serving.js';
import { KubeFake } from './kube-fake.js';
import { serviceConditionSet } from '../../../api/lifecycle/service.js';

describe('containsAll (an apply of `desired` would change nothing)', () => {
  it('scalars compare strictly', () => {
    expect(containsAll('a', 'a')).toBe(true);
    expect(containsAll(1, 1)).toBe(true);
    expect(containsAll(true, true)).toBe(true);
    expect(containsAll('1', 1)).toBe(false);
    expect(containsAll(0, false)).toBe(false);
    expect(containsAll(undefined, 'a')).toBe(false);
  });

  it('undefined desired matches anything; null desired only null', () => {
    expect(containsAll('x', undefined)).toBe(true);
    expect(containsAll(undefined, undefined)).toBe(true);
    expect(containsAll(null, null)).toBe(true);
    expect(containsAll(undefined, null)).toBe(false);
    expect(containsAll({}, null)).toBe(false);
  });

  it('nested objects: every desired field must be present with the same value', () => {
    const actual = { metadata: { name: 'hello', labels: { a: '1', b: '2' } }, spec: { template: { spec: { containers: [{ image: 'nginx' }] } } } };
    expect(containsAll(actual, { metadata: { labels: { a: '1' } } })).toBe(true);
    expect(containsAll(actual, { metadata: { labels: { a: '2' } } })).toBe(false);
    expect(containsAll(actual, { spec: { template: { spec: { containers: [{ image: 'nginx' }] } } } })).toBe(true);
    expect(containsAll(actual, { spec: { template: { spec: { containers: [{ image: 'nginx:2' }] } } } })).toBe(false);
  });

  it('missing keys in actual fail; extra keys in actual are allowed', () => {
    expect(containsAll({ a: 1, b: 2, c: { d: 3, e: 4 } }, { a: 1, c: { d: 3 } })).toBe(true);
    expect(containsAll({ a: 1 }, { a: 1, b: 2 })).toBe(false);
    expect(containsAll({ a: {} }, { a: { b: 'x' } })).toBe(false);
    expect(containsAll({ a: 1 }, {})).toBe(true);
  });

  it('a property whose desired value is undefined is ignored', () => {
    expect(containsAll({ a: 1 }, { a: 1, b: undefined })).toBe(true);
  });

  it('arrays: same length required, elements compared by position with containsAll', () => {
    expect(containsAll([{ a: 1, extra: true }, { b: 2 }], [{ a: 1 }, { b: 2 }])).toBe(true);
    expect(containsAll([1, 2, 3], [1, 2])).toBe(false);
    expect(containsAll([1, 2], [1, 2, 3])).toBe(false);
    expect(containsAll([2, 1], [1, 2])).toBe(false);
    expect(containsAll([], [])).toBe(true);
    expect(containsAll({ traffic: [{ percent: 100, latestRevision: true }] }, { traffic: [] })).toBe(false);
  });

  it('type mismatches between arrays, objects and scalars fail', () => {
    expect(containsAll({ 0: 'a' }, ['a'])).toBe(false);
    expect(containsAll(['a'], { 0: 'a' })).toBe(false);
    expect(containsAll('abc', { length: 3 })).toBe(false);
    expect(containsAll(null, {})).toBe(false);
    expect(containsAll({ a: { b: 1 } }, { a: 'x' })).toBe(false);
  });
});

describe('failureStatus (a refused apply, laid over the current status)', () => {
  const T0 = '2025-01-01T00:00:00Z';
  const T1 = '2025-01-01T00:01:00Z';

  it('marks the condition and Ready False, sets observedGeneration, keeps the other conditions and their times', () => {
    const svc = {
      metadata: { generation: 2 },
      status: {
        observedGeneration: 1,
        conditions: [
          { type: 'ConfigurationsReady', status: 'False' as const, reason: 'InternalError', message: 'cfg refused', lastTransitionTime: T0 },
          { type: 'Ready', status: 'False' as const, reason: 'InternalError', message: 'cfg refused', lastTransitionTime: T0 },
          { type: 'RoutesReady', status: 'True' as const, lastTransitionTime: T0 },
        ],
      },
    };
    const status = failureStatus(svc, serviceConditionSet, 'RoutesReady', 'InternalError', 'route refused', T1);
    expect(status.observedGeneration).toBe(2);
    expect(status.conditions).toEqual([
      { type: 'ConfigurationsReady', status: 'False', reason: 'InternalError', message: 'cfg refused', lastTransitionTime: T0 },
      { type: 'Ready', status: 'False', reason: 'InternalError', message: 'route refused', lastTransitionTime: T1 },
      { type: 'RoutesReady', status: 'False', reason: 'InternalError', message: 'route refused', lastTransitionTime: T1 },
    ]);
    expect(svc.status.conditions[2]!.status).toBe('True'); // not mutated
  });
});

describe('writeStatusWithEvents', () => {
  const ready = { observedGeneration: 1, conditions: [{ type: 'Ready', status: 'True' as const }] };
  const setup = () => {
    const fake = new KubeFake();
    const svc = fake.seed(Resources.Service, service('hello', 'default'));
    // What the stored status said when each Event was recorded.
    const seen: { reason: string; storedReady: string | undefined }[] = [];
    const events: EventRecorder = {
      record: async (_o, _t, reason) => {
        const stored = fake.get<Service>(Resources.Service, 'default', 'hello')!.status?.conditions?.find((c) => c.type === 'Ready');
        seen.push({ reason, storedReady: stored?.status });
      },
    };
    return { fake, svc, seen, events };
  };
  const toRecord = [
    { type: 'Normal' as const, reason: 'ServiceReady', message: 'ready' },
    { type: 'Normal' as const, reason: 'Other', message: 'other' },
  ];

  it('a changed status: the Events first, then the status write (the last write of the step)', async () => {
    const { fake, svc, seen, events } = setup();
    expect(await writeStatusWithEvents(fake.client(), events, Resources.Service, svc, ready, toRecord)).toBeDefined();
    expect(seen).toEqual([
      { reason: 'ServiceReady', storedReady: undefined },
      { reason: 'Other', storedReady: undefined },
    ]);
    expect(fake.get<Service>(Resources.Service, 'default', 'hello')!.status).toEqual(ready);
  });

  it('an unchanged status: no Event, no write', async () => {
    const { fake, svc, seen, events } = setup();
    fake.calls = [];
    expect(await writeStatusWithEvents(fake.client(), events, Resources.Service, { ...svc, status: ready }, ready, toRecord)).toBeUndefined();
    expect(seen).toEqual([]);
    expect(fake.writes()).toEqual([]);
  });
});
