// Revision garbage collection (upstream pkg/reconciler/gc): which of a Configuration's Revisions to delete
// now, and when the next one becomes collectable — so the Configuration's workflow can sleep exactly until then
// instead of waiting for an event or the 10-hour resync. Pure: the activity reads the objects, passes the time and
// deletes what this returns.
import { GcDisabled, type GcConfig } from '../api/config/index.js';
import { Annotations, Labels } from '../api/labels.js';
import type { Revision } from '../api/serving.js';
import { RoutingState } from './revision.js';

/** `serving.knative.dev/no-gc`: a Revision annotated "true" (any case) is never collected. */
export const NoGcAnnotation = 'serving.knative.dev/no-gc';

export interface RevisionGcInput {
  config: GcConfig;
  /** The Configuration's status: neither of these is ever collected. */
  latestReadyRevisionName?: string | undefined;
  latestCreatedRevisionName?: string | undefined;
  /** Revisions an in-flight gradual rollout still routes to (the KIngress's rollout annotation): kept. */
  rolloutRevisions?: Iterable<string>;
  /**
   * Revisions the traffic of its Service or of the Routes carrying it names (`revisionName`): kept even while the
   * labeler still has them `reserve` — a traffic change that names a reserve Revision, or a Route waiting for another
   * of its targets to exist, must not lose the Revision before the Route marks it active.
   */
  trafficRevisions?: Iterable<string>;
  /** The Configuration's Revisions (labelled `serving.knative.dev/configuration=<name>`). */
  revisions: readonly Revision[];
  /** The time of the decision (Unix ms). */
  nowMs: number;
}

/** A Revision to delete now, with what the delete's precondition needs and why. */
export interface Collectable {
  name: string;
  uid: string;
  resourceVersion: string;
  /** `stale`: past its retention; `max`: beyond max-non-active-revisions, regardless of age. */
  rule: 'stale' | 'max';
  createdMs: number;
  lastActiveMs: number;
  /** When it became collectable by its retention (stale only): what a deletion's lateness is measured against. */
  eligibleAtMs?: number;
}

export interface RevisionGcPlan {
  collect: Collectable[];
  /** When the next of the remaining Revisions becomes collectable by time alone; undefined: only an event can. */
  nextAtMs?: number;
  /** The Revision that falls due at `nextAtMs`. */
  next?: string;
  /** Non-active Revisions (candidates) before this collection. */
  nonActive: number;
  /** Why nothing more is collected, in a few words ("all limits disabled", "2 ≤ min-non-active-revisions 20", …). */
  note: string;
}

const never = Number.POSITIVE_INFINITY;

function createdMs(rev: Revision): number {
  const t = Date.parse(rev.metadata.creationTimestamp ?? '');
  return Number.isNaN(t) ? 0 : t;
}

/** Upstream's `revisionLastActiveTime`: `routingStateModified` when it parses, else the creation time. */
export function lastActiveMs(rev: Revision): number {
  const raw = rev.metadata.annotations?.[Annotations.routingStateModified];
  const t = raw ? Date.parse(raw) : NaN;
  return Number.isNaN(t) || t <= 0 ? createdMs(rev) : t;
}

/** When `rev` becomes stale under `config`: upstream's `isRevisionStale` turns true at this time and stays true. */
export function staleAtMs(config: GcConfig, rev: Revision): number {
  const sinceCreate = config.retainSinceCreateTimeMs;
  const sinceActive = config.retainSinceLastActiveTimeMs;
  if (sinceCreate === GcDisabled && sinceActive === GcDisabled) return never;
  let at = Number.NEGATIVE_INFINITY;
  if (sinceCreate !== GcDisabled) at = Math.max(at, createdMs(rev) + sinceCreate);
  if (sinceActive !== GcDisabled) at = Math.max(at, lastActiveMs(rev) + sinceActive);
  return at;
}

/** Kept whatever its age (upstream's `isRevisionActive`, plus the latest created Revision, rollouts' and traffic's Revisions). */
function isActive(rev: Revision, input: RevisionGcInput, kept: ReadonlySet<string>): boolean {
  const name = rev.metadata.name ?? '';
  if (name === input.latestReadyRevisionName || name === input.latestCreatedRevisionName) return true;
  if ((rev.metadata.annotations?.[NoGcAnnotation] ?? '').toLowerCase() === 'true') return true;
  if (kept.has(name)) return true;
  // Anything the labeler has not explicitly marked reserve: active, pending, and no state at all.
  return rev.metadata.labels?.[Labels.routingState] !== RoutingState.reserve;
}

