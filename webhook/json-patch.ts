// RFC 6902 JSON patches: the difference between the object a request sent and the object the webhook wants stored,
// as the API server applies it (AdmissionResponse.patch, patchType JSONPatch). Pure.

export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

export type JsonPatchOperation =
  { op: 'add'; path: string; value: JsonValue } | { op: 'replace'; path: string; value: JsonValue } | { op: 'remove'; path: string };

/** One reference token of a JSON pointer (RFC 6901 §3): `~` → `~0`, then `/` → `~1`. */
export function escapePointerToken(key: string): string {
  return key.replace(/~/g, '~0').replace(/\//g, '~1');
}

function isObject(v: unknown): v is Record<string, JsonValue> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Deep equality of JSON values; members set to undefined count as absent. */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((x, i) => jsonEqual(x, b[i]));
  if (isObject(a) && isObject(b)) {
    const ka = Object.keys(a).filter((k) => a[k] !== undefined);
    const kb = Object.keys(b).filter((k) => b[k] !== undefined);
    return ka.length === kb.length && ka.every((k) => k in b && jsonEqual(a[k], b[k]));
  }
  return false;
}

/**
 * The operations that turn `from` into `to`. Objects are compared key by key; arrays of equal length element by
 * element, arrays whose length changed are replaced whole (a smaller patch is not worth index bookkeeping here).
 * Keys whose value is `undefined` count as absent, as JSON.stringify would have it.
 */
export function diffJson(from: unknown, to: unknown, path = ''): JsonPatchOperation[] {
  if (jsonEqual(from, to)) return [];
  if (isObject(from) && isObject(to)) {
    const ops: JsonPatchOperation[] = [];
    for (const key of Object.keys(from)) {
      if (from[key] !== undefined && to[key] === undefined) ops.push({ op: 'remove', path: `${path}/${escapePointerToken(key)}` });
    }
    for (const key of Object.keys(to)) {
      const value = to[key];
      if (value === undefined) continue;
      const child = `${path}/${escapePointerToken(key)}`;
      if (from[key] === undefined) ops.push({ op: 'add', path: child, value: toJson(value) });
      else ops.push(...diffJson(from[key], value, child));
    }
    return ops;
  }
  if (Array.isArray(from) && Array.isArray(to) && from.length === to.length) {
    return from.flatMap((x, i) => diffJson(x, to[i], `${path}/${i}`));
  }
  // The document root can only be replaced, never added or removed.
  return [{ op: 'replace', path, value: toJson(to) }];
}

/** A copy without `undefined` members, so the patch carries exactly what JSON would. */
function toJson(v: unknown): JsonValue {
  return JSON.parse(JSON.stringify(v ?? null)) as JsonValue;
}

/** Applies a patch made by {@link diffJson} (the subset of RFC 6902 it emits); for tests and the benchmark's check. */
export function applyJsonPatch(doc: unknown, ops: readonly JsonPatchOperation[]): unknown {
  let root = toJson(doc);
  for (const op of ops) {
    if (op.path === '') {
      if (op.op === 'remove') throw new Error('cannot remove the document root');
      root = toJson(op.value);
      continue;
    }
    const tokens = op.path
      .slice(1)
      .split('/')
      .map((t) => t.replace(/~1/g, '/').replace(/~0/g, '~'));
    const last = tokens.pop() as string;
    let parent: JsonValue = root;
    for (const t of tokens) {
      const next: JsonValue | undefined = Array.isArray(parent) ? parent[Number(t)] : isObject(parent) ? parent[t] : undefined;
      if (next === undefined) throw new Error(`path ${op.path} does not exist`);
      parent = next;
    }
    if (Array.isArray(parent)) {
      const i = last === '-' ? parent.length : Number(last);
      if (op.op === 'remove') parent.splice(i, 1);
      else if (op.op === 'add') parent.splice(i, 0, toJson(op.value));
      else parent[i] = toJson(op.value);
    } else if (isObject(parent)) {
      if (op.op === 'remove') {
        if (!(last in parent)) throw new Error(`path ${op.path} does not exist`);
        delete parent[last];
      } else {
        if (op.op === 'replace' && !(last in parent)) throw new Error(`path ${op.path} does not exist`);
        parent[last] = toJson(op.value);
      }
    } else throw new Error(`path ${op.path} has no container`);
  }
  return root;
}
