// The `serving.knative.dev/deployment-hash` label: FNV-32a over a stable dump of the desired Deployment, base36.
import { stableStringify } from '../api/stable-json.js';
import { utf8Encode } from './md5.js';

// The canonical JSON text lives in api/ (content tokens use it too); re-exported for the builders here.
export { stableStringify };

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
