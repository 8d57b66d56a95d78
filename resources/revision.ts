// makeRevision: the Revision a Configuration creates for its current generation (Knative's MakeRevision).
import { SERVING_API_VERSION } from '../api/kinds.js';
import { Annotations, Labels } from '../api/labels.js';
import type { ObjectMeta } from '../api/meta.js';
import type { Configuration, Revision } from '../api/serving.js';
import { revisionName } from './names.js';
import { controllerRef } from './owner.js';

/** Routing states the labeler moves a Revision through (`serving.knative.dev/routingState`). */
export const RoutingState = {
  pending: 'pending',
  active: 'active',
  reserve: 'reserve',
} as const;

/**
 * The name `makeRevision(config)` gives: the template's `metadata.name` when set (a BYO name), else
 * `ChildName(config, "-%05d" of metadata.generation)`, e.g. `hello-00001`.
 */
export function revisionNameFor(config: Configuration): string {
  const byo = config.spec.template.metadata?.name;
  if (byo !== undefined && byo !== '') return byo;
  return revisionName(config.metadata.name ?? '', config.metadata.generation ?? 0);
}

/**
 * `now` as Go's `time.Time.UTC().Format(time.RFC3339)`: `YYYY-MM-DDTHH:MM:SSZ`, whole seconds. A value that does
 * not parse as a date is returned unchanged.
 */
export function rfc3339(now: string): string {
  const t = new Date(now);
  if (Number.isNaN(t.getTime())) return now;
  return `${t.toISOString().slice(0, 19)}Z`;
}

export interface MakeRevisionOptions {
  /** The current time (workflow time), any ISO-8601 form; written as RFC3339 UTC, whole seconds. */
  now: string;
}

/**
 * The desired Revision for `config`'s current generation:
 *
 * - metadata = a copy of `spec.template.metadata` (labels, annotations, name, generateName) in the Configuration's
 *   namespace; spec = a copy of `spec.template.spec`. The Configuration's own labels/annotations are not copied,
 *   apart from the keys below;
 * - name = {@link revisionNameFor};
 * - labels `serving.knative.dev/configuration`, `/configurationGeneration`, `/configurationUID`, and
 *   `/service`, `/serviceUID` when the Configuration carries them (empty values are not written);
 * - `serving.knative.dev/routingState=pending`, or `active` when the Configuration has `serving.knative.dev/routes`
 *   (which is then copied), with `serving.knative.dev/routingStateModified=<now>`;
 * - `serving.knative.dev/creator` = the Configuration's `serving.knative.dev/lastModifier`, when present;
 * - a controller owner reference to the Configuration.
 */
export function makeRevision(config: Configuration, opts: MakeRevisionOptions): Revision {
  const template = structuredClone(config.spec.template);
  const tmeta = template.metadata ?? {};
  const configLabels = config.metadata.labels ?? {};
  const configAnnotations = config.metadata.annotations ?? {};
  const now = rfc3339(opts.now);

  const labels: Record<string, string> = { ...tmeta.labels };
  const derived: [string, string | undefined][] = [
    [Labels.configuration, config.metadata.name],
    [Labels.service, configLabels[Labels.service]],
    [Labels.configurationGeneration, String(config.metadata.generation ?? 0)],
    [Labels.configurationUID, config.metadata.uid],
    [Labels.serviceUID, configLabels[Labels.serviceUID]],
  ];
  for (const [key, value] of derived) {
    if (value !== undefined && value !== '') labels[key] = value;
  }

  const annotations: Record<string, string> = { ...tmeta.annotations };
  const lastModifier = configAnnotations[Annotations.lastModifier];
  if (lastModifier !== undefined) annotations[Annotations.creator] = lastModifier;
  const routes = configAnnotations[Annotations.routes];
  if (routes !== undefined) annotations[Annotations.routes] = routes;
  labels[Labels.routingState] = routes !== undefined ? RoutingState.active : RoutingState.pending;
  annotations[Annotations.routingStateModified] = now;

  const metadata: ObjectMeta = {
    name: revisionNameFor(config),
    namespace: config.metadata.namespace ?? '',
    labels,
    annotations,
    ownerReferences: [controllerRef(config)],
  };
  if (tmeta.generateName !== undefined) metadata.generateName = tmeta.generateName;

  return {
    apiVersion: SERVING_API_VERSION,
    kind: 'Revision',
    metadata,
    spec: template.spec,
  };
}
