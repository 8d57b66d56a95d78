// knative/pkg configmap.Checksum: the `knative.dev/example-checksum` annotation a shipped config map carries for its
// `_example` block, so that an edit made inside `_example` by mistake is refused. CRC-32 (IEEE) of the block with
// surrounding space trimmed and every run of newlines replaced by the two characters `\n`, as 8 hex digits. Pure.

export const ExampleKey = '_example';
export const ExampleChecksumAnnotation = 'knative.dev/example-checksum';

const crcTable: readonly number[] = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});

/** The UTF-8 bytes of `s`. */
function utf8(s: string): number[] {
  const out: number[] = [];
  for (const ch of s) {
    const cp = ch.codePointAt(0) ?? 0;
    if (cp < 0x80) out.push(cp);
    else if (cp < 0x800) out.push(0xc0 | (cp >> 6), 0x80 | (cp & 63));
    else if (cp < 0x10000) out.push(0xe0 | (cp >> 12), 0x80 | ((cp >> 6) & 63), 0x80 | (cp & 63));
    else out.push(0xf0 | (cp >> 18), 0x80 | ((cp >> 12) & 63), 0x80 | ((cp >> 6) & 63), 0x80 | (cp & 63));
  }
  return out;
}

function crc32(bytes: readonly number[]): number {
  let c = 0xffffffff;
  for (const b of bytes) c = (crcTable[(c ^ b) & 0xff] ?? 0) ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

/** configmap.Checksum(value). */
export function exampleChecksum(value: string): string {
  const normalized = value.trim().replace(/(?:\r?\n)+/gu, '\\n');
  return crc32(utf8(normalized)).toString(16).padStart(8, '0');
}
