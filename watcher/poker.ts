// Delivers pokes to entity workflows with signalWithStart — a new object's first poke as a start with the pokes as
// input, its first task handed eagerly to this process's worker (ADR 0013). Pokes for one workflow coalesce while
// they wait — the newest poke of each source, all sources in one signal, so one source's poke never hides another's; a failed
// delivery (Temporal unreachable, say) is retried with backoff, never dropped; a poke announcing the same content
// (token, else resourceVersion) as the last one delivered from that source is not sent again.
//
// Signals to one workflow are metered (a token bucket per workflow): the server force-closes a workflow task during
// which more than 100 events were buffered, and a force-closed task that ran local steps replays differently
// (ADR 0004). Pokes held back meanwhile coalesce like any other. A sweep poke only starts a run that is gone, so it
// is delivered as a start that finds the running workflow and adds nothing to its history.
//
// Catch-up pokes (the start-up list of objects whose status already reports their generation, and sweeps) go in a
// second lane, metered to `catchUpPerSecond`, after every other poke: a start without a watch bookmark (ADR 0024) and
// the periodic sweep poke every object, and a change made meanwhile must not queue behind thousands of full passes. A
// catch-up run is started with its pokes as input and marked so (`EntityInput.catchUp`): one whose first pass writes
// nothing ends at once (ADR 0006, "Later"); a run that is there gets them as a signal. A sweep leaves out the runs
// this process's catch-up started in the minutes before: they ran on this code and have passed. The lane
// goes faster (`catchUpQuietPerSecond`) while the first lane is quiet: nothing else then shares the cores with it.
import type { Logger } from 'pino';
import type { Client, WorkflowStartOptions } from '@temporalio/client';
import type { Counter, Registry } from 'prom-client';
import { counterIn } from './metrics.js';
import { defineSearchAttributeKey, SearchAttributeType, WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import { entityWorkflowId, POKE_SIGNAL, SearchAttributeNames, workflowTypeOf, type EntityKind, type Poke } from '../api/entity.js';
import type { PokeTarget } from './poke-map.js';
import type { OwnWrite, OwnWrites } from './own-writes.js';

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
  /** Signals one workflow may take at once, and per second after that (defaults 20 and 5). */
  signalBurst?: number;
  signalsPerSecond?: number;
  /**
   * Catch-up pokes delivered per second at most (default 10: a fraction of two cores, a catch-up run that writes
   * nothing being cheap for Tidal and Temporal, so a change made meanwhile is not slowed much; 0: unmetered).
   */
  catchUpPerSecond?: number;
  /**
   * Catch-up pokes per second at most once no other poke has been waiting, under way or delivered for
   * `CATCH_UP_QUIET_MS` (default twice `catchUpPerSecond`): no change is then being worked on that the catch-up's
   * passes would slow, and the lane drops back to `catchUpPerSecond` as soon as one comes.
   */
  catchUpQuietPerSecond?: number;
  /**
   * Asked before every delivery: false (this process's leader term is over or paused) and nothing more is sent — the
   * view the pokes came from may be stale. Pending pokes stay until `resume()` (a paused term goes on) or `close()`.
   */
  mayDeliver?: () => boolean;
  /**
   * Versions entity workflows wrote themselves in this process: their echo is not sent to the writer, and a workflow's
   * pokes wait while one of its steps runs here (watcher/own-writes.ts).
   */
  ownWrites?: Pick<OwnWrites, 'wrote' | 'inStep' | 'onStepEnded'>;
  /**
   * A client on the NativeConnection of a worker polling `taskQueue` in this process (undefined until it runs): a new
   * object's workflow is started through it with Temporal's eager workflow start, so its first workflow task comes
   * back in the start's response and goes straight to that worker, not through the task queue.
   */
  eagerClient?: () => Client | undefined;
}

interface Pending {
  target: PokeTarget;
  /** The newest poke of each source. */
  pokes: Map<string, Poke>;
  attempts: number;
  notBefore: number;
  /** Only catch-up pokes wait here: delivered after the others, metered. */
  catchUp: boolean;
  /**
   * Sources whose poke here replaced an earlier one (that one's news may be in it), or that a list found (the versions
   * before it went by unseen): never dropped as own echoes.
   */
  replaced?: Set<string>;
  /** Since when the pokes wait for a step of the workflow running in this process (`ownWrites.inStep`). */
  heldSince?: number;
  /** The run's sticky queue is reset before the delivery (`poke`'s `unstick`). */
  unstick?: boolean;
}

