// Modules (ADR 0009): the webhook's checks of `tidal.dev/module` and `tidal.dev/module-config` on
// Services, Configurations and Revisions, config-modules' parser and `/config-validation`, and the content token that
// wakes a foreign Revision's workflow when its operator writes its conditions.
import { describe, expect, it } from 'vitest';
import { defaultDefaultsConfig, parseModulesConfig } from '../../../api/config/index.js';
import { validateConfigMap } from '../../../api/config/validate.js';
import { contentToken } from '../../../api/content-token.js';
import { setConfigurationDefaults, setServiceDefaults } from '../../../api/defaults.js';
import { formatFieldErrors } from '../../../api/field-error.js';
import { isForeignModule, moduleConfigProblem, moduleOf } from '../../../api/modules.js';
import type { Configuration, Revision, Service } from '../../../api/serving.js';
import { validateConfiguration, validateRevision, validateService } from '../../../api/validation.js';
import { revision, withRevAnnotations } from '../../fixtures/revision.js';
import { configuration, service } from '../../fixtures/serving.js';

const cfg = defaultDefaultsConfig();
const modules = { known: ['stateful', 'sidecar-example'] };
const opts = { modules };

function svc(annotations: Record<string, string>): Service {
  const s = setServiceDefaults(service('web', 'default'), cfg);
  s.spec.template.metadata = { ...s.spec.template.metadata, annotations };
  return s;
}
const messages = (errs: { path: string; message: string }[]) => errs.map((e) => `${e.path}: ${e.message}`);

describe('module names and configurations at admission', () => {
  it('a known module with a JSON object config is admitted; so is no module, and the built-in "knative"', () => {
    expect(validateService(svc({ 'tidal.dev/module': 'stateful', 'tidal.dev/module-config': '{"db":{"host":"pg"}}' }), cfg, opts)).toEqual([]);
    expect(validateService(svc({}), cfg, opts)).toEqual([]);
    expect(validateService(svc({ 'tidal.dev/module': 'knative' }), cfg, opts)).toEqual([]);
  });

  it('an unknown module is refused with a message that names it and the known modules', () => {
    const errs = validateService(svc({ 'tidal.dev/module': 'statefull' }), cfg, opts);
    expect(formatFieldErrors(errs)).toBe(
      'unknown module "statefull"; known modules: stateful, sidecar-example: spec.template.metadata.annotations.tidal.dev/module',
    );
    // With config-modules empty (or absent) every foreign module is unknown, and the message says why.
    expect(messages(validateService(svc({ 'tidal.dev/module': 'stateful' }), cfg, {}))).toEqual([
      'spec.template.metadata.annotations.tidal.dev/module: unknown module "stateful"; no modules are known (config-modules lists none)',
    ]);
  });

  it('a config that is not a JSON object is refused with the field and the reason', () => {
    const cases: [string, string][] = [
      ['[1, 2]', 'must be a JSON object, not an array'],
      ['"db"', 'must be a JSON object, not a string'],
      ['null', 'must be a JSON object, not null'],
      ['42', 'must be a JSON object, not a number'],
    ];
    for (const [raw, why] of cases) {
      expect(messages(validateService(svc({ 'tidal.dev/module': 'stateful', 'tidal.dev/module-config': raw }), cfg, opts))).toEqual([
        `spec.template.metadata.annotations.tidal.dev/module-config: invalid module configuration: ${why}`,
      ]);
    }
    const [bad] = validateService(svc({ 'tidal.dev/module': 'stateful', 'tidal.dev/module-config': '{db: 1}' }), cfg, opts);
    expect(bad?.message).toMatch(/^invalid module configuration: must be a JSON object: .*JSON/);
  });

  it('a config without a foreign module, and a module name that is not a DNS-1123 label, are refused', () => {
    expect(messages(validateService(svc({ 'tidal.dev/module-config': '{}' }), cfg, opts))).toEqual([
      'spec.template.metadata.annotations.tidal.dev/module-config: a module configuration needs a module: set tidal.dev/module to a module other than the built-in "knative"',
    ]);
    const [err] = validateService(svc({ 'tidal.dev/module': 'Stateful' }), cfg, opts);
    expect(err?.path).toBe('spec.template.metadata.annotations.tidal.dev/module');
    expect(err?.message).toMatch(/^invalid module name "Stateful": a lowercase RFC 1123 label/);
  });

  it('Configurations are checked the same way', () => {
    const c: Configuration = setConfigurationDefaults(configuration('web', 'default'), cfg);
    c.spec.template.metadata = { annotations: { 'tidal.dev/module': 'statefull' } };
    expect(messages(validateConfiguration(c, cfg, opts))).toEqual([
      'spec.template.metadata.annotations.tidal.dev/module: unknown module "statefull"; known modules: stateful, sidecar-example',
    ]);
  });

  it('on update a module dropped from config-modules refuses a template change but not a label edit', () => {
    const stored = svc({ 'tidal.dev/module': 'stateful' });
    const labelled = structuredClone(stored);
    labelled.metadata.labels = { team: 'a' };
    const without = { known: ['sidecar-example'] };
    expect(validateService(labelled, cfg, { modules: without, previous: stored })).toEqual([]);
    const changed = structuredClone(stored);
    changed.spec.template.spec.containers[0]!.image = 'nginx:2';
    expect(messages(validateService(changed, cfg, { modules: without, previous: stored }))).toEqual([
      'spec.template.metadata.annotations.tidal.dev/module: unknown module "stateful"; known modules: sidecar-example',
    ]);
  });

  it('Revisions: checked on create; on update their module and config are immutable', () => {
    const rev = (m: string, c = '{}'): Revision =>
      revision('hello-00001', 'default', withRevAnnotations({ 'tidal.dev/module': m, 'tidal.dev/module-config': c }));
    expect(messages(validateRevision(rev('statefull'), cfg, opts))).toEqual([
      'metadata.annotations.tidal.dev/module: unknown module "statefull"; known modules: stateful, sidecar-example',
    ]);
    expect(validateRevision(rev('stateful'), cfg, opts)).toEqual([]);
    // The labeler's edits pass, even when the module is no longer listed.
    const relabelled = rev('stateful');
    relabelled.metadata.labels = { ...relabelled.metadata.labels, 'serving.knative.dev/routingState': 'reserve' };
    expect(validateRevision(relabelled, cfg, { modules: { known: [] }, previous: rev('stateful') })).toEqual([]);
    expect(messages(validateRevision(rev('sidecar-example', '{"a":1}'), cfg, { ...opts, previous: rev('stateful') }))).toEqual([
      'metadata.annotations.tidal.dev/module: annotation value is immutable',
      'metadata.annotations.tidal.dev/module-config: annotation value is immutable',
    ]);
  });
});

