// The local stack's PKI: a CA, the kube-apiserver serving certificate, an admin client certificate
// (system:masters) and the service-account signing key. Made once per stack folder and reused.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import path from 'node:path';
import forge from 'node-forge';

export interface Pki {
  dir: string;
  caCert: string;
  caKey: string;
  apiserverCert: string;
  apiserverKey: string;
  adminCert: string;
  adminKey: string;
  saKey: string;
  saPub: string;
}

export function keyPair(): { privatePem: string; publicPem: string } {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  return {
    privatePem: privateKey.export({ type: 'pkcs1', format: 'pem' }).toString(),
    publicPem: publicKey.export({ type: 'spki', format: 'pem' }).toString(),
  };
}

export interface CertSpec {
  subject: forge.pki.CertificateField[];
  issuer?: { cert: forge.pki.Certificate; key: forge.pki.rsa.PrivateKey };
  extensions: object[];
  days: number;
}

/** A certificate for `publicPem`, self-signed with `signingKeyPem` or signed by `spec.issuer`. */
export function makeCert(publicPem: string, signingKeyPem: string, spec: CertSpec): forge.pki.Certificate {
  const cert = forge.pki.createCertificate();
  cert.publicKey = forge.pki.publicKeyFromPem(publicPem);
  cert.serialNumber = `01${randomBytes(15).toString('hex')}`;
  cert.validity.notBefore = new Date(Date.now() - 60_000);
  cert.validity.notAfter = new Date(Date.now() + spec.days * 86_400_000);
  cert.setSubject(spec.subject);
  cert.setIssuer(spec.issuer ? spec.issuer.cert.subject.attributes : spec.subject);
  cert.setExtensions(spec.extensions);
  cert.sign(spec.issuer?.key ?? forge.pki.privateKeyFromPem(signingKeyPem), forge.md.sha256.create());
  return cert;
}

/** Creates the PKI in `dir` unless it is already there. */
export function ensurePki(dir: string): Pki {
  mkdirSync(dir, { recursive: true });
  const p = (f: string) => path.join(dir, f);
  const pki: Pki = {
    dir,
    caCert: p('ca.crt'),
    caKey: p('ca.key'),
    apiserverCert: p('apiserver.crt'),
    apiserverKey: p('apiserver.key'),
    adminCert: p('admin.crt'),
    adminKey: p('admin.key'),
    saKey: p('sa.key'),
    saPub: p('sa.pub'),
  };
  if (existsSync(pki.adminKey) && existsSync(pki.saPub)) return pki;

  const ca = keyPair();
  const caCert = makeCert(ca.publicPem, ca.privatePem, {
    subject: [{ name: 'commonName', value: 'tidal-local-ca' }],
    extensions: [
      { name: 'basicConstraints', cA: true, critical: true },
      { name: 'keyUsage', keyCertSign: true, cRLSign: true, digitalSignature: true, critical: true },
    ],
    days: 3650,
  });
  const issuer = { cert: caCert, key: forge.pki.privateKeyFromPem(ca.privatePem) };

  const api = keyPair();
  const apiCert = makeCert(api.publicPem, '', {
    subject: [{ name: 'commonName', value: 'kube-apiserver' }],
    issuer,
    extensions: [
      { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, critical: true },
      { name: 'extKeyUsage', serverAuth: true },
      {
        name: 'subjectAltName',
        altNames: [
          { type: 7, ip: '127.0.0.1' },
          { type: 7, ip: '10.96.0.1' },
          { type: 2, value: 'localhost' },
          { type: 2, value: 'kubernetes' },
          { type: 2, value: 'kubernetes.default' },
          { type: 2, value: 'kubernetes.default.svc' },
          { type: 2, value: 'kubernetes.default.svc.cluster.local' },
        ],
      },
    ],
    days: 3650,
  });

  const admin = keyPair();
  const adminCert = makeCert(admin.publicPem, '', {
    subject: [
      { name: 'organizationName', value: 'system:masters' },
      { name: 'commonName', value: 'tidal-admin' },
    ],
    issuer,
    extensions: [
      { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, critical: true },
      { name: 'extKeyUsage', clientAuth: true },
    ],
    days: 3650,
  });

  const sa = keyPair();
  writeFileSync(pki.caCert, forge.pki.certificateToPem(caCert));
  writeFileSync(pki.caKey, ca.privatePem, { mode: 0o600 });
  writeFileSync(pki.apiserverCert, forge.pki.certificateToPem(apiCert));
  writeFileSync(pki.apiserverKey, api.privatePem, { mode: 0o600 });
  writeFileSync(pki.saKey, sa.privatePem, { mode: 0o600 });
  writeFileSync(pki.saPub, sa.publicPem);
  writeFileSync(pki.adminCert, forge.pki.certificateToPem(adminCert));
  writeFileSync(pki.adminKey, admin.privatePem, { mode: 0o600 });
  return pki;
}

/** An admin kubeconfig with the certificates embedded, so it works from any folder. */
export function writeKubeconfig(file: string, pki: Pki, server: string): void {
  const b64 = (f: string) => readFileSync(f).toString('base64');
  writeFileSync(
    file,
    [
      'apiVersion: v1',
      'kind: Config',
      'clusters:',
      '- name: tidal',
      '  cluster:',
      `    server: ${server}`,
      `    certificate-authority-data: ${b64(pki.caCert)}`,
      'users:',
      '- name: tidal-admin',
      '  user:',
      `    client-certificate-data: ${b64(pki.adminCert)}`,
      `    client-key-data: ${b64(pki.adminKey)}`,
      'contexts:',
      '- name: tidal',
      '  context: {cluster: tidal, user: tidal-admin, namespace: default}',
      'current-context: tidal',
      '',
    ].join('\n'),
    { mode: 0o600 },
  );
}
