// Informer against a scripted in-memory KubeClient (list + watch only) and fake timers: every delay is asserted exactly.
import { getEventListeners } from 'node:events';
import type { Logger } from 'pino';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { Resources, type ResourceType } from '../../../api/kinds.js';
import type { KubeObject } from '../../../api/meta.js';
import type { KubeClient, ListResult, PageOptions, RequestOptions, WatchEvent } from '../../../kube/client.js';
import { KubeApiError } from '../../../kube/errors.js';
import { Informer, type ChangeType, type InformerOptions } from '../../../watcher/informer.js';

type WatchOpts = RequestOptions & { namespace?: string; resourceVersion: string; timeoutSeconds?: number };

interface WatchCall {
  type: ResourceType;
  opts: WatchOpts;
  onEvent: (ev: WatchEvent<KubeObject>) => void;
  /** Fake-clock time of the call. */
  at: number;
}

interface ListCall {
  type: ResourceType;
  namespace: string | undefined;
  opts: RequestOptions & PageOptions;
  at: number;
}

/** One scripted watch: what the stream does once opened. */
type WatchStep = (call: WatchCall) => Promise<void>;
type ListStep = ListResult<KubeObject> | Error;

/** Blocks until the informer aborts the watch (close()), like the real client does. */
const untilAborted = (call: WatchCall): Promise<void> =>
  new Promise((resolve) => {
    if (call.opts.signal?.aborted) resolve();
    else call.opts.signal?.addEventListener('abort', () => resolve(), { once: true });
  });

/** Emits `events` (copies), then ends the stream normally or with `end`. */
const emit =
  (events: WatchEvent<KubeObject>[], end?: Error): WatchStep =>
  (call) => {
    for (const ev of events) call.onEvent(structuredClone(ev));
    return end ? Promise.reject(end) : Promise.resolve();
  };

const fail = (err: Error): WatchStep => emit([], err);

/** A stream that stays open `ms` of (fake) time, then ends normally. */
const openFor =
  (ms: number): WatchStep =>
  () =>
    new Promise((resolve) => setTimeout(resolve, ms));

const gone = () => new KubeApiError(410, 'Expired', 'too old resource version', 'WATCH', '/x');

class FakeKube {
  readonly listCalls: ListCall[] = [];
  readonly watchCalls: WatchCall[] = [];
  private lastList: ListStep = { items: [], resourceVersion: '1' };
  private readonly waiters: { n: number; resolve: () => void }[] = [];

  constructor(
    private readonly lists: ListStep[],
    private readonly watches: WatchStep[],
  ) {}

  readonly list = vi.fn((type: ResourceType, namespace: string | undefined, opts: RequestOptions & PageOptions): Promise<ListResult<KubeObject>> => {
    this.listCalls.push({ type, namespace, opts, at: Date.now() });
    // Once the script runs out, the last list answer repeats.
    const step = this.lists.shift() ?? this.lastList;
    this.lastList = step;
    return step instanceof Error ? Promise.reject(step) : Promise.resolve(structuredClone(step));
  });

  readonly watch = vi.fn((type: ResourceType, opts: WatchOpts, onEvent: (ev: WatchEvent<KubeObject>) => void): Promise<void> => {
    const call: WatchCall = { type, opts, onEvent, at: Date.now() };
    this.watchCalls.push(call);
    for (const w of this.waiters.filter((x) => x.n <= this.watchCalls.length)) w.resolve();
    // Once the script runs out, the stream stays open until aborted.
    return (this.watches.shift() ?? untilAborted)(call);
  });

  /** Resolves once the n-th watch has been opened. */
  watchOpened(n: number): Promise<WatchCall> {
    if (this.watchCalls.length >= n) return Promise.resolve(this.watchCalls[n - 1]!);
    return new Promise((resolve) => this.waiters.push({ n, resolve: () => resolve(this.watchCalls[n - 1]!) }));
  }

  get client(): KubeClient {
    return this as unknown as KubeClient;
  }
}

