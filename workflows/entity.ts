// The entity loop every object's workflow runs (design.md §3, ADR 0001): pokes set a dirty flag, any number of pokes
// coalesce into one reconcile pass, a durable timer resyncs, the run continues-as-new before its history grows long,
// and the workflow completes once its object is gone — or once it has had nothing to do for a while (ADR 0006): the
// next poke starts a fresh run, so an object at rest costs no worker memory and no running workflow.
//
// No lost updates: a poke is ignored only when its content token equals what the last pass observed of that source
// (api/content-token.ts). A status write can therefore never hide a spec change: the spec part of the token differs.
import {
  allHandlersFinished,
  condition,
  continueAsNew,
  defineQuery,
  defineSignal,
  log,
  patched,
  setHandler,
  sleep,
  workflowInfo,
} from '@temporalio/workflow';
import { echoCovers, newerVersion, observationCovers, statusOnlyChange, statusOnlyObservations, uidOfObservation } from '../api/content-token.js';
import { entityWorkflowId, POKE_SIGNAL, STATE_QUERY, type EntityKind, type Poke, type PokeBatch } from '../api/entity.js';
import { beginPassObservations, endPassObservations, readEntityOptions } from './activities.js';

export const pokeSignal = defineSignal<[PokeBatch]>(POKE_SIGNAL);
export const stateQuery = defineQuery<EntityState>(STATE_QUERY);

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
}

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

export type ReconcilePass = (state: Readonly<EntityState>) => Promise<PassResult>;

const MAX_POKES_KEPT_DURING_PASS = 100;

async function currentOptions(input: EntityInput): Promise<EntityOptions> {
  if (input.options) return { ...defaultEntityOptions, ...input.options };
  const read = await readEntityOptions();
  return {
    ...defaultEntityOptions,
    ...(read.resyncSeconds !== undefined ? { resyncSeconds: read.resyncSeconds } : {}),
    ...(read.idleSeconds !== undefined ? { idleSeconds: read.idleSeconds } : {}),
  };
}

/** How a workflow type reads its pokes. */
export interface EntityTraits {
  /** Source kinds whose every change is status news for this workflow: it reads them but never applies them. */
  statusKinds?: readonly string[];
}