/** The longest pokes wait for a workflow's running step (a step waiting on the outside world, say). */
const MAX_STEP_HOLD_MS = 2_000;

/** How long the first lane must have been idle before the catch-up lane goes at its quiet rate. */
const CATCH_UP_QUIET_MS = 2_000;

/** How long a run the catch-up started stays out of sweeps: well short of the periodic one. */
const FRESH_CATCH_UP_RUN_MS = 5 * 60_000;

/** What identifies a poke's content for de-duplication. */
const contentOf = (p: Poke): string | undefined => p.token ?? p.resourceVersion;

/** A sweep poke: it announces nothing, it only makes sure a run exists. */
const isSweep = (p: Poke): boolean => p.reason === 'resync' && p.token === undefined && p.resourceVersion === undefined;

/**
 * Starts the workflow with `pokes` in its input (acted on as if signalled), refusing a run that exists (conflict policy
 * FAIL): undefined then, and the caller signals it as usual, so no poke is lost either way.
 */
async function startWithPokes(client: Client, kind: EntityKind, start: WorkflowStartOptions, pokes: Poke[]) {
  const [input] = start.args as [Record<string, unknown>];
  try {
    return await client.workflow.start(workflowTypeOf(kind), { ...start, args: [{ ...input, pokes }], workflowIdConflictPolicy: 'FAIL' });
  } catch (err) {
    if (err instanceof WorkflowExecutionAlreadyStartedError) return undefined;
    throw err;
  }
}

interface Bucket {
  tokens: number;
  at: number;
}

export class Poker {
  private readonly pending = new Map<string, Pending>();
  /** Workflows whose run the catch-up lane started lately, and when. */
  private readonly freshCatchUpRuns = new Map<string, number>();
  private readonly lastSent = new Map<string, string>();
  /** Pokes dropped as own echoes while the workflow's step ran here, until its steps end (`echoesOfFailedStep`). */
  private readonly echoesInStep = new Map<string, { target: PokeTarget; pokes: Poke[] }>();
  private inFlight = 0;
  /** Workflows with a delivery under way: never two at once for one workflow, so the newest poke wins. */
  private readonly inFlightIds = new Set<string>();
  /** Signal budget per workflow; a workflow absent here has a full bucket. */
  private readonly budgets = new Map<string, Bucket>();
  private prunedAt = 0;
  private freshPrunedAt = 0;
  private readonly burst: number;
  private readonly perSecond: number;
  private readonly catchUpBudget: Bucket;
  private readonly catchUpPerSecond: number;
  private readonly catchUpQuietPerSecond: number;
  /** When an ordinary poke last waited, was under way or was delivered (the catch-up lane's quiet rate waits on it). */
  private ordinaryAt = -Infinity;
  private ordinaryInFlight = 0;
  /** The catch-up lane's rate when its budget was last looked at. */
  private catchUpRate: number;
  private wake: (() => void) | undefined;
  private closed = false;
  private readonly delivered: Counter;
  private readonly failed: Counter;
  private readonly ownEchoes: Counter;
  private readonly eagerStarts: Counter;
  private readonly unsubscribe: (() => void) | undefined;
  private readonly loopDone: Promise<void>;

  constructor(
    private readonly client: Client,
    private readonly opts: PokerOptions,
    private readonly log: Logger,
    registry: Registry,
  ) {
    this.delivered = counterIn(registry, {
      name: 'tidal_pokes_delivered_total',
      help: 'Pokes delivered to entity workflows',
      labelNames: ['kind'],
    });
    this.failed = counterIn(registry, {
      name: 'tidal_pokes_failed_total',
      help: 'Poke deliveries that failed and will be retried',
      labelNames: ['kind'],
    });
    this.ownEchoes = counterIn(registry, {
      name: 'tidal_pokes_own_echoes_total',
      help: 'Pokes not sent: the version was written by the target workflow’s own step in this process',
      labelNames: ['kind'],
    });
    this.eagerStarts = counterIn(registry, {
      name: 'tidal_pokes_started_total',
      help: 'New objects whose workflow a poke started instead of signalling it; eager: its first task came back with the start',
      labelNames: ['kind', 'eager'],
    });
    this.unsubscribe = opts.ownWrites?.onStepEnded((id, forgotten) => {
      this.echoesOfFailedStep(id, forgotten);
      this.wake?.();
    });
    this.burst = opts.signalBurst ?? 20;
    this.perSecond = opts.signalsPerSecond ?? 5;
    this.catchUpPerSecond = opts.catchUpPerSecond ?? 10;
    this.catchUpQuietPerSecond = Math.max(this.catchUpPerSecond, opts.catchUpQuietPerSecond ?? 2 * this.catchUpPerSecond);
    this.catchUpBudget = { tokens: this.catchUpPerSecond, at: Date.now() };
    this.catchUpRate = this.catchUpPerSecond;
    this.loopDone = this.loop();
  }

