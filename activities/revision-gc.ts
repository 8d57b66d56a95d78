// The Revision GC step of a Configuration's pass (resources/revision-gc.ts decides): deletes what config-gc
// makes collectable now — each with a precondition on its uid and resourceVersion, so a Revision that changed since it
// was read (routed again, annotated no-gc) is decided on again as it is now — records an Event on the Configuration, and
// reports when the next Revision falls due, for the workflow's durable timer (ADR 0008). Its Deployment and Service go
// with it through their ownerReferences (the garbage collector of kube-controller-manager).
import { defaultGcConfig, describeGcConfig, GcDisabled, type GcConfig } from '../api/config/index.js';
import { Resources, SERVING_GROUP } from '../api/kinds.js';
import { Annotations, Labels } from '../api/labels.js';
import { controllerOf, type ObjectKey } from '../api/meta.js';
import { NetworkingAnnotations, type Ingress } from '../api/networking.js';
import type { Configuration, Revision, Route, Service, TrafficTarget } from '../api/serving.js';
import { planRevisionGc, revisionsInRollout, type Collectable, type RevisionGcPlan } from '../resources/revision-gc.js';
import { parseRolloutAnnotation } from '../resources/rollout.js';
import { RoutingState } from '../resources/revision.js';
import { Counter, Histogram, type Registry } from 'prom-client';
import type { ActivityDeps } from './deps.js';
import { isConflict } from '../kube/errors.js';
import { listOwnWrites, type WrittenVersions } from './written.js';

/** The Event reason of a collected Revision (upstream's collector records none; this one is Tidal's). */
export const RevisionDeletedReason = 'RevisionDeleted';

/** More Revisions than this, and the step lists them whole instead of reading each one. */
const MaxRevisionReads = 8;
/** Collections one step makes while Revisions change between its reads and its deletes, before it fails to be retried. */
const MaxDecisions = 3;

export type RevisionGcOutcome =
  | { outcome: 'gone' }
  | {
      outcome: 'collected' | 'nothing';
      /** Deleted now, with how late after its eligibility (ms; stale ones only). */
      deleted: { name: string; rule: Collectable['rule']; lateMs?: number }[];
      /** When the next Revision falls due (Unix ms), and in how long from the end of this step. */
      nextAtMs?: number;
      nextInMs?: number;
      next?: string;
      /** One line for the pass summary and the Temporal UI. */
      summary: string;
    };

const clock = (deps: ActivityDeps): number => (deps.now?.() ?? new Date()).getTime();
const hms = (ms: number): string => new Date(ms).toISOString().slice(11, 23) + 'Z';
const allDisabled = (c: GcConfig): boolean =>
  c.maxNonActiveRevisions === GcDisabled && c.retainSinceCreateTimeMs === GcDisabled && c.retainSinceLastActiveTimeMs === GcDisabled;

function why(c: Collectable, config: GcConfig): string {
  if (c.rule === 'max') return `beyond max-non-active-revisions ${config.maxNonActiveRevisions}, oldest non-active first`;
  return `not routed since ${new Date(c.lastActiveMs).toISOString()}, created ${new Date(c.createdMs).toISOString()}; collectable at ${new Date(c.eligibleAtMs ?? 0).toISOString()} (${describeGcConfig(config)})`;
}

/** Revisions deleted, and how late after their eligibility, on the controller's `/metrics`. */
function gcMetrics(registry: Registry | undefined) {
  if (!registry) return undefined;
  const existing = (name: string) => registry.getSingleMetric(name);
  const collected =
    (existing('tidal_revisions_collected_total') as Counter<'rule'> | undefined) ??
    new Counter({
      name: 'tidal_revisions_collected_total',
      help: 'Revisions deleted by garbage collection, by rule (stale, max)',
      labelNames: ['rule'],
      registers: [registry],
    });
  const lateness =
    (existing('tidal_revision_gc_lateness_seconds') as Histogram | undefined) ??
    new Histogram({
      name: 'tidal_revision_gc_lateness_seconds',
      help: 'Time from a stale Revision becoming collectable to its deletion',
      buckets: [0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 60, 600],
      registers: [registry],
    });
  return { collected, lateness };
}

