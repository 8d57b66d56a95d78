// The controller's Prometheus registry, with Node's default process metrics. Their event-loop lag histogram samples
// on a libuv timer: at prom-client's default resolution (10 ms) that timer wakes an idle controller 100 times a
// second, a large share of its idle CPU (docs/benchmarks.md).
// Sampled every 100 ms, the lag percentiles of a 15–30 s scrape still rest on 150–300 samples. As before, each sample
// is the time between two ticks of that timer, so `nodejs_eventloop_lag_{min,mean,p50,p90,p99,max}_seconds` read the
// lag plus 0.1 s (it was plus 0.01); `nodejs_eventloop_lag_seconds`, measured at each scrape, is the lag itself.
import { Gauge, Registry, collectDefaultMetrics } from 'prom-client';
import { buildInfo } from './version.js';

/** How often the event-loop lag histogram samples (ms). */
export const EventLoopLagResolutionMs = 100;

export function newMetricsRegistry(): Registry {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, eventLoopMonitoringPrecision: EventLoopLagResolutionMs });
  // The usual build-info gauge: always 1, its labels say what runs.
  new Gauge({
    name: 'tidal_build_info',
    help: 'The running version of Tidal',
    labelNames: ['version', 'commit', 'node_version'],
    registers: [registry],
  }).set({ version: buildInfo.version, commit: buildInfo.commit, node_version: process.version }, 1);
  return registry;
}
