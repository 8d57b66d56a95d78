// deploy/config/*.yaml against the parsers: the active keys parse, and every `_example` value is the code's default.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import {
  AutoscalerKeys,
  AutoscalerOtherDefaults,
  DefaultsKeys,
  DeploymentKeys,
  defaultAutoscalerConfig,
  defaultDefaultsConfig,
  defaultDeploymentConfig,
  defaultGcConfig,
  GcKeys,
  parseAutoscalerConfig,
  parseGcConfig,
  parseDefaultsConfig,
  parseDeploymentConfig,
} from '../../../api/config/index.js';
import type { Parsed } from '../../../api/config/index.js';

interface ConfigMap {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace: string; labels: Record<string, string> };
  data: Record<string, string>;
}

function load(file: string): ConfigMap {
  const path = fileURLToPath(new URL(`../../../deploy/config/${file}`, import.meta.url));
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

/** Keys the `_example` block mentions only in comments ("# key: value", for defaults that are unset). */
function commentedKeys(example: string): Set<string> {
  const keys = new Set<string>();
  for (const line of example.split('\n')) {
    const m = /^\s*#\s*([a-z][a-z0-9-]*):\s/u.exec(line);
    if (m?.[1] !== undefined) keys.add(m[1]);
  }
  return keys;
}

interface Case {
  file: string;
  name: string;
  parseFn: (data: Record<string, string>) => Parsed<unknown>;
  defaults: () => unknown;
  keys: Record<string, readonly string[]>;
  /** Keys validated but not kept, with their documented defaults. */
  other: Record<string, string>;
  active: Record<string, string>;
}

/** Knative Serving v1.22.1's released queue-proxy, as that release's serving-core.yaml names it. */
const releasedQueueProxy =
  'gcr.io/knative-releases/knative.dev/serving/cmd/queue@sha256:b1af8bda6c1d32b1cf5fbf8f1f6068c5007a5cebf091039fdea83b88b1fd87f4';

const cases: Case[] = [
  {
    file: 'config-deployment.yaml',
    name: 'config-deployment',
    parseFn: parseDeploymentConfig,
    defaults: defaultDeploymentConfig,
    keys: DeploymentKeys,
    other: {},
    active: {
      'queue-sidecar-image': releasedQueueProxy,
      'queue-sidecar-cpu-request': '25m',
      'queue-sidecar-cpu-limit': '1000m',
      'queue-sidecar-memory-request': '50Mi',
      'queue-sidecar-memory-limit': '800Mi',
    },
  },
  {
    file: 'config-defaults.yaml',
    name: 'config-defaults',
    parseFn: parseDefaultsConfig,
    defaults: defaultDefaultsConfig,
    keys: DefaultsKeys,
    other: {},
    active: { 'enable-service-links': 'false', 'container-concurrency': '100' },
  },
  {
    file: 'config-autoscaler.yaml',
    name: 'config-autoscaler',
    parseFn: parseAutoscalerConfig,
    defaults: defaultAutoscalerConfig,
    keys: AutoscalerKeys,
    other: AutoscalerOtherDefaults,
    active: { 'min-scale': '2', 'max-scale': '30', 'target-burst-capacity': '0' },
  },
  {
    file: 'config-gc.yaml',
    name: 'config-gc',
    parseFn: parseGcConfig,
    defaults: defaultGcConfig,
    keys: GcKeys,
    other: {},
    active: {
      'min-non-active-revisions': '1',
      'max-non-active-revisions': '1',
      'retain-since-create-time': 'disabled',
      'retain-since-last-active-time': 'disabled',
    },
  },
];

describe.each(cases)('deploy/config/$file', (c) => {
  const cm = load(c.file);
  const { _example: example = '', ...active } = cm.data;
  const knownKeys = new Set([...Object.values(c.keys).flat(), ...Object.keys(c.other)]);

  it('is the config map Knative names, in knative-serving, labelled as Tidal controller config', () => {
    expect(cm.apiVersion).toBe('v1');
    expect(cm.kind).toBe('ConfigMap');
    expect(cm.metadata.name).toBe(c.name);
    expect(cm.metadata.namespace).toBe('knative-serving');
    expect(cm.metadata.labels).toEqual({ 'app.kubernetes.io/name': 'knative-serving', 'app.kubernetes.io/component': 'controller' });
  });

  it("sets hakn's values as active keys, all known, and they parse", () => {
    expect(active).toEqual(c.active);
    for (const key of Object.keys(active)) expect(knownKeys, key).toContain(key);
    expect(c.parseFn(cm.data)).toMatchObject({ ok: true });
  });

  it('has an _example block whose every value is the default in code', () => {
    const entries = exampleEntries(example);
    expect(entries.length).toBeGreaterThan(0);
    for (const [key, value] of entries) {
      expect(knownKeys, `unknown key ${key} in _example`).toContain(key);
      const alone = c.parseFn({ [key]: value });
      expect(alone, `${key}: ${value}`).toEqual({ ok: true, value: c.defaults() });
      if (key in c.other) expect(value, key).toBe(c.other[key]);
    }
    // The whole block, read as data, is the default configuration too.
    expect(c.parseFn(Object.fromEntries(entries))).toEqual({ ok: true, value: c.defaults() });
  });

  it('documents every key (as an example line, or commented out when its default is unset)', () => {
    const documented = new Set([...exampleEntries(example).map(([k]) => k), ...commentedKeys(example)]);
    for (const aliases of Object.values(c.keys)) {
      const current = aliases[aliases.length - 1] ?? '';
      expect(documented, current).toContain(current);
    }
    for (const key of Object.keys(c.other)) expect(documented, key).toContain(key);
  });

  it('mentions legacy aliases in the _example comments', () => {
    for (const aliases of Object.values(c.keys)) {
      for (const legacy of aliases.slice(0, -1)) expect(example, legacy).toContain(legacy);
    }
  });
});

describe('deploy/config/config-deployment.yaml queue-sidecar-image', () => {
  it("names upstream's released queue-proxy by digest, so Revisions get the sidecar", () => {
    const cm = load('config-deployment.yaml');
    expect(cm.data['queue-sidecar-image']).toBe(releasedQueueProxy);
    expect(cm.data.queueSidecarImage).toBeUndefined();
    const parsed = parseDeploymentConfig(cm.data);
    expect(parsed.ok && parsed.value.queueSidecarImage).toBe(releasedQueueProxy);
  });

  it("is pinned by digest; registries-skipping-tag-resolving stays Knative's list (the sidecar is never resolved)", () => {
    const cm = load('config-deployment.yaml');
    expect(cm.data['queue-sidecar-image']).toMatch(/@sha256:[0-9a-f]{64}$/);
    const parsed = parseDeploymentConfig(cm.data);
    expect(parsed.ok && parsed.value.registriesSkippingTagResolving).toEqual(['kind.local', 'ko.local', 'dev.local']);
  });

  it('absent, the code keeps no sidecar (Knative has no default: it requires the key)', () => {
    expect(defaultDeploymentConfig().queueSidecarImage).toBe('');
    const parsed = parseDeploymentConfig({});
    expect(parsed.ok && parsed.value.queueSidecarImage).toBe('');
  });
});