function stubLog() {
  const log = { warn: vi.fn(), error: vi.fn(), info: vi.fn(), debug: vi.fn(), trace: vi.fn(), fatal: vi.fn(), child: vi.fn() };
  log.child.mockReturnValue(log);
  return log;
}

const svc = (name: string, rv: string, extra: Partial<KubeObject['metadata']> = {}): KubeObject => ({
  apiVersion: 'serving.knative.dev/v1',
  kind: 'Service',
  metadata: { namespace: 'ns', name, resourceVersion: rv, ...extra },
});

const listOf = (resourceVersion: string, ...items: KubeObject[]): ListResult<KubeObject> => ({ items, resourceVersion });

interface Harness {
  kube: FakeKube;
  informer: Informer;
  log: ReturnType<typeof stubLog>;
  changes: [ChangeType, string, string | undefined][];
  /** The changes a list found (not a watch event), as `<type> <name>`. */
  listed: string[];
  restarts: string[];
}

const open: Informer[] = [];

function make(lists: ListStep[], watches: WatchStep[], opts: Partial<InformerOptions> = {}, type: ResourceType = Resources.Service): Harness {
  const kube = new FakeKube(lists, watches);
  const log = stubLog();
  const changes: Harness['changes'] = [];
  const listed: string[] = [];
  const restarts: string[] = [];
  const informer = new Informer(
    kube.client,
    type,
    {
      relistMs: 600_000,
      maxBackoffMs: 30_000,
      onChange: (t, o, fromList) => {
        changes.push([t, o.metadata.name ?? '', o.metadata.resourceVersion]);
        if (fromList) listed.push(`${t} ${o.metadata.name ?? ''}`);
      },
      onRestart: (r) => restarts.push(r),
      ...opts,
    },
    log as unknown as Logger,
  );
  open.push(informer);
  return { kube, informer, log, changes, listed, restarts };
}

/** Lets every pending promise callback run without moving the fake clock. */
const settle = () => vi.advanceTimersByTimeAsync(0);

beforeEach(() => {
  vi.useFakeTimers();
  vi.setSystemTime(1_000_000);
});

afterEach(async () => {
  await Promise.all(open.splice(0).map((i) => i.close()));
  vi.useRealTimers();
});

describe('Informer: list, then watch', () => {
  it('lists, reports every item as added, resolves synced, then watches from the list resourceVersion', async () => {
    const h = make([listOf('10', svc('a', '5'), svc('b', '7'))], [], { relistMs: 120_000 });
    expect(h.informer.hasSynced).toBe(false);
    h.informer.start();
    await h.informer.synced;
    expect(h.informer.hasSynced).toBe(true);
    expect(h.changes).toEqual([
      ['added', 'a', '5'],
      ['added', 'b', '7'],
    ]);
    expect(h.kube.listCalls).toEqual([{ type: Resources.Service, namespace: undefined, opts: { limit: 500 }, at: 1_000_000 }]);

    const w = await h.kube.watchOpened(1);
    expect(w.type).toBe(Resources.Service);
    expect(w.opts.resourceVersion).toBe('10');
    expect(w.opts.timeoutSeconds).toBe(120); // ceil(remaining relist time), at most 300
    expect(w.opts.signal).toBeInstanceOf(AbortSignal);
    expect(w.opts).not.toHaveProperty('namespace');
    expect(w.opts).not.toHaveProperty('labelSelector');
    expect(h.informer.list().map((o) => o.metadata.name)).toEqual(['a', 'b']);
    expect(h.informer.get('ns', 'a')?.metadata.resourceVersion).toBe('5');
    expect(h.informer.get('ns', 'zzz')).toBeUndefined();
  });

  it('caps the server-side watch timeout at 300 seconds', async () => {
    const h = make([listOf('1')], [], { relistMs: 3_600_000 });
    h.informer.start();
    expect((await h.kube.watchOpened(1)).opts.timeoutSeconds).toBe(300);
  });

  it('passes namespace and labelSelector to list and watch', async () => {
    const h = make([listOf('3')], [], { namespace: 'tidal-system', labelSelector: 'app=x' }, Resources.ConfigMap);
    h.informer.start();
    const w = await h.kube.watchOpened(1);
    expect(h.kube.listCalls[0]).toMatchObject({ type: Resources.ConfigMap, namespace: 'tidal-system', opts: { labelSelector: 'app=x' } });
    expect(w.opts).toMatchObject({ namespace: 'tidal-system', labelSelector: 'app=x', resourceVersion: '3' });
  });

  it('start() twice runs a single loop', async () => {
    const h = make([listOf('1')], []);
    h.informer.start();
    h.informer.start();
    await h.kube.watchOpened(1);
    await settle();
    expect(h.kube.list).toHaveBeenCalledTimes(1);
    expect(h.kube.watch).toHaveBeenCalledTimes(1);
  });
});

