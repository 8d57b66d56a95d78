// config-network (Knative's knative.dev/networking pkg/config/config.go) and the Go templates it carries: the domain
// template (a Route's host name) and the tag template (a tag's host name part). Pure: no I/O, clocks or Node built-ins.
import { ConfigKeyError, ConfigReader, runParser } from './deployment.js';
import { executeMetaPart, parseMetaAction } from './defaults.js';
import type { MetaTemplatePart, TemplateMeta } from './defaults.js';
import { lexGoTemplate } from './go-template.js';
import type { Parsed } from './types.js';
import { IstioIngressClassName } from '../networking.js';

export const NetworkConfigName = 'config-network';

export const DefaultDomainTemplate = '{{.Name}}.{{.Namespace}}.{{.Domain}}';
export const DefaultTagTemplate = '{{.Tag}}-{{.Name}}';
export { IstioIngressClassName } from '../networking.js';
export const CertManagerCertificateClassName = 'cert-manager.certificate.networking.knative.dev';

export type Toggle = 'enabled' | 'disabled';

/** config-network, as Knative's networking Config (the keys Tidal's reconcilers read). */
export interface NetworkConfig {
  /** Go template for a Route's host (`domain-template`); values Name, Namespace, Domain, Annotations, Labels. */
  domainTemplate: string;
  /** Go template for a tag's host name part (`tag-template`); values Name (the route), Tag. */
  tagTemplate: string;
  /** Default KIngress class (`ingress-class`), overridden per Route by the `networking.knative.dev/ingress.class` annotation. */
  ingressClass: string;
  /** Default Certificate class (`certificate-class`). */
  certificateClass: string;
  /** Default gradual-rollout duration in whole seconds (`rollout-duration`), ≥ 0. */
  rolloutDurationSeconds: number;
  /** Whether DomainMapping creates ClusterDomainClaims itself (`autocreate-cluster-domain-claims`). */
  autocreateClusterDomainClaims: boolean;
  /** Scheme of external URLs when no certificate covers the host (`default-external-scheme`). */
  defaultExternalScheme: string;
  /** Per-Route certificates for external domains (`external-domain-tls`, legacy `auto-tls` / `autoTLS`). */
  externalDomainTls: Toggle;
  /** Certificates for cluster-local hosts (`cluster-local-domain-tls`). */
  clusterLocalDomainTls: Toggle;
  /** TLS between Knative components (`system-internal-tls`, legacy boolean `internal-encryption`). */
  systemInternalTls: Toggle;
  /** HTTP behaviour of the ingress (`http-protocol`): serve, redirect to HTTPS, or (deprecated) refuse. */
  httpProtocol: 'enabled' | 'redirected' | 'disabled';
  /** Tidal's own: probe the gateways before marking a KIngress ready (`ingress-readiness-probing`). */
  ingressReadinessProbing: Toggle;
}

/** Knative's spelling of each key, legacy aliases first (the last present key wins), the current key last. */
export const NetworkKeys = {
  domainTemplate: ['domainTemplate', 'domain-template'],
  tagTemplate: ['tagTemplate', 'tag-template'],
  ingressClass: ['ingress.class', 'ingress-class'],
  certificateClass: ['certificate.class', 'certificate-class'],
  rolloutDurationSeconds: ['rolloutDuration', 'rollout-duration'],
  autocreateClusterDomainClaims: ['autocreateClusterDomainClaims', 'autocreate-cluster-domain-claims'],
  defaultExternalScheme: ['defaultExternalScheme', 'default-external-scheme'],
  externalDomainTls: ['autoTLS', 'auto-tls', 'external-domain-tls'],
  clusterLocalDomainTls: ['cluster-local-domain-tls'],
  systemInternalTls: ['internal-encryption', 'system-internal-tls'],
  httpProtocol: ['httpProtocol', 'http-protocol'],
  ingressReadinessProbing: ['ingress-readiness-probing'],
} as const satisfies Record<keyof NetworkConfig, readonly string[]>;

/**
 * Knative's defaults (networking's defaultConfig), plus Tidal's `ingress-readiness-probing: disabled`. hakn's file
 * sets `autocreate-cluster-domain-claims: "true"`; the code default stays Knative's false.
 */
