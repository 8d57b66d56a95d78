// RecentObjects: an object a step just read or wrote is served again only while the watch cache vouches that nothing
// newer exists; and the Kubernetes client with it skips exactly those GETs (an in-process HTTP server counts them).
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Resources } from '../../../api/kinds.js';
import type { KubeObject } from '../../../api/meta.js';
import { KubeClient } from '../../../kube/client.js';
import { RecentObjects, type CachedVersion } from '../../../kube/recent-objects.js';

const route = (rv: string, generation = 1): KubeObject => ({
  apiVersion: 'serving.knative.dev/v1',
  kind: 'Route',
  metadata: { namespace: 'default', name: 'r', resourceVersion: rv, generation },
});

/** A watch cache by hand: what it holds of `default/r` and the newest version it has seen. */
function watchCache() {
  const state: { follows: boolean; rv: string | undefined; newest: string } = { follows: true, rv: undefined, newest: '0' };
  const versionOf = (): CachedVersion | undefined => (state.follows ? { resourceVersion: state.rv, newest: state.newest } : undefined);
  return { state, versionOf };
}

describe('RecentObjects', () => {
  const served = (recent: RecentObjects) => recent.lookup(Resources.Route, 'default', 'r');

  it('serves an object while the cache holds the same version or an older one', () => {
    const cache = watchCache();
    const recent = new RecentObjects(cache.versionOf);
    cache.state.rv = '10';
    cache.state.newest = '12';
    recent.remember(Resources.Route, route('11'), JSON.stringify(route('11')));
    // The cache still has version 10: our write (11) is the newest known.
    expect(JSON.parse(served(recent) ?? 'null')).toMatchObject({ metadata: { resourceVersion: '11' } });
    cache.state.rv = '11';
    expect(served(recent)).toBeDefined();
    // Someone else wrote version 14: the API server is asked.
    cache.state.rv = '14';
    expect(served(recent)).toBeUndefined();
    expect({ hits: recent.hits, misses: recent.misses }).toEqual({ hits: 2, misses: 1 });
  });

  it('serves an object the cache does not hold only until the cache has seen its version go by', () => {
    const cache = watchCache();
    const recent = new RecentObjects(cache.versionOf);
    cache.state.newest = '20';
    recent.remember(Resources.Route, route('21'), JSON.stringify(route('21')));
    expect(served(recent)).toBeDefined(); // created a moment ago: the watch has not delivered it yet
    cache.state.newest = '25'; // the watch moved past it and does not hold it: deleted
    expect(served(recent)).toBeUndefined();
  });

  it('forgets an entry when a newer version arrives while the cache is away, so a lagging cache cannot vouch for it', () => {
    const cache = watchCache();
    const recent = new RecentObjects(cache.versionOf);
    cache.state.rv = '30';
    cache.state.newest = '30';
    recent.remember(Resources.Route, route('30'), JSON.stringify(route('30'))); // read while leading
    cache.state.follows = false; // between leader terms: the watcher's cache is not there
    recent.remember(Resources.Route, route('31'), JSON.stringify(route('31'))); // this process's write meanwhile
    cache.state.follows = true; // leading again; the watch has not delivered version 31 yet
    // Version 30 would look current to the cache: it must not be served as the object.
    expect(served(recent)).toBeUndefined();
    expect(recent.size).toBe(0);
  });

  it('never serves before the cache has listed, for kinds it does not follow, after the TTL or on a retry', () => {
    const cache = watchCache();
    let now = 0;
    let first = true;
    const recent = new RecentObjects(cache.versionOf, { ttlMs: 1000, now: () => now, firstAttempt: () => first });
    cache.state.rv = '5';
    recent.remember(Resources.Route, route('5'), JSON.stringify(route('5')));
    expect(served(recent)).toBeUndefined(); // newest '0': not listed yet
    cache.state.newest = '5';
    expect(served(recent)).toBeDefined();
    first = false;
    expect(served(recent)).toBeUndefined();
    first = true;
    now = 1001;
    expect(served(recent)).toBeUndefined();
    cache.state.follows = false;
    now = 0;
    const other = new RecentObjects(cache.versionOf, { now: () => now });
    other.remember(Resources.Route, route('5'), JSON.stringify(route('5')));
    expect(other.size).toBe(0);
  });

  it('serves what the watch delivered (managedFields aside) while the cache holds it; a newer write of ours stays', () => {
    const cache = watchCache();
    const recent = new RecentObjects(cache.versionOf);
    cache.state.rv = '40';
    cache.state.newest = '40';
    const delivered: KubeObject = {
      ...route('40'),
      metadata: { ...route('40').metadata, managedFields: [{ manager: 'kube-controller-manager' }] } as KubeObject['metadata'],
    };
    recent.delivered(Resources.Route, delivered);
    expect(JSON.parse(served(recent) ?? 'null')).toEqual(route('40'));
    // Our write (42) answered, its event not delivered yet; an older event (41) arrives meanwhile: the write stays.
    cache.state.newest = '41';
    recent.remember(Resources.Route, route('42'), JSON.stringify(route('42')));
    cache.state.rv = '41';
    recent.delivered(Resources.Route, route('41'));
    expect(JSON.parse(served(recent) ?? 'null')).toMatchObject({ metadata: { resourceVersion: '42' } });
    // A kind the cache does not follow is not remembered.
    cache.state.follows = false;
    recent.forget(Resources.Route, 'default', 'r');
    recent.delivered(Resources.Route, route('43'));
    cache.state.follows = true;
    cache.state.rv = '43';
    expect(served(recent)).toBeUndefined();
  });

  it('keeps the newer of two versions, forgets on request and sweeps expired and surplus entries', () => {
    const cache = watchCache();
    let now = 0;
    const recent = new RecentObjects(cache.versionOf, { ttlMs: 1000, maxEntries: 2, now: () => now });
    cache.state.newest = '1';
    recent.remember(Resources.Route, route('8', 2), JSON.stringify(route('8', 2)));
    recent.remember(Resources.Route, route('7', 1), JSON.stringify(route('7', 1))); // a slower response, older
    expect(JSON.parse(served(recent) ?? 'null')).toMatchObject({ metadata: { resourceVersion: '8' } });
    recent.forget(Resources.Route, 'default', 'r');
    expect(served(recent)).toBeUndefined();
    for (const name of ['a', 'b', 'c']) recent.remember(Resources.Route, { ...route('9'), metadata: { ...route('9').metadata, name } }, '{}');
    expect(recent.size).toBe(2);
    now = 2000;
    recent.sweep();
    expect(recent.size).toBe(0);
  });
});

