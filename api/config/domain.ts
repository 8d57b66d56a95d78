// config-domain (Knative's pkg/reconciler/route/config/domain.go): which domain a Route lives under, chosen by label
// selectors. Pure: no I/O, clocks or Node built-ins, and no YAML library (api/ imports nothing outside api/), so the
// small part of YAML a config-domain value uses is read here.
import { runParser, ConfigKeyError } from './deployment.js';
import { Labels } from '../labels.js';
import type { Parsed } from './types.js';

export const DomainConfigName = 'config-domain';

/** The cluster domain Kubernetes Services live under (Knative's network.GetClusterDomainName() default). */
export const DefaultClusterDomain = 'cluster.local';

export { VisibilityClusterLocal } from '../networking.js';
import { VisibilityClusterLocal } from '../networking.js';

/** Knative's DomainTypeWildcard: every selector-less (default) entry is of this type. */
export const DomainTypeWildcard = 'wildcard';

/** `svc.<cluster-domain>`: the domain of cluster-local Routes, and the default when config-domain names no default. */
export function clusterLocalDomain(clusterDomain: string = DefaultClusterDomain): string {
  return `svc.${clusterDomain}`;
}

/** One config-domain entry: routes whose labels include every selector pair live under this domain. */
export interface DomainEntry {
  /** Label key → required value; empty for a default (wildcard) entry. */
  selector: Record<string, string>;
  /** Knative's domain type: "wildcard" for default entries, else the entry's `type` (usually ""). */
  type: string;
}

/** config-domain: domain → entry (Knative's Domain). Never empty: a default entry always exists. */
export interface DomainConfig {
  domains: Record<string, DomainEntry>;
}

/** Knative's default when the config map names no selector-less domain: `svc.cluster.local`, i.e. cluster-local. */
export function defaultDomainConfig(clusterDomain: string = DefaultClusterDomain): DomainConfig {
  return { domains: { [clusterLocalDomain(clusterDomain)]: { selector: {}, type: DomainTypeWildcard } } };
}

// ---------------------------------------------------------------------------------------------------------------
// A minimal YAML reader, enough for config-domain values as Knative's docs and users write them:
//   ""                                  (no selector: a default domain)
//   selector:\n  app: prod\n  tier: web   (block mappings, nested by indentation; `# comments`)
//   selector: {app: prod, tier: web}      (flow mappings and sequences, also JSON: {"selector": {"app": "prod"}})
//   type: wildcard
// Scalars may be plain, 'single-quoted' or "double-quoted" (JSON-style escapes). Block scalars (| >), anchors, tags and
// multi-document streams are not supported and are rejected with the line they are on. As with Knative's
// sigs.k8s.io/yaml, unknown keys are ignored, a later duplicate key wins, null selector values become "", and the
// YAML 1.1 booleans (yes/no/on/off/true/false, any of their cases) become "true"/"false" when a string is expected.
// Numbers are kept as written (Knative would reformat e.g. `007` to "7").

type YamlNode =
  | { kind: 'scalar'; value: string; plain: boolean }
  | { kind: 'map'; entries: Map<string, YamlNode> }
  | { kind: 'seq'; items: YamlNode[] }
  | { kind: 'null' };

class YamlError extends Error {}

interface Line {
  no: number;
  indent: number;
  text: string;
}

const nullWords = new Set(['', '~', 'null', 'Null', 'NULL']);

function unquoteDouble(body: string): string {
  let out = '';
  for (let i = 0; i < body.length; i++) {
    const c = body[i];
    if (c !== '\\') {
      out += c;
      continue;
    }
    const e = body[++i];
    const simple: Record<string, string> = {
      n: '\n',
      t: '\t',
      r: '\r',
      '0': '\0',
      '"': '"',
      '\\': '\\',
      '/': '/',
      ' ': ' ',
      b: '\b',
      f: '\f',
      e: '\u001b',
      a: '\u0007',
      v: '\v',
    };
    const mapped = e === undefined ? undefined : simple[e];
    if (mapped !== undefined) {
      out += mapped;
      continue;
    }
    const width = e === 'x' ? 2 : e === 'u' ? 4 : e === 'U' ? 8 : 0;
    const hex = body.slice(i + 1, i + 1 + width);
    if (width === 0 || !new RegExp(`^[0-9A-Fa-f]{${width}}$`, 'u').test(hex))
      throw new YamlError(`invalid escape "\\${e ?? ''}" in double-quoted string`);
    out += String.fromCodePoint(parseInt(hex, 16));
    i += width;
  }
  return out;
}

