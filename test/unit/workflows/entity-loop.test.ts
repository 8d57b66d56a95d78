// The entity loop's rules (workflows/entity-loop.ts), driven without Temporal: `Shell` plays the workflow — it answers
// patches, reads options, fires timers on a clock of its own and hands each pass the result a test gives it — so every
// rule of ADR 0001, 0006, 0007, 0013 and 0015 and the interleavings that could lose a change run without a Temporal
// server.
import { describe, expect, it } from 'vitest';
import type { Poke } from '../../../api/entity.js';
import {
  decide,
  startLoop,
  wantsToAct,
  type LoopEffect,
  type LoopEvent,
  type LoopPatch,
  type LoopState,
  type LoopTimer,
} from '../../../workflows/entity-loop.js';
import type { EntityInput, EntityTraits, PassObservations, PassResult } from '../../../workflows/entity-state.js';

const SELF = 'Route/default/r';
const CHILD = 'Ingress/default/r';
/** An observation `<uid> <spec> <status>`, and the tokens the watcher sends for that content (api/content-token.ts). */
const obs = (spec: string, status = 'T0', uid = 'u1') => `${uid} ${spec} ${status}`;
const selfPoke = (spec: string, resourceVersion: string, reason: Poke['reason'] = 'updated'): Poke => ({
  source: SELF,
  reason,
  resourceVersion,
  token: `s.${spec}`,
});
const childPoke = (spec: string, status: string, resourceVersion = '50'): Poke => ({
  source: CHILD,
  reason: 'updated',
  resourceVersion,
  token: `d.${spec}.${status}`,
});
const seen = (observed: Record<string, string>, more: Partial<PassObservations> = {}): PassObservations => ({
  observed,
  applied: new Set(),
  echoes: {},
  wrote: true,
  versions: {},
  ...more,
});
/** What a first pass sees by default: the Route at spec S1 and its Ingress at C1/T0. */
const firstSight = () => seen({ [SELF]: obs('S1'), [CHILD]: obs('C1', 'T0', 'i1') });
const done = (more: Partial<PassResult> = {}): PassResult => ({ gone: false, summary: 'ok', ...more });

type PhaseKind = LoopState['phase']['kind'];

interface Armed {
  timer: LoopTimer;
  ms: number;
  atMs: number;
}

interface ShellOptions {
  traits?: EntityTraits;
  /** How `patched()` answers: true on a new run, false replaying a history recorded before the patch. */
  patches?: Partial<Record<LoopPatch, boolean>>;
  workerOptions?: { resyncSeconds?: number; idleSeconds?: number };
  nowMs?: number;
}

/** Plays the workflow around the state machine: each method is what runEntity does at that point. */
class Shell {
  nowMs: number;
  state: LoopState;
  /** Every timer armed, in order; `pending`: those not fired yet. */
  armed: Armed[] = [];
  pending: Armed[] = [];
  logs: string[] = [];
  optionsReads = 0;
  patches: Record<LoopPatch, boolean>;
  workerOptions: { resyncSeconds?: number; idleSeconds?: number };
  continueAsNewSuggested = false;
  /** Every `patched()` asked, in order. */
  asked: LoopPatch[] = [];
  /** `patched('late-wake-passes-now')` as the timer callback answers it, and how often it was asked. */
  latePatch = true;
  lateAsked = 0;

  constructor(input: Partial<EntityInput> = {}, options: ShellOptions = {}) {
    this.nowMs = options.nowMs ?? 1_000_000;
    this.patches = { 'options-after-first-pass': true, 'wake-left-to-the-next-pass': true, ...options.patches };
    this.workerOptions = options.workerOptions ?? { resyncSeconds: 600, idleSeconds: 60 };
    this.state = startLoop({ kind: 'Route', namespace: 'default', name: 'r', ...input }, options.traits ?? {}, this.nowMs);
    for (const poke of input.pokes ?? []) this.poke(poke);
    this.settle();
  }

  feed(event: LoopEvent): void {
    const { state, effects } = decide(this.state, event);
    this.state = state;
    for (const effect of effects) this.perform(effect);
  }

  private perform(effect: LoopEffect): void {
    if (effect.type === 'log') {
      this.logs.push(effect.message);
      return;
    }
    const armed = { timer: effect.timer, ms: effect.ms, atMs: this.nowMs + effect.ms };
    this.armed.push(armed);
    this.pending.push(armed);
  }

  private resumed() {
    return { nowMs: this.nowMs, continueAsNewSuggested: this.continueAsNewSuggested };
  }

  /** Runs what needs neither a pass nor time: patches, options, handlers (finished at once here), waking on news. */
  settle(): PhaseKind {
    for (;;) {
      const phase = this.state.phase;
      if (phase.kind === 'patch') {
        this.asked.push(phase.patch);
        this.feed({ type: 'patched', inForce: this.patches[phase.patch], ...this.resumed() });
      } else if (phase.kind === 'options') {
        this.optionsReads += 1;
        this.feed({ type: 'optionsRead', read: this.state.run.options ? undefined : this.workerOptions, ...this.resumed() });
      } else if (phase.kind === 'drain') this.feed({ type: 'handlersFinished', ...this.resumed() });
      else if (phase.kind === 'wait' && wantsToAct(this.state)) this.feed({ type: 'woken', ...this.resumed() });
      else return phase.kind;
    }
  }

