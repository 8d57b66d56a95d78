// Only the leader pokes. Every replica campaigns for the Lease `TIDAL_LEASE_NAME` in the system namespace
// (watcher/leader-election.ts); the holder runs a *term*: a watcher and poker that poke every object written after the
// previous leader's watch bookmark (ADR 0024; every object when there is none), so no change made while no one
// watched — a handover, a fresh cluster — is lost, and none made before costs a task. The leader keeps the bookmark
// on the Lease with each renewal, moved up whenever its poker has delivered all it saw. The other replicas *stand by*:
// their watcher lists and watches, pokes nothing and holds each object's latest change, forgetting those the Lease's
// bookmark has passed; the replica that takes the Lease starts its term from that watcher, its caches already listed
// (ADR 0024, "Followers stand by"). A term ends the moment leadership does: its poker stops delivering at once (it
// asks before every delivery), its pending pokes are dropped and its informers closed, and the replica stands by from
// a fresh list, never from the old view.
// One exception: a leader that only missed its own renew deadline (a saturated machine) *pauses* its term — nothing is
// delivered, its informers keep watching and its poker keeps what they announce — and resumes it when it takes the
// Lease back still naming it, i.e. nobody else led meanwhile, so nothing changed unwatched. The moment the Lease is
// seen naming anyone else the paused term is closed. Without this, each missed deadline under load re-listed
// everything (the 10-minute chaos run: 89 terms on one replica).
// Every replica stays a Temporal worker and a webhook server.
// With TIDAL_LEADER_ELECTION=false the process runs one term for its whole life (one process on a laptop).
import os from 'node:os';
import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import { Gauge, type Registry } from 'prom-client';
import type { MetadataCache } from '../activities/deps.js';
import { LeaderElector, type Clock, type LeaderElectionTimings, type LeaseApi } from '../watcher/leader-election.js';
import { counterIn } from '../watcher/metrics.js';
import type { Poker } from '../watcher/poker.js';
import type { Watcher } from '../watcher/watcher.js';
import { advanceBookmark, BookmarkAnnotation, formatBookmark, parseBookmark, type WatchBookmark } from '../watcher/bookmark.js';

export interface WatcherTerm {
  watcher: Watcher;
  poker: Poker;
  /** The term begins: its watcher leads (`Watcher.lead`) from the bookmark found on the Lease and the time given. */
  lead(bookmark: WatchBookmark | undefined, recentSince: number | undefined): void;
}

export interface LeadershipOptions {
  enabled: boolean;
  /**
   * Versions seen outside the terms' watchers, for the watch bookmark (the config maps: `ConfigMap`). Changes there
   * must reach a term's poker in the same tick they are seen, so that an empty poker means they were delivered.
   */
  seenElsewhere?: () => Record<string, string | undefined>;
  namespace: string;
  leaseName: string;
  timings: LeaderElectionTimings;
  /** TIDAL_IDENTITY, else the host name (a pod's name). */
  identityBase: string | undefined;
}

/** Unique per process instance: a restarted container (same pod name, often pid 1 again) is a new candidate. */
export function leaderIdentity(base: string | undefined): string {
  return `${base ?? os.hostname()}_${process.pid}_${randomBytes(3).toString('hex')}`;
}

export class Leadership {
  private term: WatcherTerm | undefined;
  /** A term paused at a missed renew deadline, resumed if this process leads again with nobody in between. */
  private paused: WatcherTerm | undefined;
  /** The watcher standing by while another replica leads, which the next term starts from. */
  private standby: WatcherTerm | undefined;
  private stopping = false;
  private readonly closing = new Set<Promise<void>>();
  private readonly elector: LeaderElector | undefined;
  private readonly leaderGauge: Gauge;
  readonly identity: string;

  /**
   * The watch bookmark (watcher/bookmark.ts, ADR 0024): as the previous leader left it on the Lease when this replica
   * took it, then moved up at each renewal at which this term's poker had delivered everything its watcher saw.
   */
  private bookmark: WatchBookmark | undefined;

