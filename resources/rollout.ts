// Gradual rollout of a Route's latest revisions: Knative's state and algorithm (knative/serving
// pkg/reconciler/route/traffic/rollout.go, route/reconcile_resources.go `reconcileRollout`, traffic.go
// `BuildRollout` / `GetRevisionTrafficTargets`); plus Tidal's control annotation,
// automatic rollback and the bound on the 1 % step, documented in docs/gradual-rollouts.md.
//
// Pure: no I/O, clocks or randomness. Time comes in as Unix milliseconds (workflow time) or, for the kernels that
// reproduce upstream's arithmetic exactly, as BigInt Unix nanoseconds. The state keeps Knative's int64 nanoseconds as
// decimal strings (`startTimeNs`, …): they exceed 2^53, and the state must stay plain JSON for Temporal payloads.
import { Annotations, TidalAnnotations } from '../api/labels.js';
import type { NetworkConfig } from '../api/config/network.js';
import { parseGoDuration } from '../api/config/deployment.js';
import type { Condition, TrafficTarget } from '../api/serving.js';
import { byteOrder, statusTraffic, type TrafficConfig } from './traffic.js';
import { parseRolloutAnnotation, rolloutAnnotation } from './rollout-json.js';

export { goQuote, parseRolloutAnnotation, rolloutAnnotation } from './rollout-json.js';

// ---------------------------------------------------------------------------------------------------------------
// State (upstream Rollout / ConfigurationRollout / RevisionRollout / RolloutParams)

/** One revision of a configuration rollout: its share of the Route's traffic (not of the configuration's). */
export interface RevisionRollout {
  revisionName: string;
  percent: number;
}

/**
 * Timing and sizing of a running rollout; empty in the steady state. Zero is absent (Go's omitempty). The times are
 * int64 Unix nanoseconds and the duration int64 nanoseconds, as decimal strings (JSON `starttime`, `nextStepTime`,
 * `stepDuration`, `stepSize`). Read them with `nextStepAt` / `rolloutStartMs`, never with `Number()`.
 */
export interface RolloutParams {
  /** When the newest revision got its 1 %. */
  startTimeNs?: string;
  /** When the next step falls due. */
  nextStepTimeNs?: string;
  /** Time between steps; absent until the 1 % step was observed ready (`observeReady`). */
  stepDurationNs?: string;
  /** Percent moved per step. */
  stepSize?: number;
}

/** The rollout of one configuration within one traffic group (tag; `''` is the default group). */
export interface ConfigurationRollout {
  configurationName: string;
  /** Absent for the default group. */
  tag?: string;
  /** The configuration's share of the group's traffic; the revisions' percents sum to it. */
  percent: number;
  /** Oldest first; the last one is the newest. One entry in the steady state, two or more during a rollout. */
  revisions: RevisionRollout[];
  stepParams: RolloutParams;
}

/** The whole rollout state of a Route, serialized into its KIngress annotation `networking.internal.knative.dev/rollout`. */
export interface Rollout {
  /** Sorted by tag, then configuration name. */
  configurations: ConfigurationRollout[];
}

const nsPerMs = 1_000_000n;
const nsPerSecond = 1_000_000_000n;

function nsOf(text: string | undefined): bigint {
  return text === undefined ? 0n : BigInt(text);
}

function params(p: { start?: bigint; next?: bigint; duration?: bigint; size?: number }): RolloutParams {
  const out: RolloutParams = {};
  if (p.start) out.startTimeNs = p.start.toString();
  if (p.next) out.nextStepTimeNs = p.next.toString();
  if (p.duration) out.stepDurationNs = p.duration.toString();
  if (p.size) out.stepSize = p.size;
  return out;
}

function cloneConfiguration(c: ConfigurationRollout): ConfigurationRollout {
  return { ...c, revisions: c.revisions.map((r) => ({ ...r })), stepParams: { ...c.stepParams } };
}

function cloneRollout(r: Rollout): Rollout {
  return { configurations: r.configurations.map(cloneConfiguration) };
}

/** Workflow time (integer Unix ms) as Unix ns. */
export function msToNs(ms: number): bigint {
  return BigInt(Math.floor(ms)) * nsPerMs;
}

/** Unix ns as Unix ms, rounded up (a timer set to it fires when `now >= ns` holds). */
export function nsToMsCeil(ns: bigint): number {
  const q = ns / nsPerMs;
  return Number(ns % nsPerMs > 0n ? q + 1n : q);
}

function sortRollout(configurations: ConfigurationRollout[]): ConfigurationRollout[] {
  return configurations.sort((a, b) => byteOrder(a.tag ?? '', b.tag ?? '') || byteOrder(a.configurationName, b.configurationName));
}

function label(c: Pick<ConfigurationRollout, 'configurationName' | 'tag'>): string {
  return c.tag ? `${c.configurationName} (tag ${c.tag})` : c.configurationName;
}

function newest(c: ConfigurationRollout): RevisionRollout | undefined {
  return c.revisions[c.revisions.length - 1];
}

// ---------------------------------------------------------------------------------------------------------------
// Knative's rollout.go

/**
 * Upstream `Config.BuildRollout`, the desired (steady) state: for every traffic group and each of its `latestRevision`
 * targets with a percent above 0, `{configurationName, tag, percent, revisions: [{its revision, percent}]}`. Sorted by
 * tag, then configuration name.
 */
