// What `kubectl tidal` knows of one object: the object as the API server has it, and the story of the workflow that
// reconciles it (its recent runs read into passes, and what the server is retrying for it now). Pure.
import type { KubeObject } from '../api/meta.js';
import type { Pass, RunStory, StoryTimer } from './history.js';

export interface Condition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
  lastTransitionTime?: string;
}

export type StoryObject = KubeObject & { status?: { conditions?: Condition[] } & Record<string, unknown>; spec?: Record<string, unknown> };

/** A regular step the server is retrying now (`describe` of the running run): its attempt, next try and last failure. */
export interface RetryingStep {
  summary: string;
  type: string;
  attempt: number;
  nextAttemptAtMs?: number;
  lastFailure?: string;
}

export interface WorkflowStory {
  workflowId: string;
  /** The Temporal UI's page of it, when the object's status links there. */
  url?: string;
  /** Its runs, oldest first (an idle run ends and the next poke starts another with the same id). */
  runs: RunStory[];
  retrying: RetryingStep[];
  /** Why it could not be read, if it could not. */
  unreadable?: string;
}

export interface ObjectStory {
  kind: string;
  obj: StoryObject;
  workflow?: WorkflowStory;
}

export const readyOf = (obj: StoryObject): Condition | undefined => obj.status?.conditions?.find((c) => c.type === 'Ready');

/** The passes of all runs, oldest first. */
export const passesOf = (w: WorkflowStory | undefined): Pass[] => (w?.runs ?? []).flatMap((r) => r.passes);

/** What is scheduled next: the timers of the running run still pending, soonest first. */
export function pendingTimersOf(w: WorkflowStory | undefined): StoryTimer[] {
  const running = w?.runs.at(-1);
  return running && !running.closed ? [...running.pendingTimers].sort((a, b) => a.dueAtMs - b.dueAtMs) : [];
}
