import { describe, expect, it } from 'vitest';
import { childName, deploymentName, revisionName } from '../../../resources/names.js';

const dns1123Label = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

describe('childName (kmeta.ChildName)', () => {
  // The vectors of knative.dev/pkg kmeta/names_test.go TestChildName, verbatim.
  const knative: [parent: string, suffix: string, want: string][] = [
    ['asdf', '-deployment', 'asdf-deployment'],
    ['f'.repeat(63), '-deployment', 'ffffffffffffffffffff105d7597f637e83cc711605ac3ea4957-deployment'],
    ['f'.repeat(63), '-deploy', 'ffffffffffffffffffffffff105d7597f637e83cc711605ac3ea4957-deploy'],
    ['f'.repeat(63), 'f'.repeat(63), 'fffffffffffffffffffffffffffffff0502661254f13c89973cb3a83e0cbec0'],
    ['a', 'f'.repeat(63), 'ab5cfd486935decbc0d305799f4ce4414ffffffffffffffffffffffffffffff'],
    ['b'.repeat(32), 'f'.repeat(32), 'bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb329c7c81b9ab3ba71aa139066aa5625d'],
    ['aaaa', 'b---a'.repeat(20), 'aaaa7a3f7966594e3f0849720eced8212c18b---ab---ab---ab---ab---ab'],
    ['a'.repeat(17), 'a.-.-.-.-.-.-.aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa', 'aaaaaaaaaaaaaaaaaa1eb10dc911444f8434af83b7225442da'],
  ];
  it.each(knative)('matches Knative for parent %#', (parent, suffix, want) => {
    expect(childName(parent, suffix)).toBe(want);
  });

  it('keeps parent+suffix when it is exactly 63 characters, hashes at 64', () => {
    expect(childName('p'.repeat(52), '-deployment')).toBe(`${'p'.repeat(52)}-deployment`);
    const long = childName('p'.repeat(53), '-deployment');
    expect(long).toHaveLength(63);
    expect(long.endsWith('-deployment')).toBe(true);
  });

  it('with a short suffix, always gives 63 characters: parent prefix + md5(parent) + suffix', () => {
    for (const parent of ['x'.repeat(60), 'y'.repeat(100)]) {
      const n = childName(parent, '-00001');
      expect(n).toHaveLength(63);
      expect(n).toMatch(dns1123Label);
    }
  });
});

describe('revisionName / deploymentName', () => {
  it('names a generation <config>-%05d', () => {
    expect(revisionName('hello', 1)).toBe('hello-00001');
    expect(revisionName('hello', 12)).toBe('hello-00012');
    expect(revisionName('hello', 123456)).toBe('hello-123456'); // %05d pads, never truncates
  });

  it('ChildName-truncates beyond 63 characters', () => {
    // 58 + 6 = 64 > 63: parent[:31-6] + md5(parent) + suffix (expected hashes computed with node:crypto).
    const config = `a${'b'.repeat(56)}c`;
    expect(revisionName(config, 1)).toBe(`a${'b'.repeat(24)}321565c1c190a57d83a6d7814bb91cdf-00001`);
    expect(revisionName(config, 1)).toHaveLength(63);
    // 57 + 6 = 63 still fits.
    expect(revisionName('c'.repeat(57), 2)).toBe(`${'c'.repeat(57)}-00002`);
  });

  it('the Deployment is <rev>-deployment, hashed for long revision names', () => {
    expect(deploymentName('hello-00001')).toBe('hello-00001-deployment');
    expect(deploymentName('r'.repeat(63))).toBe(`${'r'.repeat(20)}b781f146e2641ab389a73417a86af81c-deployment`);
  });
});