  /** The pass under way ends with this result; the loop goes on to its next wait, pass or end. */
  pass(result: PassResult = done(), observations: PassObservations = firstSight()): PhaseKind {
    expect(this.state.phase.kind).toBe('pass');
    this.feed({ type: 'passed', result, observations, ...this.resumed() });
    return this.settle();
  }

  /** The pass under way throws: a step still failed after its attempts. */
  fail(message = 'reconcileRoute: connect ECONNREFUSED 127.0.0.1:6443'): PhaseKind {
    expect(this.state.phase.kind).toBe('pass');
    this.feed({ type: 'passFailed', message, ...this.resumed() });
    return this.settle();
  }

  poke(...pokes: Poke[]): PhaseKind {
    for (const poke of pokes) this.feed({ type: 'poke', poke });
    return this.state.inPass ? 'pass' : this.settle();
  }

  /** Workflow time moves on by `ms`, firing every timer due meanwhile in order; stops early when a pass starts. */
  advance(ms: number): PhaseKind {
    const until = this.nowMs + ms;
    for (;;) {
      const next = [...this.pending].sort((a, b) => a.atMs - b.atMs)[0];
      if (!next || next.atMs > until) break;
      this.pending.splice(this.pending.indexOf(next), 1);
      this.nowMs = next.atMs;
      this.feed({ type: 'timerFired', timer: next.timer, nowMs: this.nowMs, lateWakePassesNow: () => (this.lateAsked++, this.latePatch) });
      if (this.settle() !== 'wait') return this.state.phase.kind;
    }
    this.nowMs = until;
    return this.settle();
  }

  timers(kind: LoopTimer['kind']): Armed[] {
    return this.armed.filter((a) => a.timer.kind === kind);
  }

  get trigger(): string | undefined {
    return this.state.phase.kind === 'pass' ? this.state.phase.trigger : undefined;
  }

  get result(): string | undefined {
    return this.state.phase.kind === 'end' ? this.state.phase.result : undefined;
  }
}

/** A fresh run after its first pass (the Route at S1, its Ingress at C1/T0), waiting. */
function settledRun(input: Partial<EntityInput> = {}, options: ShellOptions = {}): Shell {
  const shell = new Shell(input, options);
  expect(shell.pass()).toBe('wait');
  return shell;
}

describe('entity loop: a run starts', () => {
  it('a fresh run passes at once, in full, and reads its options only after that pass', () => {
    const shell = new Shell();
    expect(shell.state.phase).toMatchObject({ kind: 'pass', trigger: 'start' });
    expect(shell.state).toMatchObject({ statusOnly: false, inPass: true, runs: 1 });
    expect(shell.asked).toEqual(['options-after-first-pass']);
    expect(shell.optionsReads).toBe(0);
    expect(shell.pass()).toBe('wait');
    expect(shell.optionsReads).toBe(1);
    expect(shell.state.options).toMatchObject({ resyncSeconds: 600, idleSeconds: 60 });
    expect(shell.armed.map((a) => [a.timer.kind, a.ms])).toEqual([
      ['resync', 600_000],
      ['idle', 60_000],
    ]);
  });

  it('a run recorded before options-after-first-pass reads them and arms its timers before its first pass', () => {
    const shell = new Shell({}, { patches: { 'options-after-first-pass': false } });
    expect(shell.optionsReads).toBe(1);
    expect(shell.armed.map((a) => a.timer.kind)).toEqual(['resync', 'idle']);
    expect(shell.state.phase.kind).toBe('pass');
    shell.pass();
    expect(shell.optionsReads).toBe(1);
  });

  it('fixed options (tests) are taken as given, asked of no patch and read from no worker', () => {
    const shell = new Shell({ options: { idleSeconds: 1, resyncSeconds: 5 } });
    expect(shell.asked).toEqual([]);
    expect(shell.state.options).toMatchObject({ idleSeconds: 1, resyncSeconds: 5, maxReconcilesPerRun: 200 });
    expect(shell.armed.map((a) => [a.timer.kind, a.ms])).toEqual([
      ['resync', 5000],
      ['idle', 1000],
    ]);
    expect(shell.state.phase.kind).toBe('pass');
  });

  it('the pokes a run was started with are acted on as if signalled: the first pass names them', () => {
    const shell = new Shell({ pokes: [selfPoke('S1', '5', 'added')] });
    expect(shell.trigger).toBe(`added ${SELF}`);
    expect(shell.state.totalPokes).toBe(1);
  });
});