export function createRevisionGcActivities(deps: ActivityDeps) {
  const { kube, events, log } = deps;
  const metrics = gcMetrics(deps.registry);

  /** The Configuration's Revisions, whole: one by one when the cache named few, else listed. */
  async function wholeRevisions(key: ObjectKey, named: { items: Revision[]; cached: boolean }): Promise<Revision[]> {
    if (!named.cached) return named.items;
    if (named.items.length > MaxRevisionReads) {
      return (await kube.list<Revision>(Resources.Revision, key.namespace, { labelSelector: `${Labels.configuration}=${key.name}` })).items;
    }
    const read = await Promise.all(named.items.map((r) => kube.get<Revision>(Resources.Revision, key.namespace, r.metadata.name ?? '')));
    return read.filter((r): r is Revision => r !== undefined);
  }

  /**
   * What the Routes carrying this Configuration, and its Service, still need: the Revisions their KIngresses route to
   * in a gradual rollout, and those their traffic names. Read fresh, just before deciding: the labeler marks a named
   * Revision active only once its Route's pass has run (and not while another target is missing), so the routing
   * state alone would let a Revision the user has just named be collected.
   */
  async function neededRevisions(cfg: Configuration): Promise<{ rollout: string[]; traffic: string[] }> {
    const ns = cfg.metadata.namespace ?? '';
    const routes = (cfg.metadata.annotations?.[Annotations.routes] ?? '')
      .split(',')
      .map((s) => s.trim())
      .filter((s) => s !== '');
    const owner = controllerOf(cfg);
    const service = owner?.kind === 'Service' && owner.apiVersion.startsWith(`${SERVING_GROUP}/`) ? owner.name : undefined;
    const [ingresses, routeObjs, svc] = await Promise.all([
      Promise.all(routes.map((r) => kube.get<Ingress>(Resources.KIngress, ns, r))),
      Promise.all(routes.map((r) => kube.get<Route>(Resources.Route, ns, r))),
      service !== undefined ? kube.get<Service>(Resources.Service, ns, service) : undefined,
    ]);
    const named = (traffic: readonly TrafficTarget[] | undefined) => (traffic ?? []).flatMap((t) => (t.revisionName ? [t.revisionName] : []));
    return {
      rollout: ingresses.flatMap((i) => revisionsInRollout(parseRolloutAnnotation(i?.metadata.annotations?.[NetworkingAnnotations.rollout]))),
      traffic: [...routeObjs.flatMap((r) => named(r?.spec?.traffic)), ...named(svc?.spec?.traffic)],
    };
  }

  /** The Configuration and its Revisions read fresh (listed whole once a delete found one changed), and the plan. */
  async function decide(
    key: ObjectKey,
    config: GcConfig,
    named: { items: Revision[]; cached: boolean },
    listed: boolean,
  ): Promise<'gone' | { cfg: Configuration; plan: RevisionGcPlan }> {
    const [cfg, revisions] = await Promise.all([
      kube.get<Configuration>(Resources.Configuration, key.namespace, key.name),
      listed
        ? kube.list<Revision>(Resources.Revision, key.namespace, { labelSelector: `${Labels.configuration}=${key.name}` }).then((l) => l.items)
        : wholeRevisions(key, named),
    ]);
    if (!cfg || cfg.metadata.deletionTimestamp) return 'gone';
    const needed = await neededRevisions(cfg);
    const plan = planRevisionGc({
      config,
      latestReadyRevisionName: cfg.status?.latestReadyRevisionName,
      latestCreatedRevisionName: cfg.status?.latestCreatedRevisionName,
      rolloutRevisions: needed.rollout,
      trafficRevisions: needed.traffic,
      revisions,
      nowMs: clock(deps),
    });
    return { cfg, plan };
  }

  /** Deletes one Revision under its precondition: true when deleted now, false when already gone, `changed` on a 409. */
  async function deleteCollectable(key: ObjectKey, c: Collectable): Promise<boolean | 'changed'> {
    try {
      return await kube.delete(Resources.Revision, key.namespace, c.name, 'Background', { uid: c.uid, resourceVersion: c.resourceVersion });
    } catch (err) {
      if (isConflict(err)) return 'changed';
      throw err;
    }
  }

  return {
    /**
     * Collects the Configuration's Revisions that config-gc makes collectable now (Knative's algorithm) and says when
     * the next one falls due. Reads nothing from the API server when the watcher's cache shows no `reserve` Revision
     * or no more Revisions than min-non-active-revisions: only a Revision turning `reserve` (an event) could change that.
     */
    async collectRevisions(key: ObjectKey, opts: { written?: WrittenVersions } = {}): Promise<RevisionGcOutcome> {
      const config = deps.config.gcConfig?.() ?? defaultGcConfig();
      const nothing = (summary: string): RevisionGcOutcome => ({ outcome: 'nothing', deleted: [], summary });
      if (allDisabled(config)) return nothing('config-gc: every limit disabled');
      const named = await listOwnWrites<Revision>(deps, 'Revision', key.namespace, { [Labels.configuration]: key.name }, opts.written ?? {});
      if (named.items.length <= config.minNonActiveRevisions) {
        return nothing(`${named.items.length} Revisions ≤ min-non-active-revisions ${config.minNonActiveRevisions}`);
      }
      if (!named.items.some((r) => r.metadata.labels?.[Labels.routingState] === RoutingState.reserve)) return nothing('no reserve Revision');

      const deleted: { name: string; rule: Collectable['rule']; lateMs?: number }[] = [];
      let plan: RevisionGcPlan | undefined;
      // A precondition that fails means the Revision changed after it was read: most such writes (its own status, its
      // replica counts) poke nobody, so the step reads again and decides again rather than leave it to a later pass.
      for (let round = 1; ; round++) {
        const decided = await decide(key, config, named, round > 1);
        if (decided === 'gone') return { outcome: 'gone' };
        plan = decided.plan;
        const changed: string[] = [];
        for (const c of plan.collect) {
          const gone = await deleteCollectable(key, c);
          if (gone === 'changed') changed.push(c.name);
          if (gone !== true) continue;
          const at = clock(deps);
          const lateMs = c.eligibleAtMs !== undefined ? Math.max(0, at - c.eligibleAtMs) : undefined;
          deleted.push({ name: c.name, rule: c.rule, ...(lateMs !== undefined ? { lateMs } : {}) });
          metrics?.collected.inc({ rule: c.rule });
          if (lateMs !== undefined) metrics?.lateness.observe(lateMs / 1000);
          log.info(
            { kind: 'Configuration', namespace: key.namespace, name: key.name, revision: c.name, rule: c.rule, lateMs },
            'revision garbage-collected',
          );
          await events.record(decided.cfg, 'Normal', RevisionDeletedReason, `Deleted Revision "${c.name}": ${why(c, config)}`);
        }
        if (changed.length === 0) break;
        log.info(
          { kind: 'Configuration', namespace: key.namespace, name: key.name, revisions: changed, round },
          'revisions changed before their deletion; deciding again',
        );
        // Still moving after a few reads: the step's retry (with backoff) decides again later.
        if (round >= MaxDecisions) throw new Error(`Revisions ${changed.join(', ')} changed under each of ${MaxDecisions} collections; retrying`);
      }

      const parts = deleted.map(
        (d) => `${d.name} (${d.rule === 'max' ? 'beyond max' : `stale, ${((d.lateMs ?? 0) / 1000).toFixed(3)} s after eligible`})`,
      );
      const summary = [
        deleted.length ? `deleted ${parts.join(', ')}` : 'nothing collectable',
        plan.nextAtMs !== undefined ? `next: ${plan.next} at ${hms(plan.nextAtMs)}` : plan.note,
      ].join('; ');
      return {
        outcome: deleted.length ? 'collected' : 'nothing',
        deleted,
        ...(plan.nextAtMs !== undefined ? { nextAtMs: plan.nextAtMs, nextInMs: plan.nextAtMs - clock(deps), next: plan.next } : {}),
        summary,
      };
    },
  };
}
