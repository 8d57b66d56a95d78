// Reads the steps a workflow took out of its Temporal history: regular activities (ActivityTaskScheduled) and
// local activities (their markers), in history order, with the summary the Temporal UI shows for each; and the
// histories of all of a workflow's runs, with what their starts and signals delivered.
import type { Client } from '@temporalio/client';
import type { temporal } from '@temporalio/proto';

type History = temporal.api.history.v1.IHistory;
type Event = temporal.api.history.v1.IHistoryEvent;

export interface HistoryStep {
  type: string;
  summary: string;
  local: boolean;
}

const text = (data: Uint8Array | null | undefined): string => Buffer.from(data ?? new Uint8Array()).toString();

function stepOf(e: Event): HistoryStep | undefined {
  const summary = text(e.userMetadata?.summary?.data).replace(/^"|"$/g, '');
  const scheduled = e.activityTaskScheduledEventAttributes;
  if (scheduled) return { type: scheduled.activityType?.name ?? '', summary, local: false };
  const marker = e.markerRecordedEventAttributes;
  if (marker?.markerName !== 'core_local_activity') return undefined;
  const data = marker.details?.['data']?.payloads?.[0]?.data;
  const type = (JSON.parse(text(data)) as { activity_type?: string }).activity_type ?? '';
  return { type, summary, local: true };
}

export function historySteps(history: History): HistoryStep[] {
  return (history.events ?? []).flatMap((e) => stepOf(e) ?? []);
}

/** The history of every run of `workflowId` (an idle run ends and a poke starts the next; continue-as-new too). */
export async function runHistories(client: Client, workflowId: string): Promise<History[]> {
  const out: History[] = [];
  for await (const run of client.workflow.list({ query: `WorkflowId = '${workflowId}'` })) {
    out.push(await client.workflow.getHandle(workflowId, run.runId).fetchHistory());
  }
  return out;
}

/** What each start and signal delivered (the pokes, as JSON text), in history order. */
export function deliveredInputs(history: History): string[] {
  return (history.events ?? []).flatMap((e) => {
    const input = e.workflowExecutionSignaledEventAttributes?.input ?? e.workflowExecutionStartedEventAttributes?.input;
    return (input?.payloads ?? []).map((p) => text(p.data));
  });
}

/** A durable timer a run started that has neither fired nor been cancelled: its duration, and its name when it has one. */
export interface PendingTimer {
  seconds: number;
  summary: string;
}

export function pendingTimers(history: History): PendingTimer[] {
  const events = history.events ?? [];
  const ended = new Set(events.flatMap((e) => [e.timerFiredEventAttributes?.timerId, e.timerCanceledEventAttributes?.timerId].filter(Boolean)));
  return events.flatMap((e) => {
    const started = e.timerStartedEventAttributes;
    if (!started || ended.has(started.timerId)) return [];
    const timeout = started.startToFireTimeout;
    return [
      { seconds: Number(timeout?.seconds ?? 0) + (timeout?.nanos ?? 0) / 1e9, summary: text(e.userMetadata?.summary?.data).replace(/^"|"$/g, '') },
    ];
  });
}

/**
 * The run has handled everything it was told: its last workflow task completed and none has been scheduled since
 * (a signal or a timer that fired would schedule one). The events after it are that task's commands.
 */
export function caughtUpWithHistory(history: History): boolean {
  const events = history.events ?? [];
  const last = (has: (e: Event) => unknown) => events.reduce((at, e, i) => (has(e) != null ? i : at), -1);
  return last((e) => e.workflowTaskCompletedEventAttributes) > last((e) => e.workflowTaskScheduledEventAttributes);
}
