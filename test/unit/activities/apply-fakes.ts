// An in-memory Kubernetes client for the apply, Service, Revision and Configuration activity tests. Server-side
// apply behaves as the API server's field ownership does for a single manager: a field the previous apply set and
// this one does not is removed; lists are atomic; other writers' fields stay. `failNext` makes writes fail as the
// API server refuses them (422, 403, a webhook's 400). Events are stored like any object, so tests can read them.
import type { ResourceType } from '../../../api/kinds.js';
import type { KubeObject } from '../../../api/meta.js';
import { KubeApiError } from '../../../activities/kube/errors.js';
import type { KubeClient } from '../../../activities/kube/client.js';

type Json = Record<string, unknown>;
const isObj = (v: unknown): v is Json => v !== null && typeof v === 'object' && !Array.isArray(v);
const clone = <T>(v: T): T => (v === undefined ? v : (JSON.parse(JSON.stringify(v)) as T));

function prune(live: Json, prev: Json, next: Json): void {
  for (const [k, v] of Object.entries(prev)) {
    if (!(k in next)) delete live[k];
    else if (isObj(v) && isObj(next[k]) && isObj(live[k])) prune(live[k] as Json, v, next[k] as Json);
  }
}

function merge(live: Json, patch: Json): Json {
  for (const [k, v] of Object.entries(patch)) live[k] = isObj(v) && isObj(live[k]) ? merge(live[k] as Json, v) : clone(v);
  return live;
}

function mergePatch(target: unknown, patch: unknown): unknown {
  if (!isObj(patch)) return clone(patch);
  const out: Json = isObj(target) ? { ...target } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = mergePatch(out[k], v);
  }
  return out;
}

export interface Call {
  verb: 'apply' | 'status' | 'create' | 'patch' | 'get';
  kind: string;
  name: string;
  body?: unknown;
}

export class KubeFake {
  readonly objects = new Map<string, KubeObject>();
  private readonly applied = new Map<string, Json>();
  private readonly failures: { verb: Call['verb']; kind: string; error: Error }[] = [];
  private rv = 1;
  calls: Call[] = [];

  private key(kind: string, ns: string | undefined, name: string | undefined): string {
    return `${kind}/${ns ?? ''}/${name ?? ''}`;
  }

  /** Stores an object as another writer made it. */
  seed<T extends KubeObject>(obj: T): T {
    const o = clone(obj);
    o.metadata.uid ??= `uid-${o.metadata.name ?? ''}`;
    o.metadata.generation ??= 1;
    o.metadata.resourceVersion = String(++this.rv);
    this.objects.set(this.key(o.kind, o.metadata.namespace, o.metadata.name), o);
    return clone(o);
  }

  /** Edits a stored object in place, as another writer (a user's `kubectl edit`) would. */
  edit<T extends KubeObject>(kind: string, ns: string, name: string, fn: (o: T) => void): void {
    const o = this.objects.get(this.key(kind, ns, name)) as T | undefined;
    if (!o) throw new Error(`no ${kind} ${ns}/${name}`);
    fn(o);
    o.metadata.resourceVersion = String(++this.rv);
  }

  get<T extends KubeObject>(kind: string, ns: string, name: string): T | undefined {
    return clone(this.objects.get(this.key(kind, ns, name)) as T | undefined);
  }

  list(kind: string): KubeObject[] {
    return [...this.objects.values()].filter((o) => o.kind === kind).map((o) => clone(o));
  }

  /** The next write of `verb` on `kind` fails with `error`. */
  failNext(verb: Call['verb'], kind: string, error: Error): void {
    this.failures.push({ verb, kind, error });
  }

  writes(verb?: Call['verb']): Call[] {
    return this.calls.filter((c) => c.verb !== 'get' && (verb === undefined || c.verb === verb));
  }

  private maybeFail(verb: Call['verb'], kind: string): void {
    const i = this.failures.findIndex((f) => f.verb === verb && f.kind === kind);
    if (i >= 0) throw this.failures.splice(i, 1)[0]!.error;
  }

