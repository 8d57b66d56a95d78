// Canonical JSON text, for hashes that must not depend on the order keys were inserted in. Pure.

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
