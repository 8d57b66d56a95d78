// Watcher against an in-memory cluster (list + controllable watch streams per kind) and a recording Poker.
import { pino } from 'pino';
import { Registry } from 'prom-client';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { EntityKind, Poke } from '../../../api/entity.js';
import { Resources, type ResourceType } from '../../../api/kinds.js';
import type { KubeObject } from '../../../api/meta.js';
import type { KubeClient, ListResult, RequestOptions, WatchEvent } from '../../../kube/client.js';
import { KubeApiError } from '../../../kube/errors.js';
import type { WatchedKind } from '../../../watcher/poke-map.js';
import type { Poker } from '../../../watcher/poker.js';
import { Watcher, type WatcherOptions } from '../../../watcher/watcher.js';
import { contentToken, observationCovers, observationOf, statusOnlyChange } from '../../../api/content-token.js';
import { deploymentName } from '../../../resources/names.js';

const selfToken = expect.stringMatching(/^s\.[0-9a-f]{16}$/) as unknown as string;
const depToken = expect.stringMatching(/^d\.[0-9a-f]{16}\.[0-9a-f]{16}$/) as unknown as string;

type WatchOpts = RequestOptions & { namespace?: string; resourceVersion: string; timeoutSeconds?: number };

interface Stream {
  opts: WatchOpts;
  send: (type: WatchEvent<KubeObject>['type'], object: KubeObject) => void;
  fail: (err: Error) => void;
}

/** Lists answer from `objects`; each watch stays open (until aborted or failed by the test) and is driven by the test. */
class FakeCluster {
  readonly objects = new Map<string, KubeObject[]>();
  readonly listCalls: { kind: string; namespace: string | undefined; opts: RequestOptions }[] = [];
  private readonly streams = new Map<string, Stream[]>();
  private readonly held = new Map<string, Promise<void>>();
  private readonly waiters: { kind: string; n: number; resolve: () => void }[] = [];

  readonly list = vi.fn(async (type: ResourceType, namespace: string | undefined, opts: RequestOptions): Promise<ListResult<KubeObject>> => {
    this.listCalls.push({ kind: type.kind, namespace, opts });
    await this.held.get(type.kind);
    return { items: structuredClone(this.objects.get(type.kind) ?? []), resourceVersion: '100' };
  });

  readonly watch = vi.fn((type: ResourceType, opts: WatchOpts, onEvent: (ev: WatchEvent<KubeObject>) => void): Promise<void> => {
    return new Promise<void>((resolve, reject) => {
      opts.signal?.addEventListener('abort', () => resolve(), { once: true });
      const list = this.streams.get(type.kind) ?? [];
      list.push({ opts, send: (t, object) => onEvent({ type: t, object: structuredClone(object) }), fail: reject });
      this.streams.set(type.kind, list);
      for (const w of this.waiters.filter((x) => x.kind === type.kind && x.n <= list.length)) w.resolve();
    });
  });

  /** The list for `kind` waits until the returned function is called. */
  holdList(kind: string): () => void {
    let release!: () => void;
    this.held.set(kind, new Promise<void>((r) => (release = r)));
    return release;
  }

  /** The n-th watch stream opened for `kind` (1-based), once it is open. */
  async stream(kind: string, n = 1): Promise<Stream> {
    if ((this.streams.get(kind)?.length ?? 0) < n) await new Promise<void>((resolve) => this.waiters.push({ kind, n, resolve }));
    return this.streams.get(kind)![n - 1]!;
  }

  get client(): KubeClient {
    return this as unknown as KubeClient;
  }
}

const api = 'serving.knative.dev/v1';
const service = (name: string, rv: string, generation = 1): KubeObject => ({
  apiVersion: api,
  kind: 'Service',
  metadata: { namespace: 'ns', name, uid: `uid-${name}`, resourceVersion: rv, generation },
});
const ownedBy = (kind: string, name: string, rv: string, ownerKind: string, owner: string, ownerApi = api): KubeObject => ({
  apiVersion: kind === 'Deployment' ? 'apps/v1' : api,
  kind,
  metadata: {
    namespace: 'ns',
    name,
    uid: `uid-${name}`,
    resourceVersion: rv,
    generation: 1,
    ownerReferences: [{ apiVersion: ownerApi, kind: ownerKind, name: owner, uid: `uid-${owner}`, controller: true }],
  },
});
const configuration = (name: string, rv: string, owner = name) => ownedBy('Configuration', name, rv, 'Service', owner);
// The generic owner and child of most tests: a Configuration nobody controls (it has a workflow of its own) and its
// Revisions. A Service's Configuration is reconciled by the Service's workflow instead (ADR 0005, tested apart).
const standaloneConfiguration = (name: string, rv: string, generation = 1): KubeObject => ({
  apiVersion: api,
  kind: 'Configuration',
  metadata: { namespace: 'ns', name, uid: `uid-${name}`, resourceVersion: rv, generation },
});
const revisionOf = (name: string, rv: string, owner = name) => ownedBy('Revision', name, rv, 'Configuration', owner);

const allKinds = new Set<EntityKind>(['Service', 'Configuration', 'Revision', 'Route']);

type PokeCall = [{ kind: EntityKind; key: { namespace: string; name: string } }, Poke, { force?: boolean; catchUp?: boolean; fresh?: boolean }?];

let registry: Registry;
const open: Watcher[] = [];

function make(cluster: FakeCluster, watched: WatchedKind[], enabled: ReadonlySet<EntityKind> = allKinds, extra: Partial<WatcherOptions> = {}) {
  const poke = vi.fn();
  const remember = vi.fn();
  const poker = { poke, remember } as unknown as Poker;
  const watcher = new Watcher(
    cluster.client,
    poker,
    { enabled, watched, relistMs: 600_000, maxBackoffMs: 30_000, ...extra },
    pino({ level: 'silent' }),
    registry,
  );
  open.push(watcher);
  const calls = () => poke.mock.calls as PokeCall[];
  /** Pokes so far as `Kind/ns/name <- reason source rv`, and forgets them. */
  const take = (): string[] => {
    const out = calls().map(([t, p]) => `${t.kind}/${t.key.namespace}/${t.key.name} <- ${p.reason} ${p.source} ${p.resourceVersion ?? '-'}`);
    poke.mockClear();
    return out;
  };
  return { watcher, poke, remember, calls, take };
}

async function metric(name: string, labels: Record<string, string>): Promise<number> {
  const m = (await registry.getMetricsAsJSON()).find((x) => x.name === name);
  return m?.values.find((v) => Object.entries(labels).every(([k, val]) => v.labels[k] === val))?.value ?? 0;
}

beforeEach(() => {
  registry = new Registry();
});

afterEach(async () => {
  await Promise.all(open.splice(0).map((w) => w.close()));
});

/** A cluster with a Configuration ns/web nobody controls and its Revision ns/web. */
function webCluster(): FakeCluster {
  const c = new FakeCluster();
  c.objects.set('Configuration', [standaloneConfiguration('web', '1')]);
  c.objects.set('Revision', [revisionOf('web', '2')]);
  return c;
}

async function started(cluster: FakeCluster, watched: WatchedKind[], enabled?: ReadonlySet<EntityKind>, extra?: Partial<WatcherOptions>) {
  const h = make(cluster, watched, enabled, extra);
  h.watcher.start();
  await h.watcher.synced();
  await Promise.all(watched.map((k) => cluster.stream(k)));
  return h;
}

