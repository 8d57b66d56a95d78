import { describe, expect, it } from 'vitest';
import {
  DefaultsConfigName,
  defaultDefaultsConfig,
  executeNameTemplate,
  parseDefaultsConfig,
  parseNameTemplate,
  renderNameTemplate,
} from '../../../api/config/index.js';
import type { DefaultsConfig, Parsed } from '../../../api/config/index.js';

function ok(p: Parsed<DefaultsConfig>): DefaultsConfig {
  if (!p.ok) throw new Error(`expected ok, got ${p.error}`);
  return p.value;
}
function err(p: Parsed<DefaultsConfig>): string {
  if (p.ok) throw new Error('expected an error');
  return p.error;
}

describe('config-defaults', () => {
  it('is named config-defaults', () => {
    expect(DefaultsConfigName).toBe('config-defaults');
  });

  it('defaults to Knative with hakn container-concurrency 100 and no service links', () => {
    expect(defaultDefaultsConfig()).toEqual({
      revisionTimeoutSeconds: 300,
      maxRevisionTimeoutSeconds: 600,
      revisionResponseStartTimeoutSeconds: undefined,
      revisionIdleTimeoutSeconds: 0,
      containerConcurrency: 100,
      containerConcurrencyMaxLimit: 1000,
      allowContainerConcurrencyZero: true,
      containerNameTemplate: 'user-container',
      initContainerNameTemplate: 'init-container',
      enableServiceLinks: false,
      revisionCpuRequest: undefined,
      revisionCpuLimit: undefined,
      revisionMemoryRequest: undefined,
      revisionMemoryLimit: undefined,
      revisionEphemeralStorageRequest: undefined,
      revisionEphemeralStorageLimit: undefined,
    });
    expect(ok(parseDefaultsConfig({}))).toEqual(defaultDefaultsConfig());
  });

  it('parses every key', () => {
    expect(
      ok(
        parseDefaultsConfig({
          'revision-timeout-seconds': '120',
          'max-revision-timeout-seconds': '900',
          'revision-response-start-timeout-seconds': '60',
          'revision-idle-timeout-seconds': '30',
          'container-concurrency': '0',
          'container-concurrency-max-limit': '50',
          'allow-container-concurrency-zero': 'false',
          'container-name-template': '{{.Name}}-app',
          'init-container-name-template': 'init-{{.Namespace}}',
          'enable-service-links': 'TRUE',
          'revision-cpu-request': '400m',
          'revision-cpu-limit': '1',
          'revision-memory-request': '100M',
          'revision-memory-limit': '200M',
          'revision-ephemeral-storage-request': '500M',
          'revision-ephemeral-storage-limit': '750M',
          _example: 'container-concurrency: "nope"',
        }),
      ),
    ).toEqual({
      revisionTimeoutSeconds: 120,
      maxRevisionTimeoutSeconds: 900,
      revisionResponseStartTimeoutSeconds: 60,
      revisionIdleTimeoutSeconds: 30,
      containerConcurrency: 0,
      containerConcurrencyMaxLimit: 50,
      allowContainerConcurrencyZero: false,
      containerNameTemplate: '{{.Name}}-app',
      initContainerNameTemplate: 'init-{{.Namespace}}',
      enableServiceLinks: true,
      revisionCpuRequest: '400m',
      revisionCpuLimit: '1',
      revisionMemoryRequest: '100M',
      revisionMemoryLimit: '200M',
      revisionEphemeralStorageRequest: '500M',
      revisionEphemeralStorageLimit: '750M',
    });
  });

  it('enable-service-links is tri-state: true/false in any case, anything else leaves the field unset', () => {
    expect(ok(parseDefaultsConfig({ 'enable-service-links': 'False' })).enableServiceLinks).toBe(false);
    expect(ok(parseDefaultsConfig({ 'enable-service-links': 'true' })).enableServiceLinks).toBe(true);
    expect(ok(parseDefaultsConfig({ 'enable-service-links': 'default' })).enableServiceLinks).toBeUndefined();
  });

  it('allows the response-start timeout to equal the revision timeout and 0 to mean off', () => {
    expect(ok(parseDefaultsConfig({ 'revision-response-start-timeout-seconds': '300' })).revisionResponseStartTimeoutSeconds).toBe(300);
    expect(ok(parseDefaultsConfig({ 'revision-response-start-timeout-seconds': '0' })).revisionResponseStartTimeoutSeconds).toBe(0);
  });

  describe('errors name the key and the reason', () => {
    it.each([
      [{ 'revision-timeout-seconds': '5m' }, 'config-defaults: revision-timeout-seconds: must be a 64-bit integer, got "5m"'],
      [{ 'max-revision-timeout-seconds': '1.5' }, 'config-defaults: max-revision-timeout-seconds: must be a 64-bit integer, got "1.5"'],
      [
        { 'revision-response-start-timeout-seconds': 'x' },
        'config-defaults: revision-response-start-timeout-seconds: must be a 64-bit integer, got "x"',
      ],
      [{ 'revision-idle-timeout-seconds': '' }, 'config-defaults: revision-idle-timeout-seconds: must be a 64-bit integer, got ""'],
      [{ 'container-concurrency': 'ten' }, 'config-defaults: container-concurrency: must be a 64-bit integer, got "ten"'],
      [
        { 'container-concurrency-max-limit': '9223372036854775808' },
        'config-defaults: container-concurrency-max-limit: must be a 64-bit integer, got "9223372036854775808"',
      ],
      [
        { 'allow-container-concurrency-zero': 'nope' },
        'config-defaults: allow-container-concurrency-zero: must be a boolean ("true" or "false"), got "nope"',
      ],
      [
        { 'revision-cpu-request': 'a lot' },
        'config-defaults: revision-cpu-request: must be a resource quantity such as "25m" or "50Mi", got "a lot"',
      ],
      [{ 'revision-cpu-limit': '1c' }, 'config-defaults: revision-cpu-limit: must be a resource quantity such as "25m" or "50Mi", got "1c"'],
      [
        { 'revision-memory-request': '1MB' },
        'config-defaults: revision-memory-request: must be a resource quantity such as "25m" or "50Mi", got "1MB"',
      ],
      [{ 'revision-memory-limit': '-' }, 'config-defaults: revision-memory-limit: must be a resource quantity such as "25m" or "50Mi", got "-"'],
      [
        { 'revision-ephemeral-storage-request': 'G' },
        'config-defaults: revision-ephemeral-storage-request: must be a resource quantity such as "25m" or "50Mi", got "G"',
      ],
      [
        { 'revision-ephemeral-storage-limit': '1..0' },
        'config-defaults: revision-ephemeral-storage-limit: must be a resource quantity such as "25m" or "50Mi", got "1..0"',
      ],
      [
        { 'revision-timeout-seconds': '700' },
        'config-defaults: revision-timeout-seconds: must not exceed max-revision-timeout-seconds (600), got 700',
      ],
      [
        { 'revision-timeout-seconds': '100', 'max-revision-timeout-seconds': '50' },
        'config-defaults: revision-timeout-seconds: must not exceed max-revision-timeout-seconds (50), got 100',
      ],
      [
        { 'revision-response-start-timeout-seconds': '301' },
        'config-defaults: revision-response-start-timeout-seconds: must not exceed revision-timeout-seconds (300), got 301',
      ],
      [
        { 'revision-idle-timeout-seconds': '400' },
        'config-defaults: revision-idle-timeout-seconds: must not exceed revision-timeout-seconds (300), got 400',
      ],
      [{ 'container-concurrency-max-limit': '0' }, 'config-defaults: container-concurrency-max-limit: must be between 1 and 2147483647, got 0'],
      [
        { 'container-concurrency': '2000' },
        'config-defaults: container-concurrency: must be between 0 and container-concurrency-max-limit (1000), got 2000',
      ],
      [
        { 'container-concurrency': '-1' },
        'config-defaults: container-concurrency: must be between 0 and container-concurrency-max-limit (1000), got -1',
      ],
      [
        { 'container-concurrency-max-limit': '50' },
        'config-defaults: container-concurrency: must be between 0 and container-concurrency-max-limit (50), got 100',
      ],
      [
        { 'container-name-template': '{{.Name' },
        'config-defaults: container-name-template: invalid template "{{.Name": unclosed action: missing "}}"',
      ],
      [
        { 'container-name-template': '{{.Foo}}' },
        'config-defaults: container-name-template: invalid template "{{.Foo}}": unsupported field ".Foo" (supported: .Name, .GenerateName, .Namespace, .UID, .ResourceVersion, .Generation, .Labels.<key>, .Annotations.<key>)',
      ],
      [
        { 'init-container-name-template': '{{printf "%s" .Name}}' },
        'config-defaults: init-container-name-template: invalid template "{{printf \\"%s\\" .Name}}": unsupported action "{{printf "%s" .Name}}"',
      ],
    ])('%j', (data, message) => {
      expect(err(parseDefaultsConfig(data))).toBe(message);
    });
  });
});

