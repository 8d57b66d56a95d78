// The local stack's webhook address: a loopback TCP balancer in front of the controller replicas' webhook ports, as a
// Service would be in a cluster (the local stack has no Service network). It forwards TLS bytes untouched — each
// replica serves its own certificate — to replicas whose readiness endpoint says ready, round robin per connection,
// and tries the next one when a connect is refused. Run as a process by dev/stack.ts:
//   tsx dev/webhook-balancer.ts --listen 8443 --backend 8444=http://127.0.0.1:9464/readyz [--backend …]
import http from 'node:http';
import net from 'node:net';

export interface Backend {
  port: number;
  readyUrl: string;
}

export interface BalancerOptions {
  listenPort: number;
  backends: Backend[];
  /** How often readiness is polled. */
  healthMs?: number;
  log?: (line: string) => void;
}

function probe(url: string, timeoutMs: number): Promise<boolean> {
  return new Promise((resolve) => {
    const req = http.get(url, { timeout: timeoutMs }, (res) => {
      res.resume();
      resolve(res.statusCode === 200);
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(false));
  });
}

/** Starts the balancer; resolves with a function that stops it. */
export async function startWebhookBalancer(opts: BalancerOptions): Promise<{ close: () => Promise<void>; healthy: () => number[] }> {
  const log = opts.log ?? (() => {});
  const healthy = new Set<number>();
  let next = 0;
  let stopped = false;

  const check = async () => {
    await Promise.all(
      opts.backends.map(async (b) => {
        const ok = await probe(b.readyUrl, 1000);
        if (ok !== healthy.has(b.port)) log(`backend ${b.port} ${ok ? 'ready' : 'not ready'}`);
        if (ok) healthy.add(b.port);
        else healthy.delete(b.port);
      }),
    );
  };
  await check();
  const loop = async () => {
    while (!stopped) {
      await new Promise((r) => setTimeout(r, opts.healthMs ?? 200));
      await check();
    }
  };
  void loop();

  /** Ready replicas first (round robin), then the others: one that just became ready may not have been probed yet. */
  const order = (): number[] => {
    const ready = opts.backends.map((b) => b.port).filter((p) => healthy.has(p));
    const start = ready.length ? next++ % ready.length : 0;
    const rotated = [...ready.slice(start), ...ready.slice(0, start)];
    return [...rotated, ...opts.backends.map((b) => b.port).filter((p) => !healthy.has(p))];
  };

  const server = net.createServer((client) => {
    client.pause();
    const candidates = order();
    const attempt = (i: number) => {
      const port = candidates[i];
      if (port === undefined) {
        log('no replica accepted a connection');
        client.destroy();
        return;
      }
      const upstream = net.connect({ host: '127.0.0.1', port });
      const onConnectError = () => {
        upstream.destroy();
        attempt(i + 1);
      };
      upstream.once('error', onConnectError);
      upstream.once('connect', () => {
        upstream.off('error', onConnectError);
        upstream.setNoDelay(true);
        client.setNoDelay(true);
        client.pipe(upstream);
        upstream.pipe(client);
        client.resume();
        const end = () => {
          client.destroy();
          upstream.destroy();
        };
        upstream.on('error', end);
        client.on('error', end);
        upstream.on('close', end);
        client.on('close', end);
      });
    };
    attempt(0);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.listenPort, '127.0.0.1', () => resolve());
  });
  log(`listening on 127.0.0.1:${opts.listenPort}; backends ${opts.backends.map((b) => b.port).join(', ')}`);
  return {
    healthy: () => [...healthy],
    close: () => {
      stopped = true;
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

/** `--listen <port> --backend <port>=<readyz url> …` */
function parseArgs(argv: string[]): BalancerOptions {
  let listenPort = 0;
  const backends: Backend[] = [];
  for (let i = 0; i < argv.length; i += 2) {
    const [flag, value = ''] = [argv[i], argv[i + 1]];
    if (flag === '--listen') listenPort = Number(value);
    else if (flag === '--backend') {
      const [port, readyUrl] = value.split(/=(.*)/s);
      backends.push({ port: Number(port), readyUrl: readyUrl ?? '' });
    } else throw new Error(`unknown argument ${flag}`);
  }
  if (!listenPort || backends.length === 0) throw new Error('usage: webhook-balancer --listen <port> --backend <port>=<readyz url> ...');
  return { listenPort, backends };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const opts = parseArgs(process.argv.slice(2));
  const stamp = () => new Date().toISOString();
  startWebhookBalancer({ ...opts, log: (line) => console.error(`${stamp()} ${line}`) })
    .then((b) => {
      const stop = () => void b.close().then(() => process.exit(0));
      process.on('SIGTERM', stop);
      process.on('SIGINT', stop);
    })
    .catch((err: unknown) => {
      console.error(String(err));
      process.exit(1);
    });
}
