// Leader election on a coordination.k8s.io/v1 Lease, as client-go's leaderelection does it: every write is
// preconditioned on the resourceVersion last read, so two candidates never both win; a candidate judges expiry by
// its own monotonic clock from when it last saw the record change (never by comparing wall clocks); a leader whose
// renewals fail for `renewDeadlineMs` steps down at once, `leaseDurationMs − renewDeadlineMs` before anyone else may
// take the Lease. `isLeader()` re-checks that deadline on every call, so a process stalled past it (a long GC pause,
// a starved event loop) sees it has lost before it acts, even if its deadline timer has not fired yet.
//
// The clock, the Lease API and the timers are injected: test/unit/watcher/leader-election.test.ts drives it with fake ones.
import type { Logger } from 'pino';

/** The fields of a Lease this code reads and writes (spec of coordination.k8s.io/v1 Lease). */
export interface LeaseObject {
  apiVersion: 'coordination.k8s.io/v1';
  kind: 'Lease';
  metadata: { name: string; namespace: string; resourceVersion?: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  spec: {
    holderIdentity?: string;
    leaseDurationSeconds?: number;
    acquireTime?: string;
    renewTime?: string;
    leaseTransitions?: number;
  };
}

/** Reads and preconditioned writes of the one Lease. `create` and `replace` reject with a {@link LeaseConflict} on a lost race. */
export interface LeaseApi {
  get(): Promise<LeaseObject | undefined>;
  create(lease: LeaseObject): Promise<LeaseObject>;
  /** A PUT carrying `metadata.resourceVersion`: the API server refuses it (409) when the Lease changed since. */
  replace(lease: LeaseObject): Promise<LeaseObject>;
}

/** Someone else wrote the Lease first (409 Conflict, or AlreadyExists on create). */
export class LeaseConflict extends Error {
  override readonly name = 'LeaseConflict';
}

export interface LeaderElectionTimings {
  /** How long a Lease stays valid after it was last seen renewed; written to the Lease in whole seconds. */
  leaseDurationMs: number;
  /** A leader that has not renewed for this long steps down; must be well under the lease duration. */
  renewDeadlineMs: number;
  /** How often the leader renews. */
  renewPeriodMs: number;
  /** How often a candidate tries to acquire. */
  retryPeriodMs: number;
}

export interface Clock {
  /** Monotonic milliseconds, for deadlines. */
  now(): number;
  /** Wall-clock time, for the Lease's acquireTime and renewTime. */
  wall(): Date;
}

export const systemClock: Clock = { now: () => performance.now(), wall: () => new Date() };

export interface LeaderCallbacks {
  /**
   * This process now holds the Lease. `continued`: it took back a Lease that still named it — it missed its own
   * renew deadline and nobody else held the Lease meanwhile (every takeover writes the taker's identity, a release
   * an empty one). `before`: the Lease as it was just before this process took it (undefined when it created it).
   */
  onStartedLeading(continued: boolean, before?: LeaseObject): void;
  /** It no longer does (deadline passed, someone else holds it, or it released it): stop acting at once. */
  onStoppedLeading(reason: 'deadline' | 'lost' | 'released'): void;
  /**
   * The Lease was seen naming someone else (or no one), as `lease`: a later takeover by this process is not a
   * continuation.
   */
  onOtherHolder?(holder: string, lease: LeaseObject): void;
}

export interface Scheduler {
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

const realScheduler: Scheduler = {
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (h) => clearTimeout(h as NodeJS.Timeout),
};

/** Kubernetes MicroTime, as client-go writes it: RFC 3339 with six fractional digits. */
export function microTime(d: Date): string {
  return d.toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}

export class LeaderElector {
  private leading = false;
  /** Monotonic time at which the last successful renewal (or the acquisition) was *sent*: the conservative anchor. */
  private renewedAt = 0;
  /** The record as last seen, and when (monotonic) it was first seen that way. */
  private observed: LeaseObject | undefined;
  private observedAt = 0;
  private loopTimer: unknown;
  private deadlineTimer: unknown;
  private stopped = false;
  private running: Promise<void> | undefined;
  private wakeLoop: (() => void) | undefined;

