// config-observability (serving's pkg/observability/config.go over knative/pkg's observability config): the keys
// upstream reads and the rules it refuses a map by. Tidal acts on `logging.revision-url-template` (each Revision's
// `status.logUrl`); the others are checked as upstream checks them so an edit Knative refuses is refused here too.
// Validation errors name the key that caused them. Pure.
import { ConfigKeyError, ConfigReader, runParser } from './deployment.js';
import { lexGoTemplate } from './go-template.js';
import type { Parsed } from './types.js';

export const ObservabilityConfigName = 'config-observability';

export const ObservabilityKeys = {
  loggingUrlTemplate: 'logging.revision-url-template',
  enableVarLogCollection: 'logging.enable-var-log-collection',
  requestLogTemplate: 'logging.request-log-template',
  enableRequestLog: 'logging.enable-request-log',
  enableProbeRequestLog: 'logging.enable-probe-request-log',
} as const;

/** The `${REVISION_UID}` placeholder of the log URL template. */
export const RevisionUidPlaceholder = '${REVISION_UID}';

export interface ObservabilityConfig {
  /** `logging.revision-url-template` ('' = no `status.logUrl`). */
  loggingUrlTemplate: string;
  enableVarLogCollection: boolean;
  requestLogTemplate: string;
  enableRequestLog: boolean;
  enableProbeRequestLog: boolean;
}

/** serving's DefaultRequestLogTemplate. */
export const DefaultRequestLogTemplate =
  '{"httpRequest": {"requestMethod": "{{.Request.Method}}", "requestUrl": "{{js .Request.RequestURI}}", "requestSize": "{{.Request.ContentLength}}", ' +
  '"status": {{.Response.Code}}, "responseSize": "{{.Response.Size}}", "userAgent": "{{js .Request.UserAgent}}", "remoteIp": "{{js .Request.RemoteAddr}}", ' +
  '"serverIp": "{{.Revision.PodIP}}", "referer": "{{js .Request.Referer}}", "latency": "{{.Response.Latency}}s", "protocol": "{{.Request.Proto}}"}, ' +
  '"traceId": "{{.TraceID}}"}';

export function defaultObservabilityConfig(): ObservabilityConfig {
  return {
    loggingUrlTemplate: '',
    enableVarLogCollection: false,
    requestLogTemplate: DefaultRequestLogTemplate,
    enableRequestLog: false,
    enableProbeRequestLog: false,
  };
}

/** The log URL of a Revision: the template with `${REVISION_UID}` replaced by its UID (every occurrence). */
export function revisionLogUrl(template: string, uid: string): string {
  return template.split(RevisionUidPlaceholder).join(uid);
}

/** A protocol/endpoint pair of knative/pkg's metrics or tracing config (`<prefix>metrics-protocol`, …). */
function checkExporter(r: ConfigReader, kind: 'metrics' | 'tracing', prefix: string): void {
  const protocolKey = `${prefix}${kind}-protocol`;
  const protocol = r.string([protocolKey], 'none');
  const endpoint = r.string([`${prefix}${kind}-endpoint`], '');
  const exporters = kind === 'metrics' ? ['grpc', 'http/protobuf', 'prometheus', 'none'] : ['grpc', 'http/protobuf', 'none', 'stdout'];
  if (!exporters.includes(protocol)) throw new ConfigKeyError(protocolKey, `unsupported protocol ${JSON.stringify(protocol)}`);
  if ((protocol === 'grpc' || protocol === 'http/protobuf') && endpoint === '') {
    const msg =
      kind === 'metrics'
        ? `endpoint should be set when protocol is ${JSON.stringify(protocol)}`
        : `endpoint should be set for protocol ${JSON.stringify(protocol)}`;
    throw new ConfigKeyError(protocolKey, msg);
  }
  if ((protocol === 'none' || (kind === 'tracing' && protocol === 'stdout')) && endpoint !== '') {
    const msg =
      kind === 'metrics'
        ? `endpoint should not be set when protocol is ${JSON.stringify(protocol)}`
        : "endpoint should not be set when protocol is 'none'";
    throw new ConfigKeyError(`${prefix}${kind}-endpoint`, msg);
  }
  if (kind === 'metrics') {
    const interval = r.duration([`${prefix}metrics-export-interval`], 0n);
    if (interval.nanos < 0n) throw new ConfigKeyError(interval.key, `export interval ${JSON.stringify(interval.raw)} should be greater than zero`);
  } else {
    const rate = r.float([`${prefix}tracing-sampling-rate`], 0);
    const shown = rate.toFixed(6);
    if (rate < 0) throw new ConfigKeyError(`${prefix}tracing-sampling-rate`, `sampling rate ${shown} should be greater or equal to zero`);
    if (rate > 1) throw new ConfigKeyError(`${prefix}tracing-sampling-rate`, `sampling rate ${shown} should be less than or equal to one`);
  }
}

/** Parses config-observability's data with upstream's rules (the config webhook's check and the controller's). */
export function parseObservabilityConfig(data: Readonly<Record<string, string>>): Parsed<ObservabilityConfig> {
  return runParser(ObservabilityConfigName, () => {
    const r = new ConfigReader(data);
    const d = defaultObservabilityConfig();
    const K = ObservabilityKeys;
    checkExporter(r, 'tracing', '');
    checkExporter(r, 'metrics', '');
    const profiling = r.string(['runtime-profiling'], 'disabled');
    if (profiling !== 'enabled' && profiling !== 'disabled')
      throw new ConfigKeyError('runtime-profiling', `unsupported profile setting ${JSON.stringify(profiling)}`);
    const runtimeInterval = r.duration(['runtime-export-interval'], 15_000_000_000n);
    if (runtimeInterval.nanos < 0n) {
      throw new ConfigKeyError('runtime-export-interval', `export interval ${JSON.stringify(runtimeInterval.raw)} should be greater than zero`);
    }
    checkExporter(r, 'metrics', 'request-');
    const cfg: ObservabilityConfig = {
      loggingUrlTemplate: r.string([K.loggingUrlTemplate], d.loggingUrlTemplate),
      enableVarLogCollection: r.bool([K.enableVarLogCollection], d.enableVarLogCollection),
      requestLogTemplate: r.string([K.requestLogTemplate], d.requestLogTemplate),
      enableRequestLog: r.bool([K.enableRequestLog], d.enableRequestLog),
      enableProbeRequestLog: r.bool([K.enableProbeRequestLog], d.enableProbeRequestLog),
    };
    if (cfg.requestLogTemplate === '' && cfg.enableRequestLog) {
      throw new ConfigKeyError(K.enableRequestLog, `"${K.enableRequestLog}" was set to true, but no "${K.requestLogTemplate}" was specified`);
    }
    if (cfg.requestLogTemplate !== '') {
      const lexed = lexGoTemplate(cfg.requestLogTemplate);
      if (typeof lexed === 'string') throw new ConfigKeyError(K.requestLogTemplate, `template: requestLog: ${lexed}`);
    }
    return cfg;
  });
}
