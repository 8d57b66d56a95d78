// An in-memory Kubernetes client for the activity unit tests. Objects are keyed by API group, plural, namespace and
// name, so a Knative Service and a core Service of the same name are different objects. It serves get, list
// (equality label selectors), server-side apply (as the API server's field ownership does for a single manager: a
// field the previous apply set and this one does not is removed; lists are atomic; other writers' fields stay),
// status apply, create (409 when the object exists), update (PUT: the body replaces the object, its status kept; 409
// when its resourceVersion is not the stored one), JSON merge patch and delete. Every call is recorded (a write with
// whether its object was there: an apply creates or updates), so a test can see that a pass with nothing to do writes
// nothing; `failNext` makes a call fail as the API server refuses it (422, 403, a webhook's 400). Events are stored
// like any object, so tests can read them.
import pino from 'pino';
import type { RevisionConfig } from '../../../api/config/index.js';
import type { ActivityDeps, ConfigSource } from '../../../activities/deps.js';
import type { DigestResolver } from '../../../registry/digest-resolver.js';
import type { EventRecorder } from '../../../activities/events.js';
import { revisionConfig as testRevisionConfig } from '../../fixtures/revision.js';
import type { ResourceType } from '../../../api/kinds.js';
import type { KubeObject } from '../../../api/meta.js';
import { KubeApiError } from '../../../kube/errors.js';
import { noteObject, noteWritten } from '../../../activities/observe.js';
import type { KubeClient } from '../../../kube/client.js';
import { parseDomainConfig } from '../../../api/config/domain.js';
import { defaultFeaturesConfig } from '../../../api/config/features.js';
import { parseNetworkConfig } from '../../../api/config/network.js';

type Json = Record<string, unknown>;

const isObj = (v: unknown): v is Json => v !== null && typeof v === 'object' && !Array.isArray(v);
const clone = <T>(v: T): T => (v === undefined ? v : (JSON.parse(JSON.stringify(v)) as T));
const specOf = (o: object): string => JSON.stringify((o as Json)['spec']);

/** RFC 7386 JSON merge patch. */
function mergePatchJson(target: unknown, patch: unknown): unknown {
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
    else if (isObj(v) && isObj(next[k]) && isObj(live[k])) prune(live[k], v, next[k]);
  }
}

/** Deep merge of `patch` into `live` (objects merged, everything else replaced). */
function merge(live: Json, patch: Json): Json {
  for (const [k, v] of Object.entries(patch)) live[k] = isObj(v) && isObj(live[k]) ? merge(live[k], v) : clone(v);
  return live;
}

export type Verb = 'get' | 'list' | 'apply' | 'status' | 'create' | 'update' | 'patch' | 'delete';

export interface Call {
  verb: Verb;
  /** `group/plural/namespace/name`, the core group spelled `core`. */
  id: string;
  kind: string;
  name: string;
  body?: unknown;
  /** For a write: whether the object was there when the call came (an apply of a new object creates it). */
  existed?: boolean;
}

const READS: readonly Verb[] = ['get', 'list'];

export class KubeFake {
  readonly objects = new Map<string, KubeObject>();
  private readonly applied = new Map<string, Json>();
  private readonly failures: { verb: Verb; type: ResourceType; error: Error }[] = [];
  private rv = 100;
  private uids = 0;
  /** Every call the client served, in order (reset it with `calls = []`). */
  calls: Call[] = [];

  private id(type: ResourceType, ns: string | undefined, name: string | undefined): string {
    return `${type.group || 'core'}/${type.plural}/${ns ?? ''}/${name ?? ''}`;
  }

  private sameType(a: ResourceType, b: ResourceType): boolean {
    return a.group === b.group && a.plural === b.plural;
  }

  /** Puts an object in the store as another writer made it (a uid, generation and resourceVersion are filled in). */
  seed<T extends KubeObject>(type: ResourceType, obj: T): T {
    const o = clone(obj);
    o.metadata.uid ??= `uid-${o.metadata.name ?? ''}-${++this.uids}`;
    o.metadata.generation ??= 1;
    o.metadata.resourceVersion = String(++this.rv);
    this.objects.set(this.id(type, o.metadata.namespace, o.metadata.name), o);
    return clone(o);
  }

  /** Edits a stored object in place, as another writer (a user's `kubectl edit`) would: bumps resourceVersion, and
   * generation on a spec change. */
  edit<T extends KubeObject>(type: ResourceType, ns: string, name: string, fn: (o: T) => void): void {
    const o = this.objects.get(this.id(type, ns, name)) as T | undefined;
    if (!o) throw new Error(`no ${type.kind} ${ns}/${name}`);
    const spec = specOf(o);
    fn(o);
    o.metadata.resourceVersion = String(++this.rv);
    if (specOf(o) !== spec) o.metadata.generation = (o.metadata.generation ?? 1) + 1;
  }

  /** The stored object (a copy), without recording a call. */
  get<T extends KubeObject>(type: ResourceType, ns: string, name: string): T | undefined {
    return clone(this.objects.get(this.id(type, ns, name)) as T | undefined);
  }