describe('Watcher: pokes for changes', () => {
  it('the initial lists poke each object and, for a child, its owner', async () => {
    const cluster = webCluster();
    const h = make(cluster, ['Configuration', 'Revision']);
    expect(h.watcher.hasSynced).toBe(false);
    h.watcher.start();
    await h.watcher.synced();
    expect(h.watcher.hasSynced).toBe(true);
    expect(h.calls()).toHaveLength(3);
    // The object's own workflow gets the token of its spec (`s.`), an owner the token of spec and status (`d.`).
    // A list found them: never taken for the echo of a workflow's own write (poker.ts `listed`).
    const listed = { listed: true };
    expect(h.poke).toHaveBeenCalledWith(
      { kind: 'Configuration', key: { namespace: 'ns', name: 'web' } },
      { source: 'Configuration/ns/web', reason: 'added', resourceVersion: '1', generation: 1, token: selfToken },
      listed,
    );
    expect(h.poke).toHaveBeenCalledWith(
      { kind: 'Revision', key: { namespace: 'ns', name: 'web' } },
      { source: 'Revision/ns/web', reason: 'added', resourceVersion: '2', generation: 1, token: selfToken },
      listed,
    );
    expect(h.poke).toHaveBeenCalledWith(
      { kind: 'Configuration', key: { namespace: 'ns', name: 'web' } },
      { source: 'Revision/ns/web', reason: 'added', resourceVersion: '2', generation: 1, token: depToken },
      listed,
    );
    expect(await metric('tidal_watch_events_total', { kind: 'Configuration', type: 'added' })).toBe(1);
    expect(await metric('tidal_watch_events_total', { kind: 'Revision', type: 'added' })).toBe(1);
    // Serving kinds are listed without a selector.
    expect(cluster.listCalls).toEqual(
      expect.arrayContaining([
        { kind: 'Configuration', namespace: undefined, opts: { limit: 500 } },
        { kind: 'Revision', namespace: undefined, opts: { limit: 500 } },
      ]),
    );
  });

  it('an update pokes the object and its owner with reason updated; an unchanged resourceVersion pokes nothing', async () => {
    const cluster = webCluster();
    const h = await started(cluster, ['Configuration', 'Revision']);
    h.take();
    const cfg = await cluster.stream('Revision');
    cfg.send('MODIFIED', { ...revisionOf('web', '3'), metadata: { ...revisionOf('web', '3').metadata, generation: 2 } });
    expect(h.calls()).toEqual([
      [
        { kind: 'Revision', key: { namespace: 'ns', name: 'web' } },
        { source: 'Revision/ns/web', reason: 'updated', resourceVersion: '3', generation: 2, token: selfToken },
      ],
      [
        { kind: 'Configuration', key: { namespace: 'ns', name: 'web' } },
        { source: 'Revision/ns/web', reason: 'updated', resourceVersion: '3', generation: 2, token: depToken },
      ],
    ]);
    h.take();
    cfg.send('MODIFIED', revisionOf('web', '3'));
    expect(h.take()).toEqual([]);
    (await cluster.stream('Configuration')).send('MODIFIED', standaloneConfiguration('web', '4', 2));
    expect(h.take()).toEqual(['Configuration/ns/web <- updated Configuration/ns/web 4']);
    expect(await metric('tidal_watch_events_total', { kind: 'Revision', type: 'updated' })).toBe(1);
  });

  it('a child deleted while its owner exists pokes the child (deleted) and the owner (dependency)', async () => {
    const cluster = webCluster();
    const h = await started(cluster, ['Configuration', 'Revision']);
    h.take();
    (await cluster.stream('Revision')).send('DELETED', revisionOf('web', '5'));
    expect(h.take()).toEqual(['Revision/ns/web <- deleted Revision/ns/web 5', 'Configuration/ns/web <- dependency Revision/ns/web 5']);
  });

  it('a new child of a cached owner pokes the owner with the child as source', async () => {
    const cluster = webCluster();
    const h = await started(cluster, ['Configuration', 'Revision']);
    h.take();
    (await cluster.stream('Revision')).send('ADDED', revisionOf('web-2', '6', 'web'));
    expect(h.take()).toEqual(['Revision/ns/web-2 <- added Revision/ns/web-2 6', 'Configuration/ns/web <- added Revision/ns/web-2 6']);
  });

  it('only kinds whose workflows are enabled are poked', async () => {
    const cluster = webCluster();
    const h = await started(cluster, ['Configuration', 'Revision'], new Set<EntityKind>(['Configuration']));
    expect(h.take().sort()).toEqual(['Configuration/ns/web <- added Configuration/ns/web 1', 'Configuration/ns/web <- added Revision/ns/web 2']);
    (await cluster.stream('Revision')).send('MODIFIED', revisionOf('web', '7'));
    expect(h.take()).toEqual(['Configuration/ns/web <- updated Revision/ns/web 7']);
  });

  it('Deployments and Pods are watched by the revision label and poke their Revision', async () => {
    const cluster = new FakeCluster();
    cluster.objects.set('Revision', [ownedBy('Revision', 'web-00001', '1', 'Configuration', 'web')]);
    cluster.objects.set('Deployment', [ownedBy('Deployment', 'web-00001-deployment', '2', 'Revision', 'web-00001')]);
    const h = await started(cluster, ['Revision', 'Deployment', 'Pod']);
    expect(cluster.listCalls).toEqual(
      expect.arrayContaining([
        { kind: 'Revision', namespace: undefined, opts: { limit: 500 } },
        { kind: 'Deployment', namespace: undefined, opts: { labelSelector: 'serving.knative.dev/revision', limit: 500 } },
        { kind: 'Pod', namespace: undefined, opts: { labelSelector: 'serving.knative.dev/revision', limit: 500 } },
      ]),
    );
    expect((await cluster.stream('Pod')).opts.labelSelector).toBe('serving.knative.dev/revision');
    // The Revision's owner (Configuration) is not watched here, so it is poked; the Deployment pokes its Revision.
    expect(h.take().sort()).toEqual([
      'Configuration/ns/web <- added Revision/ns/web-00001 1',
      'Revision/ns/web-00001 <- added Deployment/ns/web-00001-deployment 2',
      'Revision/ns/web-00001 <- added Revision/ns/web-00001 1',
    ]);

    const pod = (name: string, rev: string, rv: string): KubeObject => ({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { namespace: 'ns', name, resourceVersion: rv, labels: { 'serving.knative.dev/revision': rev } },
    });
    const pods = await cluster.stream('Pod');
    pods.send('ADDED', pod('p1', 'web-00001', '10'));
    pods.send('MODIFIED', pod('p1', 'web-00001', '11'));
    expect(h.take()).toEqual(['Revision/ns/web-00001 <- added Pod/ns/p1 10', 'Revision/ns/web-00001 <- updated Pod/ns/p1 11']);
    (await cluster.stream('Deployment')).send('DELETED', ownedBy('Deployment', 'web-00001-deployment', '12', 'Revision', 'web-00001'));
    expect(h.take()).toEqual(['Revision/ns/web-00001 <- dependency Deployment/ns/web-00001-deployment 12']);
  });
});

describe("Watcher: Kubernetes Services, a Route's placeholders and a Revision's own, under two selectors", () => {
  const kubeService = (name: string, rv: string, ownerKind: string, owner: string, label: string): KubeObject => ({
    ...ownedBy('Service', name, rv, ownerKind, owner),
    apiVersion: 'v1',
    metadata: { ...ownedBy('Service', name, rv, ownerKind, owner).metadata, labels: { [label]: owner } },
  });

  async function servicesCluster() {
    const cluster = new FakeCluster();
    cluster.objects.set('Revision', [revisionOf('web-00001', '1', 'web'), revisionOf('web-00002', '2', 'web')]);
    const h = make(cluster, ['Revision', 'KubeService', 'RevisionService']);
    h.watcher.start();
    await h.watcher.synced();
    // Both watch core/v1 Services (kind `Service` in the fake), each with its own selector.
    const streams = [await cluster.stream('Service', 1), await cluster.stream('Service', 2)];
    const bySelector = (l: string) => streams.find((s) => s.opts.labelSelector === l)!;
    h.take();
    return { cluster, h, routeServices: bySelector('serving.knative.dev/route'), revisionServices: bySelector('serving.knative.dev/revision') };
  }

  it("a Revision's Service pokes the Revision, named as activities name it (KubeService); its deletion is news", async () => {
    const { h, revisionServices } = await servicesCluster();
    const own = kubeService('web-00001', '10', 'Revision', 'web-00001', 'serving.knative.dev/revision');
    revisionServices.send('ADDED', own);
    expect(h.calls()).toEqual([
      [
        { kind: 'Revision', key: { namespace: 'ns', name: 'web-00001' } },
        { source: 'KubeService/ns/web-00001', reason: 'added', resourceVersion: '10', generation: 1, token: depToken },
      ],
    ]);
    // The source is the one activities record for what they read and wrote (api/content-token.ts), so an echo compares.
    expect(h.calls()[0]![1].token).toBe(contentToken(own, 'dependency'));
    h.take();
    // The garbage collector deleting an old incarnation's Service: the Revision of that name makes its own.
    revisionServices.send('DELETED', kubeService('web-00001', '11', 'Revision', 'web-00001', 'serving.knative.dev/revision'));
    expect(h.take()).toEqual(['Revision/ns/web-00001 <- dependency KubeService/ns/web-00001 11']);
    expect(await metric('tidal_watch_events_total', { kind: 'RevisionService', type: 'deleted' })).toBe(1);
  });

  it('a Revision whose Service is absent from the start-up list is poked from it', async () => {
    const { h, revisionServices } = await servicesCluster();
    revisionServices.send('ADDED', kubeService('web-00001', '10', 'Revision', 'web-00001', 'serving.knative.dev/revision'));
    h.take();
    expect(h.watcher.pokeMissingChildren()).toBe(1);
    expect(h.take()).toEqual(['Revision/ns/web-00002 <- dependency KubeService/ns/web-00002 -']);
  });

  it('the cache answers from the informer whose label the request names, and versions from whichever holds the object', async () => {
    const { h, routeServices, revisionServices } = await servicesCluster();
    // Versions past the lists' (100).
    routeServices.send('ADDED', kubeService('web', '120', 'Route', 'web', 'serving.knative.dev/route'));
    revisionServices.send('ADDED', kubeService('web-00001', '121', 'Revision', 'web-00001', 'serving.knative.dev/revision'));
    const names = (objs: KubeObject[] | undefined) => objs?.map((o) => o.metadata.name);
    expect(names(await h.watcher.cache.list(Resources.KubeService, 'ns', { labels: { 'serving.knative.dev/route': 'web' } }))).toEqual(['web']);
    expect(names(await h.watcher.cache.list(Resources.KubeService, 'ns', { labels: { 'serving.knative.dev/revision': 'web-00001' } }))).toEqual([
      'web-00001',
    ]);
    // No selector says which: the caller reads from the API server.
    expect(await h.watcher.cache.list(Resources.KubeService, 'ns', {})).toBeUndefined();
    expect(h.watcher.cache.versionOf?.(Resources.KubeService, 'ns', 'web-00001')).toEqual({ resourceVersion: '121', newest: '121' });
    expect(h.watcher.cache.versionOf?.(Resources.KubeService, 'ns', 'web')).toEqual({ resourceVersion: '120', newest: '121' });
    // Absent from both: the newest version either has seen, so a memory entry older than that counts as gone.
    expect(h.watcher.cache.versionOf?.(Resources.KubeService, 'ns', 'gone')).toEqual({ resourceVersion: undefined, newest: '121' });
  });
});

