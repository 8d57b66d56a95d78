// The controller's registry keeps Node's default metrics, event-loop lag included, but samples the lag every 100 ms
// rather than prom-client's 10: that timer alone woke an idle controller 100 times a second.
import { createRequire } from 'node:module';
import type * as PerfHooks from 'node:perf_hooks';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { EventLoopLagResolutionMs, newMetricsRegistry } from '../../../workers/metrics.js';

// prom-client reaches the histogram through the CommonJS module object, so that is where the spy goes.
const perfHooks = createRequire(import.meta.url)('node:perf_hooks') as typeof PerfHooks;

afterEach(() => vi.restoreAllMocks());

describe('newMetricsRegistry', () => {
  it('samples the event-loop lag every 100 ms, and still exports it', async () => {
    const monitor = vi.spyOn(perfHooks, 'monitorEventLoopDelay');
    const registry = newMetricsRegistry();
    expect(EventLoopLagResolutionMs).toBe(100);
    expect(monitor).toHaveBeenCalledWith({ resolution: EventLoopLagResolutionMs });
    const text = await registry.metrics();
    expect(text).toMatch(/^nodejs_eventloop_lag_p99_seconds /m);
    expect(text).toMatch(/^process_cpu_seconds_total /m);
  });
});