  /**
   * `makeTerm(isCurrent)` builds (not starts) a watcher standing by and its poker; the poker must ask `isCurrent()`
   * before every delivery. `leaseApi` (watcher/lease-api.ts) should time out requests within the renew deadline.
   */
  constructor(
    private readonly opts: LeadershipOptions,
    leaseApi: LeaseApi,
    private readonly makeTerm: (isCurrent: () => boolean) => WatcherTerm,
    private readonly log: Logger,
    registry: Registry,
    clock?: Clock,
  ) {
    this.identity = leaderIdentity(opts.identityBase);
    this.leaderGauge = new Gauge({
      name: 'tidal_leader',
      help: '1 while this replica holds the leader Lease and its watcher pokes',
      labelNames: ['identity'],
      registers: [registry],
    });
    this.leaderGauge.set({ identity: this.identity }, 0);
    const transitions = counterIn<'change'>(registry, {
      name: 'tidal_leader_transitions_total',
      help: 'Leadership changes of this replica (acquired, resumed after its own missed deadline, or stopped: deadline, lost, released)',
      labelNames: ['change'],
    });
    if (opts.enabled) {
      this.elector = new LeaderElector(
        leaseApi,
        { namespace: opts.namespace, name: opts.leaseName },
        this.identity,
        opts.timings,
        {
          onStartedLeading: (continued, before) => {
            if (continued && this.resume()) {
              transitions.inc({ change: 'resumed' });
              return;
            }
            transitions.inc({ change: 'acquired' });
            this.bookmark = parseBookmark(before?.metadata.annotations);
            this.begin(Date.now() - 2 * opts.timings.leaseDurationMs - 2000);
          },
          onStoppedLeading: (reason) => {
            transitions.inc({ change: reason });
            if (reason === 'deadline') this.pause();
            else this.end();
          },
          onOtherHolder: (_holder, lease) => {
            this.closePaused('the lease names another holder');
            // What the leader has delivered, the standby need not hold.
            this.standby?.watcher.prune(parseBookmark(lease.metadata.annotations));
          },
        },
        log,
        clock,
        undefined,
        () => this.bookmarkAnnotations(),
      );
    }
  }

  /**
   * The bookmark as the Lease should carry it now, moved up first if this term has delivered all it saw. Without a
   * running term (taking the Lease, paused, releasing it) nothing: the Lease keeps the one it has, never one this
   * replica kept from an earlier term of its own.
   */
  private bookmarkAnnotations(): Record<string, string> {
    const term = this.term;
    if (!term) return {};
    const seen = term.watcher.progress();
    if (seen && term.poker.backlog === 0) this.bookmark = advanceBookmark(this.bookmark, { ...seen, ...this.opts.seenElsewhere?.() });
    return this.bookmark ? { [BookmarkAnnotation]: formatBookmark(this.bookmark) } : {};
  }

  /** The current term's poker, if this replica leads. */
  get poker(): Poker | undefined {
    return this.term?.poker;
  }

  /** The current term's watcher, if this replica leads. */
  get watcher(): Watcher | undefined {
    return this.term?.watcher;
  }

  /**
   * This replica's watcher — its term's, a paused term's, or the one standing by — has listed every kind: it can lead
   * without listing. Readiness waits for it, so a rolling update hands the Lease to a replica whose caches are there.
   */
  get listed(): boolean {
    return (this.term ?? this.paused ?? this.standby)?.watcher.hasSynced ?? true;
  }

  get isLeader(): boolean {
    return this.elector ? this.elector.isLeader() : this.term !== undefined;
  }

  /** The holder as this replica last saw it. */
  get holder(): string | undefined {
    return this.elector ? this.elector.holder : this.identity;
  }

  /** The leader's caches as activities read them; on other replicas (or between terms) activities list from the API server. */
  readonly cache: MetadataCache = {
    list: (type, namespace, opts) => this.term?.watcher.cache.list(type, namespace, opts) ?? Promise.resolve(undefined),
    versionOf: (type, namespace, name) => this.term?.watcher.cache.versionOf?.(type, namespace, name),
    until: (type, namespace, labels, test, timeoutMs) =>
      this.term?.watcher.cache.until?.(type, namespace, labels, test, timeoutMs) ?? Promise.resolve(false),
  };

  start(): void {
    if (this.elector) {
      this.log.info(
        { identity: this.identity, lease: `${this.opts.namespace}/${this.opts.leaseName}`, ...this.opts.timings },
        'campaigning for the leader lease',
      );
      this.standBy();
      this.elector.start();
    } else {
      this.log.info({ identity: this.identity }, 'leader election off (TIDAL_LEADER_ELECTION=false): this process runs the watcher');
      this.begin(undefined);
    }
  }

  /** Stops the watcher (no poke after this returns a first tick) and releases the Lease for an immediate handover. */
  async stop(): Promise<void> {
    this.stopping = true;
    if (this.elector) await this.elector.stop();
    this.end();
    this.closePaused('stopping');
    if (this.standby) this.close(this.standby);
    this.standby = undefined;
    await Promise.all([...this.closing]);
  }

