// Activities of the Configuration workflow (spec §2): one Revision per generation, then latestCreated/latestReady.
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
import { isConflict } from './kube/errors.js';
import { statusOutcome, writeStatus, writeStatusWithEvents, type StatusOutcome } from './status.js';

export type RevisionOutcome =
  | { outcome: 'gone' }
  | { outcome: 'created' | 'exists'; uid: string; generation: number; revision: string; resourceVersion?: string }
  | { outcome: 'failed'; uid: string; generation: number; revision: string; message: string };

export function createConfigurationActivities(deps: ActivityDeps) {
  const { kube, events, config } = deps;

  /**
   * The Configuration with Knative's defaults filled in where it lacks them (none when the webhook or its Service
   * stored them), with the values in force when it or its Service was first reconciled — frozen in
   * `tidal.dev/defaults` on it or its Revisions (api/defaults.ts) — and its Revisions.
   */
  async function readConfiguration(key: ObjectKey): Promise<{ cfg: Configuration; revisions: Revision[]; defaults: DefaultsConfig } | undefined> {
    // The Revisions are selected by the Configuration's name: both read side by side.
    const [raw, revisions] = await Promise.all([
      kube.get<Configuration>(Resources.Configuration, key.namespace, key.name),
      kube.list<Revision>(Resources.Revision, key.namespace, { labelSelector: `${Labels.configuration}=${key.name}` }).then((list) => list.items),
    ]);
    if (!raw || raw.metadata.deletionTimestamp) return undefined;
    const defaults = defaultsInForce(config.revisionConfig().defaults, raw, revisions);
    return { cfg: setConfigurationDefaults(raw, defaults), revisions, defaults };
  }

  return {
    /**
     * Makes sure the Revision of the current generation exists (spec §2.1–2.2). Creating is idempotent by name:
     * a retry after a crash finds the Revision it made before, so no generation gets two Revisions.
     */
    async reconcileConfigurationRevision(key: ObjectKey): Promise<RevisionOutcome> {
      const read = await readConfiguration(key);
      if (!read) return { outcome: 'gone' };
      const { cfg } = read;
      const base = { uid: cfg.metadata.uid ?? '', generation: cfg.metadata.generation ?? 0 };
      const byo = cfg.spec.template.metadata?.name;
      const existing = byo ? await kube.get<Revision>(Resources.Revision, key.namespace, byo) : findRevisionForGeneration(cfg, read.revisions);
      if (existing) {
        if (byo && isRevisionNameTaken(cfg, existing)) {
          const message = `revisions.serving.knative.dev "${byo}" already exists`;
          return { outcome: 'failed', ...base, revision: byo, message };
        }
        return { outcome: 'exists', ...base, revision: existing.metadata.name ?? '' };
      }
      const desired = withDefaultsSnapshot(makeRevision(cfg, { now: nowOf(deps) }), read.defaults);
      const name = desired.metadata.name ?? '';
      let created: Revision;
      try {
        created = await kube.create(Resources.Revision, desired);
      } catch (err) {
        // AlreadyExists: a racing attempt made it; the next pass finds it by label or name.
        if (isConflict(err)) return { outcome: 'exists', ...base, revision: name };
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
      return { outcome: 'created', ...base, revision: name, resourceVersion: created.metadata.resourceVersion ?? '' };
    },

    /** latestCreated/latestReady and Ready from the Revisions (spec §2.3); `createError` from the step before. */
    async updateConfigurationStatus(key: ObjectKey, createError?: string): Promise<StatusOutcome> {
      const read = await readConfiguration(key);
      if (!read) return { outcome: 'gone' };
      const { cfg, revisions } = read;
      // The spec moved on since the Revision step ran: do not report a generation whose Revision does not exist
      // yet. The change poked this workflow, so the next pass creates the Revision and writes the status.
      if (createError === undefined && !findRevisionForGeneration(cfg, revisions)) {
        return { outcome: 'unchanged', reason: `waiting for the Revision of generation ${cfg.metadata.generation ?? 0}` };
      }
      const { status, events: toRecord } = computeConfigurationStatus({ configuration: cfg, revisions, createError }, nowOf(deps));
      return statusOutcome(await writeStatusWithEvents(kube, events, Resources.Configuration, cfg, status, toRecord), status);
    },
  };
}
