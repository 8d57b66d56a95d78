// The gateway's self-signed wildcard certificate: an ephemeral CA (thrown away) signs one server certificate for `*`.
import type Forge from 'node-forge';
import { forge, newCertificateKeys, ORGANIZATION, signCertificate } from './x509.js';

export interface SelfSignedCertificate {
  /** PEM of the server certificate only (the CA is discarded). */
  certPem: string;
  /** PKCS#8 `PRIVATE KEY` PEM of the server key. */
  keyPem: string;
  notBefore: Date;
  notAfter: Date;
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
