// Reading one's own writes from the watcher's cache (Knative's listers). An entity workflow's passes list what they
// wrote before — the labeler's Revisions and Configurations, a Route's placeholder Services, a Configuration's
// Revisions — so each pass reports the newest version it wrote of those kinds, the workflow carries them to the next
// pass, and a list comes from the cache only once the cache reflects them. Otherwise it comes from the API server,
// where a namespace-wide list reads every object of the namespace, on every pass.
import { Resources, type ResourceType } from '../api/kinds.js';
import type { KubeObject } from '../api/meta.js';
import type { ActivityDeps } from './deps.js';
import { writtenVersion } from './observe.js';
import { firstAttempt } from './attempt.js';

/** The kinds passes list after writing them. */
export type ListedKind = 'Revision' | 'Configuration' | 'Service';

/**
 * The newest resourceVersion an entity workflow's passes wrote, per listed kind. `unrecorded`: a pass failed after
 * writing, and what it wrote is recorded nowhere — the cache may not reflect it, so lists come from the API server (as
 * a step's retry's do).
 */
export type WrittenVersions = Partial<Record<ListedKind, string>> & { unrecorded?: true };

const listedTypes: Record<ListedKind, ResourceType> = {
  Revision: Resources.Revision,
  Configuration: Resources.Configuration,
  Service: Resources.KubeService,
};

/** The newer of two resourceVersions (numbers as strings; undefined loses). */
export function newerVersion(a: string | undefined, b: string | undefined): string | undefined {
  if (a === undefined || b === undefined) return a ?? b;
  return BigInt(a) >= BigInt(b) ? a : b;
}

/** `prior` with the running activity's own writes of the listed kinds: what the next pass must see reflected. */
export function writtenSoFar(prior: WrittenVersions = {}): WrittenVersions {
  const out: WrittenVersions = prior.unrecorded ? { unrecorded: true } : {};
  for (const kind of Object.keys(listedTypes) as ListedKind[]) {
    const v = newerVersion(prior[kind], writtenVersion(listedTypes[kind]));
    if (v !== undefined) out[kind] = v;
  }
  return out;
}

/**
 * The objects of `kind` in `namespace` with `labels`: from the cache (metadata only: `cached` true) when it reflects
 * `prior` and this activity's own writes, else — on a retry, or after a failed pass (`unrecorded`) — from the API
 * server (whole objects).
 */
export async function listOwnWrites<T extends KubeObject>(
  deps: Pick<ActivityDeps, 'kube' | 'cache'>,
  kind: ListedKind,
  namespace: string,
  labels: Readonly<Record<string, string>>,
  prior: WrittenVersions = {},
): Promise<{ items: T[]; cached: boolean }> {
  const type = listedTypes[kind];
  const after = newerVersion(prior[kind], writtenVersion(type));
  const fromCache =
    deps.cache && firstAttempt() && !prior.unrecorded ? await deps.cache.list(type, namespace, { labels, ...(after ? { after } : {}) }) : undefined;
  if (fromCache) return { items: fromCache as T[], cached: true };
  const selector = Object.entries(labels).map(([k, v]) => `${k}=${v}`);
  const list = await deps.kube.list<T>(type, namespace, selector.length ? { labelSelector: selector.join(',') } : {});
  return { items: list.items, cached: false };
}
