// The workflow runs as Temporal lists them: which ended other than by completing, why, which are caught up, and which
// code (by the worker identity, fleet.ts `identityOf`) completed each of a run's workflow tasks.
import type { Client, WorkflowExecutionInfo } from '@temporalio/client';
import type { temporal } from '@temporalio/proto';
import { STATE_QUERY } from '../../api/entity.js';
import type { Build } from './fleet.js';

type HistoryEvent = temporal.api.history.v1.IHistoryEvent;

/** Runs that ended other than by completing or continuing as new: failed, terminated, timed out, cancelled. */
export const NotCompleted = 'ExecutionStatus != "Running" and ExecutionStatus != "Completed" and ExecutionStatus != "ContinuedAsNew"';

export async function list(client: Client, query: string): Promise<WorkflowExecutionInfo[]> {
  const out: WorkflowExecutionInfo[] = [];
  for await (const w of client.workflow.list({ query })) out.push(w);
  return out;
}

export interface EndedRun {
  workflowId: string;
  runId: string;
  status: string;
  closeTime: Date | undefined;
  /** The failure's type and message (a failed run), or the reason given (terminated). */
  failure: string;
  /** A workflow that cannot replay on the code that ran it: Temporal's nondeterminism error (ADR 0002). */
  nondeterminism: boolean;
  /** The patches whose markers its history holds. */
  patches: string[];
  /** The history event a nondeterminism error names (`HistoryEvent(id: N, …)`), as the older code met it. */
  event?: string;
}

/** One history event in a line: its id, type, the worker that completed its task, a timer's duration and summary. */
function describeEvent(events: HistoryEvent[], id: number): string | undefined {
  const e = events.find((x) => Number(x.eventId) === id);
  if (!e) return undefined;
  const timer = e.timerStartedEventAttributes;
  const summary = e.userMetadata?.summary?.data ? Buffer.from(e.userMetadata.summary.data).toString() : '';
  const completed = timer?.workflowTaskCompletedEventId
    ? events.find((x) => Number(x.eventId) === Number(timer.workflowTaskCompletedEventId))?.workflowTaskCompletedEventAttributes?.identity
    : undefined;
  const seconds = timer?.startToFireTimeout ? Number(timer.startToFireTimeout.seconds ?? 0) + (timer.startToFireTimeout.nanos ?? 0) / 1e9 : undefined;
  return [
    `event ${id} ${String(e.eventType)}`,
    seconds !== undefined ? `${seconds} s` : '',
    summary ? `summary ${summary}` : 'no summary',
    completed ? `issued by ${completed}` : '',
  ]
    .filter(Boolean)
    .join(', ');
}

/** Every run that ended other than by completing, with the failure its history ends on. */
export async function endedRuns(client: Client): Promise<EndedRun[]> {
  const runs = await list(client, NotCompleted);
  return Promise.all(
    runs.map(async (w) => {
      const history = await client.workflow.getHandle(w.workflowId, w.runId).fetchHistory();
      const last = history.events?.[history.events.length - 1];
      const f = last?.workflowExecutionFailedEventAttributes?.failure;
      const failure = f
        ? `${f.applicationFailureInfo?.type ?? ''} ${f.message ?? ''}`.trim()
        : (last?.workflowExecutionTerminatedEventAttributes?.reason ?? w.status.name);
      const named = /HistoryEvent\(id: (\d+)/.exec(failure);
      return {
        workflowId: w.workflowId,
        runId: w.runId,
        status: w.status.name,
        closeTime: w.closeTime,
        failure,
        nondeterminism: w.status.name === 'FAILED' && /nondetermin/i.test(failure),
        patches: patchMarkers(history.events ?? []),
        ...(named ? { event: describeEvent(history.events ?? [], Number(named[1])) } : {}),
      };
    }),
  );
}

/** Runs of `workflowId` started after `after`. */
export async function runsAfter(client: Client, workflowId: string, after: Date): Promise<WorkflowExecutionInfo[]> {
  return (await list(client, `WorkflowId = '${workflowId}'`)).filter((w) => w.startTime.getTime() > after.getTime());
}

/**
 * What keeps a running run from being caught up: a workflow task that failed and is being retried (attempt > 1), or,
 * asked through its `state` query, a pass under way or news no pass has taken. Undefined when it is caught up.
 */
export async function behind(client: Client, w: WorkflowExecutionInfo): Promise<string | undefined> {
  const handle = client.workflow.getHandle(w.workflowId, w.runId);
  const d = await handle.describe();
  if (d.status.name !== 'RUNNING') return undefined;
  const attempt = d.raw.pendingWorkflowTask?.attempt ?? 0;
  if (attempt > 1) return `workflow task at attempt ${attempt}`;
  const st = await handle.query<{ dirty: boolean; inPass: boolean }>(STATE_QUERY);
  if (st.inPass) return 'a pass under way';
  if (st.dirty) return 'news no pass has taken';
  return undefined;
}

/** The builds that completed the run's workflow tasks, in order, by the identity of the worker that completed each. */
export function buildsOf(events: HistoryEvent[]): Build[] {
  const out: Build[] = [];
  for (const e of events) {
    const id = e.workflowTaskCompletedEventAttributes?.identity;
    const build = id?.match(/^replica-\d+-(previous|current)\b/)?.[1] as Build | undefined;
    if (build && out[out.length - 1] !== build) out.push(build);
  }
  return out;
}

/** Runs `query` lists that build `from` began and build `to` went on with: their history replayed on `to`'s code. */
export async function carriedRuns(client: Client, query: string, from: Build, to: Build): Promise<string[]> {
  const out: string[] = [];
  for (const w of await list(client, query)) {
    const events = (await client.workflow.getHandle(w.workflowId, w.runId).fetchHistory()).events ?? [];
    const builds = buildsOf(events);
    const i = builds.indexOf(from);
    if (i >= 0 && builds.indexOf(to, i) > i) out.push(`${w.workflowId} ${w.runId}`);
  }
  return out;
}

/** The patch ids a release's workflow code knows: its `patched()` and `deprecatePatch()` calls and its patch list. */
export function patchesOf(workflowSources: string[]): Set<string> {
  const ids = new Set<string>();
  for (const text of workflowSources) {
    for (const m of text.matchAll(/(?:patched|deprecatePatch)\(\s*'([^']+)'/g)) ids.add(m[1]!);
    for (const m of text.matchAll(/^\s*'([^']+)':\s*\{\s*introduced:/gm)) ids.add(m[1]!);
  }
  return ids;
}

/** The patch ids whose markers a history holds. */
export function patchMarkers(events: HistoryEvent[]): string[] {
  return events.flatMap((e) => {
    const m = e.markerRecordedEventAttributes;
    if (m?.markerName !== 'core_patch') return [];
    const data = m.details?.['patch-data']?.payloads?.[0]?.data;
    return data ? [(JSON.parse(Buffer.from(data).toString()) as { id: string }).id] : [];
  });
}
