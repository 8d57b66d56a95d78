// Keeps Secret `webhook-certs` holding usable certificates and the webhook configurations trusting their CA. Called by
// every replica at start (the first creates the Secret, the others read it; a lost create race re-reads) and by the
// certificate workflow on its durable timer (renewal). Order on renewal: the caBundle gains the new CA first, then the
// Secret changes, so whatever certificate a replica serves meanwhile is trusted.
import { Resources } from '../api/kinds.js';
import type { KubeObject } from '../api/meta.js';
import type { KubeClient } from '../kube/client.js';
import { isConflict } from '../kube/errors.js';
import { certificateNotAfter } from './x509.js';
import {
  makeWebhookCertificates,
  mergeCaBundle,
  SecretKeys,
  WEBHOOK_CERTS_SECRET,
  webhookCertificatesProblem,
  type WebhookCertificates,
} from './webhook-certificates.js';

/** The webhook configurations whose caBundle carries the CA: Knative's names. */
export const WebhookConfigurations = [
  { type: Resources.MutatingWebhookConfiguration, name: 'webhook.serving.knative.dev' },
  { type: Resources.ValidatingWebhookConfiguration, name: 'validation.webhook.serving.knative.dev' },
  { type: Resources.ValidatingWebhookConfiguration, name: 'config.webhook.serving.knative.dev' },
] as const;

type SecretObject = KubeObject & { type?: string; data?: Record<string, string> };
type WebhookConfigurationObject = KubeObject & { webhooks?: { name: string; clientConfig?: { caBundle?: string } }[] };

export interface EnsureWebhookCertificatesOptions {
  systemNamespace: string;
  validityHours: number;
  renewBeforeHours: number;
  now: Date;
  /** Wait between publishing a new CA and writing the certificates it signed (the API server's config watch lag). */
  caPropagationMs?: number;
  log?: (fields: Record<string, unknown>, msg: string) => void;
}

export interface EnsureWebhookCertificatesResult {
  action: 'created' | 'renewed' | 'kept';
  certs: WebhookCertificates;
  resourceVersion: string;
  /** NotAfter of the serving certificate (ISO 8601). */
  notAfter: string;
  /** When to look again: NotAfter − renewBeforeHours (ISO 8601). */
  renewAt: string;
}

export type CertKube = Pick<KubeClient, 'get' | 'create' | 'mergePatch' | 'apply'>;

const HOUR_MS = 3_600_000;
const b64 = (s: string) => Buffer.from(s, 'utf8').toString('base64');
const unb64 = (s: string | undefined) => (s === undefined ? undefined : Buffer.from(s, 'base64').toString('utf8'));

/** The certificates a Secret holds (possibly partial). */
export function certificatesOfSecret(secret: SecretObject | undefined): Partial<WebhookCertificates> {
  const d = secret?.data ?? {};
  return { caCertPem: unb64(d[SecretKeys.caCert]), certPem: unb64(d[SecretKeys.serverCert]), keyPem: unb64(d[SecretKeys.serverKey]) };
}

function secretData(c: WebhookCertificates): Record<string, string> {
  return { [SecretKeys.caCert]: b64(c.caCertPem), [SecretKeys.serverCert]: b64(c.certPem), [SecretKeys.serverKey]: b64(c.keyPem) };
}

/**
 * Adds `caPem` to the caBundle of every webhook of the three configurations (keeping the other CAs still valid), by
 * server-side apply of that one field. A configuration that is not registered is skipped: the installer registers
 * them, this only keeps their trust current.
 */
export async function publishCaBundle(kube: CertKube, caPem: string, now: Date): Promise<number> {
  let written = 0;
  await Promise.all(
    WebhookConfigurations.map(async ({ type, name }) => {
      const current = await kube.get<WebhookConfigurationObject>(type, '', name);
      if (!current?.webhooks?.length) return;
      const webhooks = current.webhooks.map((w) => {
        const had = unb64(w.clientConfig?.caBundle) ?? '';
        return { name: w.name, had, want: mergeCaBundle(had, caPem, now) };
      });
      if (webhooks.every((w) => w.had === w.want)) return;
      await kube.apply(type, {
        apiVersion: 'admissionregistration.k8s.io/v1',
        kind: type.kind,
        metadata: { name },
        webhooks: webhooks.map((w) => ({ name: w.name, clientConfig: { caBundle: b64(w.want) } })),
      } as KubeObject);
      written += 1;
    }),
  );
  return written;
}

