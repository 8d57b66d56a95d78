// resources/queue-observability.ts: the queue-proxy's OBSERVABILITY_CONFIG byte for byte as Knative v0.51's
// json.Marshal of its observability.Config writes it (the goldens are Go's output for the same values).
import { describe, expect, it } from 'vitest';
import {
  DEFAULT_OBSERVABILITY_CONFIG,
  defaultObservabilityConfig,
  observabilityConfigJson,
  parseObservabilityConfig,
} from '../../../resources/queue-observability.js';

const GO_DEFAULT =
  '{"tracing":{"protocol":"none"},"metrics":{"protocol":"none"},"runtime":{"profiling":"disabled","exportInterval":15000000000},"requestMetrics":{"protocol":"none"},"requestLogTemplate":"{\\"httpRequest\\": {\\"requestMethod\\": \\"{{.Request.Method}}\\", \\"requestUrl\\": \\"{{js .Request.RequestURI}}\\", \\"requestSize\\": \\"{{.Request.ContentLength}}\\", \\"status\\": {{.Response.Code}}, \\"responseSize\\": \\"{{.Response.Size}}\\", \\"userAgent\\": \\"{{js .Request.UserAgent}}\\", \\"remoteIp\\": \\"{{js .Request.RemoteAddr}}\\", \\"serverIp\\": \\"{{.Revision.PodIP}}\\", \\"referer\\": \\"{{js .Request.Referer}}\\", \\"latency\\": \\"{{.Response.Latency}}s\\", \\"protocol\\": \\"{{.Request.Proto}}\\"}, \\"traceId\\": \\"{{.TraceID}}\\"}"}';

const GO_SET =
  '{"tracing":{"protocol":"grpc","endpoint":"otel:4317","samplingRate":0.25},"metrics":{"protocol":"prometheus","exportInterval":90000000000},"runtime":{"profiling":"enabled","exportInterval":5000000000},"requestMetrics":{"protocol":"http/protobuf","endpoint":"http://c/\\u003cv1\\u003e\\u0026","exportInterval":250000000},"EnableVarLogCollection":true,"LoggingURLTemplate":"http://logs/?q=${REVISION_UID}\\u0026x","enableRequestLog":true,"requestLogTemplate":"{{.Request.Method}}","enableProbeRequestLog":true}';

describe('OBSERVABILITY_CONFIG', () => {
  it("renders the default config-observability with Knative's defaults, not empty objects", () => {
    expect(DEFAULT_OBSERVABILITY_CONFIG).toBe(GO_DEFAULT);
    const parsed = parseObservabilityConfig({ _example: '################################\n# long example block' });
    expect(parsed.ok && observabilityConfigJson(parsed.value)).toBe(GO_DEFAULT);
  });

  it('renders every key set: durations in nanoseconds, trimmed strings, HTML-safe escapes, Go field names', () => {
    const parsed = parseObservabilityConfig({
      'tracing-protocol': 'grpc',
      'tracing-endpoint': ' otel:4317 ',
      'tracing-sampling-rate': '0.25',
      'metrics-protocol': 'prometheus',
      'metrics-export-interval': '1m30s',
      'runtime-profiling': 'enabled',
      'runtime-export-interval': '5s',
      'request-metrics-protocol': 'http/protobuf',
      'request-metrics-endpoint': 'http://c/<v1>&',
      'request-metrics-export-interval': '250ms',
      'logging.enable-var-log-collection': 'true',
      'logging.revision-url-template': 'http://logs/?q=${REVISION_UID}&x',
      'logging.enable-request-log': 'true',
      'logging.request-log-template': '{{.Request.Method}}',
      'logging.enable-probe-request-log': 'true',
    });
    expect(parsed).toMatchObject({ ok: true });
    expect(parsed.ok && observabilityConfigJson(parsed.value)).toBe(GO_SET);
  });

  it('omits what Go omits when empty: a cleared request-log template and zero intervals', () => {
    const c = { ...defaultObservabilityConfig(), requestLogTemplate: '', runtime: { profiling: 'disabled', exportIntervalNs: 0n } };
    expect(observabilityConfigJson(c)).toBe(
      '{"tracing":{"protocol":"none"},"metrics":{"protocol":"none"},"runtime":{"profiling":"disabled"},"requestMetrics":{"protocol":"none"}}',
    );
  });

  it.each([
    [{ 'metrics-protocol': 'grpc' }, 'endpoint should be set when protocol is "grpc"'],
    [{ 'tracing-protocol': 'zipkin' }, 'unsupported protocol "zipkin"'],
    [{ 'tracing-sampling-rate': '1.5' }, 'sampling rate 1.500000 should be less than or equal to one'],
    [{ 'runtime-export-interval': '5 minutes' }, 'failed to parse "runtime-export-interval": "5 minutes" is not a duration'],
    [{ 'logging.enable-request-log': 'yes' }, 'failed to parse "logging.enable-request-log": "yes" is not a boolean'],
    [
      { 'logging.enable-request-log': 'true', 'logging.request-log-template': '' },
      '"logging.enable-request-log" was set to true, but no "logging.request-log-template" was specified',
    ],
  ])('refuses %j: %s', (data, error) => {
    expect(parseObservabilityConfig(data)).toEqual({ ok: false, error });
  });
});
