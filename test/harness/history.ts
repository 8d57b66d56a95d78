// Reads the steps a workflow took out of its Temporal history: regular activities (ActivityTaskScheduled) and
// local activities (their markers), in history order, with the summary the Temporal UI shows for each.
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
