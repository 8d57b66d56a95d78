// The local stack's webhook balancer on loopback: ready replicas get connections round robin, a replica that is not
// ready gets none, and a refused connect moves on to the next replica.
import http from 'node:http';
import net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { startWebhookBalancer } from '../../../dev/webhook-balancer.js';

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of closers.splice(0).reverse()) await c();
});

function listen(server: net.Server | http.Server): Promise<number> {
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => {
      closers.push(() => new Promise((r) => server.close(() => r())));
      resolve((server.address() as net.AddressInfo).port);
    }),
  );
}

/** A replica: a TCP server that answers its name, and a readiness endpoint that can be switched. */
async function replica(name: string, ready = true) {
  const state = { ready };
  const echo = net.createServer((s) => s.end(name));
  const readyz = http.createServer((_req, res) => {
    res.statusCode = state.ready ? 200 : 503;
    res.end();
  });
  return { state, port: await listen(echo), readyUrl: `http://127.0.0.1:${await listen(readyz)}/readyz` };
}

function ask(port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    let data = '';
    const s = net.connect({ host: '127.0.0.1', port });
    s.on('data', (c: Buffer) => (data += c.toString()));
    s.on('close', () => resolve(data));
    s.on('error', reject);
  });
}

async function freePort(): Promise<number> {
  const s = net.createServer();
  const port = await new Promise<number>((r) => s.listen(0, '127.0.0.1', () => r((s.address() as net.AddressInfo).port)));
  await new Promise((r) => s.close(r));
  return port;
}

describe('webhook balancer', () => {
  it('spreads connections over ready replicas and skips one that is not ready', async () => {
    const a = await replica('a');
    const b = await replica('b');
    const c = await replica('c', false);
    const port = await freePort();
    const lb = await startWebhookBalancer({ listenPort: port, backends: [a, b, c], healthMs: 50 });
    closers.push(lb.close);
    const seen = [];
    for (let i = 0; i < 6; i++) seen.push(await ask(port));
    expect(new Set(seen)).toEqual(new Set(['a', 'b']));

    // a stops reporting ready (a draining replica): new connections go elsewhere.
    a.state.ready = false;
    c.state.ready = true;
    await new Promise((r) => setTimeout(r, 200));
    const after = [];
    for (let i = 0; i < 6; i++) after.push(await ask(port));
    expect(new Set(after)).toEqual(new Set(['b', 'c']));
  });

  it('tries the next replica when a connect is refused, even one it believes ready', async () => {
    const gone = { port: await freePort(), readyUrl: (await replica('x')).readyUrl };
    const b = await replica('b');
    const port = await freePort();
    const lb = await startWebhookBalancer({ listenPort: port, backends: [gone, b], healthMs: 50 });
    closers.push(lb.close);
    for (let i = 0; i < 4; i++) expect(await ask(port)).toBe('b');
  });
});