  /** The stored objects of a type (copies), in one namespace or all, without recording a call. */
  list<T extends KubeObject = KubeObject>(type: ResourceType, ns?: string): T[] {
    const prefix = `${type.group || 'core'}/${type.plural}/${ns === undefined ? '' : `${ns}/`}`;
    return [...this.objects.entries()].filter(([k]) => k.startsWith(prefix)).map(([, v]) => clone(v) as T);
  }

  /** The next `verb` call on `type` fails with `error`. */
  failNext(verb: Verb, type: ResourceType, error: Error): void {
    this.failures.push({ verb, type, error });
  }

  /** The recorded writes (every call but get and list), optionally of one verb. */
  writes(verb?: Verb): Call[] {
    return this.calls.filter((c) => !READS.includes(c.verb) && (verb === undefined || c.verb === verb));
  }

  private record(verb: Verb, type: ResourceType, ns: string | undefined, name: string | undefined, body?: unknown): string {
    const id = this.id(type, ns, name);
    const existed = READS.includes(verb) ? {} : { existed: this.objects.has(id) };
    this.calls.push({ verb, id, kind: type.kind, name: name ?? '', ...(body === undefined ? {} : { body: clone(body) }), ...existed });
    const i = this.failures.findIndex((f) => f.verb === verb && this.sameType(f.type, type));
    if (i >= 0) throw this.failures.splice(i, 1)[0]!.error;
    return id;
  }

  private store(id: string, next: KubeObject, before: KubeObject | undefined, type?: ResourceType): KubeObject {
    next.metadata.resourceVersion = String(++this.rv);
    if (type) noteWritten(type, next); // as KubeClient does
    if (!before) {
      next.metadata.uid ??= `uid-${next.metadata.name ?? ''}-${++this.uids}`;
      next.metadata.generation = 1;
    } else if (specOf(before) !== specOf(next)) {
      next.metadata.generation = (before.metadata.generation ?? 1) + 1;
    }
    this.objects.set(id, next);
    return clone(next);
  }

  /**
   * The client, reporting what it reads and writes to the running step's observations as the real client does
   * (kube/client.ts `noted`), for tests of what a pass covers.
   */
  observingClient(): KubeClient {
    const c = this.client();
    const noted = <T>(type: ResourceType, obj: T, how: 'read' | 'write' | 'create' | 'status'): T => {
      if (obj) noteObject(type, obj as unknown as KubeObject, how);
      if (obj && how !== 'read') noteWritten(type, obj as unknown as KubeObject, how === 'status');
      return obj;
    };
    return Object.assign(Object.create(c) as KubeClient, {
      get: async (type: ResourceType, ns: string, name: string) => noted(type, await c.get(type, ns, name), 'read'),
      list: async (type: ResourceType, ns?: string, opts?: { labelSelector?: string }) => {
        const list = await c.list(type, ns, opts);
        for (const item of list.items) noteObject(type, item, 'read', list.items.length);
        return list;
      },
      apply: async (type: ResourceType, obj: KubeObject, sub?: 'status') =>
        noted(type, await c.apply(type, obj, sub), sub === 'status' ? 'status' : 'write'),
      create: async (type: ResourceType, obj: KubeObject) => noted(type, await c.create(type, obj), 'create'),
      update: async (type: ResourceType, obj: KubeObject) => noted(type, await c.update(type, obj), 'write'),
    });
  }

