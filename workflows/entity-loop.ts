// The entity loop's rules as a pure state machine (ADR 0001, 0006, 0007, 0013, 0015). The workflow
// (workflows/entity.ts) feeds `decide` what happens — a poke, a timer firing, a patch answered, options read, a pass's
// result, handlers finished — and performs what it asks for with Temporal's APIs: the timers in `effects`, the await
// `state.phase` names. No Temporal import and no clock: workflow time comes in with the events, so every rule runs
// in a unit test without a Temporal server.
//
// Pokes set a dirty flag and any number of them coalesce into one reconcile pass; a durable timer resyncs; the run
// continues-as-new before its history grows long; it completes once its object is gone, or once it has had nothing
// to do for a while (ADR 0006): the next poke starts a fresh run, so an object at rest costs no running workflow.
//
// No lost updates: a poke is ignored only when its content token equals what the last pass observed of that source
// (api/content-token.ts). A status write can therefore never hide a spec change: the spec part of the token differs.
import { echoCovers, newerVersion, observationCovers, statusOnlyChange, statusOnlyObservations, uidOfObservation } from '../api/content-token.js';
import { entityWorkflowId, type Poke } from '../api/entity.js';
import type { EntityOptionsRead } from '../activities/options.js';
import {
  defaultEntityOptions,
  type CarriedState,
  type EntityInput,
  type EntityOptions,
  type EntityState,
  type EntityTraits,
  type PassObservations,
  type PassResult,
} from './entity-state.js';

/** A durable timer the loop asks for; the workflow hands it back in `timerFired`. */
export type LoopTimer =
  /** One per resync period, re-armed when it fires: a pass does not restart it, so a poked pass costs no timer. */
  | { kind: 'resync' }
  /** One at a time, never cancelled: when it fires the loop looks at how long it has been quiet. */
  | { kind: 'idle' }
  /** A scheduled pass (`PassResult.wake`), named after what it waits for. */
  | { kind: 'wake'; atMs: number; summary: string }
  /**
   * A retry or a stale read's next look: acts only when no pass ran since it was armed; after a failed pass
   * (`afterFailures`), only when no pass has failed since either.
   */
  | { kind: 'retry'; afterReconciles: number; afterFailures?: number; trigger: string };

/** The patches (`patched()`) the loop asks about: each changed the commands of runs recorded before it (ADR 0002). */
export type LoopPatch = 'options-after-first-pass' | 'wake-left-to-the-next-pass';

/** A pass the loop has run and not yet finished with: it waits for a patch, the options or the handlers first. */
export interface PassTaken {
  trigger: string;
  result: PassResult;
  retryInSeconds?: number;
  /** The trigger of the retry timer's pass. */
  retryTrigger: string;
}

/** What the workflow does next. Each phase but the last two is one await (or one `patched`) of the workflow. */
export type LoopPhase =
  /** Ask `patched(patch)` and report it (`patched`). */
  | { kind: 'patch'; patch: 'options-after-first-pass' }
  | { kind: 'patch'; patch: 'wake-left-to-the-next-pass'; pass: PassTaken }
  /** Read the worker's options (`optionsRead`): at the start, at a resync before its pass, after the first pass. */
  | { kind: 'options'; then: 'start' }
  | { kind: 'options'; then: 'resync'; trigger: string }
  | { kind: 'options'; then: 'finish'; pass: PassTaken }
  /** Wait until `wantsToAct` (`woken`). */
  | { kind: 'wait' }
  /** Run a pass (`passed`). */
  | { kind: 'pass'; trigger: string; answering: Record<string, Poke> }
  /** Wait until every signal handler has finished (`handlersFinished`), then end unless a poke came meanwhile. */
  | { kind: 'drain'; then: 'idle' }
  | { kind: 'drain'; then: 'continueAsNew' }
  | { kind: 'drain'; then: 'gone'; summary: string }
  | { kind: 'drain'; then: 'caughtUp'; pass: PassTaken }
  /** Complete the workflow with this result. */
  | { kind: 'end'; result: string }
  /** Continue as new with this input. */
  | { kind: 'continueAsNew'; input: EntityInput };

