// The registry resolver against an in-process fake registry (plain HTTP, listed as insecure).
import { afterEach, describe, expect, it } from 'vitest';
import { MANIFEST_MEDIA_TYPES } from '../../../registry/client.js';
import { RegistryError } from '../../../registry/errors.js';
import { makeRegistryResolver, type RegistryResolver } from '../../../registry/resolver.js';
import {
  closedPort,
  digestOf,
  DOCKER_MANIFEST,
  manifest,
  multiArchIndex,
  OCI_INDEX,
  startFakeRegistry,
  type FakeRegistry,
  type FakeRegistryOptions,
} from './fake-registry.js';
import { basicAuth, dockerConfigJsonSecret, fakeKube, resolveCtx, serviceAccount, type FakeKube } from './fixtures.js';

const APP = manifest('app-v1');
const AMD64 = manifest('amd64');
const ARM64 = manifest('arm64');
const INDEX = multiArchIndex(AMD64, ARM64);

const PASSWORD = 'pw-Secret-0xC0FFEE';
const TOKEN = 'tok-Secret-DEADBEEF';

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function registry(opts: Partial<FakeRegistryOptions> = {}): Promise<FakeRegistry> {
  const r = await startFakeRegistry({ manifests: { 'x:v1': APP, 'team/app:v1': APP, 'multi:latest': INDEX }, ...opts });
  cleanups.push(() => r.close());
  return r;
}

function resolver(kube: FakeKube, insecure: string[], extra: Partial<Parameters<typeof makeRegistryResolver>[0]> = {}): RegistryResolver {
  const r = makeRegistryResolver({ kube, insecureRegistries: insecure, userAgent: 'tidal-test', ...extra });
  cleanups.push(() => r.close());
  return r;
}

async function failure(p: Promise<unknown>): Promise<RegistryError> {
  try {
    await p;
  } catch (err) {
    expect(err).toBeInstanceOf(RegistryError);
    return err as RegistryError;
  }
  throw new Error('expected a failure');
}

describe('registry resolver: pass-through and skipping', () => {
  it('returns a digest reference unchanged without any I/O', async () => {
    const kube = fakeKube();
    const ref = `ghcr.io/example/hello@${digestOf('x')}`;
    await expect(resolver(kube, []).resolve(ref, resolveCtx())).resolves.toBe(ref);
    await expect(resolver(kube, []).resolve(`nginx:1.27@${digestOf('x')}`, resolveCtx())).resolves.toBe(`nginx:1.27@${digestOf('x')}`);
    expect(kube.gets).toEqual([]);
  });

  it("returns '' for registries in the skip list (Docker Hub aliases count as one)", async () => {
    const kube = fakeKube();
    const r = resolver(kube, []);
    await expect(r.resolve('ko.local/app', resolveCtx())).resolves.toBe('');
    await expect(r.resolve('KIND.local/app:dev', resolveCtx())).resolves.toBe('');
    await expect(r.resolve('nginx', resolveCtx({ skipRegistries: ['docker.io'] }))).resolves.toBe('');
    expect(kube.gets).toEqual([]);
  });

  it('rejects a malformed reference in plain words', async () => {
    const e = await failure(resolver(fakeKube(), []).resolve('Nginx', resolveCtx()));
    expect(e.kind).toBe('invalid');
    expect(e.message).toBe('invalid image reference "Nginx": repository name must be lowercase');
  });
});

