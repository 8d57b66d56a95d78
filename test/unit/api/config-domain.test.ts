import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import {
  DomainConfigName,
  clusterLocalDomain,
  defaultDomainConfig,
  lookupDomainForLabels,
  parseDomainConfig,
  selectorMatches,
} from '../../../api/config/domain.js';
import type { DomainConfig } from '../../../api/config/domain.js';
import type { Parsed } from '../../../api/config/types.js';

function ok(p: Parsed<DomainConfig>): DomainConfig {
  if (!p.ok) throw new Error(`expected ok, got ${p.error}`);
  return p.value;
}
function err(p: Parsed<DomainConfig>): string {
  if (p.ok) throw new Error('expected an error');
  return p.error;
}

const visibility = 'networking.knative.dev/visibility';

describe('config-domain', () => {
  it('is named config-domain', () => {
    expect(DomainConfigName).toBe('config-domain');
  });

  describe('no default entry ⇒ svc.cluster.local (cluster-local)', () => {
    it('an empty config map has the single default domain svc.cluster.local', () => {
      const want = { domains: { 'svc.cluster.local': { selector: {}, type: 'wildcard' } } };
      expect(defaultDomainConfig()).toEqual(want);
      expect(ok(parseDomainConfig({}))).toEqual(want);
      expect(lookupDomainForLabels(defaultDomainConfig(), {})).toBe('svc.cluster.local');
      expect(lookupDomainForLabels(defaultDomainConfig(), undefined)).toBe('svc.cluster.local');
    });

    it('hakn\'s `svc.cluster.local: ""` is the same configuration', () => {
      expect(ok(parseDomainConfig({ 'svc.cluster.local': '' }))).toEqual(defaultDomainConfig());
    });

    it('selector-only config maps get svc.cluster.local as their default', () => {
      const cfg = ok(parseDomainConfig({ 'example.org': 'selector:\n  app: nonprofit' }));
      expect(cfg.domains).toEqual({
        'example.org': { selector: { app: 'nonprofit' }, type: '' },
        'svc.cluster.local': { selector: {}, type: 'wildcard' },
      });
      expect(lookupDomainForLabels(cfg, { app: 'nonprofit' })).toBe('example.org');
      expect(lookupDomainForLabels(cfg, { app: 'other' })).toBe('svc.cluster.local');
    });

    it('follows a non-default cluster domain', () => {
      expect(clusterLocalDomain('corp.internal')).toBe('svc.corp.internal');
      expect(ok(parseDomainConfig({}, 'corp.internal'))).toEqual(defaultDomainConfig('corp.internal'));
      expect(lookupDomainForLabels(defaultDomainConfig('corp.internal'), {})).toBe('svc.corp.internal');
    });
  });

  describe('the most specific matching selector wins, ties by lexical order', () => {
    it('`example.com: ""` is the default entry, and no svc.cluster.local is added', () => {
      const cfg = ok(parseDomainConfig({ 'example.com': '' }));
      expect(cfg).toEqual({ domains: { 'example.com': { selector: {}, type: 'wildcard' } } });
      expect(lookupDomainForLabels(cfg, { app: 'anything' })).toBe('example.com');
    });

    it('`app: coolcoffee.company` → svc.coolcoffee.company; other routes keep the default', () => {
      const cfg = ok(
        parseDomainConfig({
          'example.com': '',
          'svc.coolcoffee.company': 'selector:\n  app: coolcoffee.company\n',
        }),
      );
      expect(lookupDomainForLabels(cfg, { app: 'coolcoffee.company', team: 'x' })).toBe('svc.coolcoffee.company');
      expect(lookupDomainForLabels(cfg, { app: 'tea' })).toBe('example.com');
      expect(lookupDomainForLabels(cfg, {})).toBe('example.com');
    });

    it('prefers the selector with more keys, whatever the domain names', () => {
      const cfg = ok(
        parseDomainConfig({
          'a.example.com': '',
          'b.example.com': 'selector:\n  app: prod',
          'z.example.com': 'selector:\n  app: prod\n  tier: web',
        }),
      );
      expect(lookupDomainForLabels(cfg, { app: 'prod', tier: 'web' })).toBe('z.example.com');
      expect(lookupDomainForLabels(cfg, { app: 'prod', tier: 'db' })).toBe('b.example.com');
      expect(lookupDomainForLabels(cfg, { tier: 'web' })).toBe('a.example.com');
    });

    it('breaks ties by the lexicographically smallest domain, independent of key order', () => {
      const data = {
        'zeta.dev': 'selector:\n  app: prod',
        'alpha.dev': 'selector:\n  app: prod',
        'mid.dev': 'selector:\n  app: prod',
        'default.dev': '',
        'another-default.dev': '',
      };
      const cfg = ok(parseDomainConfig(data));
      expect(lookupDomainForLabels(cfg, { app: 'prod' })).toBe('alpha.dev');
      expect(lookupDomainForLabels(cfg, {})).toBe('another-default.dev');
      const reversed = ok(parseDomainConfig(Object.fromEntries(Object.entries(data).reverse())));
      expect(lookupDomainForLabels(reversed, { app: 'prod' })).toBe('alpha.dev');
    });

    it('a selector matches only when every pair is present with the same value', () => {
      expect(selectorMatches({}, undefined)).toBe(true);
      expect(selectorMatches({ app: 'a', tier: 'b' }, { app: 'a', tier: 'b', x: 'y' })).toBe(true);
      expect(selectorMatches({ app: 'a', tier: 'b' }, { app: 'a' })).toBe(false);
      expect(selectorMatches({ app: '' }, {})).toBe(false);
      expect(selectorMatches({ app: '' }, { app: '' })).toBe(true);
    });
  });

  it('the label networking.knative.dev/visibility=cluster-local gives svc.cluster.local, over any selector', () => {
    const cfg = ok(parseDomainConfig({ 'example.com': '', 'prod.example.com': 'selector:\n  app: prod' }));
    expect(lookupDomainForLabels(cfg, { [visibility]: 'cluster-local', app: 'prod' })).toBe('svc.cluster.local');
    expect(lookupDomainForLabels(cfg, { [visibility]: 'cluster-local' }, 'corp.internal')).toBe('svc.corp.internal');
    expect(lookupDomainForLabels(cfg, { [visibility]: 'other' })).toBe('example.com');
  });

  describe('values', () => {
    it('reads block and flow selectors, JSON, comments, quoting and type', () => {
      const cfg = ok(
        parseDomainConfig({
          'block.dev': '# prod routes\nselector:   # the labels\n  app: prod\n  "team": \'pay # ments\'\n',
          'flow.dev': '{selector: {app: prod, tier: "web"}}',
          'json.dev': '{"selector": {"app": "prod", "zone": "eu"}}',
          'inline.dev': 'selector: {app: inline}',
          'typed.dev': 'selector:\n  app: cert\ntype: wildcard',
          'example.com': '',
        }),
      );
      expect(cfg.domains).toEqual({
        'block.dev': { selector: { app: 'prod', team: 'pay # ments' }, type: '' },
        'flow.dev': { selector: { app: 'prod', tier: 'web' }, type: '' },
        'json.dev': { selector: { app: 'prod', zone: 'eu' }, type: '' },
        'inline.dev': { selector: { app: 'inline' }, type: '' },
        'typed.dev': { selector: { app: 'cert' }, type: 'wildcard' },
        'example.com': { selector: {}, type: 'wildcard' },
      });
    });

    it('treats empty, null and empty selectors as default entries, and ignores unknown keys', () => {
      const cfg = ok(
        parseDomainConfig({
          'a.dev': '   \n',
          'b.dev': 'selector:',
          'c.dev': 'selector: {}',
          'd.dev': 'selector: null',
          'e.dev': 'other:\n  nested:\n    - 1\n    - 2\ncomment: "x"',
        }),
      );
      for (const d of ['a.dev', 'b.dev', 'c.dev', 'd.dev', 'e.dev']) expect(cfg.domains[d], d).toEqual({ selector: {}, type: 'wildcard' });
      expect(cfg.domains['svc.cluster.local']).toBeUndefined();
    });

    it('reads selector values as strings: null → "", YAML 1.1 booleans → "true"/"false"', () => {
      const cfg = ok(parseDomainConfig({ 'x.dev': 'selector:\n  a: ~\n  b: yes\n  c: "yes"\n  d: 42' }));
      expect(cfg.domains['x.dev']?.selector).toEqual({ a: '', b: 'true', c: 'yes', d: '42' });
    });

    it('ignores _example', () => {
      expect(ok(parseDomainConfig({ _example: 'selector: [not, valid', 'example.com': '' }))).toEqual({
        domains: { 'example.com': { selector: {}, type: 'wildcard' } },
      });
    });

    it('rejects values that are not a selector mapping, naming the domain and the reason', () => {
      expect(err(parseDomainConfig({ 'bad.dev': 'app: prod\n  oops: x' }))).toBe('config-domain: bad.dev: line 2: unexpected indentation');
      expect(err(parseDomainConfig({ 'bad.dev': 'just-a-string' }))).toBe(
        'config-domain: bad.dev: must be a YAML mapping such as "selector:\\n  app: prod", got a string',
      );
      expect(err(parseDomainConfig({ 'bad.dev': 'selector: prod' }))).toBe(
        'config-domain: bad.dev: selector must be a mapping of label keys to values',
      );
      expect(err(parseDomainConfig({ 'bad.dev': 'selector:\n  - app' }))).toBe(
        'config-domain: bad.dev: selector must be a mapping of label keys to values',
      );
      expect(err(parseDomainConfig({ 'bad.dev': 'selector:\n  app:\n    deep: x' }))).toBe(
        'config-domain: bad.dev: selector value of "app" must be a string, got a mapping',
      );
      expect(err(parseDomainConfig({ 'bad.dev': '{selector: {app: prod}' }))).toMatch(/^config-domain: bad\.dev: expected "," or "\}"/u);
      expect(err(parseDomainConfig({ 'bad.dev': 'selector:\n  app: "unterminated' }))).toBe(
        'config-domain: bad.dev: unterminated double-quoted string',
      );
      expect(err(parseDomainConfig({ 'bad.dev': 'selector: |\n  app: x' }))).toMatch(/^config-domain: bad\.dev: unsupported YAML/u);
    });
  });
});

