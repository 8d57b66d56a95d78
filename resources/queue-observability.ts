// The queue-proxy's `OBSERVABILITY_CONFIG`: config-observability as Knative v0.51 reads it (api/config/observability.ts,
// the one parser of the map) and json.Marshal writes it (pkg/reconciler/revision/resources/queue.go): the defaults
// filled in, Go's field order and omitempty, durations as integer nanoseconds, strings HTML-safe.
import {
  DEFAULT_REQUEST_LOG_TEMPLATE,
  defaultObservabilityConfig,
  parseObservabilityConfig as parseConfig,
  type ObservabilityConfig,
} from '../api/config/observability.js';
import { goQuote } from './rollout-json.js';

export { DEFAULT_REQUEST_LOG_TEMPLATE, defaultObservabilityConfig, type ObservabilityConfig };

interface ExportConfig {
  protocol: string;
  endpoint: string;
}

export type ObservabilityParse = { ok: true; value: ObservabilityConfig } | { ok: false; error: string };

/** config-observability's data parsed by api/config/observability.ts; a refusal is upstream's message alone. */
export function parseObservabilityConfig(data: Record<string, string>): ObservabilityParse {
  const parsed = parseConfig(data);
  return parsed.ok ? parsed : { ok: false, error: parsed.reason ?? parsed.error };
}

/** `"key":value` pairs of the set members, in order (Go's omitempty). */
function object(fields: [string, string | undefined][]): string {
  return `{${fields
    .filter((f): f is [string, string] => f[1] !== undefined)
    .map(([k, v]) => `"${k}":${v}`)
    .join(',')}}`;
}
const text = (s: string): string | undefined => (s === '' ? undefined : goQuote(s));
const nanos = (n: bigint): string | undefined => (n === 0n ? undefined : n.toString());
const flag = (b: boolean): string | undefined => (b ? 'true' : undefined);

function exportJson(c: ExportConfig & { exportIntervalNs: bigint }): string {
  return object([
    ['protocol', text(c.protocol)],
    ['endpoint', text(c.endpoint)],
    ['exportInterval', nanos(c.exportIntervalNs)],
  ]);
}

/** json.Marshal of Knative's observability.Config, byte for byte. */
export function observabilityConfigJson(c: ObservabilityConfig): string {
  return object([
    [
      'tracing',
      object([
        ['protocol', text(c.tracing.protocol)],
        ['endpoint', text(c.tracing.endpoint)],
        ['samplingRate', c.tracing.samplingRate === 0 ? undefined : String(c.tracing.samplingRate)],
      ]),
    ],
    ['metrics', exportJson(c.metrics)],
    [
      'runtime',
      object([
        ['profiling', text(c.runtime.profiling)],
        ['exportInterval', nanos(c.runtime.exportIntervalNs)],
      ]),
    ],
    ['requestMetrics', exportJson(c.requestMetrics)],
    ['EnableVarLogCollection', flag(c.enableVarLogCollection)],
    ['LoggingURLTemplate', text(c.loggingURLTemplate)],
    ['enableRequestLog', flag(c.enableRequestLog)],
    ['requestLogTemplate', text(c.requestLogTemplate)],
    ['enableProbeRequestLog', flag(c.enableProbeRequestLog)],
  ]);
}

/** `OBSERVABILITY_CONFIG` for the default config-observability. */
export const DEFAULT_OBSERVABILITY_CONFIG = observabilityConfigJson(defaultObservabilityConfig());
