// The process's small HTTP endpoint: Prometheus metrics, liveness and readiness.
import http from 'node:http';
import type { Registry } from 'prom-client';

export function serveHttp(port: number, registry: Registry, ready: () => boolean): http.Server {
  const server = http.createServer((req, res) => {
    void (async () => {
      if (req.url === '/metrics') {
        res.setHeader('Content-Type', registry.contentType);
        res.end(await registry.metrics());
      } else if (req.url === '/healthz') {
        res.end('ok');
      } else if (req.url === '/readyz') {
        const ok = ready();
        res.statusCode = ok ? 200 : 503;
        res.end(ok ? 'ok' : 'not ready');
      } else {
        res.statusCode = 404;
        res.end();
      }
    })();
  });
  server.listen(port, '0.0.0.0');
  return server;
}
