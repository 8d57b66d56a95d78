// HTTPS with an extra CA: a throwaway CA and a 127.0.0.1 server certificate made with node-forge (as dev/pki.ts
// does), the fake registry served with node:https.
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import forge from 'node-forge';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RegistryError } from '../../../registry/errors.js';
import { makeRegistryResolver } from '../../../registry/resolver.js';
import { digestOf, manifest, startFakeRegistry, type FakeRegistry } from './fake-registry.js';
import { basicAuth, dockerConfigJsonSecret, fakeKube, resolveCtx } from './fixtures.js';

function keyPair() {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  return {
    privatePem: privateKey.export({ type: 'pkcs1', format: 'pem' }).toString(),
    publicPem: publicKey.export({ type: 'spki', format: 'pem' }).toString(),
  };
}

function makePki(): { caPem: string; certPem: string; keyPem: string } {
  const sign = (
    publicPem: string,
    subject: forge.pki.CertificateField[],
    issuer: forge.pki.CertificateField[],
    signer: string,
    extensions: object[],
  ) => {
    const cert = forge.pki.createCertificate();
    cert.publicKey = forge.pki.publicKeyFromPem(publicPem);
    cert.serialNumber = `01${randomBytes(15).toString('hex')}`;
    cert.validity.notBefore = new Date(Date.now() - 60_000);
    cert.validity.notAfter = new Date(Date.now() + 86_400_000);
    cert.setSubject(subject);
    cert.setIssuer(issuer);
    cert.setExtensions(extensions);
    cert.sign(forge.pki.privateKeyFromPem(signer), forge.md.sha256.create());
    return forge.pki.certificateToPem(cert);
  };
  const ca = keyPair();
  const caName = [{ name: 'commonName', value: 'tidal-test-registry-ca' }];
  const caPem = sign(ca.publicPem, caName, caName, ca.privatePem, [
    { name: 'basicConstraints', cA: true, critical: true },
    { name: 'keyUsage', keyCertSign: true, cRLSign: true, digitalSignature: true, critical: true },
  ]);
  const srv = keyPair();
  const certPem = sign(srv.publicPem, [{ name: 'commonName', value: 'registry' }], caName, ca.privatePem, [
    { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, critical: true },
    { name: 'extKeyUsage', serverAuth: true },
    { name: 'subjectAltName', altNames: [{ type: 7, ip: '127.0.0.1' }] },
  ]);
  return { caPem, certPem, keyPem: srv.privatePem };
}

const APP = manifest('tls-app');
const PASSWORD = 'tls-Secret-pw';
const TOKEN = 'tls-Secret-token';
let pki: ReturnType<typeof makePki>;
let reg: FakeRegistry;

beforeAll(async () => {
  pki = makePki();
  reg = await startFakeRegistry({
    manifests: { 'x:v1': APP },
    auth: { type: 'bearer', token: TOKEN, username: 'me', password: PASSWORD },
    tls: { cert: pki.certPem, key: pki.keyPem },
  });
});
afterAll(() => reg.close());

describe('registry resolver over HTTPS', () => {
  it('trusts the registry with the extra CA and runs the Bearer flow against an https realm', async () => {
    const kube = fakeKube([dockerConfigJsonSecret('regcred', { [reg.host]: { auth: basicAuth('me', PASSWORD) } })]);
    const r = makeRegistryResolver({ kube, extraCAPem: pki.caPem });
    try {
      await expect(r.resolve(`${reg.host}/x:v1`, resolveCtx({ imagePullSecrets: ['regcred'] }))).resolves.toBe(`${reg.host}/x@${digestOf(APP.body)}`);
    } finally {
      r.close();
    }
    expect(reg.requests.map((q) => q.method + ' ' + q.path.split('?')[0])).toEqual([
      'HEAD /v2/x/manifests/v1',
      'GET /token',
      'HEAD /v2/x/manifests/v1',
    ]);
  });

  it('without the CA the certificate is not trusted, and the message says so', async () => {
    const r = makeRegistryResolver({ kube: fakeKube() });
    try {
      const err = await r.resolve(`${reg.host}/x:v1`, resolveCtx()).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(RegistryError);
      expect((err as RegistryError).kind).toBe('unreachable');
      expect((err as RegistryError).message).toMatch(
        new RegExp(`^cannot verify the TLS certificate of registry ${reg.host}: .+ \\(is its CA configured\\?\\)$`),
      );
    } finally {
      r.close();
    }
  });
});