/** The whole loop: what passes and queries see, the timers' bookkeeping and what the workflow does next. */
export interface LoopState extends EntityState {
  phase: LoopPhase;
  /** What stays the same for the whole run. */
  run: { catchUp: boolean; options?: Partial<EntityOptions>; statusKinds: readonly string[] };
  /** The options of this run have been read (before the first pass for runs recorded before that patch). */
  optionsRead: boolean;
  resyncDue: boolean;
  idleDue: boolean;
  idleArmed: boolean;
  /** Workflow time of the last pass's end (or the run's start). */
  quietSinceMs: number;
  /** A retry or a scheduled pass is pending: the run does not end idle, and arms no idle timer. */
  retryPending: boolean;
  /** The last pass found its object settled (`PassResult.settled`). */
  settled: boolean;
  /** The due times of the wake timers armed and not fired yet. */
  wakeTimers: number[];
}

/** What the workflow knows each time it resumes: workflow time and the server's suggestion to continue-as-new. */
export interface Resumed {
  nowMs: number;
  continueAsNewSuggested: boolean;
}

export type LoopEvent =
  | { type: 'poke'; poke: Poke }
  | {
      type: 'timerFired';
      timer: LoopTimer;
      nowMs: number;
      /**
       * Whether a wake timer that fired after the rest of its moved schedule fell due passes at once (`patched`, ADR
       * 0022): asked only then, since runs of earlier releases armed one more timer for it.
       */
      lateWakePassesNow: () => boolean;
    }
  | ({ type: 'patched'; inForce: boolean } & Resumed)
  | ({ type: 'optionsRead'; read: EntityOptionsRead | undefined } & Resumed)
  | ({ type: 'woken' } & Resumed)
  | ({ type: 'passed'; result: PassResult; observations: PassObservations } & Resumed)
  /** The pass threw: one of its steps still failed after its attempts (`message`: why). */
  | ({ type: 'passFailed'; message: string } & Resumed)
  | ({ type: 'handlersFinished' } & Resumed);

export type LoopEffect = { type: 'armTimer'; timer: LoopTimer; ms: number } | { type: 'log'; message: string; fields: Record<string, unknown> };

export interface Decision {
  state: LoopState;
  effects: LoopEffect[];
}

const MAX_POKES_KEPT_DURING_PASS = 100;

/** A run's state before anything happened: carried over continue-as-new, or fresh (which always passes once). */
export function startLoop(input: EntityInput, traits: EntityTraits, nowMs: number): LoopState {
  const { observed = {}, announced = {}, ...carried } = input.carried ?? ({} as Partial<CarriedState>);
  const st: LoopState = {
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
    failedPasses: carried.failedPasses ?? 0,
    // The first pass needs none of the options (they time what comes after a pass): a fresh run passes at once and
    // reads them after, so its object is not kept waiting for another local step. Runs recorded before read them first.
    phase: input.options === undefined ? { kind: 'patch', patch: 'options-after-first-pass' } : { kind: 'options', then: 'start' },
    run: { catchUp: input.catchUp === true, ...(input.options ? { options: input.options } : {}), statusKinds: traits.statusKinds ?? [] },
    optionsRead: input.options !== undefined,
    resyncDue: false,
    idleDue: false,
    idleArmed: false,
    quietSinceMs: nowMs,
    retryPending: false,
    settled: true,
    wakeTimers: [],
  };
  st.runs += 1;
  return st;
}

/** The condition the waiting loop wakes on: news, a resync or the idle timer. */
export function wantsToAct(st: Readonly<LoopState>): boolean {
  return st.dirty || st.resyncDue || st.idleDue;
}

