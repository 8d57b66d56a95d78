// Traffic resolution of a Route (knative/serving pkg/reconciler/route/traffic/{traffic,errors}.go; the rollout is rollout.ts).
// Pure: the Configurations and Revisions are looked up in maps the caller passes in.
import { SERVING_API_VERSION } from '../api/kinds.js';
import { Labels } from '../api/labels.js';
import { hasActiveCondition, isActivationRequired, isRevisionReady } from '../api/lifecycle/revision.js';
import {
  markConfigurationFailed,
  markConfigurationNotReady,
  markMissingTrafficTarget,
  markRevisionFailed,
  markRevisionNotOwned,
  markRevisionNotReady,
  type RouteStatus,
} from '../api/lifecycle/route.js';
import type { Configuration, Revision, Route, TrafficTarget } from '../api/serving.js';
import { isReserve } from './deployment.js';
import { isH2C } from './queue.js';

/** The unnamed (untagged) traffic group. */
export const DefaultTarget = '';

/** A traffic target flattened to one Revision (upstream `RevisionTarget`). */
export interface RevisionTarget {
  tag?: string;
  revisionName: string;
  /** The Configuration targeted (configuration targets) or the Revision's `serving.knative.dev/configuration` label. */
  configurationName?: string;
  latestRevision: boolean;
  percent: number;
  /** The Revision's transport: `h2c` when its serving port is named h2c. */
  protocol: 'http1' | 'h2c';
}

/** A reference to a Configuration or Revision that was named in traffic but does not exist (for tracking). */
export interface MissingTarget {
  apiVersion: string;
  kind: 'Configuration' | 'Revision';
  name: string;
  namespace: string;
}

/** Upstream `traffic.Config` (without visibility, which the caller resolves). Plain JSON. */
export interface TrafficConfig {
  /** Per traffic name (`''` = the default target, else a tag): the consolidated revision targets. */
  targets: Record<string, RevisionTarget[]>;
  /** Every spec entry at Revision level, duplicates (same tag + revision + latestRevision) merged: status.traffic. */
  revisionTargets: RevisionTarget[];
  /** The Configurations referenced directly or through a Revision's label, by name. */
  configurations: Record<string, Configuration>;
  /** The Revisions referenced directly or as a Configuration's latestReadyRevisionName, by name. */
  revisions: Record<string, Revision>;
  missingTargets: MissingTarget[];
}

/** Why a traffic target cannot be programmed (upstream `TargetError`s). */
export type TrafficTargetError =
  | { type: 'Missing'; kind: 'Configuration' | 'Revision'; name: string }
  | { type: 'UnreadyConfiguration'; name: string; failed: boolean }
  | { type: 'UnreadyRevision'; name: string; failed: boolean }
  | { type: 'RevisionNotOwned'; name: string; revisionService: string | undefined; routeService: string };

export interface TrafficResult {
  /**
   * Always present: on an error `targets` is empty and `revisionTargets` too (nothing may be programmed), but the
   * referenced and missing objects are still listed so the caller can track them.
   */
  config: TrafficConfig;
  /** The deferred target error, if any: the first one, unless a later one is a failure. */
  error?: TrafficTargetError;
}

/** True when the error is a failure (AllTrafficAssigned False) rather than a wait (Unknown). */
export function isTargetFailure(err: TrafficTargetError): boolean {
  switch (err.type) {
    case 'Missing':
    case 'RevisionNotOwned':
      return true;
    case 'UnreadyConfiguration':
    case 'UnreadyRevision':
      return err.failed;
  }
}

/** Upstream `TargetError.MarkBadTrafficTarget`: the AllTrafficAssigned transition for this error. */
export function markBadTrafficTarget(status: RouteStatus, err: TrafficTargetError, now: string): void {
  switch (err.type) {
    case 'Missing':
      markMissingTrafficTarget(status, err.kind, err.name, now);
      break;
    case 'UnreadyConfiguration':
      if (err.failed) markConfigurationFailed(status, err.name, now);
      else markConfigurationNotReady(status, err.name, now);
      break;
    case 'UnreadyRevision':
      if (err.failed) markRevisionFailed(status, err.name, now);
      else markRevisionNotReady(status, err.name, now);
      break;
    case 'RevisionNotOwned':
      markRevisionNotOwned(status, err.name, err.revisionService, err.routeService, now);
      break;
  }
}

/** The Ready condition's status of an object (Unknown when absent). */
function readyStatus(obj: { status?: { conditions?: { type: string; status: string }[] } }): string {
  return obj.status?.conditions?.find((c) => c.type === 'Ready')?.status ?? 'Unknown';
}

class Builder {
  readonly targets: Record<string, RevisionTarget[]> = {};
  revisionTargets: RevisionTarget[] = [];
  readonly configurations: Record<string, Configuration> = {};
  readonly revisions: Record<string, Revision> = {};
  readonly missingTargets: MissingTarget[] = [];
  deferred: TrafficTargetError | undefined;

  constructor(
    private readonly route: Route,
    private readonly configLister: Readonly<Record<string, Configuration>>,
    private readonly revLister: Readonly<Record<string, Revision>>,
    private readonly awaitsPods: (rev: Revision) => boolean,
  ) {}

