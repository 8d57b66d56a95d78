// One run of an entity workflow, read out of its Temporal history as the passes it made: what started each pass (the
// pokes it received and the timers that fired), each step with its summary and what it did, what failed and why,
// and the timers it armed. Pure: the history comes in as the SDK returns it (or as `temporal workflow show -o json`
// writes it, through `historyFromJSON`).
import type { temporal } from '@temporalio/proto';

type History = temporal.api.history.v1.IHistory;
type Event = temporal.api.history.v1.IHistoryEvent;
type Payload = temporal.api.common.v1.IPayload;
type Timestamp = { seconds?: unknown; nanos?: number | null } | null | undefined;

/** One step of a pass: a local activity's marker, or a regular activity the server runs and retries. */
export interface StoryStep {
  /** The one-line summary the workflow gave the step (what the Temporal UI shows). */
  summary: string;
  /** The activity's name, e.g. `reconcileServiceFull`. */
  type: string;
  /** What it did, from its result (`status written, Ready=False (RevisionMissing)`); '' while a regular one runs. */
  outcome: string;
  /** Why it failed, when it did. */
  failure?: string;
  attempt: number;
  remote: boolean;
  /** Ready as the last status part of its result reports it, if any. */
  ready?: { status: string; reason?: string };
}

export type TimerKind = 'wake' | 'resync' | 'idle' | 'retry';

/** A durable timer: a scheduled pass (named: a rollout step, a Revision due for collection), a resync, the idle end, a retry. */
export interface StoryTimer {
  id: string;
  kind: TimerKind;
  /** The name the workflow gave it (scheduled passes only). */
  summary?: string;
  startedAtMs: number;
  dueAtMs: number;
  state: 'pending' | 'fired' | 'canceled';
}

export interface Pass {
  runId: string;
  atMs: number;
  /** What made it run: the pokes since the previous pass (`Route/default/nginx updated`), fired timers, the run's start. */
  triggers: string[];
  steps: StoryStep[];
  /** Timers armed when it ended. */
  timers: StoryTimer[];
}

export interface RunStory {
  runId: string;
  startedAtMs: number;
  passes: Pass[];
  /** Timers of the run that neither fired nor were cancelled. */
  pendingTimers: StoryTimer[];
  /** Regular activities scheduled and not closed (the server retries them: describe the run for their last failure). */
  pendingSteps: (StoryStep & { activityId: string })[];
  /** How the run ended, if it did. */
  closed?: { atMs: number; how: string };
}

/** Milliseconds of a protobuf Timestamp or Duration (seconds may be a Long, a number or a string). */
export function msOf(ts: Timestamp): number {
  if (!ts) return 0;
  const s = ts.seconds as { toNumber?: () => number } | number | string | null | undefined;
  const seconds = s && typeof s === 'object' && typeof s.toNumber === 'function' ? s.toNumber() : Number(s ?? 0);
  return seconds * 1000 + Math.floor((ts.nanos ?? 0) / 1e6);
}

const utf8 = new TextDecoder();

/** A json/plain payload's value; undefined for anything else (binary/null, encrypted, absent). */
export function payloadValue(p: Payload | null | undefined): unknown {
  if (!p?.data || utf8.decode(p.metadata?.['encoding'] ?? new Uint8Array()) !== 'json/plain') return undefined;
  try {
    return JSON.parse(utf8.decode(p.data)) as unknown;
  } catch {
    return undefined;
  }
}

const summaryOf = (e: Event): string => {
  const v = payloadValue(e.userMetadata?.summary);
  return typeof v === 'string' ? v : '';
};

interface Outcome {
  outcome?: string;
  action?: string;
  ready?: string;
  reason?: string;
  summary?: string;
  deleted?: unknown;
  rollout?: { summary?: string };
}

const isOutcome = (v: unknown): v is Outcome => v !== null && typeof v === 'object' && typeof (v as Outcome).outcome === 'string';

/** One outcome in a few words: `applied updated`, `written, Ready=Unknown (RolloutInProgress)`, `nothing: …`. */
export function describeOutcome(o: Outcome): string {
  const parts = [o.action && o.action !== o.outcome ? `${o.outcome} ${o.action}` : (o.outcome ?? '')];
  if (o.ready) parts.push(`Ready=${o.ready}${o.reason ? ` (${o.reason})` : ''}`);
  else if (o.reason) parts.push(o.reason);
  if (o.rollout?.summary) parts.push(`rollout ${o.rollout.summary}`);
  if (Array.isArray(o.deleted) && o.deleted.length) parts.push(`deleted ${o.deleted.map(String).join(', ')}`);
  const text = parts.filter((p) => p !== '').join(', ');
  return o.summary ? `${text}: ${o.summary}` : text;
}