  /**
   * Queues a poke; a newer poke from the same source for the same workflow replaces one still waiting. `fresh`: never
   * skipped for announcing the content last delivered from its source (a list found it, see above). `catchUp`
   * puts it in the metered second lane, unless something else for the workflow waits already (and a later ordinary
   * poke takes the workflow out of that lane). `listed`: a list found it, the first or a later one — never taken for
   * the echo of the workflow's own write. `unstick`: the run may have been last run by a worker that is gone (a
   * new leader's first pokes: the old leader's process ran them); its sticky queue is reset before the delivery, so
   * its next task goes to any worker at once instead of after the sticky queue's timeout.
   */
  poke(
    target: PokeTarget,
    poke: Poke,
    opts: { force?: boolean; catchUp?: boolean; fresh?: boolean; listed?: boolean; unstick?: boolean } = {},
  ): void {
    const id = entityWorkflowId(target.kind, target.key);
    // The workflow's own step wrote exactly this version: it would ignore the poke (ADR 0001, own writes' echoes). A
    // poke already waiting from the same source stays as it is. Not when a list found it (`listed`): the versions
    // before it went by unseen, and the write — a status write, say — returned whatever someone else had changed in
    // between, which the workflow never acted on (it judges the content itself).
    if (!opts.force && !opts.listed && this.isOwnEcho(id, poke)) {
      this.droppedOwnEcho(id, target, poke);
      return;
    }
    const content = contentOf(poke);
    // Not when a list found the change (`fresh`): the versions in between went by unseen, and one of them may have been
    // the workflow's own write away from that content — its poke, announcing the content back, is news to it.
    if (!opts.force && !opts.fresh && poke.reason !== 'deleted' && content !== undefined && this.lastSent.get(`${id}|${poke.source}`) === content) {
      this.notSent(id, poke, 'its content was sent before');
      return;
    }
    const prev = this.pending.get(id);
    if (prev) {
      // A deletion stays a deletion until delivered: a later event from the same source must not turn it into news
      // that the workflow might find covered.
      const waiting = prev.pokes.get(poke.source);
      prev.pokes.set(poke.source, waiting?.reason === 'deleted' ? { ...poke, reason: 'deleted' } : poke);
      if (waiting || opts.listed) (prev.replaced ??= new Set()).add(poke.source);
      if (opts.unstick) prev.unstick = true;
      if (prev.catchUp && !opts.catchUp) {
        // Out of the second lane: to the back of the first.
        this.pending.delete(id);
        this.pending.set(id, { ...prev, catchUp: false });
      }
    } else {
      this.pending.set(id, {
        target,
        pokes: new Map([[poke.source, poke]]),
        attempts: 0,
        notBefore: 0,
        catchUp: opts.catchUp === true,
        ...(opts.listed ? { replaced: new Set([poke.source]) } : {}),
        ...(opts.unstick ? { unstick: true } : {}),
      });
    }
    this.wake?.();
  }

  /**
   * Records a poke as delivered without sending it: a previous leader delivered it (the start-up list's objects
   * unchanged since the watch bookmark, ADR 0024), so a later poke announcing the same content is no news.
   */
  remember(target: PokeTarget, poke: Poke): void {
    const content = contentOf(poke);
    if (content !== undefined) this.rememberSent(`${entityWorkflowId(target.kind, target.key)}|${poke.source}`, content);
  }

  /** Number of pokes not yet delivered. */
  get backlog(): number {
    return this.pending.size + this.inFlight;
  }

  /** Delivery may go on again (`mayDeliver` turned true): the loop looks at what is pending at once. */
  resume(): void {
    this.wake?.();
  }

  async close(): Promise<void> {
    this.unsubscribe?.();
    this.closed = true;
    this.wake?.();
    await this.loopDone;
  }

