// Activities of the Configuration workflow (Knative's Configuration reconciler): one Revision per generation, then latestCreated/latestReady.
import { defaultsInForce, setConfigurationDefaults, withDefaultsSnapshot } from '../api/defaults.js';
import type { DefaultsConfig } from '../api/config/types.js';
import { Resources } from '../api/kinds.js';
import { Labels } from '../api/labels.js';
import type { ObjectKey } from '../api/meta.js';
import type { Configuration, Revision } from '../api/serving.js';
import { computeConfigurationStatus } from '../resources/configuration-status.js';
import { makeRevision } from '../resources/revision.js';
import { findRevisionForGeneration, isRevisionNameTaken } from '../resources/revision-lookup.js';
import { nowOf, type ActivityDeps } from './deps.js';
import { apiErrorMessage, isPermanentApiError } from './apply.js';
import { isConflict } from '../kube/errors.js';
import { statusOutcome, writeStatus, writeStatusWithEvents, type StatusOutcome } from './status.js';
import { listOwnWrites, writtenSoFar, type WrittenVersions } from './written.js';

/** What a Configuration step carries to the next (activities/written.ts): the newest Revision this workflow wrote. */
type Written = { written?: WrittenVersions };

export type RevisionOutcome =
  | { outcome: 'gone' }
  | ({ outcome: 'created' | 'exists'; uid: string; generation: number; revision: string; resourceVersion?: string } & Written)
  | ({ outcome: 'failed'; uid: string; generation: number; revision: string; message: string } & Written);

/**
 * What the Configuration's status step hands the Route's step running beside it (activities/combined.ts): the
 * Configuration with the status it is about to write, and the Revisions it read — what the Route would read next.
 */
export interface SeenConfiguration {
  configuration: Configuration;
  revisions: Revision[];
}
export type HandOverConfiguration = (seen: SeenConfiguration | undefined) => void;

/** More Revisions than this, and the Configuration's step lists them whole instead of reading each one. */
const MaxRevisionReads = 8;

