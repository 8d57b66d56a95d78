// List + watch one resource type, keep a cache, and report changes. Unlike client-node's informer it never stops:
// errors restart the watch with capped exponential backoff, 410 Gone re-lists, a periodic re-list catches anything
// a watch missed, and a handler that throws is logged, never propagated.
import type { Logger } from 'pino';
import type { ResourceType } from '../api/kinds.js';
import { resourceVersionNumber, type KubeObject } from '../api/meta.js';
import type { KubeClient, WatchEvent } from '../kube/client.js';
import { isGone } from '../kube/errors.js';
import type { ListGate } from './list-gate.js';

export type ChangeType = 'added' | 'updated' | 'deleted';

export interface InformerOptions {
  /** Follow one namespace only; default all. */
  namespace?: string;
  labelSelector?: string;
  /** Re-list from the server this often; only differences are reported. */
  relistMs: number;
  /** Longest wait between watch restarts after errors. */
  maxBackoffMs: number;
  /**
   * `listed`: the change was found by a list after the first (a periodic one, or one after 410 Gone), not a watch
   * event: the versions between the cached one and this one went by unseen.
   */
  onChange: (type: ChangeType, obj: KubeObject, listed: boolean) => void;
  onRestart?: (reason: string) => void;
  /**
   * Keep only metadata in the cache — identity, labels, owners and the annotations named — while handlers still get
   * whole objects: a watcher that only needs to know what exists (and whom a deletion concerns) holds a few hundred
   * bytes per object instead of the object.
   */
  slim?: {
    annotations: readonly string[];
    /** What to keep of the status, for a kind whose status activities read from the cache (a pod's readiness). */
    status?: (o: KubeObject) => unknown;
  };
  /**
   * Items per page of a list (default 500, as client-go's reflector). A list read whole arrives as one body that is
   * parsed and handled in one go: tens of thousands of objects hold the event loop for seconds, and with it the
   * leader's Lease renewals and every activity. Pages let the rest run between them.
   */
  pageSize?: number;
  /** Shared with the other informers: each page is fetched through it, at `priority` (list-gate.ts). */
  pages?: { gate: ListGate; priority: number };
}

const DEFAULT_PAGE_SIZE = 500;

/** Where `Informer.resume` watches from, and whom it tells. */
export interface Resume {
  from: string;
  onChange: (type: ChangeType, obj: KubeObject) => void;
}

/** What a slim cache keeps of an object. */
function slimCopy(o: KubeObject, { annotations, status: statusOf }: NonNullable<InformerOptions['slim']>): KubeObject {
  const status = statusOf?.(o);
  const { name, namespace, uid, resourceVersion, generation, labels, ownerReferences, deletionTimestamp } = o.metadata;
  const kept = Object.fromEntries(annotations.flatMap((a) => (o.metadata.annotations?.[a] !== undefined ? [[a, o.metadata.annotations[a]]] : [])));
  return {
    apiVersion: o.apiVersion,
    kind: o.kind,
    metadata: {
      name,
      namespace,
      uid,
      resourceVersion,
      ...(generation !== undefined ? { generation } : {}),
      ...(labels ? { labels } : {}),
      ...(ownerReferences ? { ownerReferences } : {}),
      ...(deletionTimestamp ? { deletionTimestamp } : {}),
      ...(Object.keys(kept).length ? { annotations: kept } : {}),
    },
    ...(status !== undefined ? { status } : {}),
  };
}

const cacheKey = (o: KubeObject) => `${o.metadata.namespace ?? ''}/${o.metadata.name ?? ''}`;

export class Informer {
  private readonly cache = new Map<string, KubeObject>();
  private resourceVersion: string | undefined;
  private lastList = 0;
  private readonly stop = new AbortController();
  private running: Promise<void> | undefined;
  /** The newest resourceVersion this cache reflects (0 before the first list, or when versions are not numbers). */
  private seenVersion = 0n;
  private readonly versionWaiters = new Set<{ version: bigint; resolve: (caughtUp: boolean) => void }>();
  private syncedResolve!: () => void;
  readonly synced = new Promise<void>((r) => (this.syncedResolve = r));
  hasSynced = false;

  constructor(
    private readonly kube: KubeClient,
    readonly type: ResourceType,
    private readonly opts: InformerOptions,
    private readonly log: Logger,
  ) {}

  start(): void {
    if (this.running) return;
    this.running = this.loop();
  }

