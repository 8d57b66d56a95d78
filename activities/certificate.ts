// The gateway's self-signed wildcard certificate (hakn `pkg/reconciler/certificates`, see
// docs istio-routing-and-hakn.md §D.4): the Secret `istio-system/tls-cert` that the Gateway's HTTPS server names as
// its `credentialName` holds one server certificate (CN `*`, DNS SAN `*`, ServerAuth) signed by an ephemeral CA that
// is thrown away. It is regenerated when the Secret is missing, lacks a key, does not parse (or the key does not
// match the certificate), or expires within `renewBeforeHours`.
//
// Differences from hakn, on purpose:
// * keys are RSA 2048 made with node:crypto (node-forge cannot sign with ECDSA; hakn uses ECDSA P-256);
// * a missing Secret is created (hakn leaves that to the installer);
// * rotation does not depend on an informer resync: the activity reports when to look again (`renewAt`) and the
//   workflow sleeps on a durable timer until then.
// The private key never leaves this module other than in the applied Secret: not returned, not logged.
import { createPrivateKey, generateKeyPair, randomBytes, X509Certificate } from 'node:crypto';
import { promisify } from 'node:util';
import { createRequire } from 'node:module';
import type Forge from 'node-forge';
import { Resources } from '../api/kinds.js';
import type { KubeObject } from '../api/meta.js';
import type { ActivityDeps } from './deps.js';
import { ensureWebhookCertificates } from '../webhook/cert-secret.js';

export interface SecretObject extends KubeObject {
  type?: string;
  data?: Record<string, string>;
}

export interface EnsureGatewayCertificateInput {
  namespace: string;
  name: string;
  validityHours: number;
  renewBeforeHours: number;
}

export interface EnsureWebhookCertificateInput {
  /** The system namespace, where Secret `webhook-certs` lives. */
  namespace: string;
  validityHours: number;
  renewBeforeHours: number;
}

export interface EnsureGatewayCertificateResult {
  action: 'created' | 'renewed' | 'kept';
  /** The certificate's NotAfter (ISO 8601). */
  notAfter: string;
  /** When it should be checked again: NotAfter − renewBeforeHours (ISO 8601). */
  renewAt: string;
}

export interface SelfSignedCertificate {
  /** PEM of the server certificate only (the CA is discarded). */
  certPem: string;
  /** PKCS#8 `PRIVATE KEY` PEM of the server key. */
  keyPem: string;
  notBefore: Date;
  notAfter: Date;
}

const HOUR_MS = 3_600_000;
/** Backdating of NotBefore, for clocks a little behind ours. */
const CLOCK_SKEW_MS = 60_000;
const ORGANIZATION = 'Tidal';

/** NotAfter of a PEM certificate, or undefined when it does not parse. */
export function certificateNotAfter(pem: string): Date | undefined {
  try {
    const notAfter = new Date(new X509Certificate(pem).validTo);
    return Number.isNaN(notAfter.getTime()) ? undefined : notAfter;
  } catch {
    return undefined;
  }
}

/** True when `pem` does not parse or expires in less than `renewBeforeHours` after `now`. */
export function certificateNeedsRenewal(pem: string, now: Date, renewBeforeHours: number): boolean {
  const notAfter = certificateNotAfter(pem);
  return notAfter === undefined || notAfter.getTime() - now.getTime() < renewBeforeHours * HOUR_MS;
}

/** True when the private key parses and belongs to the certificate (Go's `tls.X509KeyPair` check). */
export function keyMatchesCertificate(certPem: string, keyPem: string): boolean {
  try {
    return new X509Certificate(certPem).checkPrivateKey(createPrivateKey(keyPem));
  } catch {
    return false;
  }
}

const generateRsa = promisify(generateKeyPair);

export interface RsaKeyPair {
  privatePem: string;
  publicPem: string;
  pkcs8Pem: string;
}

/**
 * An RSA 2048 key pair, made on libuv's thread pool: its prime search takes ~170 ms on average here, with a long
 * tail, and made on the main thread it would stall every workflow task, watch event and Lease renewal meanwhile.
 */
