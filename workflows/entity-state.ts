// What an entity workflow's run holds, carries across continue-as-new and hears from its passes: the types the loop's
// rules (workflows/entity-loop.ts) work on and every kind's pass (workflows/service.ts …) reads and reports. Pure.
import type { EntityKind, Poke } from '../api/entity.js';

export interface EntityOptions {
  /** Reconcile this often even without pokes (drift repair), counted from the run's start or the last resync. */
  resyncSeconds: number;
  /** Continue-as-new after this many reconcile passes in one run. */
  maxReconcilesPerRun: number;
  /** Continue-as-new after this many pokes in one run (the server's suggestion ignores signals). */
  maxPokesPerRun: number;
  /**
   * End the run after this long without a pass, a pending retry or a poke still to act on (ADR 0006); the next poke
   * starts a fresh run with a full pass. 0: the run waits for its next poke however long that takes.
   */
  idleSeconds: number;
}

export const defaultEntityOptions: EntityOptions = { resyncSeconds: 36_000, maxReconcilesPerRun: 200, maxPokesPerRun: 1000, idleSeconds: 60 };

export interface EntityInput {
  kind: EntityKind;
  namespace: string;
  name: string;
  /**
   * Fixed options (tests). Without them the run reads the worker's options (`readEntityOptions`) at its start and at
   * every resync; options are never carried across continue-as-new, so a changed setting reaches every workflow.
   */
  options?: Partial<EntityOptions>;
  /** State carried over continue-as-new; absent on a fresh start. */
  carried?: CarriedState;
  /**
   * The pokes that started this run when the watcher started it instead of signalling it (a new object, eager start:
   * watcher/poker.ts); acted on as if signalled, so the history shows what the first pass was for.
   */
  pokes?: Poke[];
  /**
   * The watcher's catch-up started this run (a restart's or a new leader's first list, a sweep; watcher/poker.ts):
   * a first pass that writes nothing and finds the object settled ends it at once (ADR 0006, "Later").
   */
  catchUp?: boolean;
}

/** Plain JSON only: it crosses continue-as-new. */
export interface CarriedState {
  uid?: string;
  dirty: boolean;
  trigger: string;
  /** What the last pass observed: source → `<uid> <spec> <status>` (api/content-token.ts). */
  observed: Record<string, string>;
  totalReconciles: number;
  totalPokes: number;
  runs: number;
  /** Small per-kind facts a workflow remembers between passes (e.g. digests resolved); reset when the uid changes. */
  facts: Record<string, string>;
  lastReconcile?: { at: string; trigger: string; summary: string };
  /** A scheduled pass not taken yet (`PassResult.wake`): Unix ms and the timer's summary; re-armed by the next run. */
  wake?: { atMs: number; summary: string };
  /** Pokes no pass has read yet (`EntityState.announced`): the next run's first pass answers them. */
  announced?: Record<string, Poke>;
  /** Passes in a row that failed (`EntityState.failedPasses`): the next run's first pass is one after a failure. */
  failedPasses?: number;
}

/** What a pass reads of the loop (its `st`) and what the state query shows. */
export interface EntityState extends CarriedState {
  kind: EntityKind;
  namespace: string;
  name: string;
  reconcilesThisRun: number;
  pokesThisRun: number;
  ignoredPokes: number;
  options: EntityOptions;
  /**
   * This pass's news is only dependencies' status changes (their spec as the last pass saw it): it may skip applying
   * children and only recompute status. Never on a run's first pass, at a resync or after any other news.
   */
  statusOnly: boolean;
  /** News since the last pass started that needs a full pass. */
  pendingFull: boolean;
  /** Pokes that arrived while a pass ran: those the pass turns out to have covered are dropped afterwards. */
  pokesDuringPass: Poke[];
  /** More pokes arrived during the pass than are kept: the loop passes again whatever they were. */
  pokesDuringPassOverflow: boolean;
  /** The last pass's own earlier writes its observations do not cover, `<resourceVersion> <observation>` per source. */
  echoes: Record<string, string[]>;
  inPass: boolean;
  /**
   * The newest poke of each source heard since the last pass began (or not acted on by it): what the next pass must
   * read at least. A pass whose read of a source is older than the poke it answers (a cache or a watch that lagged, an
   * API server that came back behind) covers nothing of it and passes again (`staleReads`).
   */
  announced: Record<string, Poke>;
  /** Passes in a row that read a source older than a poke they answered; from the second on they wait a little. */
  staleReads: number;
  /**
   * Passes in a row that failed (a step still failing after its attempts): the next one waits on a durable timer,
   * longer each time, unless news comes first, and lists from the API server (ADR 0001, "A pass that fails").
   */
  failedPasses: number;
  /** Why the last pass that failed failed, and when. */
  lastFailure?: { at: string; message: string };
}

/** What one reconcile pass reports back to the loop (its observations come from its steps' results). */
export interface PassResult {
  /** The object no longer exists: the workflow completes. */
  gone: boolean;
  /** The uid of the object reconciled; a new uid means the object was recreated. */
  uid?: string;
  summary: string;
  /** Facts to remember (merged into the carried state). */
  facts?: Record<string, string>;
  /** The pass applied nothing and only wrote status: it covers no spec it did not see before (ADR 0004). */
  statusOnly?: boolean;
  /**
   * The pass could not finish for a reason no watched object announces the end of (a foreign object holding a
   * child's name): pass again in full after this many seconds, unless news comes first.
   */
  retryInSeconds?: number;
  /**
   * A schedule the pass keeps (a gradual rollout's next step, ADR 0007): pass again then, unless a pass runs first
   * (it reports its own). Unlike a retry the pass may be status-only. `inMs` is measured by the step that computed
   * `atMs`, at its end — workflow time is the start of the pass's workflow task, so a timer of `atMs` minus workflow
   * time would fire late by the length of the pass; `atMs` serves a run that continues-as-new before it fires.
   * `summary` names the timer in the history ("rollout: nginx-00002 26% → 51% …").
   */
  wake?: { atMs: number; inMs: number; summary: string };
  /**
   * The object's Ready condition is True or False: nothing is under way that only this run would see through. A run
   * ends idle only after a settled pass (ADR 0006): one waiting on its children (a Revision whose pods are starting)
   * stays, so a backlog never turns into runs that end and start again with full passes. Absent: settled.
   */
  settled?: boolean;
}

/** What the steps of a pass observed, pooled (workflows/activities.ts, `endPassObservations`). */
export interface PassObservations {
  observed: Record<string, string>;
  /** Sources a step applied: their observation is Tidal's own. */
  applied: ReadonlySet<string>;
  echoes: Record<string, string[]>;
  /** A step wrote an object or a status. */
  wrote: boolean;
  /** The oldest resourceVersion of each source the steps read or wrote. */
  versions: Record<string, string>;
}

/** How a workflow type reads its pokes. */
export interface EntityTraits {
  /** Source kinds whose every change is status news for this workflow: it reads them but never applies them. */
  statusKinds?: readonly string[];
}
