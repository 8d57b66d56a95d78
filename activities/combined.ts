// Steps that run several steps of a pass in one local activity. Between two local activities the result goes back
// to the workflow and the next step is scheduled: a few milliseconds each on an idle machine, more on busy
// cores, on the path from a Revision's pods to the Service Ready and from a new Revision to its Deployment. Each part
// is the step it replaces, with its own observations (activities/observe.ts), returned in the order of the steps it
// replaces (parts may run side by side): the workflow pools them one after the other, exactly as it pools separate
// steps (workflows/activities.ts `combinedStep`). A part that throws fails the whole step once every part has
// settled; the parts are idempotent, so a retry runs them again.
import type { ObjectKey } from '../api/meta.js';
import type { Revision, Route } from '../api/serving.js';
import { settleAll } from './apply.js';
import type { createConfigurationActivities, SeenConfiguration } from './configuration.js';
import type { createRevisionActivities } from './revision.js';
import type { createRouteActivities } from './route.js';
import type { createServiceActivities, WrittenChildren } from './service.js';
import type { ObservedResult } from './observe.js';
import type { MetadataCache } from './deps.js';
import { firstAttempt } from './attempt.js';
import { Resources } from '../api/kinds.js';
import { Labels } from '../api/labels.js';
import type { KubeObject } from '../api/meta.js';
import { isRevisionFailed, isRevisionReady } from '../api/lifecycle/revision.js';
import { specOfObservation, statusOnlyObservations } from '../api/content-token.js';
import type { WrittenVersions } from './written.js';

type Steps = ReturnType<typeof createServiceActivities> &
  ReturnType<typeof createConfigurationActivities> &
  ReturnType<typeof createRevisionActivities> &
  ReturnType<typeof createRouteActivities>;
type Parts =
  | 'reconcileServiceConfiguration'
  | 'reconcileConfigurationRevision'
  | 'reconcileServiceRoute'
  | 'updateConfigurationStatus'
  | 'reconcileRoute'
  | 'updateServiceStatus'
  | 'resolveRevisionDigests'
  | 'reconcileRevisionResources'
  | 'updateRevisionStatus';
/** A step's result with what `withObservations` adds to it. */
type Part<K extends Parts> = Awaited<ReturnType<Steps[K]>> & ObservedResult;

/** The steps the combined ones are made of, each already wrapped with its own observations (activities/observe.ts). */
export type PartSteps = { [K in Parts]: (...args: Parameters<Steps[K]>) => Promise<Part<K>> };

/** What a combined step returns: its parts by name, in the order of the steps they replace (a part not run is absent). */
export interface ServiceStatusParts {
  configuration?: Part<'updateConfigurationStatus'>;
  route?: Part<'reconcileRoute'>;
  service: Part<'updateServiceStatus'>;
}

export interface ServiceFullParts {
  configuration: Part<'reconcileServiceConfiguration'>;
  revision?: Part<'reconcileConfigurationRevision'>;
  configurationStatus?: Part<'updateConfigurationStatus'>;
  routeApply?: Part<'reconcileServiceRoute'>;
  route?: Part<'reconcileRoute'>;
  service?: Part<'updateServiceStatus'>;
  /** The new Revision settled while the step waited for it: the status-only pass's parts, in its order. */
  statusConfiguration?: Part<'updateConfigurationStatus'>;
  statusRoute?: Part<'reconcileRoute'>;
  statusService?: Part<'updateServiceStatus'>;
}

/** The last of `parts` that observed `source`. */
function lastObservation(source: string, parts: ObservedResult[]): string | undefined {
  return parts.reduce<string | undefined>((last, p) => p.observed?.[source] ?? last, undefined);
}

/** The sources a part applied (wrote whole), as the entity loop counts them applied. */
function appliedBy(part: ObservedResult): ReadonlySet<string> {
  return new Set(Object.entries(part.wrote ?? {}).flatMap(([source, how]) => (how === 'all' ? [source] : [])));
}

export interface NewRevisionParts {
  digests: Part<'resolveRevisionDigests'>;
  resources?: Part<'reconcileRevisionResources'>;
  status?: Part<'updateRevisionStatus'>;
}

/**
 * A value one part hands another running beside it. `settledBy(part)` hands nothing once that part settles without
 * handing over (a no-op once handed), so the taker never waits for a hand-over that will not come.
 */
function handOff<T>() {
  let give!: (value: T | undefined) => void;
  const taken = new Promise<T | undefined>((resolve) => (give = resolve));
  return { give, taken, settledBy: <R>(part: Promise<R>): Promise<R> => part.finally(() => give(undefined)) };
}

