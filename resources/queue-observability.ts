// The queue-proxy's `OBSERVABILITY_CONFIG`: config-observability as Knative v0.51 reads it
// (knative.dev/serving/pkg/observability NewFromMap over knative.dev/pkg/observability's tracing, metrics and
// runtime configs) and json.Marshal writes it (pkg/reconciler/revision/resources/queue.go): the defaults filled in,
// Go's field order and omitempty, durations as integer nanoseconds, strings HTML-safe.
import { parseGoBool, parseGoDuration, parseGoFloat } from '../api/config/deployment.js';
import { goQuote } from './rollout-json.js';

/** Knative's DefaultRequestLogTemplate. */
export const DEFAULT_REQUEST_LOG_TEMPLATE =
  '{"httpRequest": {"requestMethod": "{{.Request.Method}}", "requestUrl": "{{js .Request.RequestURI}}", "requestSize": "{{.Request.ContentLength}}", "status": {{.Response.Code}}, "responseSize": "{{.Response.Size}}", "userAgent": "{{js .Request.UserAgent}}", "remoteIp": "{{js .Request.RemoteAddr}}", "serverIp": "{{.Revision.PodIP}}", "referer": "{{js .Request.Referer}}", "latency": "{{.Response.Latency}}s", "protocol": "{{.Request.Proto}}"}, "traceId": "{{.TraceID}}"}';

interface ExportConfig {
  protocol: string;
  endpoint: string;
}

export interface ObservabilityConfig {
  tracing: ExportConfig & { samplingRate: number };
  metrics: ExportConfig & { exportIntervalNs: bigint };
  runtime: { profiling: string; exportIntervalNs: bigint };
  requestMetrics: ExportConfig & { exportIntervalNs: bigint };
  enableVarLogCollection: boolean;
  loggingURLTemplate: string;
  enableRequestLog: boolean;
  requestLogTemplate: string;
  enableProbeRequestLog: boolean;
}

export type ObservabilityParse = { ok: true; value: ObservabilityConfig } | { ok: false; error: string };

const SECOND_NS = 1_000_000_000n;

/** Knative's DefaultConfig: no tracing or metrics export, profiling disabled, runtime metrics every 15 s. */
export function defaultObservabilityConfig(): ObservabilityConfig {
  return {
    tracing: { protocol: 'none', endpoint: '', samplingRate: 0 },
    metrics: { protocol: 'none', endpoint: '', exportIntervalNs: 0n },
    runtime: { profiling: 'disabled', exportIntervalNs: 15n * SECOND_NS },
    requestMetrics: { protocol: 'none', endpoint: '', exportIntervalNs: 0n },
    enableVarLogCollection: false,
    loggingURLTemplate: '',
    enableRequestLog: false,
    requestLogTemplate: DEFAULT_REQUEST_LOG_TEMPLATE,
    enableProbeRequestLog: false,
  };
}

class ParseError extends Error {}

/** Knative's configmap.As: the value of a present key parsed, else the default; a bad value names its key. */
function as<T>(data: Record<string, string>, key: string, fallback: T, parse: (raw: string) => T | undefined, what: string): T {
  const raw = data[key];
  if (raw === undefined) return fallback;
  const v = parse(raw);
  if (v === undefined) throw new ParseError(`failed to parse "${key}": ${JSON.stringify(raw)} is not ${what}`);
  return v;
}

const str = (raw: string): string => raw.trim();
const duration = (raw: string): bigint | undefined => parseGoDuration(raw);
const DURATION = 'a duration';

