// Activity stubs with Tidal's options. Every step gets a one-line summary so the Temporal UI's history reads
// like a log. Every step's result also carries what it observed (activities/observe.ts); the steps of one pass
// pool those observations here for the entity loop (workflows/entity-loop.ts).
//
// Steps are local activities (ADR 0004): a pass's steps run inside the workflow task that starts the pass and
// leave one marker each, so a pass costs one workflow task and a handful of history events instead of a task per
// step. Steps that wait on the outside world for long (a registry) are regular activities (`remoteStep`).
import { proxyActivities, proxyLocalActivities, type ActivityOptions, type LocalActivityOptions } from '@temporalio/workflow';
import { echoObservation, mergeObservations, newerVersion } from '../api/content-token.js';
import type { Activities, Observed } from '../activities/index.js';
import type { PassObservations } from './entity-state.js';

const baseOptions: ActivityOptions & LocalActivityOptions = {
  // Knative's per-reconcile timeout. A worker that dies mid-step is noticed when its workflow task times out (local
  // steps) or after this (remote steps), and the step runs again elsewhere.
  startToCloseTimeout: '30s',
  // A few quick attempts inside the workflow task (a conflict, a blip); a step that still fails fails its pass, which
  // the entity loop retries after a backoff on a durable timer — or at once when news comes, which a step's own
  // backoff could not hear (workflows/entity-loop.ts `passFailed`).
  retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '1m', maximumAttempts: 3 },
};

/** Observations of the pass under way (one pass at a time per workflow; module state is per workflow run). */
let passObservations: Record<string, string> | undefined;

/** Sources a step of the pass under way applied (created, or applied its spec): their observation is Tidal's own. */
let passApplied = new Set<string>();

/** The echoes of the pass's own applies and creates its observations do not cover (activities/observe.ts). */
let passEchoes: Record<string, string[]> = {};

/** Sources a step created and no step has read since: the next read's status is the one acted on. */
let passCreated = new Set<string>();

/** A step of the pass under way wrote an object or a status (`Observed.wrote`). */
let passWrote = false;

/** The oldest resourceVersion of each source the pass's steps read or wrote (`Observed.versions`): the oldest it may have acted on. */
let passVersions: Record<string, string> = {};

/** Starts pooling the observations of a pass's steps. */
export function beginPassObservations(): void {
  passObservations = {};
  passApplied = new Set();
  passEchoes = {};
  passCreated = new Set();
  passWrote = false;
  passVersions = {};
}

/**
 * What the steps of this pass observed, pooled (see `poolStepObservations`), which sources a step applied, its writes'
 * echoes, and whether a step wrote anything.
 */
export function endPassObservations(): PassObservations {
  const observed = passObservations ?? {};
  // An echo the pass's final observation covers anyway need not be kept.
  const echoes: Record<string, string[]> = {};
  for (const [source, list] of Object.entries(passEchoes)) {
    const kept = list.filter((e) => echoObservation(e) !== observed[source]);
    if (kept.length) echoes[source] = kept;
  }
  const out = { observed, applied: passApplied, echoes, wrote: passWrote, versions: passVersions };
  passObservations = undefined;
  passApplied = new Set();
  passEchoes = {};
  passCreated = new Set();
  passWrote = false;
  passVersions = {};
  return out;
}

/**
 * Pools one step's observations into the pass's. A step that wrote an object (an apply or create) replaces what
 * earlier steps saw of it; one that wrote its status replaces the status part. Otherwise the steps only read it, and
 * where two steps read different contents each part that differs covers nothing: in a pass that reconciles several
 * objects (ADR 0005) two steps may act on the same dependency — the Configuration's status and the Route both on a
 * Revision's readiness — and a later read does not show that the earlier step acted on what it saw.
 */
