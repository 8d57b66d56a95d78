// Metrics that outlive one watcher: a new leader term builds a fresh watcher and poker, and their counters carry on
// from the last term's (prom-client refuses to register a name twice).
import { Counter, type CounterConfiguration, type Registry } from 'prom-client';

export function counterIn<T extends string>(registry: Registry, config: Omit<CounterConfiguration<T>, 'registers'>): Counter<T> {
  const existing = registry.getSingleMetric(config.name);
  if (existing) return existing as Counter<T>;
  return new Counter<T>({ ...config, registers: [registry] });
}