function validateExport(kind: 'metrics' | 'tracing', c: ExportConfig, protocols: string[]): void {
  if (!protocols.includes(c.protocol)) throw new ParseError(`unsupported protocol ${JSON.stringify(c.protocol)}`);
  if ((c.protocol === 'grpc' || c.protocol === 'http/protobuf') && c.endpoint === '') {
    throw new ParseError(
      kind === 'metrics' ? `endpoint should be set when protocol is "${c.protocol}"` : `endpoint should be set for protocol "${c.protocol}"`,
    );
  }
  if (c.protocol === 'none' && c.endpoint !== '') {
    throw new ParseError(
      kind === 'metrics' ? 'endpoint should not be set when protocol is "none"' : "endpoint should not be set when protocol is 'none'",
    );
  }
}

function metricsFrom(data: Record<string, string>, prefix: string): ObservabilityConfig['metrics'] {
  const c = {
    protocol: as(data, `${prefix}metrics-protocol`, 'none', str, 'a string'),
    endpoint: as(data, `${prefix}metrics-endpoint`, '', str, 'a string'),
    exportIntervalNs: as(data, `${prefix}metrics-export-interval`, 0n, duration, DURATION),
  };
  validateExport('metrics', c, ['grpc', 'http/protobuf', 'prometheus', 'none']);
  if (c.exportIntervalNs < 0n)
    throw new ParseError(`export interval "${data[`${prefix}metrics-export-interval`] ?? ''}" should be greater than zero`);
  return c;
}

/** config-observability's data as Knative's NewFromMap reads it, with its validation messages. */
export function parseObservabilityConfig(data: Record<string, string>): ObservabilityParse {
  try {
    const d = defaultObservabilityConfig();
    const tracing = {
      protocol: as(data, 'tracing-protocol', d.tracing.protocol, str, 'a string'),
      endpoint: as(data, 'tracing-endpoint', d.tracing.endpoint, str, 'a string'),
      samplingRate: as(data, 'tracing-sampling-rate', 0, parseGoFloat, 'a number'),
    };
    validateExport('tracing', tracing, ['grpc', 'http/protobuf', 'none', 'stdout']);
    const rate = tracing.samplingRate;
    if (!Number.isFinite(rate)) throw new ParseError(`sampling rate ${data['tracing-sampling-rate'] ?? ''} is not a finite number`);
    if (rate < 0) throw new ParseError(`sampling rate ${rate.toFixed(6)} should be greater or equal to zero`);
    if (rate > 1) throw new ParseError(`sampling rate ${rate.toFixed(6)} should be less than or equal to one`);
    const runtime = {
      profiling: as(data, 'runtime-profiling', d.runtime.profiling, str, 'a string'),
      exportIntervalNs: as(data, 'runtime-export-interval', d.runtime.exportIntervalNs, duration, DURATION),
    };
    if (runtime.profiling !== 'enabled' && runtime.profiling !== 'disabled') {
      throw new ParseError(`unsupported profile setting ${JSON.stringify(runtime.profiling)}`);
    }
    if (runtime.exportIntervalNs < 0n) throw new ParseError(`export interval "${data['runtime-export-interval'] ?? ''}" should be greater than zero`);
    const value: ObservabilityConfig = {
      tracing,
      metrics: metricsFrom(data, ''),
      runtime,
      requestMetrics: metricsFrom(data, 'request-'),
      enableVarLogCollection: as(data, 'logging.enable-var-log-collection', false, parseGoBool, 'a boolean'),
      loggingURLTemplate: as(data, 'logging.revision-url-template', d.loggingURLTemplate, str, 'a string'),
      requestLogTemplate: as(data, 'logging.request-log-template', d.requestLogTemplate, str, 'a string'),
      enableRequestLog: as(data, 'logging.enable-request-log', false, parseGoBool, 'a boolean'),
      enableProbeRequestLog: as(data, 'logging.enable-probe-request-log', false, parseGoBool, 'a boolean'),
    };
    if (value.requestLogTemplate === '' && value.enableRequestLog) {
      throw new ParseError('"logging.enable-request-log" was set to true, but no "logging.request-log-template" was specified');
    }
    return { ok: true, value };
  } catch (err) {
    if (err instanceof ParseError) return { ok: false, error: err.message };
    throw err;
  }
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