export function defaultNetworkConfig(): NetworkConfig {
  return {
    domainTemplate: DefaultDomainTemplate,
    tagTemplate: DefaultTagTemplate,
    ingressClass: IstioIngressClassName,
    certificateClass: CertManagerCertificateClassName,
    rolloutDurationSeconds: 0,
    autocreateClusterDomainClaims: false,
    defaultExternalScheme: 'http',
    externalDomainTls: 'disabled',
    clusterLocalDomainTls: 'disabled',
    systemInternalTls: 'disabled',
    httpProtocol: 'enabled',
    ingressReadinessProbing: 'disabled',
  };
}

// ---------------------------------------------------------------------------------------------------------------
// Domain and tag templates: the subset of Go's text/template that Knative's docs use, over Knative's value structs
//
//   domain-template  DomainTemplateValues {Name, Namespace, Domain, Annotations, Labels}
//                    Name = the host name part (route name, or the tag host), Namespace = the Route's namespace,
//                    Domain = the config-domain domain, Annotations / Labels = the Route's.
//   tag-template     TagTemplateValues {Name, Tag}: Name = the route name, Tag = the traffic tag.
//
// Supported actions: `{{.Name}}`, `{{.Namespace}}`, `{{.Domain}}`, `{{.Tag}}` (each only in the template whose struct
// has it), `{{.Annotations.key}}` / `{{.Labels.key}}` (Go prints "<no value>" for a missing key) and
// `{{index .Annotations "key"}}` / `{{index .Labels "key"}}` (missing key → ""), trim markers `{{- … -}}` and comments
// `{{/* … */}}`. Anything else (pipelines, if/with/range, printf, other fields) is rejected when the config map is
// parsed, naming the key. Lexing (trim markers, comments, quoted "}}") is go-template.ts, shared with config-defaults;
// `.Name`, `.Namespace` and the map actions are parsed and executed by config-defaults' ObjectMeta actions
// (`parseMetaAction` / `executeMetaPart`); this file adds `.Domain`, `.Tag` and the per-struct field checks.

type GoTemplatePart = { kind: 'text'; text: string } | { kind: 'value'; field: 'domain' | 'tag' } | { kind: 'meta'; part: MetaTemplatePart };

/** A parsed domain or tag template, or the reason Tidal cannot execute it. */
export type GoTemplate = { ok: true; kind: 'domain' | 'tag'; parts: GoTemplatePart[] } | { ok: false; error: string };

/** The values a domain template reads (Knative's DomainTemplateValues). */
export interface DomainTemplateValues {
  name: string;
  namespace: string;
  domain: string;
  annotations?: Readonly<Record<string, string>> | undefined;
  labels?: Readonly<Record<string, string>> | undefined;
}

/** The values a tag template reads (Knative's TagTemplateValues). */
export interface TagTemplateValues {
  name: string;
  tag: string;
}

interface TemplateStruct {
  goType: string;
  scalars: readonly string[];
  maps: readonly string[];
}

const structs: Record<'domain' | 'tag', TemplateStruct> = {
  domain: { goType: 'DomainTemplateValues', scalars: ['Name', 'Namespace', 'Domain'], maps: ['Annotations', 'Labels'] },
  tag: { goType: 'TagTemplateValues', scalars: ['Name', 'Tag'], maps: [] },
};

function fieldList(s: TemplateStruct): string {
  return [...s.scalars.map((f) => `.${f}`), ...s.maps.flatMap((m) => [`.${m}.<key>`, `index .${m} "<key>"`])].join(', ');
}

/** One action body → a part or an error message. */
function compileAction(body: string, s: TemplateStruct): GoTemplatePart | string {
  const ref = /^(?:index\s+)?\.([A-Za-z_][A-Za-z0-9_]*)/u.exec(body);
  const root = ref?.[1];
  if (ref === null || root === undefined) return `unsupported action "{{${body}}}" (supported: ${fieldList(s)})`;
  if (!s.scalars.includes(root) && !s.maps.includes(root)) {
    return `can't evaluate field ${root} in type ${s.goType} (supported: ${fieldList(s)})`;
  }
  if (s.scalars.includes(root)) {
    if (body !== `.${root}`) {
      const more = /^\.[A-Za-z_][A-Za-z0-9_]*\.([A-Za-z0-9_]+)/u.exec(body);
      return more?.[1] !== undefined
        ? `can't evaluate field ${more[1]} in type string`
        : `unsupported action "{{${body}}}" (supported: ${fieldList(s)})`;
    }
    if (root === 'Domain') return { kind: 'value', field: 'domain' };
    if (root === 'Tag') return { kind: 'value', field: 'tag' };
  }
  // .Name, .Namespace and the map lookups: the same ObjectMeta actions as config-defaults' name templates.
  const part = parseMetaAction(body);
  if (typeof part === 'string') return `unsupported action "{{${body}}}" (supported: ${fieldList(s)})`;
  return { kind: 'meta', part };
}

