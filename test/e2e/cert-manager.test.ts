// The certificate class cert-manager.certificate.networking.knative.dev with a real issuer: the e2e stack runs
// cert-manager's controller (dev/cert-manager.ts) with the CA ClusterIssuer tidal-ca that config-certmanager names.
// A Service on a public domain of its own gets, with external-domain-tls on, a Knative Certificate that Tidal turns
// into a cert-manager Certificate; cert-manager issues it from the CA; the Knative Certificate turns Ready, the KIngress
// carries the Secret and the URL is https. The issued certificate chains to the CA and names the host. A renewal
// (cert-manager's "renew now", as `cmctl renew` asks for it) reaches the Secret's copy at the gateway.
// config-network and config-domain are put back at the end (the e2e files share one stack).
import { X509Certificate } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Condition } from '../../api/serving.js';
import { apply, getObject, kubectl, kubectlJson } from '../harness/cluster.js';
import { eventually } from '../harness/wait.js';

const NAME = 'cm-hello';
const HOST = `${NAME}.default.cm.example`;
const KCERT = 'certificates.networking.internal.knative.dev';
const CMCERT = 'certificates.cert-manager.io';

interface Obj {
  metadata: { name: string; uid: string; generation?: number };
  status?: { url?: string; conditions?: Condition[]; notAfter?: string; revision?: number };
}
type Secret = Obj & { data: Record<string, string> };

const cond = (o: Obj | undefined, t: string) => o?.status?.conditions?.find((c) => c.type === t);
const patchCm = (name: string, data: Record<string, string | null>) =>
  kubectl(['patch', 'configmap', name, '-n', 'knative-serving', '--type=merge', '-p', JSON.stringify({ data })]);
const pem = (s: Secret, key: string) => Buffer.from(s.data[key] ?? '', 'base64');

let before: { network: Record<string, string>; domain: Record<string, string> };

beforeAll(async () => {
  const read = async (name: string) =>
    (await kubectlJson<{ data?: Record<string, string> }>(['get', 'configmap', name, '-n', 'knative-serving'])).data ?? {};
  before = { network: await read('config-network'), domain: await read('config-domain') };
  await patchCm('config-domain', { 'cm.example': 'selector:\n  tidal.dev/e2e: cert-manager\n' });
  await patchCm('config-network', { 'external-domain-tls': 'Enabled' });
  await apply({
    apiVersion: 'serving.knative.dev/v1',
    kind: 'Service',
    metadata: { name: NAME, namespace: 'default', labels: { 'tidal.dev/e2e': 'cert-manager' } },
    spec: { template: { spec: { containers: [{ image: 'nginx:1.27', ports: [{ containerPort: 80 }] }] } } },
  });
});

afterAll(async () => {
  await kubectl(['delete', 'ksvc', NAME, '--ignore-not-found']);
  const restore = (now: Record<string, string>, keys: string[]) => Object.fromEntries(keys.map((k) => [k, now[k] ?? null]));
  await patchCm('config-network', restore(before.network, ['external-domain-tls']));
  await patchCm('config-domain', restore(before.domain, ['cm.example']));
});

describe('certificate class cert-manager with the stack CA', () => {
  let certName = '';

  it('the Route is served at https once cert-manager has issued its certificate', async () => {
    const ksvc = await eventually(
      'ksvc at https and Ready',
      async () => {
        const s = await getObject<Obj>('ksvc', NAME);
        return s?.status?.url === `https://${HOST}` && cond(s, 'Ready')?.status === 'True' ? s : undefined;
      },
      120_000,
    );
    expect(ksvc.status?.url).toBe(`https://${HOST}`);
    const route = await getObject<Obj>('route', NAME);
    certName = `route-${route?.metadata.uid ?? ''}`;
    expect(cond(route, 'CertificateProvisioned')?.status).toBe('True');
    const kcert = await kubectlJson<Obj>(['get', KCERT, certName]);
    expect(cond(kcert, 'Ready')?.status).toBe('True');
    const cm = await kubectlJson<Obj & { spec: { issuerRef: unknown; dnsNames: string[] } }>(['get', CMCERT, certName]);
    expect(cm.spec.issuerRef).toEqual({ kind: 'ClusterIssuer', name: 'tidal-ca' });
    expect(kcert.status?.notAfter).toBe(cm.status?.notAfter);
  });

  it("the issued certificate names the host and chains to the stack's CA", async () => {
    const secret = await kubectlJson<Secret>(['get', 'secret', certName]);
    const ca = new X509Certificate(pem(await kubectlJson<Secret>(['get', 'secret', '-n', 'cert-manager', 'tidal-ca']), 'ca.crt'));
    const leaf = new X509Certificate(pem(secret, 'tls.crt'));
    expect(leaf.checkHost(HOST)).toBe(HOST);
    expect(leaf.verify(ca.publicKey)).toBe(true);
    expect(leaf.issuer).toBe(ca.subject);
  });

  it('a renewal reaches the Secret the gateway serves', async () => {
    const ing = await kubectlJson<{ spec: { tls?: { secretName: string }[] } }>(['get', 'ingresses.networking.internal.knative.dev', NAME]);
    expect(ing.spec.tls?.[0]?.secretName).toBe(certName);
    const origin = await kubectlJson<Secret>(['get', 'secret', certName]);
    const copyName = `${NAME}-${origin.metadata.uid}`;
    const served = (await kubectlJson<Secret>(['get', 'secret', '-n', 'istio-system', copyName])).data['tls.crt'];
    expect(served).toBe(origin.data['tls.crt']);
    // What `cmctl renew` does: the Issuing condition, which cert-manager's issuing controllers act on.
    const issuing = {
      type: 'Issuing',
      status: 'True',
      reason: 'ManuallyTriggered',
      message: 'Certificate re-issuance manually triggered',
      lastTransitionTime: new Date().toISOString(),
    };
    const cm = await kubectlJson<Obj>(['get', CMCERT, certName]);
    const conditions = [...(cm.status?.conditions ?? []).filter((c) => c.type !== 'Issuing'), issuing];
    await kubectl(['patch', CMCERT, certName, '--subresource=status', '--type=merge', '-p', JSON.stringify({ status: { conditions } })]);
    const renewed = await eventually(
      'the renewed certificate at the gateway',
      async () => {
        const copy = await kubectlJson<Secret>(['get', 'secret', '-n', 'istio-system', copyName]);
        return copy.data['tls.crt'] !== served ? copy : undefined;
      },
      90_000,
    );
    const now = await kubectlJson<Secret>(['get', 'secret', certName]);
    expect(renewed.data['tls.crt']).toBe(now.data['tls.crt']);
    expect(new X509Certificate(pem(renewed, 'tls.crt')).serialNumber).not.toBe(new X509Certificate(Buffer.from(served ?? '', 'base64')).serialNumber);
  });
});
