// The shipped config maps applied over the ones a stack already holds. A Knative user expects an edit to survive
// a re-install: upstream's config maps carry only `_example`, so `kubectl apply` never touches a value the user set.
// Tidal's carry hakn's values as real keys, so the launcher leaves out each key someone else changed or removed since
// it applied it (server-side apply would refuse to take a changed key back: a conflict) and says which ones it kept;
// `reset` applies every shipped value, taking the keys back.

/** The field manager of everything the launcher applies. */
export const INSTALLER = 'tidal-installer';

/** The data keys the launcher last shipped in a config map, so a key absent now was removed by someone since. */
export const SHIPPED_KEYS = 'tidal.dev/shipped-keys';

/** What `npm run up` takes to apply the shipped values over the user's. */
export const RESET_HINT = 'npm run up -- --reset-config';

interface ManagedFields {
  manager?: string;
  fieldsV1?: Record<string, unknown>;
}

/** A config map as the API server returns it (with its managedFields). */
export interface LiveConfigMap {
  metadata: { name: string; namespace?: string; annotations?: Record<string, string>; managedFields?: ManagedFields[] };
  data?: Record<string, string>;
}

/** A shipped key whose value in the cluster is someone else's: changed (`value`) or removed (no `value`). */
export interface UserEdit {
  key: string;
  value?: string;
  shipped: string;
}

export interface EditedConfigMap {
  namespace: string;
  name: string;
  edits: UserEdit[];
}

export interface ConfigMapPlan {
  /** The objects to apply, each annotated with its shipped keys; without the edited keys unless `reset`. */
  items: Record<string, unknown>[];
  /** The config maps holding edits: kept, or overwritten with `reset`. */
  edited: EditedConfigMap[];
}

interface Shipped {
  metadata?: { name?: string; namespace?: string; annotations?: Record<string, string> };
  data?: Record<string, string>;
}

/** Whether a manager other than the launcher owns `data.<key>`. */
function ownedByOthers(live: LiveConfigMap, key: string): boolean {
  return (live.metadata.managedFields ?? []).some((m) => {
    if (m.manager === INSTALLER) return false;
    const data = m.fieldsV1?.['f:data'];
    return typeof data === 'object' && data !== null && `f:${key}` in data;
  });
}

/** The shipped keys the cluster holds otherwise because someone else changed or removed them. */
function userEdits(shipped: Record<string, string>, live: LiveConfigMap): UserEdit[] {
  const data = live.data ?? {};
  const lastShipped = new Set((live.metadata.annotations?.[SHIPPED_KEYS] ?? '').split(',').filter((k) => k !== ''));
  return Object.entries(shipped).flatMap(([key, value]): UserEdit[] => {
    if (!(key in data)) return lastShipped.has(key) ? [{ key, shipped: value }] : [];
    // A value only the launcher owns is its own earlier shipped one: applying updates it.
    return data[key] !== value && ownedByOthers(live, key) ? [{ key, value: data[key], shipped: value }] : [];
  });
}

/**
 * What to apply of `shipped` (config maps, and anything else, passed through) given the config maps the cluster
 * holds (`live`, from every namespace `shipped` names).
 */
export function planConfigMaps(shipped: Record<string, unknown>[], live: LiveConfigMap[], reset: boolean): ConfigMapPlan {
  const byName = new Map(live.map((c) => [`${c.metadata.namespace ?? ''}/${c.metadata.name}`, c]));
  const edited: EditedConfigMap[] = [];
  const items = shipped.map((o) => {
    if (o.kind !== 'ConfigMap') return o;
    const s = o as Shipped;
    const namespace = s.metadata?.namespace ?? '';
    const name = s.metadata?.name ?? '';
    const data = s.data ?? {};
    const current = byName.get(`${namespace}/${name}`);
    const edits = current ? userEdits(data, current) : [];
    if (edits.length > 0) edited.push({ namespace, name, edits });
    const left = new Set(reset ? [] : edits.map((e) => e.key));
    return {
      ...o,
      metadata: { ...s.metadata, annotations: { ...s.metadata?.annotations, [SHIPPED_KEYS]: Object.keys(data).sort().join(',') } },
      data: Object.fromEntries(Object.entries(data).filter(([k]) => !left.has(k))),
    };
  });
  return { items, edited };
}

/** A value for a log line: quoted, its first 40 characters. */
function shown(v: string): string {
  const q = JSON.stringify(v);
  return q.length > 42 ? `${q.slice(0, 41)}…"` : q;
}

/** The log lines that name the edited config maps and keys: kept, or overwritten with `reset`. */
export function describeEdits(edited: EditedConfigMap[], reset: boolean): string[] {
  if (edited.length === 0) return [];
  const head = reset
    ? 'config maps: the shipped values applied over your changes:'
    : `config maps: kept your changes to the shipped values (${RESET_HINT} applies the shipped ones):`;
  const lines = edited.map(({ namespace, name, edits }) => {
    const keys = edits.map((e) => `${e.key} ${e.value === undefined ? 'removed' : shown(e.value)} (shipped ${shown(e.shipped)})`);
    return `  ${namespace}/${name}: ${keys.join('; ')}`;
  });
  return [head, ...lines];
}

/**
 * Applies `shipped` over the config maps the cluster holds (see the top of this file), logs the edited keys and
 * returns them. `kubectl` runs against the stack.
 */
export async function applyConfigMaps(
  kubectl: (args: string[], input?: string) => Promise<string>,
  shipped: Record<string, unknown>[],
  opts: { reset?: boolean; log: (s: string) => void },
): Promise<EditedConfigMap[]> {
  const reset = opts.reset ?? false;
  const namespaces = [...new Set(shipped.filter((o) => o.kind === 'ConfigMap').map((o) => (o as Shipped).metadata?.namespace ?? ''))].filter(
    (n) => n !== '',
  );
  const live: LiveConfigMap[] = [];
  for (const ns of namespaces) {
    const list = JSON.parse(await kubectl(['get', 'configmaps', '-n', ns, '-o', 'json', '--show-managed-fields'])) as { items: LiveConfigMap[] };
    live.push(...list.items);
  }
  const plan = planConfigMaps(shipped, live, reset);
  const args = ['apply', '--server-side', `--field-manager=${INSTALLER}`, ...(reset ? ['--force-conflicts'] : []), '-f', '-'];
  try {
    await kubectl(args, JSON.stringify({ apiVersion: 'v1', kind: 'List', items: plan.items }));
  } catch (err) {
    // A label someone changed, or a key changed between the read above and this apply, still conflicts.
    if (String(err).includes('conflict')) throw new Error(`${String(err)}\n${RESET_HINT} applies the shipped values over it`);
    throw err;
  }
  for (const line of describeEdits(plan.edited, reset)) opts.log(line);
  return plan.edited;
}