async function rsaKeyPair(): Promise<RsaKeyPair> {
  const { privateKey, publicKey } = await generateRsa('rsa', { modulusLength: 2048 });
  return {
    privatePem: privateKey.export({ type: 'pkcs1', format: 'pem' }).toString(),
    publicPem: publicKey.export({ type: 'spki', format: 'pem' }).toString(),
    pkcs8Pem: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
  };
}

/**
 * What a new certificate starts from: its issuer's key pair and its own (made side by side), and its validity from
 * `now` (whole seconds, as X.509 stores them, backdated a minute for clock skew) until `now + validityHours`.
 */
export async function newCertificateKeys(opts: { validityHours: number; now: Date }): Promise<{
  ca: RsaKeyPair;
  server: RsaKeyPair;
  notBefore: Date;
  notAfter: Date;
}> {
  const nowMs = Math.floor(opts.now.getTime() / 1000) * 1000;
  const [ca, server] = await Promise.all([rsaKeyPair(), rsaKeyPair()]);
  return { ca, server, notBefore: new Date(nowMs - CLOCK_SKEW_MS), notAfter: new Date(nowMs + opts.validityHours * HOUR_MS) };
}

/** A positive 128-bit serial (hex, leading byte below 0x80). */
export function serial(): string {
  const b = randomBytes(16);
  b[0] = ((b[0] ?? 0) & 0x7f) | 0x01;
  return b.toString('hex');
}

const require = createRequire(import.meta.url);
let forgeModule: typeof Forge | undefined;
/**
 * node-forge, loaded the first time a certificate is made: a controller that finds its certificates in their Secrets
 * never needs it, and holding it costs ~2 MiB of heap for good.
 */
export function forge(): typeof Forge {
  return (forgeModule ??= require('node-forge') as typeof Forge);
}

/** A certificate for `publicPem`, issued and signed (SHA-256) by `issuerKey`. */
export function signCertificate(
  issuerKey: Forge.pki.rsa.PrivateKey,
  opts: {
    publicPem: string;
    subject: Forge.pki.CertificateField[];
    issuer: Forge.pki.CertificateField[];
    extensions: object[];
    notBefore: Date;
    notAfter: Date;
  },
): Forge.pki.Certificate {
  const { pki, md } = forge();
  const cert = pki.createCertificate();
  cert.publicKey = pki.publicKeyFromPem(opts.publicPem);
  cert.serialNumber = serial();
  cert.validity.notBefore = opts.notBefore;
  cert.validity.notAfter = opts.notAfter;
  cert.setSubject(opts.subject);
  cert.setIssuer(opts.issuer);
  cert.setExtensions(opts.extensions);
  cert.sign(issuerKey, md.sha256.create());
  return cert;
}

/**
 * Makes an ephemeral CA and a wildcard server certificate signed by it: CN `*`, DNS SAN `*`, ServerAuth, valid from
 * `now` (backdated a minute for clock skew) until `now + validityHours` (whole seconds, as X.509 stores them).
 */
export async function makeSelfSignedCertificate(opts: { validityHours: number; now: Date }): Promise<SelfSignedCertificate> {
  const { ca, server, notBefore, notAfter } = await newCertificateKeys(opts);
  const caPrivate = forge().pki.privateKeyFromPem(ca.privatePem);

  const sign = (
    publicPem: string,
    subject: Forge.pki.CertificateField[],
    issuer: Forge.pki.CertificateField[],
    extensions: object[],
    from: Date,
    until: Date,
  ): Forge.pki.Certificate => signCertificate(caPrivate, { publicPem, subject, issuer, extensions, notBefore: from, notAfter: until });

  const caName: Forge.pki.CertificateField[] = [
    { name: 'organizationName', value: ORGANIZATION },
    { name: 'commonName', value: 'tidal-gateway-ca' },
  ];
  // hakn discards the CA and writes only the server certificate, so the CA needs only a key and a name here: its own
  // certificate would never be used.
  const cert = sign(
    server.publicPem,
    [
      { name: 'organizationName', value: ORGANIZATION },
      { name: 'commonName', value: '*' },
    ],
    caName,
    [
      { name: 'basicConstraints', cA: false },
      { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, critical: true },
      { name: 'extKeyUsage', serverAuth: true },
      { name: 'subjectAltName', altNames: [{ type: 2, value: '*' }] },
    ],
    notBefore,
    notAfter,
  );

  return { certPem: forge().pki.certificateToPem(cert), keyPem: server.pkcs8Pem, notBefore, notAfter };
}

