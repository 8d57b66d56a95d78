// The process's small HTTP endpoint: Prometheus metrics (Tidal's, then the Temporal SDK's own, fetched from the
// Core's exporter on loopback so that one scrape gets both; `?name=` picks some of Tidal's), liveness and readiness
// (workers/health.ts), and /version (workers/version.ts).
import http from 'node:http';
import type { Registry } from 'prom-client';
import { buildInfo } from './version.js';

export interface HttpProbes {
  /** Empty when ready; else the reasons, one a line in the 503's body. */
  problems(): string[];
  live(): boolean;
}

export function serveHttp(port: number, registry: Registry, probes: HttpProbes, extraMetricsUrl?: string): http.Server {
  const server = http.createServer((req, res) => {
    void (async () => {
      const [url, search] = (req.url ?? '').split('?');
      if (url === '/metrics') {
        res.setHeader('Content-Type', registry.contentType);
        // `?name=<metric>` (repeatable): only those of Tidal's own metrics. A benchmark polling three counters every
        // 200 ms would otherwise make the process render every metric and fetch the SDK's, and count that as Tidal's CPU.
        const names = new URLSearchParams(search ?? '').getAll('name');
        if (names.length > 0) {
          const picked = names.filter((n) => registry.getSingleMetric(n) !== undefined);
          res.end((await Promise.all(picked.map((n) => registry.getSingleMetricAsString(n)))).join('\n'));
          return;
        }
        const own = await registry.metrics();
        res.end(extraMetricsUrl ? `${own}\n${await fetchText(extraMetricsUrl)}` : own);
      } else if (url === '/version') {
        res.setHeader('Content-Type', 'application/json');
        res.end(`${JSON.stringify({ ...buildInfo, node: process.version })}\n`);
      } else if (url === '/healthz') {
        const ok = probes.live();
        res.statusCode = ok ? 200 : 500;
        res.end(ok ? 'ok' : 'event loop stalled');
      } else if (url === '/readyz') {
        const problems = probes.problems();
        res.statusCode = problems.length === 0 ? 200 : 503;
        res.end(problems.length === 0 ? 'ok' : `not ready\n${problems.join('\n')}\n`);
      } else {
        res.statusCode = 404;
        res.end();
      }
    })();
  });
  server.listen(port, '0.0.0.0');
  return server;
}

/** The Temporal Core's Prometheus text; a comment when it cannot be read, so Tidal's own metrics are still served. */
async function fetchText(url: string): Promise<string> {
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(2000) });
    return await res.text();
  } catch (err) {
    return `# temporal sdk metrics unavailable: ${String(err).replace(/\n/g, ' ')}\n`;
  }
}