export function createConfigurationActivities(deps: ActivityDeps) {
  const { kube, events, config } = deps;

  /**
   * The Configuration with Knative's defaults filled in where it lacks them (none when the webhook or its Service
   * stored them), with the values in force when it or its Service was first reconciled — frozen in
   * `tidal.dev/defaults` on it or its Revisions (api/defaults.ts) — and its Revisions.
   */
  async function readConfiguration(
    key: ObjectKey,
    written: WrittenVersions,
  ): Promise<{ raw: Configuration; cfg: Configuration; revisions: Revision[]; defaults: DefaultsConfig } | undefined> {
    // The Revisions are selected by the Configuration's name: both read side by side.
    const [raw, revisions] = await Promise.all([
      kube.get<Configuration>(Resources.Configuration, key.namespace, key.name),
      revisionsOf(key, written),
    ]);
    if (!raw || raw.metadata.deletionTimestamp) return undefined;
    const defaults = defaultsInForce(config.revisionConfig().defaults, raw, revisions);
    return { raw, cfg: setConfigurationDefaults(raw, defaults), revisions, defaults };
  }

  /**
   * The Configuration's Revisions, whole: named by the watcher's cache once it reflects the Revisions this workflow
   * created, then read one by one (a GET is one key; a consistent list of the namespace waits for the API server's
   * cache to catch up and reads every Revision in it); listed from the API server otherwise. One the cache still
   * names but that is gone is left out.
   */
  async function revisionsOf(key: ObjectKey, written: WrittenVersions): Promise<Revision[]> {
    const named = await listOwnWrites<Revision>(deps, 'Revision', key.namespace, { [Labels.configuration]: key.name }, written);
    if (!named.cached) return named.items;
    if (named.items.length > MaxRevisionReads) {
      return (await kube.list<Revision>(Resources.Revision, key.namespace, { labelSelector: `${Labels.configuration}=${key.name}` })).items;
    }
    const read = await Promise.all(named.items.map((r) => kube.get<Revision>(Resources.Revision, key.namespace, r.metadata.name ?? '')));
    return read.filter((r): r is Revision => r !== undefined);
  }

  return {
    /**
     * Makes sure the Revision of the current generation exists (Knative's latestCreatedRevision and MakeRevision). Creating is idempotent by name:
     * a retry after a crash finds the Revision it made before, so no generation gets two Revisions.
     */
    async reconcileConfigurationRevision(key: ObjectKey, opts: Written = {}): Promise<RevisionOutcome> {
      const prior = opts.written ?? {};
      const read = await readConfiguration(key, prior);
      if (!read) return { outcome: 'gone' };
      const { cfg } = read;
      const base = { uid: cfg.metadata.uid ?? '', generation: cfg.metadata.generation ?? 0 };
      const byo = cfg.spec.template.metadata?.name;
      const existing = byo ? await kube.get<Revision>(Resources.Revision, key.namespace, byo) : findRevisionForGeneration(cfg, read.revisions);
      if (existing) {
        if (byo && isRevisionNameTaken(cfg, existing)) {
          const message = `revisions.serving.knative.dev "${byo}" already exists`;
          return { outcome: 'failed', ...base, revision: byo, message, written: prior };
        }
        return { outcome: 'exists', ...base, revision: existing.metadata.name ?? '', written: prior };
      }
      const desired = withDefaultsSnapshot(makeRevision(cfg, { now: nowOf(deps) }), read.defaults);
      const name = desired.metadata.name ?? '';
      let created: Revision;
      try {
        created = await kube.create(Resources.Revision, desired);
      } catch (err) {
        // AlreadyExists: a racing attempt made it; the next pass finds it by label or name.
        if (isConflict(err)) return { outcome: 'exists', ...base, revision: name, written: prior };
        // Refused (a webhook, quota, RBAC, validation): Ready False RevisionFailed with the API server's message and
        // one Warning Event, as upstream, then retried with backoff like any failed step (activities/apply.ts says
        // why). Transient errors are only retried.
        if (isPermanentApiError(err)) {
          const message = apiErrorMessage(err);
          const { status } = computeConfigurationStatus({ configuration: cfg, revisions: [], createError: message }, nowOf(deps));
          await writeStatus(kube, Resources.Configuration, cfg, status);
          await events.record(cfg, 'Warning', 'CreationFailed', `Failed to create Revision: ${message}`);
        }
        throw err;
      }
      await events.record(cfg, 'Normal', 'Created', `Created Revision "${name}"`);
      return { outcome: 'created', ...base, revision: name, resourceVersion: created.metadata.resourceVersion ?? '', written: writtenSoFar(prior) };
    },

    /**
     * latestCreated/latestReady and Ready from the Revisions (Knative's Configuration reconciler); `createError` from the step before.
     * `handOver` gets the Configuration with its new status and the Revisions read, just before the status write.
     */
    async updateConfigurationStatus(
      key: ObjectKey,
      createError?: string,
      opts: Written & { handOver?: HandOverConfiguration } = {},
    ): Promise<StatusOutcome> {
      const read = await readConfiguration(key, opts.written ?? {});
      if (!read) return { outcome: 'gone' };
      const { raw, cfg, revisions } = read;
      // The spec moved on since the Revision step ran: do not report a generation whose Revision does not exist
      // yet. The change poked this workflow, so the next pass creates the Revision and writes the status.
      if (createError === undefined && !findRevisionForGeneration(cfg, revisions)) {
        return { outcome: 'unchanged', reason: `waiting for the Revision of generation ${cfg.metadata.generation ?? 0}` };
      }
      const { status, events: toRecord } = computeConfigurationStatus({ configuration: cfg, revisions, createError }, nowOf(deps));
      opts.handOver?.({ configuration: { ...raw, status }, revisions });
      return statusOutcome(await writeStatusWithEvents(kube, events, Resources.Configuration, cfg, status, toRecord), status);
    },
  };
}
