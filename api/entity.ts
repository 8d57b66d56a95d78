// The contract between the watcher and the entity workflows: workflow ids, pokes, signal and query names.
// Pure and dependency-free so both sides (and tests) import the same definitions.
import type { ObjectKey } from './meta.js';

/** Kinds that have an entity workflow. */
export const EntityKinds = ['Service', 'Configuration', 'Revision', 'Route', 'Ingress', 'DomainMapping'] as const;
export type EntityKind = (typeof EntityKinds)[number];

export function isEntityKind(s: string): s is EntityKind {
  return (EntityKinds as readonly string[]).includes(s);
}

/** Workflow type names, one per kind: `serviceWorkflow`, `configurationWorkflow`, ... */
export function workflowTypeOf(kind: EntityKind): string {
  return `${kind.charAt(0).toLowerCase()}${kind.slice(1)}Workflow`;
}

/** `<Kind>/<namespace>/<name>`: the stable id of an object's entity workflow. */
export function entityWorkflowId(kind: EntityKind, key: ObjectKey): string {
  return `${kind}/${key.namespace}/${key.name}`;
}

export function parseEntityWorkflowId(id: string): { kind: EntityKind; key: ObjectKey } | undefined {
  const parts = id.split('/');
  if (parts.length !== 3) return undefined;
  const [kind, namespace, name] = parts as [string, string, string];
  if (!isEntityKind(kind) || namespace === '' || name === '') return undefined;
  return { kind, key: { namespace, name } };
}

/**
 * A poke tells an entity workflow to look at its object again. It names the object whose change caused it
 * (`source`, e.g. `Configuration/default/nginx`), that object's resourceVersion and the content token of what the
 * target reads of it (`api/content-token.ts`), never the object itself.
 */
export interface Poke {
  source: string;
  resourceVersion?: string;
  generation?: number;
  /** `s.<hash>` (the target's own object, status left out) or `d.<hash>` (any other object, status included). */
  token?: string;
  reason: PokeReason;
}

/** The poke signal's payload: the watcher sends every source's latest poke for a workflow in one signal. */
export type PokeBatch = Poke | Poke[];

export type PokeReason = 'added' | 'updated' | 'deleted' | 'resync' | 'dependency';

export const POKE_SIGNAL = 'poke';
export const STATE_QUERY = 'state';

/** Search attributes every entity workflow carries (Keyword), so the Temporal UI can filter by object. */
export const SearchAttributeNames = {
  kind: 'KnativeKind',
  namespace: 'KnativeNamespace',
  name: 'KnativeName',
} as const;