export function poolStepObservations(
  observed: Record<string, string> | undefined,
  result: Pick<Observed, 'wrote' | 'echoes' | 'created' | 'versions'> = {},
): void {
  if (!passObservations || !observed) return;
  const { wrote = {}, echoes = {}, created = [], versions = {} } = result;
  if (Object.keys(wrote).length > 0) passWrote = true;
  for (const [source, rv] of Object.entries(versions)) {
    const oldest = passVersions[source];
    if (oldest === undefined || newerVersion(oldest, rv)) passVersions[source] = rv;
  }
  for (const [source, list] of Object.entries(echoes)) passEchoes[source] = [...(passEchoes[source] ?? []), ...list];
  for (const [source, obs] of Object.entries(observed)) {
    const before = passObservations[source];
    const how = wrote[source];
    // A read after a create: the create acted on no status (the object had none yet), so this read's status counts.
    const laterStatusWins = how === 'status' || passCreated.has(source);
    passObservations[source] = before === undefined || how === 'all' ? obs : mergeObservations(before, obs, laterStatusWins);
    if (created.includes(source)) passCreated.add(source);
    else passCreated.delete(source);
    if (how === 'all') passApplied.add(source);
    // A later step that only read an applied source and saw something else: that read is not Tidal's own.
    else if (passApplied.has(source) && passObservations[source] !== obs) passApplied.delete(source);
  }
}

/** A pass's step: a local activity with `summary` as the label the Temporal UI shows for its marker. */
export function step(summary: string, overrides: Partial<LocalActivityOptions> = {}): Activities {
  return pooled(proxyLocalActivities<Activities>({ ...baseOptions, ...overrides, summary }));
}

/**
 * Several steps in one local activity (activities/combined.ts): one marker and no step boundaries between them. Its
 * result holds each part's result in the order of the steps they replace; their observations are pooled in that
 * order, as if each part were a step of its own.
 */
export function combinedStep(summary: string, overrides: Partial<LocalActivityOptions> = {}): Activities {
  return pooled(proxyLocalActivities<Activities>({ ...baseOptions, ...overrides, summary }), (result) => {
    for (const part of Object.values(result ?? {})) if (part && typeof part === 'object') poolResult(part as Observed);
  });
}

/** A step that may wait long on something outside the cluster: a regular activity, retried by the server. */
export function remoteStep(summary: string, overrides: Partial<ActivityOptions> = {}): Activities {
  return pooled(proxyActivities<Activities>({ ...baseOptions, ...overrides, summary }));
}

const poolResult = (result: Observed | undefined) => poolStepObservations(result?.observed, result ?? {});

/**
 * A step that still failed after its attempts, named: the entity loop retries its pass (workflows/entity.ts). A local
 * activity's failure reaches the workflow as the activity's own error, not as an ActivityFailure that would say which.
 */
export class StepFailed extends Error {
  constructor(
    readonly step: string,
    cause: unknown,
  ) {
    let inner = cause;
    while (inner instanceof Error && inner.cause instanceof Error) inner = inner.cause;
    super(`${step}: ${inner instanceof Error ? inner.message : String(inner)}`.slice(0, 500), { cause });
    this.name = 'StepFailed';
  }
}

/** The stubs, each result's observations pooled (`pool`: a step's result, by default) before the workflow sees it. */
function pooled(proxied: Activities, pool: (result: Observed | undefined) => void = poolResult): Activities {
  return new Proxy(proxied, {
    get(target, name: string) {
      const fn = target[name as keyof Activities] as (...args: unknown[]) => Promise<Observed>;
      return async (...args: unknown[]) => {
        let result: Observed;
        try {
          result = await fn(...args);
        } catch (err) {
          throw new StepFailed(name, err);
        }
        pool(result);
        return result;
      };
    },
  });
}

/** The worker's current entity options, read at the start of every run and at every resync (never carried). */
export const { readEntityOptions } = proxyLocalActivities<Pick<Activities, 'readEntityOptions'>>({
  startToCloseTimeout: '5s',
  summary: 'read entity options',
});