/** Reads a quoted scalar starting at `s[start]`; returns it and the index after the closing quote. */
function readQuoted(s: string, start: number): { value: string; end: number } {
  const q = s[start];
  if (q === "'") {
    let out = '';
    for (let i = start + 1; i < s.length; i++) {
      if (s[i] === "'") {
        if (s[i + 1] === "'") {
          out += "'";
          i++;
          continue;
        }
        return { value: out, end: i + 1 };
      }
      out += s[i];
    }
    throw new YamlError('unterminated single-quoted string');
  }
  for (let i = start + 1; i < s.length; i++) {
    if (s[i] === '\\') i++;
    else if (s[i] === '"') return { value: unquoteDouble(s.slice(start + 1, i)), end: i + 1 };
  }
  throw new YamlError('unterminated double-quoted string');
}

/** Strips a ` # comment` outside quotes from a line. */
function stripComment(s: string): string {
  let quote: string | undefined;
  for (let i = 0; i < s.length; i++) {
    const c = s[i];
    if (quote === '"' && c === '\\') i++;
    else if (quote !== undefined) {
      if (c === quote) quote = undefined;
    } else if (c === '"' || c === "'") quote = c;
    else if (c === '#' && (i === 0 || s[i - 1] === ' ' || s[i - 1] === '\t')) return s.slice(0, i).trimEnd();
  }
  return s.trimEnd();
}

