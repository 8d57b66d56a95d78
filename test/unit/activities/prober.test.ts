import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { gatewayTargets, probeGateways, type GatewayPodLike } from '../../../activities/prober.js';

const HASH = 'a'.repeat(64);
const OLD_HASH = 'b'.repeat(64);

interface Seen {
  host: string | undefined;
  url: string | undefined;
  method: string | undefined;
  headers: http.IncomingHttpHeaders;
}

const servers: http.Server[] = [];

/** A stand-in gateway pod on 127.0.0.1:<random port>; records every request it gets. */
async function gateway(handler: (req: http.IncomingMessage, res: http.ServerResponse) => void): Promise<{ port: number; seen: Seen[] }> {
  const seen: Seen[] = [];
  const server = http.createServer((req, res) => {
    seen.push({ host: req.headers.host, url: req.url, method: req.method, headers: req.headers });
    handler(req, res);
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { port: (server.address() as AddressInfo).port, seen };
}

/** A Knative backend behind a gateway whose probe route sets `hash`: 200 and the hash echoed back. */
const echoing = (hash: string) => (_req: http.IncomingMessage, res: http.ServerResponse) => {
  res.writeHead(200, { 'K-Network-Hash': hash }).end();
};

/** A port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

afterEach(async () => {
  await Promise.all(
    servers.splice(0).map(
      (s) =>
        new Promise<void>((resolve) => {
          s.closeAllConnections();
          s.close(() => resolve());
        }),
    ),
  );
});

describe('probeGateways (K-Network-Hash readiness probing)', () => {
  it('is ready when every gateway echoes the expected hash, and sends the probe Host and headers', async () => {
    const a = await gateway(echoing(HASH));
    const b = await gateway(echoing(HASH));
    const hosts = ['hello.default.example.com', 'hello.default.svc.cluster.local'];
    const result = await probeGateways({
      targets: [
        { ip: '127.0.0.1', port: a.port },
        { ip: '127.0.0.1', port: b.port },
      ],
      hosts,
      hash: HASH,
      timeoutMs: 2000,
    });
    expect(result).toEqual({ ready: true, failures: [] });
    for (const g of [a, b]) {
      expect(g.seen.map((s) => s.host).sort()).toEqual([...hosts].sort());
      for (const s of g.seen) {
        expect(s.method).toBe('GET');
        expect(s.url).toBe('/healthz');
        expect(s.headers['k-network-probe']).toBe('probe');
        // The prober sends `override`; the probe route replaces it with the hash (net-istio / knative/networking).
        expect(s.headers['k-network-hash']).toBe('override');
        expect(s.headers['user-agent']).toBe('Knative-Ingress-Probe');
      }
    }
  });

  it('uses the given path', async () => {
    const g = await gateway(echoing(HASH));
    const result = await probeGateways({ targets: [{ ip: '127.0.0.1', port: g.port }], hosts: ['h'], hash: HASH, timeoutMs: 2000, path: '/probe' });
    expect(result.ready).toBe(true);
    expect(g.seen.map((s) => s.url)).toEqual(['/probe']);
  });

  it('is not ready while a gateway answers an older hash (or the bare override: no probe route yet)', async () => {
    const ok = await gateway(echoing(HASH));
    const stale = await gateway(echoing(OLD_HASH));
    const unprogrammed = await gateway((req, res) => {
      res.writeHead(200, { 'K-Network-Hash': req.headers['k-network-hash'] ?? '' }).end();
    });
    const result = await probeGateways({
      targets: [ok, stale, unprogrammed].map((g) => ({ ip: '127.0.0.1', port: g.port })),
      hosts: ['hello.default.example.com'],
      hash: HASH,
      timeoutMs: 2000,
    });
    expect(result).toEqual({
      ready: false,
      failures: [
        `127.0.0.1:${stale.port} host hello.default.example.com: hash mismatch (got ${OLD_HASH})`,
        `127.0.0.1:${unprogrammed.port} host hello.default.example.com: hash mismatch (got override)`,
      ],
    });
  });

  it('is not ready on 404 or 503 (route not programmed), per host', async () => {
    const g = await gateway((req, res) => {
      if (req.headers.host === 'known.example.com') echoing(HASH)(req, res);
      else res.writeHead(req.headers.host === 'new.example.com' ? 404 : 503).end();
    });
    const result = await probeGateways({
      targets: [{ ip: '127.0.0.1', port: g.port }],
      hosts: ['known.example.com', 'new.example.com', 'busy.example.com'],
      hash: HASH,
      timeoutMs: 2000,
    });
    expect(result).toEqual({
      ready: false,
      failures: [`127.0.0.1:${g.port} host new.example.com: status 404`, `127.0.0.1:${g.port} host busy.example.com: status 503`],
    });
  });

  it('treats a non-Knative answer (other status, or 200 without the hash header) as success, as upstream does', async () => {
    const redirect = await gateway((_req, res) => res.writeHead(302, { Location: 'https://login.example.com/' }).end());
    const plain = await gateway((_req, res) => res.writeHead(200).end('ok'));
    const result = await probeGateways({
      targets: [redirect, plain].map((g) => ({ ip: '127.0.0.1', port: g.port })),
      hosts: ['h.example.com'],
      hash: HASH,
      timeoutMs: 2000,
    });
    expect(result).toEqual({ ready: true, failures: [] });
  });

  it('reports a refused connection', async () => {
    const port = await closedPort();
    const result = await probeGateways({ targets: [{ ip: '127.0.0.1', port }], hosts: ['h.example.com'], hash: HASH, timeoutMs: 2000 });
    expect(result).toEqual({ ready: false, failures: [`127.0.0.1:${port} host h.example.com: connect ECONNREFUSED`] });
  });

  it('reports a timeout when the gateway never answers', async () => {
    const silent = await gateway(() => undefined);
    const ok = await gateway(echoing(HASH));
    const started = Date.now();
    const result = await probeGateways({
      targets: [silent, ok].map((g) => ({ ip: '127.0.0.1', port: g.port })),
      hosts: ['a.example.com', 'b.example.com'],
      hash: HASH,
      timeoutMs: 100,
    });
    expect(Date.now() - started).toBeLessThan(1500);
    expect(result).toEqual({
      ready: false,
      failures: [`127.0.0.1:${silent.port} host a.example.com: timeout`, `127.0.0.1:${silent.port} host b.example.com: timeout`],
    });
    expect(silent.seen.map((s) => s.host)).toEqual(['a.example.com', 'b.example.com']);
  });

  it('is not ready without targets, and ready with no hosts to probe', async () => {
    expect(await probeGateways({ targets: [], hosts: ['h'], hash: HASH, timeoutMs: 100 })).toEqual({
      ready: false,
      failures: ['no ready gateway pods to probe'],
    });
    expect(await probeGateways({ targets: [{ ip: '127.0.0.1', port: 1 }], hosts: [], hash: HASH, timeoutMs: 100 })).toEqual({
      ready: true,
      failures: [],
    });
  });
});

describe('gatewayTargets', () => {
  const pod = (ip: string | undefined, phase: string, ready: string, deleting = false): GatewayPodLike => ({
    metadata: deleting ? { deletionTimestamp: '2024-01-01T00:00:00Z' } : {},
    status: {
      ...(ip ? { podIP: ip } : {}),
      phase,
      conditions: [
        { type: 'ContainersReady', status: ready },
        { type: 'Ready', status: ready },
      ],
    },
  });

  it('keeps Running, Ready pods with an IP that are not being deleted, one target per IP, in order', () => {
    const pods = [
      pod('10.0.0.2', 'Running', 'True'),
      pod('10.0.0.3', 'Running', 'False'),
      pod('10.0.0.4', 'Pending', 'True'),
      pod(undefined, 'Running', 'True'),
      pod('10.0.0.5', 'Running', 'True', true),
      pod('10.0.0.1', 'Running', 'True'),
      pod('10.0.0.2', 'Running', 'True'),
      { status: { podIP: '10.0.0.6', phase: 'Running' } },
      pod('fd00::7', 'Running', 'True'),
    ];
    expect(gatewayTargets(pods, 8080)).toEqual([
      { ip: '10.0.0.2', port: 8080 },
      { ip: '10.0.0.1', port: 8080 },
      { ip: 'fd00::7', port: 8080 },
    ]);
    expect(gatewayTargets([], 8080)).toEqual([]);
  });
});
