// Events sent when their step's work is done (activities/background.ts): recording returns at once, the step sends
// what it recorded after its last write — a combined step after its last part — and ends only once they are sent.
import { describe, expect, it } from 'vitest';
import { asStep, asSteps, recordingAtStepEnd } from '../../../activities/background.js';
import type { EventRecorder } from '../../../activities/events.js';
import type { KubeObject } from '../../../api/meta.js';

/** A recorder that logs what it sends (and when it was stamped); `hold` keeps the next sends waiting until released. */
function loggingRecorder(log: string[]) {
  let gate: Promise<void> | undefined;
  let release = () => {};
  const recorder: EventRecorder = {
    record: async (obj, _type, reason, _message, at) => {
      log.push(`send ${reason} (${obj.metadata.name} rv ${obj.metadata.resourceVersion}) at ${at?.toISOString() ?? 'now'}`);
      await gate;
      log.push(`sent ${reason}`);
    },
  };
  const hold = () => (gate = new Promise<void>((r) => (release = r)));
  return { recorder, hold, release: () => release() };
}

const svc = (rv: string) =>
  ({ apiVersion: 'serving.knative.dev/v1', kind: 'Service', metadata: { namespace: 'ns', name: 'web', resourceVersion: rv } }) as KubeObject;
const tick = () => new Promise((r) => setTimeout(r, 5));
const t0 = new Date('2026-11-27T10:00:00Z');

describe('Events sent when their step’s work is done', () => {
  it('a step records an Event and goes on; the Event is sent after its last write, stamped when it was recorded, and the step ends after it', async () => {
    const log: string[] = [];
    const { recorder, hold, release } = loggingRecorder(log);
    let clock = t0;
    const events = recordingAtStepEnd(recorder, () => clock);
    void hold();
    let ended = false;
    const step = asStep(async () => {
      const obj = svc('1');
      await events.record(obj, 'Normal', 'Created', 'Created Configuration "web"');
      obj.metadata.resourceVersion = '2'; // the step goes on with its object: the Event names it as recorded
      clock = new Date(t0.getTime() + 500);
      log.push('write');
      await tick();
      log.push('last write');
      return 'done';
    }).then((r) => ((ended = true), r));
    await tick();
    await tick();
    expect(log).toEqual(['write', 'last write', `send Created (web rv 1) at ${t0.toISOString()}`]);
    expect(ended).toBe(false);
    release();
    await expect(step).resolves.toBe('done');
    expect(log.at(-1)).toBe('sent Created');
  });

  it('a step that fails sends its Events, then fails', async () => {
    const log: string[] = [];
    const { recorder } = loggingRecorder(log);
    const events = recordingAtStepEnd(recorder, () => t0);
    await expect(
      asStep(async () => {
        await events.record(svc('1'), 'Warning', 'InternalError', 'refused');
        log.push('refused');
        throw new Error('refused');
      }),
    ).rejects.toThrow('refused');
    expect(log).toEqual(['refused', `send InternalError (web rv 1) at ${t0.toISOString()}`, 'sent InternalError']);
  });

  it('the parts of a combined step (steps inside a step) leave their Events to it: sent after its last part', async () => {
    const log: string[] = [];
    const { recorder } = loggingRecorder(log);
    const events = recordingAtStepEnd(recorder, () => t0);
    const parts = asSteps({
      configuration: async () => {
        await events.record(svc('1'), 'Normal', 'Created', 'Created Configuration "web"');
        log.push('configuration applied');
      },
      revision: async () => {
        log.push('revision created');
      },
    });
    const combined = asSteps({
      full: async () => {
        await parts.configuration();
        await parts.revision();
        log.push('service status written');
      },
    });
    await combined.full();
    expect(log).toEqual([
      'configuration applied',
      'revision created',
      'service status written',
      `send Created (web rv 1) at ${t0.toISOString()}`,
      'sent Created',
    ]);
  });

  it('an Event recorded while another is being sent is sent too, before the step ends', async () => {
    const log: string[] = [];
    const { recorder } = loggingRecorder(log);
    const events = recordingAtStepEnd(recorder, () => t0);
    // A recorder whose first send records a second Event (as a send's completion might).
    const chained: EventRecorder = {
      record: async (...args) => {
        await recorder.record(...args);
        if (args[2] === 'First') await events.record(svc('1'), 'Normal', 'Second', '2');
      },
    };
    const outer = recordingAtStepEnd(chained, () => t0);
    await asStep(async () => {
      await outer.record(svc('1'), 'Normal', 'First', '1');
    });
    expect(log.filter((l) => l.startsWith('sent'))).toEqual(['sent First', 'sent Second']);
  });

  it('outside a step (a test calling an activity directly) the Event is sent at once and awaited', async () => {
    const log: string[] = [];
    const { recorder } = loggingRecorder(log);
    await recordingAtStepEnd(recorder, () => t0).record(svc('1'), 'Normal', 'Created', 'x');
    expect(log).toEqual([`send Created (web rv 1) at ${t0.toISOString()}`, 'sent Created']);
  });
});
