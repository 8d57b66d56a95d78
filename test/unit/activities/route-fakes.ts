// An in-memory stand-in for the Kubernetes client, for the Route activity's unit tests: get, list (equality label
// selectors), server-side apply (a field Tidal applied before and no longer applies is removed, as the API server's
// field ownership does; lists are atomic), status apply, JSON merge patch, create and delete. It counts writes so a
// test can see that a pass with nothing to do writes nothing.
import type { ResourceType } from '../../../api/kinds.js';
import type { KubeObject } from '../../../api/meta.js';
import { KubeApiError } from '../../../activities/kube/errors.js';
import type { KubeClient } from '../../../activities/kube/client.js';

type Json = Record<string, unknown>;

const isObj = (v: unknown): v is Json => v !== null && typeof v === 'object' && !Array.isArray(v);
const clone = <T>(v: T): T => (v === undefined ? v : (JSON.parse(JSON.stringify(v)) as T));
const specOf = (o: object): string => JSON.stringify((o as Json)['spec']);

/** RFC 7386 JSON merge patch. */
export function mergePatchJson(target: unknown, patch: unknown): unknown {
  if (!isObj(patch)) return clone(patch);
  const out: Json = isObj(target) ? { ...target } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = mergePatchJson(out[k], v);
  }
  return out;
}

/** Removes from `live` every field `prev` (the last apply) set that `next` (this apply) no longer sets. */
function prune(live: Json, prev: Json, next: Json): void {
  for (const [k, v] of Object.entries(prev)) {
    if (!(k in next)) delete live[k];
    else if (isObj(v) && isObj(next[k]) && isObj(live[k])) prune(live[k] as Json, v, next[k] as Json);
  }
}

/** Deep merge of `patch` into `live` (objects merged, everything else replaced). */
function merge(live: Json, patch: Json): Json {
  for (const [k, v] of Object.entries(patch)) {
    live[k] = isObj(v) && isObj(live[k]) ? merge(live[k] as Json, v) : clone(v);
  }
  return live;
}

export interface Write {
  verb: 'apply' | 'status' | 'patch' | 'create' | 'delete';
  id: string;
  body?: unknown;
}

export class FakeKube {
  private readonly objects = new Map<string, KubeObject>();
  private readonly applied = new Map<string, Json>();
  private rv = 100;
  private uids = 0;
  writes: Write[] = [];

  private id(type: ResourceType, ns: string | undefined, name: string | undefined): string {
    return `${type.group || 'core'}/${type.plural}/${ns ?? ''}/${name ?? ''}`;
  }

  /** Puts an object in the store as someone else wrote it (a uid and resourceVersion are filled in). */
  seed<T extends KubeObject>(type: ResourceType, obj: T): T {
    const o = clone(obj);
    o.metadata.uid ??= `uid-${o.metadata.name ?? ''}-${++this.uids}`;
    o.metadata.resourceVersion = String(++this.rv);
    o.metadata.generation ??= 1;
    this.objects.set(this.id(type, o.metadata.namespace, o.metadata.name), o);
    return clone(o);
  }

  /** Edits a stored object in place, as another writer would (bumps resourceVersion, and generation on spec change). */
  edit<T extends KubeObject>(type: ResourceType, ns: string, name: string, fn: (o: T) => void): void {
    const o = this.objects.get(this.id(type, ns, name)) as T | undefined;
    if (!o) throw new Error(`no ${type.kind} ${ns}/${name}`);
    const spec = specOf(o);
    fn(o);
    o.metadata.resourceVersion = String(++this.rv);
    if (specOf(o) !== spec) o.metadata.generation = (o.metadata.generation ?? 1) + 1;
  }

  peek<T extends KubeObject>(type: ResourceType, ns: string, name: string): T | undefined {
    return clone(this.objects.get(this.id(type, ns, name)) as T | undefined);
  }

  all(type: ResourceType, ns: string): KubeObject[] {
    const prefix = this.id(type, ns, '');
    return [...this.objects.entries()].filter(([k]) => k.startsWith(prefix)).map(([, v]) => clone(v));
  }

  clearWrites(): void {
    this.writes = [];
  }

  private notFound(verb: string, id: string): never {
    throw new KubeApiError(404, 'NotFound', `${id} not found`, verb, id);
  }

  private store(id: string, next: KubeObject, before: KubeObject | undefined): KubeObject {
    next.metadata.resourceVersion = String(++this.rv);
    if (!before) {
      next.metadata.uid ??= `uid-${next.metadata.name ?? ''}-${++this.uids}`;
      next.metadata.generation = 1;
    } else if (specOf(before) !== specOf(next)) {
      next.metadata.generation = (before.metadata.generation ?? 1) + 1;
    }
    this.objects.set(id, next);
    return clone(next);
  }

  client(): KubeClient {
    const self = this;
    const api = {
      async get(type: ResourceType, ns: string, name: string) {
        return clone(self.objects.get(self.id(type, ns, name)));
      },
      async list(type: ResourceType, ns?: string, opts: { labelSelector?: string } = {}) {
        const want = (opts.labelSelector ?? '')
          .split(',')
          .filter((s) => s !== '')
          .map((s) => s.split('=') as [string, string]);
        const items = self
          .all(type, ns ?? '')
          .filter((o) => want.every(([k, v]) => o.metadata.labels?.[k] === v));
        return { items, resourceVersion: String(self.rv) };
      },
      async apply(type: ResourceType, obj: KubeObject, subresource?: 'status') {
        const id = self.id(type, obj.metadata.namespace, obj.metadata.name);
        const before = self.objects.get(id);
        if (subresource === 'status') {
          if (!before) return self.notFound('APPLY', id);
          self.writes.push({ verb: 'status', id, body: clone((obj as unknown as Json)['status']) });
          const next = clone(before);
          (next as unknown as Json)['status'] = clone((obj as unknown as Json)['status']);
          next.metadata.resourceVersion = String(++self.rv);
          self.objects.set(id, next);
          return clone(next);
        }
        self.writes.push({ verb: 'apply', id, body: clone(obj) });
        const next = clone(before ?? { apiVersion: obj.apiVersion, kind: obj.kind, metadata: {} }) as Json & KubeObject;
        const prev = self.applied.get(id);
        if (prev) prune(next, clone(prev), obj as unknown as Json);
        merge(next, clone(obj) as unknown as Json);
        self.applied.set(id, clone(obj) as unknown as Json);
        return self.store(id, next, before);
      },
      async create(type: ResourceType, obj: KubeObject) {
        const id = self.id(type, obj.metadata.namespace, obj.metadata.name);
        if (self.objects.has(id)) throw new KubeApiError(409, 'AlreadyExists', `${id} exists`, 'CREATE', id);
        self.writes.push({ verb: 'create', id, body: clone(obj) });
        return self.store(id, clone(obj), undefined);
      },
      async mergePatch(type: ResourceType, ns: string, name: string, patch: unknown) {
        const id = self.id(type, ns, name);
        const before = self.objects.get(id);
        if (!before) return self.notFound('PATCH', id);
        self.writes.push({ verb: 'patch', id, body: clone(patch) });
        return self.store(id, mergePatchJson(before, patch) as KubeObject, before);
      },
      async delete(type: ResourceType, ns: string, name: string) {
        const id = self.id(type, ns, name);
        if (!self.objects.has(id)) return false;
        self.writes.push({ verb: 'delete', id });
        self.objects.delete(id);
        self.applied.delete(id);
        return true;
      },
    };
    return api as unknown as KubeClient;
  }
}
