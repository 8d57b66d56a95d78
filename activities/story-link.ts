// Which workflow the running step works for, so what it writes can point there (api/story-link.ts): every status it
// writes carries the link in `status.annotations` (activities/status.ts) and every Warning Event it records ends with
// it. The step's own activity info names the workflow and its Temporal namespace; config-observability's
// `temporal-ui-url` gives the UI. An AsyncLocalStorage scopes the link to the step, as activities/observe.ts scopes
// what it saw.
import { AsyncLocalStorage } from 'node:async_hooks';
import { Context } from '@temporalio/activity';
import { linkedWarning, type StoryLink } from '../api/story-link.js';
import type { EventRecorder } from './events.js';

const scope = new AsyncLocalStorage<StoryLink>();

/** The link of the running step; undefined outside a step (tools, unit tests of single activities). */
export function stepStoryLink(): StoryLink | undefined {
  return scope.getStore();
}

/** The workflow the running activity was scheduled by, if it runs as an activity. */
function runningFor(): { workflowId: string; temporalNamespace: string } | undefined {
  try {
    const { workflowExecution, workflowNamespace } = Context.current().info;
    return workflowExecution && workflowNamespace ? { workflowId: workflowExecution.workflowId, temporalNamespace: workflowNamespace } : undefined;
  } catch {
    return undefined; // not inside an activity
  }
}

/** Runs `fn` with the link of the activity it runs in (none outside one); a nested step keeps its caller's. */
export function withStepStoryLink<R>(uiUrl: () => string, fn: () => Promise<R>): Promise<R> {
  if (scope.getStore()) return fn();
  const running = runningFor();
  return running ? scope.run({ ...running, uiUrl: uiUrl() }, fn) : fn();
}

/** Wraps every function of an activity object with {@link withStepStoryLink}. */
export function withStoryLinks<A extends Record<string, (...args: never[]) => Promise<unknown>>>(activities: A, uiUrl: () => string): A {
  return Object.fromEntries(
    Object.entries(activities).map(([name, fn]) => [name, (...args: never[]) => withStepStoryLink(uiUrl, () => fn(...args))]),
  ) as A;
}

/** The recorder whose Warning Events end with the link of the step that records them. */
export function linkingWarnings(events: EventRecorder): EventRecorder {
  return {
    record: (obj, type, reason, message, at) => {
      const link = type === 'Warning' ? stepStoryLink() : undefined;
      return events.record(obj, type, reason, link ? linkedWarning(message, link) : message, at);
    },
  };
}
