// Versions entity workflows wrote themselves, and the steps running now, as this process's activities report them
// (activities/observe.ts). The poker sends no poke of such a version to the workflow that wrote it — the workflow
// knows that content (its pass covers it, or holds it as its own write's echo, ADR 0001) and would only spend a
// workflow task ignoring it — and holds a workflow's pokes while one of its steps runs, since the watch event often
// comes before the step has read its write's response. A step that fails takes its writes back: its workflow never
// learns of them, so their echoes are news to it (a write made just before the API server went away, say, which a
// stale cache then hides from the retry). In-process only: a replica whose watcher did not see the write (another
// replica's worker ran the step) pokes as before, and the workflow ignores an echo itself.
/** One write of a step: the object (`Kind/namespace/name`) and the version the write returned. */
export interface OwnWrite {
  source: string;
  resourceVersion: string;
}

export class OwnWrites {
  /** `<workflowId>|<source>|<resourceVersion>` → when it was written (ms), in insertion order. */
  private readonly written = new Map<string, number>();
  /** Steps running in this process, per workflow id. */
  private readonly running = new Map<string, number>();
  private readonly stepEndListeners = new Set<(workflowId: string, forgotten: readonly OwnWrite[]) => void>();

  constructor(
    private readonly ttlMs = 120_000,
    private readonly maxEntries = 50_000,
    private readonly now: () => number = Date.now,
  ) {}

  /** A write (any kind) by a step of `workflowId` returned `source` at `resourceVersion`. */
  note(workflowId: string, source: string, resourceVersion: string): void {
    const at = this.now();
    this.written.set(`${workflowId}|${source}|${resourceVersion}`, at);
    // Oldest first: drop what is past its time, and the oldest beyond the bound (a missed skip only costs a task).
    for (const [key, t] of this.written) {
      if (at - t <= this.ttlMs && this.written.size <= this.maxEntries) break;
      this.written.delete(key);
    }
  }

  /** True when `workflowId`'s own step wrote this version of `source` (a poke of it would be its own echo). */
  wrote(workflowId: string, source: string, resourceVersion: string | undefined): boolean {
    if (resourceVersion === undefined) return false;
    const at = this.written.get(`${workflowId}|${source}|${resourceVersion}`);
    return at !== undefined && this.now() - at <= this.ttlMs;
  }

  /** A step of `workflowId` starts in this process: what it writes is heard of when it ends, at the latest. */
  stepStarted(workflowId: string): void {
    this.running.set(workflowId, (this.running.get(workflowId) ?? 0) + 1);
  }

  /**
   * A step of `workflowId` ended. `failed`: the writes it made, when it failed — they are no longer the workflow's own,
   * and the listeners hear which (a poke dropped as their echo meanwhile must reach the workflow after all).
   */
  stepEnded(workflowId: string, failed: readonly OwnWrite[] = []): void {
    const n = (this.running.get(workflowId) ?? 1) - 1;
    if (n > 0) this.running.set(workflowId, n);
    else this.running.delete(workflowId);
    for (const w of failed) this.written.delete(`${workflowId}|${w.source}|${w.resourceVersion}`);
    for (const listener of this.stepEndListeners) listener(workflowId, failed);
  }

  /**
   * True while a step of `workflowId` runs here. A poke for it waits (watcher/poker.ts): the workflow takes no signal
   * before its task ends anyway, and by then the step has heard of its own writes, whose echoes are then dropped.
   */
  inStep(workflowId: string): boolean {
    return this.running.has(workflowId);
  }

  /** Calls `listener` whenever a step ends, with the writes it took back; returns the unsubscribe. */
  onStepEnded(listener: (workflowId: string, forgotten: readonly OwnWrite[]) => void): () => void {
    this.stepEndListeners.add(listener);
    return () => this.stepEndListeners.delete(listener);
  }

  get size(): number {
    return this.written.size;
  }
}
