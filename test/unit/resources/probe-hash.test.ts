import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ingressProbeHash, sha256Bytes, sha256Hex } from '../../../resources/probe-hash.js';
import { toHex } from '../../../resources/md5.js';

describe('sha256Hex (pure-JS SHA-256)', () => {
  it('matches the FIPS 180-4 / well-known vectors', () => {
    expect(sha256Hex('')).toBe('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
    expect(sha256Hex('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    expect(sha256Hex('abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq')).toBe(
      '248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1',
    );
    expect(sha256Hex('The quick brown fox jumps over the lazy dog')).toBe('d7a8fbb307d7809469ca9abcb0082e4f8d5651e46d3cdb762d02d0bf37c9e592');
    expect(sha256Hex('a'.repeat(1_000_000))).toBe('cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0');
  });

  it('hashes the UTF-8 bytes of multi-byte strings', () => {
    const s = 'héllo wörld ✓ 😀';
    expect(sha256Hex(s)).toBe(createHash('sha256').update(s, 'utf8').digest('hex'));
  });

  it('agrees with node:crypto on every length around the 55/56/64-byte padding boundaries', () => {
    for (let n = 0; n <= 200; n++) {
      const s = 'y'.repeat(n);
      expect(sha256Hex(s), `length ${n}`).toBe(createHash('sha256').update(s, 'utf8').digest('hex'));
    }
    const bytes = Uint8Array.from({ length: 1000 }, (_, i) => (i * 131 + 7) & 0xff);
    expect(toHex(sha256Bytes(bytes))).toBe(createHash('sha256').update(bytes).digest('hex'));
  });
});

describe('ingressProbeHash (Tidal stable serialisation of spec + namespace + name)', () => {
  const ing = () => ({
    metadata: { namespace: 'ns', name: 'route', labels: { a: 'b' }, generation: 3 },
    spec: {
      httpOption: 'Enabled' as const,
      rules: [
        {
          hosts: ['route.ns.svc.cluster.local'],
          visibility: 'ClusterLocal' as const,
          http: { paths: [{ splits: [{ serviceNamespace: 'ns', serviceName: 'rev-1', servicePort: 80, percent: 100 }] }] },
        },
      ],
    },
  });

  it('is 64 lowercase hex characters and equals sha256(stableStringify(spec) + namespace + name)', () => {
    const h = ingressProbeHash(ing());
    expect(h).toMatch(/^[0-9a-f]{64}$/);
    const text =
      '{"httpOption":"Enabled","rules":[{"hosts":["route.ns.svc.cluster.local"],"http":{"paths":[{"splits":[' +
      '{"percent":100,"serviceName":"rev-1","serviceNamespace":"ns","servicePort":80}]}]},"visibility":"ClusterLocal"}]}' +
      'nsroute';
    expect(h).toBe(createHash('sha256').update(text, 'utf8').digest('hex'));
  });

  it('is stable: same spec, different key order or metadata besides namespace/name → same hash', () => {
    const a = ing();
    const b = ing();
    b.metadata.labels = { a: 'changed' };
    b.metadata.generation = 9;
    const reordered = { metadata: { name: 'route', namespace: 'ns' }, spec: { rules: b.spec.rules, httpOption: 'Enabled' } };
    expect(ingressProbeHash(b)).toBe(ingressProbeHash(a));
    expect(ingressProbeHash(reordered)).toBe(ingressProbeHash(a));
  });

  it('changes with any spec change, the namespace or the name', () => {
    const base = ingressProbeHash(ing());
    const split = ing();
    split.spec.rules[0]!.http.paths[0]!.splits[0]!.percent = 99;
    const host = ing();
    host.spec.rules[0]!.hosts.push('route.ns.svc');
    const opt = ing();
    (opt.spec as { httpOption: string }).httpOption = 'Redirected';
    const ns = ing();
    ns.metadata.namespace = 'other';
    const name = ing();
    name.metadata.name = 'route2';
    const all = [base, ...[split, host, opt, ns, name].map(ingressProbeHash)];
    expect(new Set(all).size).toBe(all.length);
  });
});
