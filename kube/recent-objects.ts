// Whole objects this process read or wrote a moment ago, served again to a step's GET while the watcher's cache
// vouches that nothing newer exists (Knative's listers, with a resourceVersion check). A Service's pass reads back
// what its previous step just wrote (the Configuration's status, then the Route, then the Service), and a Revision's
// pass what the Service's pass created: each such GET was a round trip to the API server on the path to Ready.
//
// The rule: an entry is served when the watch cache's version of the object is not newer than the entry's, or — the
// cache not holding it — when the cache has not yet seen the entry's version go by (a write of ours the watch has
// not delivered yet). Any change by someone else reaches the watch cache before the poke it causes, so a pass poked
// by that change reads it from the API server. A retried step reads from the API server too. Entries are kept as the
// response's JSON text (parsed again on each hit: callers may change what they get) and expire after `ttlMs`.
import type { ResourceType } from '../api/kinds.js';
import { resourceVersionNumber as versionNumber, type KubeObject } from '../api/meta.js';
import { stepHooks } from './step-hooks.js';

/** What the watcher's cache knows of one object (MetadataCache.versionOf). */
export interface CachedVersion {
  /** The object's resourceVersion in the cache; undefined when the cache does not hold it (not seen, or deleted). */
  resourceVersion: string | undefined;
  /** The newest resourceVersion the cache reflects, of any object of that type ('0' before its first list). */
  newest: string;
}

/** The watch cache's view: undefined when this process does not follow the type (or has not listed it yet). */
export type VersionSource = (type: ResourceType, namespace: string, name: string) => CachedVersion | undefined;

/** What the Kubernetes client asks on a GET and tells after each object it returned. */
export interface ObjectMemo {
  /** The object's JSON text when it may be served without a request, else undefined. */
  lookup(type: ResourceType, namespace: string, name: string): string | undefined;
  /** `body`: the response that returned `obj` (a GET, or a write's result). */
  remember(type: ResourceType, obj: KubeObject, body: string): void;
  forget(type: ResourceType, namespace: string, name: string): void;
}

interface Entry {
  body: string;
  version: bigint;
  at: number;
}

export interface RecentObjectsOptions {
  ttlMs?: number;
  maxEntries?: number;
  now?: () => number;
  /** False outside a step's first attempt (default: the running activity's attempt). */
  firstAttempt?: () => boolean;
}

export class RecentObjects implements ObjectMemo {
  private readonly entries = new Map<string, Entry>();
  private readonly ttlMs: number;
  private readonly maxEntries: number;
  private readonly now: () => number;
  private readonly firstAttempt: () => boolean;
  hits = 0;
  misses = 0;

  constructor(
    private readonly versions: VersionSource,
    opts: RecentObjectsOptions = {},
  ) {
    this.ttlMs = opts.ttlMs ?? 30_000;
    this.maxEntries = opts.maxEntries ?? 1_000;
    this.now = opts.now ?? (() => performance.now());
    this.firstAttempt = opts.firstAttempt ?? (() => stepHooks().firstAttempt());
  }

  get size(): number {
    return this.entries.size;
  }

  lookup(type: ResourceType, namespace: string, name: string): string | undefined {
    const key = keyOf(type, namespace, name);
    const entry = this.entries.get(key);
    const served = entry !== undefined && this.now() - entry.at <= this.ttlMs && this.firstAttempt() && this.vouched(type, namespace, name, entry);
    if (served) this.hits++;
    else this.misses++;
    return served ? entry.body : undefined;
  }

  remember(type: ResourceType, obj: KubeObject, body: string): void {
    const { namespace = '', name = '', resourceVersion } = obj.metadata;
    const version = versionNumber(resourceVersion);
    const key = keyOf(type, namespace, name);
    // Only kinds the watch cache follows can ever be vouched for (Events, say, are not). Nor can anything while the
    // cache is away (a replica between leader terms): then an older entry must go too, or — this version unknown to
    // the memo — a cache that has not caught up yet would vouch for that entry, and a step would act on the object
    // as it was before this write (a Service once slept for its resync period so, under a load that made its
    // replica miss lease renewals).
    if (version === undefined || this.versions(type, namespace, name) === undefined) {
      this.entries.delete(key);
      return;
    }
    const before = this.entries.get(key);
    // Two steps' responses may arrive out of order: the newer version stays.
    if (before && before.version > version) return;
    this.entries.delete(key); // re-inserted last: the map's order is the order of age
    this.entries.set(key, { body, version, at: this.now() });
    this.sweep();
  }

  /**
   * An object the watch just delivered (the watcher hands over the kinds steps read right after an event wakes them):
   * remembered as a GET of that version would return it, managedFields aside. The cache holds that very version, so
   * it vouches for it, and a step woken by the event — a Revision's status part by its pods, a Service's by its
   * Revision turning Ready — reads it without a round trip. A write of ours that is newer stays (see `remember`).
   */
  delivered(type: ResourceType, obj: KubeObject): void {
    const { managedFields: _mf, ...metadata } = obj.metadata as KubeObject['metadata'] & { managedFields?: unknown };
    this.remember(type, obj, JSON.stringify({ ...obj, metadata }));
  }

  forget(type: ResourceType, namespace: string, name: string): void {
    this.entries.delete(keyOf(type, namespace, name));
  }

  private vouched(type: ResourceType, namespace: string, name: string, entry: Entry): boolean {
    const cached = this.versions(type, namespace, name);
    const newest = versionNumber(cached?.newest);
    if (!cached || newest === undefined || newest === 0n) return false;
    const current = versionNumber(cached.resourceVersion);
    if (cached.resourceVersion !== undefined) return current !== undefined && current <= entry.version;
    // Not in the cache: gone, unless the cache has not caught up with the version we hold.
    return newest < entry.version;
  }

  /** Drops expired entries (and the oldest beyond `maxEntries`); the controller also calls it on a timer, so a process at rest holds none. */
  sweep(): void {
    const oldest = this.now() - this.ttlMs;
    for (const [key, entry] of this.entries) {
      if (entry.at >= oldest && this.entries.size <= this.maxEntries) break;
      this.entries.delete(key);
    }
  }
}

const keyOf = (type: ResourceType, namespace: string, name: string) => `${type.group}/${type.kind}/${namespace}/${name}`;