  /**
   * Resumes from a version while the first list runs: a second watch from `from` reports every change after it to
   * `onChange` at once, without touching the cache, until the first list is done. A list of a large kind takes
   * seconds; the changes since a known version (the watch bookmark, ADR 0024) are few and need not wait for it. The
   * list and its watch still report everything, so this only brings changes forward. A version older than the API
   * server's watch history (410 Gone) or any error ends it quietly. Once per informer, and nothing once the first list
   * is done (the cache holds everything) or after close.
   */
  resume(from: Resume): void {
    if (this.hasSynced || this.resuming || this.stop.signal.aborted) return;
    this.resuming = this.resumeOnce(from);
  }

  async close(): Promise<void> {
    this.stop.abort();
    for (const waiter of this.versionWaiters) waiter.resolve(false);
    await Promise.all([this.running, this.resuming]);
  }

  /** The resuming watch of `resume`, ended by the first list's end (or by close). */
  private resuming: Promise<void> | undefined;

  private async resumeOnce({ from, onChange }: Resume): Promise<void> {
    const listed = new AbortController();
    void this.synced.then(() => listed.abort());
    const signal = AbortSignal.any([this.stop.signal, listed.signal]);
    try {
      await this.kube.watch(
        this.type,
        {
          resourceVersion: from,
          timeoutSeconds: 300,
          ...(this.opts.namespace ? { namespace: this.opts.namespace } : {}),
          signal,
          ...(this.opts.labelSelector ? { labelSelector: this.opts.labelSelector } : {}),
        },
        (ev: WatchEvent<KubeObject>) => {
          if (ev.type === 'BOOKMARK' || signal.aborted) return;
          this.typed(ev.object);
          try {
            onChange(ev.type === 'DELETED' ? 'deleted' : ev.type === 'ADDED' ? 'added' : 'updated', ev.object);
          } catch (err) {
            this.log.error(
              { err, kind: ev.object.kind, namespace: ev.object.metadata.namespace, name: ev.object.metadata.name },
              'change handler failed',
            );
          }
        },
      );
    } catch (err) {
      if (signal.aborted) return;
      // The list reports whatever this did not: nothing is lost, the changes only come later.
      if (isGone(err))
        this.log.info({ kind: this.type.kind, from }, 'the version to resume from is older than the watch history; the list reports the changes');
      else this.log.warn({ err, kind: this.type.kind, from }, 'resuming from a version failed; the list reports the changes');
      this.opts.onRestart?.(isGone(err) ? 'resume-gone' : 'resume-error');
    }
  }

  /** List and watch items carry no apiVersion/kind in some encodings; handlers get whole objects. */
  private typed(obj: KubeObject): void {
    obj.apiVersion ??= this.type.group === '' ? this.type.version : `${this.type.group}/${this.type.version}`;
    obj.kind ??= this.type.kind;
  }

  list(): KubeObject[] {
    return [...this.cache.values()];
  }

  /**
   * True once this cache reflects `resourceVersion` (an object version some request returned), waiting at most
   * `timeoutMs`: whoever wrote it can then read the cache instead of listing. Kubernetes calls versions opaque, but
   * every API server stores etcd's revision, one counter for all kinds; a version that is not a number is never vouched for.
   */
  caughtUp(resourceVersion: string, timeoutMs: number): Promise<boolean> {
    const version = resourceVersionNumber(resourceVersion);
    if (version === undefined || !this.hasSynced || this.seenVersion === 0n) return Promise.resolve(false);
    if (this.seenVersion >= version) return Promise.resolve(true);
    return new Promise((resolve) => {
      const waiter = {
        version,
        resolve: (caughtUp: boolean) => {
          clearTimeout(timer);
          this.versionWaiters.delete(waiter);
          resolve(caughtUp);
        },
      };
      const timer = setTimeout(() => waiter.resolve(false), timeoutMs);
      this.versionWaiters.add(waiter);
    });
  }

  /** The newest resourceVersion this cache reflects ('0' before the first list, or when versions are not numbers). */
  get newestVersion(): string {
    return this.seenVersion.toString();
  }

  /** The cached object, if this informer has seen it and not its deletion. */
  get(namespace: string, name: string): KubeObject | undefined {
    return this.cache.get(`${namespace}/${name}`);
  }

  private async loop(): Promise<void> {
    const firstBackoff = Math.min(500, this.opts.maxBackoffMs);
    let backoff = firstBackoff;
    while (!this.stop.signal.aborted) {
      try {
        if (this.resourceVersion === undefined || Date.now() - this.lastList >= this.opts.relistMs) await this.relist();
        await this.watchOnce();
        backoff = firstBackoff;
      } catch (err) {
        if (this.stop.signal.aborted) break;
        if (isGone(err)) {
          this.log.info({ kind: this.type.kind, from: this.resourceVersion }, 'watch history expired: listing again');
          this.resourceVersion = undefined; // too old: re-list at once
          this.opts.onRestart?.('gone');
          continue;
        }
        this.log.warn({ err, kind: this.type.kind, backoffMs: backoff }, 'watch failed; restarting');
        this.opts.onRestart?.('error');
        await sleep(backoff, this.stop.signal);
        backoff = Math.min(backoff * 2, this.opts.maxBackoffMs);
      }
    }
  }