function scalar(raw: string): YamlNode {
  const v = raw.trim();
  if (v.startsWith('"') || v.startsWith("'")) {
    const q = readQuoted(v, 0);
    if (v.slice(q.end).trim() !== '') throw new YamlError(`unexpected text after quoted string: ${JSON.stringify(v)}`);
    return { kind: 'scalar', value: q.value, plain: false };
  }
  if (/^[&*!|>%@`]/u.test(v)) throw new YamlError(`unsupported YAML (anchor, alias, tag or block scalar): ${JSON.stringify(v)}`);
  if (nullWords.has(v)) return { kind: 'null' };
  return { kind: 'scalar', value: v, plain: true };
}

/** Recursive-descent reader for a flow collection ({…} or […]) spanning `s`. */
function readFlow(s: string): YamlNode {
  let i = 0;
  const ws = (): void => {
    while (i < s.length && /\s/u.test(s[i] ?? '')) i++;
  };
  const node = (stops: string): YamlNode => {
    ws();
    const c = s[i];
    if (c === '{' || c === '[') return collection();
    if (c === '"' || c === "'") {
      const q = readQuoted(s, i);
      i = q.end;
      return { kind: 'scalar', value: q.value, plain: false };
    }
    const start = i;
    while (i < s.length && !stops.includes(s[i] ?? '') && !(s[i] === ':' && /[\s,}\]]/u.test(s[i + 1] ?? ' '))) i++;
    return scalar(s.slice(start, i));
  };
  const collection = (): YamlNode => {
    const open = s[i++];
    const close = open === '{' ? '}' : ']';
    const entries = new Map<string, YamlNode>();
    const items: YamlNode[] = [];
    for (;;) {
      ws();
      if (s[i] === close) {
        i++;
        break;
      }
      if (open === '{') {
        const key = node(',}');
        if (key.kind === 'map' || key.kind === 'seq') throw new YamlError('a mapping key must be a scalar');
        ws();
        let value: YamlNode = { kind: 'null' };
        if (s[i] === ':') {
          i++;
          value = node(',}');
        }
        entries.set(key.kind === 'null' ? '' : key.value, value);
      } else {
        items.push(node(',]'));
      }
      ws();
      if (s[i] === ',') i++;
      else if (s[i] !== close) throw new YamlError(`expected "," or "${close}" in flow collection: ${JSON.stringify(s)}`);
    }
    return open === '{' ? { kind: 'map', entries } : { kind: 'seq', items };
  };
  ws();
  const out = node('');
  ws();
  if (i < s.length) throw new YamlError(`unexpected text after flow collection: ${JSON.stringify(s.slice(i))}`);
  return out;
}

/** Splits `key: value` (or `key:`) outside quotes; undefined when the line is not a mapping entry. */
function splitEntry(text: string): { key: string; rest: string } | undefined {
  let i = 0;
  let key: string;
  if (text.startsWith('"') || text.startsWith("'")) {
    const q = readQuoted(text, 0);
    key = q.value;
    i = q.end;
    while (text[i] === ' ' || text[i] === '\t') i++;
    if (text[i] !== ':') return undefined;
  } else {
    const m = /:(?:[ \t]|$)/u.exec(text);
    if (m === null) return undefined;
    i = m.index;
    key = text.slice(0, i).trim();
    const k = scalar(key);
    key = k.kind === 'scalar' ? k.value : '';
  }
  return { key, rest: text.slice(i + 1).trim() };
}

/** Parses the block node made of `lines[from…]` at exactly `indent`; returns it and the next unread index. */
function readBlock(lines: Line[], from: number, indent: number): { node: YamlNode; next: number } {
  const first = lines[from];
  if (first === undefined) return { node: { kind: 'null' }, next: from };
  if (first.text === '-' || first.text.startsWith('- ')) {
    const items: YamlNode[] = [];
    let i = from;
    while (i < lines.length) {
      const line = lines[i];
      if (line === undefined || line.indent !== indent || !(line.text === '-' || line.text.startsWith('- '))) break;
      const rest = line.text.slice(1).trim();
      i++;
      const child = lines[i];
      if (rest === '' && child !== undefined && child.indent > indent) {
        const r = readBlock(lines, i, child.indent);
        items.push(r.node);
        i = r.next;
      } else if (rest.startsWith('{') || rest.startsWith('[')) items.push(readFlow(rest));
      else if (rest !== '' && splitEntry(rest) !== undefined) throw new YamlError(`line ${line.no}: mappings inside "- " items are not supported`);
      else items.push(scalar(rest));
    }
    return { node: { kind: 'seq', items }, next: i };
  }
  const entries = new Map<string, YamlNode>();
  let i = from;
  while (i < lines.length) {
    const line = lines[i];
    if (line === undefined || line.indent < indent) break;
    if (line.indent > indent) throw new YamlError(`line ${line.no}: unexpected indentation`);
    const entry = splitEntry(line.text);
    if (entry === undefined) throw new YamlError(`line ${line.no}: expected "key: value", got ${JSON.stringify(line.text)}`);
    i++;
    const child = lines[i];
    if (entry.rest === '' && child !== undefined && (child.indent > indent || (child.indent === indent && child.text.startsWith('-')))) {
      const r = readBlock(lines, i, child.indent);
      entries.set(entry.key, r.node);
      i = r.next;
    } else if (entry.rest.startsWith('{') || entry.rest.startsWith('[')) {
      entries.set(entry.key, readFlow(entry.rest));
    } else {
      entries.set(entry.key, scalar(entry.rest));
    }
  }
  return { node: { kind: 'map', entries }, next: i };
}

/** Parses a YAML document (the subset above). */
function readYaml(src: string): YamlNode {
  const lines: Line[] = [];
  src.split(/\r?\n/u).forEach((raw, idx) => {
    const text = stripComment(raw);
    if (text.trim() === '') return;
    if (/^[ ]*\t/u.test(text)) throw new YamlError(`line ${idx + 1}: tabs are not allowed in indentation`);
    if (/^(---|\.\.\.)(\s|$)/u.test(text)) throw new YamlError(`line ${idx + 1}: multi-document streams are not supported`);
    lines.push({ no: idx + 1, indent: text.length - text.trimStart().length, text: text.trim() });
  });
  const first = lines[0];
  if (first === undefined) return { kind: 'null' };
  if (first.text.startsWith('{') || first.text.startsWith('[')) return readFlow(lines.map((l) => l.text).join(' '));
  if (lines.length === 1 && splitEntry(first.text) === undefined && !first.text.startsWith('-')) return scalar(first.text);
  const r = readBlock(lines, 0, first.indent);
  const extra = lines[r.next];
  if (extra !== undefined) throw new YamlError(`line ${extra.no}: unexpected indentation`);
  return r.node;
}

const yamlTrue = new Set(['y', 'Y', 'yes', 'Yes', 'YES', 'true', 'True', 'TRUE', 'on', 'On', 'ON']);
const yamlFalse = new Set(['n', 'N', 'no', 'No', 'NO', 'false', 'False', 'FALSE', 'off', 'Off', 'OFF']);

/** A scalar read into a Go string (sigs.k8s.io/yaml's conversion for string targets). */
function asString(n: YamlNode, what: string): string {
  if (n.kind === 'null') return '';
  if (n.kind !== 'scalar') throw new YamlError(`${what} must be a string, got a ${n.kind === 'map' ? 'mapping' : 'sequence'}`);
  if (n.plain && yamlTrue.has(n.value)) return 'true';
  if (n.plain && yamlFalse.has(n.value)) return 'false';
  return n.value;
}

/** One config-domain value → its entry (Knative unmarshals `{selector: map[string]string, type: string}`). */
function parseDomainEntry(value: string): DomainEntry {
  const doc = readYaml(value);
  if (doc.kind === 'null') return { selector: {}, type: '' };
  if (doc.kind !== 'map') {
    throw new YamlError(`must be a YAML mapping such as "selector:\\n  app: prod", got a ${doc.kind === 'seq' ? 'sequence' : 'string'}`);
  }
  const selector: Record<string, string> = {};
  const sel = doc.entries.get('selector');
  if (sel !== undefined && sel.kind !== 'null') {
    if (sel.kind !== 'map') throw new YamlError('selector must be a mapping of label keys to values');
    for (const [k, v] of sel.entries) selector[k] = asString(v, `selector value of ${JSON.stringify(k)}`);
  }
  const type = doc.entries.get('type');
  return { selector, type: type === undefined ? '' : asString(type, 'type') };
}

/**
 * Parses config-domain's data as Knative's NewDomainFromConfigMap: every key but `_example` is a domain; a value
 * without a (non-empty) selector is a default entry of type "wildcard"; when there is no default entry,
 * `svc.<cluster-domain>` is added as one, so an empty config-domain makes every Route cluster-local. A value that is
 * not such YAML is reported as `config-domain: <domain>: <reason>`.
 */
export function parseDomainConfig(data: Readonly<Record<string, string>>, clusterDomain: string = DefaultClusterDomain): Parsed<DomainConfig> {
  return runParser(DomainConfigName, () => {
    const domains: Record<string, DomainEntry> = {};
    let hasDefault = false;
    for (const [domain, value] of Object.entries(data)) {
      if (domain === '_example') continue;
      let entry: DomainEntry;
      try {
        entry = parseDomainEntry(value);
      } catch (err) {
        if (err instanceof YamlError) throw new ConfigKeyError(domain, err.message);
        throw err;
      }
      if (Object.keys(entry.selector).length === 0) {
        hasDefault = true;
        entry.type = DomainTypeWildcard;
      }
      domains[domain] = entry;
    }
    if (!hasDefault) domains[clusterLocalDomain(clusterDomain)] = { selector: {}, type: DomainTypeWildcard };
    return { domains };
  });
}

/** True when every selector pair is among `labels` (an empty selector matches everything). */
export function selectorMatches(selector: Readonly<Record<string, string>>, labels: Readonly<Record<string, string>> | undefined): boolean {
  return Object.entries(selector).every(([k, v]) => labels?.[k] === v);
}

/**
 * Knative's LookupDomainForLabels: `networking.knative.dev/visibility: cluster-local` → `svc.<cluster-domain>`;
 * otherwise, among the entries whose selector matches, the one with the most selector keys, ties going to the
 * lexicographically smallest domain. A config built by {@link parseDomainConfig} always has a default, so this
 * never returns "" for it.
 */
export function lookupDomainForLabels(
  cfg: DomainConfig,
  labels: Readonly<Record<string, string>> | undefined,
  clusterDomain: string = DefaultClusterDomain,
): string {
  if (labels?.[Labels.visibility] === VisibilityClusterLocal) return clusterLocalDomain(clusterDomain);
  let domain = '';
  let specificity = -1;
  for (const [k, entry] of Object.entries(cfg.domains)) {
    const s = Object.keys(entry.selector).length;
    if (!selectorMatches(entry.selector, labels) || s < specificity) continue;
    if (s > specificity || k < domain) {
      domain = k;
      specificity = s;
    }
  }
  return domain;
}