describe('entity loop: which pokes are news (ADR 0001)', () => {
  it('a poke whose content the last pass observed is dropped', () => {
    const shell = settledRun();
    expect(shell.poke(selfPoke('S1', '7'))).toBe('wait');
    expect(shell.state).toMatchObject({ dirty: false, ignoredPokes: 1, pokesThisRun: 1 });
  });

  it('a poke whose content the last pass did not observe is a reason to pass, in full', () => {
    const shell = settledRun();
    expect(shell.poke(selfPoke('S2', '7'))).toBe('pass');
    expect(shell.trigger).toBe(`updated ${SELF}`);
    expect(shell.state.statusOnly).toBe(false);
    expect(shell.state.ignoredPokes).toBe(0);
  });

  it('a dependency whose status alone changed makes a status-only pass', () => {
    const shell = settledRun();
    expect(shell.poke(childPoke('C1', 'T1'))).toBe('pass');
    expect(shell.state.statusOnly).toBe(true);
  });

  it('a dependency whose spec changed makes a full pass', () => {
    const shell = settledRun();
    shell.poke(childPoke('C2', 'T0'));
    expect(shell.state.statusOnly).toBe(false);
  });

  it('a deletion is always news, even of content the last pass observed', () => {
    const shell = settledRun();
    expect(shell.poke({ ...selfPoke('S1', '8'), reason: 'deleted' })).toBe('pass');
    expect(shell.state.statusOnly).toBe(false);
  });

  it('a poke without a token, or of a source the last pass did not read, is news', () => {
    const shell = settledRun();
    expect(shell.poke({ source: 'ConfigMap/knative-serving/config-network', reason: 'updated', resourceVersion: '9' })).toBe('pass');
    shell.pass();
    expect(shell.poke({ source: 'Revision/default/r-00001', reason: 'updated', token: 'd.X.Y' })).toBe('pass');
  });

  it('a sweep poke (a resync without version or token) is ignored by a running run', () => {
    const shell = settledRun();
    expect(shell.poke({ source: SELF, reason: 'resync' })).toBe('wait');
    expect(shell.state.ignoredPokes).toBe(1);
  });

  it('a kind whose every change is status news (a Revision’s pods) makes a status-only pass, whatever its spec', () => {
    const shell = settledRun({}, { traits: { statusKinds: ['Pod'] } });
    shell.poke({ source: 'Pod/default/r-abc', reason: 'updated', resourceVersion: '3', token: 'd.P9.T9' });
    expect(shell.state.statusOnly).toBe(true);
  });

  it('one covered poke of a batch never hides another source’s news', () => {
    const shell = settledRun();
    expect(shell.poke(childPoke('C1', 'T0'), selfPoke('S2', '9'))).toBe('pass');
    expect(shell.state.ignoredPokes).toBe(1);
  });

  it('the echo of the pass’s own earlier write is covered at its resourceVersion, and news at any other', () => {
    const echoes = { [CHILD]: [`40 ${obs('C0', 'T0', 'i1')}`] };
    const shell = new Shell();
    shell.pass(done(), seen({ [SELF]: obs('S1'), [CHILD]: obs('C1', 'T0', 'i1') }, { echoes }));
    expect(shell.poke(childPoke('C0', 'T0', '40'))).toBe('wait');
    expect(shell.state.ignoredPokes).toBe(1);
    expect(shell.poke(childPoke('C0', 'T0', '44'))).toBe('pass');
  });

  it('a status-only pass keeps no spec it did not act on: the spec change it saw is still news', () => {
    const shell = settledRun();
    shell.poke(childPoke('C1', 'T1'));
    expect(shell.state.statusOnly).toBe(true);
    // The status-only pass read the Ingress with a spec moved on to C2: it did not apply it.
    shell.pass(done({ statusOnly: true }), seen({ [SELF]: obs('S1'), [CHILD]: obs('C2', 'T1', 'i1') }));
    expect(shell.poke(childPoke('C2', 'T1'))).toBe('pass');
    expect(shell.state.statusOnly).toBe(false);
  });
});

describe('entity loop: pokes during a pass (no lost update)', () => {
  it('a poke during a pass that the pass turned out to cover (its own write’s echo) is dropped: no second pass', () => {
    const shell = settledRun();
    shell.poke(selfPoke('S2', '10'));
    expect(shell.state.inPass).toBe(true);
    // During the pass even a poke the last observations cover is kept: this pass's observations decide.
    shell.poke(childPoke('C2', 'T2', '11'));
    expect(shell.state.pokesDuringPass).toHaveLength(1);
    expect(shell.pass(done(), seen({ [SELF]: obs('S2'), [CHILD]: obs('C2', 'T2', 'i1') }))).toBe('wait');
    expect(shell.state).toMatchObject({ dirty: false, ignoredPokes: 1, totalReconciles: 2 });
  });

  it('a poke during a pass that the pass did not cover makes another pass (the 90/10 split race)', () => {
    const shell = settledRun();
    shell.poke(selfPoke('S2', '10'));
    // The spec moves on to S3 while the pass acts on S2; the pass's observation says S2.
    shell.poke(selfPoke('S3', '12'));
    expect(shell.pass(done(), seen({ [SELF]: obs('S2'), [CHILD]: obs('C2', 'T2', 'i1') }))).toBe('pass');
    expect(shell.trigger).toBe(`updated ${SELF}`);
    expect(shell.state.statusOnly).toBe(false);
  });

  it('a poke during a pass of content the pass before covered still makes another pass unless this pass covers it', () => {
    const shell = settledRun();
    shell.poke(selfPoke('S2', '10'));
    // S1 back again (a revert): the last pass's S1 observation must not hide it, this pass saw S2.
    shell.poke(selfPoke('S1', '12'));
    expect(shell.pass(done(), seen({ [SELF]: obs('S2') }))).toBe('pass');
  });

  it('more pokes during a pass than are kept: it passes again whatever they were', () => {
    const shell = settledRun();
    shell.poke(selfPoke('S2', '10'));
    for (let i = 0; i < 101; i += 1) shell.poke(childPoke('C1', 'T0', String(100 + i)));
    expect(shell.state.pokesDuringPassOverflow).toBe(true);
    expect(shell.pass()).toBe('pass');
  });
});