  private async loop(): Promise<void> {
    while (!this.closed) {
      const now = Date.now();
      let next = Infinity;
      // Two rounds: every ordinary poke first, then catch-up pokes as far as their budget goes.
      const waiting = [...this.pending].filter(([, p]) => !p.catchUp);
      if (waiting.length > 0 || this.ordinaryInFlight > 0) this.ordinaryAt = now;
      if (waiting.length < this.pending.size) waiting.push(...[...this.pending].filter(([, p]) => p.catchUp));
      for (const [id, p] of waiting) {
        // While a step of the workflow runs here its task is open: a signal would wait for it anyway, and once the step
        // ends it has heard of its own writes, whose echoes are then dropped.
        if (this.opts.ownWrites?.inStep(id) && !p.catchUp) {
          p.heldSince ??= now;
          if (now - p.heldSince < MAX_STEP_HOLD_MS) {
            next = Math.min(next, p.heldSince + MAX_STEP_HOLD_MS);
            continue;
          }
        } else p.heldSince = undefined;
        if (this.dropOwnEchoes(id, p)) {
          this.pending.delete(id);
          continue;
        }
        if (this.inFlight >= this.opts.concurrency) break;
        if (this.opts.mayDeliver && !this.opts.mayDeliver()) break;
        if (this.inFlightIds.has(id)) continue;
        if (p.catchUp && p.notBefore <= now) {
          const wait = this.takeCatchUp(now);
          if (wait > 0) {
            next = Math.min(next, now + wait);
            break; // the rest of the lane waits too
          }
        }
        if (p.notBefore <= now && ![...p.pokes.values()].every(isSweep)) {
          const wait = this.takeSignal(id, now);
          if (wait > 0) p.notBefore = now + wait;
        }
        if (p.notBefore > now) {
          next = Math.min(next, p.notBefore);
          continue;
        }
        this.pending.delete(id);
        this.inFlight += 1;
        this.inFlightIds.add(id);
        if (!p.catchUp) this.ordinaryInFlight += 1;
        void this.deliver(id, p).finally(() => {
          this.inFlight -= 1;
          this.inFlightIds.delete(id);
          if (!p.catchUp) {
            this.ordinaryInFlight -= 1;
            this.ordinaryAt = Date.now();
          }
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

  /**
   * Takes one delivery from the catch-up lane's budget: 0 when there was one, else the milliseconds until there is.
   * The rate is the quiet one while the first lane is quiet, else `catchUpPerSecond`; the time since the budget was
   * last looked at refills it at the rate of then, and it holds a second's worth of the rate of now.
   */
  private takeCatchUp(now: number): number {
    if (this.catchUpPerSecond <= 0) return 0; // 0: not metered
    const rate = now - this.ordinaryAt >= CATCH_UP_QUIET_MS ? this.catchUpQuietPerSecond : this.catchUpPerSecond;
    const b = this.catchUpBudget;
    b.tokens = Math.min(rate, b.tokens + ((now - b.at) / 1000) * this.catchUpRate);
    b.at = now;
    this.catchUpRate = rate;
    if (b.tokens < 1) return Math.ceil(((1 - b.tokens) / rate) * 1000);
    b.tokens -= 1;
    return 0;
  }

  /**
   * Takes one signal from the workflow's budget: 0 when there was one, else the milliseconds until there is.
   * Buckets that have filled up again are forgotten, so the map holds only workflows signalled lately.
   */
  private takeSignal(id: string, now: number): number {
    const b = this.budgets.get(id);
    const tokens = b ? Math.min(this.burst, b.tokens + ((now - b.at) / 1000) * this.perSecond) : this.burst;
    if (tokens < 1) {
      this.budgets.set(id, { tokens, at: now });
      return Math.ceil(((1 - tokens) / this.perSecond) * 1000);
    }
    this.budgets.set(id, { tokens: tokens - 1, at: now });
    // Forget full buckets once per refill period at most: a scan per signal would make a burst quadratic.
    const fullAfterMs = (this.burst / this.perSecond) * 1000;
    if (this.budgets.size > 10_000 && now - this.prunedAt > fullAfterMs) {
      this.prunedAt = now;
      for (const [k, v] of this.budgets) if (now - v.at > fullAfterMs) this.budgets.delete(k);
    }
    return 0;
  }

  private async deliver(id: string, p: Pending): Promise<void> {
    const { kind, key } = p.target;
    const pokes = [...p.pokes.values()];
    const input = {
      kind,
      namespace: key.namespace,
      name: key.name,
      ...(this.opts.workflowOptions ? { options: this.opts.workflowOptions } : {}),
      ...(p.catchUp ? { catchUp: true } : {}),
    };
    const start: WorkflowStartOptions = {
      workflowId: id,
      taskQueue: this.opts.taskQueue,
      args: [input],
      workflowIdConflictPolicy: 'USE_EXISTING',
      workflowIdReusePolicy: 'ALLOW_DUPLICATE',
      typedSearchAttributes: [
        { key: searchAttributeKeys.kind, value: kind },
        { key: searchAttributeKeys.namespace, value: key.namespace },
        { key: searchAttributeKeys.name, value: key.name },
      ],
      staticSummary: `${kind} ${key.namespace}/${key.name}`,
    };
    try {
      if (p.unstick) await this.resetSticky(id);
      // A fresh run always passes once, so a sweep needs no signal: a running workflow is left as it is, and so is
      // one the catch-up just started here.
      if (pokes.every(isSweep)) {
        if (!this.isFreshCatchUpRun(id)) await this.client.workflow.start(workflowTypeOf(kind), start);
      } else if (!(await this.startedEagerly(id, p, start, pokes)) && !(p.catchUp && (await this.startedForCatchUp(id, p, start, pokes))))
        await this.client.workflow.signalWithStart(workflowTypeOf(kind), { ...start, signal: POKE_SIGNAL, signalArgs: [pokes] });
      this.delivered.inc({ kind });
      for (const poke of p.pokes.values()) {
        const content = contentOf(poke);
        if (content !== undefined) this.rememberSent(`${id}|${poke.source}`, content);
      }
    } catch (err) {
      this.failed.inc({ kind });
      const attempts = p.attempts + 1;
      const backoff = Math.min(this.opts.maxBackoffMs, 250 * 2 ** Math.min(attempts, 10));
      this.log.warn({ err, kind, namespace: key.namespace, name: key.name, attempts, backoffMs: backoff }, 'poke failed; will retry');
      // Newer pokes may have arrived meanwhile: each source's newest wins, and they all keep the backoff.
      const newer = this.pending.get(id);
      const pokes = new Map(p.pokes);
      for (const [source, poke] of newer?.pokes ?? []) {
        pokes.set(source, pokes.get(source)?.reason === 'deleted' ? { ...poke, reason: 'deleted' } : poke);
      }
      const replaced = new Set(pokes.keys()); // merged with newer ones: none is dropped as an own echo
      this.pending.set(id, {
        target: p.target,
        pokes,
        attempts,
        notBefore: Date.now() + backoff,
        catchUp: p.catchUp && (newer?.catchUp ?? true),
        replaced,
        ...(p.unstick || newer?.unstick ? { unstick: true } : {}),
      });
    }
  }

  /**
   * Sends the open run's next workflow task to the task queue rather than to the sticky queue of the worker that ran
   * it last. No open run (NotFound) or a server that refuses: the delivery goes on, at worst after the sticky timeout.
   */
  private async resetSticky(workflowId: string): Promise<void> {
    try {
      await this.client.workflowService.resetStickyTaskQueue({ namespace: this.client.options.namespace, execution: { workflowId } });
    } catch (err) {
      this.log.debug({ err, workflowId }, 'sticky queue not reset');
    }
  }

  /**
   * A new object (its own poke says it was added, outside the start-up catch-up) most likely has no run yet: its
   * workflow is started with the pokes as input and its first task handed to this process's worker (`eagerClient`).
   * A run that exists after all refuses the start (conflict policy FAIL) and false sends the signal as usual, so no
   * poke is lost either way. Saves the task queue's hop on the way to a new object's first pass.
   */
  private async startedEagerly(id: string, p: Pending, start: WorkflowStartOptions, pokes: Poke[]): Promise<boolean> {
    const client = this.opts.eagerClient?.();
    if (!client || p.catchUp || p.pokes.get(id)?.reason !== 'added') return false;
    const handle = await startWithPokes(client, p.target.kind, { ...start, requestEagerStart: true }, pokes);
    if (handle) this.eagerStarts.inc({ kind: p.target.kind, eager: String(handle.eagerlyStarted) });
    return handle !== undefined;
  }

  /**
   * A catch-up poke whose workflow has no run (at rest, ADR 0006): the run is started with the pokes as input,
   * marked catch-up, through the task queue. A run that is there refuses the start and false signals it as usual.
   */
  private async startedForCatchUp(id: string, p: Pending, start: WorkflowStartOptions, pokes: Poke[]): Promise<boolean> {
    if (!(await startWithPokes(this.client, p.target.kind, start, pokes))) return false;
    const now = Date.now();
    this.freshCatchUpRuns.set(id, now);
    // Forget the old ones now and then: a scan per start would make a catch-up of thousands quadratic.
    if (this.freshCatchUpRuns.size > 1_000 && now - this.freshPrunedAt > FRESH_CATCH_UP_RUN_MS / 10) {
      this.freshPrunedAt = now;
      for (const [k, at] of this.freshCatchUpRuns) if (now - at >= FRESH_CATCH_UP_RUN_MS) this.freshCatchUpRuns.delete(k);
    }
    return true;
  }

  /** The catch-up started this workflow's run here in the last `FRESH_CATCH_UP_RUN_MS`. */
  private isFreshCatchUpRun(id: string): boolean {
    const at = this.freshCatchUpRuns.get(id);
    return at !== undefined && Date.now() - at < FRESH_CATCH_UP_RUN_MS;
  }

  /**
   * Drops the waiting pokes that announce a version the workflow's own step wrote (`ownWrites`): the watch event often
   * arrives before the step has heard its write's response, so they are looked at again just before delivery. A poke
   * that replaced an earlier one of its source stays (that one's news may be in it). True when none is left.
   */
  private dropOwnEchoes(id: string, p: Pending): boolean {
    if (!this.opts.ownWrites) return false;
    for (const [source, poke] of p.pokes) {
      if (p.replaced?.has(source) || !this.isOwnEcho(id, poke)) continue;
      p.pokes.delete(source);
      this.droppedOwnEcho(id, p.target, poke);
    }
    return p.pokes.size === 0;
  }

  /** The poke announces a version the workflow's own step wrote (a deletion never is). */
  private isOwnEcho(id: string, poke: Poke): boolean {
    return poke.reason !== 'deleted' && (this.opts.ownWrites?.wrote(id, poke.source, poke.resourceVersion) ?? false);
  }

  /**
   * The workflow knows the content of its own write as if it had been told: a later poke announcing the same content
   * from that source is no news either (the de-duplication above), e.g. a Revision's first status that leaves its
   * readiness as it was when the Service's step created it.
   */
  private droppedOwnEcho(id: string, target: PokeTarget, poke: Poke): void {
    this.ownEchoes.inc({ kind: target.kind });
    this.notSent(id, poke, 'the echo of its own write');
    const content = contentOf(poke);
    if (content !== undefined) this.rememberSent(`${id}|${poke.source}`, content);
    // While a step runs its writes are its workflow's own only if it succeeds: kept until its steps have ended.
    if (this.opts.ownWrites?.inStep(id)) {
      const dropped = this.echoesInStep.get(id) ?? { target, pokes: [] };
      dropped.pokes.push(poke);
      this.echoesInStep.set(id, dropped);
    }
  }

  /**
   * A step of workflow `id` ended; `forgotten` are its writes if it failed. A poke dropped as the echo of one of them
   * while the step ran is sent after all (as news: a list-found poke is never matched against what was last sent):
   * the workflow never learned of the write, and the next pass may read a cache that has not caught up with it.
   */
  private echoesOfFailedStep(id: string, forgotten: readonly OwnWrite[]): void {
    const dropped = this.echoesInStep.get(id);
    if (!dropped) return;
    if (!this.opts.ownWrites?.inStep(id)) this.echoesInStep.delete(id);
    if (forgotten.length === 0) return;
    const taken = new Set(forgotten.map((w) => `${w.source}|${w.resourceVersion}`));
    const again = dropped.pokes.filter((p) => taken.has(`${p.source}|${p.resourceVersion}`));
    dropped.pokes = dropped.pokes.filter((p) => !again.includes(p));
    for (const poke of again) this.poke(dropped.target, poke, { fresh: true });
  }

  /** A poke the poker drops, told at debug level: the trace of a change that never reached its workflow. */
  private notSent(workflowId: string, poke: Poke, why: string): void {
    this.log.debug({ workflowId, source: poke.source, resourceVersion: poke.resourceVersion, token: poke.token, why }, 'poke not sent');
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
