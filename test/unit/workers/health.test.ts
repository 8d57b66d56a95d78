// Readiness tells the truth: a dependency that stops answering (Temporal, the API server) makes /readyz 503 with
// the reason, and it comes back when the dependency does; a condition (webhook, worker) counts the same way.
import type { Logger } from 'pino';
import { Registry } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import { Health } from '../../../workers/health.js';
import { serveHttp } from '../../../workers/http.js';
import type http from 'node:http';

const silent = { info: () => {}, warn: () => {}, debug: () => {}, error: () => {} } as unknown as Logger;
const until = async (what: string, ok: () => boolean | Promise<boolean>, ms = 5000) => {
  const end = Date.now() + ms;
  while (!(await ok())) {
    if (Date.now() > end) throw new Error(`timed out: ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
};

let cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups) c();
  cleanups = [];
});

function harness() {
  const state = { temporal: true, kube: 'ok' as 'ok' | 'hang' | 'fail', webhook: true };
  const registry = new Registry();
  const health = new Health(
    [
      { name: 'temporal', probe: () => (state.temporal ? Promise.resolve() : Promise.reject(new Error('14 UNAVAILABLE: connection refused'))) },
      {
        name: 'kubernetes',
        probe: () =>
          state.kube === 'ok' ? Promise.resolve() : state.kube === 'hang' ? new Promise(() => {}) : Promise.reject(new Error('ECONNREFUSED')),
      },
    ],
    { webhook: () => state.webhook },
    { intervalMs: 50, timeoutMs: 100, wedgedMs: 30_000 },
    silent,
    registry,
  );
  const server: http.Server = serveHttp(0, registry, health);
  cleanups.push(
    () => health.close(),
    () => server.close(),
  );
  const url = async (path: string) => {
    await until('listening', () => server.listening);
    const { port } = server.address() as { port: number };
    const res = await fetch(`http://127.0.0.1:${port}${path}`);
    return { status: res.status, body: await res.text() };
  };
  return { state, health, url, registry };
}

describe('readiness and liveness', () => {
  it('is ready when every dependency answers', async () => {
    const h = harness();
    await h.health.ready;
    expect(await h.url('/readyz')).toEqual({ status: 200, body: 'ok' });
    expect((await h.url('/healthz')).status).toBe(200);
  });

  it('turns not ready while Temporal is unreachable, with the reason, and ready again when it answers', async () => {
    const h = harness();
    await h.health.ready;
    h.state.temporal = false;
    await until('503', async () => (await h.url('/readyz')).status === 503);
    const r = await h.url('/readyz');
    expect(r.body).toContain('temporal: 14 UNAVAILABLE: connection refused');
    expect(await h.registry.getSingleMetricAsString('tidal_dependency_up')).toContain('tidal_dependency_up{dependency="temporal"} 0');
    // Liveness is not readiness: an unreachable dependency must not get the process restarted.
    expect((await h.url('/healthz')).status).toBe(200);
    h.state.temporal = true;
    await until('200 again', async () => (await h.url('/readyz')).status === 200);
  });

  it('a check that hangs counts as unreachable after its timeout', async () => {
    const h = harness();
    await h.health.ready;
    h.state.kube = 'hang';
    await until('503', async () => (await h.url('/readyz')).status === 503);
    expect((await h.url('/readyz')).body).toContain('kubernetes: no answer within 100 ms');
  });

  it('a webhook without its certificate is not ready', async () => {
    const h = harness();
    await h.health.ready;
    h.state.webhook = false;
    const r = await h.url('/readyz');
    expect(r.status).toBe(503);
    expect(r.body).toContain('webhook: not ready');
  });
});

describe('/metrics', () => {
  it('serves every metric, or with ?name= only those named (unknown names skipped)', async () => {
    const h = harness();
    await h.health.ready;
    const { Counter } = await import('prom-client');
    new Counter({ name: 'tidal_picked_total', help: 'picked', registers: [h.registry] }).inc(3);
    new Counter({ name: 'tidal_other_total', help: 'other', registers: [h.registry] }).inc();
    const all = await h.url('/metrics');
    expect(all.body).toContain('tidal_picked_total 3');
    expect(all.body).toContain('tidal_other_total 1');
    expect(all.body).toContain('tidal_dependency_up');
    const some = await h.url('/metrics?name=tidal_picked_total&name=tidal_missing_total');
    expect(some.status).toBe(200);
    expect(some.body).toContain('tidal_picked_total 3');
    expect(some.body).not.toContain('tidal_other_total');
    expect(some.body).not.toContain('tidal_dependency_up');
  });
});