  constructor(
    private readonly api: LeaseApi,
    /** Where the Lease lives: written when there is none yet. */
    private readonly lease: { namespace: string; name: string },
    readonly identity: string,
    private readonly timings: LeaderElectionTimings,
    private readonly callbacks: LeaderCallbacks,
    private readonly log: Logger,
    private readonly clock: Clock = systemClock,
    private readonly scheduler: Scheduler = realScheduler,
    /**
     * Annotations the holder keeps on the Lease, asked before each of its writes (acquire, renew, release): written
     * under the same resourceVersion precondition, so only the holder of the moment writes them.
     */
    private readonly annotations?: () => Record<string, string>,
  ) {
    if (timings.renewDeadlineMs >= timings.leaseDurationMs) throw new Error('leader election: the renew deadline must be shorter than the lease');
    if (timings.leaseDurationMs % 1000 !== 0) throw new Error('leader election: the lease duration must be whole seconds (leaseDurationSeconds)');
  }

  /** True while this process holds the Lease and its last renewal is within the renew deadline. */
  isLeader(): boolean {
    if (this.leading && this.clock.now() - this.renewedAt >= this.timings.renewDeadlineMs) this.stepDown('deadline');
    return this.leading;
  }

  /** The holder as last seen (this process's identity while it leads). */
  get holder(): string | undefined {
    return this.observed?.spec.holderIdentity || undefined;
  }

  start(): void {
    this.running ??= this.loop();
  }

  /**
   * Stops campaigning. A leader first stops leading (the callback runs before anything is written), then releases
   * the Lease — holderIdentity cleared — so another replica takes over at its next try instead of after expiry.
   */
  async stop(): Promise<void> {
    this.stopped = true;
    this.scheduler.clearTimeout(this.loopTimer);
    this.wakeLoop?.();
    await this.running;
    if (!this.leading) return;
    this.stepDown('released');
    const mine = this.observed;
    if (!mine || mine.spec.holderIdentity !== this.identity) return;
    const now = microTime(this.clock.wall());
    try {
      await this.api.replace({
        ...mine,
        metadata: this.annotated(mine.metadata),
        spec: { ...mine.spec, holderIdentity: '', leaseDurationSeconds: 1, acquireTime: now, renewTime: now },
      });
      this.log.info(
        { kind: 'Lease', namespace: mine.metadata.namespace, name: mine.metadata.name, identity: this.identity },
        'released the leader lease',
      );
    } catch (err) {
      // It expires by itself: others take over after the lease duration.
      this.log.warn({ err, kind: 'Lease', namespace: mine.metadata.namespace, name: mine.metadata.name }, 'could not release the leader lease');
    }
  }

  /** One attempt to acquire or renew (client-go's tryAcquireOrRenew); true when this process holds the Lease after it. */
  async tryAcquireOrRenew(): Promise<boolean> {
    const started = this.clock.now();
    const wall = microTime(this.clock.wall());
    // A leader renews its own last write directly; a conflict means someone else wrote, and the next try reads.
    const current = this.leading && this.observed?.spec.holderIdentity === this.identity ? this.observed : await this.api.get();
    if (!current) {
      try {
        this.won(await this.api.create(this.record(undefined, wall)), started, false, undefined);
        return this.leading;
      } catch (err) {
        if (err instanceof LeaseConflict) return false;
        throw err;
      }
    }
    if (current !== this.observed) this.see(current);
    const holder = current.spec.holderIdentity ?? '';
    if (holder !== '' && holder !== this.identity && !this.expired(current)) return false;
    if (this.stopped) return false;
    try {
      this.won(await this.api.replace(this.record(current, wall)), started, holder === this.identity, current);
      return this.leading;
    } catch (err) {
      if (!(err instanceof LeaseConflict)) throw err;
      // Someone else wrote it (or an earlier renewal of ours landed late): read who holds it now; a leader that is
      // no longer the holder stops at once.
      const now = await this.api.get();
      if (now) this.see(now);
      else if (this.leading) this.stepDown('lost');
      return false;
    }
  }

  /** The record this process writes: a renewal keeps acquireTime and leaseTransitions, a takeover counts one more. */
  private record(current: LeaseObject | undefined, wall: string): LeaseObject {
    const ours = current?.spec.holderIdentity === this.identity;
    const transitions = current?.spec.leaseTransitions ?? 0;
    return {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: this.annotated(current?.metadata ?? { namespace: this.lease.namespace, name: this.lease.name }),
      spec: {
        holderIdentity: this.identity,
        leaseDurationSeconds: this.timings.leaseDurationMs / 1000,
        acquireTime: ours ? (current.spec.acquireTime ?? wall) : wall,
        renewTime: wall,
        leaseTransitions: !current ? 0 : ours ? transitions : transitions + 1,
      },
    };
  }