export function buildRollout(config: Pick<TrafficConfig, 'targets'>): Rollout {
  const configurations: ConfigurationRollout[] = [];
  for (const [tag, targets] of Object.entries(config.targets)) {
    for (const t of targets) {
      if (!t.latestRevision || t.percent === 0) continue;
      const c: ConfigurationRollout = { configurationName: t.configurationName ?? '', percent: t.percent, revisions: [], stepParams: {} };
      if (tag) c.tag = tag;
      c.revisions = [{ revisionName: t.revisionName, percent: t.percent }];
      configurations.push(c);
    }
  }
  return { configurations: sortRollout(configurations) };
}

/** Upstream `ConfigurationRollout.done`: fewer than two revisions. */
export function isConfigurationRolloutDone(c: ConfigurationRollout): boolean {
  return c.revisions.length < 2;
}

/** Upstream `Rollout.Done`: no configuration has two or more revisions. */
export function isRolloutDone(r: Rollout): boolean {
  return r.configurations.every(isConfigurationRolloutDone);
}

/** Upstream `RolloutsByTag`: the configuration rollouts of one group. */
export function rolloutsByTag(r: Rollout, tag: string): ConfigurationRollout[] {
  return r.configurations.filter((c) => (c.tag ?? '') === tag);
}

/**
 * Upstream `Rollout.Validate`: false when a configuration's percent is over 100, its step size is negative or above
 * its percent, or its revisions' percents do not sum to its percent.
 */
export function validateRollout(r: Rollout): boolean {
  return r.configurations.every((c) => {
    if (c.percent > 100) return false;
    const step = c.stepParams.stepSize ?? 0;
    if (step < 0 || step > c.percent) return false;
    return c.revisions.reduce((sum, rev) => sum + rev.percent, 0) === c.percent;
  });
}

/**
 * Upstream `adjustPercentage`: the revisions of `c` after its percent changed to `goal`. Goal 0 → none; an increase
 * goes to the newest revision; a decrease is taken from the oldest revisions first, dropping those cut to 0.
 */
export function adjustPercentage(goal: number, c: Pick<ConfigurationRollout, 'percent' | 'revisions'>): RevisionRollout[] {
  const revs = c.revisions.map((r) => ({ ...r }));
  if (goal === 0) return [];
  let diff = goal - c.percent;
  if (diff > 0) {
    const last = revs[revs.length - 1];
    if (last) last.percent += diff;
    return revs;
  }
  if (diff === 0) return revs;
  diff = -diff;
  let i = 0;
  while (diff > 0 && i < revs.length) {
    const r = revs[i]!;
    if (r.percent > diff) {
      r.percent -= diff;
      break;
    }
    diff -= r.percent;
    i++;
  }
  return revs.slice(i);
}

/**
 * Upstream `stepRevisions`: when `now >= nextStepTime` and there are two or more revisions, move `stepSize` to the
 * newest revision, taken from the second newest and then backwards (drained revisions are culled); the newest is
 * capped at the configuration's percent. With more than one revision left the next step is `now + stepDuration`;
 * otherwise the rollout is done and the step parameters are cleared. Exactly one step per call: a step that fell due
 * long ago is taken once and the schedule continues from now.
 */
export function stepRevisions(c: ConfigurationRollout, nowNs: bigint): ConfigurationRollout {
  const out = cloneConfiguration(c);
  if (nowNs < nsOf(c.stepParams.nextStepTimeNs) || c.revisions.length < 2) return out;
  const revs = out.revisions;
  const stepSize = c.stepParams.stepSize ?? 0;
  let remaining = stepSize;
  let writePos = revs.length - 1;
  let readPos = revs.length - 2;
  while (remaining > 0 && readPos >= 0) {
    const r = revs[readPos]!;
    if (r.percent > remaining) {
      r.percent -= remaining;
      break;
    }
    remaining -= r.percent;
    writePos--;
    readPos--;
  }
  const latest = { ...revs[revs.length - 1]! };
  latest.percent = Math.min(latest.percent + stepSize, c.percent);
  revs[writePos] = latest;
  out.revisions = revs.slice(0, writePos + 1);
  if (out.revisions.length > 1) {
    const next = BigInt.asIntN(64, nowNs + nsOf(c.stepParams.stepDurationNs));
    out.stepParams = { ...c.stepParams, ...params({ next }) };
    if (next === 0n) delete out.stepParams.nextStepTimeNs;
  } else {
    out.stepParams = {};
  }
  return out;
}

/** Options of `stepRolloutNs` / `stepRollout`: Tidal's gate on timed steps (pause, a revision of unknown readiness). */
export interface StepOptions {
  /** True → no timed step for this configuration in this pass (structural changes still apply). */
  hold?: (c: ConfigurationRollout) => boolean;
}

function stepConfig(goal: ConfigurationRollout, prev: ConfigurationRollout, nowNs: bigint, options: StepOptions): ConfigurationRollout {
  const ret: ConfigurationRollout = { ...cloneConfiguration(goal), stepParams: {} };
  const goalRev = goal.revisions[0];
  const prevRevs = prev.revisions.length > 0 ? adjustPercentage(goal.percent, prev) : [];
  // Upstream compares with prev.Revisions[pc-1], pc being the length before adjustPercentage; when a decrease
  // dropped old revisions that index is out of range and the Go controller panics. The newest remaining revision is
  // the same element whenever upstream does not panic.
  const prevNewest = prevRevs[prevRevs.length - 1];
  if (goalRev === undefined || prevNewest === undefined || goalRev.revisionName === prevNewest.revisionName) {
    if (prevRevs.length > 1) {
      ret.revisions = prevRevs;
      ret.stepParams = { ...prev.stepParams };
      // Before ObserveReady computed the step size there is nothing to step.
      if ((ret.stepParams.stepSize ?? 0) > 0 && !options.hold?.(ret)) return stepRevisions(ret, nowNs);
    }
    return ret;
  }
  // A new revision: a new rollout starts (also in the middle of one, stacking on it). Its 1 % comes from the newest
  // previous revision that still has traffic (drain newest first); revisions left at 0 % are dropped.
  for (let i = prevRevs.length - 1; i >= 0; i--) {
    const r = prevRevs[i]!;
    if (r.percent > 0) {
      r.percent--;
      break;
    }
  }
  ret.revisions = [...prevRevs.filter((r) => r.percent !== 0), { revisionName: goalRev.revisionName, percent: 1 }];
  ret.stepParams = params({ start: nowNs });
  return ret;
}