describe('Watcher: the start-up list catches up settled objects last', () => {
  const settled = (name: string, generation: number, observed: number, ready: string): KubeObject =>
    ({
      ...service(name, String(10 + generation), generation),
      status: { observedGeneration: observed, conditions: [{ type: 'Ready', status: ready }] },
    }) as KubeObject;

  it('a Service whose status reports its generation goes in the catch-up lane; one changed since (or not settled) does not', async () => {
    const cluster = new FakeCluster();
    cluster.objects.set('Service', [
      settled('at-rest', 1, 1, 'True'),
      settled('failed', 1, 1, 'False'),
      settled('changed', 2, 1, 'True'),
      settled('rolling', 1, 1, 'Unknown'),
    ]);
    const h = await started(cluster, ['Service']);
    const lane = (name: string) => h.calls().find(([t]) => t.key.name === name)?.[2];
    expect(lane('at-rest')).toEqual({ catchUp: true, listed: true });
    expect(lane('failed')).toEqual({ catchUp: true, listed: true });
    expect(lane('changed')).toEqual({ listed: true });
    expect(lane('rolling')).toEqual({ listed: true });
    h.take();
    // After the list, a new object is news, settled or not.
    (await cluster.stream('Service')).send('ADDED', settled('new', 1, 1, 'True'));
    await vi.waitFor(() => expect(h.calls()).toHaveLength(1));
    expect(h.calls()[0]![2]).toBeUndefined();
  });
});

describe('Watcher: the start-up list after a watch bookmark (a new leader term)', () => {
  it("pokes only the objects written after their kind's bookmark, and every object of a kind without one", async () => {
    const cluster = new FakeCluster();
    cluster.objects.set('Service', [service('before', '40', 1), service('at', '50', 1), service('after', '51', 1)]);
    cluster.objects.set('Configuration', [standaloneConfiguration('web', '7')]);
    const h = await started(cluster, ['Service', 'Configuration'], allKinds, { bookmark: { Service: '50' } });
    expect(h.take().sort()).toEqual(['Configuration/ns/web <- added Configuration/ns/web 7', 'Service/ns/after <- added Service/ns/after 51']);
    expect(h.watcher.startUp).toEqual({ poked: 2, unchanged: 2, resumed: 0 });
    // What the unchanged ones would have announced is remembered as delivered, so the same content again is no news.
    const remembered = (h.remember.mock.calls as PokeCall[]).map(
      ([t, p]) => `${t.kind}/${t.key.name} <- ${p.source} ${p.resourceVersion ?? '-'} ${p.token ? 'token' : '-'}`,
    );
    expect(remembered.sort()).toEqual(['Service/at <- Service/ns/at 50 token', 'Service/before <- Service/ns/before 40 token']);
    // The caches hold every object all the same, and a later change of one left alone is news as always.
    expect(h.watcher.cache.versionOf?.(Resources.Service, 'ns', 'before')).toMatchObject({ resourceVersion: '40' });
    // The first Service watch resumed from the bookmark while the list ran; the second follows the list.
    (await cluster.stream('Service', 2)).send('MODIFIED', service('before', '120', 2));
    await vi.waitFor(() => expect(h.take()).toEqual(['Service/ns/before <- updated Service/ns/before 120']));
  });

  it("progress: each kind's newest version, once every kind has listed", async () => {
    const cluster = new FakeCluster();
    cluster.objects.set('Service', [service('a', '40', 1)]);
    const release = cluster.holdList('Configuration');
    const h = make(cluster, ['Service', 'Configuration']);
    h.watcher.start();
    await vi.waitFor(() => expect(h.watcher.cache.versionOf?.(Resources.Service, 'ns', 'a')).toMatchObject({ resourceVersion: '40' }));
    expect(h.watcher.progress()).toBeUndefined();
    release();
    await h.watcher.synced();
    expect(h.watcher.progress()).toEqual({ Service: '100', Configuration: '100' });
    (await cluster.stream('Service')).send('MODIFIED', service('a', '130', 2));
    await vi.waitFor(() => expect(h.watcher.progress()).toEqual({ Service: '130', Configuration: '100' }));
  });
});

describe('Watcher: the held start-up changes are poked a batch at a time', () => {
  it('yields to the event loop between batches, keeps the order, and synced waits for the last', async () => {
    const cluster = new FakeCluster();
    // 1,200 Revisions listed while the Configurations' list is held: each one's poke waits for its owner's cache.
    cluster.objects.set('Configuration', [standaloneConfiguration('web', '1')]);
    cluster.objects.set(
      'Revision',
      Array.from({ length: 1200 }, (_, i) => revisionOf(`web-${i}`, String(2 + i), 'web')),
    );
    const release = cluster.holdList('Configuration');
    const h = make(cluster, ['Configuration', 'Revision']);
    h.watcher.start();
    await cluster.stream('Revision');
    expect(h.calls()).toHaveLength(0);
    release();
    // Between two batches another callback runs: it sees some pokes made and some not yet.
    const seen: number[] = [];
    const sample = () => {
      seen.push(h.calls().length);
      if (h.calls().length < 1 + 2 * 1200) setImmediate(sample);
    };
    await cluster.stream('Configuration');
    setImmediate(sample);
    await h.watcher.synced();
    expect(seen.some((n) => n > 0 && n < 1 + 2 * 1200)).toBe(true);
    // Each Revision pokes its own workflow and its Configuration's, in the order listed.
    const revisions = h
      .calls()
      .filter(([t]) => t.kind === 'Revision')
      .map(([t]) => t.key.name);
    expect(revisions).toEqual(Array.from({ length: 1200 }, (_, i) => `web-${i}`));
    expect(h.calls()).toHaveLength(1 + 2 * 1200);
  });
});

describe('Watcher: config-gc changed (pokeRevisionCollectors)', () => {
  it('pokes the reconcilers of the Configurations with more than one Revision only', async () => {
    const cluster = new FakeCluster();
    const labelled = (name: string, rv: string, config: string): KubeObject => {
      const r = revisionOf(name, rv, config);
      return { ...r, metadata: { ...r.metadata, labels: { 'serving.knative.dev/configuration': config } } };
    };
    cluster.objects.set('Service', [service('two', '1'), service('one', '2')]);
    cluster.objects.set('Configuration', [
      configuration('two', '3'),
      configuration('one', '4'),
      standaloneConfiguration('alone', '5'),
      standaloneConfiguration('none', '6'),
    ]);
    cluster.objects.set('Revision', [
      labelled('two-00001', '7', 'two'),
      labelled('two-00002', '8', 'two'),
      labelled('one-00001', '9', 'one'),
      labelled('alone-00001', '10', 'alone'),
      labelled('alone-00002', '11', 'alone'),
    ]);
    const h = await started(cluster, ['Service', 'Configuration', 'Revision']);
    h.take();
    const n = h.watcher.pokeRevisionCollectors({ source: 'ConfigMap/knative-serving/config-gc', reason: 'updated', resourceVersion: '90' });
    // A Service's Configuration is its Service's to reconcile (ADR 0005); one with a single Revision or none is left alone.
    expect(h.take().sort()).toEqual([
      'Configuration/ns/alone <- updated ConfigMap/knative-serving/config-gc 90',
      'Service/ns/two <- updated ConfigMap/knative-serving/config-gc 90',
    ]);
    expect(n).toBe(2);
  });

  it('pokes every Service and Configuration when Revisions are not watched', async () => {
    const cluster = new FakeCluster();
    cluster.objects.set('Service', [service('web', '1')]);
    cluster.objects.set('Configuration', [configuration('web', '2'), standaloneConfiguration('alone', '3')]);
    const h = await started(cluster, ['Service', 'Configuration']);
    h.take();
    h.watcher.pokeRevisionCollectors({ source: 'ConfigMap/knative-serving/config-gc', reason: 'updated' });
    expect(h.take().sort()).toEqual([
      'Configuration/ns/alone <- updated ConfigMap/knative-serving/config-gc -',
      'Service/ns/web <- updated ConfigMap/knative-serving/config-gc -',
    ]);
  });
});

describe('Watcher: list pages through one gate', () => {
  it('keeps the pages in flight within the limit, the kinds that resolve owners first', async () => {
    const cluster = new FakeCluster();
    const list = cluster.list.getMockImplementation()!;
    let inFlight = 0;
    let most = 0;
    cluster.list.mockImplementation(async (type, namespace, opts) => {
      most = Math.max(most, ++inFlight);
      try {
        return await list(type, namespace, opts);
      } finally {
        inFlight -= 1;
      }
    });
    const release = cluster.holdList('Deployment');
    const h = make(cluster, ['Deployment', 'Revision', 'Service', 'Pod', 'Configuration', 'Route'], allKinds, { listPagesInFlight: 1 });
    h.watcher.start();
    // The first kind's page holds the only slot; the others wait, owners' kinds (Service, Configuration, Route) first.
    await vi.waitFor(() => expect(cluster.listCalls.map((c) => c.kind)).toEqual(['Deployment']));
    release();
    await h.watcher.synced();
    expect(cluster.listCalls.map((c) => c.kind)).toEqual(['Deployment', 'Service', 'Configuration', 'Route', 'Revision', 'Pod']);
    expect(most).toBe(1);
  });
});

