// The two views of `kubectl tidal` as lines of text: the story (recent passes, then what comes next) and "why is it
// not Ready". Times are UTC, as the workflows' own timer names write them. Pure: `nowMs` comes in.
import type { Pass, StoryStep, StoryTimer } from './history.js';
import type { Dependency } from './why.js';
import { dependenciesOf, passThatSet, unhappyConditions } from './why.js';
import { passesOf, pendingTimersOf, readyOf, type Condition, type ObjectStory, type RetryingStep, type WorkflowStory } from './story.js';

/** `2026-12-07 01:04:13.326Z` */
export function clock(ms: number): string {
  return new Date(ms).toISOString().replace('T', ' ');
}

/** `in 5s`, `3m ago`: how far `ms` is from now. */
export function relative(ms: number, nowMs: number): string {
  const d = Math.round((ms - nowMs) / 1000);
  const abs = Math.abs(d);
  const span =
    abs < 90 ? `${abs}s` : abs < 5400 ? `${Math.round(abs / 60)}m` : abs < 129600 ? `${Math.round(abs / 3600)}h` : `${Math.round(abs / 86400)}d`;
  return d >= 0 ? `in ${span}` : `${span} ago`;
}

const nameOf = (s: ObjectStory) => `${s.obj.metadata.namespace ?? 'default'}/${s.obj.metadata.name ?? ''}`;

export function conditionLine(c: Condition): string {
  return `${c.type}=${c.status}${c.reason ? ` ${c.reason}` : ''}${c.message ? `: ${c.message}` : ''}`;
}

function header(s: ObjectStory): string[] {
  const ready = readyOf(s.obj);
  const w = s.workflow;
  return [
    `${s.kind} ${nameOf(s)}: ${ready ? conditionLine({ ...ready, message: '' }) : 'no Ready condition yet'}`,
    ...(w ? [`  workflow ${w.workflowId}${w.url ? `   ${w.url}` : ''}`] : ['  no workflow reconciles it']),
    ...(w?.unreadable ? [`  its history could not be read: ${w.unreadable}`] : []),
  ];
}

function stepLine(s: StoryStep): string {
  if (s.failure) return `    ! ${s.summary} — failed${s.attempt > 1 ? ` (attempt ${s.attempt})` : ''}: ${s.failure}`;
  if (s.remote && s.outcome === '') return `    - ${s.summary} — still running (Temporal retries it)`;
  return `    - ${s.summary}${s.outcome ? ` — ${s.outcome}` : ''}`;
}

function timerLine(t: StoryTimer, nowMs: number, indent = '    '): string {
  const what =
    t.kind === 'wake'
      ? (t.summary ?? '')
      : t.kind === 'retry'
        ? 'retry: the next pass'
        : t.kind === 'resync'
          ? 'resync: a full pass'
          : 'idle check: the run ends if nothing is left to do';
  return `${indent}@ ${clock(t.dueAtMs)} (${relative(t.dueAtMs, nowMs)})  ${what}`;
}

function retryingLine(r: RetryingStep, nowMs: number, indent = '  '): string[] {
  const next = r.nextAttemptAtMs !== undefined ? `, next attempt ${clock(r.nextAttemptAtMs)} (${relative(r.nextAttemptAtMs, nowMs)})` : '';
  return [`${indent}~ ${r.summary || r.type}: attempt ${r.attempt}${next}`, ...(r.lastFailure ? [`${indent}  last failure: ${r.lastFailure}`] : [])];
}

export function passLines(p: Pass, nowMs: number): string[] {
  return [
    `  ${clock(p.atMs)}  after ${p.triggers.length ? p.triggers.join(', ') : 'the previous pass, which asked for another'}`,
    ...p.steps.map(stepLine),
    // What the pass scheduled: its named timers and retries (the resync and idle timers are the loop's routine).
    ...p.timers.filter((t) => t.kind === 'wake' || t.kind === 'retry').map((t) => timerLine(t, nowMs)),
  ];
}

/** What comes next for a workflow: pending timers (soonest first) and steps the server is retrying. */
export function nextLines(w: WorkflowStory | undefined, nowMs: number): string[] {
  if (!w) return [];
  const running = w.runs.at(-1);
  const timers = pendingTimersOf(w).map((t) => timerLine(t, nowMs, '  '));
  const retrying = w.retrying.flatMap((r) => retryingLine(r, nowMs));
  if (timers.length + retrying.length > 0) return [...retrying, ...timers];
  if (running?.closed) return [`  the run ended (${running.closed.how}); the next change of the object or of what it reads starts a new one`];
  return ['  nothing scheduled: the next change of the object or of what it reads starts a pass'];
}

/** The story view: the newest `passes` passes across runs, with run boundaries, then what comes next. */
export function renderStory(s: ObjectStory, opts: { passes: number; nowMs: number }): string[] {
  const out = header(s);
  const w = s.workflow;
  const shown = new Set(passesOf(w).slice(-opts.passes));
  out.push('', `Recent passes (newest last, UTC):`);
  for (const run of w?.runs ?? []) {
    const passes = run.passes.filter((p) => shown.has(p));
    if (passes.length === 0) continue;
    out.push(`  -- run ${run.runId} started ${clock(run.startedAtMs)}`);
    for (const p of passes) out.push(...passLines(p, opts.nowMs));
    if (run.closed) out.push(`  -- run ended ${clock(run.closed.atMs)}: ${run.closed.how}`);
  }
  if (shown.size === 0) out.push("  none recorded (its runs have aged out of Temporal's retention, or it was never reconciled)");
  out.push('', 'Next:', ...nextLines(w, opts.nowMs));
  return out;
}

/** A dependency read for the why view. */
export interface DependencyStory extends ObjectStory {
  dependency: Dependency;
}

/** The why view: what is not True and why, the pass that set Ready, what the object waits on, what comes next. */
export function renderWhy(s: ObjectStory, deps: DependencyStory[], opts: { nowMs: number }): string[] {
  const out = header(s);
  const unhappy = unhappyConditions(s.obj);
  out.push('', unhappy.length ? 'Not Ready:' : 'Ready.');
  for (const c of unhappy) out.push(`  ${conditionLine(c)}${c.lastTransitionTime ? ` (since ${c.lastTransitionTime})` : ''}`);
  const pass = passThatSet(s);
  if (pass) out.push('', 'Set by the pass of:', ...passLines(pass, opts.nowMs));
  const waiting = deps.filter((d) => readyOf(d.obj)?.status !== 'True');
  if (waiting.length) {
    out.push('', 'Waiting on:');
    for (const d of waiting) {
      const ready = readyOf(d.obj);
      out.push(`  ${d.kind} ${nameOf(d)}: ${ready ? conditionLine(ready) : 'no Ready condition yet'}`);
      if (d.workflow) out.push(`    its workflow ${d.workflow.workflowId}${d.workflow.url ? `   ${d.workflow.url}` : ''}`);
      out.push(...nextLines(d.workflow, opts.nowMs).map((l) => `  ${l}`));
    }
  } else if (dependenciesOf(s.kind, s.obj).length === 0 && s.kind !== 'Revision') out.push('', 'Waiting on: nothing it names');
  out.push('', 'Next:', ...nextLines(s.workflow, opts.nowMs));
  return out;
}
