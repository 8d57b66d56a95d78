// config-defaults (Knative's pkg/apis/config/defaults.go) and the container-name template it carries.
import type { ObjectMeta } from '../meta.js';
import { ConfigKeyError, ConfigReader, runParser } from './deployment.js';
import { lexGoTemplate } from './go-template.js';
import type { DefaultsConfig, Parsed } from './types.js';

export const DefaultsConfigName = 'config-defaults';

// ---------------------------------------------------------------------------------------------------------------
// Container-name templates: the subset of Go's text/template that Knative's docs use.
//
// Knative executes `container-name-template` / `init-container-name-template` as a Go template over the parent's
// (Service or Configuration) ObjectMeta. Supported here:
//   * literal text;
//   * `{{.Name}}`, `{{.GenerateName}}`, `{{.Namespace}}`, `{{.UID}}`, `{{.ResourceVersion}}`, `{{.Generation}}`;
//   * map lookups `{{.Labels.key}}`, `{{.Annotations.key}}` (Go prints "<no value>" for a missing key) and
//     `{{index .Labels "key"}}` / `{{index .Annotations "key"}}` (missing key → "");
//   * whitespace trim markers `{{- … -}}` and comments `{{/* … */}}` (lexed by go-template.ts, shared with
//     config-network's templates).
// Anything else (pipelines, functions other than index, if/range/with, other ObjectMeta fields) is rejected when the
// config map is parsed, so an unsupported template never reaches defaulting.

/** The parent metadata a name template reads. */
export type TemplateMeta = Pick<
  ObjectMeta,
  'name' | 'generateName' | 'namespace' | 'uid' | 'resourceVersion' | 'generation' | 'labels' | 'annotations'
>;

/** An executable action over ObjectMeta: a scalar field or a map lookup. */
export type MetaTemplatePart =
  | { kind: 'field'; field: 'name' | 'generateName' | 'namespace' | 'uid' | 'resourceVersion' | 'generation' }
  | { kind: 'mapKey'; map: 'labels' | 'annotations'; key: string; missing: string };

type TemplatePart = { kind: 'text'; text: string } | MetaTemplatePart;

const scalarFields: Record<string, Extract<TemplatePart, { kind: 'field' }>['field']> = {
  Name: 'name',
  GenerateName: 'generateName',
  Namespace: 'namespace',
  UID: 'uid',
  ResourceVersion: 'resourceVersion',
  Generation: 'generation',
};
const mapFields: Record<string, 'labels' | 'annotations'> = { Labels: 'labels', Annotations: 'annotations' };

/** A parsed name template, or the reason it is not one Tidal can execute. */
export type NameTemplate = { ok: true; parts: TemplatePart[] } | { ok: false; error: string };

/**
 * One action body (as the lexer gives it: trimmed, no delimiters, no comments) over ObjectMeta → a part, or an
 * error message. network.ts reuses it for the `.Name`, `.Namespace` and map actions of its templates.
 */
export function parseMetaAction(body: string): MetaTemplatePart | string {
  const field = /^\.([A-Za-z_][A-Za-z0-9_]*)(?:\.([A-Za-z0-9_]+))?$/u.exec(body);
  if (field !== null) {
    const [, name = '', key] = field;
    const scalar = scalarFields[name];
    if (scalar !== undefined && key === undefined) return { kind: 'field', field: scalar };
    const map = mapFields[name];
    if (map !== undefined && key !== undefined) return { kind: 'mapKey', map, key, missing: '<no value>' };
    return `unsupported field ".${key === undefined ? name : `${name}.${key}`}" (supported: .Name, .GenerateName, .Namespace, .UID, .ResourceVersion, .Generation, .Labels.<key>, .Annotations.<key>)`;
  }
  const index = /^index\s+\.(Labels|Annotations)\s+"((?:[^"\\]|\\.)*)"$/u.exec(body);
  if (index !== null) {
    const [, name = '', key = ''] = index;
    const map = mapFields[name];
    if (map !== undefined) return { kind: 'mapKey', map, key: JSON.parse(`"${key}"`) as string, missing: '' };
  }
  return `unsupported action "{{${body}}}"`;
}

