// config-observability: upstream's keys and rules (the config webhook refuses what Knative refuses, naming the key),
// the shipped file, and the Revision's status.logUrl from logging.revision-url-template.
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { validateConfigMapForAdmission } from '../../../api/admission.js';
import { defaultObservabilityConfig, parseObservabilityConfig, revisionLogUrl } from '../../../api/config/index.js';
import { computeRevisionStatus } from '../../../resources/revision-status.js';
import { revision } from '../../fixtures/revision.js';
import { shippedConfigData } from '../../fixtures/shipped-config.js';

const refusal = (data: Record<string, string>) => validateConfigMapForAdmission('config-observability', data);

describe('config-observability', () => {
  it("is Knative's defaults when empty (no log URL, the JSON request log template) and reads the logging keys", () => {
    expect(parseObservabilityConfig({})).toEqual({ ok: true, value: defaultObservabilityConfig() });
    expect(defaultObservabilityConfig().loggingURLTemplate).toBe('');
    const p = parseObservabilityConfig({
      'logging.revision-url-template': 'http://logs.example.com/?rev=${REVISION_UID}',
      'logging.enable-request-log': 'true',
      'logging.enable-var-log-collection': 'True',
      'metrics-protocol': 'prometheus',
      'tracing-protocol': 'grpc',
      'tracing-endpoint': 'otel:4317',
      'tracing-sampling-rate': '0.5',
    });
    expect(p).toMatchObject({
      ok: true,
      value: { loggingURLTemplate: 'http://logs.example.com/?rev=${REVISION_UID}', enableRequestLog: true, enableVarLogCollection: true },
    });
  });

  it("refuses what upstream refuses, with the key and upstream's reason", () => {
    expect(refusal({ 'metrics-protocol': 'statsd' })).toEqual([{ path: 'metrics-protocol', message: 'unsupported protocol "statsd"' }]);
    expect(refusal({ 'metrics-protocol': 'grpc' })).toEqual([
      { path: 'metrics-protocol', message: 'endpoint should be set when protocol is "grpc"' },
    ]);
    expect(refusal({ 'metrics-endpoint': 'x:1' })).toEqual([
      { path: 'metrics-endpoint', message: 'endpoint should not be set when protocol is "none"' },
    ]);
    expect(refusal({ 'request-metrics-protocol': 'zipkin' })).toEqual([
      { path: 'request-metrics-protocol', message: 'unsupported protocol "zipkin"' },
    ]);
    expect(refusal({ 'tracing-protocol': 'http/protobuf' })).toEqual([
      { path: 'tracing-protocol', message: 'endpoint should be set for protocol "http/protobuf"' },
    ]);
    expect(refusal({ 'tracing-sampling-rate': '1.5' })).toEqual([
      { path: 'tracing-sampling-rate', message: 'sampling rate 1.500000 should be less than or equal to one' },
    ]);
    expect(refusal({ 'runtime-profiling': 'on' })).toEqual([{ path: 'runtime-profiling', message: 'unsupported profile setting "on"' }]);
    expect(refusal({ 'metrics-export-interval': '-1s' })).toEqual([
      { path: 'metrics-export-interval', message: 'export interval "-1s" should be greater than zero' },
    ]);
    expect(refusal({ 'logging.enable-request-log': 'true', 'logging.request-log-template': '' })).toEqual([
      {
        path: 'logging.enable-request-log',
        message: '"logging.enable-request-log" was set to true, but no "logging.request-log-template" was specified',
      },
    ]);
    expect(refusal({ 'logging.request-log-template': '{{.Request.Method' })).toEqual([
      { path: 'logging.request-log-template', message: 'template: requestLog: unclosed action: missing "}}"' },
    ]);
    expect(refusal({ 'logging.enable-var-log-collection': 'yes' })).toEqual([
      { path: 'logging.enable-var-log-collection', message: 'failed to parse "logging.enable-var-log-collection": "yes" is not a boolean' },
    ]);
    expect(refusal({ 'tracing-protocol': 'stdout', 'tracing-endpoint': 'x:1' })).toEqual([
      { path: 'tracing-endpoint', message: "endpoint should not be set when protocol is 'none'" },
    ]);
  });

  it("the shipped file sets nothing and its _example documents the code's defaults", () => {
    const data = shippedConfigData('config-observability');
    expect(Object.keys(data)).toEqual(['_example']);
    const example = parse(data._example ?? '') as Record<string, string>;
    expect(parseObservabilityConfig(example)).toEqual({ ok: true, value: defaultObservabilityConfig() });
    expect(example['logging.revision-url-template']).toBe('');
  });

  it('status.logUrl is the template with every ${REVISION_UID} replaced by the UID; an empty template clears it', () => {
    expect(revisionLogUrl('http://l/?a=${REVISION_UID}&b=${REVISION_UID}', 'u-1')).toBe('http://l/?a=u-1&b=u-1');
    const rev = revision('hello-00001', 'default');
    const obs = { revision: rev, digestsResolved: false, deployment: undefined, podIsAlwaysSchedulable: false };
    const withUrl = computeRevisionStatus({ ...obs, logUrlTemplate: 'http://logs/${REVISION_UID}' }, '2026-01-01T00:00:00Z').status;
    expect(withUrl.logUrl).toBe('http://logs/uid-hello-00001');
    const cleared = computeRevisionStatus({ ...obs, revision: { ...rev, status: withUrl }, logUrlTemplate: '' }, '2026-01-01T00:00:00Z').status;
    expect(cleared).not.toHaveProperty('logUrl');
  });
});
