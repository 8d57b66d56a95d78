// Status writes: server-side apply of the /status subresource, skipped when nothing changed.
import { beginReconcile, cloneJson, endReconcile, statusEqual, type ConditionSet, type Reconcilable } from '../api/conditions.js';
import type { ResourceType } from '../api/kinds.js';
import type { KubeObject } from '../api/meta.js';
import type { Status } from '../api/serving.js';
import type { StatusEvent } from '../resources/configuration-status.js';
import type { EventRecorder } from './events.js';
import type { KubeClient } from '../kube/client.js';
import { withStoryAnnotations } from '../api/story-link.js';
import { stepStoryLink } from './story-link.js';

/**
 * `status` as a step writes it: with the link to the workflow the step works for in its annotations (constant once
 * written, so it costs no write of its own after the first).
 */
function linked(status: unknown): unknown {
  const link = stepStoryLink();
  return link ? withStoryAnnotations(status, link) : status;
}

/**
 * Writes `status` for `obj` unless it equals what is stored; returns the new resourceVersion, if it wrote. With
 * `preconditioned`, the write carries the resourceVersion `obj` was read at, so it fails with 409 Conflict (and the
 * step is retried from a fresh read) when someone else wrote meanwhile: for a status two controllers share (a foreign
 * module's Revision, ADR 0009), where a forced apply of a stale read would drop the other's conditions.
 */
export async function writeStatus(
  kube: KubeClient,
  type: ResourceType,
  obj: KubeObject & { status?: unknown },
  status: unknown,
  preconditioned = false,
): Promise<string | undefined> {
  status = linked(status);
  if (statusEqual(obj.status, status)) return undefined;
  const rv = preconditioned && obj.metadata.resourceVersion ? { resourceVersion: obj.metadata.resourceVersion } : {};
  const written = await kube.apply(
    type,
    {
      apiVersion: obj.apiVersion,
      kind: obj.kind,
      metadata: { name: obj.metadata.name, namespace: obj.metadata.namespace, ...rv },
      status,
    } as KubeObject,
    'status',
  );
  return written.metadata.resourceVersion ?? '';
}

/**
 * Writes `status` like {@link writeStatus}; when it changes, records `toRecord` side by side with the write (an Event
 * is best effort and no reader waits for it: the status is what wakes the readers, so it goes at once).
 */
export async function writeStatusWithEvents(
  kube: KubeClient,
  events: EventRecorder,
  type: ResourceType,
  obj: KubeObject & { status?: unknown },
  status: unknown,
  toRecord: readonly StatusEvent[],
  preconditioned = false,
): Promise<string | undefined> {
  const recorded = statusEqual(obj.status, linked(status)) ? [] : toRecord.map((e) => events.record(obj, e.type, e.reason, e.message));
  const [written] = await Promise.all([writeStatus(kube, type, obj, status, preconditioned), ...recorded]);
  return written;
}

/**
 * The status of `obj` with `mark` laid over its current status, as Knative's generated reconciler writes it after a
 * failed reconcile: observedGeneration set, the happy condition following its dependents, unchanged conditions
 * keeping their times. Used to report a failed apply.
 */
export function markedStatus<S extends Status>(obj: Reconcilable<S>, set: ConditionSet, now: string, mark: (status: S) => void): S {
  const copy = cloneJson({ metadata: { generation: obj.metadata.generation }, status: obj.status }) as Reconcilable<S>;
  const before = beginReconcile(copy, set, now);
  mark(copy.status as S);
  endReconcile(copy, before, now);
  return copy.status as S;
}

/** {@link markedStatus} with `condition` (a dependent of `set`) False for `reason: message`. */
export function failureStatus<S extends Status>(
  obj: Reconcilable<S>,
  set: ConditionSet,
  condition: string,
  reason: string,
  message: string,
  now: string,
): S {
  return markedStatus(obj, set, now, (status) => set.markFalse(status, condition, reason, message, now));
}

export interface StatusOutcome {
  /** `stale`: not written, the object's spec moved on since the pass's children were applied. */
  outcome: 'gone' | 'written' | 'unchanged' | 'stale';
  ready?: string;
  reason?: string;
  /** The object's resourceVersion after the write. */
  resourceVersion?: string;
  /** A Revision's: its children must be applied again (a reserve Revision just initialized may scale to zero). */
  rescale?: boolean;
}

/** The outcome of a status write, for the workflow. */
export function statusOutcome(written: string | undefined, status: Parameters<typeof readyOf>[0]): StatusOutcome {
  return { outcome: written !== undefined ? 'written' : 'unchanged', ...readyOf(status), ...(written ? { resourceVersion: written } : {}) };
}

export function readyOf(status: { conditions?: { type: string; status: string; reason?: string }[] } | undefined): {
  ready?: string;
  reason?: string;
} {
  const c = status?.conditions?.find((x) => x.type === 'Ready');
  return { ...(c ? { ready: c.status } : {}), ...(c?.reason ? { reason: c.reason } : {}) };
}
