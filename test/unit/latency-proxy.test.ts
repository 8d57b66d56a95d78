// The benchmark's latency proxy (bench/latency-proxy.ts): relays both ways in order, each chunk held the delay.
import net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { startLatencyProxy } from '../../bench/latency-proxy.js';

const closers: (() => void)[] = [];
afterEach(() => {
  for (const close of closers.splice(0)) close();
});

/** A loopback server that echoes what it reads. */
async function echoServer(): Promise<number> {
  const server = net.createServer((s) => s.pipe(s));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closers.push(() => server.close());
  return (server.address() as net.AddressInfo).port;
}

describe('startLatencyProxy', () => {
  it('relays every chunk in order, both ways, no sooner than the delay each way', async () => {
    const proxy = await startLatencyProxy(await echoServer(), 40);
    closers.push(proxy.close);
    const socket = net.connect(proxy.port, '127.0.0.1');
    closers.push(() => socket.destroy());
    await new Promise<void>((resolve) => socket.once('connect', resolve));
    const want = Array.from({ length: 20 }, (_, i) => `chunk-${i};`).join('');
    const started = performance.now();
    const echoed = new Promise<string>((resolve) => {
      let got = '';
      socket.on('data', (d: Buffer) => {
        got += d.toString();
        if (got.length >= want.length) resolve(got);
      });
    });
    for (let i = 0; i < 20; i++) socket.write(`chunk-${i};`);
    expect(await echoed).toBe(want);
    // A lower bound only: a slow machine can only make it later.
    expect(performance.now() - started).toBeGreaterThanOrEqual(79);
  });
});