/** At most this many Service passes wait for their new Revision at once: in a burst a pass's slot is worth more. */
const MAX_SERVICE_PASSES_WAITING = 4;

/**
 * `readyWaitMs`: how long a new Revision's first pass waits for its pods to be Ready, and a Service's pass that made
 * a Revision waits for it (ADR 0012; 0 not at all). `cache`: the watcher's, where they wait.
 */
export function createCombinedActivities(s: PartSteps, readyWaitMs = 0, cache?: Pick<MetadataCache, 'until'>) {
  let servicePassesWaiting = 0;

  /**
   * After a Service's full pass that created its Configuration's Revision: waits up to `readyWaitMs` in the watcher's
   * cache for that Revision to be Ready (or to fail), so the same step can go on with the status-only pass its
   * readiness would have poked (ADR 0012, "Later"). Only on a first attempt, with the cache's watcher running here,
   * and for a few passes at once.
   */
  async function newRevisionSettled(key: ObjectKey, revision: string): Promise<boolean> {
    if (readyWaitMs <= 0 || !cache?.until || !firstAttempt() || servicePassesWaiting >= MAX_SERVICE_PASSES_WAITING) return false;
    servicePassesWaiting += 1;
    try {
      const settled = (revs: KubeObject[]) => revs.some((r) => r.metadata.name === revision && (isRevisionReady(r) || isRevisionFailed(r)));
      return await cache.until(Resources.Revision, key.namespace, { [Labels.configuration]: key.name }, settled, readyWaitMs);
    } finally {
      servicePassesWaiting -= 1;
    }
  }

  /**
   * A Service's status-only pass (workflows/service.ts): the Configuration's status, its Route programmed and the
   * Service's status — the three steps that stand between a Revision turning Ready and the Service Ready — side by
   * side (ADR 0011, "Later"). The Route is programmed from the Configuration and Revisions the Configuration's part
   * read, with the status that part computed, handed over beside its status write. The Service's part reads the
   * Service meanwhile, and computes its status from the two children once the Configuration's part is done and the
   * Route's part hands over the status it is about to write: the Service's status write goes beside the Route's.
   */
  async function reconcileServiceStatus(
    key: ObjectKey,
    opts: { configuration: boolean; route: boolean; written: WrittenVersions; expectSpec: string },
  ): Promise<ServiceStatusParts> {
    const seen = handOff<SeenConfiguration>();
    const toWrite = handOff<Route>();
    const cfgPart = opts.configuration
      ? seen.settledBy(s.updateConfigurationStatus(key, undefined, { written: opts.written, handOver: seen.give }))
      : undefined;
    const routePart = opts.route
      ? toWrite.settledBy(
          s.reconcileRoute(key, {
            reportNotOwned: true,
            written: opts.written,
            ...(opts.configuration ? { seen: seen.taken } : {}),
            toWrite: toWrite.give,
          }),
        )
      : undefined;
    // The Route with the status its part is about to write; handed nothing, the part's end (a failure fails this).
    const routeStatus = routePart
      ? toWrite.taken.then(async (r) => {
          if (r) return r;
          await routePart;
          return undefined;
        })
      : undefined;
    // The Configuration's part done (a failure fails this too) and the Route's status known: the children as written
    // or about to be; one not handed over is read.
    const children = Promise.all([cfgPart, routeStatus]).then(async ([, r]): Promise<WrittenChildren> => ({
      configuration: opts.configuration ? (await seen.taken)?.configuration : undefined,
      route: r,
    }));
    const [configuration, route, service] = await settleAll([cfgPart, routePart, s.updateServiceStatus(key, opts.expectSpec, children)] as const);
    return { ...(configuration ? { configuration } : {}), ...(route ? { route } : {}), service };
  }

  return {
    /**
     * A Service's full pass (workflows/service.ts), its six steps one after the other in upstream's order, each as it
     * ran as a step of its own: the Configuration applied, its Revision for the generation ensured, its status; the
     * Route applied and programmed; the Service's status. A new Service's Revision is created without a step boundary
     * after its Configuration, and the pass takes one workflow activation where it took six.
     */
    async reconcileServiceFull(key: ObjectKey, opts: { written: WrittenVersions }): Promise<ServiceFullParts> {
      const configuration = await s.reconcileServiceConfiguration(key);
      if (configuration.outcome === 'gone') return { configuration };
      let written = opts.written;
      let revision: Part<'reconcileConfigurationRevision'> | undefined;
      let configurationStatus: Part<'updateConfigurationStatus'> | undefined;
      if (configuration.outcome === 'applied') {
        revision = await s.reconcileConfigurationRevision(key, { written });
        if (revision.outcome !== 'gone') written = revision.written ?? written;
        const createError = revision.outcome === 'failed' ? revision.message : undefined;
        configurationStatus = await s.updateConfigurationStatus(key, createError, { written });
      }
      const routeApply = await s.reconcileServiceRoute(key);
      // A held Route (bring-your-own Revision not there yet) is not re-applied, but the Route as it stands is still ours.
      const route =
        routeApply.outcome === 'applied' || routeApply.outcome === 'held'
          ? await s.reconcileRoute(key, { reportNotOwned: true, written })
          : undefined;
      const service = await s.updateServiceStatus(key);
      const full: ServiceFullParts = {
        configuration,
        ...(revision ? { revision } : {}),
        ...(configurationStatus ? { configurationStatus } : {}),
        routeApply,
        ...(route ? { route } : {}),
        service,
      };
      // A Revision made by this pass: its readiness would poke this workflow for a status-only pass a moment from
      // now. Waited for here, that pass runs in this step, with no Temporal round trip (ADR 0012, "Later").
      const made = revision?.outcome === 'created' ? revision.revision : undefined;
      // The spec the children were applied for, as the workflow would take it from the pass's observations.
      const expectSpec = specOfObservation(lastObservation(`Service/${key.namespace}/${key.name}`, [configuration, routeApply, service]));
      if (!made || expectSpec === '-' || service.outcome === 'gone' || service.outcome === 'stale' || !(await newRevisionSettled(key, made)))
        return full;
      const after = route && route.outcome !== 'gone' && route.written ? route.written : written;
      const then = await reconcileServiceStatus(key, { configuration: true, route: route !== undefined, written: after, expectSpec });
      // A Service whose spec moved on meanwhile keeps its status: its reads then win nothing, so the Revision's
      // readiness is still news after the full pass its own poke brings.
      const stale = then.service.outcome === 'stale';
      // Its reads as a status-only pass's: a child's spec it only read stays news (statusOnlyObservations). And as
      // a pass of its own, its reads of the children's status win over the full pass's (pooled as a status write):
      // it recomputed everything the full pass computed from them.
      const seenBefore = Object.assign({}, ...Object.values(full).map((p: ObservedResult) => p.observed ?? {})) as Record<string, string>;
      const asStatusOnly = <P extends ObservedResult>(part: P | undefined): P | undefined => {
        if (!part?.observed) return part;
        const wrote = stale
          ? part.wrote
          : { ...Object.fromEntries(Object.keys(part.observed).map((source) => [source, 'status' as const])), ...part.wrote };
        return { ...part, observed: statusOnlyObservations(seenBefore, part.observed, appliedBy(part)), ...(wrote ? { wrote } : {}) };
      };
      const statusConfiguration = asStatusOnly(then.configuration);
      const statusRoute = asStatusOnly(then.route);
      return {
        ...full,
        ...(statusConfiguration ? { statusConfiguration } : {}),
        ...(statusRoute ? { statusRoute } : {}),
        statusService: asStatusOnly(then.service)!,
      };
    },

    reconcileServiceStatus,

    /**
     * A new Revision's first pass (workflows/revision.ts) when the registry answers: digests, and beside them its
     * Deployment, Service, HPA and PodDisruptionBudget once the digests are known, then its status — once the
     * Deployment's pods are Ready, if that comes within `readyWaitMs`. A registry failure throws (after the resources
     * part, handed no Revision, has stopped without a write), and the workflow goes on with the digest step retried
     * as a regular activity.
     */
    async reconcileNewRevision(key: ObjectKey): Promise<NewRevisionParts> {
      // The children are read while the registry answers, and built from the digests it gave beside their status
      // write (upstream applies the Deployment from the digests in memory and writes the status last).
      const resolved = handOff<Revision>();
      const [digests, resources] = await settleAll([
        resolved.settledBy(s.resolveRevisionDigests(key, resolved.give)),
        s.reconcileRevisionResources(key, resolved.taken),
      ] as const);
      if (digests.outcome === 'gone') return { digests };
      // A Deployment just made: its pods are Ready a moment later, so the status part waits for them (ADR 0012).
      const replicas = resources.outcome === 'applied' && resources.deployment === 'created' ? resources.replicas : undefined;
      const status = await s.updateRevisionStatus(
        key,
        replicas !== undefined && readyWaitMs > 0 ? { replicas, ms: readyWaitMs } : undefined,
        resources.outcome === 'applied' ? resources.service === 'notOwned' : undefined,
      );
      return { digests, resources, status };
    },
  };
}
