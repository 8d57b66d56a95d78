// The Configuration entity workflow (Knative's Configuration reconciler) of a Configuration no Service controls (a Service's own is reconciled in
// the Service's pass, ADR 0005): one Revision per generation, then latestCreated/latestReady.
import type { ObjectKey } from '../api/meta.js';
import { runEntity, type EntityInput, type PassResult } from './entity.js';
import { step } from './activities.js';
import { describeGc, describeStatus, gcWake, isSettled } from './summaries.js';
import { collectRevisions } from './revision-gc.js';
import { ownFact, ownerReconciles } from './delegation.js';
import { writtenBefore, writtenFacts } from './written.js';

export async function configurationWorkflow(input: EntityInput): Promise<string> {
  const key: ObjectKey = { namespace: input.namespace, name: input.name };
  const id = `${key.namespace}/${key.name}`;
  return runEntity(input, async (st): Promise<PassResult> => {
    const delegated = await ownerReconciles(st, 'Configuration', key);
    if (delegated) return delegated;
    // Only a Revision's status changed: the Revision for this generation exists; latestReady may move. (After a failed
    // creation the full pass runs again, so the failure stays in the status.)
    if (st.statusOnly && st.facts.revisionFailed !== 'yes') {
      const status = await step(`update Configuration ${id} status`).updateConfigurationStatus(key, undefined, { written: writtenBefore(st) });
      if (status.outcome === 'gone') return { gone: true, summary: 'Configuration deleted' };
      // A Revision turning `reserve` is such news too (api/content-token.ts): it may be collectable now.
      const gc = await collectRevisions(key, writtenBefore(st));
      return {
        gone: false,
        statusOnly: true,
        settled: isSettled(status),
        ...gcWake(id, gc),
        facts: ownFact,
        summary: [`Revisions' status changed; ${describeStatus(status)}`, describeGc(gc)].filter(Boolean).join('; '),
      };
    }
    const rev = await step(`ensure Revision of Configuration ${id}`).reconcileConfigurationRevision(key, { written: writtenBefore(st) });
    if (rev.outcome === 'gone') return { gone: true, summary: 'Configuration deleted; its Revisions go with their ownerReferences' };
    const createError = rev.outcome === 'failed' ? rev.message : undefined;
    const status = await step(`update Configuration ${id} status`).updateConfigurationStatus(key, createError, { written: rev.written ?? {} });
    if (status.outcome === 'gone') return { gone: true, summary: 'Configuration deleted' };
    const gc = await collectRevisions(key, rev.written ?? {});
    return {
      gone: false,
      settled: isSettled(status),
      uid: rev.uid,
      ...gcWake(id, gc),
      facts: { ...ownFact, revisionFailed: rev.outcome === 'failed' ? 'yes' : '', ...writtenFacts(rev) },
      summary: [`generation ${rev.generation}: Revision ${rev.revision} ${rev.outcome}; ${describeStatus(status)}`, describeGc(gc)]
        .filter(Boolean)
        .join('; '),
    };
  });
}
