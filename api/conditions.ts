// Knative's "living" condition sets (knative.dev/pkg apis/condition_set.go) and the generated-reconciler status
// bookkeeping (reconciler/reconcile_common.go), on plain JSON `Status` objects.
//
// Convention: every function MUTATES the status it is given (reconcilers work on an in-memory copy of the object,
// exactly like Knative's generated reconciler). Time is always a parameter (`now`, RFC3339). Pure: no I/O, no clock.
//
// JSON shape follows Knative's `omitempty` tags: severity Error ('') is not written, nor are empty reasons/messages.
import type { Condition, ConditionStatus, Status } from './serving.js';

/** Knative `ConditionSeverity`: '' is Error (terminal conditions); Info for everything else. */
export type ConditionSeverity = '' | 'Warning' | 'Info';

export const ConditionReady = 'Ready';

/** Reason the framework puts on Ready when a reconcile starts on a new generation (knative.dev/pkg's generated reconciler). */
export const NewObservedGenFailureReason = 'NewObservedGenFailure';
export const NewObservedGenFailureMessage = 'unsuccessfully observed a new generation';

export interface ConditionSet {
  /** The happy (top-level) condition type, e.g. `Ready`. */
  readonly happy: string;
  /** The terminal dependents, in declaration order, duplicates and the happy type removed. */
  readonly dependents: readonly string[];
  /** Adds Ready=Unknown if missing, then every missing dependent as Unknown (True when Ready is already True). */
  initialize(status: Status, now: string): void;
  /** Sets `type` True, then recomputes the happy condition from the dependents. */
  markTrue(status: Status, type: string, now: string): void;
  /** Like markTrue, but the condition carries a reason and message. */
  markTrueWithReason(status: Status, type: string, reason: string, message: string, now: string): void;
  /** Sets `type` False; when it is a dependent, the happy condition too, with the same reason/message. */
  markFalse(status: Status, type: string, reason: string, message: string, now: string): void;
  /**
   * Sets `type` Unknown. If some dependent is False, the happy condition becomes (stays) False, taking this
   * reason/message only if it was not False already. Otherwise, if `type` is a dependent, happy becomes Unknown
   * with this reason/message.
   */
  markUnknown(status: Status, type: string, reason: string, message: string, now: string): void;
  /** A copy of the condition of that type, if present. */
  get(status: Status | undefined, type: string): Condition | undefined;
  /** True when the happy condition is True. */
  isHappy(status: Status | undefined): boolean;
  /** '' (Error) for the happy condition and the dependents, 'Info' otherwise. */
  severity(type: string): ConditionSeverity;
}

interface ConditionFields {
  type: string;
  status: ConditionStatus;
  severity: ConditionSeverity;
  reason?: string;
  message?: string;
}

function byType(a: Condition, b: Condition): number {
  // Go compares strings bytewise; for the ASCII condition types this equals UTF-16 code-unit order.
  return a.type < b.type ? -1 : a.type > b.type ? 1 : 0;
}

function build(fields: ConditionFields, lastTransitionTime: string | undefined): Condition {
  const c: Condition = { type: fields.type, status: fields.status };
  if (fields.severity) c.severity = fields.severity;
  if (fields.reason) c.reason = fields.reason;
  if (fields.message) c.message = fields.message;
  if (lastTransitionTime !== undefined) c.lastTransitionTime = lastTransitionTime;
  return c;
}

/** Equality of everything but lastTransitionTime, treating absent and empty strings alike (JSON omitempty). */
function sameButTime(a: Condition | ConditionFields, b: Condition | ConditionFields): boolean {
  return (
    a.type === b.type &&
    a.status === b.status &&
    (a.severity ?? '') === (b.severity ?? '') &&
    (a.reason ?? '') === (b.reason ?? '') &&
    (a.message ?? '') === (b.message ?? '')
  );
}

/** Milliseconds since the epoch; a missing or unparsable time sorts as the oldest (Go's zero time). */
function timeOf(c: Condition): number {
  if (c.lastTransitionTime === undefined) return Number.NEGATIVE_INFINITY;
  const t = Date.parse(c.lastTransitionTime);
  return Number.isNaN(t) ? Number.NEGATIVE_INFINITY : t;
}