  private missing(kind: 'Configuration' | 'Revision', name: string): TrafficTargetError {
    this.missingTargets.push({ apiVersion: SERVING_API_VERSION, kind, name, namespace: this.route.metadata.namespace ?? '' });
    return { type: 'Missing', kind, name };
  }

  private getConfiguration(name: string): Configuration | TrafficTargetError {
    const cached = this.configurations[name];
    if (cached) return cached;
    const cfg = Object.hasOwn(this.configLister, name) ? this.configLister[name] : undefined;
    if (!cfg) return this.missing('Configuration', name);
    this.configurations[name] = cfg;
    return cfg;
  }

  private getRevision(name: string): Revision | TrafficTargetError {
    const cached = this.revisions[name];
    if (cached) return cached;
    const rev = Object.hasOwn(this.revLister, name) ? this.revLister[name] : undefined;
    if (!rev) return this.missing('Revision', name);
    this.revisions[name] = rev;
    return rev;
  }

  defer(err: TrafficTargetError): void {
    if (this.deferred === undefined || isTargetFailure(err)) this.deferred = err;
  }

  add(tt: TrafficTarget): void {
    let err: TrafficTargetError | undefined;
    if (tt.revisionName) err = this.addRevisionTarget(tt, tt.revisionName);
    else if (tt.configurationName) err = this.addConfigurationTarget(tt, tt.configurationName);
    if (err) this.defer(err);
  }

  private flattened(tt: TrafficTarget, rev: Revision, configurationName: string | undefined): RevisionTarget {
    const t: RevisionTarget = {
      revisionName: rev.metadata.name ?? '',
      latestRevision: tt.latestRevision ?? (tt.revisionName ?? '') === '',
      percent: tt.percent ?? 0,
      protocol: isH2C(rev) ? 'h2c' : 'http1',
    };
    if (tt.tag) t.tag = tt.tag;
    if (configurationName !== undefined) t.configurationName = configurationName;
    return t;
  }

  private addConfigurationTarget(tt: TrafficTarget, name: string): TrafficTargetError | undefined {
    const cfg = this.getConfiguration(name);
    if ('type' in cfg) return cfg;
    const latestReady = cfg.status?.latestReadyRevisionName ?? '';
    if (latestReady === '') return { type: 'UnreadyConfiguration', name, failed: readyStatus(cfg) === 'False' };
    const rev = this.getRevision(latestReady);
    if ('type' in rev) return rev;
    if (this.awaitsPods(rev)) return { type: 'UnreadyRevision', name: latestReady, failed: false };
    this.addFlattened(this.flattened(tt, rev, name));
    return undefined;
  }

  private addRevisionTarget(tt: TrafficTarget, name: string): TrafficTargetError | undefined {
    const rev = this.getRevision(name);
    if ('type' in rev) return rev;
    const routeService = this.route.metadata.labels?.[Labels.service];
    if (routeService) {
      const revisionService = rev.metadata.labels?.[Labels.service];
      if (revisionService !== routeService) return { type: 'RevisionNotOwned', name, revisionService, routeService };
    }
    if (!isRevisionReady(rev)) return { type: 'UnreadyRevision', name, failed: readyStatus(rev) === 'False' };
    if (this.awaitsPods(rev)) return { type: 'UnreadyRevision', name, failed: false };
    const configName = rev.metadata.labels?.[Labels.configuration];
    if (configName !== undefined) {
      const cfg = this.getConfiguration(configName);
      if ('type' in cfg) return cfg;
    }
    this.addFlattened(this.flattened(tt, rev, configName));
    return undefined;
  }

  private addFlattened(target: RevisionTarget): void {
    this.revisionTargets = mergeIfNecessary(this.revisionTargets, target);
    (this.targets[DefaultTarget] ??= []).push({ ...target });
    if (target.tag) (this.targets[target.tag] ??= []).push({ ...target });
  }
}

/** Same tag, revision and latestRevision → percents summed (upstream `mergeIfNecessary`). */
function mergeIfNecessary(rts: RevisionTarget[], rt: RevisionTarget): RevisionTarget[] {
  const same = rts.find((x) => (x.tag ?? '') === (rt.tag ?? '') && x.revisionName === rt.revisionName && x.latestRevision === rt.latestRevision);
  if (same) {
    same.percent += rt.percent;
    return rts;
  }
  return [...rts, { ...rt }];
}

/**
 * Upstream `consolidate`: one entry per revision (the first one's fields, percents summed), in order of first
 * appearance; a group with a single entry gets 100 % (so a tag always sends all its traffic to its revision).
 */
function consolidate(targets: readonly RevisionTarget[]): RevisionTarget[] {
  const out: RevisionTarget[] = [];
  for (const t of targets) {
    const cur = out.find((x) => x.revisionName === t.revisionName);
    if (cur) cur.percent += t.percent;
    else out.push({ ...t });
  }
  if (out.length === 1) out[0]!.percent = 100;
  return out;
}

export interface TrafficOptions {
  /** A Revision the Route must not send traffic to yet: see {@link awaitsPods}. */
  awaitsPods?: (rev: Revision) => boolean;
}

