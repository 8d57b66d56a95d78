// The gateway certificate (hakn's self-signed gateway certificate): what a fresh certificate looks like, when one needs renewal, and the activity's
// decisions against an in-memory Secret.
import { createPrivateKey, X509Certificate } from 'node:crypto';
import forge from 'node-forge';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { createCertificateActivities, type SecretObject } from '../../../activities/certificate.js';
import { certificateNeedsRenewal } from '../../../pki/x509.js';
import { makeSelfSignedCertificate } from '../../../pki/self-signed.js';
import type { ActivityDeps } from '../../../activities/deps.js';
import type { KubeClient } from '../../../kube/client.js';
import type { ResourceType } from '../../../api/kinds.js';

const NOW = new Date('2025-03-01T12:00:00.000Z');
const HOUR = 3_600_000;

const made = await makeSelfSignedCertificate({ validityHours: 168, now: NOW });

describe('makeSelfSignedCertificate', () => {
  const x = new X509Certificate(made.certPem);

  it('makes its keys off the main thread: the event loop turns while they are made', async () => {
    let turned = false;
    setImmediate(() => (turned = true));
    // Made on the main thread (generateKeyPairSync), both keys would be done before the loop's next turn.
    await makeSelfSignedCertificate({ validityHours: 1, now: NOW });
    expect(turned).toBe(true);
  });

  it('is a wildcard server certificate: CN *, DNS SAN *, ServerAuth, not a CA', () => {
    expect(x.subject).toContain('CN=*');
    expect(x.subjectAltName).toBe('DNS:*');
    expect(x.ca).toBe(false);
    expect(x.issuer).not.toBe(x.subject); // signed by the (discarded) ephemeral CA
    const f = forge.pki.certificateFromPem(made.certPem);
    expect(f.getExtension('extKeyUsage')).toMatchObject({ serverAuth: true });
  });

  it('is valid for validityHours from now', () => {
    expect(new Date(x.validTo).getTime() - NOW.getTime()).toBe(168 * HOUR);
    expect(made.notAfter.toISOString()).toBe(new Date(NOW.getTime() + 168 * HOUR).toISOString());
    expect(new Date(x.validFrom).getTime()).toBeLessThanOrEqual(NOW.getTime());
  });

  it('comes with its PKCS#8 private key', () => {
    expect(made.keyPem).toMatch(/^-----BEGIN PRIVATE KEY-----/);
    expect(x.checkPrivateKey(createPrivateKey(made.keyPem))).toBe(true);
  });
});

describe('certificateNeedsRenewal', () => {
  const { certPem } = made;
  const at = (hoursLeft: number) => new Date(NOW.getTime() + (168 - hoursLeft) * HOUR);

  it('not while more than renewBeforeHours are left', () => {
    expect(certificateNeedsRenewal(certPem, NOW, 24)).toBe(false);
    expect(certificateNeedsRenewal(certPem, at(24), 24)).toBe(false);
  });

  it('once less than renewBeforeHours are left, and after expiry', () => {
    expect(certificateNeedsRenewal(certPem, new Date(at(24).getTime() + 1000), 24)).toBe(true);
    expect(certificateNeedsRenewal(certPem, at(1), 24)).toBe(true);
    expect(certificateNeedsRenewal(certPem, at(-5), 24)).toBe(true);
  });

  it('when the PEM is garbage', () => {
    expect(certificateNeedsRenewal('reconcile this', NOW, 24)).toBe(true);
    expect(certificateNeedsRenewal('-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n', NOW, 24)).toBe(true);
  });
});

const b64 = (s: string) => Buffer.from(s).toString('base64');

function harness(initial?: SecretObject) {
  let secret = initial;
  const applied: SecretObject[] = [];
  const logged: unknown[] = [];
  const kube = {
    async get(_t: ResourceType, _ns: string, _name: string) {
      return secret;
    },
    async apply(_t: ResourceType, obj: SecretObject) {
      applied.push(obj);
      secret = obj;
      return obj;
    },
  } as unknown as KubeClient;
  let clock = NOW;
  const log = pino({ level: 'info' }, { write: (line: string) => logged.push(line) });
  const deps = { kube, log, now: () => clock } as unknown as ActivityDeps;
  const acts = createCertificateActivities(deps);
  const input = { namespace: 'istio-system', name: 'tls-cert', validityHours: 168, renewBeforeHours: 24 };
  return {
    applied,
    logged,
    setClock: (d: Date) => (clock = d),
    ensure: () => acts.ensureGatewayCertificate(input),
  };
}

// Each pass may make RSA keys: seconds apiece on a loaded 2-core machine.
describe('ensureGatewayCertificate', { timeout: 30_000 }, () => {
  it('creates the Secret when missing, then keeps it until it is due', async () => {
    const h = harness();
    const r1 = await h.ensure();
    expect(r1.action).toBe('created');
    expect(r1.notAfter).toBe(new Date(NOW.getTime() + 168 * HOUR).toISOString());
    expect(r1.renewAt).toBe(new Date(NOW.getTime() + 144 * HOUR).toISOString());
    expect(JSON.stringify(r1)).not.toContain('PRIVATE');
    const s = h.applied[0]!;
    expect(s).toMatchObject({
      apiVersion: 'v1',
      kind: 'Secret',
      type: 'kubernetes.io/tls',
      metadata: { namespace: 'istio-system', name: 'tls-cert' },
    });
    expect(Buffer.from(s.data!['tls.key']!, 'base64').toString()).toMatch(/^-----BEGIN PRIVATE KEY-----/);
    expect(h.logged.join('')).not.toContain('PRIVATE');
    expect(h.logged.join('')).not.toContain(s.data!['tls.key']!.slice(0, 40));

    h.setClock(new Date(NOW.getTime() + 100 * HOUR));
    expect(await h.ensure()).toEqual({ action: 'kept', notAfter: r1.notAfter, renewAt: r1.renewAt });
    expect(h.applied).toHaveLength(1);

    h.setClock(new Date(NOW.getTime() + 150 * HOUR));
    const r3 = await h.ensure();
    expect(r3.action).toBe('renewed');
    expect(h.applied).toHaveLength(2);
  });

  it("repairs hakn's placeholder and a key that does not match the certificate", async () => {
    const placeholder = harness({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { namespace: 'istio-system', name: 'tls-cert' },
      type: 'kubernetes.io/tls',
      data: { 'tls.crt': b64('reconcile this'), 'tls.key': b64('reconcile this') },
    });
    expect((await placeholder.ensure()).action).toBe('renewed');

    const [a, b] = await Promise.all([
      makeSelfSignedCertificate({ validityHours: 168, now: NOW }),
      makeSelfSignedCertificate({ validityHours: 168, now: NOW }),
    ]);
    const mismatched = harness({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { namespace: 'istio-system', name: 'tls-cert' },
      data: { 'tls.crt': b64(a.certPem), 'tls.key': b64(b.keyPem) },
    });
    expect((await mismatched.ensure()).action).toBe('renewed');

    const noKey = harness({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { namespace: 'istio-system', name: 'tls-cert' },
      data: { 'tls.crt': b64(a.certPem) },
    });
    expect((await noKey.ensure()).action).toBe('renewed');

    const good = harness({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { namespace: 'istio-system', name: 'tls-cert' },
      data: { 'tls.crt': b64(a.certPem), 'tls.key': b64(a.keyPem) },
    });
    expect((await good.ensure()).action).toBe('kept');
  }, 60_000); // three RSA key pairs: seconds on a loaded 2-core machine
});