/**
 * Knative `SetCondition`: replaces the condition of that type. If only the timestamp would change, nothing is
 * written (the old lastTransitionTime is kept). Otherwise the condition gets `now` and the list is re-sorted by type.
 */
function setCondition(status: Status, fields: ConditionFields, now: string): void {
  const kept: Condition[] = [];
  for (const c of status.conditions ?? []) {
    if (c.type !== fields.type) kept.push(c);
    else if (sameButTime(c, fields)) return;
  }
  kept.push(build(fields, now));
  kept.sort(byType);
  status.conditions = kept;
}

function find(status: Status | undefined, type: string): Condition | undefined {
  return status?.conditions?.find((c) => c.type === type);
}

/**
 * `NewLivingConditionSet`-style constructor with an explicit happy type (Knative's `newConditionSet`).
 * Use `conditionSet(ConditionReady, ...)` for a living set.
 */
export function conditionSet(happy: string, ...dependents: string[]): ConditionSet {
  const deps: string[] = [];
  for (const d of dependents) if (d !== happy && !deps.includes(d)) deps.push(d);

  const isTerminal = (t: string): boolean => t === happy || deps.includes(t);
  const severity = (t: string): ConditionSeverity => (isTerminal(t) ? '' : 'Info');

  /** Knative `findUnhappyDependent`: the condition whose state the happy condition must reflect, if any. */
  const findUnhappyDependent = (status: Status): Pick<Condition, 'status' | 'reason' | 'message'> | undefined => {
    if (deps.length === 0) return undefined;
    const terminal = (status.conditions ?? []).filter((c) => (c.severity ?? '') === '' && c.type !== happy);
    // Most recently transitioned first. Array#sort is stable, so equal times keep type order, as Go's insertion sort
    // does for short lists.
    const ordered = terminal
      .map((c) => ({ c, t: timeOf(c) }))
      .sort((a, b) => (a.t > b.t ? -1 : a.t < b.t ? 1 : 0))
      .map((x) => x.c);
    const failed = ordered.find((c) => c.status === 'False');
    if (failed) return failed;
    const unknown = ordered.find((c) => c.status === 'Unknown');
    if (unknown) return unknown;
    if (deps.length !== terminal.length) return { status: 'Unknown' };
    return undefined;
  };

  const markHappy = (status: Status, t: string, now: string): void => {
    const unhappy = findUnhappyDependent(status);
    if (unhappy) {
      setCondition(status, { type: happy, status: unhappy.status, reason: unhappy.reason, message: unhappy.message, severity: '' }, now);
    } else if (t !== happy) {
      setCondition(status, { type: happy, status: 'True', severity: '' }, now);
    }
  };

  const markFalse = (status: Status, type: string, reason: string, message: string, now: string): void => {
    const types = deps.includes(type) ? [type, happy] : [type];
    for (const t of types) setCondition(status, { type: t, status: 'False', reason, message, severity: severity(t) }, now);
  };

  return {
    happy,
    dependents: deps,
    severity,

    initialize(status, now) {
      let h = find(status, happy);
      if (!h) {
        h = { type: happy, status: 'Unknown' };
        setCondition(status, { type: happy, status: 'Unknown', severity: '' }, now);
      }
      const initial: ConditionStatus = h.status === 'True' ? 'True' : 'Unknown';
      for (const d of deps) {
        if (!find(status, d)) setCondition(status, { type: d, status: initial, severity: '' }, now);
      }
    },

    markTrue(status, type, now) {
      setCondition(status, { type, status: 'True', severity: severity(type) }, now);
      markHappy(status, type, now);
    },

    markTrueWithReason(status, type, reason, message, now) {
      setCondition(status, { type, status: 'True', reason, message, severity: severity(type) }, now);
      markHappy(status, type, now);
    },

    markFalse,

    markUnknown(status, type, reason, message, now) {
      setCondition(status, { type, status: 'Unknown', reason, message, severity: severity(type) }, now);
      let isDependent = false;
      for (const d of deps) {
        if (find(status, d)?.status === 'False') {
          // A failed dependent trumps Unknown: make sure the happy condition is False too.
          if (find(status, happy)?.status !== 'False') markFalse(status, happy, reason, message, now);
          return;
        }
        if (d === type) isDependent = true;
      }
      if (isDependent) {
        setCondition(status, { type: happy, status: 'Unknown', reason, message, severity: '' }, now);
      }
    },

    get(status, type) {
      const c = find(status, type);
      return c ? { ...c } : undefined;
    },

    isHappy(status) {
      return find(status, happy)?.status === 'True';
    },
  };
}