describe('Watcher: a held start-up change keeps the tokens of the object listed, not the object', () => {
  it('pokes and remembers what the list delivered, even when that object is changed in memory before the release', async () => {
    const cluster = new FakeCluster();
    const withContent = (name: string, rv: string): KubeObject =>
      ({
        ...revisionOf(name, rv, 'web'),
        spec: { containers: [{ image: `nginx:${name}` }] },
        status: { conditions: [{ type: 'Ready', status: 'True' }] },
      }) as KubeObject;
    // One Revision unchanged since the bookmark (remembered), one changed after it (poked).
    const listedRevisions = [withContent('web-1', '40'), withContent('web-2', '60')];
    const expected = listedRevisions.map((r) => ({ self: contentToken(r, 'self'), dependency: contentToken(r, 'dependency') }));
    cluster.objects.set('Configuration', [standaloneConfiguration('web', '1')]);
    cluster.objects.set('Revision', listedRevisions);
    // The objects the informer receives from the Revision list, to change them while their pokes are held.
    const delivered: KubeObject[] = [];
    const list = cluster.list.getMockImplementation()!;
    cluster.list.mockImplementation(async (type, namespace, opts) => {
      const result = await list(type, namespace, opts);
      if (type.kind === 'Revision') delivered.push(...result.items);
      return result;
    });
    const release = cluster.holdList('Configuration');
    const h = make(cluster, ['Configuration', 'Revision'], allKinds, { bookmark: { Revision: '50' } });
    h.watcher.start();
    // The first Revision watch resumes from the bookmark; the second opens once the list has been handled.
    await cluster.stream('Revision', 2);
    expect(delivered).toHaveLength(2);
    for (const r of delivered) (r as unknown as { spec: { containers: { image: string }[] } }).spec.containers[0]!.image = 'changed-in-memory';
    release();
    await h.watcher.synced();
    const tokensFor = (calls: PokeCall[], name: string) =>
      calls.filter(([, p]) => p.source === `Revision/ns/${name}`).map(([t, p]) => `${t.kind}/${t.key.name} ${p.token}`);
    const remembered = h.remember.mock.calls as PokeCall[];
    expect(tokensFor(remembered, 'web-1').sort()).toEqual([`Configuration/web ${expected[0]!.dependency}`, `Revision/web-1 ${expected[0]!.self}`]);
    expect(tokensFor(h.calls(), 'web-2').sort()).toEqual([`Configuration/web ${expected[1]!.dependency}`, `Revision/web-2 ${expected[1]!.self}`]);
  });
});

describe('Watcher: standing by while another replica leads', () => {
  const remembered = (h: ReturnType<typeof make>) =>
    (h.remember.mock.calls as PokeCall[]).map(([t, p]) => `${t.kind}/${t.key.name} <- ${p.source} ${p.resourceVersion ?? '-'}`).sort();

  it('lists and watches, pokes nothing; leading, it pokes what was written after the bookmark and remembers the rest', async () => {
    const cluster = new FakeCluster();
    cluster.objects.set('Service', [service('before', '40'), service('after', '60')]);
    cluster.objects.set('Configuration', [standaloneConfiguration('web', '7')]);
    const h = make(cluster, ['Service', 'Configuration'], allKinds, { standby: true });
    h.watcher.start();
    await h.watcher.synced();
    const services = await cluster.stream('Service');
    expect(services.opts.resourceVersion).toBe('100');
    services.send('MODIFIED', service('before', '45', 2));
    services.send('ADDED', service('new', '70'));
    (await cluster.stream('Configuration')).send('DELETED', standaloneConfiguration('web', '80'));
    // The caches follow; nothing is delivered or remembered, and there is nothing to vouch for on the Lease.
    expect(h.watcher.cache.versionOf?.(Resources.Service, 'ns', 'new')).toMatchObject({ resourceVersion: '70' });
    expect(h.calls()).toEqual([]);
    expect(h.remember).not.toHaveBeenCalled();
    expect(h.watcher.progress()).toBeUndefined();

    h.watcher.lead({ Service: '50', Configuration: '50' }, undefined);
    await h.watcher.synced();
    // One change per object, judged against the bookmark given now; each goes to a run the previous leader's process
    // may have run last, so its sticky queue is reset.
    expect(h.take().sort()).toEqual([
      'Configuration/ns/web <- deleted Configuration/ns/web 80',
      'Service/ns/after <- added Service/ns/after 60',
      'Service/ns/new <- added Service/ns/new 70',
    ]);
    expect(remembered(h)).toEqual(['Service/before <- Service/ns/before 45']);
    expect(h.watcher.startUp).toEqual({ poked: 2, unchanged: 1, resumed: 0 });
    // Leading: a change is poked as it comes, and the bookmark may move up to what was seen.
    services.send('MODIFIED', service('before', '120', 3));
    expect(h.calls().map(([t, p, o]) => `${t.key.name} ${p.resourceVersion} ${JSON.stringify(o)}`)).toEqual(['before 120 undefined']);
    expect(h.watcher.progress()).toEqual({ Service: '120', Configuration: '100' });
  });

  it('with the held changes below it delivered, a prune forgets them; the takeover pokes only the rest', async () => {
    const cluster = new FakeCluster();
    cluster.objects.set('Service', [service('a', '40'), service('b', '60'), service('c', '90')]);
    const h = make(cluster, ['Service'], allKinds, { standby: true });
    h.watcher.start();
    await h.watcher.synced();
    h.watcher.prune({ Service: '60' });
    expect(remembered(h)).toEqual(['Service/a <- Service/ns/a 40', 'Service/b <- Service/ns/b 60']);
    expect(h.calls()).toEqual([]);
    h.remember.mockClear();
    h.watcher.lead({ Service: '60' }, undefined);
    await h.watcher.synced();
    expect(h.take()).toEqual(['Service/ns/c <- added Service/ns/c 90']);
    expect(h.remember).not.toHaveBeenCalled();
  });

  it('a deletion a re-list found is never taken as delivered: it carries the version last seen, not the deletion’s', async () => {
    const cluster = new FakeCluster();
    cluster.objects.set('Service', [service('a', '40'), service('gone', '45')]);
    const h = make(cluster, ['Service'], allKinds, { standby: true });
    h.watcher.start();
    await h.watcher.synced();
    // The watch history expired (410): the list after it no longer has `gone`, reported deleted at the version the
    // cache held (45), below the bookmark although the deletion came after it.
    cluster.objects.set('Service', [service('a', '40')]);
    (await cluster.stream('Service')).fail(new KubeApiError(410, 'Expired', 'too old resource version', 'WATCH', '/x'));
    await vi.waitFor(() => expect(h.watcher.cache.versionOf?.(Resources.Service, 'ns', 'gone')?.resourceVersion).toBeUndefined());
    h.watcher.prune({ Service: '50' });
    h.watcher.lead({ Service: '50' }, undefined);
    await h.watcher.synced();
    expect(h.take()).toEqual(['Service/ns/gone <- deleted Service/ns/gone 45']);
  });

  it('without a bookmark (no leader before) every held change is poked; a recent write goes in the first lane', async () => {
    const cluster = new FakeCluster();
    const settled = (name: string, rv: string, writtenAt: string): KubeObject =>
      ({
        ...service(name, rv),
        metadata: { ...service(name, rv).metadata, managedFields: [{ manager: 'kubectl', time: writtenAt }] },
        status: { observedGeneration: 1, conditions: [{ type: 'Ready', status: 'True' }] },
      }) as KubeObject;
    cluster.objects.set('Service', [settled('old', '40', '2026-01-01T00:00:00Z'), settled('recent', '41', '2026-01-01T00:10:00Z')]);
    const h = make(cluster, ['Service'], allKinds, { standby: true });
    h.watcher.start();
    await h.watcher.synced();
    h.watcher.lead(undefined, Date.parse('2026-01-01T00:09:00Z'));
    await h.watcher.synced();
    const how = Object.fromEntries(h.calls().map(([t, , o]) => [t.key.name, o]));
    expect(how).toEqual({ old: { catchUp: true, listed: true }, recent: { listed: true } });
  });

  it('leading before its lists are done, it resumes from the bookmark and judges the list as a new term does', async () => {
    const cluster = new FakeCluster();
    cluster.objects.set('Service', [service('web', '60', 2), service('idle', '40')]);
    const release = cluster.holdList('Service');
    const h = make(cluster, ['Service'], allKinds, { standby: true });
    h.watcher.start();
    h.watcher.lead({ Service: '50' }, undefined);
    const resuming = await cluster.stream('Service');
    expect(resuming.opts.resourceVersion).toBe('50');
    resuming.send('MODIFIED', service('web', '60', 2));
    expect(h.take()).toEqual(['Service/ns/web <- updated Service/ns/web 60']);
    release();
    await h.watcher.synced();
    expect(h.take()).toEqual(['Service/ns/web <- added Service/ns/web 60']);
    expect(h.watcher.startUp).toEqual({ poked: 1, unchanged: 1, resumed: 1 });
  });
});