describe('Informer: lists in pages', () => {
  const page = (resourceVersion: string, next: string | undefined, ...items: KubeObject[]): ListResult<KubeObject> => ({
    items,
    resourceVersion,
    ...(next ? { continue: next } : {}),
  });

  it("reads a list page by page with the continue token; the list is of the first page's version, synced after the last", async () => {
    const h = make([page('10', 't1', svc('a', '5')), page('10', 't2', svc('b', '6')), page('10', undefined, svc('c', '7'))], [], {
      pageSize: 1,
      labelSelector: 'app=x',
    });
    h.informer.start();
    await h.informer.synced;
    expect(h.kube.listCalls.map((c) => c.opts)).toEqual([
      { labelSelector: 'app=x', limit: 1 },
      { labelSelector: 'app=x', limit: 1, continue: 't1' },
      { labelSelector: 'app=x', limit: 1, continue: 't2' },
    ]);
    expect(h.changes).toEqual([
      ['added', 'a', '5'],
      ['added', 'b', '6'],
      ['added', 'c', '7'],
    ]);
    expect((await h.kube.watchOpened(1)).opts.resourceVersion).toBe('10');
  });

  it('an object on no page of a later list is deleted only once the last page is read', async () => {
    let watchEnded!: () => void;
    const h = make(
      [page('10', undefined, svc('a', '5'), svc('b', '6')), page('20', 'next', svc('b', '6')), page('20', undefined, svc('c', '15'))],
      [() => new Promise<void>((resolve) => (watchEnded = resolve)).then(() => Promise.reject(gone()))],
      { pageSize: 1 },
    );
    h.informer.start();
    await h.kube.watchOpened(1);
    h.changes.length = 0;
    watchEnded();
    await h.kube.watchOpened(2);
    expect(h.changes).toEqual([
      ['added', 'c', '15'],
      ['deleted', 'a', '5'],
    ]);
    expect(h.kube.watchCalls[1]!.opts.resourceVersion).toBe('20');
  });

  it('a continue token the server no longer knows (410) starts the list over', async () => {
    const h = make([page('10', 'old', svc('a', '5')), gone(), page('12', undefined, svc('a', '5'), svc('b', '11'))], [], { pageSize: 1 });
    h.informer.start();
    await h.informer.synced;
    expect(h.kube.listCalls.map((c) => c.opts.continue)).toEqual([undefined, 'old', undefined]);
    expect(h.restarts).toEqual(['gone']);
    expect(h.changes).toEqual([
      ['added', 'a', '5'],
      ['added', 'b', '11'],
    ]);
    expect((await h.kube.watchOpened(1)).opts.resourceVersion).toBe('12');
  });
});