  private store(key: string, next: KubeObject, before: KubeObject | undefined): KubeObject {
    next.metadata.resourceVersion = String(++this.rv);
    if (!before) {
      next.metadata.uid ??= `uid-${next.metadata.name ?? ''}`;
      next.metadata.generation = 1;
    } else if (JSON.stringify((before as unknown as Json)['spec']) !== JSON.stringify((next as unknown as Json)['spec'])) {
      next.metadata.generation = (before.metadata.generation ?? 1) + 1;
    }
    this.objects.set(key, next);
    return clone(next);
  }

  client(): KubeClient {
    const self = this;
    return {
      fieldManager: 'tidal',
      async get(type: ResourceType, ns: string, name: string) {
        self.calls.push({ verb: 'get', kind: type.kind, name });
        return clone(self.objects.get(self.key(type.kind, ns, name)));
      },
      async list(type: ResourceType, ns?: string, opts: { labelSelector?: string } = {}) {
        const want = (opts.labelSelector ?? '').split(',').filter((s) => s !== '').map((s) => s.split('=') as [string, string]);
        const items = self.list(type.kind).filter((o) => (ns === undefined || o.metadata.namespace === ns) && want.every(([k, v]) => o.metadata.labels?.[k] === v));
        return { items, resourceVersion: String(self.rv) };
      },
      async apply(type: ResourceType, obj: KubeObject, subresource?: 'status') {
        const key = self.key(type.kind, obj.metadata.namespace, obj.metadata.name);
        const before = self.objects.get(key);
        const verb = subresource === 'status' ? 'status' : 'apply';
        self.calls.push({ verb, kind: type.kind, name: obj.metadata.name ?? '', body: clone(obj) });
        self.maybeFail(verb, type.kind);
        if (subresource === 'status') {
          if (!before) throw new KubeApiError(404, 'NotFound', 'not found', 'APPLY', key);
          const next = clone(before);
          (next as unknown as Json)['status'] = clone((obj as unknown as Json)['status']);
          next.metadata.resourceVersion = String(++self.rv);
          self.objects.set(key, next);
          return clone(next);
        }
        const next = clone(before ?? { apiVersion: obj.apiVersion, kind: obj.kind, metadata: {} }) as Json & KubeObject;
        const prev = self.applied.get(key);
        if (prev) prune(next, clone(prev), obj as unknown as Json);
        merge(next, clone(obj) as unknown as Json);
        self.applied.set(key, clone(obj) as unknown as Json);
        return self.store(key, next, before);
      },
      async create(type: ResourceType, obj: KubeObject) {
        const key = self.key(type.kind, obj.metadata.namespace, obj.metadata.name);
        self.calls.push({ verb: 'create', kind: type.kind, name: obj.metadata.name ?? '', body: clone(obj) });
        self.maybeFail('create', type.kind);
        if (self.objects.has(key)) throw new KubeApiError(409, 'AlreadyExists', `${key} already exists`, 'CREATE', key);
        return self.store(key, clone(obj), undefined);
      },
      async mergePatch(type: ResourceType, ns: string, name: string, patch: unknown) {
        const key = self.key(type.kind, ns, name);
        const before = self.objects.get(key);
        self.calls.push({ verb: 'patch', kind: type.kind, name, body: clone(patch) });
        self.maybeFail('patch', type.kind);
        if (!before) throw new KubeApiError(404, 'NotFound', `${key} not found`, 'PATCH', key);
        return self.store(key, mergePatch(before, patch) as KubeObject, before);
      },
    } as unknown as KubeClient;
  }
}

/** A KubeApiError as KubeClient throws it for a refused write. */
export function refused(code: number, reason: string, message: string, verb = 'APPLY', path = '/apis/x'): KubeApiError {
  return new KubeApiError(code, reason, message, verb, path);
}