describe('entity loop: a read older than the poke it answers (ADR 0015)', () => {
  const lagging = (read: string) => seen({ [SELF]: obs('S1') }, { versions: { [SELF]: read } });

  it('passes again at once, then after 1, 2 … s while reads stay behind, and stops once a read catches up', () => {
    const shell = settledRun();
    shell.poke(selfPoke('S2', '20'));
    expect(shell.pass(done(), lagging('5'))).toBe('pass');
    expect(shell.trigger).toBe(`read older than ${SELF}@20`);
    expect(shell.logs).toContain('read older than its poke: passing again');
    // Still announced: the pass again answers it.
    expect(shell.state.phase).toMatchObject({ answering: { [SELF]: { resourceVersion: '20' } } });
    expect(shell.pass(done(), lagging('5'))).toBe('wait');
    expect(shell.state.staleReads).toBe(2);
    expect(shell.timers('retry').map((a) => a.ms)).toEqual([1000]);
    expect(shell.advance(1000)).toBe('pass');
    expect(shell.trigger).toBe(`read older than ${SELF}`);
    expect(shell.state.statusOnly).toBe(false);
    expect(shell.pass(done(), lagging('5'))).toBe('wait');
    expect(shell.timers('retry').map((a) => a.ms)).toEqual([1000, 2000]);
    expect(shell.advance(2000)).toBe('pass');
    expect(shell.pass(done(), seen({ [SELF]: obs('S2') }, { versions: { [SELF]: '20' } }))).toBe('wait');
    expect(shell.state).toMatchObject({ staleReads: 0, announced: {} });
    expect(shell.advance(3_000)).toBe('wait');
  });

  it('a read that is older but covers the poke’s content is not stale', () => {
    const shell = settledRun();
    shell.poke(selfPoke('S2', '20'));
    expect(shell.pass(done(), seen({ [SELF]: obs('S2') }, { versions: { [SELF]: '5' } }))).toBe('wait');
    expect(shell.state.staleReads).toBe(0);
  });

  it('a stale read keeps the run from ending idle until it is answered', () => {
    const shell = settledRun({ options: { idleSeconds: 1 } });
    shell.poke(selfPoke('S2', '20'));
    shell.pass(done(), lagging('5'));
    shell.pass(done(), lagging('5'));
    expect(shell.state.retryPending).toBe(true);
    expect(shell.timers('idle')).toHaveLength(1);
  });
});

describe('entity loop: an object gone', () => {
  it('a pass that finds its object gone ends the run once its handlers have finished', () => {
    const shell = settledRun();
    shell.poke({ ...selfPoke('S1', '30'), reason: 'deleted' });
    expect(shell.pass(done({ gone: true, summary: 'Route deleted' }), seen({}))).toBe('end');
    expect(shell.result).toBe('Route default/r is gone: Route deleted');
    expect(shell.state.observed).toEqual({});
  });

  it('a gone pass covers nothing: a re-creation announced during it gets a pass instead of the end', () => {
    const shell = settledRun();
    shell.poke({ ...selfPoke('S1', '30'), reason: 'deleted' });
    // Created again, with the very spec the pass before observed, while the pass that finds it gone runs.
    shell.poke(selfPoke('S1', '31', 'added'));
    expect(shell.pass(done({ gone: true, summary: 'Route deleted' }), seen({ [SELF]: obs('S1', 'T0', 'u2') }))).toBe('pass');
  });

  it('a poke that lands while the gone run waits for its handlers is acted on', () => {
    const shell = settledRun();
    shell.poke({ ...selfPoke('S1', '30'), reason: 'deleted' });
    shell.feed({ type: 'passed', result: done({ gone: true }), observations: seen({}), nowMs: shell.nowMs, continueAsNewSuggested: false });
    expect(shell.state.phase).toMatchObject({ kind: 'drain', then: 'gone' });
    shell.poke(selfPoke('S1', '31', 'added'));
    expect(shell.settle()).toBe('pass');
  });

  it('a new uid (deleted and created again) drops the facts and passes again in full', () => {
    const shell = new Shell();
    shell.pass(done({ facts: { digests: 'resolved' } }));
    expect(shell.state.uid).toBe('u1');
    shell.poke({ ...selfPoke('S1', '40'), reason: 'deleted' }, selfPoke('S1', '41', 'added'));
    expect(shell.pass(done({ facts: { other: 'x' } }), seen({ [SELF]: obs('S1', 'T0', 'u2') }))).toBe('pass');
    expect(shell.trigger).toBe(`recreated ${SELF}`);
    expect(shell.state).toMatchObject({ uid: 'u2', facts: {}, statusOnly: false });
  });
});

