// makePodDisruptionBudget: a policy/v1 PodDisruptionBudget per Revision, so a node drain never evicts a Revision's
// pods below its minimum (hakn is HA by default: min-scale 2). Knative has none; this is Tidal's, in hakn's spirit.
// Pure.
import type { RevisionConfig } from '../api/config/types.js';
import { Labels } from '../api/labels.js';
import type { KubeObject, ObjectMeta } from '../api/meta.js';
import type { Revision } from '../api/serving.js';
import { makeRevisionLabels, scaleBounds } from './deployment.js';
import { controllerRef } from './owner.js';

/** Revision (template) annotation: `"false"` turns the Revision's PodDisruptionBudget off. */
export const PDB_ANNOTATION = 'tidal.dev/pod-disruption-budget';

/** A policy/v1 PodDisruptionBudget as Tidal builds it: plain JSON. */
export interface PodDisruptionBudget extends KubeObject {
  apiVersion: 'policy/v1';
  kind: 'PodDisruptionBudget';
  metadata: ObjectMeta & { name: string; namespace: string; labels: Record<string, string> };
  spec: { minAvailable: number; selector: { matchLabels: Record<string, string> } };
}

/**
 * The minimum a drain must leave running: the Revision's min-scale (annotation, else config-autoscaler), capped by
 * its max-scale when that is set.
 */
export function minAvailable(rev: Revision, cfg: RevisionConfig): number {
  const { min, max } = scaleBounds(rev, cfg);
  return max > 0 ? Math.min(min, max) : min;
}

/**
 * The Revision's PodDisruptionBudget, or undefined when it has none: config-deployment `pod-disruption-budget` is
 * `disabled`, the Revision says `tidal.dev/pod-disruption-budget: "false"`, or its minimum is 0 (nothing to protect).
 * Named as the Revision, in its namespace, controller-owned by it, labelled like its Deployment, `minAvailable`
 * {@link minAvailable}, selecting the pods by `serving.knative.dev/revision`.
 */
export function makePodDisruptionBudget(rev: Revision, cfg: RevisionConfig): PodDisruptionBudget | undefined {
  if (cfg.deployment.podDisruptionBudget === 'disabled') return undefined;
  if (rev.metadata.annotations?.[PDB_ANNOTATION]?.toLowerCase() === 'false') return undefined;
  const min = minAvailable(rev, cfg);
  if (min <= 0) return undefined;
  const name = rev.metadata.name ?? '';
  return {
    apiVersion: 'policy/v1',
    kind: 'PodDisruptionBudget',
    metadata: {
      name,
      namespace: rev.metadata.namespace ?? '',
      labels: makeRevisionLabels(rev),
      ownerReferences: [controllerRef(rev)],
    },
    spec: { minAvailable: min, selector: { matchLabels: { [Labels.revision]: name } } },
  };
}