describe('Watcher: resuming from the watch bookmark while the start-up list runs', () => {
  const bookmark = { Service: '50', Configuration: '50', Revision: '50', Ingress: '50' };

  it("a new term's pokes before its lists are done reset the runs' sticky queues; later ones and a term without a bookmark do not", async () => {
    const cluster = new FakeCluster();
    cluster.objects.set('Service', [service('web', '60', 2)]);
    const release = cluster.holdList('Service');
    const h = make(cluster, ['Service'], allKinds, { bookmark });
    h.watcher.start();
    (await cluster.stream('Service')).send('MODIFIED', service('web', '60', 2));
    expect(h.calls().map(([t, , o]) => `${t.key.name} ${JSON.stringify(o)}`)).toEqual(['web {"unstick":true}']);
    release();
    await h.watcher.synced();
    h.take();
    (await cluster.stream('Service', 2)).send('MODIFIED', service('web', '120', 3));
    await vi.waitFor(() => expect(h.calls()).toHaveLength(1));
    expect(h.calls()[0]![2]).toBeUndefined();
    // A first start (no bookmark): its list pokes everything, and there was no leader before it.
    const fresh = new FakeCluster();
    fresh.objects.set('Service', [service('web', '60', 2)]);
    const first = await started(fresh, ['Service']);
    expect(first.calls().map(([, , o]) => o)).toEqual([{ listed: true }]);
  });

  it('a change since the bookmark is poked before its kind has listed, and the resuming watch ends with the list', async () => {
    const cluster = new FakeCluster();
    cluster.objects.set('Service', [service('web', '60', 2), service('idle', '40')]);
    const release = cluster.holdList('Service');
    const h = make(cluster, ['Service'], allKinds, { bookmark });
    h.watcher.start();
    const resuming = await cluster.stream('Service');
    expect(resuming.opts.resourceVersion).toBe('50');
    resuming.send('MODIFIED', service('web', '60', 2));
    expect(h.take()).toEqual(['Service/ns/web <- updated Service/ns/web 60']);
    expect(h.watcher.hasSynced).toBe(false);
    release();
    await h.watcher.synced();
    // The list finds it again (the poker drops what its target was told) and leaves the unchanged one alone.
    expect(h.take()).toEqual(['Service/ns/web <- added Service/ns/web 60']);
    expect(h.watcher.startUp).toEqual({ poked: 1, unchanged: 1, resumed: 1 });
    expect(resuming.opts.signal?.aborted).toBe(true);
    const following = await cluster.stream('Service', 2);
    expect(following.opts.resourceVersion).toBe('100');
    // A late event of the ended watch is not reported; the list's own watch reports what follows.
    resuming.send('MODIFIED', service('idle', '101', 2));
    following.send('MODIFIED', service('idle', '102', 3));
    expect(h.take()).toEqual(['Service/ns/idle <- updated Service/ns/idle 102']);
  });

  it("a child's change resolves to its owner's workflow through the owners that changed since the bookmark", async () => {
    const cluster = new FakeCluster();
    const releases = ['Service', 'Configuration', 'Revision'].map((k) => cluster.holdList(k));
    const h = make(cluster, ['Service', 'Configuration', 'Revision'], allKinds, { bookmark });
    h.watcher.start();
    (await cluster.stream('Configuration')).send('MODIFIED', configuration('web', '61'));
    // The Configuration's own controller reference names its Service: no cache needed.
    expect(h.take()).toEqual(['Service/ns/web <- updated Configuration/ns/web 61']);
    // A Revision's Configuration is known from the change above, so its owner's poke goes to the Service.
    (await cluster.stream('Revision')).send('ADDED', revisionOf('web-00002', '62', 'web'));
    expect(h.take().sort()).toEqual(['Revision/ns/web-00002 <- added Revision/ns/web-00002 62', 'Service/ns/web <- added Revision/ns/web-00002 62']);
    for (const release of releases) release();
    await h.watcher.synced();
  });

  it("a child deleted since the bookmark pokes its owner's workflow as a dependency, before the lists", async () => {
    const cluster = new FakeCluster();
    cluster.objects.set('Service', [service('web', '30')]);
    const release = cluster.holdList('Ingress');
    const h = make(cluster, ['Service', 'Ingress'], allKinds, { bookmark });
    h.watcher.start();
    await cluster.stream('Service', 2); // the Service list is done
    h.take();
    const ingress = ownedBy('Ingress', 'web', '63', 'Route', 'web');
    ingress.metadata.labels = { 'serving.knative.dev/service': 'web' };
    (await cluster.stream('Ingress')).send('DELETED', ingress);
    expect(h.take()).toEqual(['Service/ns/web <- dependency Ingress/ns/web 63']);
    release();
    await h.watcher.synced();
  });

  it('a child deleted since the bookmark before its Service and Route have listed pokes the Service its label names', async () => {
    const cluster = new FakeCluster();
    cluster.objects.set('Service', [service('web', '30')]);
    const releases = ['Service', 'Route', 'Ingress'].map((k) => cluster.holdList(k));
    const h = make(cluster, ['Service', 'Route', 'Ingress'], allKinds, { bookmark: { ...bookmark, Route: '50' } });
    h.watcher.start();
    const ingress = ownedBy('Ingress', 'web', '63', 'Route', 'web');
    ingress.metadata.labels = { 'serving.knative.dev/service': 'web' };
    (await cluster.stream('Ingress')).send('DELETED', ingress);
    // The Route's own workflow (which finds its Route is the Service's and ends) and the Service's, as a dependency.
    expect(h.take().sort()).toEqual(['Route/ns/web <- dependency Ingress/ns/web 63', 'Service/ns/web <- dependency Ingress/ns/web -']);
    // A child without the label is left to the lists.
    const unlabelled = ownedBy('Ingress', 'other', '64', 'Route', 'other');
    (await cluster.stream('Ingress')).send('DELETED', unlabelled);
    expect(h.take()).toEqual(['Route/ns/other <- dependency Ingress/ns/other 64']);
    for (const release of releases) release();
    await h.watcher.synced();
  });

  it('a bookmark older than the watch history (410 Gone) ends the resuming watch quietly; the list pokes the changes', async () => {
    const cluster = new FakeCluster();
    cluster.objects.set('Service', [service('web', '60', 2)]);
    const release = cluster.holdList('Service');
    const h = make(cluster, ['Service'], allKinds, { bookmark });
    h.watcher.start();
    (await cluster.stream('Service')).fail(new KubeApiError(410, 'Expired', 'too old resource version', 'WATCH', '/x'));
    await vi.waitFor(async () => expect(await metric('tidal_watch_restarts_total', { kind: 'Service', reason: 'resume-gone' })).toBe(1));
    expect(h.calls()).toEqual([]);
    release();
    await h.watcher.synced();
    expect(h.take()).toEqual(['Service/ns/web <- added Service/ns/web 60']);
  });

  it('a kind without a bookmark does not resume: its list is all there is', async () => {
    const cluster = new FakeCluster();
    const h = await started(cluster, ['Service', 'Route'], allKinds, { bookmark: { Service: '50' } });
    expect(cluster.watch.mock.calls.filter(([type]) => type.kind === 'Route').map(([, opts]) => opts.resourceVersion)).toEqual(['100']);
    h.take();
  });
});

describe('Watcher: children deleted while no one watched (a new leader term)', () => {
  it('an owner whose same-named child is absent from the start-up list is poked from that child, as a dependency', async () => {
    const cluster = new FakeCluster();
    cluster.objects.set('Service', [service('whole', '1'), service('lost-route', '2')]);
    cluster.objects.set('Configuration', [configuration('whole', '3'), configuration('lost-route', '4')]);
    cluster.objects.set('Route', [ownedBy('Route', 'whole', '5', 'Service', 'whole')]);
    const h = await started(cluster, ['Service', 'Configuration', 'Route']);
    h.take();
    expect(h.watcher.pokeMissingChildren()).toBe(1);
    expect(h.take()).toEqual(['Service/ns/lost-route <- dependency Route/ns/lost-route -']);
    // The poke announces nothing (no token): the workflow passes unless it, too, saw the Route absent.
    expect(h.calls()).toEqual([]);
  });

  it("names each child as its builder does: a long Revision's Deployment is ChildName-shortened, not missing", async () => {
    const long = `${'a'.repeat(57)}-00001`; // 63 characters: `<rev>-deployment` would not fit and is hashed
    const cluster = new FakeCluster();
    cluster.objects.set('Revision', [
      ownedBy('Revision', long, '1', 'Configuration', 'a'),
      ownedBy('Revision', 'web-00001', '2', 'Configuration', 'web'),
    ]);
    cluster.objects.set('Deployment', [ownedBy('Deployment', deploymentName(long), '3', 'Revision', long)]);
    const h = await started(cluster, ['Revision', 'Deployment']);
    h.take();
    expect(deploymentName(long)).not.toBe(`${long}-deployment`);
    expect(h.watcher.pokeMissingChildren()).toBe(1);
    expect(h.take()).toEqual(['Revision/ns/web-00001 <- dependency Deployment/ns/web-00001-deployment -']);
  });

  it("a KIngress's VirtualServices and a DomainMapping's KIngress: each missing one pokes the pass that programs it", async () => {
    const kingress = (name: string, rv: string, ownerKind: string, labels: Record<string, string>, annotations?: Record<string, string>) => {
      const o = ownedBy('Ingress', name, rv, ownerKind, name);
      return { ...o, metadata: { ...o.metadata, labels, ...(annotations ? { annotations } : {}) } } as KubeObject;
    };
    const virtualService = (name: string, rv: string, ingress: string) =>
      ownedBy('VirtualService', name, rv, 'Ingress', ingress, 'networking.internal.knative.dev/v1alpha1');
    const mapping = (name: string, rv: string): KubeObject => ({ ...service(name, rv), kind: 'DomainMapping' });
    const cluster = new FakeCluster();
    cluster.objects.set('Service', [service('web', '1'), service('local', '2'), service('other', '3')]);
    cluster.objects.set('Configuration', [configuration('web', '4'), configuration('local', '5'), configuration('other', '6')]);
    cluster.objects.set('Route', [
      ownedBy('Route', 'web', '7', 'Service', 'web'),
      ownedBy('Route', 'local', '8', 'Service', 'local'),
      ownedBy('Route', 'other', '9', 'Service', 'other'),
    ]);
    cluster.objects.set('Ingress', [
      kingress('web', '10', 'Route', { 'serving.knative.dev/route': 'web' }),
      kingress('local', '11', 'Route', { 'serving.knative.dev/route': 'local' }),
      // Another class's KIngress: its controller makes what it needs, Tidal expects nothing.
      kingress('other', '12', 'Route', { 'serving.knative.dev/route': 'other' }, { 'networking.knative.dev/ingress.class': 'kourier' }),
      kingress('a.example.org', '13', 'DomainMapping', { 'serving.knative.dev/domainMappingUID': 'uid-a.example.org' }),
    ]);
    cluster.objects.set('VirtualService', [
      virtualService('web-ingress', '14', 'web'),
      virtualService('local-mesh', '15', 'local'),
      virtualService('local-ingress', '16', 'local'),
    ]);
    cluster.objects.set('DomainMapping', [mapping('a.example.org', '17'), mapping('b.example.org', '18')]);
    const kinds: WatchedKind[] = ['Service', 'Configuration', 'Route', 'Ingress', 'VirtualService', 'DomainMapping'];
    const h = await started(cluster, kinds, new Set<EntityKind>(['Service', 'Configuration', 'Route', 'Ingress', 'DomainMapping']));
    h.take();
    expect(h.watcher.pokeMissingChildren()).toBe(3);
    expect(h.take().sort()).toEqual([
      // A DomainMapping's KIngress has the gateways' VirtualService only (no cluster-local host).
      'DomainMapping/ns/a.example.org <- dependency VirtualService/ns/a.example.org-ingress -',
      'DomainMapping/ns/b.example.org <- dependency Ingress/ns/b.example.org -',
      // A Route's has both; the Service's pass programs it (ADR 0005).
      'Service/ns/web <- dependency VirtualService/ns/web-mesh -',
    ]);
  });

  it('kinds this watcher does not follow are never reported missing', async () => {
    const cluster = new FakeCluster();
    cluster.objects.set('Service', [service('web', '1')]);
    const h = await started(cluster, ['Service']);
    h.take();
    expect(h.watcher.pokeMissingChildren()).toBe(0);
  });
});