function groupByTag(configurations: readonly ConfigurationRollout[]): Map<string, ConfigurationRollout[]> {
  const m = new Map<string, ConfigurationRollout[]>();
  for (const c of configurations) {
    const tag = c.tag ?? '';
    const list = m.get(tag);
    if (list) list.push(c);
    else m.set(tag, [c]);
  }
  return m;
}

export interface StepResult {
  rollout: Rollout;
  /** The earliest `nextStepTime` (Unix ns) among the configurations that stepped; undefined when none is scheduled. */
  nextStepTimeNs?: bigint;
}

/**
 * Upstream `Rollout.Step` with Unix-ns time: merges the desired state (`buildRollout`) with the previous one. Without a
 * previous state (or an empty one) the desired state is returned as is. Otherwise, per tag:
 * - a tag the previous state lacks: its first configuration, as is (100 % at once);
 * - per configuration (both lists sorted by name): new → as is (if its percent is not 0); removed → dropped;
 *   percent 1 → as is (no rollout); percent 0 → dropped; above 1 → `stepConfig`: `adjustPercentage`, then either
 *   the same newest revision (keep the previous revisions and step params and, once a step size is known, step when
 *   due) or a new revision (a new rollout at 1 %, `starttime = now`).
 * The result is sorted by tag, then configuration name.
 */
export function stepRolloutNs(desired: Rollout, prev: Rollout | undefined, nowNs: bigint, options: StepOptions = {}): StepResult {
  if (prev === undefined || prev.configurations.length === 0) return { rollout: cloneRollout(desired) };
  const cur = groupByTag(desired.configurations);
  const old = groupByTag(prev.configurations);
  const ret: ConfigurationRollout[] = [];
  let next: bigint | undefined;
  for (const [tag, ccfgs] of cur) {
    const pcfgs = old.get(tag);
    if (pcfgs === undefined) {
      // Upstream keeps only the first configuration of a new tag (a tag names one target; the default group is
      // always in the previous state once it exists).
      ret.push(cloneConfiguration(ccfgs[0]!));
      continue;
    }
    let i = 0;
    let j = 0;
    while (i < ccfgs.length) {
      const c = ccfgs[i]!;
      const p = pcfgs[j];
      if (p === undefined) {
        ret.push(cloneConfiguration(c));
        i++;
      } else if (c.configurationName === p.configurationName) {
        if (c.percent > 1) {
          const sc = stepConfig(c, p, nowNs, options);
          ret.push(sc);
          const nst = nsOf(sc.stepParams.nextStepTimeNs);
          if (nst > 0n && (next === undefined || nst < next)) next = nst;
        } else if (c.percent === 1) {
          ret.push(cloneConfiguration(c));
        }
        i++;
        j++;
      } else if (byteOrder(c.configurationName, p.configurationName) < 0) {
        if (c.percent !== 0) ret.push(cloneConfiguration(c));
        i++;
      } else {
        j++;
      }
    }
  }
  const rollout = { configurations: sortRollout(ret) };
  return next === undefined ? { rollout } : { rollout, nextStepTimeNs: next };
}

/** `stepRolloutNs` with workflow time (Unix ms); the next step time is read with `nextStepAt`. */
export function stepRollout(desired: Rollout, prev: Rollout | undefined, nowMs: number, options: StepOptions = {}): Rollout {
  return stepRolloutNs(desired, prev, msToNs(nowMs), options).rollout;
}

/** Go's float64 → int64 conversion on amd64: truncation; NaN and out-of-range values give the minimum int64. */
function goFloatToInt64(x: number): bigint {
  if (!Number.isFinite(x) || x >= 2 ** 63 || x < -(2 ** 63)) return -(2n ** 63n);
  return BigInt(Math.trunc(x));
}

/** Go's math.Round: half away from zero. */
function goRound(x: number): number {
  const t = Math.trunc(x);
  return Math.abs(x - t) >= 0.5 ? t + Math.sign(x) : t;
}

/** Go's `time.Duration(ns).Seconds()`. */
function durationSeconds(ns: bigint): number {
  return Number(ns / nsPerSecond) + Number(ns % nsPerSecond) / 1e9;
}

/**
 * Upstream `computeProperties`, in Go's float64 arithmetic: with `minStepSec` the time the 1 % step took (≥ 1) and
 * the rollout duration in seconds,
 * `durationSecs = max(1, duration − minStepSec)`, `numSteps = min(max(1, durationSecs / minStepSec), percent − 1)`,
 * `stepSize = round((percent − 1) / numSteps)`, `stepDuration = durationSecs / numSteps` s, `nextStepTime = now + stepDuration`.
 */
