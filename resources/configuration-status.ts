// computeConfigurationStatus: latestCreated / latestReady and Ready from the Configuration's Revisions (Knative's Configuration reconciler),
// with the Kubernetes Events Knative records on those transitions.
import { beginReconcile, cloneJson, endReconcile } from '../api/conditions.js';
import { Labels } from '../api/labels.js';
import {
  configurationConditionSet,
  markLatestCreatedFailed,
  markRevisionCreationFailed,
  setLatestCreatedRevisionName,
  setLatestReadyRevisionName,
  type ConfigurationStatus,
} from '../api/lifecycle/configuration.js';
import { isRevisionReady } from '../api/lifecycle/revision.js';
import type { Configuration, Revision } from '../api/serving.js';
import { findRevisionForGeneration } from './revision-lookup.js';

export interface StatusEvent {
  type: 'Normal' | 'Warning';
  reason: string;
  message: string;
}

export interface ConfigurationObservation {
  /** The Configuration with defaults applied. */
  configuration: Configuration;
  /** Every Revision labelled with this Configuration. */
  revisions: readonly Revision[];
  /** Why creating the current generation's Revision failed, if it did. */
  createError?: string | undefined;
}

const generationOf = (r: Revision) => Number(r.metadata.labels?.[Labels.configurationGeneration] ?? '0');

/**
 * The Revisions this Configuration controls. The label selector also finds those of an earlier Configuration of the
 * same name (a Service deleted and created again) until the garbage collector removes them — for minutes when it
 * lags (seen in the chaos run after an API server restart): they must not become latestReady.
 */
function ownRevisions(cfg: Configuration, revisions: readonly Revision[]): Revision[] {
  const uid = cfg.metadata.uid;
  if (!uid) return [...revisions];
  return revisions.filter((r) => {
    const ref = r.metadata.ownerReferences?.find((o) => o.controller);
    return !ref || ref.uid === uid;
  });
}

export function computeConfigurationStatus(obs: ConfigurationObservation, now: string): { status: ConfigurationStatus; events: StatusEvent[] } {
  obs = { ...obs, revisions: ownRevisions(obs.configuration, obs.revisions) };
  const cfg = cloneJson(obs.configuration);
  const events: StatusEvent[] = [];
  const before = beginReconcile(cfg, configurationConditionSet, now);
  const status = cfg.status as ConfigurationStatus;
  if (obs.createError !== undefined) {
    markRevisionCreationFailed(status, obs.createError, now);
  } else {
    const lcr = findRevisionForGeneration(cfg, obs.revisions);
    if (lcr) {
      const name = lcr.metadata.name ?? '';
      setLatestCreatedRevisionName(status, name, now);
      const ready = lcr.status?.conditions?.find((c) => c.type === 'Ready');
      if (ready?.status === 'True' && !status.latestReadyRevisionName) {
        events.push({ type: 'Normal', reason: 'ConfigurationReady', message: 'Configuration becomes ready' });
      } else if (ready?.status === 'False') {
        markLatestCreatedFailed(status, name, ready.message ?? '', now);
        const isLatestReady = status.latestReadyRevisionName === name;
        events.push(
          isLatestReady
            ? { type: 'Warning', reason: 'LatestReadyFailed', message: `Latest ready revision "${name}" has failed` }
            : { type: 'Warning', reason: 'LatestCreatedFailed', message: `Latest created revision "${name}" has failed` },
        );
      }
    }
    findAndSetLatestReady(cfg, status, obs.revisions, events, now);
  }
  endReconcile(cfg, before, now);
  return { status: cfg.status as ConfigurationStatus, events };
}

/** The newest ready Revision between the old latestReady's generation and the current one (BYO first). */
function findAndSetLatestReady(
  cfg: Configuration,
  status: ConfigurationStatus,
  revisions: readonly Revision[],
  events: StatusEvent[],
  now: string,
): void {
  const old = revisions.find((r) => r.metadata.name === status.latestReadyRevisionName);
  const byo = cfg.spec.template.metadata?.name;
  const gen = cfg.metadata.generation ?? 0;
  const lcrGen = byo ? revisions.find((r) => r.metadata.name === byo) : undefined;
  const candidates = revisions
    .filter((r) => {
      if (!old) return true;
      const g = generationOf(r);
      return (g >= generationOf(old) && g <= gen) || r === lcrGen;
    })
    .sort((a, b) => {
      if (byo && a.metadata.name === byo) return -1;
      if (byo && b.metadata.name === byo) return 1;
      return generationOf(b) - generationOf(a);
    });
  const ready = candidates.find((r) => isRevisionReady(r));
  if (!ready) return;
  const name = ready.metadata.name ?? '';
  if (name !== status.latestReadyRevisionName) {
    events.push({ type: 'Normal', reason: 'LatestReadyUpdate', message: `LatestReadyRevisionName updated to "${name}"` });
  }
  setLatestReadyRevisionName(status, name, now);
}