export async function runEntity(input: EntityInput, reconcile: ReconcilePass, traits: EntityTraits = {}): Promise<string> {
  const { observed = {}, announced = {}, ...carried } = input.carried ?? ({} as Partial<CarriedState>);
  const st: EntityState = {
    kind: input.kind,
    namespace: input.namespace,
    name: input.name,
    dirty: true, // a fresh run always reconciles once
    trigger: 'start',
    totalReconciles: 0,
    totalPokes: 0,
    runs: 0,
    facts: {},
    ...carried,
    observed,
    reconcilesThisRun: 0,
    pokesThisRun: 0,
    ignoredPokes: 0,
    options: defaultEntityOptions,
    statusOnly: false,
    pendingFull: true,
    pokesDuringPass: [],
    pokesDuringPassOverflow: false,
    echoes: {},
    inPass: false,
    announced,
    staleReads: 0,
  };
  st.runs += 1;
  const self = entityWorkflowId(st.kind, { namespace: st.namespace, name: st.name });

  setHandler(pokeSignal, (batch) => {
    for (const poke of Array.isArray(batch) ? batch : [batch]) onPoke(st, poke, traits);
  });
  setHandler(stateQuery, () => st);
  for (const poke of input.pokes ?? []) onPoke(st, poke, traits);
  // The first pass needs none of the options (they time what comes after a pass): a fresh run passes at once and
  // reads them after, so its object is not kept waiting for another local step. Runs recorded before read them first.
  let optionsRead = !(input.options === undefined && patched('options-after-first-pass'));
  if (optionsRead) st.options = await currentOptions(input);
  // One durable timer per resync period, re-armed when it fires: a pass does not restart it, so a poked pass costs
  // no timer events.
  let resyncDue = false;
  const armResync = () => void sleep(st.options.resyncSeconds * 1000).then(() => (resyncDue = true));
  if (optionsRead) armResync();
  // One idle timer at a time, never cancelled: when it fires the loop looks at how long it has been quiet and either
  // ends the run or arms it again for the rest (a pass costs no timer events). While the run cannot end (its object
  // is not settled, a retry is pending) no idle timer runs: the pass that makes it endable arms one.
  let idleDue = false;
  let idleArmed = false;
  // Workflow time: the SDK's deterministic clock, the start of the current workflow task.
  const now = () => new Date().getTime();
  let quietSince = now();
  let retryPending = false;
  let settled = true;
  const armIdle = (ms: number) => {
    idleArmed = true;
    void sleep(ms).then(() => {
      idleArmed = false;
      idleDue = true;
    });
  };
  const ensureIdleTimer = () => {
    if (st.options.idleSeconds > 0 && !idleArmed && !idleDue) armIdle(st.options.idleSeconds * 1000);
  };
  if (optionsRead) ensureIdleTimer();
  // Scheduled passes (`PassResult.wake`), on the schedule the last pass reported. Not full: the schedule is not news
  // (a Service's status-only pass programs its Route), unless news came too. One timer per due time: a pass that
  // reports a time a pending timer already covers (due no later) arms none — Temporal fired the second of two timers
  // of one workflow due together about a second late (bench:rollout). A timer that fires before the schedule (it
  // moved later) arms one for the rest; one that finds nothing scheduled does nothing.
  const wakeTimers: number[] = [];
  const armWake = (atMs: number, inMs: number, summary: string): void => {
    if (wakeTimers.some((t) => t <= atMs)) return;
    wakeTimers.push(atMs);
    void sleep(Math.max(1, Math.round(inMs)), { summary }).then(() => {
      wakeTimers.splice(wakeTimers.indexOf(atMs), 1);
      const wake = st.wake;
      if (wake === undefined) return;
      if (wake.atMs > atMs) return armWake(wake.atMs, wake.atMs - atMs, wake.summary);
      st.wake = undefined;
      st.dirty = true;
      st.trigger = 'scheduled';
    });
  };
  // A schedule the previous run carried across continue-as-new: a timer for what is left of it (a step that fell
  // due meanwhile is taken at once).
  if (st.wake) {
    retryPending = true;
    armWake(st.wake.atMs, st.wake.atMs - now(), st.wake.summary);
  }

  for (;;) {
    await condition(() => st.dirty || resyncDue || idleDue);
    if (idleDue && !st.dirty && !resyncDue) {
      idleDue = false;
      const idleMs = st.options.idleSeconds * 1000;
      const rest = idleMs - (now() - quietSince);
      if (idleMs <= 0 || retryPending || !settled) continue;
      // Busy meanwhile: look again when it may have been quiet long enough.
      if (rest > 0) {
        armIdle(rest);
        continue;
      }
      await condition(allHandlersFinished);
      // A poke that landed meanwhile is acted on first (its pass arms the timer again); the server refuses to
      // complete a run with a signal it has not yet delivered, so no poke is ever lost to the end of a run.
      if (!st.dirty) return `${st.kind} ${st.namespace}/${st.name}: idle for ${st.options.idleSeconds} s, run ends (the next poke starts one)`;
      continue;
    }
    const trigger = st.dirty ? st.trigger : 'resync';
    if (resyncDue) {
      st.pendingFull = true;
      resyncDue = false;
      st.options = await currentOptions(input);
      armResync();
    }
    st.dirty = false;
    st.statusOnly = !st.pendingFull;
    st.pendingFull = false;
    st.inPass = true;
    st.pokesDuringPass = [];
    st.pokesDuringPassOverflow = false;
    const answering = st.announced;
    st.announced = {};
    beginPassObservations();
    const result = await reconcile(st);
    st.inPass = false;
    // Only the last pass's observations count: a source it did not read is news whatever it says. A pass that found
    // its object gone covers nothing: a poke that came meanwhile may announce the object created again.
    const { observed, applied, echoes, wrote, versions } = endPassObservations();
    st.observed = result.gone ? {} : result.statusOnly ? statusOnlyObservations(st.observed, observed, applied) : observed;
    st.echoes = result.gone ? {} : echoes;
    dropCoveredPokes(st);
    // The pokes this pass answered must have been read: one whose source the pass read at an older version, and whose
    // content it does not cover, was not acted on. It stays announced and the pass runs again — at once the first
    // time, then after 1, 2, 4 … 30 s while the reads stay behind — so no lag of a cache or a watch hides a change.
    const stale = result.gone ? [] : staleAnswers(st, answering, versions);
    for (const [source, poke] of Object.entries(st.announced)) if (covered(st, poke)) delete st.announced[source];
    for (const poke of stale) if (!st.announced[poke.source]) st.announced[poke.source] = poke;
    st.staleReads = stale.length > 0 ? st.staleReads + 1 : 0;
    let staleRetryIn: number | undefined;
    if (stale.length > 0) {
      const first = stale[0]!;
      log.info('read older than its poke: passing again', {
        kind: st.kind,
        namespace: st.namespace,
        name: st.name,
        source: first.source,
        poked: first.resourceVersion,
        read: versions[first.source],
        stale: stale.length,
      });
      if (st.staleReads === 1) {
        st.dirty = true;
        st.pendingFull = true;
        st.trigger = `read older than ${first.source}@${first.resourceVersion ?? ''}`;
      } else staleRetryIn = Math.min(30, 2 ** (st.staleReads - 2));
    }
    const retryInSeconds =
      result.retryInSeconds === undefined
        ? staleRetryIn
        : staleRetryIn === undefined
          ? result.retryInSeconds
          : Math.min(result.retryInSeconds, staleRetryIn);
    // A run the catch-up started whose first pass wrote nothing, found its object settled and nothing scheduled, and
    // heard no news meanwhile: nothing follows it that the idle minute would take cheaply, so it ends in this same
    // workflow task — no options read, no timer (ADR 0006, "Later"). Only runs whose input says so, so recorded
    // histories replay as they ran.
    if (
      input.catchUp === true &&
      st.reconcilesThisRun === 0 &&
      !result.gone &&
      !wrote &&
      !st.dirty &&
      (result.settled ?? true) &&
      retryInSeconds === undefined &&
      result.wake === undefined
    ) {
      await condition(allHandlersFinished);
      if (!st.dirty) {
        st.reconcilesThisRun += 1;
        st.totalReconciles += 1;
        log.info('reconciled', { kind: st.kind, namespace: st.namespace, name: st.name, trigger, summary: result.summary });
        return `${st.kind} ${st.namespace}/${st.name}: caught up: its first pass wrote nothing, run ends (the next poke starts one)`;
      }
    }
    // After the pass's observations are in: a poke that lands while the options are read is judged against them.
    if (!optionsRead) {
      optionsRead = true;
      st.options = await currentOptions(input);
      armResync();
    }
    if (result.facts) st.facts = { ...st.facts, ...result.facts };
    st.reconcilesThisRun += 1;
    st.totalReconciles += 1;
    quietSince = now();
    // A later pass decides afresh whether it needs a retry; the timer of an earlier one then does nothing.
    retryPending = retryInSeconds !== undefined || result.wake !== undefined;
    settled = result.settled ?? true;
    if (settled && !retryPending) ensureIdleTimer();
    st.lastReconcile = { at: new Date().toISOString(), trigger, summary: result.summary };
    log.info('reconciled', { kind: st.kind, namespace: st.namespace, name: st.name, trigger, summary: result.summary });

    if (result.gone) {
      await condition(allHandlersFinished);
      // A poke that landed meanwhile may be for a recreated object: look once more before completing.
      if (!st.dirty) return `${st.kind} ${st.namespace}/${st.name} is gone: ${result.summary}`;
      continue;
    }
    const selfObserved = st.observed[self];
    const uid = result.uid ?? (selfObserved !== undefined ? uidOfObservation(selfObserved) : undefined);
    if (uid && st.uid !== undefined && uid !== st.uid) {
      // Deleted and created again under the same name: forget what the old object told us, and pass again with
      // no stale facts (the pass just run may have skipped a step on the old object's account).
      st.facts = {};
      st.dirty = true;
      st.pendingFull = true;
      st.trigger = `recreated ${self}`;
    }
    if (uid) st.uid = uid;
    st.wake = result.wake ? { atMs: result.wake.atMs, summary: result.wake.summary } : undefined;
    // A pass already due next (the step's timer fired during this one, or news came) reports its own schedule: no
    // timer for this one's. Behind `patched`: a run recorded before armed one here, and replays as it did (ADR 0002).
    if (result.wake && !(st.dirty && patched('wake-left-to-the-next-pass'))) armWake(result.wake.atMs, result.wake.inMs, result.wake.summary);
    if (retryInSeconds !== undefined) {
      const due = st.totalReconciles;
      const why = retryInSeconds === staleRetryIn ? `read older than ${stale[0]?.source ?? ''}` : 'retry';
      void sleep(retryInSeconds * 1000).then(() => {
        // Only when no pass ran meanwhile: a later pass decides afresh whether it needs a retry.
        if (st.totalReconciles !== due) return;
        st.dirty = true;
        st.pendingFull = true;
        st.trigger = why;
      });
    }

    if (shouldContinueAsNew(st)) {
      await condition(allHandlersFinished);
      return continueAsNew<(i: EntityInput) => Promise<string>>({
        kind: st.kind,
        namespace: st.namespace,
        name: st.name,
        ...(input.options ? { options: input.options } : {}),
        carried: carry(st),
      });
    }
  }
}

