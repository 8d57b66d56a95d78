// Steps counted while they run, and a wait for none to run that is bounded.
import { describe, expect, it } from 'vitest';
import { StepsInFlight } from '../../../workers/steps-in-flight.js';

const tick = () => new Promise((r) => setImmediate(r));

describe('StepsInFlight', () => {
  it('counts a wrapped step while it runs, its failure too, and leaves other members alone', async () => {
    const steps = new StepsInFlight();
    let finish!: () => void;
    const wrapped = steps.wrap({
      slow: () => new Promise<string>((r) => (finish = () => r('done'))),
      failing: async () => {
        throw new Error('conflict');
      },
      limit: 3,
    });
    expect(wrapped.limit).toBe(3);
    const running = wrapped.slow();
    expect(steps.count).toBe(1);
    await expect(wrapped.failing()).rejects.toThrow('conflict');
    expect(steps.count).toBe(1);
    finish();
    await expect(running).resolves.toBe('done');
    expect(steps.count).toBe(0);
  });

  it('quiet resolves when the last step ends, or after its bound while steps still run', async () => {
    const steps = new StepsInFlight();
    let finish!: () => void;
    const wrapped = steps.wrap({ slow: () => new Promise<void>((r) => (finish = r)) });
    await steps.quiet(60_000); // none running: at once
    const running = wrapped.slow();
    let quiet = false;
    const waiting = steps.quiet(60_000).then(() => (quiet = true));
    await tick();
    expect(quiet).toBe(false);
    finish();
    await running;
    await waiting;
    expect(quiet).toBe(true);
    // A step that runs on: the bound ends the wait.
    const runningOn = wrapped.slow();
    await steps.quiet(5);
    expect(steps.count).toBe(1);
    finish();
    await runningOn;
  });
});