// ---------------------------------------------------------------------------------------------------------------
// deploy/config/config-domain.yaml

interface ConfigMap {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace: string; labels: Record<string, string> };
  data: Record<string, string>;
}

describe('deploy/config/config-domain.yaml', () => {
  const path = fileURLToPath(new URL('../../../deploy/config/config-domain.yaml', import.meta.url));
  const cm = parse(readFileSync(path, 'utf8')) as ConfigMap;
  const { _example: example = '', ...active } = cm.data;

  it('is config-domain in knative-serving, labelled as Tidal controller config', () => {
    expect(cm.apiVersion).toBe('v1');
    expect(cm.kind).toBe('ConfigMap');
    expect(cm.metadata.name).toBe(DomainConfigName);
    expect(cm.metadata.namespace).toBe('knative-serving');
    expect(cm.metadata.labels).toEqual({ 'app.kubernetes.io/name': 'knative-serving', 'app.kubernetes.io/component': 'controller' });
  });

  it("sets hakn's svc.cluster.local default, which equals the default in code", () => {
    expect(active).toEqual({ 'svc.cluster.local': '' });
    expect(ok(parseDomainConfig(cm.data))).toEqual(defaultDomainConfig());
  });

  it('has an _example block that parses and behaves as its comments say', () => {
    const data = parse(example) as Record<string, string | null>;
    const entries = Object.fromEntries(Object.entries(data).map(([k, v]) => [k, v ?? '']));
    expect(Object.keys(entries)).toEqual(['example.com', 'example.org', 'svc.cluster.local']);
    const cfg = ok(parseDomainConfig(entries));
    expect(lookupDomainForLabels(cfg, {})).toBe('example.com');
    expect(lookupDomainForLabels(cfg, { app: 'nonprofit' })).toBe('example.org');
    expect(lookupDomainForLabels(cfg, { app: 'secret' })).toBe('svc.cluster.local');
    expect(lookupDomainForLabels(cfg, { [visibility]: 'cluster-local' })).toBe('svc.cluster.local');
    expect(example).toContain('svc.cluster.local is the default');
  });
});
