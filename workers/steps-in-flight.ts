// The steps (activities, local ones included) running in this process, for work that should wait its turn behind
// them: a new leader's list pages (watcher/list-gate.ts).
import { aroundEach } from './around-each.js';

export class StepsInFlight {
  private running = 0;
  private readonly waiters = new Set<() => void>();

  /** `activities` with each call counted while it runs. */
  wrap<A extends object>(activities: A): A {
    return aroundEach(activities, async (_name, call) => {
      this.running += 1;
      try {
        return await call();
      } finally {
        this.running -= 1;
        if (this.running === 0) for (const wake of [...this.waiters]) wake();
      }
    });
  }

  get count(): number {
    return this.running;
  }

  /** Resolves once no step runs, or after `maxMs`, whichever comes first. */
  quiet(maxMs: number): Promise<void> {
    if (this.running === 0 || maxMs <= 0) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.waiters.delete(done);
        resolve();
      };
      const timer = setTimeout(done, maxMs);
      this.waiters.add(done);
    });
  }
}