describe('Informer: slim cache', () => {
  it('keeps identity, labels, owners and the named annotations of each object; handlers still get whole objects', async () => {
    const owner = { apiVersion: 'serving.knative.dev/v1', kind: 'Configuration', name: 'c', uid: 'u1', controller: true };
    const full = {
      ...svc('a', '5', {
        uid: 'u-a',
        generation: 2,
        labels: { app: 'a' },
        ownerReferences: [owner],
        annotations: { 'serving.knative.dev/routes': 'r1', 'kubectl.kubernetes.io/last-applied-configuration': 'x'.repeat(10_000) },
        managedFields: [{ manager: 'kubectl' }],
      } as Partial<KubeObject['metadata']>),
      spec: { template: { spec: { containers: [{ image: 'nginx' }] } } },
    } as KubeObject;
    const seen: KubeObject[] = [];
    const h = make([listOf('10', full)], [], { slim: { annotations: ['serving.knative.dev/routes'] }, onChange: (_t, o) => seen.push(o) });
    h.informer.start();
    await h.informer.synced;
    expect(seen[0]).toEqual(full);
    expect(h.informer.get('ns', 'a')).toEqual({
      apiVersion: 'serving.knative.dev/v1',
      kind: 'Service',
      metadata: {
        namespace: 'ns',
        name: 'a',
        uid: 'u-a',
        resourceVersion: '5',
        generation: 2,
        labels: { app: 'a' },
        ownerReferences: [owner],
        annotations: { 'serving.knative.dev/routes': 'r1' },
      },
    });
  });
});

describe('Informer: slim cache with a status', () => {
  it("keeps what the kind's status function picks of each object's status (nothing else of its spec or status)", async () => {
    const pod = {
      ...svc('p', '7', { uid: 'u-p', labels: { 'serving.knative.dev/revision': 'r' } }),
      kind: 'Pod',
      spec: { nodeName: 'kwok-node-0' },
      status: { podIP: '10.0.0.1', conditions: [{ type: 'Ready', status: 'True' }] },
    } as KubeObject;
    const h = make([listOf('10', pod)], [], {
      slim: { annotations: [], status: (o: KubeObject & { status?: { conditions?: unknown[] } }) => ({ ready: o.status?.conditions?.length }) },
    });
    h.informer.start();
    await h.informer.synced;
    expect(h.informer.get('ns', 'p')).toEqual({
      apiVersion: 'serving.knative.dev/v1',
      kind: 'Pod',
      metadata: { namespace: 'ns', name: 'p', uid: 'u-p', resourceVersion: '7', labels: { 'serving.knative.dev/revision': 'r' } },
      status: { ready: 1 },
    });
  });
});

describe('Informer: watch events', () => {
  it('reports ADDED, MODIFIED and DELETED and keeps the cache in step', async () => {
    const h = make([listOf('10', svc('a', '5'))], []);
    h.informer.start();
    const w = await h.kube.watchOpened(1);
    h.changes.length = 0;

    w.onEvent({ type: 'ADDED', object: svc('b', '11') });
    w.onEvent({ type: 'MODIFIED', object: svc('a', '12') });
    w.onEvent({ type: 'DELETED', object: svc('b', '13') });
    expect(h.changes).toEqual([
      ['added', 'b', '11'],
      ['updated', 'a', '12'],
      ['deleted', 'b', '13'],
    ]);
    expect(h.informer.get('ns', 'a')?.metadata.resourceVersion).toBe('12');
    expect(h.informer.get('ns', 'b')).toBeUndefined();
    expect(h.informer.list()).toHaveLength(1);
  });

  it('does not report a MODIFIED (or ADDED) event whose resourceVersion equals the cached one', async () => {
    const h = make([listOf('10', svc('a', '5'))], []);
    h.informer.start();
    const w = await h.kube.watchOpened(1);
    h.changes.length = 0;

    w.onEvent({ type: 'MODIFIED', object: svc('a', '5') });
    w.onEvent({ type: 'ADDED', object: svc('a', '5') });
    expect(h.changes).toEqual([]);
    w.onEvent({ type: 'MODIFIED', object: svc('a', '6') });
    expect(h.changes).toEqual([['updated', 'a', '6']]);
  });

  it('fills in apiVersion and kind that watch objects lack', async () => {
    const core = make([listOf('1')], [], {}, Resources.Pod);
    core.informer.start();
    (await core.kube.watchOpened(1)).onEvent({
      type: 'ADDED',
      object: { metadata: { namespace: 'ns', name: 'p', resourceVersion: '2' } } as KubeObject,
    });
    expect(core.informer.get('ns', 'p')).toMatchObject({ apiVersion: 'v1', kind: 'Pod' });

    const grouped = make([listOf('1')], [], {}, Resources.Deployment);
    grouped.informer.start();
    (await grouped.kube.watchOpened(1)).onEvent({
      type: 'ADDED',
      object: { metadata: { namespace: 'ns', name: 'd', resourceVersion: '2' } } as KubeObject,
    });
    expect(grouped.informer.get('ns', 'd')).toMatchObject({ apiVersion: 'apps/v1', kind: 'Deployment' });
  });

  it('a BOOKMARK is not reported but moves the resume resourceVersion; so does every event', async () => {
    const h = make(
      [listOf('10', svc('a', '5'))],
      [
        emit([{ type: 'BOOKMARK', object: svc('', '15') }]),
        emit([
          { type: 'MODIFIED', object: svc('a', '17') },
          { type: 'BOOKMARK', object: { apiVersion: 'v', kind: 'Service', metadata: {} } }, // no resourceVersion: ignored
        ]),
      ],
    );
    h.informer.start();
    await h.kube.watchOpened(3);
    expect(h.kube.watchCalls.map((c) => c.opts.resourceVersion)).toEqual(['10', '15', '17']);
    expect(h.changes).toEqual([
      ['added', 'a', '5'],
      ['updated', 'a', '17'],
    ]);
    // A stream that ends normally is re-opened at once, without a re-list or a wait.
    expect(h.kube.list).toHaveBeenCalledTimes(1);
    expect(h.kube.watchCalls.map((c) => c.at)).toEqual([1_000_000, 1_000_000, 1_000_000]);
    expect(h.restarts).toEqual([]);
  });
});