export function computeProperties(c: ConfigurationRollout, nowNs: bigint, minStepSec: number, rolloutSecs: number): ConfigurationRollout {
  const durationSecs = Math.max(1, rolloutSecs - minStepSec);
  let numSteps = Math.max(1, durationSecs / minStepSec);
  const remPercent = c.percent - 1;
  if (remPercent < numSteps) numSteps = remPercent;
  const stepSize = goRound(remPercent / numSteps);
  const stepDuration = (durationSecs / numSteps) * 1e9;
  const out = cloneConfiguration(c);
  out.stepParams = params({
    start: nsOf(c.stepParams.startTimeNs),
    duration: goFloatToInt64(stepDuration),
    next: goFloatToInt64(Number(nowNs) + stepDuration),
    size: Number(goFloatToInt64(stepSize)),
  });
  return out;
}

function awaitingReadiness(c: ConfigurationRollout): boolean {
  return nsOf(c.stepParams.stepDurationNs) === 0n && nsOf(c.stepParams.startTimeNs) > 0n;
}

/**
 * Upstream `Rollout.ObserveReady` with Unix-ns time: every configuration with a start time and no step duration yet
 * (its 1 % step was just observed ready) gets its step size, step duration and next step time from
 * `computeProperties`, with `minStepSec = max(1, ceil(now − starttime))` seconds. Call it when the KIngress is Ready
 * at its latest generation and the Route's IngressReady is not True, before `stepRollout`.
 */
export function observeReadyNs(r: Rollout, nowNs: bigint, rolloutSecs: number): Rollout {
  return {
    configurations: r.configurations.map((c) => {
      if (!awaitingReadiness(c)) return cloneConfiguration(c);
      const minStepSec = Math.max(1, Math.ceil(durationSeconds(nowNs - nsOf(c.stepParams.startTimeNs))));
      return computeProperties(c, nowNs, minStepSec, rolloutSecs);
    }),
  };
}

/** `observeReadyNs` with workflow time (Unix ms). */
export function observeReady(r: Rollout, nowMs: number, rolloutSecs: number): Rollout {
  return observeReadyNs(r, msToNs(nowMs), rolloutSecs);
}

/** When a configuration's current rollout started (Unix ms, rounded down), if one is running. */
export function rolloutStartMs(c: ConfigurationRollout): number | undefined {
  const start = nsOf(c.stepParams.startTimeNs);
  return start > 0n ? Number(start / nsPerMs) : undefined;
}

/**
 * How early the durable timer of a rollout step fires (ms): Temporal's timer queue, the workflow task and the steps
 * before the Route's take tens of ms, so the timer is armed this much ahead and the Route's step waits out the rest
 * on its own clock (`stepWaitMs`), then takes the step on time. A timer that fires late takes it at once.
 */
export const RolloutWakeLeadMs = 150;

/**
 * How long the Route's step should wait before planning (ms): until the earliest `nextStepTime` of `r` when that is
 * at most `RolloutWakeLeadMs` (+ slack) away — the pass the early timer started; 0 otherwise (nothing due that soon,
 * or already due).
 */
export function stepWaitMs(r: Rollout | undefined, nowMs: number): number {
  if (r === undefined) return 0;
  const due = nextStepAt(r);
  if (due === undefined) return 0;
  const wait = due - nowMs;
  return wait > 0 && wait <= RolloutWakeLeadMs + 50 ? wait : 0;
}

/**
 * When the Route's workflow must next wake for its rollout (Unix ms, rounded up so that `now >= nextStepTime` holds
 * then): the earliest `nextStepTime` of a configuration still rolling out and, when `rolloutSecs` is given, the
 * readiness bound (`firstStepBoundSeconds`) of every configuration whose 1 % step has not been observed ready yet.
 * Undefined when nothing is scheduled.
 */
export function nextStepAt(r: Rollout, rolloutSecs?: number): number | undefined {
  let next: bigint | undefined;
  const consider = (ns: bigint): void => {
    if (ns > 0n && (next === undefined || ns < next)) next = ns;
  };
  for (const c of r.configurations) {
    if (isConfigurationRolloutDone(c)) continue;
    consider(nsOf(c.stepParams.nextStepTimeNs));
    if (rolloutSecs !== undefined && rolloutSecs > 0 && awaitingReadiness(c)) {
      consider(nsOf(c.stepParams.startTimeNs) + BigInt(firstStepBoundSeconds(rolloutSecs)) * nsPerSecond);
    }
  }
  return next === undefined ? undefined : nsToMsCeil(next);
}

/**
 * The Route's rollout duration in whole seconds (route_lifecycle.go `RolloutDuration`, reconcile_resources.go): the
 * annotation `serving.knative.dev/rollout-duration` (else the legacy `rolloutDuration`; the first key present wins,
 * even when empty) as a Go duration truncated to seconds; when absent, empty, unparseable or 0 s, config-network
 * `rollout-duration`. So `0s` cannot switch off a cluster default, while a negative value (which the webhook rejects)
 * does. The result is ≥ 0; 0 means no gradual rollout (the desired traffic is programmed at once).
 */
export function rolloutDurationSeconds(
  annotations: Readonly<Record<string, string>> | undefined,
  network: Pick<NetworkConfig, 'rolloutDurationSeconds'>,
): number {
  const key = [Annotations.rolloutDuration, Annotations.rolloutDurationLegacy].find(
    (k) => annotations !== undefined && Object.hasOwn(annotations, k),
  );
  let seconds = 0;
  const value = key === undefined ? '' : (annotations?.[key] ?? '');
  if (value !== '') {
    const ns = parseGoDuration(value);
    if (ns !== undefined) seconds = Number(ns / nsPerSecond);
  }
  if (seconds === 0) seconds = network.rolloutDurationSeconds;
  return Math.max(0, seconds);
}

