// activities/events.ts: one Event per involved object, type, reason and message; repeats raise its count
// (every retry created a new Event).
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { makeEventRecorder } from '../../../activities/events.js';
import { Resources } from '../../../api/kinds.js';
import type { KubeObject } from '../../../api/meta.js';
import { service } from '../../fixtures/serving.js';
import { KubeFake, refused } from './kube-fake.js';

interface EventLike extends KubeObject {
  count: number;
  firstTimestamp: string;
  lastTimestamp: string;
  reason: string;
  message: string;
  type: string;
  involvedObject: { uid?: string; name?: string };
}

function setup() {
  const fake = new KubeFake();
  let t = Date.parse('2025-01-01T00:00:00Z');
  const now = () => new Date((t += 1000));
  const log = pino({ level: 'silent' });
  const recorder = () => makeEventRecorder(fake.client(), log, now);
  const events = () => fake.list<EventLike>(Resources.Event);
  return { fake, recorder, events };
}

const svc = service('hello', 'default');

describe('makeEventRecorder aggregation', () => {
  it('a repeat raises count and lastTimestamp of the one Event instead of creating another', async () => {
    const { fake, recorder, events } = setup();
    const r = recorder();
    for (let i = 0; i < 3; i++) await r.record(svc, 'Warning', 'InternalError', 'failed to update Configuration "hello": denied');
    expect(events()).toHaveLength(1);
    const [e] = events();
    expect(e).toMatchObject({
      count: 3,
      type: 'Warning',
      reason: 'InternalError',
      firstTimestamp: '2025-01-01T00:00:01.000Z',
      lastTimestamp: '2025-01-01T00:00:03.000Z',
    });
    expect(e!.involvedObject).toMatchObject({ uid: 'uid-hello', name: 'hello' });
    expect(e!.metadata.name).toMatch(/^hello\.[0-9a-f]{16}$/);
    // One create, then a merge patch per repeat (no reads on the cached path).
    expect(fake.calls.map((c) => c.verb)).toEqual(['create', 'patch', 'patch']);
  });

  it('a different message, reason, type or object is a different Event', async () => {
    const { recorder, events } = setup();
    const r = recorder();
    await r.record(svc, 'Warning', 'InternalError', 'a');
    await r.record(svc, 'Warning', 'InternalError', 'b');
    await r.record(svc, 'Warning', 'CreationFailed', 'a');
    await r.record(svc, 'Normal', 'InternalError', 'a');
    await r.record(service('other', 'default'), 'Warning', 'InternalError', 'a');
    // The same name re-created (a new uid) gets its own Event.
    await r.record({ ...svc, metadata: { ...svc.metadata, uid: 'uid-hello-2' } }, 'Warning', 'InternalError', 'a');
    expect(events()).toHaveLength(6);
    expect(events().every((e) => e.count === 1)).toBe(true);
  });

  it('after a restart (empty cache) a repeat finds the Event by its name and raises its count', async () => {
    const { recorder, events } = setup();
    await recorder().record(svc, 'Warning', 'InternalError', 'x');
    await recorder().record(svc, 'Warning', 'InternalError', 'x');
    await recorder().record(svc, 'Warning', 'InternalError', 'x');
    expect(events()).toHaveLength(1);
    expect(events()[0]!.count).toBe(3);
  });

  it('a cached Event that expired meanwhile is created again', async () => {
    const { fake, recorder, events } = setup();
    const r = recorder();
    await r.record(svc, 'Warning', 'InternalError', 'x');
    fake.objects.clear();
    await r.record(svc, 'Warning', 'InternalError', 'x');
    expect(events()).toHaveLength(1);
    expect(events()[0]!.count).toBe(1);
  });

  it('never throws: a failure to record is logged', async () => {
    const { fake, recorder } = setup();
    fake.failNext('create', Resources.Event, refused(403, 'Forbidden', 'events is forbidden'));
    await expect(recorder().record(svc, 'Warning', 'InternalError', 'x')).resolves.toBeUndefined();
  });
});
