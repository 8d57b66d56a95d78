// The controller's Prometheus registry, with Node's default process metrics. Their event-loop lag histogram samples
// on a libuv timer: at prom-client's default resolution (10 ms) that timer wakes an idle controller 100 times a
// second, about a third of its idle CPU (bench:ready's idle rate, 25 ms a second). Sampled every 100 ms, the lag
// percentiles of a 15–30 s scrape still rest on 150–300 samples.
import { Registry, collectDefaultMetrics } from 'prom-client';

/** How often the event-loop lag histogram samples (ms). */
export const EventLoopLagResolutionMs = 100;

export function newMetricsRegistry(): Registry {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, eventLoopMonitoringPrecision: EventLoopLagResolutionMs });
  return registry;
}