// ---------------------------------------------------------------------------------------------------------------
// Traffic with the rollout applied

/** Revision targets as the KIngress and status.traffic read them (`RevisionTarget` of traffic.ts). */
interface LatestTarget {
  tag?: string;
  configurationName?: string;
  revisionName: string;
  latestRevision: boolean;
}

/**
 * The revisions a KIngress path splits a target into (upstream `makeBaseIngressPath`): for a `latestRevision` target
 * whose configuration has a rollout in this group with two or more revisions — or, Tidal's addition for an aborted or
 * rolled-back rollout, a single revision other than the target's — the rollout's revisions with their percents;
 * otherwise undefined (the target's own revision and percent).
 */
export function rolloutSplits(rollout: Rollout, group: string, t: LatestTarget): RevisionRollout[] | undefined {
  if (!t.latestRevision) return undefined;
  const ro = rolloutsByTag(rollout, group).find((c) => c.configurationName === (t.configurationName ?? ''));
  if (ro === undefined || ro.revisions.length === 0) return undefined;
  if (ro.revisions.length === 1 && ro.revisions[0]!.revisionName === t.revisionName) return undefined;
  return ro.revisions.map((r) => ({ ...r }));
}

/** True when the rollout sends a configuration's traffic to a revision other than the desired one (abort, rollback). */
function isHeld(rollout: Rollout, desired: Rollout): boolean {
  return rollout.configurations.some((c) => {
    const want = desired.configurations.find((d) => d.configurationName === c.configurationName && (d.tag ?? '') === (c.tag ?? ''));
    return want !== undefined && isConfigurationRolloutDone(c) && c.revisions.length === 1 && newest(c)?.revisionName !== newest(want)?.revisionName;
  });
}

/**
 * Route `status.traffic` with the rollout applied (upstream `GetRevisionTrafficTargets(ctx, r, effectiveRO)`, which
 * route.go calls only while a rollout is in progress): each `latestRevision` entry whose configuration has a rollout
 * in the entry's group (its tag, else the default group) becomes one entry per rollout revision with the rollout's
 * percent — for a tagged entry that is the tag group's share, as upstream. When the rollout is done and holds no
 * configuration on another revision (Tidal's abort and rollback) this is plain `statusTraffic`.
 */
export function applyRolloutToTraffic(
  config: Pick<TrafficConfig, 'revisionTargets' | 'targets'>,
  rollout: Rollout,
  tagUrls: Readonly<Record<string, string>> = {},
): TrafficTarget[] {
  const plain = statusTraffic(config, tagUrls);
  if (isRolloutDone(rollout) && !isHeld(rollout, buildRollout(config))) return plain;
  const out: TrafficTarget[] = [];
  config.revisionTargets.forEach((t, i) => {
    const base = plain[i]!;
    const ro = t.latestRevision ? rolloutsByTag(rollout, t.tag ?? '').find((c) => c.configurationName === (t.configurationName ?? '')) : undefined;
    if (ro === undefined) {
      out.push(base);
      return;
    }
    for (const r of ro.revisions) out.push({ ...base, revisionName: r.revisionName, percent: r.percent });
  });
  return out;
}

// ---------------------------------------------------------------------------------------------------------------
// Tidal: control annotation, rollback, the bound on the 1 % step

/** The values of the control annotation `tidal.dev/rollout`. */
export type RolloutAction = 'pause' | 'resume' | 'promote' | 'abort';

export interface RolloutControl {
  action: RolloutAction;
  /** `<action>:<revision>`: the action applies only while that revision is the one being rolled out. */
  revisionName?: string;
  /** The annotation's value when it could not be parsed (then `action` is `resume`). */
  invalid?: string;
}

const actions: readonly RolloutAction[] = ['pause', 'resume', 'promote', 'abort'];

/**
 * The control annotation `tidal.dev/rollout` of a Route (a Service's annotations reach its Route): `pause`,
 * `resume`, `promote` or `abort`, optionally `:<revision>`; surrounding spaces and the action's case are ignored.
 * Absent or empty → `resume`. Anything else → `resume` with `invalid` set (the Route says it ignored the value).
 */
export function parseRolloutControl(annotations: Readonly<Record<string, string>> | undefined): RolloutControl {
  const raw = annotations?.[TidalAnnotations.rollout];
  if (raw === undefined || raw.trim() === '') return { action: 'resume' };
  const m = /^([A-Za-z]+)(?::([a-z0-9]([-a-z0-9.]*[a-z0-9])?))?$/u.exec(raw.trim());
  const action = m?.[1]?.toLowerCase() as RolloutAction | undefined;
  if (m === null || action === undefined || !actions.includes(action)) return { action: 'resume', invalid: raw };
  return m[2] === undefined ? { action } : { action, revisionName: m[2] };
}

function controlApplies(control: RolloutControl | undefined, action: RolloutAction, revisionName: string | undefined): boolean {
  if (control?.action !== action) return false;
  return control.revisionName === undefined || control.revisionName === revisionName;
}

/** Promote: every rollout in progress (or those `only` selects) finishes now — the newest revision gets the whole percent. */
export function promoteRollout(r: Rollout, only: (c: ConfigurationRollout) => boolean = () => true): Rollout {
  return {
    configurations: r.configurations.map((c) => {
      const latest = newest(c);
      if (isConfigurationRolloutDone(c) || latest === undefined || !only(c)) return cloneConfiguration(c);
      return { ...cloneConfiguration(c), revisions: [{ revisionName: latest.revisionName, percent: c.percent }], stepParams: {} };
    }),
  };
}