describe('KubeClient with recent objects', () => {
  let server: http.Server;
  let port: number;
  const requests: string[] = [];
  let stored = route('30');

  beforeAll(async () => {
    server = http.createServer((req, res) => {
      requests.push(`${req.method} ${req.url?.split('?')[0]}`);
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        if (req.method === 'PATCH')
          stored = { ...stored, metadata: { ...stored.metadata, resourceVersion: String(Number(stored.metadata.resourceVersion) + 1) } };
        res.writeHead(200, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify(stored));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  it('answers a GET of what it just wrote from memory, and asks the API server once the cache knows better', async () => {
    const cache = watchCache();
    cache.state.rv = '30';
    cache.state.newest = '30';
    const recent = new RecentObjects(cache.versionOf);
    const credentials = { server: new URL(`http://127.0.0.1:${port}`), source: 'test', insecureSkipTLSVerify: false, token: () => undefined };
    const kube = new KubeClient({ credentials, fieldManager: 'test', memo: recent });
    try {
      const path = '/apis/serving.knative.dev/v1/namespaces/default/routes/r';
      await kube.get(Resources.Route, 'default', 'r');
      const written = await kube.mergePatch<KubeObject>(Resources.Route, 'default', 'r', { metadata: { labels: { a: 'b' } } });
      expect(written.metadata.resourceVersion).toBe('31');
      const again = await kube.get<KubeObject>(Resources.Route, 'default', 'r');
      expect(again?.metadata.resourceVersion).toBe('31');
      again!.metadata.name = 'changed by the caller';
      expect((await kube.get<KubeObject>(Resources.Route, 'default', 'r'))?.metadata.name).toBe('r');
      expect(requests).toEqual([`GET ${path}`, `PATCH ${path}`]);
      cache.state.rv = '40'; // someone else's write reached the watch cache
      stored = route('40');
      expect((await kube.get<KubeObject>(Resources.Route, 'default', 'r'))?.metadata.resourceVersion).toBe('40');
      expect(requests).toEqual([`GET ${path}`, `PATCH ${path}`, `GET ${path}`]);
    } finally {
      kube.close();
    }
  });

  it('reads from the API server after a write made while the cache was away, though the cache still shows the read', async () => {
    const cache = watchCache();
    stored = route('50');
    cache.state.rv = '50';
    cache.state.newest = '50';
    requests.length = 0;
    const recent = new RecentObjects(cache.versionOf);
    const credentials = { server: new URL(`http://127.0.0.1:${port}`), source: 'test', insecureSkipTLSVerify: false, token: () => undefined };
    const kube = new KubeClient({ credentials, fieldManager: 'test', memo: recent });
    try {
      const path = '/apis/serving.knative.dev/v1/namespaces/default/routes/r';
      await kube.get(Resources.Route, 'default', 'r'); // version 50, remembered
      cache.state.follows = false; // the replica missed a lease renewal: no cache until it leads again
      await kube.mergePatch<KubeObject>(Resources.Route, 'default', 'r', { metadata: { labels: { a: 'b' } } }); // 51
      cache.state.follows = true; // the watch has not delivered 51 yet
      expect((await kube.get<KubeObject>(Resources.Route, 'default', 'r'))?.metadata.resourceVersion).toBe('51');
      expect(requests).toEqual([`GET ${path}`, `PATCH ${path}`, `GET ${path}`]);
    } finally {
      kube.close();
    }
  });
});