/**
 * True when the last pass already acted on exactly the content this poke announces: what it observed, or the very
 * version one of its own applies or creates returned before it wrote the object again (a placeholder created and then
 * pointed at the load balancer: the first version's echo is no news). No `patched` is needed (ADR 0002): a run
 * recorded before has no echoes in its steps' results, so it replays as it ran.
 */
function covered(st: EntityState, poke: Poke): boolean {
  if (poke.reason === 'deleted') return false;
  return (
    observationCovers(st.observed[poke.source], poke.token) ||
    (st.echoes[poke.source] ?? []).some((e) => echoCovers(e, poke.resourceVersion, poke.token))
  );
}

/**
 * The pokes a pass answered (`answering`: heard before it began) that it did not act on: it read their source at a
 * version older than theirs (`versions`, what its steps report) and its observation does not cover their content.
 * A source the pass did not read is not judged here (nothing a pass again would read either).
 */
function staleAnswers(st: EntityState, answering: Readonly<Record<string, Poke>>, versions: Readonly<Record<string, string>>): Poke[] {
  return Object.values(answering).filter(
    (p) => versions[p.source] !== undefined && newerVersion(p.resourceVersion, versions[p.source]) && !covered(st, p),
  );
}

/** Keeps the newest poke of each source that announces content (a token at a resourceVersion) for the next pass. */
function announce(st: EntityState, poke: Poke): void {
  if (poke.reason === 'deleted' || poke.token === undefined || poke.resourceVersion === undefined) return;
  const before = st.announced[poke.source];
  if (before === undefined || !newerVersion(before.resourceVersion, poke.resourceVersion)) st.announced[poke.source] = poke;
}