describe('entity loop: scheduled passes (ADR 0007)', () => {
  const wakeIn = (shell: Shell, inMs: number, summary = 'step 2') => ({ atMs: shell.nowMs + inMs, inMs, summary });

  it('a pass’s schedule arms a named timer of the step’s own measure; when it fires, a status-only pass “scheduled”', () => {
    const shell = new Shell();
    const wake = wakeIn(shell, 1500.4, 'rollout step 2');
    shell.pass(done({ wake }));
    expect(shell.timers('wake')).toEqual([
      { timer: { kind: 'wake', atMs: wake.atMs, summary: 'rollout step 2' }, ms: 1500, atMs: shell.nowMs + 1500 },
    ]);
    expect(shell.state.wake).toEqual({ atMs: wake.atMs, summary: 'rollout step 2' });
    expect(shell.advance(1500)).toBe('pass');
    expect(shell.trigger).toBe('scheduled');
    expect(shell.state.statusOnly).toBe(true);
    expect(shell.state.wake).toBeUndefined();
  });

  it('a due time a pending timer already covers arms no second timer; an earlier one does', () => {
    const shell = new Shell();
    const wake = wakeIn(shell, 1500);
    shell.pass(done({ wake }));
    shell.poke(childPoke('C1', 'T1'));
    shell.pass(done({ wake: { ...wake, inMs: 1400 } }));
    expect(shell.timers('wake')).toHaveLength(1);
    shell.poke(childPoke('C1', 'T2'));
    shell.pass(done({ wake: { atMs: wake.atMs - 500, inMs: 900, summary: 'sooner' } }));
    expect(shell.timers('wake')).toHaveLength(2);
  });

  it('a timer that fires late arms the rest of a schedule that moved later from when it fired, or passes when that is due', () => {
    const shell = new Shell();
    // Armed for 3 s although due in 1 s: the task that armed it ran a long pass after the step measured its wait.
    const first = { atMs: shell.nowMs + 1000, inMs: 3000, summary: 'step 2' };
    shell.pass(done({ wake: first }));
    shell.poke(childPoke('C1', 'T1'));
    shell.pass(done({ wake: { atMs: first.atMs + 2500, inMs: 2400, summary: 'step 3' } }));
    expect(shell.advance(3000)).toBe('wait');
    // 500 ms after it fired, not 2.5 s (the distance between the two due times).
    expect(shell.timers('wake').map((a) => a.ms)).toEqual([3000, 500]);
    const late = new Shell();
    late.pass(done({ wake: { atMs: late.nowMs + 1000, inMs: 3000, summary: 'step 2' } }));
    late.poke(childPoke('C1', 'T1'));
    late.pass(done({ wake: { atMs: late.nowMs + 2000, inMs: 1900, summary: 'step 3' } }));
    // Fired after step 3 fell due: its pass runs now. Only this case asks the patch.
    expect(late.advance(3000)).toBe('pass');
    expect(late.state.trigger).toBe('scheduled');
    expect([shell.lateAsked, late.lateAsked]).toEqual([0, 1]);
    // A run begun before the patch armed one more timer there, for the distance between the two due times.
    const before = new Shell();
    before.latePatch = false;
    before.pass(done({ wake: { atMs: before.nowMs + 1000, inMs: 3000, summary: 'step 2' } }));
    before.poke(childPoke('C1', 'T1'));
    before.pass(done({ wake: { atMs: before.nowMs + 2000, inMs: 1900, summary: 'step 3' } }));
    expect(before.advance(3000)).toBe('wait');
    expect(before.timers('wake').map((a) => a.ms)).toEqual([3000, 1000]);
  });

  it('a timer that fires before a schedule that moved later arms one for the rest; one finding nothing scheduled does nothing', () => {
    const shell = new Shell();
    const first = wakeIn(shell, 1000);
    shell.pass(done({ wake: first }));
    shell.poke(childPoke('C1', 'T1'));
    shell.pass(done({ wake: { atMs: first.atMs + 700, inMs: 1600, summary: 'later' } }));
    expect(shell.advance(1000)).toBe('wait');
    expect(shell.timers('wake').map((a) => a.ms)).toEqual([1000, 700]);
    shell.poke(childPoke('C1', 'T2'));
    shell.pass(done());
    expect(shell.state.wake).toBeUndefined();
    expect(shell.advance(700)).toBe('wait');
    expect(shell.state.totalReconciles).toBe(3);
  });

  it('a pass already due next leaves its schedule to that pass (patched), a run recorded before arms a timer', () => {
    for (const inForce of [true, false]) {
      const shell = new Shell({}, { patches: { 'wake-left-to-the-next-pass': inForce } });
      shell.poke(selfPoke('S2', '3'));
      expect(shell.pass(done({ wake: wakeIn(shell, 1000) }))).toBe('pass');
      expect(shell.asked).toEqual(['options-after-first-pass', 'wake-left-to-the-next-pass']);
      expect(shell.timers('wake')).toHaveLength(inForce ? 0 : 1);
    }
  });

  it('a pass not followed by another asks no patch for its schedule', () => {
    const shell = new Shell();
    shell.pass(done({ wake: wakeIn(shell, 1000) }));
    expect(shell.asked).toEqual(['options-after-first-pass']);
  });

  it('a pending schedule keeps a settled run from ending idle', () => {
    const shell = new Shell({ options: { idleSeconds: 1 } });
    shell.pass(done({ wake: wakeIn(shell, 5000) }));
    expect(shell.advance(4000)).toBe('wait');
    expect(shell.advance(1000)).toBe('pass');
    expect(shell.pass()).toBe('wait');
    expect(shell.advance(1000)).toBe('end');
  });
});