function compile(src: string, kind: 'domain' | 'tag'): GoTemplate {
  const segments = lexGoTemplate(src);
  if (typeof segments === 'string') return { ok: false, error: segments };
  const parts: GoTemplatePart[] = [];
  for (const seg of segments) {
    if (seg.kind === 'text') {
      parts.push(seg);
      continue;
    }
    const part = compileAction(seg.body, structs[kind]);
    if (typeof part === 'string') return { ok: false, error: part };
    parts.push(part);
  }
  return { ok: true, kind, parts };
}

/** Parses a domain template (fields of DomainTemplateValues; see the supported subset above). */
export function parseDomainTemplate(src: string): GoTemplate {
  return compile(src, 'domain');
}

/** Parses a tag template (fields of TagTemplateValues: `.Name`, `.Tag`). */
export function parseTagTemplate(src: string): GoTemplate {
  return compile(src, 'tag');
}

function execute(t: Extract<GoTemplate, { ok: true }>, meta: TemplateMeta, values: { domain?: string; tag?: string }): string {
  let out = '';
  for (const p of t.parts) {
    if (p.kind === 'text') out += p.text;
    else if (p.kind === 'value') out += values[p.field] ?? '';
    else out += executeMetaPart(p.part, meta);
  }
  return out;
}

/** Executes a parsed domain template. */
export function executeDomainTemplate(t: Extract<GoTemplate, { ok: true }>, v: DomainTemplateValues): string {
  const meta: TemplateMeta = { name: v.name, namespace: v.namespace };
  if (v.annotations !== undefined) meta.annotations = { ...v.annotations };
  if (v.labels !== undefined) meta.labels = { ...v.labels };
  return execute(t, meta, { domain: v.domain });
}

/** Executes a parsed tag template. */
export function executeTagTemplate(t: Extract<GoTemplate, { ok: true }>, v: TagTemplateValues): string {
  return execute(t, { name: v.name }, { tag: v.tag });
}

// ---------------------------------------------------------------------------------------------------------------
// Knative's checkDomainTemplate: render with sample values, then `url.Parse("https://" + rendered)` must succeed with
// a non-empty host name and a request URI of "/" (no path, no query). The parts of Go's url.Parse that can reject a
// rendered host are reproduced below.

/** The sample values Knative renders a domain template with when validating config-network. */
export const DomainTemplateSample: Readonly<DomainTemplateValues> = { name: 'foo', namespace: 'bar', domain: 'baz.com' };

const hexDigit = /^[0-9A-Fa-f]$/u;

/** Go's url.unescape validation: every "%" starts a two-hex-digit escape (host mode: no escaped ASCII but %25). */
function badEscape(s: string, host: boolean): string | undefined {
  for (let i = 0; i < s.length; i++) {
    if (s[i] !== '%') continue;
    const esc = s.slice(i, i + 3);
    if (!hexDigit.test(s[i + 1] ?? '') || !hexDigit.test(s[i + 2] ?? '')) return `invalid URL escape ${JSON.stringify(esc)}`;
    if (host && parseInt(s[i + 1] ?? '0', 16) < 8 && esc !== '%25') return `invalid URL escape ${JSON.stringify(esc)}`;
    i += 2;
  }
  return undefined;
}