describe('Informer: re-lists', () => {
  it('410 Gone re-lists at once and reports only the differences, an object gone between lists as deleted', async () => {
    const h = make(
      [
        listOf('10', svc('a', '1'), svc('b', '2'), svc('c', '3')),
        // Second list: a as the watch last saw it, b changed, c vanished, d as the watch saw it, e new.
        listOf('20', svc('a', '11'), svc('b', '14'), svc('d', '12'), svc('e', '15')),
      ],
      [
        emit(
          [
            { type: 'MODIFIED', object: svc('a', '11') },
            { type: 'ADDED', object: svc('d', '12') },
          ],
          new KubeApiError(410, 'Expired', 'too old', 'WATCH', '/x'),
        ),
      ],
    );
    h.informer.start();
    const second = await h.kube.watchOpened(2);
    expect(h.changes).toEqual([
      ['added', 'a', '1'],
      ['added', 'b', '2'],
      ['added', 'c', '3'],
      ['updated', 'a', '11'],
      ['added', 'd', '12'],
      // the re-list
      ['updated', 'b', '14'],
      ['added', 'e', '15'],
      ['deleted', 'c', '3'],
    ]);
    // What the re-list found is told apart from the watch's events: versions in between went by unseen.
    expect(h.listed).toEqual(['updated b', 'added e', 'deleted c']);
    expect(h.kube.list).toHaveBeenCalledTimes(2);
    expect(second.opts.resourceVersion).toBe('20');
    expect(second.at).toBe(h.kube.watchCalls[0]!.at); // no backoff after Gone
    expect(h.restarts).toEqual(['gone']);
    expect(h.log.warn).not.toHaveBeenCalled();
    expect(
      h.informer
        .list()
        .map((o) => o.metadata.name)
        .sort(),
    ).toEqual(['a', 'b', 'd', 'e']);
  });

  it('re-lists after relistMs even without errors; earlier stream ends only re-watch, with the remaining time as timeout', async () => {
    const h = make([listOf('10', svc('a', '1'), svc('b', '2')), listOf('30', svc('a', '1'), svc('b', '3'))], [openFor(4_000), openFor(6_000)], {
      relistMs: 10_000,
    });
    h.informer.start();
    await h.kube.watchOpened(1);
    await vi.advanceTimersByTimeAsync(4_000);
    expect(h.kube.watch).toHaveBeenCalledTimes(2);
    expect(h.kube.list).toHaveBeenCalledTimes(1);
    await vi.advanceTimersByTimeAsync(6_000);
    expect(h.kube.list).toHaveBeenCalledTimes(2);
    const third = await h.kube.watchOpened(3);

    expect(h.kube.listCalls.map((c) => c.at - 1_000_000)).toEqual([0, 10_000]);
    expect(h.kube.watchCalls.map((c) => [c.at - 1_000_000, c.opts.timeoutSeconds, c.opts.resourceVersion])).toEqual([
      [0, 10, '10'],
      [4_000, 6, '10'],
      [10_000, 10, '30'],
    ]);
    expect(third.opts.resourceVersion).toBe('30');
    // Only b changed between the lists.
    expect(h.changes).toEqual([
      ['added', 'a', '1'],
      ['added', 'b', '2'],
      ['updated', 'b', '3'],
    ]);
    expect(h.restarts).toEqual([]);
  });
});

