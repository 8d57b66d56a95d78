// The webhook's own certificates: a CA and a serving certificate it signs, made with node-forge,
// as Knative's webhook keeps them in Secret `webhook-certs` (`ca-cert.pem`, `server-cert.pem`, `server-key.pem`).
// The CA's key is thrown away: a renewal makes a new CA, and the caBundle of the webhook configurations carries the
// old CA beside the new one until the next renewal, so replicas that still serve the old certificate stay trusted.
import { X509Certificate } from 'node:crypto';
import type Forge from 'node-forge';
import { certificateNotAfter, forge, keyMatchesCertificate, newCertificateKeys, signCertificate } from './x509.js';

export const WEBHOOK_CERTS_SECRET = 'webhook-certs';
export const WEBHOOK_SERVICE = 'webhook';
export const SecretKeys = { caCert: 'ca-cert.pem', serverCert: 'server-cert.pem', serverKey: 'server-key.pem' } as const;

export interface WebhookCertificates {
  caCertPem: string;
  certPem: string;
  /** PKCS#8 PEM. */
  keyPem: string;
}

const HOUR_MS = 3_600_000;

/** Names the serving certificate is valid for: the webhook Service's DNS names, plus loopback for the local stack. */
export function webhookSubjectAltNames(systemNamespace: string): { dns: string[]; ips: string[] } {
  const svc = `${WEBHOOK_SERVICE}.${systemNamespace}`;
  return { dns: [WEBHOOK_SERVICE, svc, `${svc}.svc`, `${svc}.svc.cluster.local`, 'localhost'], ips: ['127.0.0.1'] };
}

/** A new CA (valid as long as the certificate) and a serving certificate signed by it, from `now` for `validityHours`. */
export async function makeWebhookCertificates(opts: { systemNamespace: string; validityHours: number; now: Date }): Promise<WebhookCertificates> {
  const { ca, server, notBefore, notAfter } = await newCertificateKeys(opts);
  const { pki } = forge();
  const caKey = pki.privateKeyFromPem(ca.privatePem);
  const caSubject: Forge.pki.CertificateField[] = [
    { name: 'organizationName', value: 'Tidal' },
    { name: 'commonName', value: 'tidal-webhook-ca' },
  ];
  const make = (publicPem: string, subject: Forge.pki.CertificateField[], extensions: object[]): Forge.pki.Certificate =>
    signCertificate(caKey, { publicPem, subject, issuer: caSubject, extensions, notBefore, notAfter });
  const caCert = make(ca.publicPem, caSubject, [
    { name: 'basicConstraints', cA: true, critical: true },
    { name: 'keyUsage', keyCertSign: true, digitalSignature: true, critical: true },
    { name: 'subjectKeyIdentifier' },
  ]);
  const san = webhookSubjectAltNames(opts.systemNamespace);
  const serverCert = make(
    server.publicPem,
    [
      { name: 'organizationName', value: 'Tidal' },
      { name: 'commonName', value: `${WEBHOOK_SERVICE}.${opts.systemNamespace}.svc` },
    ],
    [
      { name: 'basicConstraints', cA: false },
      { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, critical: true },
      { name: 'extKeyUsage', serverAuth: true },
      { name: 'subjectAltName', altNames: [...san.dns.map((value) => ({ type: 2, value })), ...san.ips.map((ip) => ({ type: 7, ip }))] },
    ],
  );
  return { caCertPem: pki.certificateToPem(caCert), certPem: pki.certificateToPem(serverCert), keyPem: server.pkcs8Pem };
}

/**
 * Why the certificates must be replaced, or undefined when they are usable: every part present, the key matching the
 * certificate, the certificate issued by the CA, covering the webhook's names, and not expiring within `renewBeforeHours`.
 */
export function webhookCertificatesProblem(
  certs: Partial<WebhookCertificates>,
  opts: { systemNamespace: string; renewBeforeHours: number; now: Date },
): string | undefined {
  const { caCertPem, certPem, keyPem } = certs;
  if (!caCertPem || !certPem || !keyPem) return 'a key of the Secret is missing';
  const notAfter = certificateNotAfter(certPem);
  if (!notAfter || !certificateNotAfter(caCertPem)) return 'a certificate does not parse';
  if (!keyMatchesCertificate(certPem, keyPem)) return 'the key does not match the certificate';
  const cert = new X509Certificate(certPem);
  if (!cert.verify(new X509Certificate(caCertPem).publicKey)) return 'the certificate is not signed by the CA';
  const san = webhookSubjectAltNames(opts.systemNamespace);
  if (!san.dns.every((d) => cert.checkHost(d, { wildcards: false }) !== undefined)) return 'the certificate does not cover the webhook Service names';
  if (notAfter.getTime() - opts.now.getTime() < opts.renewBeforeHours * HOUR_MS) return `it expires within ${opts.renewBeforeHours}h`;
  return undefined;
}

/** The PEM certificates of a bundle, in order. */
export function splitPemBundle(bundle: string): string[] {
  return bundle.match(/-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g) ?? [];
}

/**
 * The caBundle to publish: `ca` first, then the CAs of `current` that are still valid at `now` (the replicas may
 * still serve certificates they signed), at most `keep` in all.
 */
export function mergeCaBundle(current: string, ca: string, now: Date, keep = 3): string {
  const fingerprint = (pem: string) => new X509Certificate(pem).fingerprint256;
  const want = fingerprint(ca);
  const others = splitPemBundle(current).filter((pem) => {
    const notAfter = certificateNotAfter(pem);
    return notAfter !== undefined && notAfter > now && fingerprint(pem) !== want;
  });
  return [ca.trim(), ...others.map((p) => p.trim())].slice(0, keep).join('\n') + '\n';
}