/**
 * Abort: every rollout in progress (or those `only` selects) goes back to its oldest revision — the last one that had
 * all of the configuration's traffic before the rollout (or stack of rollouts) began — with no further steps.
 */
export function abortRollout(r: Rollout, only: (c: ConfigurationRollout) => boolean = () => true): Rollout {
  return {
    configurations: r.configurations.map((c) => {
      const oldest = c.revisions[0];
      if (isConfigurationRolloutDone(c) || oldest === undefined || !only(c)) return cloneConfiguration(c);
      return { ...cloneConfiguration(c), revisions: [{ revisionName: oldest.revisionName, percent: c.percent }], stepParams: {} };
    }),
  };
}

/**
 * Pause: the step of `desired` over `prev` with no timed step taken (`stepRollout` with every configuration held).
 * Percent changes and a new revision's 1 % still apply; the clock keeps running, so on resume a step that fell due
 * while paused is taken at once and the schedule continues from there.
 */
export function pauseRollout(desired: Rollout, prev: Rollout | undefined, nowMs: number): Rollout {
  return stepRollout(desired, prev, nowMs, { hold: () => true });
}

/** What Tidal knows of a Revision: its Ready condition (a Revision object will do). */
export interface RevisionLike {
  status?: { conditions?: readonly Pick<Condition, 'type' | 'status' | 'reason' | 'message'>[] } | undefined;
}

/** A Revision's Ready condition; Unknown while it has none yet (just created), undefined when there is no such Revision. */
function readyCondition(revisions: Readonly<Record<string, RevisionLike>> | undefined, name: string) {
  const rev = revisions !== undefined && Object.hasOwn(revisions, name) ? revisions[name] : undefined;
  if (rev === undefined) return undefined;
  return rev.status?.conditions?.find((c) => c.type === 'Ready') ?? { type: 'Ready', status: 'Unknown' as const };
}

/** Why a configuration's traffic is held on an older revision. */
export interface RolloutHold {
  configurationName: string;
  tag?: string;
  /** The revision the Route's traffic names (the configuration's latest ready revision). */
  desiredRevision: string;
  /** The revision that gets the traffic instead. */
  servingRevision: string;
  cause: 'abort' | 'rollback';
  reason: 'RolloutAborted' | 'RolloutRolledBack';
  message: string;
}

function holdMessage(h: Omit<RolloutHold, 'message' | 'reason'>, detail: string): string {
  return h.cause === 'abort'
    ? `The rollout of revision "${h.desiredRevision}" (${label(h)}) was aborted by ${TidalAnnotations.rollout}; its traffic stays on revision "${h.servingRevision}".`
    : `Revision "${h.desiredRevision}" (${label(h)}) is not ready${detail}; its rollout was rolled back to revision "${h.servingRevision}".`;
}

/**
 * Automatic rollback: every rollout in progress whose newest revision's Ready condition is False goes back to its
 * oldest revision (as `abortRollout`), with a hold saying why. Revisions absent from `revisions`, or Ready True or
 * Unknown, are left alone (Unknown only holds the timed steps; see `planRollout`).
 */
export function rollbackRollout(r: Rollout, revisions: Readonly<Record<string, RevisionLike>>): { rollout: Rollout; holds: RolloutHold[] } {
  const failed = (c: ConfigurationRollout): boolean => readyCondition(revisions, newest(c)?.revisionName ?? '')?.status === 'False';
  const holds = r.configurations
    .filter((c) => !isConfigurationRolloutDone(c) && failed(c))
    .map((c): RolloutHold => {
      const desiredRevision = newest(c)!.revisionName;
      const cond = readyCondition(revisions, desiredRevision);
      const why = [cond?.reason, cond?.message].filter((x) => x).join(': ');
      const hold = {
        configurationName: c.configurationName,
        ...(c.tag ? { tag: c.tag } : {}),
        desiredRevision,
        servingRevision: c.revisions[0]!.revisionName,
        cause: 'rollback' as const,
      };
      return { ...hold, reason: 'RolloutRolledBack', message: holdMessage(hold, why ? `: ${why}` : '') };
    });
  return { rollout: abortRollout(r, failed), holds };
}

/**
 * How long the 1 % step may go unobserved (Knative waits for ever: knative/serving#10710): `max(10, ceil(duration / 10))`
 * seconds. Past it, `planRollout` schedules the rest as if the 1 % step had become ready at the bound.
 */
export function firstStepBoundSeconds(rolloutSecs: number): number {
  return Math.max(10, Math.ceil(rolloutSecs / 10));
}

/** A change worth a Kubernetes Event on the Route (and a line in the workflow's history). */
export interface RolloutEvent {
  type: 'Normal' | 'Warning';
  reason:
    | 'RolloutStarted'
    | 'RolloutScheduled'
    | 'RolloutStep'
    | 'RolloutFinished'
    | 'RolloutPromoted'
    | 'RolloutAborted'
    | 'RolloutRolledBack'
    | 'RolloutReadinessNotObserved'
    | 'RolloutControlInvalid';
  message: string;
}

