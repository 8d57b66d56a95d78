// Versions entity workflows wrote themselves, as this process's activities saw them (activities/observe.ts). The
// poker sends no poke of such a version to the workflow that wrote it: its pass reported that very version as its own
// write's echo (ADR 0001), so the workflow would only spend a workflow task ignoring it. In-process only: a replica
// whose watcher did not see the write (another replica's worker ran the step) pokes as before, and the workflow
// ignores the echo itself.
export class OwnWrites {
  /** `<workflowId>|<source>|<resourceVersion>` → when it was written (ms), in insertion order. */
  private readonly written = new Map<string, number>();

  constructor(
    private readonly ttlMs = 120_000,
    private readonly maxEntries = 50_000,
    private readonly now: () => number = Date.now,
  ) {}

  /** An apply or create by a step of `workflowId` returned `source` at `resourceVersion`. */
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

  get size(): number {
    return this.written.size;
  }
}