/** The loop's one transition: the state after `event`, and the timers and logs it asks for. Never mutates `state`. */
export function decide(state: Readonly<LoopState>, event: LoopEvent): Decision {
  const st = draft(state);
  const effects: LoopEffect[] = [];
  switch (event.type) {
    case 'poke':
      heard(st, event.poke);
      break;
    case 'timerFired':
      fired(st, event.timer, event.nowMs, event.lateWakePassesNow, effects);
      break;
    default:
      resume(st, event, effects);
  }
  return { state: st, effects };
}

/** A copy whose collections may be changed in place. */
function draft(state: Readonly<LoopState>): LoopState {
  return { ...state, announced: { ...state.announced }, pokesDuringPass: [...state.pokesDuringPass], wakeTimers: [...state.wakeTimers] };
}

function resume(st: LoopState, event: Exclude<LoopEvent, { type: 'poke' | 'timerFired' }>, effects: LoopEffect[]): void {
  const phase = st.phase;
  if (event.type === 'patched' && phase.kind === 'patch') {
    if (phase.patch === 'options-after-first-pass') {
      st.optionsRead = !event.inForce;
      if (st.optionsRead) st.phase = { kind: 'options', then: 'start' };
      else started(st, event, effects);
    } else {
      // A pass already due next (the step's timer fired during this one, or news came) reports its own schedule: no
      // timer for this one's. A run recorded before armed one here, and replays as it did (ADR 0002).
      const wake = phase.pass.result.wake;
      if (!event.inForce && wake) armWake(st, wake.atMs, wake.inMs, wake.summary, effects);
      afterWake(st, phase.pass, event, effects);
    }
  } else if (event.type === 'optionsRead' && phase.kind === 'options') {
    st.options = optionsOf(st.run.options, event.read);
    armTimer({ kind: 'resync' }, st.options.resyncSeconds * 1000, effects);
    if (phase.then === 'start') started(st, event, effects);
    else if (phase.then === 'resync') beginPass(st, phase.trigger);
    else finishPass(st, phase.pass, event, effects);
  } else if (event.type === 'woken' && phase.kind === 'wait') {
    woken(st, event, effects);
  } else if (event.type === 'passed' && phase.kind === 'pass') {
    passed(st, phase, event, effects);
  } else if (event.type === 'passFailed' && phase.kind === 'pass') {
    passFailed(st, phase, event, effects);
  } else if (event.type === 'handlersFinished' && phase.kind === 'drain') {
    drained(st, phase, event, effects);
  } else {
    throw new Error(`entity loop: ${event.type} in phase ${phase.kind}`);
  }
}

/** The worker's options, or the fixed ones of the input. */
function optionsOf(fixed: Partial<EntityOptions> | undefined, read: EntityOptionsRead | undefined): EntityOptions {
  if (fixed) return { ...defaultEntityOptions, ...fixed };
  return {
    ...defaultEntityOptions,
    ...(read?.resyncSeconds !== undefined ? { resyncSeconds: read.resyncSeconds } : {}),
    ...(read?.idleSeconds !== undefined ? { idleSeconds: read.idleSeconds } : {}),
  };
}

/** The run's timers are armed (the resync one already, when the options were read): the loop waits for news. */
function started(st: LoopState, now: Resumed, effects: LoopEffect[]): void {
  st.quietSinceMs = now.nowMs;
  if (st.optionsRead) ensureIdleTimer(st, effects);
  // A schedule the previous run carried across continue-as-new: a timer for what is left of it (a step that fell
  // due meanwhile is taken at once).
  if (st.wake) {
    st.retryPending = true;
    armWake(st, st.wake.atMs, st.wake.atMs - now.nowMs, st.wake.summary, effects);
  }
  st.phase = { kind: 'wait' };
}