export interface RolloutPlanInput {
  /** `buildRollout(trafficConfig)`. */
  desired: Rollout;
  /** The KIngress's `networking.internal.knative.dev/rollout` annotation; undefined when there is no KIngress yet. */
  previousAnnotation: string | undefined;
  /** False → the KIngress is about to be created: the desired state as is (the first revision gets 100 %). */
  ingressExists: boolean;
  /** The KIngress has observed its generation and is Ready (networking `Ingress.IsReady`). */
  ingressReady: boolean;
  /** The Route's IngressReady condition is True (as last written). */
  routeIngressReady: boolean;
  /** Workflow time, Unix ms. */
  nowMs: number;
  /** `rolloutDurationSeconds(route annotations, config-network)`. */
  durationSeconds: number;
  /** `parseRolloutControl(route annotations)`; default resume. */
  control?: RolloutControl;
  /** The Revisions by name (at least each rollout's newest; `TrafficConfig.revisions` has them). */
  revisions?: Readonly<Record<string, RevisionLike>>;
}

export interface RolloutPlan {
  /** The state to program into the KIngress (`makeIngress(..., { rollout })`) and show in status.traffic. */
  rollout: Rollout;
  /** Its annotation text. */
  annotation: string;
  /** Durable timer: the next pass is due then (Unix ms); undefined → no timer (steady, paused or held). */
  nextWakeAtMs?: number;
  /** Some configuration has two or more revisions: Route IngressReady Unknown (`RolloutInProgress` or `RolloutPaused`). */
  inProgress: boolean;
  /** The steps are paused by the control annotation. */
  paused: boolean;
  /** Configurations held on an older revision (abort, rollback): Route AllTrafficAssigned False with the first's reason. */
  holds: RolloutHold[];
  /** One per change since the previous annotation. */
  events: RolloutEvent[];
}

function percents(c: ConfigurationRollout | undefined): string {
  return (c?.revisions ?? []).map((r) => `${r.revisionName} ${r.percent}%`).join(', ');
}

function at(ns: bigint): string {
  return new Date(nsToMsCeil(ns)).toISOString();
}

function seconds(ns: bigint): string {
  return `${Number(ns) / 1e9}s`;
}

function find(r: Rollout | undefined, c: Pick<ConfigurationRollout, 'configurationName' | 'tag'>): ConfigurationRollout | undefined {
  return r?.configurations.find((p) => p.configurationName === c.configurationName && (p.tag ?? '') === (c.tag ?? ''));
}

/** Events for what changed from `prev` to `next` (beyond those `planRollout` raises itself). */
function changeEvents(prev: Rollout | undefined, next: Rollout, emitted: ReadonlySet<string>): RolloutEvent[] {
  const events: RolloutEvent[] = [];
  for (const c of next.configurations) {
    const p = find(prev, c);
    const latest = newest(c);
    if (p === undefined || latest === undefined || emitted.has(`${c.tag ?? ''}/${c.configurationName}`)) continue;
    const event = (reason: RolloutEvent['reason'], message: string): void => {
      events.push({ type: 'Normal', reason, message: `${label(c)}: ${message}` });
    };
    const nextStep = c.stepParams.nextStepTimeNs ? `, next step at ${at(nsOf(c.stepParams.nextStepTimeNs))}` : '';
    if (percents(p) === percents(c)) {
      if (!p.stepParams.stepDurationNs && c.stepParams.stepDurationNs) {
        const every = seconds(nsOf(c.stepParams.stepDurationNs));
        event('RolloutScheduled', `${latest.revisionName} moves ${c.stepParams.stepSize ?? 0}% every ${every}${nextStep}.`);
      }
    } else if (c.revisions.length > 1 && newest(p)?.revisionName !== latest.revisionName) {
      event('RolloutStarted', `rollout of ${latest.revisionName} started: ${percents(c)}.`);
    } else if (c.revisions.length > 1) {
      const before = p.revisions.find((r) => r.revisionName === latest.revisionName)?.percent ?? 0;
      event('RolloutStep', `${latest.revisionName} ${before}% → ${latest.percent}% (${percents(c)})${nextStep}.`);
    } else if (p.revisions.length > 1 && newest(p)?.revisionName === latest.revisionName) {
      event('RolloutFinished', `rollout of ${latest.revisionName} finished at ${latest.percent}%.`);
    }
  }
  return events;
}

/**
 * One rollout pass of a Route (upstream `reconcileRollout` plus Tidal's rules), in this order:
 * 1. no KIngress yet, or a duration ≤ 0 → the desired state (100 % at once);
 * 2. `prev` = the parsed annotation (`parseRolloutAnnotation`);
 * 3. the KIngress Ready and the Route's IngressReady not True → `observeReady`; a configuration whose 1 % step is
 *    still unobserved past `firstStepBoundSeconds` is scheduled as if it had become ready at the bound (event
 *    `RolloutReadinessNotObserved`) — the rollout never sticks at 1 %;
 * 4. `stepRollout`, with timed steps held for a configuration while the control annotation pauses it, or while its
 *    newest revision's Ready is Unknown;
 * 5. rollback: a rollout whose newest revision's Ready is False goes back to its oldest revision;
 * 6. `abort` (applying to the newest revision) → back to the oldest revision; `promote` → the newest gets it all;
 * 7. holds: configurations whose traffic is on another revision than the desired one, with the cause (the annotation
 *    still says abort, or the desired revision is not ready). Later passes keep the hold without any stored flag:
 *    the new rollout `stepRollout` starts towards the held revision is undone again in 5–6.
 */