describe('Watcher: owners known to be gone (knownGone)', () => {
  it('after the owner is deleted, its children (garbage collected) do not poke it', async () => {
    const cluster = webCluster();
    const h = await started(cluster, ['Configuration', 'Revision']);
    h.take();
    (await cluster.stream('Configuration')).send('DELETED', standaloneConfiguration('web', '8'));
    expect(h.take()).toEqual(['Configuration/ns/web <- deleted Configuration/ns/web 8']);
    const cfg = await cluster.stream('Revision');
    cfg.send('MODIFIED', {
      ...revisionOf('web', '9'),
      metadata: { ...revisionOf('web', '9').metadata, deletionTimestamp: '2024-01-01T00:00:00Z' },
    });
    cfg.send('DELETED', revisionOf('web', '10'));
    expect(h.take()).toEqual(['Revision/ns/web <- updated Revision/ns/web 9', 'Revision/ns/web <- deleted Revision/ns/web 10']);
  });

  it('a child whose owner is not in the synced owner cache does not poke it', async () => {
    const cluster = new FakeCluster();
    cluster.objects.set('Revision', [revisionOf('orphan', '2', 'ghost')]);
    // The Configuration list answers only once the Service informer has synced.
    const release = cluster.holdList('Revision');
    const h = make(cluster, ['Configuration', 'Revision']);
    h.watcher.start();
    await cluster.stream('Configuration');
    release();
    await h.watcher.synced();
    await cluster.stream('Revision');
    expect(h.take()).toEqual(['Revision/ns/orphan <- added Revision/ns/orphan 2']);
    (await cluster.stream('Revision')).send('ADDED', revisionOf('other', '3', 'ghost-2'));
    expect(h.take()).toEqual(['Revision/ns/other <- added Revision/ns/other 3']);
    // The owner pokes itself when it appears; then its children poke it again.
    (await cluster.stream('Configuration')).send('ADDED', standaloneConfiguration('ghost', '4'));
    (await cluster.stream('Revision')).send('MODIFIED', revisionOf('orphan', '5', 'ghost'));
    expect(h.take()).toEqual([
      'Configuration/ns/ghost <- added Configuration/ns/ghost 4',
      'Revision/ns/orphan <- updated Revision/ns/orphan 5',
      'Configuration/ns/ghost <- updated Revision/ns/orphan 5',
    ]);
  });

  it('regression (chaos run): the start-up list is held until every kind is listed, so a Revision listed first pokes the Service that reconciles its Configuration', async () => {
    const cluster = new FakeCluster();
    cluster.objects.set('Service', [service('web', '1')]);
    cluster.objects.set('Configuration', [configuration('web', '2')]);
    cluster.objects.set('Revision', [revisionOf('web-00001', '3', 'web'), revisionOf('orphan', '4', 'ghost')]);
    const releaseServices = cluster.holdList('Service');
    const releaseConfigurations = cluster.holdList('Configuration');
    // A slot for each kind: the two held lists must not keep the Revisions' from running.
    const h = make(cluster, ['Service', 'Configuration', 'Revision'], allKinds, { listPagesInFlight: 3 });
    h.watcher.start();
    await cluster.stream('Revision');
    expect(h.watcher.hasSynced).toBe(false);
    // Before the owners' kinds are listed nothing is poked: resolved now, the Revision would poke the Configuration's
    // own workflow, which ends finding the object its Service's (workflows/delegation.ts) — a lost poke.
    expect(h.take()).toEqual([]);
    releaseConfigurations();
    releaseServices();
    await h.watcher.synced();
    expect(h.watcher.hasSynced).toBe(true);
    const poked = h.take();
    expect(poked).toEqual(
      expect.arrayContaining([
        'Service/ns/web <- added Revision/ns/web-00001 3',
        'Revision/ns/web-00001 <- added Revision/ns/web-00001 3',
        'Revision/ns/orphan <- added Revision/ns/orphan 4',
      ]),
    );
    expect(poked.filter((p) => p.startsWith('Configuration/'))).toEqual([]);
    // …and an owner the full list shows gone is not started again by its child.
    expect(poked.filter((p) => p.includes('ghost'))).toEqual([]);
  });

  it('a kind that resolves no owner (Deployments) holds nothing back while it cannot be listed', async () => {
    const cluster = webCluster();
    cluster.objects.set('Deployment', []);
    const releaseDeployments = cluster.holdList('Deployment');
    const h = make(cluster, ['Configuration', 'Revision', 'Deployment']);
    h.watcher.start();
    await Promise.all([cluster.stream('Configuration'), cluster.stream('Revision')]);
    const poked: string[] = [];
    await vi.waitFor(() => {
      poked.push(...h.take());
      expect(poked).toContain('Configuration/ns/web <- added Revision/ns/web 2');
    });
    expect(h.watcher.hasSynced).toBe(false);
    releaseDeployments();
    await h.watcher.synced();
  });

  it('pokes the Routes whose traffic names a Configuration or Revision, without the routes annotation', async () => {
    const cluster = new FakeCluster();
    // Routes nobody controls (a Service's Route would be its Service's to reconcile: tested below).
    const route = (name: string, traffic: unknown[], rv = '5'): KubeObject =>
      ({
        apiVersion: api,
        kind: 'Route',
        metadata: { namespace: 'ns', name, uid: `uid-${name}`, resourceVersion: rv, generation: 1 },
        spec: { traffic },
      }) as KubeObject;
    cluster.objects.set('Route', [
      route('direct', [{ configurationName: 'web', percent: 100 }]),
      route('pinned', [{ revisionName: 'web-00001', percent: 100 }]),
    ]);
    cluster.objects.set('Configuration', []);
    cluster.objects.set('Revision', []);
    const h = await started(cluster, ['Route', 'Configuration', 'Revision']);
    h.take();
    (await cluster.stream('Configuration')).send('MODIFIED', configuration('web', '6'));
    // The Service's Configuration is the Service's (ADR 0005).
    expect(h.take()).toEqual(['Service/ns/web <- added Configuration/ns/web 6', 'Route/ns/direct <- added Configuration/ns/web 6']);
    const rev = {
      ...ownedBy('Revision', 'web-00002', '7', 'Configuration', 'web'),
      metadata: { ...ownedBy('Revision', 'web-00002', '7', 'Configuration', 'web').metadata, labels: { 'serving.knative.dev/configuration': 'web' } },
    };
    (await cluster.stream('Revision')).send('MODIFIED', rev);
    expect(h.take()).toEqual([
      'Revision/ns/web-00002 <- added Revision/ns/web-00002 7',
      'Service/ns/web <- added Revision/ns/web-00002 7',
      'Route/ns/direct <- added Revision/ns/web-00002 7',
    ]);
    // The Route no longer names the Configuration: it is not poked any more.
    (await cluster.stream('Route')).send('MODIFIED', route('direct', [{ revisionName: 'web-00002', percent: 100 }], '9'));
    h.take();
    (await cluster.stream('Configuration')).send('MODIFIED', configuration('web', '8'));
    expect(h.take()).toEqual(['Service/ns/web <- updated Configuration/ns/web 8']);
  });

  it("a Service's Configuration, Route and KIngress, and its Revisions' owner, poke the Service (ADR 0005)", async () => {
    const cluster = new FakeCluster();
    cluster.objects.set('Service', [service('web', '1')]);
    cluster.objects.set('Configuration', [configuration('web', '2')]);
    cluster.objects.set('Route', [
      { ...ownedBy('Route', 'web', '3', 'Service', 'web'), spec: { traffic: [{ configurationName: 'web', percent: 100 }] } } as KubeObject,
    ]);
    cluster.objects.set('Revision', []);
    cluster.objects.set('Ingress', []);
    const h = await started(
      cluster,
      ['Service', 'Configuration', 'Route', 'Revision', 'Ingress'],
      new Set<EntityKind>(['Service', 'Configuration', 'Revision', 'Route', 'Ingress']),
    );
    // The initial lists: each object once, to the Service's workflow; no Configuration or Route workflow.
    expect(new Set(h.take().map((p) => p.split(' <- ')[0]))).toEqual(new Set(['Service/ns/web']));
    (await cluster.stream('Revision')).send('ADDED', ownedBy('Revision', 'web-00001', '4', 'Configuration', 'web'));
    expect(h.take()).toEqual(['Revision/ns/web-00001 <- added Revision/ns/web-00001 4', 'Service/ns/web <- added Revision/ns/web-00001 4']);
    (await cluster.stream('Ingress')).send('ADDED', ownedBy('Ingress', 'web', '5', 'Route', 'web', 'serving.knative.dev/v1'));
    expect(h.take()).toEqual(['Service/ns/web <- added Ingress/ns/web 5']);
    // A sweep pokes the Service once for all three.
    expect(h.watcher.pokeAll(['Service', 'Configuration', 'Route'], { source: 'Tidal/sweep', reason: 'resync' }, { force: true })).toBe(1);
    expect(h.take()).toEqual(['Service/ns/web <- resync Tidal/sweep -']);
  });

  it('a deletion carries no token: it is always news', async () => {
    const cluster = webCluster();
    const h = await started(cluster, ['Configuration', 'Revision']);
    h.take();
    (await cluster.stream('Revision')).send('DELETED', revisionOf('web', '9'));
    for (const [, p] of h.calls()) expect(p.token).toBeUndefined();
    expect(h.take()).toEqual(['Revision/ns/web <- deleted Revision/ns/web 9', 'Configuration/ns/web <- dependency Revision/ns/web 9']);
  });

  it('an owner of a kind that is not watched is always poked', async () => {
    const cluster = new FakeCluster();
    cluster.objects.set('Revision', [revisionOf('web', '2', 'no-such-service')]);
    const h = await started(cluster, ['Revision']);
    expect(h.take()).toEqual(['Revision/ns/web <- added Revision/ns/web 2', 'Configuration/ns/no-such-service <- added Revision/ns/web 2']);
  });

  it('a Pod of a Revision not in the Revision cache pokes nothing', async () => {
    const cluster = new FakeCluster();
    const h = await started(cluster, ['Revision', 'Pod']);
    (await cluster.stream('Pod')).send('ADDED', {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { namespace: 'ns', name: 'p', resourceVersion: '3', labels: { 'serving.knative.dev/revision': 'gone-00001' } },
    });
    expect(h.take()).toEqual([]);
  });
});