function woken(st: LoopState, now: Resumed, effects: LoopEffect[]): void {
  if (st.idleDue && !st.dirty && !st.resyncDue) {
    st.idleDue = false;
    const idleMs = st.options.idleSeconds * 1000;
    const rest = idleMs - (now.nowMs - st.quietSinceMs);
    if (idleMs <= 0 || st.retryPending || !st.settled) return;
    // Busy meanwhile: look again when it may have been quiet long enough.
    if (rest > 0) return armIdle(st, rest, effects);
    // A poke that lands meanwhile is acted on first (its pass arms the timer again); the server refuses to complete a
    // run with a signal it has not yet delivered, so no poke is ever lost to the end of a run.
    st.phase = { kind: 'drain', then: 'idle' };
    return;
  }
  const trigger = st.dirty ? st.trigger : 'resync';
  if (st.resyncDue) {
    st.pendingFull = true;
    st.resyncDue = false;
    st.phase = { kind: 'options', then: 'resync', trigger };
    return;
  }
  beginPass(st, trigger);
}

function beginPass(st: LoopState, trigger: string): void {
  st.dirty = false;
  st.statusOnly = !st.pendingFull;
  st.pendingFull = false;
  st.inPass = true;
  st.pokesDuringPass = [];
  st.pokesDuringPassOverflow = false;
  const answering = st.announced;
  st.announced = {};
  st.phase = { kind: 'pass', trigger, answering };
}