export function planRollout(input: RolloutPlanInput): RolloutPlan {
  const { desired, nowMs, durationSeconds: secs, control } = input;
  const events: RolloutEvent[] = [];
  if (control?.invalid !== undefined) {
    events.push({
      type: 'Warning',
      reason: 'RolloutControlInvalid',
      message: `Ignoring ${TidalAnnotations.rollout}=${JSON.stringify(control.invalid)}: expected pause, resume, promote or abort, optionally followed by :<revision>.`,
    });
  }
  const steady = (rollout: Rollout): RolloutPlan => ({
    rollout,
    annotation: rolloutAnnotation(rollout),
    inProgress: !isRolloutDone(rollout),
    paused: false,
    holds: [],
    events,
  });
  if (!input.ingressExists || secs <= 0) return steady(cloneRollout(desired));

  const nowNs = msToNs(nowMs);
  const prev = parseRolloutAnnotation(input.previousAnnotation);
  let observed = prev;
  if (observed !== undefined) {
    if (input.ingressReady && !input.routeIngressReady) observed = observeReadyNs(observed, nowNs, secs);
    const bound = BigInt(firstStepBoundSeconds(secs)) * nsPerSecond;
    observed = {
      configurations: observed.configurations.map((c) => {
        if (!awaitingReadiness(c) || nowNs - nsOf(c.stepParams.startTimeNs) < bound) return c;
        events.push({
          type: 'Warning',
          reason: 'RolloutReadinessNotObserved',
          message: `${label(c)}: the 1% step of ${newest(c)?.revisionName ?? '?'} was not observed ready within ${firstStepBoundSeconds(secs)}s; continuing as if it took that long.`,
        });
        return computeProperties(c, nowNs, firstStepBoundSeconds(secs), secs);
      }),
    };
  }

  const revisionName = (c: ConfigurationRollout): string | undefined => newest(c)?.revisionName;
  const readiness = (c: ConfigurationRollout): string | undefined => readyCondition(input.revisions, revisionName(c) ?? '')?.status;
  const paused = (c: ConfigurationRollout): boolean => controlApplies(control, 'pause', revisionName(c));
  const stepped = stepRolloutNs(desired, observed, nowNs, { hold: (c) => paused(c) || readiness(c) === 'Unknown' }).rollout;

  const back = rollbackRollout(stepped, input.revisions ?? {});
  const emitted = new Set<string>();
  for (const h of back.holds) {
    const before = find(prev, h);
    if (before !== undefined && !isConfigurationRolloutDone(before))
      events.push({ type: 'Warning', reason: 'RolloutRolledBack', message: h.message });
    emitted.add(`${h.tag ?? ''}/${h.configurationName}`);
  }
  const abortSel = (c: ConfigurationRollout): boolean => controlApplies(control, 'abort', revisionName(c));
  const promoteSel = (c: ConfigurationRollout): boolean => controlApplies(control, 'promote', revisionName(c));
  for (const c of back.rollout.configurations) {
    if (isConfigurationRolloutDone(c)) continue;
    const key = `${c.tag ?? ''}/${c.configurationName}`;
    const before = find(prev, c);
    const wasRolling = before !== undefined && !isConfigurationRolloutDone(before);
    if (abortSel(c) && wasRolling) {
      events.push({
        type: 'Warning',
        reason: 'RolloutAborted',
        message: `${label(c)}: rollout of ${revisionName(c)} aborted; traffic back on ${c.revisions[0]!.revisionName}.`,
      });
      emitted.add(key);
    } else if (promoteSel(c) && !abortSel(c)) {
      events.push({ type: 'Normal', reason: 'RolloutPromoted', message: `${label(c)}: rollout of ${revisionName(c)} promoted to ${c.percent}%.` });
      emitted.add(key);
    }
  }
  const rollout = promoteRollout(abortRollout(back.rollout, abortSel), promoteSel);

  const holds: RolloutHold[] = [];
  for (const c of rollout.configurations) {
    const want = find(desired, c);
    const serving = newest(c)?.revisionName;
    const wanted = want !== undefined ? newest(want)?.revisionName : undefined;
    if (wanted === undefined || serving === undefined || wanted === serving || !isConfigurationRolloutDone(c)) continue;
    const rolledBack = back.holds.find((h) => h.configurationName === c.configurationName && (h.tag ?? '') === (c.tag ?? ''));
    if (rolledBack !== undefined) {
      holds.push(rolledBack);
      continue;
    }
    const base = { configurationName: c.configurationName, ...(c.tag ? { tag: c.tag } : {}), desiredRevision: wanted, servingRevision: serving };
    if (controlApplies(control, 'abort', wanted)) {
      holds.push({ ...base, cause: 'abort', reason: 'RolloutAborted', message: holdMessage({ ...base, cause: 'abort' }, '') });
    } else {
      // Why it failed, while it still has (a Revision's readers are poked on its message only when Ready is False).
      const cond = readyCondition(input.revisions, wanted);
      const detail = cond?.status === 'False' && cond.message ? `: ${cond.message}` : '';
      holds.push({ ...base, cause: 'rollback', reason: 'RolloutRolledBack', message: holdMessage({ ...base, cause: 'rollback' }, detail) });
    }
  }

  events.push(...changeEvents(prev, rollout, emitted));
  const anyPaused = rollout.configurations.some((c) => !isConfigurationRolloutDone(c) && paused(c));
  const wakeable: Rollout = { configurations: rollout.configurations.filter((c) => !paused(c) && readiness(c) !== 'Unknown') };
  const wake = nextStepAt(wakeable, secs);
  const plan: RolloutPlan = {
    rollout,
    annotation: rolloutAnnotation(rollout),
    inProgress: !isRolloutDone(rollout),
    paused: anyPaused,
    holds,
    events,
  };
  if (wake !== undefined) plan.nextWakeAtMs = wake;
  return plan;
}