  /** The Lease's metadata with the holder's annotations as they are now (others' annotations kept). */
  private annotated(metadata: LeaseObject['metadata']): LeaseObject['metadata'] {
    const own = this.annotations?.();
    return own && Object.keys(own).length ? { ...metadata, annotations: { ...metadata.annotations, ...own } } : metadata;
  }

  /** A record is expired when it has not changed for its own lease duration, as this process's clock measures it. */
  private expired(current: LeaseObject): boolean {
    const seconds = current.spec.leaseDurationSeconds ?? this.timings.leaseDurationMs / 1000;
    return this.clock.now() - this.observedAt >= seconds * 1000;
  }

  private see(lease: LeaseObject): void {
    const before = this.observed;
    const changed =
      !before ||
      before.metadata.resourceVersion !== lease.metadata.resourceVersion ||
      before.spec.holderIdentity !== lease.spec.holderIdentity ||
      before.spec.renewTime !== lease.spec.renewTime;
    this.observed = lease;
    if (changed) this.observedAt = this.clock.now();
    // Someone else holds it now: a leader that still thinks it leads must stop (its renewal would conflict anyway).
    if (this.leading && lease.spec.holderIdentity !== this.identity) this.stepDown('lost');
    if (lease.spec.holderIdentity !== this.identity) this.callbacks.onOtherHolder?.(lease.spec.holderIdentity ?? '', lease);
  }

  private won(lease: LeaseObject, sentAt: number, continued: boolean, before: LeaseObject | undefined): void {
    this.observed = lease;
    this.observedAt = this.clock.now();
    // A write that took longer than the renew deadline does not count: others may already treat the Lease as expiring.
    if (this.clock.now() - sentAt >= this.timings.renewDeadlineMs) return;
    // Stopping meanwhile: the write went through, but a stopping process must not start leading (stop() releases).
    if (this.stopped && !this.leading) return;
    this.renewedAt = sentAt;
    this.armDeadline();
    if (!this.leading) {
      this.leading = true;
      this.log.info(
        {
          kind: 'Lease',
          namespace: lease.metadata.namespace,
          name: lease.metadata.name,
          identity: this.identity,
          transitions: lease.spec.leaseTransitions,
          continued,
        },
        continued ? 'leads again (nobody else held the lease meanwhile)' : 'became the leader',
      );
      this.callbacks.onStartedLeading(continued, before);
    }
  }

  /** Steps down the moment the renew deadline passes, even while a renewal request still hangs. */
  private armDeadline(): void {
    this.scheduler.clearTimeout(this.deadlineTimer);
    const left = this.renewedAt + this.timings.renewDeadlineMs - this.clock.now();
    this.deadlineTimer = this.scheduler.setTimeout(() => this.isLeader(), Math.max(0, left));
  }

  private stepDown(reason: 'deadline' | 'lost' | 'released'): void {
    if (!this.leading) return;
    this.leading = false;
    this.scheduler.clearTimeout(this.deadlineTimer);
    const log = reason === 'released' ? this.log.info.bind(this.log) : this.log.warn.bind(this.log);
    log({ identity: this.identity, reason, holder: this.observed?.spec.holderIdentity }, 'stopped leading');
    this.callbacks.onStoppedLeading(reason);
  }

  private async loop(): Promise<void> {
    while (!this.stopped) {
      try {
        await this.tryAcquireOrRenew();
      } catch (err) {
        this.log.debug({ err, identity: this.identity }, 'leader election: could not reach the Lease');
      }
      this.isLeader(); // a renewal that came back after the deadline does not count
      if (this.stopped) break;
      const wait = this.leading ? this.timings.renewPeriodMs : this.timings.retryPeriodMs;
      await new Promise<void>((resolve) => {
        this.wakeLoop = resolve;
        this.loopTimer = this.scheduler.setTimeout(resolve, wait);
      });
      this.wakeLoop = undefined;
    }
  }
}