function passed(
  st: LoopState,
  pass: Extract<LoopPhase, { kind: 'pass' }>,
  event: Extract<LoopEvent, { type: 'passed' }>,
  effects: LoopEffect[],
): void {
  const { result } = event;
  const { observed, applied, echoes, wrote, versions } = event.observations;
  st.inPass = false;
  st.failedPasses = 0;
  // Only the last pass's observations count: a source it did not read is news whatever it says. A pass that found
  // its object gone covers nothing: a poke that came meanwhile may announce the object created again.
  st.observed = result.gone ? {} : result.statusOnly ? statusOnlyObservations(st.observed, observed, applied) : observed;
  st.echoes = result.gone ? {} : echoes;
  dropCoveredPokes(st);
  // The pokes this pass answered must have been read: one whose source the pass read at an older version, and whose
  // content it does not cover, was not acted on. It stays announced and the pass runs again — at once the first
  // time, then after 1, 2, 4 … 30 s while the reads stay behind — so no lag of a cache or a watch hides a change.
  const stale = result.gone ? [] : staleAnswers(st, pass.answering, versions);
  for (const [source, poke] of Object.entries(st.announced)) if (covered(st, poke)) delete st.announced[source];
  for (const poke of stale) if (!st.announced[poke.source]) st.announced[poke.source] = poke;
  st.staleReads = stale.length > 0 ? st.staleReads + 1 : 0;
  let staleRetryIn: number | undefined;
  if (stale.length > 0) {
    const first = stale[0]!;
    effects.push({
      type: 'log',
      message: 'read older than its poke: passing again',
      fields: {
        kind: st.kind,
        namespace: st.namespace,
        name: st.name,
        source: first.source,
        poked: first.resourceVersion,
        read: versions[first.source],
        stale: stale.length,
      },
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
  const taken: PassTaken = {
    trigger: pass.trigger,
    result,
    ...(retryInSeconds !== undefined ? { retryInSeconds } : {}),
    retryTrigger: retryInSeconds !== undefined && retryInSeconds === staleRetryIn ? `read older than ${stale[0]?.source ?? ''}` : 'retry',
  };
  // A run the catch-up started whose first pass wrote nothing, found its object settled and nothing scheduled, and
  // heard no news meanwhile: nothing follows it that the idle minute would take cheaply, so it ends in this same
  // workflow task — no options read, no timer (ADR 0006, "Later"). Only runs whose input says so, so recorded
  // histories replay as they ran.
  if (
    st.run.catchUp &&
    st.reconcilesThisRun === 0 &&
    !result.gone &&
    !wrote &&
    !st.dirty &&
    (result.settled ?? true) &&
    retryInSeconds === undefined &&
    result.wake === undefined
  ) {
    st.phase = { kind: 'drain', then: 'caughtUp', pass: taken };
    return;
  }
  afterCatchUp(st, taken, event, effects);
}

/** The longest a failed pass waits for its retry when no news comes (a step's own attempts used to back off as far). */
const MAX_FAILED_PASS_BACKOFF_SECONDS = 60;

/**
 * A pass threw: a step still failed after its attempts (the API server away, a write refused). Like a Knative
 * reconcile that returns an error, the object is looked at again after a backoff (4, 8, 16 … 60 s) — or at once when
 * news comes, so a change made as the API server comes back is not kept waiting behind the backoff of a pass that
 * failed while it was away. The pokes the pass answered stay announced for the next one; what the last pass that
 * ended observed still stands (the failed one's writes were handed back, their echoes are news: ADR 0015).
 */
function passFailed(
  st: LoopState,
  pass: Extract<LoopPhase, { kind: 'pass' }>,
  event: Extract<LoopEvent, { type: 'passFailed' }>,
  effects: LoopEffect[],
): void {
  st.inPass = false;
  for (const poke of Object.values(pass.answering)) announce(st, poke);
  // Pokes heard during the pass left it dirty: news, passed at once.
  st.pokesDuringPass = [];
  st.pokesDuringPassOverflow = false;
  st.pendingFull = true;
  st.failedPasses += 1;
  st.lastFailure = { at: new Date(event.nowMs).toISOString(), message: event.message };
  st.retryPending = true;
  const retryInSeconds = Math.min(MAX_FAILED_PASS_BACKOFF_SECONDS, 2 ** (st.failedPasses + 1));
  effects.push({
    type: 'log',
    message: 'pass failed: passing again after a backoff, or at the next news',
    fields: {
      kind: st.kind,
      namespace: st.namespace,
      name: st.name,
      trigger: pass.trigger,
      error: event.message,
      failedPasses: st.failedPasses,
      retryInSeconds,
    },
  });
  armTimer(
    { kind: 'retry', afterReconciles: st.totalReconciles, afterFailures: st.failedPasses, trigger: `retry after a failed pass (${event.message})` },
    retryInSeconds * 1000,
    effects,
  );
  st.phase = event.continueAsNewSuggested ? { kind: 'drain', then: 'continueAsNew' } : { kind: 'wait' };
}

function afterCatchUp(st: LoopState, pass: PassTaken, now: Resumed, effects: LoopEffect[]): void {
  // After the pass's observations are in: a poke that lands while the options are read is judged against them.
  if (!st.optionsRead) {
    st.optionsRead = true;
    st.phase = { kind: 'options', then: 'finish', pass };
    return;
  }
  finishPass(st, pass, now, effects);
}

function finishPass(st: LoopState, pass: PassTaken, now: Resumed, effects: LoopEffect[]): void {
  const { result, trigger, retryInSeconds } = pass;
  if (result.facts) st.facts = { ...st.facts, ...result.facts };
  st.reconcilesThisRun += 1;
  st.totalReconciles += 1;
  st.quietSinceMs = now.nowMs;
  // A later pass decides afresh whether it needs a retry; the timer of an earlier one then does nothing.
  st.retryPending = retryInSeconds !== undefined || result.wake !== undefined;
  st.settled = result.settled ?? true;
  // While the run cannot end (its object is not settled, a retry is pending) no idle timer runs: the pass that makes
  // it endable arms one.
  if (st.settled && !st.retryPending) ensureIdleTimer(st, effects);
  st.lastReconcile = { at: new Date(now.nowMs).toISOString(), trigger, summary: result.summary };
  effects.push(reconciledLog(st, trigger, result.summary));

  if (result.gone) {
    // A poke that lands meanwhile may be for a recreated object: look once more before completing.
    st.phase = { kind: 'drain', then: 'gone', summary: result.summary };
    return;
  }
  const self = entityWorkflowId(st.kind, { namespace: st.namespace, name: st.name });
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
  if (result.wake) {
    // A pass already due next leaves the schedule to that pass, behind `patched` (runs recorded before armed one).
    if (st.dirty) {
      st.phase = { kind: 'patch', patch: 'wake-left-to-the-next-pass', pass };
      return;
    }
    armWake(st, result.wake.atMs, result.wake.inMs, result.wake.summary, effects);
  }
  afterWake(st, pass, now, effects);
}

function afterWake(st: LoopState, pass: PassTaken, now: Resumed, effects: LoopEffect[]): void {
  if (pass.retryInSeconds !== undefined) {
    armTimer({ kind: 'retry', afterReconciles: st.totalReconciles, trigger: pass.retryTrigger }, pass.retryInSeconds * 1000, effects);
  }
  const continueAsNew =
    now.continueAsNewSuggested || st.reconcilesThisRun >= st.options.maxReconcilesPerRun || st.pokesThisRun >= st.options.maxPokesPerRun;
  st.phase = continueAsNew ? { kind: 'drain', then: 'continueAsNew' } : { kind: 'wait' };
}

function drained(st: LoopState, phase: Extract<LoopPhase, { kind: 'drain' }>, now: Resumed, effects: LoopEffect[]): void {
  const who = `${st.kind} ${st.namespace}/${st.name}`;
  if (phase.then === 'continueAsNew') {
    st.phase = {
      kind: 'continueAsNew',
      input: { kind: st.kind, namespace: st.namespace, name: st.name, ...(st.run.options ? { options: st.run.options } : {}), carried: carry(st) },
    };
  } else if (st.dirty) {
    // A poke landed while the handlers finished: act on it instead of ending.
    if (phase.then === 'caughtUp') afterCatchUp(st, phase.pass, now, effects);
    else st.phase = { kind: 'wait' };
  } else if (phase.then === 'idle') {
    st.phase = { kind: 'end', result: `${who}: idle for ${st.options.idleSeconds} s, run ends (the next poke starts one)` };
  } else if (phase.then === 'gone') {
    st.phase = { kind: 'end', result: `${who} is gone: ${phase.summary}` };
  } else {
    st.reconcilesThisRun += 1;
    st.totalReconciles += 1;
    effects.push(reconciledLog(st, phase.pass.trigger, phase.pass.result.summary));
    st.phase = { kind: 'end', result: `${who}: caught up: its first pass wrote nothing, run ends (the next poke starts one)` };
  }
}

function reconciledLog(st: LoopState, trigger: string, summary: string): LoopEffect {
  return { type: 'log', message: 'reconciled', fields: { kind: st.kind, namespace: st.namespace, name: st.name, trigger, summary } };
}

function fired(st: LoopState, timer: LoopTimer, nowMs: number, lateWakePassesNow: () => boolean, effects: LoopEffect[]): void {
  switch (timer.kind) {
    case 'resync':
      // Re-armed when the resync's pass has read the options.
      st.resyncDue = true;
      return;
    case 'idle':
      st.idleArmed = false;
      st.idleDue = true;
      return;
    case 'wake': {
      // Not full: the schedule is not news (a Service's status-only pass programs its Route), unless news came too. A
      // timer that fires before the schedule (it moved later) arms one for the rest, counted from now: a timer fires
      // late when the task that armed it ran a long pass first, and the rest counted from its own due time would be
      // late by as much; when the rest is due already, the pass runs now. One that finds nothing scheduled does nothing.
      st.wakeTimers.splice(st.wakeTimers.indexOf(timer.atMs), 1);
      const wake = st.wake;
      if (wake === undefined) return;
      if (wake.atMs > timer.atMs) {
        if (wake.atMs > nowMs) return armWake(st, wake.atMs, wake.atMs - nowMs, wake.summary, effects);
        if (!lateWakePassesNow()) return armWake(st, wake.atMs, wake.atMs - timer.atMs, wake.summary, effects);
      }
      st.wake = undefined;
      st.dirty = true;
      st.trigger = 'scheduled';
      return;
    }
    case 'retry':
      // Only when no pass ran meanwhile: a later pass decides afresh whether it needs a retry.
      if (st.totalReconciles !== timer.afterReconciles) return;
      if (timer.afterFailures !== undefined && timer.afterFailures !== st.failedPasses) return;
      st.dirty = true;
      st.pendingFull = true;
      st.trigger = timer.trigger;
  }
}

function armTimer(timer: LoopTimer, ms: number, effects: LoopEffect[]): void {
  effects.push({ type: 'armTimer', timer, ms });
}

function armIdle(st: LoopState, ms: number, effects: LoopEffect[]): void {
  st.idleArmed = true;
  armTimer({ kind: 'idle' }, ms, effects);
}

function ensureIdleTimer(st: LoopState, effects: LoopEffect[]): void {
  if (st.options.idleSeconds > 0 && !st.idleArmed && !st.idleDue) armIdle(st, st.options.idleSeconds * 1000, effects);
}

/**
 * One wake timer per due time: a pass that reports a time a pending timer already covers (due no later) arms none —
 * Temporal fired the second of two timers of one workflow due together about a second late (bench:rollout).
 */
function armWake(st: LoopState, atMs: number, inMs: number, summary: string, effects: LoopEffect[]): void {
  if (st.wakeTimers.some((t) => t <= atMs)) return;
  st.wakeTimers.push(atMs);
  armTimer({ kind: 'wake', atMs, summary }, Math.max(1, Math.round(inMs)), effects);
}

/**
 * True when the last pass already acted on exactly the content this poke announces: what it observed, or the very
 * version one of its own applies or creates returned before it wrote the object again (a placeholder created and then
 * pointed at the load balancer: the first version's echo is no news). No `patched` is needed (ADR 0002): a run
 * recorded before has no echoes in its steps' results, so it replays as it ran.
 */
export function covered(st: Readonly<EntityState>, poke: Poke): boolean {
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
function announce(st: LoopState, poke: Poke): void {
  if (poke.reason === 'deleted' || poke.token === undefined || poke.resourceVersion === undefined) return;
  const before = st.announced[poke.source];
  if (before === undefined || !newerVersion(before.resourceVersion, poke.resourceVersion)) st.announced[poke.source] = poke;
}

function heard(st: LoopState, poke: Poke): void {
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
  const statusKind = st.run.statusKinds.includes(poke.source.slice(0, poke.source.indexOf('/')));
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
function dropCoveredPokes(st: LoopState): void {
  if (!st.dirty || st.pokesDuringPassOverflow || st.pokesDuringPass.length === 0) return;
  if (st.pokesDuringPass.every((p) => covered(st, p))) {
    st.dirty = false;
    st.ignoredPokes += st.pokesDuringPass.length;
  }
  st.pokesDuringPass = [];
}

/** What crosses continue-as-new: what the last pass observed, the facts, a schedule and the pokes no pass has read. */
export function carry(st: Readonly<EntityState>): CarriedState {
  return {
    ...(st.uid !== undefined ? { uid: st.uid } : {}),
    // A poke still to be read (a stale read's, its retry timer not fired), or a pass that failed, makes the next run's
    // first pass, which answers it.
    dirty: st.dirty || Object.keys(st.announced).length > 0 || st.failedPasses > 0,
    ...(Object.keys(st.announced).length > 0 ? { announced: st.announced } : {}),
    trigger: st.trigger,
    observed: st.observed,
    totalReconciles: st.totalReconciles,
    totalPokes: st.totalPokes,
    runs: st.runs,
    facts: st.facts,
    ...(st.lastReconcile ? { lastReconcile: st.lastReconcile } : {}),
    ...(st.wake ? { wake: st.wake } : {}),
    ...(st.failedPasses > 0 ? { failedPasses: st.failedPasses } : {}),
  };
}
