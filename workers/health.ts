// What /readyz and /healthz answer. Readiness is the truth about this replica's dependencies, checked in the
// background every `intervalMs` (a probe never waits on a slow dependency): the Temporal server answers its health
// check, the API server answers a read, the webhook serves the certificates its Secret holds, the worker runs, and the
// replica's watcher (leading or standing by) has listed everything. Liveness fails only for a wedged process: the event loop has not turned for
// `wedgedMs` (a probe that gets an answer at all proves the loop turns; this catches a loop that turns but whose
// timers starve, e.g. a runaway synchronous loop between requests).
import type { Logger } from 'pino';
import { Gauge, type Registry } from 'prom-client';

export interface Check {
  name: string;
  /** Resolves when the dependency is fine; rejects (or times out) when not. */
  probe: () => Promise<unknown>;
}

export interface HealthOptions {
  intervalMs: number;
  timeoutMs: number;
  wedgedMs: number;
}

export class Health {
  private readonly failing = new Map<string, string>();
  private lastTick = performance.now();
  private timer: NodeJS.Timeout | undefined;
  private readonly gauge: Gauge;
  private checkedOnce: Promise<void>;

  constructor(
    private readonly checks: Check[],
    /** Synchronous conditions (worker state, webhook, watcher): name → true when fine. */
    private readonly conditions: Record<string, () => boolean>,
    private readonly opts: HealthOptions,
    private readonly log: Logger,
    registry: Registry,
  ) {
    this.gauge = new Gauge({
      name: 'tidal_dependency_up',
      help: 'Whether a dependency answered its last check (temporal, kubernetes)',
      labelNames: ['dependency'],
      registers: [registry],
    });
    for (const c of checks) this.failing.set(c.name, 'not checked yet');
    this.checkedOnce = this.runChecks();
    this.timer = setInterval(() => {
      this.lastTick = performance.now();
      void this.runChecks();
    }, opts.intervalMs);
    this.timer.unref();
  }

  /** Resolves after the first round of checks. */
  get ready(): Promise<void> {
    return this.checkedOnce;
  }

  /** Empty when ready; else what is wrong, one reason per failing check or condition. */
  problems(): string[] {
    const out = [...this.failing].map(([name, why]) => `${name}: ${why}`);
    for (const [name, ok] of Object.entries(this.conditions)) if (!ok()) out.push(`${name}: not ready`);
    return out;
  }

  /** False only when the event loop has not run this module's timer for `wedgedMs`. */
  live(): boolean {
    return performance.now() - this.lastTick < this.opts.wedgedMs;
  }

  close(): void {
    clearInterval(this.timer);
  }

  private async runChecks(): Promise<void> {
    await Promise.all(
      this.checks.map(async (c) => {
        let timer: NodeJS.Timeout | undefined;
        try {
          await Promise.race([
            c.probe(),
            new Promise((_, reject) => {
              timer = setTimeout(() => reject(new Error(`no answer within ${this.opts.timeoutMs} ms`)), this.opts.timeoutMs);
            }),
          ]);
          if (this.failing.has(c.name)) this.log.info({ dependency: c.name }, 'dependency reachable');
          this.failing.delete(c.name);
          this.gauge.set({ dependency: c.name }, 1);
        } catch (err) {
          const why = err instanceof Error ? err.message.split('\n')[0]! : String(err);
          if (this.failing.get(c.name) !== why) this.log.warn({ dependency: c.name, err: why }, 'dependency unreachable: not ready');
          this.failing.set(c.name, why);
          this.gauge.set({ dependency: c.name }, 0);
        } finally {
          clearTimeout(timer);
        }
      }),
    );
  }
}
