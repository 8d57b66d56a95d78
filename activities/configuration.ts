// Activities of the Configuration workflow (spec §2): one Revision per generation, then latestCreated/latestReady.
import { setConfigurationDefaults } from '../api/defaults.js';
import { Resources } from '../api/kinds.js';
import { Labels } from '../api/labels.js';
import type { ObjectKey } from '../api/meta.js';
import type { Configuration, Revision } from '../api/serving.js';
import { computeConfigurationStatus } from '../resources/configuration-status.js';
import { makeRevision } from '../resources/revision.js';
import { findRevisionForGeneration, isRevisionNameTaken } from '../resources/revision-lookup.js';
import { nowOf, type ActivityDeps } from './deps.js';
import { isConflict } from './kube/errors.js';
import { statusOutcome, writeStatus, type StatusOutcome } from './status.js';

export type RevisionOutcome =
  | { outcome: 'gone' }
  | { outcome: 'created' | 'exists'; uid: string; generation: number; revision: string; resourceVersion?: string }
  | { outcome: 'failed'; uid: string; generation: number; revision: string; message: string };

export function createConfigurationActivities(deps: ActivityDeps) {
  const { kube, events, config } = deps;

  async function readConfiguration(key: ObjectKey): Promise<Configuration | undefined> {
    const cfg = await kube.get<Configuration>(Resources.Configuration, key.namespace, key.name);
    if (!cfg || cfg.metadata.deletionTimestamp) return undefined;
    return setConfigurationDefaults(cfg, config.revisionConfig().defaults);
  }

  async function listRevisions(cfg: Configuration): Promise<Revision[]> {
    const list = await kube.list<Revision>(Resources.Revision, cfg.metadata.namespace, { labelSelector: `${Labels.configuration}=${cfg.metadata.name ?? ''}` });
    return list.items;
  }

  return {
    /**
     * Makes sure the Revision of the current generation exists (spec §2.1–2.2). Creating is idempotent by name:
     * a retry after a crash finds the Revision it made before, so no generation gets two Revisions.
     */
    async reconcileConfigurationRevision(key: ObjectKey): Promise<RevisionOutcome> {
      const cfg = await readConfiguration(key);
      if (!cfg) return { outcome: 'gone' };
      const base = { uid: cfg.metadata.uid ?? '', generation: cfg.metadata.generation ?? 0 };
      const byo = cfg.spec.template.metadata?.name;
      const existing = byo
        ? await kube.get<Revision>(Resources.Revision, key.namespace, byo)
        : findRevisionForGeneration(cfg, await listRevisions(cfg));
      if (existing) {
        if (byo && isRevisionNameTaken(cfg, existing)) {
          const message = `revisions.serving.knative.dev "${byo}" already exists`;
          return { outcome: 'failed', ...base, revision: byo, message };
        }
        return { outcome: 'exists', ...base, revision: existing.metadata.name ?? '' };
      }
      const desired = makeRevision(cfg, { now: nowOf(deps) });
      const name = desired.metadata.name ?? '';
      let created: Revision;
      try {
        created = await kube.create(Resources.Revision, desired);
      } catch (err) {
        // AlreadyExists: a racing attempt made it; the next pass finds it by label or name.
        if (isConflict(err)) return { outcome: 'exists', ...base, revision: name };
        const message = err instanceof Error ? err.message : String(err);
        await events.record(cfg, 'Warning', 'CreationFailed', `Failed to create Revision: ${message}`);
        return { outcome: 'failed', ...base, revision: name, message };
      }
      await events.record(cfg, 'Normal', 'Created', `Created Revision "${name}"`);
      return { outcome: 'created', ...base, revision: name, resourceVersion: created.metadata.resourceVersion ?? '' };
    },

    /** latestCreated/latestReady and Ready from the Revisions (spec §2.3); `createError` from the step before. */
    async updateConfigurationStatus(key: ObjectKey, createError?: string): Promise<StatusOutcome> {
      const cfg = await readConfiguration(key);
      if (!cfg) return { outcome: 'gone' };
      const revisions = await listRevisions(cfg);
      // The spec moved on since the Revision step ran: do not report a generation whose Revision does not exist
      // yet. The change poked this workflow, so the next pass creates the Revision and writes the status.
      if (createError === undefined && !findRevisionForGeneration(cfg, revisions)) {
        return { outcome: 'unchanged', reason: `waiting for the Revision of generation ${cfg.metadata.generation ?? 0}` };
      }
      const { status, events: toRecord } = computeConfigurationStatus({ configuration: cfg, revisions, createError }, nowOf(deps));
      const written = await writeStatus(kube, Resources.Configuration, cfg, status);
      if (written !== undefined) for (const e of toRecord) await events.record(cfg, e.type, e.reason, e.message);
      return statusOutcome(written, status);
    },
  };
}