/** Parses a container-name template (see the supported subset above). */
export function parseNameTemplate(src: string): NameTemplate {
  const segments = lexGoTemplate(src);
  if (typeof segments === 'string') return { ok: false, error: segments };
  const parts: TemplatePart[] = [];
  for (const seg of segments) {
    const part = seg.kind === 'text' ? seg : parseMetaAction(seg.body);
    if (typeof part === 'string') return { ok: false, error: part };
    parts.push(part);
  }
  return { ok: true, parts };
}

/** One action's value over `meta`: Go prints 0 for an absent generation, "" for other absent scalars. */
export function executeMetaPart(p: MetaTemplatePart, meta: TemplateMeta): string {
  if (p.kind === 'field') {
    const v = meta[p.field];
    return v === undefined ? (p.field === 'generation' ? '0' : '') : String(v);
  }
  return meta[p.map]?.[p.key] ?? p.missing;
}

/** Executes a parsed template over `meta` (an absent parent renders like Go's empty ObjectMeta). */
export function executeNameTemplate(tmpl: Extract<NameTemplate, { ok: true }>, meta: TemplateMeta = {}): string {
  return tmpl.parts.map((p) => (p.kind === 'text' ? p.text : executeMetaPart(p, meta))).join('');
}

/**
 * Renders a template string over `meta`. Like Knative, a template that fails renders as '' (parsers reject such
 * templates first, so this only happens for a hand-built config).
 */
export function renderNameTemplate(src: string, meta?: TemplateMeta): string {
  const t = parseNameTemplate(src);
  return t.ok ? executeNameTemplate(t, meta) : '';
}

// ---------------------------------------------------------------------------------------------------------------
// config-defaults

export const DefaultsKeys = {
  revisionTimeoutSeconds: ['revision-timeout-seconds'],
  maxRevisionTimeoutSeconds: ['max-revision-timeout-seconds'],
  revisionResponseStartTimeoutSeconds: ['revision-response-start-timeout-seconds'],
  revisionIdleTimeoutSeconds: ['revision-idle-timeout-seconds'],
  containerConcurrency: ['container-concurrency'],
  containerConcurrencyMaxLimit: ['container-concurrency-max-limit'],
  allowContainerConcurrencyZero: ['allow-container-concurrency-zero'],
  containerNameTemplate: ['container-name-template'],
  initContainerNameTemplate: ['init-container-name-template'],
  enableServiceLinks: ['enable-service-links'],
  revisionCpuRequest: ['revision-cpu-request'],
  revisionCpuLimit: ['revision-cpu-limit'],
  revisionMemoryRequest: ['revision-memory-request'],
  revisionMemoryLimit: ['revision-memory-limit'],
  revisionEphemeralStorageRequest: ['revision-ephemeral-storage-request'],
  revisionEphemeralStorageLimit: ['revision-ephemeral-storage-limit'],
} as const satisfies Record<keyof DefaultsConfig, readonly string[]>;

/**
 * Tidal's defaults: Knative's (timeout 300 s of at most 600 s, idle timeout off, response-start timeout unset,
 * concurrency limit 1000, zero allowed, `user-container` / `init-container`, no resource defaults) with hakn's
 * container-concurrency 100. enable-service-links false is both Knative's and hakn's default.
 */
export function defaultDefaultsConfig(): DefaultsConfig {
  return {
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
  };
}

