import { describe, expect, it } from 'vitest';
import { keyMatches, loadKeychain, matchCredentials, parsePullSecret, type KeychainEntry } from '../../../registry/keychain.js';
import { basicAuth, dockerConfigJsonSecret, dockercfgSecret, fakeKube, serviceAccount } from './fixtures.js';

describe('keyMatches (kubelet keyring rules)', () => {
  it.each([
    // Docker Hub spellings all match Docker Hub images (registry index.docker.io after parsing).
    ['https://index.docker.io/v1/', 'index.docker.io', 'library/nginx', true],
    ['index.docker.io', 'index.docker.io', 'library/nginx', true],
    ['docker.io', 'index.docker.io', 'library/nginx', true],
    ['https://docker.io', 'index.docker.io', 'user/app', true],
    ['registry-1.docker.io', 'index.docker.io', 'user/app', true],
    ['https://index.docker.io/v2/', 'index.docker.io', 'user/app', true],
    ['docker.io/user', 'index.docker.io', 'user/app', true],
    ['docker.io/other', 'index.docker.io', 'user/app', false],
    ['docker.io', 'ghcr.io', 'user/app', false],
    // Plain hosts, schemes, paths.
    ['ghcr.io', 'ghcr.io', 'org/app', true],
    ['GHCR.IO', 'ghcr.io', 'org/app', true],
    ['https://ghcr.io/', 'ghcr.io', 'org/app', true],
    ['http://ghcr.io', 'ghcr.io', 'org/app', true],
    ['ghcr.io/org', 'ghcr.io', 'org/app', true],
    ['ghcr.io/org/app', 'ghcr.io', 'org/app', true],
    ['ghcr.io/or', 'ghcr.io', 'org/app', false], // path prefix on segment boundaries only
    ['ghcr.io/org/app/extra', 'ghcr.io', 'org/app', false],
    ['gcr.io', 'us.gcr.io', 'p/app', false],
    // Ports must be equal.
    ['registry.example.com:5000', 'registry.example.com:5000', 'a', true],
    ['registry.example.com', 'registry.example.com:5000', 'a', false],
    ['registry.example.com:5000', 'registry.example.com', 'a', false],
    ['https://registry.example.com:5000/v2/', 'registry.example.com:5000', 'team/a', true],
    ['127.0.0.1:5000', '127.0.0.1:5000', 'a', true],
    ['localhost:5000', 'localhost:5000', 'a/b', true],
    // Globs within one label.
    ['*.gcr.io', 'us.gcr.io', 'p/app', true],
    ['*.gcr.io', 'gcr.io', 'p/app', false],
    ['*.example.com', 'a.b.example.com', 'x', false],
    ['registry-?.example.com', 'registry-1.example.com', 'x', true],
  ])('%s vs %s/%s → %s', (key, registry, repository, want) => {
    expect(keyMatches(key, registry, repository)).toBe(want);
  });
});

describe('matchCredentials', () => {
  const e = (key: string, secret: string, username: string): KeychainEntry => ({ key, secret, credential: { username, password: 'p' } });

  it('orders the most specific key first, then exact hosts before globs, then secret order; drops duplicates', () => {
    const entries = [
      e('*.example.com', 's1', 'glob'),
      e('r.example.com', 's1', 'host'),
      e('r.example.com/team', 's2', 'team'),
      e('r.example.com', 's3', 'host2'),
      e('r.example.com', 's4', 'host'),
    ];
    expect(matchCredentials(entries, 'r.example.com', 'team/app').map((x) => x.credential.username)).toEqual(['team', 'host', 'host2', 'glob']);
    expect(matchCredentials(entries, 'r.example.com', 'other/app').map((x) => x.credential.username)).toEqual(['host', 'host2', 'glob']);
    expect(matchCredentials(entries, 'ghcr.io', 'x/y')).toEqual([]);
  });
});