describe('registry resolver: resolution', () => {
  it('anonymous: HEAD with the manifest Accept list, digest from Docker-Content-Digest', async () => {
    const reg = await registry();
    await expect(resolver(fakeKube(), [reg.host]).resolve(`${reg.host}/team/app:v1`, resolveCtx())).resolves.toBe(
      `${reg.host}/team/app@${digestOf(APP.body)}`,
    );
    expect(reg.requests).toHaveLength(1);
    expect(reg.requests[0]).toMatchObject({ method: 'HEAD', path: '/v2/team/app/manifests/v1' });
    expect(reg.requests[0]!.accept!.split(', ').sort()).toEqual([...MANIFEST_MEDIA_TYPES].sort());
  });

  it('a multi-arch tag resolves to the index digest, never a platform manifest', async () => {
    const reg = await registry();
    const got = await resolver(fakeKube(), [reg.host]).resolve(`${reg.host}/multi`, resolveCtx());
    expect(got).toBe(`${reg.host}/multi@${digestOf(INDEX.body)}`);
    expect(got).not.toContain(digestOf(AMD64.body));
  });

  it('HEAD without Docker-Content-Digest → GET and the sha256 of the body', async () => {
    const reg = await registry({ digestHeader: false, manifests: { 'multi:latest': INDEX, 'd:v1': manifest('d', DOCKER_MANIFEST) } });
    const r = resolver(fakeKube(), [reg.host]);
    await expect(r.resolve(`${reg.host}/multi:latest`, resolveCtx())).resolves.toBe(`${reg.host}/multi@${digestOf(INDEX.body)}`);
    expect(reg.requests.map((q) => q.method)).toEqual(['HEAD', 'GET']);
    await expect(r.resolve(`${reg.host}/d:v1`, resolveCtx())).resolves.toBe(`${reg.host}/d@${digestOf(manifest('d', DOCKER_MANIFEST).body)}`);
    expect(OCI_INDEX).toBe(INDEX.mediaType);
  });

  it('Basic auth with credentials from a Revision imagePullSecret (key with scheme and /v2/ path)', async () => {
    const reg = await registry({ auth: { type: 'basic', username: 'me', password: PASSWORD } });
    const kube = fakeKube([dockerConfigJsonSecret('regcred', { [`https://${reg.host}/v2/`]: { auth: basicAuth('me', PASSWORD) } })]);
    await expect(resolver(kube, [reg.host]).resolve(`${reg.host}/x:v1`, resolveCtx({ imagePullSecrets: ['regcred'] }))).resolves.toBe(
      `${reg.host}/x@${digestOf(APP.body)}`,
    );
    expect(reg.requests.map((q) => [q.method, q.authorization?.split(' ')[0] ?? 'none'])).toEqual([
      ['HEAD', 'none'],
      ['HEAD', 'Basic'],
    ]);
  });

  it("Bearer token flow: 401 challenge → token from the realm with Basic credentials from the ServiceAccount's secret → retry", async () => {
    const reg = await registry({ auth: { type: 'bearer', token: TOKEN, username: 'robot', password: PASSWORD } });
    const kube = fakeKube([
      serviceAccount('builder', ['sa-cred']),
      dockerConfigJsonSecret('sa-cred', { [reg.host]: { username: 'robot', password: PASSWORD } }),
    ]);
    await expect(resolver(kube, [reg.host]).resolve(`${reg.host}/x:v1`, resolveCtx({ serviceAccountName: 'builder' }))).resolves.toBe(
      `${reg.host}/x@${digestOf(APP.body)}`,
    );
    expect(reg.requests.map((q) => q.method + ' ' + q.path)).toEqual([
      'HEAD /v2/x/manifests/v1',
      'GET /token?service=fake&scope=repository%3Ax%3Apull',
      'HEAD /v2/x/manifests/v1',
    ]);
    expect(reg.requests[1]!.authorization).toBe(`Basic ${basicAuth('robot', PASSWORD)}`);
    expect(reg.requests[2]!.authorization).toBe(`Bearer ${TOKEN}`);
  });

  it('Bearer token flow anonymously (public image on a token registry)', async () => {
    const reg = await registry({ auth: { type: 'bearer', token: TOKEN } });
    await expect(resolver(fakeKube(), [reg.host]).resolve(`${reg.host}/x:v1`, resolveCtx())).resolves.toBe(`${reg.host}/x@${digestOf(APP.body)}`);
    expect(reg.requests[1]!.authorization).toBeUndefined();
  });

  it('tries equally matching credentials in order until one is accepted', async () => {
    const reg = await registry({ auth: { type: 'basic', username: 'me', password: PASSWORD } });
    const kube = fakeKube([
      dockerConfigJsonSecret('old', { [reg.host]: { username: 'me', password: 'rotated-out' } }),
      dockerConfigJsonSecret('new', { [reg.host]: { username: 'me', password: PASSWORD } }),
    ]);
    await expect(resolver(kube, [reg.host]).resolve(`${reg.host}/x:v1`, resolveCtx({ imagePullSecrets: ['old', 'new'] }))).resolves.toBe(
      `${reg.host}/x@${digestOf(APP.body)}`,
    );
  });

  it('works through an injected fetch as well', async () => {
    const reg = await registry({ auth: { type: 'bearer', token: TOKEN }, digestHeader: false });
    const r = resolver(fakeKube(), [reg.host], { fetchImpl: (url, init) => fetch(url, init) });
    await expect(r.resolve(`${reg.host}/multi`, resolveCtx())).resolves.toBe(`${reg.host}/multi@${digestOf(INDEX.body)}`);
  });
});