/** Parses config-defaults' data; cross-key rules as Knative's NewDefaultsConfigFromMap. */
export function parseDefaultsConfig(data: Readonly<Record<string, string>>): Parsed<DefaultsConfig> {
  return runParser(DefaultsConfigName, () => {
    const r = new ConfigReader(data);
    const d = defaultDefaultsConfig();
    const K = DefaultsKeys;

    const template = (keys: readonly [string], def: string): string => {
      const src = r.string(keys, def);
      const t = parseNameTemplate(src);
      if (!t.ok) throw new ConfigKeyError(keys[0], `invalid template ${JSON.stringify(src)}: ${t.error}`);
      return src;
    };

    // enable-service-links is tri-state: "true"/"false" in any case; anything else means "leave the field unset".
    let enableServiceLinks = d.enableServiceLinks;
    const links = r.raw(K.enableServiceLinks);
    if (links !== undefined) {
      const v = links.value.toLowerCase();
      enableServiceLinks = v === 'true' ? true : v === 'false' ? false : undefined;
    }

    const cfg: DefaultsConfig = {
      revisionTimeoutSeconds: r.int(K.revisionTimeoutSeconds, d.revisionTimeoutSeconds),
      maxRevisionTimeoutSeconds: r.int(K.maxRevisionTimeoutSeconds, d.maxRevisionTimeoutSeconds),
      revisionResponseStartTimeoutSeconds: r.has(K.revisionResponseStartTimeoutSeconds) ? r.int(K.revisionResponseStartTimeoutSeconds, 0) : undefined,
      revisionIdleTimeoutSeconds: r.int(K.revisionIdleTimeoutSeconds, d.revisionIdleTimeoutSeconds),
      containerConcurrency: r.int(K.containerConcurrency, d.containerConcurrency),
      containerConcurrencyMaxLimit: r.int(K.containerConcurrencyMaxLimit, d.containerConcurrencyMaxLimit),
      allowContainerConcurrencyZero: r.bool(K.allowContainerConcurrencyZero, d.allowContainerConcurrencyZero),
      containerNameTemplate: template(K.containerNameTemplate, d.containerNameTemplate),
      initContainerNameTemplate: template(K.initContainerNameTemplate, d.initContainerNameTemplate),
      enableServiceLinks,
      revisionCpuRequest: r.quantity(K.revisionCpuRequest, d.revisionCpuRequest),
      revisionCpuLimit: r.quantity(K.revisionCpuLimit, d.revisionCpuLimit),
      revisionMemoryRequest: r.quantity(K.revisionMemoryRequest, d.revisionMemoryRequest),
      revisionMemoryLimit: r.quantity(K.revisionMemoryLimit, d.revisionMemoryLimit),
      revisionEphemeralStorageRequest: r.quantity(K.revisionEphemeralStorageRequest, d.revisionEphemeralStorageRequest),
      revisionEphemeralStorageLimit: r.quantity(K.revisionEphemeralStorageLimit, d.revisionEphemeralStorageLimit),
    };

    const timeout = cfg.revisionTimeoutSeconds;
    if (timeout > cfg.maxRevisionTimeoutSeconds) {
      throw new ConfigKeyError(
        'revision-timeout-seconds',
        `must not exceed max-revision-timeout-seconds (${cfg.maxRevisionTimeoutSeconds}), got ${timeout}`,
      );
    }
    const responseStart = cfg.revisionResponseStartTimeoutSeconds;
    if (responseStart !== undefined && responseStart > 0 && responseStart > timeout) {
      throw new ConfigKeyError(
        'revision-response-start-timeout-seconds',
        `must not exceed revision-timeout-seconds (${timeout}), got ${responseStart}`,
      );
    }
    const idle = cfg.revisionIdleTimeoutSeconds;
    if (idle > 0 && idle > timeout) {
      throw new ConfigKeyError('revision-idle-timeout-seconds', `must not exceed revision-timeout-seconds (${timeout}), got ${idle}`);
    }
    if (cfg.containerConcurrencyMaxLimit < 1 || cfg.containerConcurrencyMaxLimit > 2_147_483_647) {
      throw new ConfigKeyError('container-concurrency-max-limit', `must be between 1 and 2147483647, got ${cfg.containerConcurrencyMaxLimit}`);
    }
    if (cfg.containerConcurrency < 0 || cfg.containerConcurrency > cfg.containerConcurrencyMaxLimit) {
      throw new ConfigKeyError(
        'container-concurrency',
        `must be between 0 and container-concurrency-max-limit (${cfg.containerConcurrencyMaxLimit}), got ${cfg.containerConcurrency}`,
      );
    }
    return cfg;
  });
}