describe('module helpers', () => {
  it('moduleOf / isForeignModule: no annotation and "knative" are Tidal\'s own', () => {
    const r = (a: Record<string, string>) => ({ metadata: { annotations: a } });
    expect(moduleOf(r({}))).toBe('knative');
    expect(isForeignModule(r({}))).toBe(false);
    expect(isForeignModule(r({ 'tidal.dev/module': 'knative' }))).toBe(false);
    expect(isForeignModule(r({ 'tidal.dev/module': 'stateful' }))).toBe(true);
    expect(moduleConfigProblem('{"a":[1]}')).toBe('');
  });
});

describe('config-modules', () => {
  it('one key per module; _example is not one', () => {
    expect(parseModulesConfig({ _example: 'x', stateful: 'the Akka operator', 'sidecar-example': '' })).toEqual({
      ok: true,
      value: { known: ['sidecar-example', 'stateful'] },
    });
    expect(parseModulesConfig({})).toEqual({ ok: true, value: { known: [] } });
  });

  it('a key that is no module name, or the built-in, is refused by /config-validation with the key', () => {
    const [bad] = validateConfigMap('config-modules', { Stateful_1: 'x' });
    expect(bad?.path).toBe('Stateful_1');
    expect(bad?.message).toMatch(/^module name must be a DNS-1123 label: /);
    expect(validateConfigMap('config-modules', { knative: 'x' })).toEqual([
      { path: 'knative', message: '"knative" is the built-in module; it is always known and may not be listed' },
    ]);
    expect(validateConfigMap('config-modules', { stateful: 'x' })).toEqual([]);
  });
});

describe("a foreign Revision's own content token", () => {
  const base = revision('hello-00001', 'default', withRevAnnotations({ 'tidal.dev/module': 'stateful' }));
  const withConditions = (conditions: Revision['status'] extends infer S ? (S extends { conditions?: infer C } ? C : never) : never): Revision => ({
    ...structuredClone(base),
    status: { conditions },
  });

  it('changes when the operator writes its conditions, not when Tidal writes Ready (its own echo)', () => {
    const a = withConditions([{ type: 'ResourcesAvailable', status: 'Unknown', reason: 'AwaitingModule' }]);
    const b = withConditions([{ type: 'ResourcesAvailable', status: 'True' }]);
    const c = withConditions([
      { type: 'ResourcesAvailable', status: 'True' },
      { type: 'Ready', status: 'True', lastTransitionTime: 'x' },
    ]);
    expect(contentToken(a, 'self')).not.toBe(contentToken(b, 'self'));
    expect(contentToken(b, 'self')).toBe(contentToken(c, 'self'));
  });

  it("a Revision of Tidal's own module ignores its status as before", () => {
    const own = revision('hello-00001', 'default');
    const withStatus: Revision = { ...own, status: { conditions: [{ type: 'ResourcesAvailable', status: 'True' }] } };
    expect(contentToken(withStatus, 'self')).toBe(contentToken(own, 'self'));
  });
});
