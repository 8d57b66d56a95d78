// A Configuration or Route controlled by a Service, or a KIngress controlled by a Route, is reconciled in its owner's
// pass (ADR 0005) and the watcher pokes the owner for it. Should its own workflow run anyway (started by an older
// version, or by a poke sent before the watcher knew the owner), the run looks once and ends.
import type { EntityKind } from '../api/entity.js';
import type { ObjectKey } from '../api/meta.js';
import type { EntityState, PassResult } from './entity.js';
import { step } from './activities.js';

/** A pass that ends the run when the owner reconciles this object; undefined when the object is this workflow's. */
export async function ownerReconciles(st: Readonly<EntityState>, kind: EntityKind, key: ObjectKey): Promise<PassResult | undefined> {
  if (st.facts.own === 'yes') return undefined;
  const id = `${kind} ${key.namespace}/${key.name}`;
  const found = await step(`find the workflow that reconciles ${id}`).findReconcilingOwner(kind, key);
  if (found.outcome === 'delegated') return { gone: true, summary: `${id} is reconciled by ${found.owner}'s workflow; this one ends` };
  return undefined;
}

/** The fact a pass remembers once it knows the object is its own. */
export const ownFact = { own: 'yes' } as const;
