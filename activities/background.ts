// Events a step records are sent once its work is done, not where it records them. No reader waits for an Event (the
// status is what wakes readers), yet each one sent where it was recorded is a request the API server serves while the
// step's next writes wait their turn: on two busy cores, the writes on the way from a Revision's pods Ready to the
// Service Ready shared the API server with three to six Events. Inside a step, recording an Event returns at once, and
// the step sends what it recorded (stamped with when it was recorded) after its work settles — after its last part,
// for a combined step (activities/combined.ts) — and waits for them: no write of a step outlives it.
import { AsyncLocalStorage } from 'node:async_hooks';
import type { EventRecorder } from './events.js';

type Send = () => Promise<void>;

const lane = new AsyncLocalStorage<Send[]>();

/**
 * Runs `fn` as a step: what it hands {@link atStepEnd} is sent after `fn` settles (thrown or not) and awaited before
 * this returns. Nested inside a step (a part of a combined step), it is that step's.
 */
export async function asStep<R>(fn: () => Promise<R>): Promise<R> {
  if (lane.getStore()) return fn();
  const deferred: Send[] = [];
  try {
    return await lane.run(deferred, fn);
  } finally {
    // Sending one may record another (an Event recorded on another's completion): until none is left.
    for (let sent = 0; sent < deferred.length;) {
      const batch = deferred.slice(sent);
      sent = deferred.length;
      await Promise.allSettled(batch.map((send) => send()));
    }
  }
}

/** Inside a step: `send` runs when the step's work is done, and this resolves now. Outside one: `send()` itself. */
export function atStepEnd(send: Send): Promise<void> {
  const deferred = lane.getStore();
  if (!deferred) return send();
  deferred.push(send);
  return Promise.resolve();
}

/** The recorder whose Events a step sends when its work is done (see the file comment), stamped when recorded. */
export function recordingAtStepEnd(events: EventRecorder, now: () => Date = () => new Date()): EventRecorder {
  return {
    record: (obj, type, reason, message, at) => {
      // What the Event names of its object, as it is now: the step may go on to change the object it was handed.
      const involved = { apiVersion: obj.apiVersion, kind: obj.kind, metadata: { ...obj.metadata } };
      const when = at ?? now();
      return atStepEnd(() => events.record(involved, type, reason, message, when));
    },
  };
}

/** Wraps every function of an activity object with {@link asStep}. */
export function asSteps<A extends Record<string, (...args: never[]) => Promise<unknown>>>(activities: A): A {
  return Object.fromEntries(Object.entries(activities).map(([name, fn]) => [name, (...args: never[]) => asStep(() => fn(...args))])) as A;
}
