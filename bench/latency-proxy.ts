// A loopback TCP proxy that holds every chunk a while in each direction: the API server as Tidal would see it across
// a network and in front of an etcd that syncs to disk (`BENCH_API_LATENCY_MS`, bench/ready.ts). TLS passes through
// untouched; only loopback is dialled.
import net from 'node:net';

/** Listens on a free loopback port and relays to `targetPort`, each chunk `delayMs` late, in order, both ways. */
export async function startLatencyProxy(targetPort: number, delayMs: number): Promise<{ port: number; close: () => void }> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect(targetPort, '127.0.0.1');
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      s.setNoDelay(true);
      s.unref();
    }
    const relay = (from: net.Socket, to: net.Socket) => {
      // Timers of equal delay fire in the order they were set: the stream stays in order.
      from.on('data', (chunk) => setTimeout(() => to.writable && to.write(chunk), delayMs));
      from.on('end', () => setTimeout(() => to.end(), delayMs));
      from.on('error', () => to.destroy());
      from.on('close', () => setTimeout(() => to.destroy(), delayMs));
    };
    relay(client, upstream);
    relay(upstream, client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  // The benchmark's own work keeps the process alive; the proxy must not keep it from ending.
  server.unref();
  return {
    port: (server.address() as net.AddressInfo).port,
    close: () => {
      server.close();
      for (const s of sockets) s.destroy();
    },
  };
}
