// config-observability as Knative v0.51 reads it (knative.dev/serving/pkg/observability NewFromMap over
// knative.dev/pkg/observability's tracing, metrics and runtime configs): every key, upstream's defaults, and the
// rules and messages it refuses a map by. The one parser of the map: the config webhook and the controller's config
// store use it, `logging.revision-url-template` gives each Revision its `status.logUrl`, and
// resources/queue-observability.ts renders the queue-proxy's OBSERVABILITY_CONFIG from it. Pure.
import { ConfigKeyError, parseGoBool, parseGoDuration, parseGoFloat, runParser } from './deployment.js';
import { lexGoTemplate } from './go-template.js';
import type { Parsed } from './types.js';

export const ObservabilityConfigName = 'config-observability';

/** The `${REVISION_UID}` placeholder of the log URL template. */
export const RevisionUidPlaceholder = '${REVISION_UID}';

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
  /** `logging.revision-url-template` ('' = no `status.logUrl`). */
  loggingURLTemplate: string;
  enableRequestLog: boolean;
  requestLogTemplate: string;
  enableProbeRequestLog: boolean;
  /**
   * Tidal's `temporal-ui-url`: the Temporal UI's base URL, for the link to each object's workflow in its
   * `status.annotations` and Warning Events (api/story-link.ts); '' = the workflow id alone.
   */
  temporalUiUrl: string;
}

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
    temporalUiUrl: '',
  };
}

/** The log URL of a Revision: the template with `${REVISION_UID}` replaced by its UID (every occurrence). */
export function revisionLogUrl(template: string, uid: string): string {
  return template.split(RevisionUidPlaceholder).join(uid);
}

/** Knative's configmap.As: the value of a present key parsed, else the default; a bad value names its key. */
function as<T>(data: Readonly<Record<string, string>>, key: string, fallback: T, parse: (raw: string) => T | undefined, what: string): T {
  const raw = data[key];
  if (raw === undefined) return fallback;
  const v = parse(raw);
  if (v === undefined) throw new ConfigKeyError(key, `failed to parse "${key}": ${JSON.stringify(raw)} is not ${what}`);
  return v;
}

const str = (raw: string): string => raw.trim();
/** An http(s) URL without its trailing slashes, or '' (empty); undefined for anything else. */
const baseUrl = (raw: string): string | undefined => {
  const v = raw.trim().replace(/\/+$/, '');
  return v === '' || /^https?:\/\/[^\s/?#]+(\/[^\s?#]*)?$/.test(v) ? v : undefined;
};
const duration = (raw: string): bigint | undefined => parseGoDuration(raw);
const DURATION = 'a duration';

/** A protocol/endpoint pair; `prefix` names the keys (`metrics-`, `request-metrics-`, `tracing-`) for errors. */
function validateExport(kind: 'metrics' | 'tracing', prefix: string, c: ExportConfig, protocols: string[]): void {
  const protocolKey = `${prefix}protocol`;
  if (!protocols.includes(c.protocol)) throw new ConfigKeyError(protocolKey, `unsupported protocol ${JSON.stringify(c.protocol)}`);
  if ((c.protocol === 'grpc' || c.protocol === 'http/protobuf') && c.endpoint === '') {
    throw new ConfigKeyError(
      protocolKey,
      kind === 'metrics' ? `endpoint should be set when protocol is "${c.protocol}"` : `endpoint should be set for protocol "${c.protocol}"`,
    );
  }
  // Tracing's stdout exporter takes no endpoint either (upstream's message names 'none' for both).
  if ((c.protocol === 'none' || (kind === 'tracing' && c.protocol === 'stdout')) && c.endpoint !== '') {
    throw new ConfigKeyError(
      `${prefix}endpoint`,
      kind === 'metrics' ? 'endpoint should not be set when protocol is "none"' : "endpoint should not be set when protocol is 'none'",
    );
  }
}

function metricsFrom(data: Readonly<Record<string, string>>, prefix: string): ObservabilityConfig['metrics'] {
  const c = {
    protocol: as(data, `${prefix}metrics-protocol`, 'none', str, 'a string'),
    endpoint: as(data, `${prefix}metrics-endpoint`, '', str, 'a string'),
    exportIntervalNs: as(data, `${prefix}metrics-export-interval`, 0n, duration, DURATION),
  };
  validateExport('metrics', `${prefix}metrics-`, c, ['grpc', 'http/protobuf', 'prometheus', 'none']);
  if (c.exportIntervalNs < 0n) {
    const key = `${prefix}metrics-export-interval`;
    throw new ConfigKeyError(key, `export interval "${data[key] ?? ''}" should be greater than zero`);
  }
  return c;
}

/** config-observability's data as Knative's NewFromMap reads it, with its validation messages; errors name the key. */
export function parseObservabilityConfig(data: Readonly<Record<string, string>>): Parsed<ObservabilityConfig> {
  return runParser(ObservabilityConfigName, () => {
    const d = defaultObservabilityConfig();
    const tracing = {
      protocol: as(data, 'tracing-protocol', d.tracing.protocol, str, 'a string'),
      endpoint: as(data, 'tracing-endpoint', d.tracing.endpoint, str, 'a string'),
      samplingRate: as(data, 'tracing-sampling-rate', 0, parseGoFloat, 'a number'),
    };
    validateExport('tracing', 'tracing-', tracing, ['grpc', 'http/protobuf', 'none', 'stdout']);
    const rate = tracing.samplingRate;
    const rateKey = 'tracing-sampling-rate';
    if (!Number.isFinite(rate)) throw new ConfigKeyError(rateKey, `sampling rate ${data[rateKey] ?? ''} is not a finite number`);
    if (rate < 0) throw new ConfigKeyError(rateKey, `sampling rate ${rate.toFixed(6)} should be greater or equal to zero`);
    if (rate > 1) throw new ConfigKeyError(rateKey, `sampling rate ${rate.toFixed(6)} should be less than or equal to one`);
    const runtime = {
      profiling: as(data, 'runtime-profiling', d.runtime.profiling, str, 'a string'),
      exportIntervalNs: as(data, 'runtime-export-interval', d.runtime.exportIntervalNs, duration, DURATION),
    };
    if (runtime.profiling !== 'enabled' && runtime.profiling !== 'disabled') {
      throw new ConfigKeyError('runtime-profiling', `unsupported profile setting ${JSON.stringify(runtime.profiling)}`);
    }
    if (runtime.exportIntervalNs < 0n) {
      throw new ConfigKeyError('runtime-export-interval', `export interval "${data['runtime-export-interval'] ?? ''}" should be greater than zero`);
    }
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
      temporalUiUrl: as(data, 'temporal-ui-url', d.temporalUiUrl, baseUrl, 'an http(s) URL'),
    };
    if (value.requestLogTemplate === '' && value.enableRequestLog) {
      throw new ConfigKeyError(
        'logging.enable-request-log',
        '"logging.enable-request-log" was set to true, but no "logging.request-log-template" was specified',
      );
    }
    // Validate parses the template with text/template.
    const lexed = value.requestLogTemplate === '' ? [] : lexGoTemplate(value.requestLogTemplate);
    if (typeof lexed === 'string') throw new ConfigKeyError('logging.request-log-template', `template: requestLog: ${lexed}`);
    return value;
  });
}
