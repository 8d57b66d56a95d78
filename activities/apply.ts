// Applying owned children: decide whether to apply by what Tidal last applied, never by "the live object already
// holds every desired field" alone. A subset test cannot see a field Tidal stopped setting (a dropped memory limit,
// env var or label stays on the child for ever), so every child Tidal applies carries, in the annotation
// `tidal.dev/applied-hash`, a hash of the whole desired object it applied. A child is applied when
//   - it does not exist, or
//   - its annotation differs from the hash of today's desired object (the desired object changed: something was
//     added, changed or REMOVED), or
//   - it no longer holds every desired field (someone edited a field Tidal sets, e.g. a Route's spec: reverted, as
//     Knative reverts it), or — by the kind's ownership rule ({@link ownedWhole}; a Revision's Deployment:
//     activities/revision.ts) — it holds something the desired object does not.
// A new child, or one whose drift server-side apply can fix, gets a forced server-side apply under Tidal's field
// manager (KubeClient.apply), so the API server removes the fields Tidal set before and no longer sets. What another
// writer added is theirs under server-side apply, so a child holding such content is written as upstream writes it:
// an update (PUT) of the live object with the parts Tidal owns replaced by the desired ones (`replaceOver`).
//
// The annotation key is Tidal's own (`tidal.dev/`, like `kwok.tidal.dev/crash`): Knative has no such annotation
// (its reconcilers compare spec, labels and annotations with semantic equality on every pass). The Deployment keeps
// Knative's `serving.knative.dev/deployment-hash` label as well; it passes its own `inSync` check.
import { createHash } from 'node:crypto';
import type { ConditionSet } from '../api/conditions.js';
import type { ResourceType } from '../api/kinds.js';
import type { KubeObject } from '../api/meta.js';
import type { Status } from '../api/serving.js';
import { semanticEqual } from '../api/validation.js';
import { stableStringify } from '../resources/hash.js';
import type { ActivityDeps } from './deps.js';
import type { EventRecorder } from './events.js';
import type { KubeClient } from '../kube/client.js';
import { KubeApiError } from '../kube/errors.js';
import { failureStatus, markedStatus, writeStatus } from './status.js';

/** Annotation on every child Tidal applies: hash of the desired object it last applied (see the file comment). */
export const APPLIED_HASH_ANNOTATION = 'tidal.dev/applied-hash';

/**
 * The hash of a desired object: sha256 (first 128 bits, hex) of its canonical JSON, without the applied-hash
 * annotation itself (a desired object copied from a parent that carries one, e.g. labels propagated from a Route,
 * must not depend on the parent's hash).
 */
export function appliedHash(desired: KubeObject): string {
  const annotations = { ...desired.metadata.annotations };
  delete annotations[APPLIED_HASH_ANNOTATION];
  const metadata = { ...desired.metadata, annotations };
  return createHash('sha256')
    .update(stableStringify({ ...desired, metadata }))
    .digest('hex')
    .slice(0, 32);
}

/** `desired` with {@link APPLIED_HASH_ANNOTATION} set to its hash: the object to send to the API server. */
export function stampAppliedHash<T extends KubeObject>(desired: T): T {
  return {
    ...desired,
    metadata: { ...desired.metadata, annotations: { ...desired.metadata.annotations, [APPLIED_HASH_ANNOTATION]: appliedHash(desired) } },
  };
}

/**
 * True when every field of `desired` is present with the same value in `actual`. Arrays must have the same length
 * and match element by element; extra object keys in `actual` (server defaults, other managers' fields) are allowed.
 * On its own this cannot see removed fields: use it only together with the applied hash ({@link inSyncByHash}).
 */
export function containsAll(actual: unknown, desired: unknown): boolean {
  if (desired === undefined) return true;
  if (desired === null || typeof desired !== 'object') return actual === desired;
  if (Array.isArray(desired)) {
    return Array.isArray(actual) && actual.length === desired.length && desired.every((d, i) => containsAll(actual[i], d));
  }
  if (actual === null || typeof actual !== 'object' || Array.isArray(actual)) return false;
  return Object.entries(desired).every(([k, v]) => containsAll((actual as Record<string, unknown>)[k], v));
}

/**
 * The default test: the live object carries the hash of `stamped` (so Tidal last applied exactly this desired
 * object) and still holds every desired field (nobody edited them since).
 */