const b64 = (s: string): string => Buffer.from(s, 'utf8').toString('base64');
const unb64 = (s: string | undefined): string | undefined => (s === undefined ? undefined : Buffer.from(s, 'base64').toString('utf8'));

export function createCertificateActivities(deps: ActivityDeps) {
  const { kube, log } = deps;

  return {
    /** Keeps the gateway's TLS Secret holding a valid self-signed wildcard certificate; says when to look again. */
    async ensureGatewayCertificate(input: EnsureGatewayCertificateInput): Promise<EnsureGatewayCertificateResult> {
      const { namespace, name, validityHours, renewBeforeHours } = input;
      if (!(validityHours > renewBeforeHours) || !(renewBeforeHours >= 0)) {
        throw new Error(`validityHours (${validityHours}) must exceed renewBeforeHours (${renewBeforeHours}) >= 0`);
      }
      const now = deps.now?.() ?? new Date();
      const renewAtOf = (notAfter: Date) => new Date(notAfter.getTime() - renewBeforeHours * HOUR_MS).toISOString();

      const secret = await kube.get<SecretObject>(Resources.Secret, namespace, name);
      const certPem = unb64(secret?.data?.['tls.crt']);
      const keyPem = unb64(secret?.data?.['tls.key']);
      let reason: string | undefined;
      if (!secret) reason = 'Secret missing';
      else if (!certPem || !keyPem) reason = 'tls.crt or tls.key missing';
      else if (certificateNotAfter(certPem) === undefined) reason = 'tls.crt does not parse';
      else if (!keyMatchesCertificate(certPem, keyPem)) reason = 'tls.key does not parse or does not match tls.crt';
      else if (certificateNeedsRenewal(certPem, now, renewBeforeHours)) reason = `expires within ${renewBeforeHours}h`;

      if (reason === undefined && certPem) {
        const notAfter = certificateNotAfter(certPem) as Date;
        return { action: 'kept', notAfter: notAfter.toISOString(), renewAt: renewAtOf(notAfter) };
      }

      const made = await makeSelfSignedCertificate({ validityHours, now });
      const desired: SecretObject = {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name, namespace },
        type: 'kubernetes.io/tls',
        data: { 'tls.crt': b64(made.certPem), 'tls.key': b64(made.keyPem) },
      };
      await kube.apply(Resources.Secret, desired);
      const action = secret ? 'renewed' : 'created';
      const notAfter = made.notAfter.toISOString();
      log.info({ namespace, name, action, reason, notAfter }, 'gateway certificate written');
      return { action, notAfter, renewAt: renewAtOf(made.notAfter) };
    },

    /**
     * Keeps Secret `webhook-certs` (the admission webhook's CA and serving certificate) usable and its CA in the
     * webhook configurations' caBundle; renews before expiry (webhook/cert-secret.ts). Replicas reload it themselves.
     */
    async ensureWebhookCertificate(input: EnsureWebhookCertificateInput): Promise<EnsureGatewayCertificateResult> {
      const r = await ensureWebhookCertificates(kube, {
        systemNamespace: input.namespace,
        validityHours: input.validityHours,
        renewBeforeHours: input.renewBeforeHours,
        now: deps.now?.() ?? new Date(),
        caPropagationMs: 2000,
        log: (fields, msg) => log.info(fields, msg),
      });
      return { action: r.action, notAfter: r.notAfter, renewAt: r.renewAt };
    },
  };
}