function result(action: EnsureWebhookCertificatesResult['action'], certs: WebhookCertificates, rv: string | undefined, renewBeforeHours: number) {
  const notAfter = certificateNotAfter(certs.certPem) ?? new Date(0);
  return {
    action,
    certs,
    resourceVersion: rv ?? '',
    notAfter: notAfter.toISOString(),
    renewAt: new Date(notAfter.getTime() - renewBeforeHours * HOUR_MS).toISOString(),
  };
}

/**
 * Makes sure Secret `webhook-certs` holds usable certificates (creating or renewing them), publishes their CA in the
 * webhook configurations, and returns them. Safe to run on every replica at once: creation and renewal are
 * conditional writes, and the loser of a race adopts what the winner wrote.
 */
export async function ensureWebhookCertificates(kube: CertKube, opts: EnsureWebhookCertificatesOptions): Promise<EnsureWebhookCertificatesResult> {
  const { systemNamespace: namespace, renewBeforeHours, now } = opts;
  const log = opts.log ?? (() => {});
  const name = WEBHOOK_CERTS_SECRET;
  const secret = await kube.get<SecretObject>(Resources.Secret, namespace, name);
  const held = certificatesOfSecret(secret);
  const problem = secret ? webhookCertificatesProblem(held, { systemNamespace: namespace, renewBeforeHours, now }) : 'the Secret is missing';

  if (secret && problem === undefined) {
    const certs = held as WebhookCertificates;
    await publishCaBundle(kube, certs.caCertPem, now);
    return result('kept', certs, secret.metadata.resourceVersion, renewBeforeHours);
  }

  const fresh = await makeWebhookCertificates({ systemNamespace: namespace, validityHours: opts.validityHours, now });
  // Trust first, then serve: the new CA joins the bundle before any replica can load the certificate it signed.
  await publishCaBundle(kube, fresh.caCertPem, now);
  if ((opts.caPropagationMs ?? 0) > 0) await new Promise((r) => setTimeout(r, opts.caPropagationMs));
  try {
    let written: SecretObject;
    if (!secret) {
      written = await kube.create<SecretObject>(Resources.Secret, {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name, namespace, labels: { 'app.kubernetes.io/name': 'knative-serving', 'app.kubernetes.io/component': 'webhook' } },
        type: 'Opaque',
        data: secretData(fresh),
      });
    } else {
      // A merge patch carrying resourceVersion is conditional: a replica that renewed meanwhile wins.
      written = await kube.mergePatch<SecretObject>(Resources.Secret, namespace, name, {
        metadata: { resourceVersion: secret.metadata.resourceVersion },
        data: secretData(fresh),
      });
    }
    const action = secret ? 'renewed' : 'created';
    log(
      { kind: 'Secret', namespace, name, action, reason: problem, notAfter: certificateNotAfter(fresh.certPem)?.toISOString() },
      'webhook certificates written',
    );
    return result(action, fresh, written.metadata.resourceVersion, renewBeforeHours);
  } catch (err) {
    if (!isConflict(err)) throw err;
    // Another replica created or renewed the Secret first: adopt its certificates (and make sure their CA is trusted).
    const winner = await kube.get<SecretObject>(Resources.Secret, namespace, name);
    const certs = certificatesOfSecret(winner);
    const stillBad = webhookCertificatesProblem(certs, { systemNamespace: namespace, renewBeforeHours: 0, now });
    if (!winner || stillBad !== undefined) throw new Error(`Secret ${namespace}/${name} changed under us and is not usable: ${stillBad ?? 'gone'}`);
    await publishCaBundle(kube, (certs as WebhookCertificates).caCertPem, now);
    log({ kind: 'Secret', namespace, name }, 'webhook certificates written by another replica; using them');
    return result('kept', certs as WebhookCertificates, winner.metadata.resourceVersion, renewBeforeHours);
  }
}