export function inSyncByHash(live: KubeObject, stamped: KubeObject): boolean {
  return containsAll(live, stamped);
}

/** Two label or annotation maps hold the same entries (absent and empty are the same). */
function sameMap(a: Record<string, string> | undefined, b: Record<string, string> | undefined): boolean {
  return stableStringify(a ?? {}) === stableStringify(b ?? {});
}

type WithSpec = KubeObject & { spec?: unknown };

/** The annotations but Tidal's applied hash, which changes with every desired change. */
function withoutHash(obj: KubeObject): Record<string, string> {
  const { [APPLIED_HASH_ANNOTATION]: _hash, ...rest } = obj.metadata.annotations ?? {};
  return rest;
}

/**
 * Upstream's rule for a child whose spec, labels and annotations are all its owner's (the Service's Configuration
 * and Route, a Route's or a DomainMapping's KIngress, a KIngress's VirtualServices: custom resources with no
 * server-side defaults): in sync only when, besides {@link inSyncByHash}, the spec is semantically the desired one
 * and the labels and annotations are exactly the desired ones. Upstream (`configSemanticEquals`,
 * `routeSemanticEquals`, the KIngress and VirtualService reconcilers) otherwise updates the live object with the
 * desired spec, labels and annotations in full, so a key someone added — inside a traffic target, a container's
 * `env`, a label — is removed. `normalize` fills in the defaults the admission webhook stores (a Route's traffic
 * defaults, a template's), so they are no edit; the spec comparison counts an absent field equal to its Go zero
 * value (`resources: {}`), as the typed comparison upstream does.
 */
export function ownedWhole<T extends WithSpec>(normalize: (obj: T) => T = (obj) => obj): Required<ApplyOptions<T>> {
  const ownedPartsMatch = (live: T, stamped: T): boolean =>
    semanticEqual(normalize(live).spec, normalize(stamped).spec) &&
    sameMap(live.metadata.labels, stamped.metadata.labels) &&
    sameMap(live.metadata.annotations, stamped.metadata.annotations);
  return {
    inSync: (live, stamped) => inSyncByHash(live, stamped) && ownedPartsMatch(live, stamped),
    // Only what server-side apply cannot remove needs the PUT: content of the live object the desired one lacks.
    replaceOver: (live, stamped) =>
      containsAll(
        { spec: normalize(stamped).spec, labels: stamped.metadata.labels ?? {}, annotations: withoutHash(stamped) },
        { spec: normalize(live).spec, labels: live.metadata.labels ?? {}, annotations: withoutHash(live) },
      )
        ? undefined
        : {
            ...live,
            metadata: { ...live.metadata, labels: stamped.metadata.labels ?? {}, annotations: stamped.metadata.annotations ?? {} },
            spec: stamped.spec,
          },
  };
}

export type ApplyAction = 'created' | 'updated' | 'unchanged';

export interface ApplyResult<T> {
  /** The live object after the call: the API server's answer when it applied, else `live`. */
  obj: T;
  action: ApplyAction;
}

export interface ApplyOptions<T extends KubeObject> {
  /**
   * Overrides {@link inSyncByHash}, for a child whose server-side form differs from the desired one in ways a
   * subset test would always flag (e.g. a Deployment, whose pod template the API server defaults and normalizes).
   * Receives the live object and the stamped desired object.
   */
  inSync?: (live: T, stamped: T) => boolean;
  /**
   * The object to PUT over a live child that is out of sync, when server-side apply cannot reach the desired state
   * (another writer's fields, labels or annotations must go): upstream's update of the live object with the parts
   * its reconciler owns replaced. Undefined (or no function): a server-side apply.
   */
  replaceOver?: (live: T, stamped: T) => T | undefined;
}

/** Whether `desired` must be applied over `live` (undefined: not there yet). Pure; see the file comment. */
export function needsApply<T extends KubeObject>(live: T | undefined, desired: T, opts: ApplyOptions<T> = {}): boolean {
  if (!live) return true;
  const stamped = stampAppliedHash(desired);
  return !(opts.inSync ?? inSyncByHash)(live, stamped);
}

