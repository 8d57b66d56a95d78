// Delivers pokes to entity workflows with signalWithStart. Pokes for one workflow coalesce while they wait;
// a failed delivery (Temporal unreachable, say) is retried with backoff, never dropped; a poke identical to the
// last one delivered (same source and resourceVersion) is not sent again.
import type { Logger } from 'pino';
import type { Client } from '@temporalio/client';
import { Counter, type Registry } from 'prom-client';
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';
import { entityWorkflowId, POKE_SIGNAL, SearchAttributeNames, workflowTypeOf, type Poke } from '../api/entity.js';
import type { PokeTarget } from './poke-map.js';

export const searchAttributeKeys = {
  kind: defineSearchAttributeKey(SearchAttributeNames.kind, SearchAttributeType.KEYWORD),
  namespace: defineSearchAttributeKey(SearchAttributeNames.namespace, SearchAttributeType.KEYWORD),
  name: defineSearchAttributeKey(SearchAttributeNames.name, SearchAttributeType.KEYWORD),
};

export interface PokerOptions {
  taskQueue: string;
  concurrency: number;
  maxBackoffMs: number;
  /** Passed to a workflow when a poke starts it. */
  workflowOptions?: Record<string, unknown>;
}

interface Pending {
  target: PokeTarget;
  poke: Poke;
  attempts: number;
  notBefore: number;
}

export class Poker {
  private readonly pending = new Map<string, Pending>();
  private readonly lastSent = new Map<string, string>();
  private inFlight = 0;
  /** Workflows with a delivery under way: never two at once for one workflow, so the newest poke wins. */
  private readonly inFlightIds = new Set<string>();
  private wake: (() => void) | undefined;
  private closed = false;
  private readonly delivered: Counter;
  private readonly failed: Counter;
  private readonly loopDone: Promise<void>;

  constructor(
    private readonly client: Client,
    private readonly opts: PokerOptions,
    private readonly log: Logger,
    registry: Registry,
  ) {
    this.delivered = new Counter({ name: 'tidal_pokes_delivered_total', help: 'Pokes delivered to entity workflows', labelNames: ['kind'], registers: [registry] });
    this.failed = new Counter({ name: 'tidal_pokes_failed_total', help: 'Poke deliveries that failed and will be retried', labelNames: ['kind'], registers: [registry] });
    this.loopDone = this.loop();
  }

  /** Queues a poke; a newer poke for the same workflow replaces one still waiting. */
  poke(target: PokeTarget, poke: Poke, opts: { force?: boolean } = {}): void {
    const id = entityWorkflowId(target.kind, target.key);
    const sentKey = `${id}|${poke.source}`;
    if (!opts.force && poke.reason !== 'deleted' && poke.resourceVersion !== undefined && this.lastSent.get(sentKey) === poke.resourceVersion) return;
    const prev = this.pending.get(id);
    this.pending.set(id, { target, poke, attempts: prev?.attempts ?? 0, notBefore: prev?.notBefore ?? 0 });
    this.wake?.();
  }

  /** Number of pokes not yet delivered. */
  get backlog(): number {
    return this.pending.size + this.inFlight;
  }

  async close(): Promise<void> {
    this.closed = true;
    this.wake?.();
    await this.loopDone;
  }

  private async loop(): Promise<void> {
    while (!this.closed) {
      const now = Date.now();
      let next = Infinity;
      for (const [id, p] of this.pending) {
        if (this.inFlight >= this.opts.concurrency) break;
        if (this.inFlightIds.has(id)) continue;
        if (p.notBefore > now) {
          next = Math.min(next, p.notBefore);
          continue;
        }
        this.pending.delete(id);
        this.inFlight += 1;
        this.inFlightIds.add(id);
        void this.deliver(id, p).finally(() => {
          this.inFlight -= 1;
          this.inFlightIds.delete(id);
          this.wake?.();
        });
      }
      await new Promise<void>((resolve) => {
        this.wake = resolve;
        if (next !== Infinity) setTimeout(resolve, next - now);
      });
      this.wake = undefined;
    }
  }

  private async deliver(id: string, p: Pending): Promise<void> {
    const { kind, key } = p.target;
    try {
      await this.client.workflow.signalWithStart(workflowTypeOf(kind), {
        workflowId: id,
        taskQueue: this.opts.taskQueue,
        args: [{ kind, namespace: key.namespace, name: key.name, ...(this.opts.workflowOptions ? { options: this.opts.workflowOptions } : {}) }],
        signal: POKE_SIGNAL,
        signalArgs: [p.poke],
        workflowIdConflictPolicy: 'USE_EXISTING',
        workflowIdReusePolicy: 'ALLOW_DUPLICATE',
        typedSearchAttributes: [
          { key: searchAttributeKeys.kind, value: kind },
          { key: searchAttributeKeys.namespace, value: key.namespace },
          { key: searchAttributeKeys.name, value: key.name },
        ],
        staticSummary: `${kind} ${key.namespace}/${key.name}`,
      });
      this.delivered.inc({ kind });
      if (p.poke.resourceVersion !== undefined) this.rememberSent(`${id}|${p.poke.source}`, p.poke.resourceVersion);
    } catch (err) {
      this.failed.inc({ kind });
      const attempts = p.attempts + 1;
      const backoff = Math.min(this.opts.maxBackoffMs, 250 * 2 ** Math.min(attempts, 10));
      this.log.warn({ err, kind, namespace: key.namespace, name: key.name, attempts, backoffMs: backoff }, 'poke failed; will retry');
      // A newer poke may have arrived meanwhile; it wins, but keeps the backoff.
      const newer = this.pending.get(id);
      this.pending.set(id, { target: p.target, poke: newer?.poke ?? p.poke, attempts, notBefore: Date.now() + backoff });
    }
  }

  private rememberSent(key: string, rv: string): void {
    this.lastSent.delete(key);
    this.lastSent.set(key, rv);
    if (this.lastSent.size > 100_000) {
      const oldest = this.lastSent.keys().next().value;
      if (oldest !== undefined) this.lastSent.delete(oldest);
    }
  }
}