describe('Informer: errors and backoff', () => {
  const boom = () => new Error('connection reset');

  it('after other errors waits, doubling from 500 ms up to maxBackoffMs, and does not re-list', async () => {
    const h = make([listOf('10')], [fail(boom()), fail(boom()), fail(boom()), fail(boom()), fail(boom())], { maxBackoffMs: 3_000 });
    h.informer.start();
    await h.kube.watchOpened(1);
    await vi.advanceTimersByTimeAsync(499);
    expect(h.kube.watch).toHaveBeenCalledTimes(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(h.kube.watch).toHaveBeenCalledTimes(2);
    await vi.advanceTimersByTimeAsync(999);
    expect(h.kube.watch).toHaveBeenCalledTimes(2);
    await vi.advanceTimersByTimeAsync(1);
    expect(h.kube.watch).toHaveBeenCalledTimes(3);

    await vi.advanceTimersByTimeAsync(60_000);
    const at = h.kube.watchCalls.map((c) => c.at);
    expect(at.slice(1).map((t, i) => t - at[i]!)).toEqual([500, 1_000, 2_000, 3_000, 3_000]);
    expect(h.kube.watchCalls.map((c) => c.opts.resourceVersion)).toEqual(['10', '10', '10', '10', '10', '10']);
    expect(h.kube.list).toHaveBeenCalledTimes(1);
    expect(h.restarts).toEqual(['error', 'error', 'error', 'error', 'error']);
    expect(h.log.warn.mock.calls.map((c) => (c[0] as { backoffMs: number }).backoffMs)).toEqual([500, 1_000, 2_000, 3_000, 3_000]);
    expect(h.log.warn.mock.calls[0]).toEqual([{ err: expect.any(Error), kind: 'Service', backoffMs: 500 }, 'watch failed; restarting']);
  });

  it('a stream that ends normally resets the backoff', async () => {
    const h = make([listOf('10')], [fail(boom()), fail(boom()), emit([]), fail(boom())]);
    h.informer.start();
    await h.kube.watchOpened(1);
    await vi.advanceTimersByTimeAsync(10_000);
    const at = h.kube.watchCalls.map((c) => c.at);
    expect(at.slice(1).map((t, i) => t - at[i]!)).toEqual([500, 1_000, 0, 500]);
  });

  it('a failed list is retried with backoff; synced waits for the first successful list', async () => {
    const h = make([boom(), boom(), listOf('7', svc('a', '1'))], []);
    let synced = false;
    void h.informer.synced.then(() => (synced = true));
    h.informer.start();
    await settle();
    expect(h.kube.list).toHaveBeenCalledTimes(1);
    expect(h.kube.watch).not.toHaveBeenCalled();
    expect(synced).toBe(false);
    expect(h.informer.hasSynced).toBe(false);

    await vi.advanceTimersByTimeAsync(500);
    expect(h.kube.list).toHaveBeenCalledTimes(2);
    expect(synced).toBe(false);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(h.kube.list).toHaveBeenCalledTimes(3);
    expect(synced).toBe(true);
    expect((await h.kube.watchOpened(1)).opts.resourceVersion).toBe('7');
    expect(h.changes).toEqual([['added', 'a', '1']]);
    expect(h.restarts).toEqual(['error', 'error']);
  });

  // BUG (watcher/informer.ts:62,77): the first wait after an error is always 500 ms, because `backoff` starts at 500
  // and is only capped after the first sleep. With maxBackoffMs below 500 ("Longest wait between watch restarts
  // after errors") the first wait exceeds the cap. Production uses 30 s, so the impact there is nil.
  it('never waits longer than maxBackoffMs, even the first time (maxBackoffMs < 500)', async () => {
    const h = make([listOf('10')], [fail(boom()), fail(boom()), fail(boom())], { maxBackoffMs: 200 });
    h.informer.start();
    await h.kube.watchOpened(1);
    await vi.advanceTimersByTimeAsync(5_000);
    const at = h.kube.watchCalls.map((c) => c.at);
    expect(at.slice(1).map((t, i) => t - at[i]!)).toEqual([200, 200, 200]); // actual: [500, 200, 200]
  });

  // BUG (watcher/informer.ts:159): sleep() adds an 'abort' listener to the informer's long-lived stop signal and
  // never removes it when the timer fires, so every error restart leaks one listener (and a closure) for the life
  // of the informer. A flapping API server grows them without bound; past 10 Node prints
  // "MaxListenersExceededWarning: Possible EventTarget memory leak detected". (Reads the private `stop` field.)
  it('does not accumulate abort listeners across error restarts', async () => {
    const h = make([listOf('10')], [fail(boom()), fail(boom()), fail(boom()), fail(boom()), fail(boom())], { maxBackoffMs: 1_000 });
    h.informer.start();
    await h.kube.watchOpened(1);
    await vi.advanceTimersByTimeAsync(10_000);
    expect(h.kube.watch).toHaveBeenCalledTimes(6);
    const stop = (h.informer as unknown as { stop: AbortController }).stop;
    expect(getEventListeners(stop.signal, 'abort').length).toBeLessThanOrEqual(1); // actual: 5
  });
});

describe('Informer: handlers and close', () => {
  it('a handler that throws is logged and does not stop the informer', async () => {
    const seen: string[] = [];
    const h = make([listOf('10', svc('a', '1'), svc('b', '2'))], [], {
      onChange: (t, o) => {
        seen.push(`${t} ${o.metadata.name ?? ''}`);
        if (o.metadata.name === 'a') throw new Error('handler broke');
      },
    });
    h.informer.start();
    await h.informer.synced;
    const w = await h.kube.watchOpened(1);
    w.onEvent({ type: 'MODIFIED', object: svc('a', '3') });
    w.onEvent({ type: 'ADDED', object: svc('c', '4') });
    await settle();
    expect(seen).toEqual(['added a', 'added b', 'updated a', 'added c']);
    expect(h.log.error).toHaveBeenCalledTimes(2);
    expect(h.log.error).toHaveBeenCalledWith({ err: expect.any(Error), kind: 'Service', namespace: 'ns', name: 'a' }, 'change handler failed');
    // The cache took the update even though the handler failed; the watch stays the same one.
    expect(h.informer.get('ns', 'a')?.metadata.resourceVersion).toBe('3');
    expect(h.kube.watch).toHaveBeenCalledTimes(1);
    expect(h.restarts).toEqual([]);
  });

  it('close() aborts the open watch and stops the loop', async () => {
    const h = make([listOf('10')], []);
    h.informer.start();
    const w = await h.kube.watchOpened(1);
    expect(w.opts.signal?.aborted).toBe(false);
    await h.informer.close();
    expect(w.opts.signal?.aborted).toBe(true);
    await vi.advanceTimersByTimeAsync(3_600_000);
    expect(h.kube.list).toHaveBeenCalledTimes(1);
    expect(h.kube.watch).toHaveBeenCalledTimes(1);
  });

  it('close() during a backoff wait returns without the wait elapsing', async () => {
    const h = make([listOf('10')], [fail(new Error('down'))], { maxBackoffMs: 30_000 });
    h.informer.start();
    await h.kube.watchOpened(1);
    await settle();
    expect(h.log.warn).toHaveBeenCalledTimes(1);
    let closed = false;
    const done = h.informer.close().then(() => (closed = true));
    await settle(); // the clock does not move
    expect(closed).toBe(true);
    await done;
    await vi.advanceTimersByTimeAsync(60_000);
    expect(h.kube.watch).toHaveBeenCalledTimes(1);
  });

  it('an error that arrives because of close() is neither logged nor retried', async () => {
    const h = make(
      [listOf('10')],
      [(call) => new Promise((_, reject) => call.opts.signal?.addEventListener('abort', () => reject(new Error('aborted')), { once: true }))],
    );
    h.informer.start();
    await h.kube.watchOpened(1);
    await h.informer.close();
    expect(h.log.warn).not.toHaveBeenCalled();
    expect(h.restarts).toEqual([]);
  });

  it('close() before start() resolves', async () => {
    const h = make([listOf('1')], []);
    await expect(h.informer.close()).resolves.toBeUndefined();
    expect(h.kube.list).not.toHaveBeenCalled();
  });

  it('a Gone from the watch after close() does not re-list', async () => {
    const h = make(
      [listOf('10')],
      [(call) => new Promise((_, reject) => call.opts.signal?.addEventListener('abort', () => reject(gone()), { once: true }))],
    );
    h.informer.start();
    await h.kube.watchOpened(1);
    await h.informer.close();
    await vi.advanceTimersByTimeAsync(10_000);
    expect(h.kube.list).toHaveBeenCalledTimes(1);
    expect(h.restarts).toEqual([]);
  });
});

describe('Informer: caughtUp (a writer reading its own writes from the cache)', () => {
  it('answers at once for a version the list or a watch event already reached; waits for one still to come', async () => {
    let push!: (ev: WatchEvent<KubeObject>) => void;
    const h = make(
      [listOf('10', svc('a', '5'))],
      [
        (call) => {
          push = call.onEvent;
          return untilAborted(call);
        },
      ],
    );
    expect(await h.informer.caughtUp('3', 1000)).toBe(false); // not synced yet: cannot vouch
    h.informer.start();
    await h.kube.watchOpened(1);
    expect(await h.informer.caughtUp('10', 1000)).toBe(true);
    const waiting = h.informer.caughtUp('12', 1000);
    let answered: boolean | undefined;
    void waiting.then((v) => (answered = v));
    push({ type: 'MODIFIED', object: svc('a', '11') });
    await settle();
    expect(answered).toBeUndefined(); // 11 < 12
    push({ type: 'ADDED', object: svc('b', '12') });
    await settle();
    expect(answered).toBe(true);
    expect(h.informer.get('ns', 'b')?.metadata.resourceVersion).toBe('12');
  });

  it('gives up after the wait, and never vouches for a version that is not a number', async () => {
    const h = make([listOf('10')], []);
    h.informer.start();
    await h.kube.watchOpened(1);
    const waiting = h.informer.caughtUp('20', 2000);
    let answered: boolean | undefined;
    void waiting.then((v) => (answered = v));
    await vi.advanceTimersByTimeAsync(1999);
    expect(answered).toBeUndefined();
    await vi.advanceTimersByTimeAsync(1);
    expect(answered).toBe(false);
    expect(await h.informer.caughtUp('abc', 1000)).toBe(false);
  });

  it('a bookmark advances the version too; close() releases waiters with false', async () => {
    let push!: (ev: WatchEvent<KubeObject>) => void;
    const h = make(
      [listOf('10')],
      [
        (call) => {
          push = call.onEvent;
          return untilAborted(call);
        },
      ],
    );
    h.informer.start();
    await h.kube.watchOpened(1);
    push({ type: 'BOOKMARK', object: { metadata: { resourceVersion: '30' } } as KubeObject });
    expect(await h.informer.caughtUp('30', 10)).toBe(true);
    const waiting = h.informer.caughtUp('40', 60_000);
    await h.informer.close();
    expect(await waiting).toBe(false);
  });
});