describe('parsePullSecret', () => {
  it('reads .dockerconfigjson auths with auth or username/password, and identity/registry tokens', () => {
    const s = dockerConfigJsonSecret('regcred', {
      'https://index.docker.io/v1/': { auth: basicAuth('me', 'pa:ss') },
      'ghcr.io': { username: 'u', password: 'p' },
      'acr.example.io': { identitytoken: 'refresh' },
      'tok.example.io': { registrytoken: 'bearer' },
      'empty.example.io': {},
    }) as never;
    const { entries, problems } = parsePullSecret('regcred', s);
    expect(problems).toEqual([]);
    expect(entries).toEqual([
      { key: 'https://index.docker.io/v1/', secret: 'regcred', credential: { username: 'me', password: 'pa:ss' } },
      { key: 'ghcr.io', secret: 'regcred', credential: { username: 'u', password: 'p' } },
      { key: 'acr.example.io', secret: 'regcred', credential: { identityToken: 'refresh' } },
      { key: 'tok.example.io', secret: 'regcred', credential: { registryToken: 'bearer' } },
    ]);
  });

  it('reads the legacy .dockercfg map', () => {
    const { entries } = parsePullSecret('old', dockercfgSecret('old', { 'quay.io': { auth: basicAuth('q', 'w') } }) as never);
    expect(entries).toEqual([{ key: 'quay.io', secret: 'old', credential: { username: 'q', password: 'w' } }]);
  });

  it('accepts field names in any case (as Go JSON decoding does)', () => {
    const data = { '.dockerconfigjson': Buffer.from(JSON.stringify({ Auths: { 'ghcr.io': { Username: 'U', Password: 'P' } } })).toString('base64') };
    expect(parsePullSecret('x', { type: 'kubernetes.io/dockerconfigjson', data }).entries[0]?.credential).toEqual({ username: 'U', password: 'P' });
  });

  it('reports unusable secrets in plain words without quoting their content', () => {
    const garbage = Buffer.from('{"auths": {"ghcr.io": {"password": "hunter2-secret"').toString('base64');
    const cases = [
      parsePullSecret('a', { type: 'Opaque', data: { '.dockerconfigjson': garbage } }),
      parsePullSecret('b', { type: 'kubernetes.io/dockerconfigjson', data: {} }),
      parsePullSecret('c', { type: 'kubernetes.io/dockerconfigjson', data: { '.dockerconfigjson': garbage } }),
      parsePullSecret('d', {
        type: 'kubernetes.io/dockerconfigjson',
        data: {
          '.dockerconfigjson': Buffer.from(
            JSON.stringify({ auths: { 'ghcr.io': { auth: Buffer.from('hunter2-secret').toString('base64') } } }),
          ).toString('base64'),
        },
      }),
    ];
    expect(cases.map((c) => c.problems)).toEqual([
      ['image pull secret "a" has type Opaque, not kubernetes.io/dockerconfigjson or kubernetes.io/dockercfg'],
      ['image pull secret "b" has no .dockerconfigjson'],
      ['image pull secret "c" has a .dockerconfigjson that is not valid JSON'],
      ['image pull secret "d": the auth for "ghcr.io" is not base64 of username:password'],
    ]);
    expect(JSON.stringify(cases)).not.toContain('hunter2');
  });
});

describe('loadKeychain', () => {
  it("reads the Revision's secrets, then its ServiceAccount's, in the Revision's namespace", async () => {
    const kube = fakeKube([
      dockerConfigJsonSecret('a', { 'ghcr.io': { username: 'a', password: 'x' } }, 'team'),
      dockerConfigJsonSecret('b', { 'ghcr.io': { username: 'b', password: 'x' } }, 'team'),
      dockerConfigJsonSecret('a', { 'ghcr.io': { username: 'wrong-namespace', password: 'x' } }, 'default'),
      serviceAccount('builder', ['b', 'a'], 'team'),
    ]);
    const kc = await loadKeychain(kube, { namespace: 'team', serviceAccountName: 'builder', imagePullSecrets: ['a'] });
    expect(kc.secrets).toEqual(['a', 'b']);
    expect(kc.entries.map((e) => e.credential.username)).toEqual(['a', 'b']);
    expect(kc.problems).toEqual([]);
    expect(kube.gets).toContain('ServiceAccount/team/builder');
  });

  it("uses the 'default' ServiceAccount when none is named and tolerates missing objects", async () => {
    const kube = fakeKube([serviceAccount('default', ['gone'])]);
    const kc = await loadKeychain(kube, { namespace: 'default', serviceAccountName: undefined, imagePullSecrets: ['missing'] });
    expect(kc.entries).toEqual([]);
    expect(kc.problems).toEqual(['image pull secret "missing" not found', 'image pull secret "gone" not found']);
    const none = await loadKeychain(fakeKube(), { namespace: 'default', serviceAccountName: 'robot', imagePullSecrets: [] });
    expect(none.problems).toEqual(['service account "robot" not found']);
  });

  it('fails plainly when the API refuses the read', async () => {
    const kube = { get: () => Promise.reject(new Error('GET /api/v1/namespaces/x/serviceaccounts/default: 403 Forbidden: no')) };
    await expect(loadKeychain(kube, { namespace: 'x', serviceAccountName: undefined, imagePullSecrets: [] })).rejects.toThrow(
      'cannot read service account "default" in namespace x: GET /api/v1/namespaces/x/serviceaccounts/default: 403 Forbidden: no',
    );
  });
});
