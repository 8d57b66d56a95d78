// The Revision GC step of a Configuration's pass (Knative's Revision GC, ADR 0008), run by the workflow that reconciles the
// Configuration: a Service's (ADR 0005) or a standalone Configuration's. Behind `patched`, so that histories recorded
// before it replay unchanged (ADR 0002).
import { patched } from '@temporalio/workflow';
import type { ObjectKey } from '../api/meta.js';
import type { RevisionGcOutcome, WrittenVersions } from '../activities/index.js';
import { step } from './activities.js';

/** Collects the Configuration's collectable Revisions; undefined in a run recorded before the step existed. */
export async function collectRevisions(key: ObjectKey, written: WrittenVersions): Promise<RevisionGcOutcome | undefined> {
  if (!patched('revision-gc')) return undefined;
  return step(`collect Revisions of Configuration ${key.namespace}/${key.name} (config-gc)`).collectRevisions(key, { written });
}
