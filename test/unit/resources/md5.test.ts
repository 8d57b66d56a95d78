import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { md5Bytes, md5Hex, toHex, utf8Encode } from '../../../resources/md5.js';

describe('md5Hex (pure-JS MD5 for ChildName)', () => {
  it('matches the RFC 1321 test suite and the well-known vectors', () => {
    expect(md5Hex('')).toBe('d41d8cd98f00b204e9800998ecf8427e');
    expect(md5Hex('a')).toBe('0cc175b9c0f1b6a831c399e269772661');
    expect(md5Hex('abc')).toBe('900150983cd24fb0d6963f7d28e17f72');
    expect(md5Hex('message digest')).toBe('f96b697d7cb7938d525a2f31aaf161d0');
    expect(md5Hex('abcdefghijklmnopqrstuvwxyz')).toBe('c3fcd3d76192e4007dfb496cca67e13b');
    expect(md5Hex('The quick brown fox jumps over the lazy dog')).toBe('9e107d9d372bb6826bd81d3542a419d6');
    expect(md5Hex('The quick brown fox jumps over the lazy dog.')).toBe('e4d909c290d0fb1ca068ffaddf22cbd0');
    expect(md5Hex('12345678901234567890123456789012345678901234567890123456789012345678901234567890')).toBe('57edf4a22be3c955ac49da2e2107b67a');
  });

  it('hashes the UTF-8 bytes of multi-byte strings (2-, 3- and 4-byte sequences)', () => {
    expect(md5Hex('héllo wörld ✓ 😀')).toBe('89aa2b820ceff5e2668f906e050e431d');
    expect(toHex(utf8Encode('é✓😀'))).toBe('c3a9e29c93f09f9880');
  });

  it('agrees with node:crypto on every length around the 55/56/64-byte padding boundaries', () => {
    for (let n = 0; n <= 130; n++) {
      const s = 'x'.repeat(n);
      expect(md5Hex(s), `length ${n}`).toBe(createHash('md5').update(s, 'utf8').digest('hex'));
    }
    const bytes = Uint8Array.from({ length: 300 }, (_, i) => (i * 31) & 0xff);
    expect(toHex(md5Bytes(bytes))).toBe(createHash('md5').update(bytes).digest('hex'));
  });

  it('encodes lone surrogates as U+FFFD like TextEncoder', () => {
    expect(utf8Encode('a\ud800b')).toEqual(new TextEncoder().encode('a\ud800b'));
  });
});
