import { describe, expect, it } from 'vitest';
import { parseChallenges } from '../../../registry/auth.js';

describe('parseChallenges (WWW-Authenticate)', () => {
  it.each([
    ['Basic realm="Registry Realm"', [{ scheme: 'basic', params: { realm: 'Registry Realm' } }]],
    [
      'Bearer realm="https://auth.docker.io/token",service="registry.docker.io",scope="repository:library/nginx:pull"',
      [
        {
          scheme: 'bearer',
          params: { realm: 'https://auth.docker.io/token', service: 'registry.docker.io', scope: 'repository:library/nginx:pull' },
        },
      ],
    ],
    ['bearer Realm=https://x/token, Service=x', [{ scheme: 'bearer', params: { realm: 'https://x/token', service: 'x' } }]],
    // A quoted comma does not split, and several challenges may share one header.
    [
      'Bearer realm="https://r/t",scope="repository:a:pull,push", Basic realm="b"',
      [
        { scheme: 'bearer', params: { realm: 'https://r/t', scope: 'repository:a:pull,push' } },
        { scheme: 'basic', params: { realm: 'b' } },
      ],
    ],
    [
      'Negotiate, Basic realm="x"',
      [
        { scheme: 'negotiate', params: {} },
        { scheme: 'basic', params: { realm: 'x' } },
      ],
    ],
    ['Basic realm="a \\"quoted\\" realm"', [{ scheme: 'basic', params: { realm: 'a "quoted" realm' } }]],
    ['', []],
  ])('%s', (header, want) => {
    expect(parseChallenges(header)).toEqual(want);
  });
});
