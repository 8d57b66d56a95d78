import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import {
  DefaultDomainTemplate,
  DefaultTagTemplate,
  NetworkConfigName,
  NetworkKeys,
  defaultNetworkConfig,
  executeDomainTemplate,
  executeTagTemplate,
  parseDomainTemplate,
  parseNetworkConfig,
  parseTagTemplate,
  templateHostError,
} from '../../../api/config/network.js';
import type { GoTemplate, NetworkConfig } from '../../../api/config/network.js';
import type { Parsed } from '../../../api/config/types.js';

function ok(p: Parsed<NetworkConfig>): NetworkConfig {
  if (!p.ok) throw new Error(`expected ok, got ${p.error}`);
  return p.value;
}
function err(p: Parsed<NetworkConfig>): string {
  if (p.ok) throw new Error('expected an error');
  return p.error;
}
function compiled(t: GoTemplate): Extract<GoTemplate, { ok: true }> {
  if (!t.ok) throw new Error(`expected a template, got ${t.error}`);
  return t;
}

describe('config-network', () => {
  it('is named config-network', () => {
    expect(NetworkConfigName).toBe('config-network');
  });

  it("defaults to Knative's values plus ingress-readiness-probing disabled", () => {
    expect(defaultNetworkConfig()).toEqual({
      domainTemplate: '{{.Name}}.{{.Namespace}}.{{.Domain}}',
      tagTemplate: '{{.Tag}}-{{.Name}}',
      ingressClass: 'istio.ingress.networking.knative.dev',
      certificateClass: 'cert-manager.certificate.networking.knative.dev',
      rolloutDurationSeconds: 0,
      autocreateClusterDomainClaims: false,
      defaultExternalScheme: 'http',
      externalDomainTls: 'disabled',
      clusterLocalDomainTls: 'disabled',
      systemInternalTls: 'disabled',
      httpProtocol: 'enabled',
      ingressReadinessProbing: 'disabled',
    });
    expect(ok(parseNetworkConfig({}))).toEqual(defaultNetworkConfig());
    expect(DefaultDomainTemplate).toBe('{{.Name}}.{{.Namespace}}.{{.Domain}}');
    expect(DefaultTagTemplate).toBe('{{.Tag}}-{{.Name}}');
  });

  it('parses every key', () => {
    expect(
      ok(
        parseNetworkConfig({
          'domain-template': '{{.Name}}-{{.Namespace}}.{{.Domain}}',
          'tag-template': '{{.Name}}-{{.Tag}}',
          'ingress-class': 'kourier.ingress.networking.knative.dev',
          'certificate-class': 'foo-cert',
          'rollout-duration': '211',
          'autocreate-cluster-domain-claims': 'true',
          'default-external-scheme': 'https',
          'external-domain-tls': 'Enabled',
          'cluster-local-domain-tls': 'enabled',
          'system-internal-tls': 'ENABLED',
          'http-protocol': 'Redirected',
          'ingress-readiness-probing': 'Enabled',
          'enable-mesh-pod-addressability': 'whatever: not read',
          _example: 'not: read',
        }),
      ),
    ).toEqual({
      domainTemplate: '{{.Name}}-{{.Namespace}}.{{.Domain}}',
      tagTemplate: '{{.Name}}-{{.Tag}}',
      ingressClass: 'kourier.ingress.networking.knative.dev',
      certificateClass: 'foo-cert',
      rolloutDurationSeconds: 211,
      autocreateClusterDomainClaims: true,
      defaultExternalScheme: 'https',
      externalDomainTls: 'enabled',
      clusterLocalDomainTls: 'enabled',
      systemInternalTls: 'enabled',
      httpProtocol: 'redirected',
      ingressReadinessProbing: 'enabled',
    });
  });

  it('reads the legacy keys (Knative test "legacy keys")', () => {
    expect(
      ok(
        parseNetworkConfig({
          'ingress.class': '1',
          'certificate.class': '2',
          domainTemplate: '3',
          tagTemplate: '4',
          rolloutDuration: '5',
          defaultExternalScheme: '6',
          autocreateClusterDomainClaims: 'true',
          httpProtocol: 'redirected',
          autoTLS: 'enabled',
        }),
      ),
    ).toMatchObject({
      ingressClass: '1',
      certificateClass: '2',
      domainTemplate: '3',
      tagTemplate: '4',
      rolloutDurationSeconds: 5,
      defaultExternalScheme: '6',
      autocreateClusterDomainClaims: true,
      httpProtocol: 'redirected',
      externalDomainTls: 'enabled',
    });
  });

  it('lets the current key win over the legacy one (Knative test "newer keys take precedence")', () => {
    expect(
      ok(
        parseNetworkConfig({
          'ingress.class': '1',
          'certificate.class': '2',
          domainTemplate: '3',
          tagTemplate: '4',
          rolloutDuration: '5',
          defaultExternalScheme: '6',
          autocreateClusterDomainClaims: 'true',
          httpProtocol: 'redirected',
          autoTLS: 'enabled',
          'ingress-class': '7',
          'certificate-class': '8',
          'domain-template': '9',
          'tag-template': '10',
          'rollout-duration': '11',
          'default-external-scheme': '12',
          'autocreate-cluster-domain-claims': 'false',
          'http-protocol': 'enabled',
          'auto-tls': 'disabled',
        }),
      ),
    ).toMatchObject({
      ingressClass: '7',
      certificateClass: '8',
      domainTemplate: '9',
      tagTemplate: '10',
      rolloutDurationSeconds: 11,
      defaultExternalScheme: '12',
      autocreateClusterDomainClaims: false,
      httpProtocol: 'enabled',
      externalDomainTls: 'disabled',
    });
  });

  it('keys every field with its legacy aliases first and the current key last', () => {
    for (const [field, keys] of Object.entries(NetworkKeys)) {
      expect(keys.length, field).toBeGreaterThan(0);
      expect(keys[keys.length - 1], field).toMatch(/^[a-z]+(-[a-z]+)*$/u);
    }
    expect(Object.keys(NetworkKeys).sort()).toEqual(Object.keys(defaultNetworkConfig()).sort());
  });

  describe('rollout-duration', () => {
    it('rejects a non-integer, naming the key', () => {
      expect(err(parseNetworkConfig({ 'rollout-duration': 'mil novecientos ochenta y dos' }))).toBe(
        'config-network: rollout-duration: must be a 64-bit integer, got "mil novecientos ochenta y dos"',
      );
      expect(err(parseNetworkConfig({ rolloutDuration: '1.5' }))).toMatch(/^config-network: rolloutDuration: /u);
    });

    it('rejects a negative duration, naming the key it came from', () => {
      expect(err(parseNetworkConfig({ 'rollout-duration': '-444' }))).toBe(
        'config-network: rollout-duration: must be a non-negative integer number of seconds, got -444',
      );
      expect(err(parseNetworkConfig({ rolloutDuration: '-1' }))).toMatch(/^config-network: rolloutDuration: must be a non-negative/u);
    });
  });

  it('rejects a non-boolean autocreate-cluster-domain-claims', () => {
    expect(err(parseNetworkConfig({ 'autocreate-cluster-domain-claims': 'salad' }))).toBe(
      'config-network: autocreate-cluster-domain-claims: must be a boolean ("true" or "false"), got "salad"',
    );
  });

  describe('domain-template (the Route host comes from domain-template)', () => {
    it('accepts templates that render a host (Knative test "diff domain template", annotations via index)', () => {
      for (const t of [
        '{{.Namespace}}.{{.Name}}.{{.Domain}}',
        '{{.Name}}-{{.Namespace}}.{{.Domain}}',
        '{{.Name}}.{{ index .Annotations "sub"}}.{{.Domain}}',
        '{{.Name}}.{{index .Labels "team"}}.{{.Domain}}',
        '{{.Namespace}}.{{.Name}}.{{.Domain}}.sad',
        '{{- /* a comment */ -}} {{.Name}}.{{.Namespace}}.{{.Domain}}',
        '{{.Name}}.{{.Namespace}}.{{.Domain}}/',
      ]) {
        expect(ok(parseNetworkConfig({ 'domain-template': t })).domainTemplate, t).toBe(t);
      }
    });

    it('rejects a blank template: empty hostname', () => {
      expect(err(parseNetworkConfig({ 'domain-template': '' }))).toBe(
        'config-network: domain-template: must render a host name without path: "" renders "" for Name "foo", Namespace "bar", Domain "baz.com": empty hostname',
      );
    });

    it('rejects a template that does not parse (a missing brace)', () => {
      expect(err(parseNetworkConfig({ 'domain-template': '{{.Namespace}.{{.Name}}.{{.Domain}}' }))).toMatch(
        /^config-network: domain-template: invalid template "\{\{\.Namespace\}\.\{\{\.Name\}\}\.\{\{\.Domain\}\}": unsupported action/u,
      );
      expect(err(parseNetworkConfig({ 'domain-template': '{{.Name}}.{{.Namespace' }))).toMatch(/domain-template: .*unclosed action/u);
    });

    it('rejects a template that renders a path', () => {
      expect(err(parseNetworkConfig({ 'domain-template': '{{.Domain}}/{{.Namespace}}/{{.Name}}.' }))).toBe(
        'config-network: domain-template: must render a host name without path: "{{.Domain}}/{{.Namespace}}/{{.Name}}." renders "baz.com/bar/foo." for Name "foo", Namespace "bar", Domain "baz.com": domain template has url path: /bar/foo.',
      );
      expect(err(parseNetworkConfig({ 'domain-template': '{{.Name}}.{{.Domain}}?x=1' }))).toMatch(/has url path: \/\?x=1$/u);
    });

    it('rejects an unknown variable (Knative test "bad variable")', () => {
      expect(err(parseNetworkConfig({ 'domain-template': '{{.Name}}.{{.NAmespace}}.{{.Domain}}' }))).toMatch(
        /^config-network: domain-template: invalid template .*can't evaluate field NAmespace in type DomainTemplateValues/u,
      );
      expect(err(parseNetworkConfig({ 'domain-template': '{{.Tag}}.{{.Domain}}' }))).toMatch(/can't evaluate field Tag/u);
    });

    it('rejects unsupported actions (pipelines, functions, conditionals)', () => {
      for (const t of [
        '{{.Name | printf "%s"}}.{{.Domain}}',
        '{{if .Name}}x{{end}}.{{.Domain}}',
        '{{.Name.Foo}}.{{.Domain}}',
        '{{.Annotations}}.x.com',
      ]) {
        expect(err(parseNetworkConfig({ 'domain-template': t })), t).toMatch(/^config-network: domain-template: invalid template /u);
      }
    });

    it('rejects {{.Annotations.key}}, which renders "<no value>" with the sample values, as Knative does', () => {
      expect(err(parseNetworkConfig({ 'domain-template': '{{.Name}}.{{.Annotations.sub}}.{{.Domain}}' }))).toBe(
        'config-network: domain-template: must render a host name without path: "{{.Name}}.{{.Annotations.sub}}.{{.Domain}}" renders "foo.<no value>.baz.com" for Name "foo", Namespace "bar", Domain "baz.com": invalid character " " in host name',
      );
    });

    it('names the legacy key when the template came from it', () => {
      expect(err(parseNetworkConfig({ domainTemplate: '{{.Domain}}/x' }))).toMatch(/^config-network: domainTemplate: must render a host name/u);
    });
  });

  describe('tag-template', () => {
    it('accepts templates over .Tag and .Name only', () => {
      expect(ok(parseNetworkConfig({ 'tag-template': '{{.Name}}-{{.Tag}}' })).tagTemplate).toBe('{{.Name}}-{{.Tag}}');
      expect(ok(parseNetworkConfig({ 'tag-template': 'tag-{{.Tag}}' })).tagTemplate).toBe('tag-{{.Tag}}');
    });

    it('rejects fields TagTemplateValues does not have, and bad syntax, naming the key', () => {
      expect(err(parseNetworkConfig({ 'tag-template': '{{.Tag}}-{{.Namespace}}' }))).toBe(
        'config-network: tag-template: invalid template "{{.Tag}}-{{.Namespace}}": can\'t evaluate field Namespace in type TagTemplateValues (supported: .Name, .Tag)',
      );
      expect(err(parseNetworkConfig({ tagTemplate: '{{index .Annotations "x"}}-{{.Name}}' }))).toMatch(
        /^config-network: tagTemplate: .*can't evaluate field Annotations/u,
      );
      expect(err(parseNetworkConfig({ 'tag-template': '{{.Tag}-{{.Name}}' }))).toMatch(/^config-network: tag-template: invalid template/u);
    });
  });

  describe('TLS and HTTP switches', () => {
    it('external-domain-tls is on only for "enabled" in any case; the current key wins over auto-tls/autoTLS', () => {
      expect(ok(parseNetworkConfig({ 'external-domain-tls': 'ENABLED' })).externalDomainTls).toBe('enabled');
      expect(ok(parseNetworkConfig({ 'external-domain-tls': 'true' })).externalDomainTls).toBe('disabled');
      expect(ok(parseNetworkConfig({ 'auto-tls': 'Enabled' })).externalDomainTls).toBe('enabled');
      expect(ok(parseNetworkConfig({ 'external-domain-tls': 'enabled', 'auto-tls': 'disabled' })).externalDomainTls).toBe('enabled');
      expect(ok(parseNetworkConfig({ 'external-domain-tls': 'disabled', autoTLS: 'enabled' })).externalDomainTls).toBe('disabled');
    });

    it('http-protocol takes Enabled, Redirected or Disabled in any case, and rejects anything else', () => {
      expect(ok(parseNetworkConfig({ 'http-protocol': 'Disabled' })).httpProtocol).toBe('disabled');
      expect(ok(parseNetworkConfig({ 'http-protocol': '' })).httpProtocol).toBe('enabled');
      expect(err(parseNetworkConfig({ 'http-protocol': 'under-the-bridge' }))).toBe(
        'config-network: http-protocol: must be "Enabled", "Redirected" or "Disabled" (any case), got "under-the-bridge"',
      );
      expect(err(parseNetworkConfig({ httpProtocol: 'nope' }))).toMatch(/^config-network: httpProtocol: /u);
    });

    it('system-internal-tls and cluster-local-domain-tls take Enabled or Disabled', () => {
      expect(ok(parseNetworkConfig({ 'cluster-local-domain-tls': 'Enabled' })).clusterLocalDomainTls).toBe('enabled');
      expect(err(parseNetworkConfig({ 'system-internal-tls': 'wrong' }))).toBe(
        'config-network: system-internal-tls: must be "Enabled" or "Disabled" (any case), got "wrong"',
      );
      expect(err(parseNetworkConfig({ 'cluster-local-domain-tls': 'wrong' }))).toMatch(/^config-network: cluster-local-domain-tls: /u);
    });

    it('the deprecated boolean internal-encryption turns system-internal-tls on', () => {
      expect(ok(parseNetworkConfig({ 'internal-encryption': 'true' })).systemInternalTls).toBe('enabled');
      expect(ok(parseNetworkConfig({ 'internal-encryption': 'true', 'system-internal-tls': 'disabled' })).systemInternalTls).toBe('enabled');
      expect(ok(parseNetworkConfig({ 'internal-encryption': 'false' })).systemInternalTls).toBe('disabled');
      expect(err(parseNetworkConfig({ 'internal-encryption': 'maybe' }))).toMatch(/^config-network: internal-encryption: must be a boolean/u);
    });

    it("ingress-readiness-probing (Tidal's own) takes Enabled or Disabled", () => {
      expect(ok(parseNetworkConfig({ 'ingress-readiness-probing': 'enabled' })).ingressReadinessProbing).toBe('enabled');
      expect(err(parseNetworkConfig({ 'ingress-readiness-probing': 'sometimes' }))).toBe(
        'config-network: ingress-readiness-probing: must be "Enabled" or "Disabled" (any case), got "sometimes"',
      );
    });
  });
});

describe('domain and tag templates', () => {
  it('render the default templates', () => {
    expect(
      executeDomainTemplate(compiled(parseDomainTemplate(DefaultDomainTemplate)), { name: 'nginx', namespace: 'default', domain: 'example.com' }),
    ).toBe('nginx.default.example.com');
    expect(executeTagTemplate(compiled(parseTagTemplate(DefaultTagTemplate)), { name: 'nginx', tag: 'v1' })).toBe('v1-nginx');
  });

  it("render annotations and labels, both spellings, with Go's missing-key behaviour", () => {
    const t = compiled(parseDomainTemplate('{{.Name}}.{{index .Annotations "sub"}}.{{.Labels.team}}.{{.Domain}}'));
    expect(executeDomainTemplate(t, { name: 'a', namespace: 'b', domain: 'c.com', annotations: { sub: 's1' }, labels: { team: 'pay' } })).toBe(
      'a.s1.pay.c.com',
    );
    expect(executeDomainTemplate(t, { name: 'a', namespace: 'b', domain: 'c.com' })).toBe('a..<no value>.c.com');
  });

  it('apply trim markers and drop comments', () => {
    const t = compiled(parseDomainTemplate('{{/* host */}}{{.Name}} -  {{- .Namespace -}}  .{{.Domain}}'));
    expect(executeDomainTemplate(t, { name: 'a', namespace: 'b', domain: 'c.com' })).toBe('a -b.c.com');
  });

  it('accept "}}" inside a quoted key', () => {
    const t = compiled(parseDomainTemplate('{{index .Annotations "a}}b"}}.{{.Domain}}'));
    expect(executeDomainTemplate(t, { name: 'x', namespace: 'y', domain: 'z.com', annotations: { 'a}}b': 'v' } })).toBe('v.z.com');
  });
});

describe('templateHostError (Knative checkDomainTemplate: url.Parse("https://" + host))', () => {
  it('accepts hosts, with an optional port, trailing slash, userinfo or fragment, as Go does', () => {
    for (const h of ['foo.bar.baz.com', 'foo.bar.baz.com:8080', 'foo.bar.baz.com/', 'u@foo.com', 'foo.com#x', '3', '[::1]:80']) {
      expect(templateHostError(h), h).toBeUndefined();
    }
  });

  it('rejects paths, queries, bad characters, bad ports and empty hosts', () => {
    expect(templateHostError('foo.com/x')).toBe('domain template has url path: /x');
    expect(templateHostError('foo.com?')).toBe('domain template has url path: /?');
    expect(templateHostError('a b.com')).toBe('invalid character " " in host name');
    expect(templateHostError('foo.com:http')).toBe('invalid port ":http" after host');
    expect(templateHostError('')).toBe('empty hostname');
    expect(templateHostError('/foo')).toBe('empty hostname');
    expect(templateHostError('foo\n.com')).toBe('invalid control character in URL');
    expect(templateHostError('fo%zz.com')).toBe('invalid URL escape "%zz"');
  });
});

// ---------------------------------------------------------------------------------------------------------------
// deploy/config/config-network.yaml, checked the way test/unit/api/config-yaml.test.ts checks the other maps.

interface ConfigMap {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace: string; labels: Record<string, string> };
  data: Record<string, string>;
}