describe('entity loop: retries and resyncs', () => {
  it('a retry passes again in full after its delay, unless a pass ran meanwhile', () => {
    const shell = new Shell();
    shell.pass(done({ retryInSeconds: 4 }));
    expect(shell.timers('retry')).toEqual([{ timer: { kind: 'retry', afterReconciles: 1, trigger: 'retry' }, ms: 4000, atMs: shell.nowMs + 4000 }]);
    expect(shell.advance(4000)).toBe('pass');
    expect(shell.trigger).toBe('retry');
    expect(shell.state.statusOnly).toBe(false);
    shell.pass(done({ retryInSeconds: 4 }));
    shell.poke(childPoke('C1', 'T1'));
    shell.pass();
    expect(shell.advance(4000)).toBe('wait');
  });

  it('the resync timer passes in full, reads the options again first and re-arms itself with them', () => {
    const shell = settledRun({}, { workerOptions: { resyncSeconds: 600, idleSeconds: 0 } });
    shell.workerOptions = { resyncSeconds: 900, idleSeconds: 0 };
    expect(shell.advance(600_000)).toBe('pass');
    expect(shell.trigger).toBe('resync');
    expect(shell.state.statusOnly).toBe(false);
    expect(shell.optionsReads).toBe(2);
    expect(shell.timers('resync').map((a) => a.ms)).toEqual([600_000, 900_000]);
  });
});

describe('entity loop: a pass that fails', () => {
  it('waits 4, 8, 16 … s on a durable timer, at most 60 s, and passes in full when it fires', () => {
    const shell = settledRun();
    shell.poke(selfPoke('S2', '20'));
    expect(shell.fail()).toBe('wait');
    expect(shell.logs).toContain('pass failed: passing again after a backoff, or at the next news');
    expect(shell.state).toMatchObject({
      failedPasses: 1,
      retryPending: true,
      lastFailure: { message: 'reconcileRoute: connect ECONNREFUSED 127.0.0.1:6443' },
    });
    for (const ms of [4000, 8000, 16_000, 32_000, 60_000, 60_000]) {
      expect(shell.advance(ms - 1)).toBe('wait');
      expect(shell.advance(1)).toBe('pass');
      expect(shell.state.statusOnly).toBe(false);
      expect(shell.trigger).toMatch(/^retry after a failed pass/);
      if (ms < 60_000 || shell.state.failedPasses < 6) shell.fail();
    }
    expect(shell.timers('retry').map((a) => a.ms)).toEqual([4000, 8000, 16_000, 32_000, 60_000, 60_000]);
  });

  it('the pokes the failed pass answered are answered by the next pass, and a pass that ends well resets the backoff', () => {
    const shell = settledRun();
    shell.poke(selfPoke('S2', '20'));
    shell.fail();
    expect(shell.state.announced).toMatchObject({ [SELF]: { resourceVersion: '20' } });
    expect(shell.advance(4000)).toBe('pass');
    expect(shell.state.phase).toMatchObject({ answering: { [SELF]: { resourceVersion: '20' } } });
    expect(shell.pass(done(), seen({ [SELF]: obs('S2') }, { versions: { [SELF]: '20' } }))).toBe('wait');
    expect(shell.state).toMatchObject({ failedPasses: 0, announced: {}, retryPending: false });
    // The next failure starts from the first backoff again.
    shell.poke(selfPoke('S3', '30'));
    shell.fail();
    expect(shell.timers('retry').at(-1)?.ms).toBe(4000);
  });

  it('news cuts the backoff short: a poke after the pass failed passes at once, and its older timer then does nothing', () => {
    const shell = settledRun();
    shell.poke(selfPoke('S2', '20'));
    shell.fail();
    shell.advance(1000);
    expect(shell.poke(childPoke('C2', 'T0'))).toBe('pass');
    expect(shell.state.pendingFull).toBe(false); // taken by this pass, which is full
    expect(shell.state.statusOnly).toBe(false);
    expect(shell.state.phase).toMatchObject({ answering: { [SELF]: { resourceVersion: '20' }, [CHILD]: { resourceVersion: '50' } } });
    // It fails too: the backoff grows, and the first timer (armed after the first failure) passes nothing.
    shell.fail();
    expect(shell.timers('retry').map((a) => a.ms)).toEqual([4000, 8000]);
    expect(shell.advance(3000)).toBe('wait');
    expect(shell.advance(4999)).toBe('wait');
    expect(shell.advance(1)).toBe('pass');
  });

  it('a poke during the failed pass makes the next pass at once', () => {
    const shell = settledRun();
    shell.poke(selfPoke('S2', '20'));
    shell.poke(selfPoke('S3', '30'));
    expect(shell.fail()).toBe('pass');
    expect(shell.state.phase).toMatchObject({ answering: { [SELF]: { resourceVersion: '30' } } });
  });

  it('keeps what the last pass that ended observed: covered content stays covered, and the run does not end idle meanwhile', () => {
    const shell = settledRun({ options: { idleSeconds: 1 } });
    shell.poke(childPoke('C2', 'T0'));
    shell.fail();
    expect(shell.state.observed).toEqual(firstSight().observed);
    expect(shell.poke(childPoke('C1', 'T0', '51'))).toBe('wait');
    expect(shell.state.retryPending).toBe(true);
    expect(shell.advance(2000)).toBe('wait');
    expect(shell.result).toBeUndefined();
    expect(shell.advance(2000)).toBe('pass');
  });

  it('continues as new when Temporal suggests it, and the next run passes at once', () => {
    const shell = settledRun();
    shell.continueAsNewSuggested = true;
    shell.poke(selfPoke('S2', '20'));
    shell.continueAsNewSuggested = false;
    expect(shell.state.phase.kind).toBe('pass');
    shell.continueAsNewSuggested = true;
    expect(shell.fail()).toBe('continueAsNew');
    const next = shell.state.phase.kind === 'continueAsNew' ? shell.state.phase.input : undefined;
    expect(next?.carried).toMatchObject({ dirty: true, failedPasses: 1, announced: { [SELF]: { resourceVersion: '20' } } });
    const again = new Shell(next);
    expect(again.state.phase.kind).toBe('pass');
    // Its first pass is one after a failure: it lists from the API server (workflows/written.ts).
    expect(again.state.failedPasses).toBe(1);
  });
});