describe("Watcher: a KIngress whose status another class's controller writes", () => {
  const traefik = { 'networking.knative.dev/ingress.class': 'traefik.ingress.networking.knative.dev' };
  const at = (t: string) => `2026-11-23T10:00:${t}Z`;
  /** A KIngress of Traefik's class controlled by `ownerKind` `name`, with the status its controller wrote, if any. */
  const kingress = (name: string, rv: string, ownerKind: string, status?: Record<string, unknown>): KubeObject => {
    const ownerApi = ownerKind === 'DomainMapping' ? 'serving.knative.dev/v1beta1' : api;
    const o = ownedBy('Ingress', name, rv, ownerKind, name, ownerApi);
    return {
      ...o,
      apiVersion: 'networking.internal.knative.dev/v1alpha1',
      metadata: { ...o.metadata, annotations: traefik },
      spec: { rules: [{ hosts: [`${name}.ns.example.com`] }] },
      ...(status ? { status } : {}),
    } as KubeObject;
  };
  const status = (ready: string, lastTransitionTime: string, reason?: string) => ({
    observedGeneration: 1,
    conditions: [{ type: 'Ready', status: ready, lastTransitionTime, ...(reason ? { reason } : {}) }],
    publicLoadBalancer: { ingress: [{ domainInternal: 'traefik.traefik.svc.cluster.local' }] },
  });
  const route = (name: string, rv: string): KubeObject => ({
    apiVersion: api,
    kind: 'Route',
    metadata: { namespace: 'ns', name, uid: `uid-${name}`, resourceVersion: rv, generation: 1 },
  });
  const enabled = new Set<EntityKind>(['Service', 'Route', 'Ingress', 'DomainMapping']);

  it("a status-only change pokes the Route's workflow with news its last pass did not cover; a timestamp alone is no news", async () => {
    const cluster = new FakeCluster();
    cluster.objects.set('Route', [route('web', '1')]);
    cluster.objects.set('Ingress', [kingress('web', '2', 'Route')]);
    const h = await started(cluster, ['Route', 'Ingress'], enabled);
    h.take();
    // What the Route's pass saw of the KIngress it applied: no status yet.
    const seen = observationOf(kingress('web', '2', 'Route'));
    const stream = await cluster.stream('Ingress');

    stream.send('MODIFIED', kingress('web', '3', 'Route', status('Unknown', at('01'), 'Uninitialized')));
    expect(h.calls()).toEqual([
      [
        { kind: 'Route', key: { namespace: 'ns', name: 'web' } },
        { source: 'Ingress/ns/web', reason: 'updated', resourceVersion: '3', generation: 1, token: depToken },
      ],
    ]);
    const unknown = h.calls()[0]![1].token;
    expect(observationCovers(seen, unknown)).toBe(false);
    // Its spec is the one the pass applied: the Route's next pass only has to read the status again.
    expect(statusOnlyChange(seen, unknown)).toBe(true);
    h.take();

    stream.send('MODIFIED', kingress('web', '4', 'Route', status('True', at('02'))));
    const [[target, poke]] = h.calls() as [PokeCall];
    expect(target).toEqual({ kind: 'Route', key: { namespace: 'ns', name: 'web' } });
    expect(poke).toMatchObject({ source: 'Ingress/ns/web', reason: 'updated', resourceVersion: '4' });
    expect(poke.token).not.toBe(unknown);
    expect(observationCovers(observationOf(kingress('web', '3', 'Route', status('Unknown', at('01'), 'Uninitialized'))), poke.token)).toBe(false);
    h.take();

    // The controller writes the same status again with a new transition time: the token is the one a pass that read
    // the Ready status already covers, so the workflow ignores it.
    stream.send('MODIFIED', kingress('web', '5', 'Route', status('True', at('03'))));
    const [[, again]] = h.calls() as [PokeCall];
    expect(again.token).toBe(poke.token);
    expect(observationCovers(observationOf(kingress('web', '4', 'Route', status('True', at('02')))), again.token)).toBe(true);
  });

  it("a Service's Route's KIngress pokes the Service; a DomainMapping's pokes the DomainMapping", async () => {
    const cluster = new FakeCluster();
    cluster.objects.set('Service', [service('web', '1')]);
    cluster.objects.set('Route', [ownedBy('Route', 'web', '2', 'Service', 'web')]);
    cluster.objects.set('DomainMapping', [{ ...service('a.example.org', '3'), kind: 'DomainMapping' }]);
    cluster.objects.set('Ingress', [kingress('web', '4', 'Route'), kingress('a.example.org', '5', 'DomainMapping')]);
    const h = await started(cluster, ['Service', 'Route', 'Ingress', 'DomainMapping'], enabled);
    h.take();
    const stream = await cluster.stream('Ingress');
    stream.send('MODIFIED', kingress('web', '6', 'Route', status('True', at('01'))));
    stream.send('MODIFIED', kingress('a.example.org', '7', 'DomainMapping', status('True', at('01'))));
    expect(h.take()).toEqual(['Service/ns/web <- updated Ingress/ns/web 6', 'DomainMapping/ns/a.example.org <- updated Ingress/ns/a.example.org 7']);
  });
});

