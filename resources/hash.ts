// The `serving.knative.dev/deployment-hash` label: FNV-32a over a stable dump of the desired Deployment, base36.
import { utf8Encode } from './md5.js';

const FNV32_OFFSET_BASIS = 0x811c9dc5;
const FNV32_PRIME = 0x01000193;

/** FNV-1a, 32 bits, over the UTF-8 bytes of `s` (Go: `hash/fnv.New32a`). Unsigned. */
export function fnv32a(s: string): number {
  let h = FNV32_OFFSET_BASIS;
  for (const b of utf8Encode(s)) {
    h ^= b;
    h = Math.imul(h, FNV32_PRIME) >>> 0;
  }
  return h >>> 0;
}

/** Lowercase base-36 of an unsigned integer (Go: `strconv.FormatUint(n, 36)`). */
export function toBase36(n: number): string {
  return n.toString(36);
}

/**
 * A canonical JSON text of a plain-JSON value: object keys sorted (by UTF-16 code unit, i.e. `Array.sort`),
 * `undefined` members dropped (as JSON.stringify drops them), arrays kept in order, no whitespace. Equal values give
 * equal text whatever the order their keys were inserted in.
 */
export function stableStringify(value: unknown): string {
  if (value === null || typeof value !== 'object') {
    const text = JSON.stringify(value) as string | undefined;
    return text ?? 'null'; // undefined / functions inside arrays become null, as in JSON.stringify
  }
  if (Array.isArray(value)) {
    return `[${value.map((v) => stableStringify(v)).join(',')}]`;
  }
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, v]) => v !== undefined && typeof v !== 'function')
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${stableStringify(v)}`).join(',')}}`;
}

/** What the deployment hash covers: the Deployment's spec and its metadata maps (without the hash label itself). */
export interface HashInput {
  spec: unknown;
  annotations: Record<string, string> | undefined;
  labels: Record<string, string> | undefined;
}

/**
 * The value of the `serving.knative.dev/deployment-hash` label: base36(FNV-32a(dump)), where the dump is
 * `stableStringify({spec, annotations, labels})`.
 *
 * The dump format is Tidal's own. Knative hashes a Go-specific dump of its typed structs, which cannot be
 * reproduced byte for byte from JSON, so the label values differ from Knative's for the same object. That is
 * harmless: the label is only compared against the value Tidal itself computed for the live Deployment, and equal
 * inputs always give equal hashes (any change of spec, annotations or labels changes the dump).
 */
export function deploymentHash(input: HashInput): string {
  return toBase36(fnv32a(stableStringify({ spec: input.spec, annotations: input.annotations ?? {}, labels: input.labels ?? {} })));
}