function loadConfigMap(): ConfigMap {
  const path = fileURLToPath(new URL('../../../deploy/config/config-network.yaml', import.meta.url));
  return parse(readFileSync(path, 'utf8')) as ConfigMap;
}

/** The `key: value` lines of an `_example` block (comments skipped), each value read as YAML. */
function exampleEntries(example: string): [string, string][] {
  const out: [string, string][] = [];
  for (const line of example.split('\n')) {
    const t = line.trim();
    if (t === '' || t.startsWith('#')) continue;
    const parsed = parse(t) as Record<string, unknown>;
    for (const [k, v] of Object.entries(parsed)) out.push([k, String(v)]);
  }
  return out;
}

describe('deploy/config/config-network.yaml', () => {
  const cm = loadConfigMap();
  const { _example: example = '', ...active } = cm.data;

  it('is config-network in knative-serving, labelled as Tidal controller config', () => {
    expect(cm.apiVersion).toBe('v1');
    expect(cm.kind).toBe('ConfigMap');
    expect(cm.metadata.name).toBe(NetworkConfigName);
    expect(cm.metadata.namespace).toBe('knative-serving');
    expect(cm.metadata.labels).toEqual({ 'app.kubernetes.io/name': 'knative-serving', 'app.kubernetes.io/component': 'controller' });
  });

  it("sets hakn's values as active keys, and they parse", () => {
    expect(active).toEqual({ 'ingress-class': 'istio.ingress.networking.knative.dev', 'autocreate-cluster-domain-claims': 'true' });
    expect(ok(parseNetworkConfig(cm.data))).toEqual({ ...defaultNetworkConfig(), autocreateClusterDomainClaims: true });
  });

  it('has an _example block whose every value is the default in code', () => {
    const entries = exampleEntries(example);
    const known = new Set(Object.values(NetworkKeys).flat());
    expect(entries.length).toBeGreaterThan(0);
    for (const [key, value] of entries) {
      expect(known, `unknown key ${key} in _example`).toContain(key);
      expect(parseNetworkConfig({ [key]: value }), `${key}: ${value}`).toEqual({ ok: true, value: defaultNetworkConfig() });
    }
    expect(parseNetworkConfig(Object.fromEntries(entries))).toEqual({ ok: true, value: defaultNetworkConfig() });
  });

  it('documents every key, and mentions every legacy alias', () => {
    const documented = new Set(exampleEntries(example).map(([k]) => k));
    for (const keys of Object.values(NetworkKeys)) {
      expect(documented).toContain(keys[keys.length - 1]);
      for (const legacy of keys.slice(0, -1)) expect(example, legacy).toContain(legacy);
    }
  });
});