function collectable(rev: Revision, rule: Collectable['rule'], eligibleAtMs?: number): Collectable {
  return {
    name: rev.metadata.name ?? '',
    uid: rev.metadata.uid ?? '',
    resourceVersion: rev.metadata.resourceVersion ?? '',
    rule,
    createdMs: createdMs(rev),
    lastActiveMs: lastActiveMs(rev),
    ...(eligibleAtMs !== undefined ? { eligibleAtMs } : {}),
  };
}

/**
 * Knative's collection for one Configuration at `nowMs`, and the time the next Revision falls due:
 * 1. with max-non-active-revisions and both retentions disabled, nothing;
 * 2. with no more Revisions than min-non-active-revisions, nothing;
 * 3. active Revisions are kept (above); with no more non-active ones than min, nothing;
 * 4. oldest last-active first, each stale one is collected until only min would remain;
 * 5. then, beyond max-non-active-revisions, the oldest remaining ones regardless of age.
 */
export function planRevisionGc(input: RevisionGcInput): RevisionGcPlan {
  const { config, nowMs } = input;
  const min = config.minNonActiveRevisions;
  const max = config.maxNonActiveRevisions;
  const sinceCreate = config.retainSinceCreateTimeMs;
  const sinceActive = config.retainSinceLastActiveTimeMs;
  if (max === GcDisabled && sinceCreate === GcDisabled && sinceActive === GcDisabled) {
    return { collect: [], nonActive: 0, note: 'all limits disabled' };
  }
  if (input.revisions.length <= min) {
    return { collect: [], nonActive: 0, note: `${input.revisions.length} Revisions ≤ min-non-active-revisions ${min}` };
  }
  const kept = new Set([...(input.rolloutRevisions ?? []), ...(input.trafficRevisions ?? [])]);
  // Oldest last-active first; ties by creation, then name, so that the choice does not depend on list order.
  const candidates = input.revisions
    .filter((r) => !isActive(r, input, kept))
    .map((rev) => ({ rev, active: lastActiveMs(rev), created: createdMs(rev), name: rev.metadata.name ?? '' }))
    .sort((a, b) => a.active - b.active || a.created - b.created || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const nonActive = candidates.length;
  if (nonActive <= min) return { collect: [], nonActive, note: `${nonActive} non-active ≤ min-non-active-revisions ${min}` };

  const collect: Collectable[] = [];
  const collected = new Set<number>();
  const maxIdx = nonActive - min;
  for (let i = 0; i < candidates.length && collect.length < maxIdx; i++) {
    const c = candidates[i]!;
    const due = staleAtMs(config, c.rev);
    if (nowMs < due) continue;
    collect.push(collectable(c.rev, 'stale', due));
    collected.add(i);
  }
  if (collect.length >= maxIdx) return { collect, nonActive, note: `min-non-active-revisions ${min} remain` };

  const nonStale = nonActive - collect.length;
  if (max !== GcDisabled && nonStale > max) {
    let over = nonStale - max;
    for (let i = 0; i < candidates.length && over > 0; i++) {
      if (collected.has(i)) continue;
      collect.push(collectable(candidates[i]!.rev, 'max'));
      collected.add(i);
      over--;
    }
  }

  // Time alone changes nothing more once only min remain; otherwise the earliest retention to run out is next.
  const remaining = candidates.filter((_, i) => !collected.has(i));
  if (remaining.length <= min) return { collect, nonActive, note: `min-non-active-revisions ${min} remain` };
  let next: { at: number; name: string } | undefined;
  for (const c of remaining) {
    const at = staleAtMs(config, c.rev);
    if (at !== never && (next === undefined || at < next.at)) next = { at, name: c.name };
  }
  if (next === undefined) return { collect, nonActive, note: 'retention disabled' };
  return { collect, nonActive, nextAtMs: next.at, next: next.name, note: `next ${next.name} at ${new Date(next.at).toISOString()}` };
}

/** The Revisions a KIngress's rollout still routes to (its `networking.internal.knative.dev/rollout` Rollout). */
export function revisionsInRollout(rollout: { configurations: readonly { revisions: readonly { revisionName: string }[] }[] } | undefined): string[] {
  return rollout ? rollout.configurations.flatMap((c) => c.revisions.map((r) => r.revisionName)) : [];
}