/**
 * Applies `desired` (stamped with its hash) over `live` when {@link needsApply} says so; otherwise does nothing.
 * Ownership (is `live` controlled by the caller's object?) is the caller's decision and must be checked first.
 * API errors propagate unchanged: the caller reports them (see {@link isPermanentApiError}).
 */
export async function applyIfChanged<T extends KubeObject>(
  kube: KubeClient,
  type: ResourceType,
  live: T | undefined,
  desired: T,
  opts: ApplyOptions<T> = {},
): Promise<ApplyResult<T>> {
  if (!live) return { obj: await kube.apply(type, stampAppliedHash(desired)), action: 'created' };
  const stamped = stampAppliedHash(desired);
  if ((opts.inSync ?? inSyncByHash)(live, stamped)) return { obj: live, action: 'unchanged' };
  const replacement = opts.replaceOver?.(live, stamped);
  // The PUT carries the live resourceVersion: a write someone made since is a 409 Conflict, and the step retries.
  const obj = replacement ? await kube.update(type, replacement) : await kube.apply(type, stamped);
  return { obj, action: 'updated' };
}

/**
 * Awaits every promise (undefined entries too), then throws the first failure: a step that writes side by side never
 * returns or fails while one of its writes is still in flight.
 */
export async function settleAll<T extends readonly unknown[]>(promises: T): Promise<{ -readonly [K in keyof T]: Awaited<T[K]> }> {
  const settled = await Promise.allSettled(promises);
  const failed = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
  if (failed) throw failed.reason;
  return settled.map((s) => (s as PromiseFulfilledResult<unknown>).value) as { -readonly [K in keyof T]: Awaited<T[K]> };
}

/** `fn` over `items`, at most `limit` at a time; every call settles before the first failure is thrown. */
export async function eachConcurrently<T>(items: readonly T[], fn: (item: T) => Promise<unknown> | undefined, limit = 8): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) await fn(items[next++]!);
  };
  await settleAll(Array.from({ length: Math.min(limit, items.length) }, worker));
}

/** Records an Event without waiting for it (see {@link recordLater}). */
export type RecordLater = (...event: Parameters<EventRecorder['record']>) => void;

/**
 * `events.record` for a step that goes on without waiting: the worker's steps send their Events when their work is
 * done and wait for them then (activities/background.ts, ADR 0014). (The recorder never throws.)
 */
export function recordLater(events: EventRecorder): RecordLater {
  return (...event) => void events.record(...event);
}

// ---------------------------------------------------------------------------------------------------------------
// Failures the API server refuses.
//
// A refused apply (422 Invalid, 403 Forbidden, a webhook's 400/403 denial, ...) is permanent until someone changes
// something: the object, RBAC, or the webhook. Such a failure is written to the status of the object being
// reconciled (a condition with the API server's message) and recorded as one Warning Event (the recorder aggregates
// repeats into its `count`), and the step is STILL retried with Temporal's backoff (capped at a minute by the
// activity options): a fix to RBAC or to a webhook pokes nothing, and every retry re-reads the object, so a fixed
// spec is picked up too. Retrying writes nothing new while the failure stays the same (the status write is skipped
// when equal, the Event's count goes up). Transient failures (no answer, 5xx, 409 Conflict, 429, 408) are retried
// without a trace on the object. Knative does the same: a reconcile error becomes a Warning `InternalError` Event
// and a rate-limited requeue; Tidal adds the condition so `kubectl get` shows why.

/** The API server refused the request for a reason retrying alone will not fix: 4xx except 408, 409 and 429. */
export function isPermanentApiError(err: unknown): err is KubeApiError {
  return err instanceof KubeApiError && err.code >= 400 && err.code < 500 && ![408, 409, 429].includes(err.code);
}

/** The API server's own message (the Status `message`), without Tidal's verb/path prefix. */
export function apiErrorMessage(err: unknown): string {
  if (err instanceof KubeApiError) {
    const prefix = `${err.verb} ${err.path}: ${err.code} ${err.reason}: `;
    return err.message.startsWith(prefix) ? err.message.slice(prefix.length) : err.message;
  }
  return err instanceof Error ? err.message : String(err);
}