describe('registry resolver: failures in plain words', () => {
  it('404 → manifest unknown', async () => {
    const reg = await registry();
    const e = await failure(resolver(fakeKube(), [reg.host]).resolve(`${reg.host}/x:nope`, resolveCtx()));
    expect(e.kind).toBe('not-found');
    expect(e.message).toBe(`manifest unknown: tag nope not found in ${reg.host}/x`);
  });

  it('401 with wrong Basic credentials → unauthorized, naming the secret tried', async () => {
    const reg = await registry({ auth: { type: 'basic', username: 'me', password: PASSWORD } });
    const kube = fakeKube([dockerConfigJsonSecret('regcred', { [reg.host]: { username: 'me', password: 'wrong' } })]);
    const e = await failure(resolver(kube, [reg.host]).resolve(`${reg.host}/x:v1`, resolveCtx({ imagePullSecrets: ['regcred'] })));
    expect(e.kind).toBe('unauthorized');
    expect(e.message).toBe(
      `registry ${reg.host} denied access: unauthorized (check the image pull secret): tried "${reg.host}" from secret "regcred"`,
    );
  });

  it('401 from the token server with wrong credentials → unauthorized', async () => {
    const reg = await registry({ auth: { type: 'bearer', token: TOKEN, username: 'robot', password: PASSWORD } });
    const kube = fakeKube([dockerConfigJsonSecret('regcred', { [reg.host]: { username: 'robot', password: 'wrong' } })]);
    const e = await failure(resolver(kube, [reg.host]).resolve(`${reg.host}/x:v1`, resolveCtx({ imagePullSecrets: ['regcred'] })));
    expect(e.message).toMatch(new RegExp(`^registry ${reg.host} denied access: unauthorized \\(check the image pull secret\\)`));
  });

  it('401 without any usable secret says why none applied', async () => {
    const reg = await registry({ auth: { type: 'basic', username: 'me', password: PASSWORD } });
    const none = await failure(resolver(fakeKube(), [reg.host]).resolve(`${reg.host}/x:v1`, resolveCtx()));
    expect(none.message).toBe(
      `registry ${reg.host} denied access: unauthorized (check the image pull secret): the revision and its service account have no image pull secrets`,
    );
    const kube = fakeKube([dockerConfigJsonSecret('hub', { 'docker.io': { username: 'me', password: PASSWORD } })]);
    const other = await failure(resolver(kube, [reg.host]).resolve(`${reg.host}/x:v1`, resolveCtx({ imagePullSecrets: ['hub', 'typo'] })));
    expect(other.message).toBe(
      `registry ${reg.host} denied access: unauthorized (check the image pull secret): no image pull secret (hub, typo) has credentials for ${reg.host}; image pull secret "typo" not found`,
    );
  });

  it('connection refused → cannot reach registry', async () => {
    const port = await closedPort();
    const e = await failure(resolver(fakeKube(), [`127.0.0.1:${port}`]).resolve(`127.0.0.1:${port}/x:v1`, resolveCtx()));
    expect(e.kind).toBe('unreachable');
    expect(e.message).toBe(`cannot reach registry 127.0.0.1:${port}: connect ECONNREFUSED 127.0.0.1:${port}`);
  });

  it('a registry not listed as insecure is spoken to over HTTPS only', async () => {
    const reg = await registry();
    const e = await failure(resolver(fakeKube(), []).resolve(`${reg.host}/x:v1`, resolveCtx()));
    expect(e.kind).toBe('unreachable');
    expect(e.message).toBe(
      `cannot reach registry ${reg.host}: it does not speak HTTPS (EPROTO: wrong version number); list it as an insecure registry if plain HTTP is intended`,
    );
    expect(reg.requests).toEqual([]);
  });

  it('a registry that never answers → timed out after the per-image timeout', async () => {
    const reg = await registry({ hang: true });
    const started = Date.now();
    const e = await failure(resolver(fakeKube(), [reg.host]).resolve(`${reg.host}/x:v1`, resolveCtx({ timeoutSeconds: 0.2 })));
    expect(e.kind).toBe('timeout');
    expect(e.message).toBe(`timed out after 0.2s resolving ${reg.host}/x:v1`);
    expect(Date.now() - started).toBeLessThan(2000);
  });

  it('other statuses carry the registry error code and message', async () => {
    const reg = await registry({ failWith: 500 });
    const e = await failure(resolver(fakeKube(), [reg.host]).resolve(`${reg.host}/x:v1`, resolveCtx()));
    expect(e.message).toBe(`registry ${reg.host} answered HTTP 500 for x:v1: UNKNOWN: internal error handling no auth`);
  });

  it('no password, auth string or token ever appears in an error message', async () => {
    const messages: string[] = [];
    const collect = async (p: Promise<unknown>) => messages.push((await failure(p)).message);
    const secret = (host: string, password: string) => dockerConfigJsonSecret('regcred', { [host]: { auth: basicAuth('me', password) } });
    const ctx = resolveCtx({ imagePullSecrets: ['regcred'], timeoutSeconds: 0.3 });

    const basicReg = await registry({ auth: { type: 'basic', username: 'me', password: 'other' } });
    await collect(resolver(fakeKube([secret(basicReg.host, PASSWORD)]), [basicReg.host]).resolve(`${basicReg.host}/x:v1`, ctx));
    const bearerReg = await registry({ auth: { type: 'bearer', token: TOKEN, username: 'me', password: 'other' } });
    await collect(resolver(fakeKube([secret(bearerReg.host, PASSWORD)]), [bearerReg.host]).resolve(`${bearerReg.host}/x:v1`, ctx));
    // A registry that echoes the Authorization header (Basic, then Bearer) into its error body.
    const echoBasic = await registry({ auth: { type: 'basic', username: 'me', password: PASSWORD }, failWith: 500 });
    await collect(resolver(fakeKube([secret(echoBasic.host, PASSWORD)]), [echoBasic.host]).resolve(`${echoBasic.host}/x:v1`, ctx));
    const echoBearer = await registry({ auth: { type: 'bearer', token: TOKEN, username: 'me', password: PASSWORD }, failWith: 502 });
    await collect(resolver(fakeKube([secret(echoBearer.host, PASSWORD)]), [echoBearer.host]).resolve(`${echoBearer.host}/x:v1`, ctx));
    // Not found, timeout and unreachable with credentials in play.
    const okReg = await registry({ auth: { type: 'bearer', token: TOKEN, username: 'me', password: PASSWORD } });
    await collect(resolver(fakeKube([secret(okReg.host, PASSWORD)]), [okReg.host]).resolve(`${okReg.host}/x:missing`, ctx));
    const hang = await registry({ hang: true });
    await collect(resolver(fakeKube([secret(hang.host, PASSWORD)]), [hang.host]).resolve(`${hang.host}/x:v1`, ctx));
    const port = await closedPort();
    await collect(resolver(fakeKube([secret(`127.0.0.1:${port}`, PASSWORD)]), [`127.0.0.1:${port}`]).resolve(`127.0.0.1:${port}/x:v1`, ctx));

    expect(messages).toHaveLength(7);
    expect(messages[2]).toMatch(/answered HTTP 500 for x:v1: UNKNOWN: internal error handling \[redacted\]$/);
    expect(messages[3]).toMatch(/answered HTTP 502 for x:v1: UNKNOWN: internal error handling \[redacted\]$/);
    for (const m of messages) {
      for (const s of [PASSWORD, TOKEN, basicAuth('me', PASSWORD), 'Basic ', 'Bearer ']) expect(m).not.toContain(s);
    }
  });
});
