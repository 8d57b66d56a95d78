// Which Revision belongs to a Configuration's current generation (Knative's Configuration reconciler), shared by the Configuration and
// Service reconcilers.
import { statusEqual } from '../api/conditions.js';
import { Labels } from '../api/labels.js';
import { isControlledBy } from '../api/meta.js';
import type { Configuration, Revision } from '../api/serving.js';

/** A BYO-named Revision exists that this Configuration cannot use: foreign, or another generation's spec. */
export function isRevisionNameTaken(cfg: Configuration, rev: Revision | undefined): boolean {
  if (!rev) return false;
  if (!isControlledBy(rev, cfg.metadata.uid)) return true;
  const sameGeneration = rev.metadata.labels?.[Labels.configurationGeneration] === String(cfg.metadata.generation ?? '');
  return !sameGeneration && !statusEqual(rev.spec, cfg.spec.template.spec);
}

/**
 * The Revision of the Configuration's current generation among `revisions` (all Revisions of the Configuration):
 * the BYO-named one, or the one labelled with this generation.
 */
export function findRevisionForGeneration(cfg: Configuration, revisions: readonly Revision[]): Revision | undefined {
  const byo = cfg.spec.template.metadata?.name;
  if (byo) return revisions.find((r) => r.metadata.name === byo);
  const gen = String(cfg.metadata.generation ?? '');
  return revisions.find(
    (r) => r.metadata.labels?.[Labels.configuration] === cfg.metadata.name && r.metadata.labels?.[Labels.configurationGeneration] === gen,
  );
}