/** Characters Go's url package allows unescaped in a host (shouldEscape(c, encodeHost) is false), besides ≥ 0x80. */
const hostChar = /^[A-Za-z0-9\-_.~!$&'()*+,;=:[\]<>"]$/u;
const userinfoChar = /^[A-Za-z0-9\-._:~!$&'()*+,;=%@]$/u;

function validOptionalPort(port: string): boolean {
  return port === '' || /^:\d*$/u.test(port);
}

/**
 * Why `https://<rendered>` is not a URL with a host and nothing else (Knative's checkDomainTemplate), or undefined
 * when it is.
 */
export function templateHostError(rendered: string): string | undefined {
  const raw = `https://${rendered}`;
  if ([...raw].some((c) => c.charCodeAt(0) < 0x20 || c.charCodeAt(0) === 0x7f)) return 'invalid control character in URL';
  const hash = raw.indexOf('#');
  const beforeFragment = hash === -1 ? raw : raw.slice(0, hash);
  if (hash !== -1) {
    const bad = badEscape(raw.slice(hash + 1), false);
    if (bad !== undefined) return bad;
  }
  let rest = beforeFragment.slice('https:'.length);
  let query: string | undefined;
  if (rest.endsWith('?') && rest.indexOf('?') === rest.length - 1) {
    query = '';
    rest = rest.slice(0, -1);
  } else if (rest.includes('?')) {
    query = rest.slice(rest.indexOf('?') + 1);
    rest = rest.slice(0, rest.indexOf('?'));
  }
  let authority = rest.slice(2);
  let path = '';
  const slash = authority.indexOf('/');
  if (slash !== -1) {
    path = authority.slice(slash);
    authority = authority.slice(0, slash);
  }
  let host = authority;
  const at = authority.lastIndexOf('@');
  if (at !== -1) {
    const userinfo = authority.slice(0, at);
    if (![...userinfo].every((c) => userinfoChar.test(c))) return 'invalid userinfo';
    const bad = badEscape(userinfo, false);
    if (bad !== undefined) return bad;
    host = authority.slice(at + 1);
  }
  let hostname: string;
  if (host.startsWith('[')) {
    const close = host.lastIndexOf(']');
    if (close === -1) return "missing ']' in host";
    const port = host.slice(close + 1);
    if (!validOptionalPort(port)) return `invalid port ${JSON.stringify(port)} after host`;
    hostname = host.slice(1, close);
  } else {
    const colon = host.lastIndexOf(':');
    if (colon !== -1 && !validOptionalPort(host.slice(colon))) return `invalid port ${JSON.stringify(host.slice(colon))} after host`;
    for (const c of host) {
      if (c !== '%' && c.charCodeAt(0) < 0x80 && !hostChar.test(c)) return `invalid character ${JSON.stringify(c)} in host name`;
    }
    const bad = badEscape(host, true);
    if (bad !== undefined) return bad;
    hostname = colon === -1 ? host : host.slice(0, colon);
  }
  const badPath = badEscape(path, false);
  if (badPath !== undefined) return badPath;
  if (hostname === '') return 'empty hostname';
  const requestURI = (path === '' ? '/' : path) + (query !== undefined ? `?${query}` : '');
  if (requestURI !== '/') return `domain template has url path: ${requestURI}`;
  return undefined;
}

// ---------------------------------------------------------------------------------------------------------------
// config-network

function toggle(r: ConfigReader, keys: readonly string[], def: Toggle): Toggle {
  const raw = r.raw(keys);
  if (raw === undefined) return def;
  const v = raw.value.toLowerCase();
  if (v === '') return def;
  if (v === 'enabled' || v === 'disabled') return v;
  throw new ConfigKeyError(raw.key, `must be "Enabled" or "Disabled" (any case), got ${JSON.stringify(raw.value)}`);
}

/**
 * Parses config-network's data with Knative's rules:
 *   - legacy keys (`domainTemplate`, `ingress.class`, `autoTLS`, …) are read, the current key wins;
 *   - `rollout-duration` is an integer ≥ 0; `autocreate-cluster-domain-claims` a Go boolean;
 *   - `domain-template` must parse, and rendered with Name "foo", Namespace "bar", Domain "baz.com" (no annotations
 *     or labels) give `https://<result>` with a host and no path or query. So `{{.Annotations.x}}` (which renders
 *     "<no value>") is rejected where `{{index .Annotations "x"}}` is not, exactly as in Knative;
 *   - `tag-template` must parse and execute with Name "foo", Tag "v2" (only `.Name` and `.Tag` exist there);
 *   - `external-domain-tls` is enabled only by "enabled" (any case): other values mean disabled, as in Knative;
 *   - `cluster-local-domain-tls`, `system-internal-tls`, `http-protocol` (Enabled / Redirected / Disabled) and Tidal's
 *     `ingress-readiness-probing` accept only their values, in any case; the boolean `internal-encryption: "true"`
 *     turns system-internal-tls on unless that key says "enabled" itself.
 * Keys Tidal does not use (enable-mesh-pod-addressability, mesh-compatibility-mode, namespace-wildcard-cert-selector,
 * `_example`, …) are ignored.
 */
export function parseNetworkConfig(data: Readonly<Record<string, string>>): Parsed<NetworkConfig> {
  return runParser(NetworkConfigName, () => {
    const r = new ConfigReader(data);
    const d = defaultNetworkConfig();
    const K = NetworkKeys;

    const rollout = r.int(K.rolloutDurationSeconds, d.rolloutDurationSeconds);
    if (rollout < 0) {
      const key = r.raw(K.rolloutDurationSeconds)?.key ?? 'rollout-duration';
      throw new ConfigKeyError(key, `must be a non-negative integer number of seconds, got ${rollout}`);
    }

    const domainTemplate = r.string(K.domainTemplate, d.domainTemplate);
    const domainKey = r.raw(K.domainTemplate)?.key ?? 'domain-template';
    const dt = parseDomainTemplate(domainTemplate);
    if (!dt.ok) throw new ConfigKeyError(domainKey, `invalid template ${JSON.stringify(domainTemplate)}: ${dt.error}`);
    const sample = executeDomainTemplate(dt, DomainTemplateSample);
    const hostError = templateHostError(sample);
    if (hostError !== undefined) {
      throw new ConfigKeyError(
        domainKey,
        `must render a host name without path: ${JSON.stringify(domainTemplate)} renders ${JSON.stringify(sample)} for Name "foo", Namespace "bar", Domain "baz.com": ${hostError}`,
      );
    }

    const tagTemplate = r.string(K.tagTemplate, d.tagTemplate);
    const tt = parseTagTemplate(tagTemplate);
    if (!tt.ok) throw new ConfigKeyError(r.raw(K.tagTemplate)?.key ?? 'tag-template', `invalid template ${JSON.stringify(tagTemplate)}: ${tt.error}`);

    // external-domain-tls: "enabled" (any case) or off; the current key wins over auto-tls and autoTLS.
    const ext = r.raw(K.externalDomainTls);
    const externalDomainTls: Toggle = ext === undefined ? d.externalDomainTls : ext.value.toLowerCase() === 'enabled' ? 'enabled' : 'disabled';

    // system-internal-tls, with the deprecated boolean internal-encryption as a fallback.
    const internalEncryption = r.bool(['internal-encryption'], false);
    let systemInternalTls = toggle(r, ['system-internal-tls'], 'disabled');
    if (systemInternalTls === 'disabled' && internalEncryption) systemInternalTls = 'enabled';

    let httpProtocol = d.httpProtocol;
    const http = r.raw(K.httpProtocol);
    if (http !== undefined && http.value !== '') {
      const v = http.value.toLowerCase();
      if (v !== 'enabled' && v !== 'redirected' && v !== 'disabled') {
        throw new ConfigKeyError(http.key, `must be "Enabled", "Redirected" or "Disabled" (any case), got ${JSON.stringify(http.value)}`);
      }
      httpProtocol = v;
    }

    return {
      domainTemplate,
      tagTemplate,
      ingressClass: r.string(K.ingressClass, d.ingressClass),
      certificateClass: r.string(K.certificateClass, d.certificateClass),
      rolloutDurationSeconds: rollout,
      autocreateClusterDomainClaims: r.bool(K.autocreateClusterDomainClaims, d.autocreateClusterDomainClaims),
      defaultExternalScheme: r.string(K.defaultExternalScheme, d.defaultExternalScheme),
      externalDomainTls,
      clusterLocalDomainTls: toggle(r, K.clusterLocalDomainTls, d.clusterLocalDomainTls),
      systemInternalTls,
      httpProtocol,
      ingressReadinessProbing: toggle(r, K.ingressReadinessProbing, d.ingressReadinessProbing),
    };
  });
}