describe('Watcher: pokeAll, restarts, close', () => {
  it('pokeAll pokes every cached object of the enabled, watched kinds, passing poke and force through', async () => {
    const cluster = webCluster();
    cluster.objects.set('Configuration', [standaloneConfiguration('web', '1'), standaloneConfiguration('api', '3')]);
    const h = await started(cluster, ['Configuration', 'Revision']);
    h.take();
    const sweep: Poke = { source: 'Tidal/sweep', reason: 'resync' };
    expect(h.watcher.pokeAll(['Configuration', 'Revision', 'Revision', 'Route'], sweep, { force: true })).toBe(3);
    expect(h.calls()).toEqual(
      expect.arrayContaining([
        [{ kind: 'Configuration', key: { namespace: 'ns', name: 'web' } }, sweep, { force: true }],
        [{ kind: 'Configuration', key: { namespace: 'ns', name: 'api' } }, sweep, { force: true }],
        [{ kind: 'Revision', key: { namespace: 'ns', name: 'web' } }, sweep, { force: true }],
      ]),
    );
    expect(h.calls()).toHaveLength(3);
    h.take();

    const cm: Poke = { source: 'ConfigMap/knative-serving/config-defaults', reason: 'updated', resourceVersion: '77' };
    expect(h.watcher.pokeAll(['Revision'], cm)).toBe(1);
    expect(h.calls()).toEqual([[{ kind: 'Revision', key: { namespace: 'ns', name: 'web' } }, cm, {}]]);
  });

  it('pokeAll skips kinds that are watched but not enabled', async () => {
    const h = await started(webCluster(), ['Configuration', 'Revision'], new Set<EntityKind>(['Configuration']));
    h.take();
    expect(h.watcher.pokeAll(['Configuration', 'Revision'], { source: 'Tidal/sweep', reason: 'resync' }, { force: true })).toBe(1);
    expect(h.take()).toEqual(['Configuration/ns/web <- resync Tidal/sweep -']);
  });

  it('pokeAll reflects deletions seen by the informers', async () => {
    const cluster = webCluster();
    const h = await started(cluster, ['Configuration', 'Revision']);
    (await cluster.stream('Configuration')).send('DELETED', standaloneConfiguration('web', '9'));
    h.take();
    expect(h.watcher.pokeAll(['Configuration'], { source: 'Tidal/sweep', reason: 'resync' })).toBe(0);
    expect(h.poke).not.toHaveBeenCalled();
  });

  it('a 410 Gone re-lists, counts a restart, and pokes for what vanished meanwhile', async () => {
    const cluster = webCluster();
    const h = await started(cluster, ['Configuration', 'Revision']);
    h.take();
    cluster.objects.set('Configuration', []);
    (await cluster.stream('Configuration')).fail(new KubeApiError(410, 'Expired', 'too old', 'WATCH', '/x'));
    const second = await cluster.stream('Configuration', 2);
    expect(second.opts.resourceVersion).toBe('100');
    expect(h.take()).toEqual(['Configuration/ns/web <- deleted Configuration/ns/web 1']);
    expect(await metric('tidal_watch_restarts_total', { kind: 'Configuration', reason: 'gone' })).toBe(1);
    expect(await metric('tidal_watch_events_total', { kind: 'Configuration', type: 'deleted' })).toBe(1);
  });

  it('what a re-list after 410 Gone finds is poked fresh (never skipped for equal content); a watch event is not', async () => {
    const cluster = webCluster();
    const h = await started(cluster, ['Configuration', 'Revision']);
    h.take();
    const first = await cluster.stream('Configuration');
    first.send('MODIFIED', standaloneConfiguration('web', '5', 2));
    expect(h.calls().map(([, , opts]) => opts)).toEqual([undefined]);
    h.take();
    // The versions after 5 go by unseen: the watch breaks, and the re-list finds the Configuration at 7.
    cluster.objects.set('Configuration', [standaloneConfiguration('web', '7', 2)]);
    first.fail(new KubeApiError(410, 'Expired', 'too old', 'WATCH', '/x'));
    await cluster.stream('Configuration', 2);
    expect(h.calls()).toEqual([
      [
        { kind: 'Configuration', key: { namespace: 'ns', name: 'web' } },
        { source: 'Configuration/ns/web', reason: 'updated', resourceVersion: '7', generation: 2, token: selfToken },
        { fresh: true, listed: true },
      ],
    ]);
  });

  it('close() aborts every watch and resolves', async () => {
    const cluster = webCluster();
    const h = await started(cluster, ['Configuration', 'Revision']);
    const streams = await Promise.all([cluster.stream('Configuration'), cluster.stream('Revision')]);
    await h.watcher.close();
    expect(streams.map((s) => s.opts.signal?.aborted)).toEqual([true, true]);
    expect(cluster.watch).toHaveBeenCalledTimes(2);
  });
});

describe("Watcher: pods, as their Revision's status reads them", () => {
  const pod = (rv: string, ready: boolean, podIP?: string): KubeObject =>
    ({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {
        namespace: 'ns',
        name: 'web-deployment-abc',
        uid: 'uid-pod',
        resourceVersion: rv,
        labels: { 'serving.knative.dev/revision': 'web', 'serving.knative.dev/revisionUID': 'uid-web' },
      },
      spec: { nodeName: 'kwok-node-0' },
      status: { ...(podIP ? { podIP } : {}), conditions: [{ type: 'Ready', status: ready ? 'True' : 'False' }] },
    }) as KubeObject;

  it('an IP assigned is no news to its Revision; the pod turning Ready is, and the cache says so before the poke', async () => {
    const c = webCluster();
    const h = await started(c, ['Configuration', 'Revision', 'Pod']);
    h.take();
    const s = await c.stream('Pod');
    const tokens: (string | undefined)[] = [];
    h.poke.mockImplementation((_t, p: Poke) => void tokens.push(p.token));
    s.send('ADDED', pod('3', false));
    s.send('MODIFIED', pod('4', false, '10.0.0.7'));
    await vi.waitFor(() => expect(tokens).toHaveLength(2));
    // The poker drops a poke whose token its target already has (watcher/poker.ts): the IP wakes no workflow.
    expect(tokens[1]).toBe(tokens[0]);

    let readyWhenPoked: unknown;
    h.poke.mockImplementation(async () => {
      readyWhenPoked = await h.watcher.cache.list(Resources.Pod, 'ns', { labels: { 'serving.knative.dev/revisionUID': 'uid-web' } });
    });
    h.take();
    s.send('MODIFIED', pod('5', true, '10.0.0.7'));
    await vi.waitFor(() => expect(h.take()).toEqual(['Revision/ns/web <- updated Pod/ns/web-deployment-abc 5']));
    expect(contentToken(pod('5', true, '10.0.0.7'), 'dependency')).not.toBe(tokens[0]);
    await vi.waitFor(() => expect(readyWhenPoked).toBeDefined());
    expect(readyWhenPoked).toEqual([expect.objectContaining({ kind: 'Pod', status: { conditions: [{ type: 'Ready', status: 'True' }] } })]);
  });

  it("until: a step waiting for the Revision's pods to be Ready is woken by the event that makes them so", async () => {
    const c = webCluster();
    c.objects.set('Pod', [pod('3', false)]);
    const h = await started(c, ['Configuration', 'Revision', 'Pod']);
    const s = await c.stream('Pod');
    const labels = { 'serving.knative.dev/revision': 'web' };
    const allReady = (pods: KubeObject[]) =>
      pods.length > 0 && pods.every((p) => (p as { status?: { conditions?: { status: string }[] } }).status?.conditions?.[0]?.status === 'True');
    let woke: boolean | undefined;
    const waiting = h.watcher.cache.until!(Resources.Pod, 'ns', labels, allReady, 60_000).then((met) => (woke = met));
    s.send('MODIFIED', pod('4', false, '10.0.0.7'));
    await new Promise((r) => setTimeout(r, 20));
    expect(woke).toBeUndefined();
    s.send('MODIFIED', pod('5', true, '10.0.0.7'));
    await waiting;
    expect(woke).toBe(true);
    // Already so: no wait at all.
    await expect(h.watcher.cache.until!(Resources.Pod, 'ns', labels, allReady, 60_000)).resolves.toBe(true);
    // A watcher that closes (its term ended) lets its waiters go.
    const never = h.watcher.cache.until!(Resources.Pod, 'ns', labels, () => false, 60_000);
    await h.watcher.close();
    await expect(never).resolves.toBe(false);
  });
});

describe('Watcher: objects delivered to the steps’ memory (delivered)', () => {
  it('hands over each added or updated object of the kinds asked, before a step waiting in the cache is woken', async () => {
    const c = webCluster();
    const handed: string[] = [];
    const watcher = new Watcher(
      c.client,
      { poke: vi.fn() } as unknown as Poker,
      {
        enabled: allKinds,
        watched: ['Configuration', 'Revision'],
        relistMs: 600_000,
        maxBackoffMs: 30_000,
        delivered: { kinds: ['Revision'], to: (type, obj) => handed.push(`${type.kind} ${obj.metadata.name} ${obj.metadata.resourceVersion}`) },
      },
      pino({ level: 'silent' }),
      registry,
    );
    open.push(watcher);
    watcher.start();
    await watcher.synced();
    const revisions = await c.stream('Revision');
    const configurations = await c.stream('Configuration');
    // A step waiting for the Revision's next version finds it handed over when it wakes.
    const handedWhenWoken: string[] = [];
    const woken = watcher.cache.until!(Resources.Revision, 'ns', {}, (revs) => revs.some((r) => r.metadata.resourceVersion === '5'), 60_000).then(
      () => handedWhenWoken.push(...handed),
    );
    revisions.send('MODIFIED', revisionOf('web', '5'));
    await woken;
    expect(handedWhenWoken).toContain('Revision web 5');
    configurations.send('MODIFIED', standaloneConfiguration('web', '6'));
    revisions.send('DELETED', revisionOf('web', '7'));
    await vi.waitFor(async () => expect(await metric('tidal_watch_events_total', { kind: 'Revision', type: 'deleted' })).toBe(1));
    // The initial list's Revision too (version 2); not the Configuration, nor the deletion.
    expect(handed).toEqual(['Revision web 2', 'Revision web 5']);
  });

  it("not a new term's unchanged objects: only those written after the bookmark", async () => {
    const c = new FakeCluster();
    c.objects.set('Revision', [revisionOf('old', '40'), revisionOf('new', '60')]);
    const handed: string[] = [];
    const h = await started(c, ['Revision'], allKinds, {
      bookmark: { Revision: '50' },
      delivered: { kinds: ['Revision'], to: (type, obj) => handed.push(`${type.kind} ${obj.metadata.name} ${obj.metadata.resourceVersion}`) },
    });
    expect(h.watcher.startUp).toMatchObject({ poked: 1, unchanged: 1 });
    expect(handed).toEqual(['Revision new 60']);
  });
});