  private async relist(): Promise<void> {
    const selector = this.opts.labelSelector ? { labelSelector: this.opts.labelSelector } : {};
    const limit = this.opts.pageSize ?? DEFAULT_PAGE_SIZE;
    const present = new Set<string>();
    // What a list after the first finds went by unseen in between (`listed`); the first list is all there is.
    const again = this.hasSynced;
    // Every page is of the first page's snapshot; a continue token that expired fails with 410 and the list starts over.
    const fetch = (more?: string) => {
      const get = () => this.kube.list(this.type, this.opts.namespace, { ...selector, limit, ...(more ? { continue: more } : {}) });
      return this.opts.pages ? this.opts.pages.gate.run(this.opts.pages.priority, get) : get();
    };
    let changed = 0;
    let page = await fetch();
    const resourceVersion = page.resourceVersion;
    for (;;) {
      for (const obj of page.items) {
        present.add(cacheKey(obj));
        if (this.upsert(obj, again)) changed += 1;
      }
      if (!page.continue) break;
      page = await fetch(page.continue);
    }
    let deleted = 0;
    for (const [key, obj] of this.cache) {
      if (!present.has(key)) {
        this.cache.delete(key);
        this.emit('deleted', obj, again);
        deleted += 1;
      }
    }
    if (again) this.log.info({ kind: this.type.kind, resourceVersion, changed, deleted }, 'listed again');
    this.resourceVersion = resourceVersion;
    this.saw(resourceVersion);
    this.lastList = Date.now();
    if (!this.hasSynced) {
      this.hasSynced = true;
      this.syncedResolve();
    }
  }

  private async watchOnce(): Promise<void> {
    // The server ends a watch after timeoutSeconds; the client-side timeout guards against a silent connection.
    const remainingMs = Math.max(1000, this.opts.relistMs - (Date.now() - this.lastList));
    const timeoutSeconds = Math.min(300, Math.ceil(remainingMs / 1000));
    const signal = AbortSignal.any([this.stop.signal, AbortSignal.timeout((timeoutSeconds + 30) * 1000)]);
    await this.kube.watch(
      this.type,
      {
        resourceVersion: this.resourceVersion ?? '0',
        timeoutSeconds,
        ...(this.opts.namespace ? { namespace: this.opts.namespace } : {}),
        signal,
        ...(this.opts.labelSelector ? { labelSelector: this.opts.labelSelector } : {}),
      },
      (ev: WatchEvent<KubeObject>) => this.onWatchEvent(ev),
    );
  }

  private onWatchEvent(ev: WatchEvent<KubeObject>): void {
    const rv = ev.object.metadata?.resourceVersion;
    if (ev.type === 'BOOKMARK') {
      if (rv) this.resourceVersion = rv;
      this.saw(rv);
      return;
    }
    this.typed(ev.object);
    if (ev.type === 'DELETED') {
      this.cache.delete(cacheKey(ev.object));
      this.emit('deleted', ev.object, false);
    } else {
      this.upsert(ev.object);
    }
    if (rv) this.resourceVersion = rv;
    this.saw(rv);
  }

  /** Advances the version the cache reflects and releases whoever waited for it. */
  private saw(resourceVersion: string | undefined): void {
    const version = resourceVersionNumber(resourceVersion);
    if (version === undefined || version <= this.seenVersion) return;
    this.seenVersion = version;
    for (const waiter of this.versionWaiters) if (waiter.version <= version) waiter.resolve(true);
  }

  /** True when `obj` is news to the cache (its resourceVersion is not the one held). */
  private upsert(obj: KubeObject, listed = false): boolean {
    const key = cacheKey(obj);
    const old = this.cache.get(key);
    if (old?.metadata.resourceVersion === obj.metadata.resourceVersion) return false;
    this.cache.set(key, this.opts.slim ? slimCopy(obj, this.opts.slim) : obj);
    this.emit(old ? 'updated' : 'added', obj, listed);
    return true;
  }

  private emit(type: ChangeType, obj: KubeObject, listed: boolean): void {
    try {
      this.opts.onChange(type, obj, listed);
    } catch (err) {
      this.log.error({ err, kind: obj.kind, namespace: obj.metadata.namespace, name: obj.metadata.name }, 'change handler failed');
    }
  }
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const onAbort = () => {
      clearTimeout(t);
      resolve();
    };
    const t = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