/**
 * What a step's result says: one outcome, or for a combined step (activities/combined.ts) each part by name — the
 * parts that changed nothing and report no readiness left out. Also the Ready of the last part that reports one.
 */
export function readResult(result: unknown): Pick<StoryStep, 'outcome' | 'ready'> {
  const parts: [string, Outcome][] = isOutcome(result)
    ? [['', result]]
    : result !== null && typeof result === 'object'
      ? Object.entries(result).filter((e): e is [string, Outcome] => isOutcome(e[1]))
      : [];
  const told = parts.filter(([, o]) => !(o.outcome === 'unchanged' && !o.ready) || parts.length === 1);
  const withReady = parts.filter(([, o]) => o.ready).at(-1)?.[1];
  return {
    outcome: told.map(([name, o]) => (name ? `${name} ${describeOutcome(o)}` : describeOutcome(o))).join('; '),
    ...(withReady?.ready ? { ready: { status: withReady.ready, ...(withReady.reason ? { reason: withReady.reason } : {}) } } : {}),
  };
}

/** A poke as a trigger: `Service/default/nginx updated (generation 2)`. */
function pokeTrigger(p: unknown): string | undefined {
  if (p === null || typeof p !== 'object') return undefined;
  const { source, reason, generation } = p as { source?: string; reason?: string; generation?: number };
  if (!source) return undefined;
  return `${source} ${reason ?? 'changed'}${generation !== undefined ? ` (generation ${generation})` : ''}`;
}

const pokesOf = (v: unknown): unknown[] => (Array.isArray(v) ? v : v === undefined ? [] : [v]);

function timerTrigger(t: StoryTimer): string {
  if (t.kind === 'wake') return `timer: ${t.summary ?? ''}`;
  return t.kind === 'resync' ? 'resync timer' : t.kind === 'retry' ? 'retry timer' : 'idle timer';
}

const failureText = (f: temporal.api.failure.v1.IFailure | null | undefined): string | undefined =>
  f ? [f.message, failureText(f.cause)].filter((m) => m).join(': ') || undefined : undefined;

/** Steps that are the loop's own bookkeeping, not part of a pass. */
const bookkeeping = new Set(['readEntityOptions']);

/** A pass's settled Ready (True or False): an unnamed timer armed then is the idle end, else a retry. */
const settledAfter = (steps: StoryStep[]): boolean => {
  const ready = steps.filter((s) => s.ready).at(-1)?.ready?.status;
  return ready === 'True' || ready === 'False';
};