// ---------------------------------------------------------------------------------------------------------------
// Generated-reconciler wrapper (knative.dev/pkg's generated reconciler)

/** The parts of a Kubernetes object the reconcile bookkeeping touches. */
export interface Reconcilable<S extends Status = Status> {
  metadata: { generation?: number };
  status?: S;
}

/** Deep copy of plain JSON data; properties whose value is `undefined` are dropped (as JSON would). */
export function cloneJson<T>(value: T): T {
  if (Array.isArray(value)) return value.map((v: unknown) => cloneJson(v)) as T;
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
      if (v !== undefined) out[k] = cloneJson(v);
    }
    return out as T;
  }
  return value;
}

/**
 * Knative `PreProcessReconcile` (minus SetDefaults, which belongs to the webhook defaults): makes sure `obj.status`
 * exists, initializes the conditions, and, if `status.observedGeneration != metadata.generation`, marks the happy
 * condition Unknown `NewObservedGenFailure` through the set's `markUnknown` (so it becomes False instead when a
 * dependent is already False, as upstream).
 *
 * Returns a deep copy of the status as it was BEFORE any change (undefined if there was none): pass it to
 * `endReconcile` so it can groom lastTransitionTimes, and compare it with `statusEqual` to skip no-op writes.
 */
export function beginReconcile<S extends Status>(obj: Reconcilable<S>, set: ConditionSet, now: string): S | undefined {
  const before = obj.status === undefined ? undefined : cloneJson(obj.status);
  // Every field of a Knative status is optional, so an empty object is a valid S.
  const status: S = obj.status ?? ({} as S);
  obj.status = status;
  set.initialize(status, now);
  if ((status.observedGeneration ?? 0) !== (obj.metadata.generation ?? 0)) {
    set.markUnknown(status, set.happy, NewObservedGenFailureReason, NewObservedGenFailureMessage, now);
  }
  return before;
}

/**
 * Knative `PostProcessReconcile`: `status.observedGeneration = metadata.generation` (an absent or zero generation
 * leaves the field absent, as Go's omitempty does), then grooms lastTransitionTimes against `before` (the value
 * `beginReconcile` returned): a condition equal to its previous version keeps the previous timestamp, every other
 * one gets `now`. Run it also when the reconcile failed.
 */
export function endReconcile<S extends Status>(obj: Reconcilable<S>, before: Status | undefined, now: string): void {
  const status: S = obj.status ?? ({} as S);
  obj.status = status;
  const generation = obj.metadata.generation ?? 0;
  if (generation !== 0) status.observedGeneration = generation;
  else delete status.observedGeneration;

  if (!status.conditions) return;
  status.conditions = status.conditions.map((c) => {
    const old = find(before, c.type);
    const lastTransitionTime = old && sameButTime(c, old) ? old.lastTransitionTime : now;
    const groomed: Condition = { ...c };
    if (lastTransitionTime === undefined) delete groomed.lastTransitionTime;
    else groomed.lastTransitionTime = lastTransitionTime;
    return groomed;
  });
}

/**
 * Semantic equality of two statuses (or any JSON values): deep, order-sensitive for arrays, insensitive to object
 * key order; a property whose value is `undefined` counts as absent. Used to skip no-op status writes.
 */
export function statusEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    return a.every((v: unknown, i) => statusEqual(v, b[i]));
  }
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') {
    return typeof a === 'number' && typeof b === 'number' && Number.isNaN(a) && Number.isNaN(b);
  }
  const ao = a as Record<string, unknown>;
  const bo = b as Record<string, unknown>;
  const keys = new Set([...Object.keys(ao), ...Object.keys(bo)]);
  for (const k of keys) {
    if (!statusEqual(ao[k], bo[k])) return false;
  }
  return true;
}
