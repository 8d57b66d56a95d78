// The gateway's self-signed wildcard certificate (hakn `pkg/reconciler/certificates`):
// the Secret `istio-system/tls-cert` that the Gateway's HTTPS server names as
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
import { Resources } from '../api/kinds.js';
import type { KubeObject } from '../api/meta.js';
import type { ActivityDeps } from './deps.js';
import { ensureWebhookCertificates } from '../pki/webhook-secret.js';
import { certificateNeedsRenewal, certificateNotAfter, HOUR_MS, keyMatchesCertificate } from '../pki/x509.js';
import { makeSelfSignedCertificate } from '../pki/self-signed.js';

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
     * webhook configurations' caBundle; renews before expiry (pki/webhook-secret.ts). Replicas reload it themselves.
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