function onPoke(st: EntityState, poke: Poke, traits: EntityTraits): void {
  st.pokesThisRun += 1;
  st.totalPokes += 1;
  // A sweep poke only exists to start a run that was gone; a running workflow resyncs on its own timer.
  if (poke.reason === 'resync' && poke.resourceVersion === undefined && poke.token === undefined) {
    st.ignoredPokes += 1;
    return;
  }
  if (!st.inPass && covered(st, poke)) {
    st.ignoredPokes += 1;
    return;
  }
  announce(st, poke);
  const statusKind = traits.statusKinds?.includes(poke.source.slice(0, poke.source.indexOf('/'))) ?? false;
  if (!statusKind && (poke.reason === 'deleted' || !statusOnlyChange(st.observed[poke.source], poke.token))) st.pendingFull = true;
  st.dirty = true;
  st.trigger = `${poke.reason} ${poke.source}`;
  if (!st.inPass) return;
  if (st.pokesDuringPass.length < MAX_POKES_KEPT_DURING_PASS) st.pokesDuringPass.push(poke);
  else st.pokesDuringPassOverflow = true;
}

/**
 * Clears the dirty flag when every poke that arrived during the pass announced content the pass itself acted on
 * (typically the echo of its own writes). Any other poke — a spec change, a deletion, a source the pass did not
 * read — keeps it set, so the loop passes again.
 */
function dropCoveredPokes(st: EntityState): void {
  if (!st.dirty || st.pokesDuringPassOverflow || st.pokesDuringPass.length === 0) return;
  if (st.pokesDuringPass.every((p) => covered(st, p))) {
    st.dirty = false;
    st.ignoredPokes += st.pokesDuringPass.length;
  }
  st.pokesDuringPass = [];
}

function shouldContinueAsNew(st: EntityState): boolean {
  return (
    workflowInfo().continueAsNewSuggested || st.reconcilesThisRun >= st.options.maxReconcilesPerRun || st.pokesThisRun >= st.options.maxPokesPerRun
  );
}

function carry(st: EntityState): CarriedState {
  return {
    ...(st.uid !== undefined ? { uid: st.uid } : {}),
    // A poke still to be read (a stale read's, its retry timer not fired) makes the next run's first pass, which
    // answers it.
    dirty: st.dirty || Object.keys(st.announced).length > 0,
    ...(Object.keys(st.announced).length > 0 ? { announced: st.announced } : {}),
    trigger: st.trigger,
    observed: st.observed,
    totalReconciles: st.totalReconciles,
    totalPokes: st.totalPokes,
    runs: st.runs,
    facts: st.facts,
    ...(st.lastReconcile ? { lastReconcile: st.lastReconcile } : {}),
    ...(st.wake ? { wake: st.wake } : {}),
  };
}
