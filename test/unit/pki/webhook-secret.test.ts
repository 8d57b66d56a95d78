import { X509Certificate } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { ResourceType } from '../../../api/kinds.js';
import type { KubeObject } from '../../../api/meta.js';
import { KubeApiError } from '../../../kube/errors.js';
import { splitPemBundle, webhookCertificatesProblem } from '../../../pki/webhook-certificates.js';
import { ensureWebhookCertificates, type CertKube } from '../../../pki/webhook-secret.js';

type Obj = KubeObject & Record<string, unknown>;

/** An in-memory API server for the calls the certificate keeper makes, with resourceVersions and conflicts. */
class FakeKube implements CertKube {
  objects = new Map<string, Obj>();
  rv = 1;
  /** Runs before a create or patch of the Secret lands: lets a test have "another replica" win the race. */
  beforeSecretWrite?: () => Promise<void>;
  private key(type: ResourceType, ns: string, name: string) {
    return `${type.kind}/${ns}/${name}`;
  }
  put(type: ResourceType, obj: Obj): Obj {
    const stored = { ...structuredClone(obj), metadata: { ...obj.metadata, resourceVersion: String(++this.rv) } };
    this.objects.set(this.key(type, obj.metadata.namespace ?? '', obj.metadata.name ?? ''), stored);
    return stored;
  }
  get<T extends KubeObject>(type: ResourceType, ns: string, name: string): Promise<T | undefined> {
    return Promise.resolve(structuredClone(this.objects.get(this.key(type, ns, name))) as T | undefined);
  }
  async create<T extends KubeObject>(type: ResourceType, obj: T): Promise<T> {
    await this.beforeSecretWrite?.();
    if (this.objects.has(this.key(type, obj.metadata.namespace ?? '', obj.metadata.name ?? ''))) {
      return Promise.reject(new KubeApiError(409, 'AlreadyExists', 'exists', 'CREATE', '/'));
    }
    return Promise.resolve(this.put(type, obj as unknown as Obj) as unknown as T);
  }
  async mergePatch<T extends KubeObject>(type: ResourceType, ns: string, name: string, patch: unknown): Promise<T> {
    await this.beforeSecretWrite?.();
    const cur = this.objects.get(this.key(type, ns, name));
    const p = patch as { metadata: { resourceVersion: string }; data: Record<string, string> };
    if (!cur || cur.metadata.resourceVersion !== p.metadata.resourceVersion) {
      return Promise.reject(new KubeApiError(409, 'Conflict', 'modified', 'PATCH', '/'));
    }
    return Promise.resolve(this.put(type, { ...cur, data: p.data }) as unknown as T);
  }
  apply<T extends KubeObject>(type: ResourceType, obj: T): Promise<T> {
    const cur = this.objects.get(this.key(type, '', obj.metadata.name ?? '')) as Obj & { webhooks: { name: string; clientConfig: object }[] };
    const patch = obj as unknown as { webhooks: { name: string; clientConfig: { caBundle: string } }[] };
    const webhooks = cur.webhooks.map((w) => {
      const p = patch.webhooks.find((x) => x.name === w.name);
      return p ? { ...w, clientConfig: { ...w.clientConfig, caBundle: p.clientConfig.caBundle } } : w;
    });
    return Promise.resolve(this.put(type, { ...cur, webhooks }) as unknown as T);
  }
}

const MutatingType = { group: 'admissionregistration.k8s.io', version: 'v1', kind: 'MutatingWebhookConfiguration', plural: 'x', namespaced: false };
const ValidatingType = { ...MutatingType, kind: 'ValidatingWebhookConfiguration' };

function withConfigurations(kube: FakeKube): FakeKube {
  const cfg = (kind: string, name: string) => ({
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind,
    metadata: { name },
    webhooks: [{ name, clientConfig: { url: `https://127.0.0.1:8443/${name}` } }],
  });
  kube.put(MutatingType, cfg('MutatingWebhookConfiguration', 'webhook.serving.knative.dev'));
  kube.put(ValidatingType, cfg('ValidatingWebhookConfiguration', 'validation.webhook.serving.knative.dev'));
  kube.put(ValidatingType, cfg('ValidatingWebhookConfiguration', 'config.webhook.serving.knative.dev'));
  return kube;
}

function caBundles(kube: FakeKube): string[][] {
  return [...kube.objects.values()]
    .filter((o) => o.kind.endsWith('WebhookConfiguration'))
    .map((o) =>
      splitPemBundle(
        Buffer.from((o as unknown as { webhooks: { clientConfig: { caBundle: string } }[] }).webhooks[0]!.clientConfig.caBundle, 'base64').toString(),
      ),
    );
}