describe('container-name templates (the Go text/template subset)', () => {
  const meta = {
    name: 'web',
    generateName: 'web-',
    namespace: 'prod',
    uid: 'u-1',
    resourceVersion: '42',
    generation: 3,
    labels: { app: 'shop' },
    annotations: { team: 'a' },
  };

  it.each([
    ['user-container', 'user-container'],
    ['{{.Name}}', 'web'],
    ['{{ .Name }}-c', 'web-c'],
    ['{{.Namespace}}-{{.Name}}', 'prod-web'],
    ['{{.GenerateName}}x', 'web-x'],
    ['{{.UID}}/{{.ResourceVersion}}/{{.Generation}}', 'u-1/42/3'],
    ['{{.Labels.app}}', 'shop'],
    ['{{.Annotations.team}}', 'a'],
    ['{{index .Labels "app"}}', 'shop'],
    ['{{.Labels.missing}}', '<no value>'],
    ['{{index .Labels "missing"}}', ''],
    ['a {{- .Name -}} b', 'awebb'],
    ['{{/* a comment */}}c', 'c'],
  ])('%s renders as %j', (src, want) => {
    expect(renderNameTemplate(src, meta)).toBe(want);
  });

  it('renders over empty metadata without a parent, like Go over an empty ObjectMeta', () => {
    expect(renderNameTemplate('{{.Name}}x')).toBe('x');
    expect(renderNameTemplate('g{{.Generation}}')).toBe('g0');
  });

  it('rejects what it does not support, and renders a rejected template as ""', () => {
    for (const src of ['{{.}}', '{{.Labels}}', '{{if .Name}}x{{end}}', '{{.CreationTimestamp}}', '{{.Name | lower}}']) {
      expect(parseNameTemplate(src).ok).toBe(false);
      expect(renderNameTemplate(src, meta)).toBe('');
    }
  });

  it('parses once and executes many times', () => {
    const t = parseNameTemplate('{{.Name}}-c');
    if (!t.ok) throw new Error(t.error);
    expect(executeNameTemplate(t, { name: 'a' })).toBe('a-c');
    expect(executeNameTemplate(t, { name: 'b' })).toBe('b-c');
  });
});