  /** A watcher that lists and watches but pokes nothing until this replica leads; a new one, from a fresh list. */
  private standBy(): void {
    if (this.stopping || !this.elector || this.standby) return;
    const term: WatcherTerm = this.makeTerm(() => this.term === term && (this.elector?.isLeader() ?? false));
    this.standby = term;
    term.watcher.start();
    this.log.info({ identity: this.identity }, 'watcher standing by: listing and watching every kind, poking nothing while another replica leads');
  }

  private begin(recentSince: number | undefined): void {
    this.end(false);
    this.closePaused('a new term starts from a fresh list', false);
    const standby = this.standby;
    this.standby = undefined;
    const term: WatcherTerm = standby ?? this.makeTerm(() => this.term === term && (this.elector?.isLeader() ?? true));
    this.term = term;
    this.leaderGauge.set({ identity: this.identity }, 1);
    term.lead(this.bookmark, recentSince);
    if (standby) {
      const listed = term.watcher.hasSynced;
      this.log.info(
        { identity: this.identity, listed },
        listed
          ? 'watcher leads from its standby caches: poking what changed since the bookmark'
          : 'watcher leads from standing by, its lists still coming in: poking what changed since the bookmark',
      );
    } else {
      term.watcher.start();
      this.log.info({ identity: this.identity }, 'watcher started: listing every watched kind and poking what changed');
    }
    term.watcher
      .synced()
      .then(() => {
        // A paused term counts: its lists may have come in while renewals missed the deadline (a start-up list of
        // thousands keeps the process busy), and its poker holds these pokes until it resumes or is closed.
        if (this.term !== term && this.paused !== term) return;
        // Children deleted while no one watched are absent from the list: their owners hear of it here.
        const missing = term.watcher.pokeMissingChildren();
        const { poked, unchanged, resumed } = term.watcher.startUp;
        const heldWhileStandingBy = term.watcher.heldWhileStandingBy;
        this.log.info(
          {
            identity: this.identity,
            missingChildren: missing,
            poked,
            unchangedSinceBookmark: unchanged,
            changesResumedFromBookmark: resumed,
            changesHeldWhileStandingBy: heldWhileStandingBy,
            bookmark: this.bookmark !== undefined,
          },
          'watcher synced',
        );
      })
      .catch((err: unknown) => this.log.warn({ identity: this.identity, err }, 'watcher sync: could not poke the owners of missing children'));
  }

  /** The renew deadline passed: nothing is delivered (the poker asks), but the informers and pending pokes stay. */
  private pause(): void {
    const term = this.term;
    if (!term) return;
    this.term = undefined;
    this.paused = term;
    this.leaderGauge.set({ identity: this.identity }, 0);
    this.log.warn({ identity: this.identity }, 'watcher paused: renewals missed the deadline; pokes held until this replica leads again');
  }

  /** Leading again with nobody in between: the paused term goes on, its held pokes delivered. */
  private resume(): boolean {
    const term = this.paused;
    if (!term) return false;
    this.paused = undefined;
    this.term = term;
    this.leaderGauge.set({ identity: this.identity }, 1);
    term.poker.resume();
    this.log.info({ identity: this.identity, backlog: term.poker.backlog }, 'watcher resumed: nobody else led meanwhile, held pokes delivered');
    return true;
  }

  private closePaused(why: string, standBy = true): void {
    const term = this.paused;
    if (!term) return;
    this.paused = undefined;
    this.close(term);
    this.log.info({ identity: this.identity, why }, 'paused watcher stopped: pending pokes dropped');
    if (standBy) this.standBy();
  }

  /** Ends the term; the replica then stands by from a fresh list (unless a term begins or the process stops). */
  private end(standBy = true): void {
    const term = this.term;
    if (!term) return;
    this.term = undefined;
    this.leaderGauge.set({ identity: this.identity }, 0);
    this.close(term);
    this.log.info({ identity: this.identity }, 'watcher stopped: pending pokes dropped');
    if (standBy) this.standBy();
  }

  private close(term: WatcherTerm): void {
    const closing = (async () => {
      await term.poker.close();
      await term.watcher.close();
    })().catch((err: unknown) => this.log.warn({ err }, 'closing the watcher failed'));
    this.closing.add(closing);
    void closing.finally(() => this.closing.delete(closing));
  }
}