const opts = { systemNamespace: 'knative-serving', validityHours: 168, renewBeforeHours: 24, now: new Date('2026-11-24T00:00:00Z') };

// Each pass may make two RSA key pairs, whose prime search has a long tail: the same allowance as the gateway
// certificate's tests (test/unit/activities/certificate.test.ts).
describe('ensureWebhookCertificates', { timeout: 30_000 }, () => {
  it('creates the Secret with a CA and a serving certificate for the webhook names and loopback, and publishes the CA', async () => {
    const kube = withConfigurations(new FakeKube());
    const r = await ensureWebhookCertificates(kube, opts);
    expect(r.action).toBe('created');
    expect(webhookCertificatesProblem(r.certs, { ...opts, renewBeforeHours: 0 })).toBeUndefined();
    const cert = new X509Certificate(r.certs.certPem);
    expect(cert.subjectAltName).toContain('DNS:webhook.knative-serving.svc');
    expect(cert.subjectAltName).toContain('DNS:webhook.knative-serving.svc.cluster.local');
    expect(cert.subjectAltName).toContain('IP Address:127.0.0.1');
    expect(r.notAfter).toBe('2026-12-01T00:00:00.000Z');
    expect(r.renewAt).toBe('2026-11-30T00:00:00.000Z');
    expect(caBundles(kube)).toEqual([[r.certs.caCertPem.trim()], [r.certs.caCertPem.trim()], [r.certs.caCertPem.trim()]]);
  });

  it('keeps usable certificates: a second replica reads what the first wrote', async () => {
    const kube = withConfigurations(new FakeKube());
    const first = await ensureWebhookCertificates(kube, opts);
    const second = await ensureWebhookCertificates(kube, { ...opts, now: new Date('2026-11-25T00:00:00Z') });
    expect(second.action).toBe('kept');
    expect(second.certs).toEqual(first.certs);
  });

  it('renews within renewBeforeHours of expiry, keeping the old CA trusted beside the new one', async () => {
    const kube = withConfigurations(new FakeKube());
    const first = await ensureWebhookCertificates(kube, opts);
    const later = { ...opts, now: new Date('2026-11-30T06:00:00Z') };
    const renewed = await ensureWebhookCertificates(kube, later);
    expect(renewed.action).toBe('renewed');
    expect(renewed.certs.certPem).not.toBe(first.certs.certPem);
    expect(caBundles(kube)[0]).toEqual([renewed.certs.caCertPem.trim(), first.certs.caCertPem.trim()]);
    // Once the old CA has expired it leaves the bundle at the next renewal.
    const muchLater = await ensureWebhookCertificates(kube, { ...opts, now: new Date('2026-12-07T05:00:00Z') });
    expect(caBundles(kube)[1]).toEqual([muchLater.certs.caCertPem.trim(), renewed.certs.caCertPem.trim()]);
  });

  it('replaces certificates that do not match (a foreign key) even when far from expiry', async () => {
    const kube = withConfigurations(new FakeKube());
    const first = await ensureWebhookCertificates(kube, opts);
    const other = await ensureWebhookCertificates(withConfigurations(new FakeKube()), opts);
    const secret = [...kube.objects.values()].find((o) => o.kind === 'Secret')!;
    (secret as unknown as { data: Record<string, string> }).data['server-key.pem'] = Buffer.from(other.certs.keyPem).toString('base64');
    const r = await ensureWebhookCertificates(kube, opts);
    expect(r.action).toBe('renewed');
    expect(r.certs.certPem).not.toBe(first.certs.certPem);
  });

  it("a replica that loses the create race adopts the winner's certificates and trusts their CA", async () => {
    const kube = withConfigurations(new FakeKube());
    let winner: Awaited<ReturnType<typeof ensureWebhookCertificates>> | undefined;
    const shared = kube;
    // The other replica's create lands just before ours.
    shared.beforeSecretWrite = async () => {
      shared.beforeSecretWrite = undefined;
      winner = await ensureWebhookCertificates(shared, opts);
    };
    const loser = await ensureWebhookCertificates(kube, opts);
    expect(winner?.action).toBe('created');
    expect(loser.action).toBe('kept');
    expect(loser.certs).toEqual(winner?.certs);
    for (const bundle of caBundles(kube)) expect(bundle).toContain(winner!.certs.caCertPem.trim());
  });
});