describe('entity loop: the run ends when idle (ADR 0006)', () => {
  it('a settled run quiet for idleSeconds ends', () => {
    const shell = settledRun({ options: { idleSeconds: 60 } });
    expect(shell.advance(60_000)).toBe('end');
    expect(shell.result).toBe('Route default/r: idle for 60 s, run ends (the next poke starts one)');
  });

  it('a run busy meanwhile looks again when it may have been quiet long enough', () => {
    const shell = settledRun({ options: { idleSeconds: 60 } });
    shell.advance(40_000);
    shell.poke(selfPoke('S2', '5'));
    shell.pass(done(), seen({ [SELF]: obs('S2') }));
    expect(shell.advance(20_000)).toBe('wait');
    expect(shell.timers('idle').map((a) => a.ms)).toEqual([60_000, 40_000]);
    expect(shell.advance(40_000)).toBe('end');
  });

  it('a run whose object is not settled arms no idle timer and stays; the pass that settles it arms one', () => {
    const shell = new Shell({ options: { idleSeconds: 1 } });
    shell.pass(done({ settled: false }));
    expect(shell.timers('idle')).toHaveLength(1); // armed when the options were read, before the pass
    expect(shell.advance(10_000)).toBe('wait');
    expect(shell.timers('idle')).toHaveLength(1);
    shell.poke(selfPoke('S2', '5'));
    shell.pass(done(), seen({ [SELF]: obs('S2') }));
    expect(shell.timers('idle')).toHaveLength(2);
    expect(shell.advance(1000)).toBe('end');
  });

  it('a poke that lands while the idle run waits for its handlers is acted on instead of the end', () => {
    const shell = settledRun({ options: { idleSeconds: 1 } });
    shell.nowMs += 1000;
    shell.feed({ type: 'timerFired', timer: { kind: 'idle' }, nowMs: shell.nowMs, lateWakePassesNow: () => true });
    shell.feed({ type: 'woken', nowMs: shell.nowMs, continueAsNewSuggested: false });
    expect(shell.state.phase).toMatchObject({ kind: 'drain', then: 'idle' });
    shell.poke(selfPoke('S2', '6'));
    expect(shell.settle()).toBe('pass');
  });

  it('idleSeconds 0: no idle timer, the run waits for its next poke', () => {
    const shell = settledRun({ options: { idleSeconds: 0 } });
    expect(shell.timers('idle')).toHaveLength(0);
    expect(shell.advance(3_600_000)).toBe('wait');
  });
});

describe('entity loop: continue-as-new', () => {
  it('after maxReconcilesPerRun passes, with what the next run needs', () => {
    const shell = new Shell({ options: { maxReconcilesPerRun: 2 } });
    shell.pass(done({ facts: { digests: 'resolved' } }));
    shell.poke(selfPoke('S2', '7'));
    expect(shell.pass(done({ wake: { atMs: shell.nowMs + 5000, inMs: 5000, summary: 'step' } }), seen({ [SELF]: obs('S2') }))).toBe('continueAsNew');
    const phase = shell.state.phase;
    expect(phase.kind === 'continueAsNew' && phase.input).toEqual({
      kind: 'Route',
      namespace: 'default',
      name: 'r',
      options: { maxReconcilesPerRun: 2 },
      carried: {
        uid: 'u1',
        dirty: false,
        trigger: `updated ${SELF}`,
        observed: { [SELF]: obs('S2') },
        totalReconciles: 2,
        totalPokes: 1,
        runs: 1,
        facts: { digests: 'resolved' },
        lastReconcile: { at: new Date(shell.nowMs).toISOString(), trigger: `updated ${SELF}`, summary: 'ok' },
        wake: { atMs: shell.nowMs + 5000, summary: 'step' },
      },
    });
  });

  it('after maxPokesPerRun pokes, or when Temporal suggests it; the worker’s options are not carried', () => {
    const pokes = new Shell({ options: { maxPokesPerRun: 2 } });
    pokes.pass();
    pokes.poke(selfPoke('S1', '2'), selfPoke('S1', '3'));
    expect(pokes.state.phase.kind).toBe('wait'); // covered pokes pass nothing: the threshold is looked at after a pass
    pokes.poke(selfPoke('S2', '4'));
    expect(pokes.pass()).toBe('continueAsNew');
    const suggested = new Shell();
    suggested.continueAsNewSuggested = true;
    expect(suggested.pass()).toBe('continueAsNew');
    const phase = suggested.state.phase;
    expect(phase.kind === 'continueAsNew' && 'options' in phase.input).toBe(false);
  });

  it('carries the pokes no pass has read yet, and the next run’s first pass answers them', () => {
    const shell = new Shell({ options: { maxReconcilesPerRun: 3 } });
    shell.pass();
    shell.poke(selfPoke('S2', '20'));
    const stale = seen({ [SELF]: obs('S1') }, { versions: { [SELF]: '5' } });
    expect(shell.pass(done(), stale)).toBe('pass');
    // The second stale read waits for its retry timer: nothing is dirty, the poke is still to be read.
    expect(shell.pass(done(), stale)).toBe('continueAsNew');
    expect(shell.state.dirty).toBe(false);
    const phase = shell.state.phase;
    if (phase.kind !== 'continueAsNew') throw new Error('expected continue-as-new');
    expect(phase.input.carried).toMatchObject({ dirty: true, announced: { [SELF]: { resourceVersion: '20' } } });
    const next = new Shell(phase.input);
    expect(next.state.runs).toBe(2);
    expect(next.trigger).toBe(`read older than ${SELF}@20`);
    expect(next.state.phase).toMatchObject({ answering: { [SELF]: { resourceVersion: '20' } } });
  });

  it('a carried run remembers what was observed: the same content is still covered, and nothing passes at its start', () => {
    const carried = {
      dirty: false,
      trigger: 'x',
      observed: { [SELF]: obs('S1') },
      totalReconciles: 5,
      totalPokes: 9,
      runs: 1,
      facts: { own: 'yes' },
    };
    const shell = new Shell({ carried });
    expect(shell.state.phase.kind).toBe('wait');
    expect(shell.poke(selfPoke('S1', '10'))).toBe('wait');
    expect(shell.state).toMatchObject({ ignoredPokes: 1, runs: 2, totalPokes: 10, facts: { own: 'yes' } });
  });

  it('a carried schedule is re-armed for what is left of it, and keeps the run from ending idle', () => {
    const nowMs = 2_000_000;
    const carried = {
      dirty: false,
      trigger: 'x',
      observed: {},
      totalReconciles: 1,
      totalPokes: 1,
      runs: 1,
      facts: {},
      wake: { atMs: nowMs + 800, summary: 'step 3' },
    };
    const shell = new Shell({ carried, options: { idleSeconds: 1 } }, { nowMs });
    expect(shell.timers('wake')).toEqual([{ timer: { kind: 'wake', atMs: nowMs + 800, summary: 'step 3' }, ms: 800, atMs: nowMs + 800 }]);
    expect(shell.state.retryPending).toBe(true);
    expect(shell.advance(800)).toBe('pass');
    expect(shell.trigger).toBe('scheduled');
  });
});

