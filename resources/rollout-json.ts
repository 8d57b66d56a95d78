// The KIngress annotation `networking.internal.knative.dev/rollout` read and written exactly as Knative's Go code does
// (`json.Unmarshal` + `Rollout.Validate` in route/reconcile_resources.go `deserializeRollout`, `json.Marshal` in
// route/resources/ingress.go `serializeRollout`). Times are int64 nanoseconds there, beyond 2^53, so numbers are
// kept as their decimal text and checked with BigInt; nothing here goes through JSON.parse's doubles. Pure.
import type { ConfigurationRollout, RevisionRollout, Rollout, RolloutParams } from './rollout.js';

// ---------------------------------------------------------------------------------------------------------------
// A JSON reader that keeps duplicate keys in order and numbers as source text (Go decodes both its own way).

type JsonNode =
  | { kind: 'object'; entries: [string, JsonNode][] }
  | { kind: 'array'; items: JsonNode[] }
  | { kind: 'string'; value: string }
  | { kind: 'number'; text: string }
  | { kind: 'bool' }
  | { kind: 'null' };

class JsonSyntaxError extends Error {}

const whitespace = /[ \t\n\r]*/y;
const stringToken = /"(?:[^"\\\u0000-\u001f]|\\["\\/bfnrt]|\\u[0-9a-fA-F]{4})*"/y;
const numberToken = /-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/y;
const literalToken = /true|false|null/y;

class JsonReader {
  private pos = 0;
  constructor(private readonly text: string) {}

  private skip(): void {
    whitespace.lastIndex = this.pos;
    whitespace.exec(this.text);
    this.pos = whitespace.lastIndex;
  }

  private match(re: RegExp): string | undefined {
    re.lastIndex = this.pos;
    const m = re.exec(this.text);
    if (m === null) return undefined;
    this.pos = re.lastIndex;
    return m[0];
  }

  private expect(c: string): void {
    this.skip();
    if (this.text[this.pos] !== c) throw new JsonSyntaxError(`expected ${c} at ${this.pos}`);
    this.pos++;
  }

  private peek(): string | undefined {
    this.skip();
    return this.text[this.pos];
  }

  document(): JsonNode {
    const v = this.value();
    this.skip();
    if (this.pos !== this.text.length) throw new JsonSyntaxError(`invalid character after top-level value at ${this.pos}`);
    return v;
  }

  private value(): JsonNode {
    const c = this.peek();
    if (c === '{') return this.object();
    if (c === '[') return this.array();
    if (c === '"') return { kind: 'string', value: this.string() };
    const num = this.match(numberToken);
    if (num !== undefined) return { kind: 'number', text: num };
    const lit = this.match(literalToken);
    if (lit === 'null') return { kind: 'null' };
    if (lit !== undefined) return { kind: 'bool' };
    throw new JsonSyntaxError(`invalid character at ${this.pos}`);
  }

  private string(): string {
    const tok = this.match(stringToken);
    if (tok === undefined) throw new JsonSyntaxError(`invalid string at ${this.pos}`);
    return JSON.parse(tok) as string;
  }

  private object(): JsonNode {
    this.expect('{');
    const entries: [string, JsonNode][] = [];
    if (this.peek() === '}') {
      this.pos++;
      return { kind: 'object', entries };
    }
    for (;;) {
      this.skip();
      const key = this.string();
      this.expect(':');
      entries.push([key, this.value()]);
      if (this.peek() === ',') {
        this.pos++;
        continue;
      }
      this.expect('}');
      return { kind: 'object', entries };
    }
  }

  private array(): JsonNode {
    this.expect('[');
    const items: JsonNode[] = [];
    if (this.peek() === ']') {
      this.pos++;
      return { kind: 'array', items };
    }
    for (;;) {
      items.push(this.value());
      if (this.peek() === ',') {
        this.pos++;
        continue;
      }
      this.expect(']');
      return { kind: 'array', items };
    }
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Go's decoding into the Rollout structs: keys matched case-insensitively (Go folds ſ to s and K to k too), unknown
// keys ignored, null leaves a scalar or struct as it is, a later duplicate key decodes into what the earlier one left
// (struct fields merge, slice elements are reused by index), and any type mismatch fails the whole annotation.

class JsonTypeError extends Error {}

const minInt64 = -(2n ** 63n);
const maxInt64 = 2n ** 63n - 1n;

interface DraftRevision {
  revisionName: string;
  percent: bigint;
}
interface DraftParams {
  starttime: bigint;
  nextStepTime: bigint;
  stepDuration: bigint;
  stepSize: bigint;
}
interface DraftConfiguration {
  configurationName: string;
  tag: string;
  percent: bigint;
  revisions: DraftRevision[];
  stepParams: DraftParams;
}

function fold(key: string): string {
  return key
    .replace(/\u017f/gu, 's')
    .replace(/\u212a/gu, 'k')
    .replace(/[A-Z]/gu, (c) => c.toLowerCase());
}

/** The struct field a JSON key decodes into, or undefined (ignored). */
function field<K extends string>(key: string, fields: readonly K[]): K | undefined {
  const f = fold(key);
  return fields.find((name) => name.toLowerCase() === f);
}

function decodeString(node: JsonNode, current: string): string {
  if (node.kind === 'null') return current;
  if (node.kind !== 'string') throw new JsonTypeError(`cannot unmarshal ${node.kind} into string`);
  return node.value;
}

/** Go int / int64 (64-bit): an integer literal in range; a fraction or exponent is a type error. */
function decodeInt(node: JsonNode, current: bigint): bigint {
  if (node.kind === 'null') return current;
  if (node.kind !== 'number' || !/^-?[0-9]+$/u.test(node.text)) throw new JsonTypeError(`cannot unmarshal ${node.kind} into int`);
  const v = BigInt(node.text);
  if (v < minInt64 || v > maxInt64) throw new JsonTypeError(`number ${node.text} overflows int64`);
  return v;
}

function decodeStruct(node: JsonNode, apply: (key: string, value: JsonNode) => void): void {
  if (node.kind === 'null') return;
  if (node.kind !== 'object') throw new JsonTypeError(`cannot unmarshal ${node.kind} into struct`);
  for (const [k, v] of node.entries) apply(k, v);
}

/** A Go slice: null → nil, [] → empty, else elements decoded into the existing ones by index (then truncated). */
function decodeSlice<T>(node: JsonNode, current: T[], decodeElem: (item: JsonNode, existing: T | undefined) => T): T[] {
  if (node.kind === 'null') return [];
  if (node.kind !== 'array') throw new JsonTypeError(`cannot unmarshal ${node.kind} into slice`);
  return node.items.map((item, i) => decodeElem(item, current[i]));
}

function decodeParams(node: JsonNode, p: DraftParams): void {
  decodeStruct(node, (k, v) => {
    const f = field(k, ['starttime', 'nextStepTime', 'stepDuration', 'stepSize'] as const);
    if (f !== undefined) p[f] = decodeInt(v, p[f]);
  });
}

function decodeRevision(node: JsonNode, existing: DraftRevision | undefined): DraftRevision {
  const r = existing ?? { revisionName: '', percent: 0n };
  decodeStruct(node, (k, v) => {
    const f = field(k, ['revisionName', 'percent'] as const);
    if (f === 'revisionName') r.revisionName = decodeString(v, r.revisionName);
    else if (f === 'percent') r.percent = decodeInt(v, r.percent);
  });
  return r;
}

/** A `*ConfigurationRollout` element: null is a nil pointer (upstream's Validate would then panic; here: invalid). */
function decodeConfiguration(node: JsonNode, existing: DraftConfiguration | null | undefined): DraftConfiguration | null {
  if (node.kind === 'null') return null;
  const c = existing ?? {
    configurationName: '',
    tag: '',
    percent: 0n,
    revisions: [],
    stepParams: { starttime: 0n, nextStepTime: 0n, stepDuration: 0n, stepSize: 0n },
  };
  decodeStruct(node, (k, v) => {
    const f = field(k, ['configurationName', 'tag', 'percent', 'revisions', 'stepParams'] as const);
    if (f === 'configurationName' || f === 'tag') c[f] = decodeString(v, c[f]);
    else if (f === 'percent') c.percent = decodeInt(v, c.percent);
    else if (f === 'revisions') c.revisions = decodeSlice(v, c.revisions, decodeRevision);
    else if (f === 'stepParams') decodeParams(v, c.stepParams);
  });
  return c;
}

/** Upstream `Rollout.Validate` over Go's int64 arithmetic (the sum wraps as Go's does). */
function validDraft(configs: readonly (DraftConfiguration | null)[]): configs is DraftConfiguration[] {
  for (const c of configs) {
    if (c === null) return false;
    if (c.percent > 100n) return false;
    if (c.stepParams.stepSize < 0n || c.stepParams.stepSize > c.percent) return false;
    let total = 0n;
    for (const r of c.revisions) total = BigInt.asIntN(64, total + r.percent);
    if (total !== c.percent) return false;
  }
  return true;
}

function toNumber(v: bigint): number {
  if (v < BigInt(Number.MIN_SAFE_INTEGER) || v > BigInt(Number.MAX_SAFE_INTEGER)) throw new JsonTypeError(`${v} is beyond 2^53`);
  return Number(v);
}

function toParams(p: DraftParams): RolloutParams {
  const out: RolloutParams = {};
  if (p.starttime !== 0n) out.startTimeNs = p.starttime.toString();
  if (p.nextStepTime !== 0n) out.nextStepTimeNs = p.nextStepTime.toString();
  if (p.stepDuration !== 0n) out.stepDurationNs = p.stepDuration.toString();
  if (p.stepSize !== 0n) out.stepSize = toNumber(p.stepSize);
  return out;
}

function toConfiguration(c: DraftConfiguration): ConfigurationRollout {
  const out: ConfigurationRollout = { configurationName: c.configurationName, percent: toNumber(c.percent), revisions: [], stepParams: {} };
  if (c.tag !== '') out.tag = c.tag;
  out.revisions = c.revisions.map((r): RevisionRollout => ({ revisionName: r.revisionName, percent: toNumber(r.percent) }));
  out.stepParams = toParams(c.stepParams);
  return out;
}

/**
 * The annotation's Rollout, or undefined where Knative's `deserializeRollout` returns nil: an empty or absent value,
 * JSON that Go's `json.Unmarshal` rejects (syntax, a string or fraction where an int belongs, int64 overflow, …) or a
 * Rollout `Validate` rejects (a configuration over 100 %, a step size below 0 or above its percent, revision percents
 * not summing to the configuration's). `null` gives an empty Rollout, as in Go. Two deliberate differences, both for
 * values only a hand edit produces: a `null` configuration (upstream's Validate dereferences it and panics) and
 * percents or step sizes beyond ±2^53 (not representable here) are rejected too.
 */
export function parseRolloutAnnotation(text: string | undefined): Rollout | undefined {
  if (text === undefined || text === '') return undefined;
  try {
    const root = new JsonReader(text).document();
    let configs: (DraftConfiguration | null)[] = [];
    decodeStruct(root, (k, v) => {
      if (field(k, ['configurations'] as const) !== undefined) configs = decodeSlice(v, configs, decodeConfiguration);
    });
    if (!validDraft(configs)) return undefined;
    return { configurations: configs.map(toConfiguration) };
  } catch (e) {
    if (e instanceof JsonSyntaxError || e instanceof JsonTypeError) return undefined;
    throw e;
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Go's json.Marshal: struct field order, omitempty as declared, HTML-safe string escaping.

/** A string as Go's encoder writes it: `<`, `>`, `&`, U+2028 and U+2029 escaped as \u00XX / \u20XX. */
export function goQuote(s: string): string {
  return JSON.stringify(s).replace(/[<>&\u2028\u2029]/gu, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** An int64 held as decimal text; zero or absent → undefined (omitempty). */
function int64Text(text: string | undefined, name: string): string | undefined {
  if (text === undefined) return undefined;
  if (!/^-?[0-9]+$/u.test(text)) throw new Error(`rollout ${name} is not an integer number of nanoseconds: ${JSON.stringify(text)}`);
  const v = BigInt(text);
  if (v < minInt64 || v > maxInt64) throw new Error(`rollout ${name} overflows int64: ${text}`);
  return v === 0n ? undefined : v.toString();
}

function intText(n: number, name: string): string {
  if (!Number.isInteger(n)) throw new Error(`rollout ${name} is not an integer: ${n}`);
  return BigInt(n).toString();
}

function marshalParams(p: RolloutParams): string {
  const parts: string[] = [];
  const start = int64Text(p.startTimeNs, 'starttime');
  const next = int64Text(p.nextStepTimeNs, 'nextStepTime');
  const duration = int64Text(p.stepDurationNs, 'stepDuration');
  if (start !== undefined) parts.push(`"starttime":${start}`);
  if (next !== undefined) parts.push(`"nextStepTime":${next}`);
  if (duration !== undefined) parts.push(`"stepDuration":${duration}`);
  if (p.stepSize) parts.push(`"stepSize":${intText(p.stepSize, 'stepSize')}`);
  return `{${parts.join(',')}}`;
}

function marshalConfiguration(c: ConfigurationRollout): string {
  let s = `{"configurationName":${goQuote(c.configurationName)}`;
  if (c.tag) s += `,"tag":${goQuote(c.tag)}`;
  s += `,"percent":${intText(c.percent, 'percent')}`;
  if (c.revisions.length) {
    const revs = c.revisions.map((r) => `{"revisionName":${goQuote(r.revisionName)},"percent":${intText(r.percent, 'percent')}}`);
    s += `,"revisions":[${revs.join(',')}]`;
  }
  return `${s},"stepParams":${marshalParams(c.stepParams)}}`;
}

/**
 * The annotation value, byte for byte what Knative's `json.Marshal(rollout)` writes: `{}` for no configurations,
 * `tag` and `revisions` omitted when empty, `stepParams` always present with its zero fields omitted, times and
 * durations as bare int64 nanoseconds.
 */
export function rolloutAnnotation(rollout: Rollout): string {
  if (!rollout.configurations.length) return '{}';
  return `{"configurations":[${rollout.configurations.map(marshalConfiguration).join(',')}]}`;
}
