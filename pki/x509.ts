// X.509 building blocks: parse and check certificates, make RSA key pairs off the main thread, sign with node-forge.
import { createPrivateKey, generateKeyPair, randomBytes, X509Certificate } from 'node:crypto';
import { promisify } from 'node:util';
import { createRequire } from 'node:module';
import type Forge from 'node-forge';

export const HOUR_MS = 3_600_000;
/** Backdating of NotBefore, for clocks a little behind ours. */
const CLOCK_SKEW_MS = 60_000;
export const ORGANIZATION = 'Tidal';

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
 * An RSA 2048 key pair, made on libuv's thread pool: its prime search takes long enough, with a long tail,
 * that made on the main thread it would stall every workflow task, watch event and Lease renewal meanwhile.
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
 * never needs it, and holding it costs heap for good.
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