describe('entity loop: a run the catch-up started (ADR 0006, "Later")', () => {
  const caughtUp = (pokes: Poke[] = [selfPoke('S1', '1', 'added')]) => new Shell({ catchUp: true, pokes });

  it('ends right after a first pass that wrote nothing and found its object settled: no options read, no timer', () => {
    const shell = caughtUp();
    expect(shell.pass(done(), seen({ [SELF]: obs('S1') }, { wrote: false }))).toBe('end');
    expect(shell.result).toBe('Route default/r: caught up: its first pass wrote nothing, run ends (the next poke starts one)');
    expect(shell.optionsReads).toBe(0);
    expect(shell.armed).toEqual([]);
    expect(shell.state.totalReconciles).toBe(1);
    expect(shell.logs).toEqual(['reconciled']);
  });

  it('stays for its idle time after a pass that wrote, found its object unsettled, or has a retry or a schedule', () => {
    for (const [result, wrote] of [
      [done(), true],
      [done({ settled: false }), false],
      [done({ retryInSeconds: 1 }), false],
      [done({ wake: { atMs: 2_000_000, inMs: 1000, summary: 's' } }), false],
    ] as const) {
      const shell = caughtUp();
      expect(shell.pass(result, seen({ [SELF]: obs('S1') }, { wrote }))).toBe('wait');
      expect(shell.optionsReads).toBe(1);
    }
  });

  it('loses no change that lands during its pass: it passes again', () => {
    const shell = caughtUp();
    shell.poke(selfPoke('S2', '2'));
    expect(shell.pass(done(), seen({ [SELF]: obs('S1') }, { wrote: false }))).toBe('pass');
  });

  it('loses no change that lands while its handlers finish: it reads its options and passes again', () => {
    const shell = caughtUp();
    shell.feed({
      type: 'passed',
      result: done(),
      observations: seen({ [SELF]: obs('S1') }, { wrote: false }),
      nowMs: shell.nowMs,
      continueAsNewSuggested: false,
    });
    expect(shell.state.phase).toMatchObject({ kind: 'drain', then: 'caughtUp' });
    shell.poke(selfPoke('S2', '2'));
    expect(shell.settle()).toBe('pass');
    expect(shell.optionsReads).toBe(1);
    expect(shell.state.totalReconciles).toBe(1);
  });
});

describe('entity loop: the machine itself', () => {
  it('decide never changes the state it is given', () => {
    const shell = settledRun();
    const frozen = deepFreeze(structuredClone(shell.state));
    shell.state = frozen;
    shell.poke(selfPoke('S2', '3'), childPoke('C1', 'T4'));
    shell.pass(
      done({ wake: { atMs: shell.nowMs + 10, inMs: 10, summary: 's' }, facts: { a: 'b' } }),
      seen({ [SELF]: obs('S2') }, { versions: { [SELF]: '1' } }),
    );
    shell.advance(10_000);
    expect(frozen.phase.kind).toBe('wait');
    expect(frozen.totalReconciles).toBe(1);
  });

  it('an event the phase does not await is refused', () => {
    const shell = settledRun();
    expect(() => shell.feed({ type: 'passed', result: done(), observations: seen({}), nowMs: 0, continueAsNewSuggested: false })).toThrow(
      'entity loop: passed in phase wait',
    );
  });
});

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object') {
    for (const v of Object.values(value)) deepFreeze(v);
    Object.freeze(value);
  }
  return value;
}
