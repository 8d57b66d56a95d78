// Adler-32 (RFC 1950) in plain JavaScript: net-istio and Knative shorten names with Go's `hash/adler32`, and pure code
// cannot use node:zlib.
import { utf8Encode } from './md5.js';

const MOD = 65521;

/** Go's `adler32.Checksum([]byte(s))`: the checksum of the UTF-8 bytes of `s`, an unsigned 32-bit number. */
export function adler32(s: string): number {
  let a = 1;
  let b = 0;
  for (const byte of utf8Encode(s)) {
    a = (a + byte) % MOD;
    b = (b + a) % MOD;
  }
  return (b * 65536 + a) >>> 0;
}
