// Who created and who last changed an object: Knative's `serving.knative.dev/creator` and
// `serving.knative.dev/lastModifier` annotations (knative/pkg's defaulting webhook and `ValidateCreatorAndModifier`,
// spec §8.1/§8.2). Pure.
import { Annotations } from '../api/labels.js';
import type { KubeObject } from '../api/meta.js';
import type { FieldError } from '../api/validation.js';
import type { AdmissionKind } from '../api/admission.js';
import { jsonEqual } from './json-patch.js';

const CREATOR = Annotations.creator;
const LAST_MODIFIER = Annotations.lastModifier;

type WithSpec = KubeObject & { spec?: unknown };

/**
 * Knative records users on Services always, on Configurations and Routes only when nothing owns them (a Service's
 * children are written by the controller), and never on Revisions.
 */
export function tracksUserInfo(kind: AdmissionKind, obj: KubeObject): boolean {
  if (kind === 'Service') return true;
  if (kind === 'Revision') return false;
  return (obj.metadata.ownerReferences ?? []).length === 0;
}

/**
 * The (defaulted) object with the user annotations Knative's defaulting sets: on CREATE creator and lastModifier are
 * the requester; on UPDATE lastModifier becomes the requester only when the spec changed. Creator is never written
 * on UPDATE: a changed creator is refused by {@link validateUserInfo}, as upstream does.
 */
export function setUserInfo<T extends WithSpec>(
  kind: AdmissionKind,
  obj: T,
  req: { operation: string; username: string; old?: WithSpec | undefined },
): T {
  if (!tracksUserInfo(kind, obj) || req.username === '') return obj;
  const annotations = { ...obj.metadata.annotations };
  if (req.operation === 'CREATE') {
    annotations[CREATOR] = req.username;
    annotations[LAST_MODIFIER] = req.username;
  } else if (req.operation === 'UPDATE') {
    if (jsonEqual(req.old?.spec, obj.spec)) return obj;
    annotations[LAST_MODIFIER] = req.username;
  } else return obj;
  return { ...obj, metadata: { ...obj.metadata, annotations } };
}

/**
 * Knative's `ValidateCreatorAndModifier` on UPDATE: creator may not change, and lastModifier may not change unless the
 * spec did ("annotation value is immutable"). Configurations and Routes owned by a Service are not checked.
 */
export function validateUserInfo(kind: AdmissionKind, obj: WithSpec, old: WithSpec | undefined): FieldError[] {
  if (!old || kind === 'Revision' || !tracksUserInfo(kind, obj)) return [];
  const before = old.metadata.annotations ?? {};
  const after = obj.metadata.annotations ?? {};
  const errs: FieldError[] = [];
  if (before[CREATOR] !== after[CREATOR]) errs.push({ message: 'annotation value is immutable', path: `metadata.annotations.${CREATOR}` });
  if (jsonEqual(old.spec, obj.spec) && before[LAST_MODIFIER] !== after[LAST_MODIFIER]) {
    errs.push({ message: 'annotation value is immutable', path: `metadata.annotations.${LAST_MODIFIER}` });
  }
  return errs;
}