/**
 * A ready Revision the Route does not send traffic to yet (not in its `status.traffic`, `served`) whose pods are not
 * up: its Active condition is there and not True — a `reserve` Revision scaled to zero (False `NoTraffic`) or
 * scaling back up (Unknown `Queued`) — while it runs pods once routed (`servingReplicas` > 0; one with min-scale and
 * initial-scale 0 has none to wait for). A Revision without Active (a foreign module's) never waits.
 *
 * A Revision still labelled `reserve` waits too, whatever its Active says: its own pass may be scaling it down right
 * now, its status not written yet. The Route's labeler makes it active in the same pass; its Revision pass marks
 * Active False before it scales to zero, under a precondition a relabel breaks, so the Active a later Route pass
 * reads is the truth.
 */
export function awaitsPods(rev: Revision, served: ReadonlySet<string>, servingReplicas: (rev: Revision) => number): boolean {
  if (served.has(rev.metadata.name ?? '')) return false;
  const down = isActivationRequired(rev.status) || (isReserve(rev) && hasActiveCondition(rev.status));
  return down && servingReplicas(rev) > 0;
}

/**
 * Knative's `BuildTrafficConfiguration`: flattens `route.spec.traffic` to Revisions.
 *
 * - A `revisionName` target needs that Revision (else `Missing` Revision); for a Route labelled
 *   `serving.knative.dev/service`, the Revision must carry the same label (else `RevisionNotOwned`); it must be
 *   ready (else `UnreadyRevision`, a failure when its Ready is False); its `serving.knative.dev/configuration` label,
 *   if any, is recorded and that Configuration must exist.
 * - A `configurationName` target needs that Configuration (else `Missing` Configuration) with a
 *   `latestReadyRevisionName` (else `UnreadyConfiguration`, a failure when the Configuration's Ready is False), and
 *   that Revision must exist; the target is flattened to it.
 * - Errors are deferred so every reference is collected; a failure overrides an earlier wait. With any error,
 *   nothing is programmed: `targets` and `revisionTargets` are empty.
 * - Every target joins group `''`; a tagged target also joins group `<tag>`. Groups are consolidated per revision
 *   (percents summed) and a single-entry group gets 100 %.
 *
 * - With `opts.awaitsPods`, a ready Revision it names (directly or as a latest ready one) is `UnreadyRevision` (a wait)
 *   while it holds: Tidal has no activator to buffer requests for a Revision scaled to zero, so the Route keeps its
 *   previous split until the Revision's pods are up (ADR 0018).
 *
 * The spec is read with Knative's traffic defaults (latestRevision ← revisionName is empty, percent ← 0), so an
 * undefaulted Route works too. `configurations` and `revisions` are the objects of the Route's namespace by name
 * (at least those the Route references).
 */
export function buildTrafficConfiguration(
  route: Route,
  configurations: Readonly<Record<string, Configuration>>,
  revisions: Readonly<Record<string, Revision>>,
  opts: TrafficOptions = {},
): TrafficResult {
  const b = new Builder(route, configurations, revisions, opts.awaitsPods ?? (() => false));
  for (const tt of route.spec.traffic ?? []) b.add(tt);
  const failed = b.deferred !== undefined;
  const targets: Record<string, RevisionTarget[]> = {};
  if (!failed) for (const [name, tts] of Object.entries(b.targets)) targets[name] = consolidate(tts);
  const config: TrafficConfig = {
    targets,
    revisionTargets: failed ? [] : b.revisionTargets,
    configurations: b.configurations,
    revisions: b.revisions,
    missingTargets: b.missingTargets,
  };
  return b.deferred === undefined ? { config } : { config, error: b.deferred };
}

/**
 * Route `status.traffic` from the resolved targets (upstream `GetRevisionTrafficTargets`): one entry per
 * merged spec entry with `tag`, `revisionName`, `latestRevision`, `percent` and, for a tag, `url` — never
 * `configurationName`. `tagUrls` maps each tag to its URL (e.g. `http://<tag>-<route>.<ns>.<domain>`, computed
 * with the tag's visibility); a tag missing from it gets no url.
 */
export function statusTraffic(config: Pick<TrafficConfig, 'revisionTargets'>, tagUrls: Readonly<Record<string, string>> = {}): TrafficTarget[] {
  return config.revisionTargets.map((t) => {
    const out: TrafficTarget = {};
    if (t.tag) out.tag = t.tag;
    out.revisionName = t.revisionName;
    out.latestRevision = t.latestRevision;
    out.percent = t.percent;
    const url = t.tag && Object.hasOwn(tagUrls, t.tag) ? tagUrls[t.tag] : undefined;
    if (url !== undefined) out.url = url;
    return out;
  });
}

/** The traffic names of a resolved config, sorted (`''` first), as the Ingress rules and placeholder Services use. */
export function trafficNames(config: Pick<TrafficConfig, 'targets'>): string[] {
  return Object.keys(config.targets).sort(byteOrder);
}

/** Go's string ordering (bytewise; equal to UTF-16 order for the ASCII names used here). */
export function byteOrder(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