  client(): KubeClient {
    const api = {
      fieldManager: 'tidal',
      get: async (type: ResourceType, ns: string, name: string) => clone(this.objects.get(this.record('get', type, ns, name))),
      list: async (type: ResourceType, ns?: string, opts: { labelSelector?: string } = {}) => {
        this.record('list', type, ns, undefined);
        const want = (opts.labelSelector ?? '')
          .split(',')
          .filter((s) => s !== '')
          .map((s) => s.split('=') as [string, string]);
        const items = this.list(type, ns).filter((o) => want.every(([k, v]) => o.metadata.labels?.[k] === v));
        return { items, resourceVersion: String(this.rv) };
      },
      apply: async (type: ResourceType, obj: KubeObject, subresource?: 'status') => {
        const id = this.record(subresource === 'status' ? 'status' : 'apply', type, obj.metadata.namespace, obj.metadata.name, obj);
        const before = this.objects.get(id);
        if (subresource === 'status') {
          if (!before) throw new KubeApiError(404, 'NotFound', `${id} not found`, 'APPLY', id);
          // A resourceVersion in the applied object is a precondition, as the API server treats it.
          const want = obj.metadata.resourceVersion;
          if (want !== undefined && want !== before.metadata.resourceVersion) throw new KubeApiError(409, 'Conflict', `${id} changed`, 'APPLY', id);
          const next = clone(before);
          (next as unknown as Json)['status'] = clone((obj as unknown as Json)['status']);
          next.metadata.resourceVersion = String(++this.rv);
          this.objects.set(id, next);
          return clone(next);
        }
        const next = clone(before ?? { apiVersion: obj.apiVersion, kind: obj.kind, metadata: {} }) as Json & KubeObject;
        const prev = this.applied.get(id);
        if (prev) prune(next, clone(prev), obj as unknown as Json);
        merge(next, clone(obj) as unknown as Json);
        this.applied.set(id, clone(obj) as unknown as Json);
        return this.store(id, next, before, type);
      },
      create: async (type: ResourceType, obj: KubeObject) => {
        const id = this.record('create', type, obj.metadata.namespace, obj.metadata.name, obj);
        if (this.objects.has(id)) throw new KubeApiError(409, 'AlreadyExists', `${id} already exists`, 'CREATE', id);
        return this.store(id, clone(obj), undefined, type);
      },
      update: async (type: ResourceType, obj: KubeObject) => {
        const id = this.record('update', type, obj.metadata.namespace, obj.metadata.name, obj);
        const before = this.objects.get(id);
        if (!before) throw new KubeApiError(404, 'NotFound', `${id} not found`, 'UPDATE', id);
        if (obj.metadata.resourceVersion !== before.metadata.resourceVersion) throw new KubeApiError(409, 'Conflict', `${id} changed`, 'UPDATE', id);
        const next = clone(obj) as Json & KubeObject;
        if ('status' in before) next['status'] = clone((before as unknown as Json)['status']);
        else delete next['status'];
        this.applied.delete(id);
        return this.store(id, next, before, type);
      },
      mergePatch: async (type: ResourceType, ns: string, name: string, patch: unknown) => {
        const id = this.record('patch', type, ns, name, patch);
        const before = this.objects.get(id);
        if (!before) throw new KubeApiError(404, 'NotFound', `${id} not found`, 'PATCH', id);
        return this.store(id, mergePatchJson(before, patch) as KubeObject, before, type);
      },
      delete: async (type: ResourceType, ns: string, name: string, _policy?: string, pre?: { uid?: string; resourceVersion?: string }) => {
        const id = this.record('delete', type, ns, name, pre);
        const live = this.objects.get(id);
        if (!live) return false;
        if (
          (pre?.uid !== undefined && pre.uid !== live.metadata.uid) ||
          (pre?.resourceVersion !== undefined && pre.resourceVersion !== live.metadata.resourceVersion)
        ) {
          throw new KubeApiError(409, 'Conflict', `Precondition failed for ${id}`, 'DELETE', id);
        }
        this.objects.delete(id);
        this.applied.delete(id);
        return true;
      },
    };
    return api as unknown as KubeClient;
  }
}

/** A KubeApiError as KubeClient throws it for a refused write. */
export function refused(code: number, reason: string, message: string, verb = 'APPLY', path = '/apis/x'): KubeApiError {
  return new KubeApiError(code, reason, message, verb, path);
}

/** Events an activity recorded, in order. */
export type RecordedEvent = { type: string; reason: string; message: string };

/**
 * Activity dependencies over `fake`: an event recorder that keeps what it is given, today's (or `revisionConfig`'s)
 * config maps, a fixed clock and a silent log. `digests` defaults to a resolver that pins nothing.
 */
export function fakeDeps(
  fake: KubeFake,
  opts: { revisionConfig?: () => RevisionConfig; digests?: DigestResolver } = {},
): { deps: ActivityDeps; recorded: RecordedEvent[] } {
  const recorded: RecordedEvent[] = [];
  const events: EventRecorder = { record: async (_o, type, reason, message) => void recorded.push({ type, reason, message }) };
  const config = {
    revisionConfig: opts.revisionConfig ?? (() => testRevisionConfig()),
    systemNamespace: 'knative-serving',
  } as unknown as ConfigSource;
  const deps = {
    kube: fake.client(),
    events,
    log: pino({ level: 'silent' }),
    config,
    digests: opts.digests ?? { resolve: async () => '' },
    now: () => new Date('2025-01-01T00:00:00Z'),
  } as unknown as ActivityDeps;
  return { deps, recorded };
}

function valueOf<T>(p: { ok: true; value: T } | { ok: false; error: string }): T {
  if (!p.ok) throw new Error(p.error);
  return p.value;
}

/**
 * Dependencies of a Service's pass — the Service's, Configuration's and Route's steps — over `kube`: Istio's ingress
 * class, the example.com domain, today's features and revision defaults, a fixed clock, no events kept.
 */
export function servicePassDeps(kube: KubeClient): ActivityDeps {
  const config = {
    revisionConfig: () => testRevisionConfig(),
    networkConfig: () => valueOf(parseNetworkConfig({ 'ingress-class': 'istio.ingress.networking.knative.dev' })),
    domainConfig: () => valueOf(parseDomainConfig({ 'example.com': '' })),
    featuresConfig: () => defaultFeaturesConfig(),
    systemNamespace: 'knative-serving',
  } as unknown as ConfigSource;
  return {
    kube,
    events: { record: async () => undefined },
    log: pino({ level: 'silent' }),
    config,
    digests: { resolve: async () => '' },
    now: () => new Date('2026-11-27T10:00:00Z'),
  };
}