/** Where a permanent failure is reported: the object being reconciled, and which of its conditions says so. */
export interface FailureTarget {
  /** The object being reconciled, as this step read it (its status is the base of the failure status). */
  obj: KubeObject & { status?: Status; metadata: { generation?: number } };
  type: ResourceType;
  set: ConditionSet;
  /** The dependent condition that turns False, e.g. `ConfigurationsReady`, `ResourcesAvailable`. */
  condition: string;
  /**
   * A refused create that leaves the object Unknown rather than False, as upstream's Revision reconciler leaves a
   * Revision whose Deployment cannot be created (`ResourcesAvailable` and `ContainerHealthy` Unknown `Deploying`, a
   * Warning `InternalError` "failed to create deployment …"): the step is retried, and a fix (RBAC, quota, a
   * webhook) can still make it Ready, so nothing above it is called failed.
   */
  createRefused?: { conditions: readonly string[]; reason: string; message: (name: string, apiMessage: string) => string };
}

/** Knative's reasons: `CreationFailed` (its recorder's reason for a failed create), else `InternalError`. */
export const ReasonCreationFailed = 'CreationFailed';
export const ReasonInternalError = 'InternalError';

/**
 * Applies like {@link applyIfChanged}; when the API server refuses permanently ({@link isPermanentApiError}), writes
 * `target.condition=False` (reason `CreationFailed` or `InternalError`, message `failed to create|update <Kind>
 * "<name>": <API server message>`) to `target.obj`'s status, records one Warning Event with the same reason and
 * message, and rethrows, so the step retries with backoff (see above). A failure to report is logged, never thrown
 * over the original error.
 */
export async function applyReportingFailures<T extends KubeObject>(
  deps: Pick<ActivityDeps, 'kube' | 'events' | 'log'>,
  target: FailureTarget,
  type: ResourceType,
  live: T | undefined,
  desired: T,
  now: string,
  opts: ApplyOptions<T> = {},
): Promise<ApplyResult<T>> {
  try {
    return await applyIfChanged(deps.kube, type, live, desired, opts);
  } catch (err) {
    if (isPermanentApiError(err) && !live && target.createRefused) {
      await reportCreateRefused(deps, target, target.createRefused, desired.metadata.name ?? '', apiErrorMessage(err), now);
    } else if (isPermanentApiError(err)) {
      const verb = live ? 'update' : 'create';
      const message = `failed to ${verb} ${desired.kind} ${JSON.stringify(desired.metadata.name ?? '')}: ${apiErrorMessage(err)}`;
      await reportFailure(deps, target, live ? ReasonInternalError : ReasonCreationFailed, message, now);
    }
    throw err;
  }
}

/**
 * A refused create under {@link FailureTarget.createRefused}: its conditions Unknown with its reason and the API
 * server's refusal as their message (upstream leaves the message empty; Tidal keeps why on the object, so `kubectl
 * get` shows it), and a Warning `InternalError` Event with upstream's message.
 */
async function reportCreateRefused(
  deps: Pick<ActivityDeps, 'kube' | 'events' | 'log'>,
  target: FailureTarget,
  rule: NonNullable<FailureTarget['createRefused']>,
  name: string,
  apiMessage: string,
  now: string,
): Promise<void> {
  const message = rule.message(name, apiMessage);
  try {
    const status = markedStatus(target.obj, target.set, now, (s) => {
      for (const condition of rule.conditions) target.set.markUnknown(s, condition, rule.reason, message, now);
    });
    await writeStatus(deps.kube, target.type, target.obj, status);
  } catch (err) {
    deps.log.warn({ err, kind: target.obj.kind, name: target.obj.metadata.name, reason: rule.reason }, 'could not write the failure to status');
  }
  await deps.events.record(target.obj, 'Warning', ReasonInternalError, message);
}

/** Writes `target.condition=False reason: message` over the object's current status and records a Warning Event. */
export async function reportFailure(
  deps: Pick<ActivityDeps, 'kube' | 'events' | 'log'>,
  target: FailureTarget,
  reason: string,
  message: string,
  now: string,
): Promise<void> {
  try {
    await writeStatus(deps.kube, target.type, target.obj, failureStatus(target.obj, target.set, target.condition, reason, message, now));
  } catch (err) {
    deps.log.warn({ err, kind: target.obj.kind, name: target.obj.metadata.name, reason }, 'could not write the failure to status');
  }
  await deps.events.record(target.obj, 'Warning', reason, message);
}