/** Reads one run's history into its passes (see the file comment). */
export function readRun(runId: string, history: History): RunStory {
  const events = history.events ?? [];
  const timers = new Map<string, StoryTimer>();
  const remote = new Map<string, StoryStep & { activityId: string }>();
  const story: RunStory = { runId, startedAtMs: msOf(events[0]?.eventTime), passes: [], pendingTimers: [], pendingSteps: [] };
  let options: { resyncSeconds?: number; idleSeconds?: number } = {};
  let triggers: string[] = [];
  let task: Pass | undefined;
  let continues: Pass | undefined;

  const addTrigger = (t: string) => {
    if (!triggers.includes(t)) triggers.push(t);
  };
  const endTask = () => {
    if (!task) return;
    const steps = task.steps.filter((s) => !bookkeeping.has(s.type));
    const last = story.passes.at(-1);
    if (steps.length > 0 && continues && task.triggers.length === 0) {
      // The rest of a pass that waited on a regular step.
      continues.steps.push(...steps);
      continues.timers.push(...task.timers);
    } else if (steps.length > 0) story.passes.push({ ...task, steps });
    else {
      // Not a pass: what woke the task is news for the next one.
      triggers = [...task.triggers, ...triggers.filter((t) => !task?.triggers.includes(t))];
      last?.timers.push(...task.timers);
    }
    continues = undefined;
    task = undefined;
  };
  const kindOfTimer = (summary: string, ms: number): TimerKind => {
    if (summary) return 'wake';
    if (options.resyncSeconds !== undefined && ms === options.resyncSeconds * 1000) return 'resync';
    if (!task || task.steps.every((s) => bookkeeping.has(s.type)))
      return options.idleSeconds !== undefined && ms === options.idleSeconds * 1000 ? 'idle' : 'retry';
    return settledAfter(task.steps) ? 'idle' : 'retry';
  };

  for (const e of events) {
    const at = msOf(e.eventTime);
    const started = e.workflowExecutionStartedEventAttributes;
    if (started) {
      const input = payloadValue(started.input?.payloads?.[0]) as { pokes?: unknown } | undefined;
      addTrigger(started.continuedExecutionRunId ? 'continued from the previous run' : 'run started');
      for (const p of pokesOf(input?.pokes)) {
        const t = pokeTrigger(p);
        if (t) addTrigger(t);
      }
    } else if (e.workflowExecutionSignaledEventAttributes?.signalName === 'poke') {
      for (const p of pokesOf(payloadValue(e.workflowExecutionSignaledEventAttributes.input?.payloads?.[0]))) {
        const t = pokeTrigger(p);
        if (t) addTrigger(t);
      }
    } else if (e.workflowTaskScheduledEventAttributes) endTask();
    else if (e.workflowTaskCompletedEventAttributes) {
      // What the task saw: signals recorded after this event arrived while it ran, for the next pass.
      task = { runId, atMs: at, triggers, steps: [], timers: [] };
      triggers = [];
    } else if (e.markerRecordedEventAttributes?.markerName === 'core_local_activity') {
      const m = e.markerRecordedEventAttributes;
      const data = (payloadValue(m.details?.['data']?.payloads?.[0]) ?? {}) as { activity_type?: string; attempt?: number };
      const result = payloadValue(m.details?.['result']?.payloads?.[0]);
      const failure = failureText(m.failure);
      const step: StoryStep = {
        summary: summaryOf(e),
        type: data.activity_type ?? '',
        ...(failure ? { outcome: 'failed', failure } : readResult(result)),
        attempt: data.attempt ?? 1,
        remote: false,
      };
      if (step.type === 'readEntityOptions' && result && typeof result === 'object') options = result;
      task?.steps.push(step);
    } else if (e.activityTaskScheduledEventAttributes) {
      const a = e.activityTaskScheduledEventAttributes;
      const step = { summary: summaryOf(e), type: a.activityType?.name ?? '', outcome: '', attempt: 1, remote: true, activityId: a.activityId ?? '' };
      remote.set(String(e.eventId), step);
      task?.steps.push(step);
    } else if (e.activityTaskCompletedEventAttributes || e.activityTaskFailedEventAttributes || e.activityTaskTimedOutEventAttributes) {
      const a = e.activityTaskCompletedEventAttributes ?? e.activityTaskFailedEventAttributes ?? e.activityTaskTimedOutEventAttributes;
      const step = remote.get(String(a?.scheduledEventId));
      if (step) {
        remote.delete(String(a?.scheduledEventId));
        const failure = failureText(e.activityTaskFailedEventAttributes?.failure ?? e.activityTaskTimedOutEventAttributes?.failure);
        if (failure) Object.assign(step, { outcome: 'failed', failure });
        else Object.assign(step, readResult(payloadValue(e.activityTaskCompletedEventAttributes?.result?.payloads?.[0])));
        continues = story.passes.find((p) => p.steps.includes(step)) ?? continues;
      }
    } else if (e.timerStartedEventAttributes) {
      const t = e.timerStartedEventAttributes;
      const ms = msOf(t.startToFireTimeout);
      const summary = summaryOf(e);
      const timer: StoryTimer = {
        id: t.timerId ?? '',
        kind: kindOfTimer(summary, ms),
        startedAtMs: at,
        dueAtMs: at + ms,
        state: 'pending',
        ...(summary ? { summary } : {}),
      };
      timers.set(timer.id, timer);
      task?.timers.push(timer);
    } else if (e.timerFiredEventAttributes || e.timerCanceledEventAttributes) {
      const timer = timers.get(e.timerFiredEventAttributes?.timerId ?? e.timerCanceledEventAttributes?.timerId ?? '');
      if (timer) {
        timer.state = e.timerFiredEventAttributes ? 'fired' : 'canceled';
        if (timer.state === 'fired' && timer.kind !== 'idle') addTrigger(timerTrigger(timer));
      }
    } else {
      const closed = closing(e);
      if (closed) story.closed = { atMs: at, how: closed };
    }
  }
  endTask();
  story.pendingTimers = [...timers.values()].filter((t) => t.state === 'pending' && !story.closed);
  story.pendingSteps = story.closed ? [] : [...remote.values()];
  return story;
}

/** How a closing event ends the run, if it is one. */
function closing(e: Event): string | undefined {
  if (e.workflowExecutionCompletedEventAttributes) {
    const result = payloadValue(e.workflowExecutionCompletedEventAttributes.result?.payloads?.[0]);
    return `completed${typeof result === 'string' && result ? `: ${result}` : ''}`;
  }
  if (e.workflowExecutionContinuedAsNewEventAttributes) return 'continued as new';
  if (e.workflowExecutionFailedEventAttributes) return `failed: ${failureText(e.workflowExecutionFailedEventAttributes.failure) ?? ''}`;
  if (e.workflowExecutionTerminatedEventAttributes)
    return `terminated${e.workflowExecutionTerminatedEventAttributes.reason ? `: ${e.workflowExecutionTerminatedEventAttributes.reason}` : ''}`;
  if (e.workflowExecutionTimedOutEventAttributes) return 'timed out';
  if (e.workflowExecutionCanceledEventAttributes) return 'canceled';
  return undefined;
}
