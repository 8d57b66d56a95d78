// How many list pages the watcher's informers have in flight at once, and whose go first.
//
// A new leader lists every watched kind at once. Seventeen informers each with a page in flight kept the API server
// serializing lists on every core, and the steps of the passes that matter most then (the objects changed while no
// leader watched) waited their turn behind them for every request. Through the gate a few pages are in flight at a
// time, those of the kinds that resolve owners first: the lists take about as long, and everything else gets answers.
// A page that hangs holds its slot no longer than the client's request timeout; a kind that cannot be listed fails at
// once and waits out its backoff outside the gate.
//
// With `yieldTo`, a page also waits while the process's steps run — the passes of what changed, which the lists
// would slow several times over on a machine's few cores — but never longer than twice the last page took (at most a
// second): the lists keep at least a third of the time, however busy the steps are.

const MAX_YIELD_MS = 1000;

export class ListGate {
  private inFlight = 0;
  private readonly waiting: { priority: number; start: () => void }[] = [];

  /** How long the last page took to fetch (ms). */
  private lastFetchMs = 0;

  /**
   * `limit`: pages in flight at once (at least 1). `yieldTo(maxMs)`: resolves once the work that goes first is done,
   * or after `maxMs`.
   */
  constructor(
    private readonly limit: number,
    private readonly yieldTo?: (maxMs: number) => Promise<void>,
  ) {}

  /** Runs `fetch` once fewer than `limit` pages are in flight; of those waiting, the highest `priority` first, then the oldest. */
  async run<T>(priority: number, fetch: () => Promise<T>): Promise<T> {
    if (this.inFlight >= Math.max(1, this.limit)) {
      await new Promise<void>((start) => {
        const at = this.waiting.findIndex((w) => w.priority < priority);
        this.waiting.splice(at === -1 ? this.waiting.length : at, 0, { priority, start });
      });
    } else {
      this.inFlight += 1;
    }
    try {
      await this.yieldTo?.(Math.min(MAX_YIELD_MS, 2 * this.lastFetchMs));
      const started = performance.now();
      const page = await fetch();
      this.lastFetchMs = performance.now() - started;
      return page;
    } finally {
      // The slot passes straight to the next in line, so a page that arrives meanwhile cannot take it out of turn.
      const next = this.waiting.shift();
      if (next) next.start();
      else this.inFlight -= 1;
    }
  }

  /** Pages waiting for a slot. */
  get queued(): number {
    return this.waiting.length;
  }
}
