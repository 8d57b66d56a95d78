// external-domain-tls as a Knative user turns it on (config-network), with the test playing the certificate class's
// controller through kubectl (it writes the Secret and the Knative Certificate's status, as net-certmanager would):
// the Route's Certificate, HTTP meanwhile (HTTPDowngrade), then spec.tls on the KIngress, the Secret copied into
// istio-system, the KIngress's own Gateway with the HTTPS server, and an https URL; http-protocol Redirected turns the
// HTTP server into a redirect. The Service uses a domain of its own (a config-domain selector), and config-network and
// config-domain are put back at the end (the e2e files share one stack).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Condition } from '../../api/serving.js';
import { apply, getObject, kubectl, kubectlJson } from '../harness/cluster.js';
import { eventually } from '../harness/wait.js';
import { tlsSecret } from '../fixtures/tls.js';

const NAME = 'tls-hello';
const HOST = `${NAME}.default.tls.example`;
const KINGRESS = 'ingresses.networking.internal.knative.dev';
const KCERT = 'certificates.networking.internal.knative.dev';
const GATEWAY = 'gateways.networking.istio.io';

interface Obj {
  metadata: { name: string; uid: string; generation?: number; labels?: Record<string, string> };
  spec?: Record<string, unknown>;
  status?: { url?: string; observedGeneration?: number; conditions?: Condition[] };
}
interface Gateway {
  metadata: { name: string };
  spec: {
    servers: {
      hosts: string[];
      port: { name: string; number: number; protocol: string };
      tls?: { credentialName?: string; httpsRedirect?: boolean };
    }[];
  };
}

const cond = (o: Obj | undefined, t: string) => o?.status?.conditions?.find((c) => c.type === t);
const patchCm = (name: string, data: Record<string, string | null>) =>
  kubectl(['patch', 'configmap', name, '-n', 'knative-serving', '--type=merge', '-p', JSON.stringify({ data })]);

let before: { network: Record<string, string>; domain: Record<string, string> };

beforeAll(async () => {
  const read = async (name: string) =>
    (await kubectlJson<{ data?: Record<string, string> }>(['get', 'configmap', name, '-n', 'knative-serving'])).data ?? {};
  before = { network: await read('config-network'), domain: await read('config-domain') };
  // A public domain for this file's Service only (hakn's default domain is under the cluster domain: no certificates).
  await patchCm('config-domain', { 'tls.example': 'selector:\n  tidal.dev/e2e: tls\n' });
  // A certificate class whose controller this test plays (cert-manager's class is programmed by Tidal itself).
  await patchCm('config-network', { 'external-domain-tls': 'Enabled', 'certificate-class': 'test.certificate.networking.knative.dev' });
  await apply({
    apiVersion: 'serving.knative.dev/v1',
    kind: 'Service',
    metadata: { name: NAME, namespace: 'default', labels: { 'tidal.dev/e2e': 'tls' } },
    spec: { template: { spec: { containers: [{ image: 'nginx:1.27', ports: [{ containerPort: 80 }] }] } } },
  });
});

afterAll(async () => {
  await kubectl(['delete', 'ksvc', NAME, '--ignore-not-found']);
  const restore = (now: Record<string, string>, keys: string[]) => Object.fromEntries(keys.map((k) => [k, now[k] ?? null]));
  await patchCm('config-network', restore(before.network, ['external-domain-tls', 'http-protocol', 'certificate-class']));
  await patchCm('config-domain', restore(before.domain, ['tls.example']));
});

describe('external-domain-tls: Enabled', () => {
  let certName = '';

  it('the Route makes its Certificate route-<uid> and serves HTTP meanwhile (HTTPDowngrade)', async () => {
    const route = await eventually('Route with a Certificate', async () => {
      const r = await getObject<Obj>('route', NAME);
      return r && cond(r, 'CertificateProvisioned')?.reason === 'HTTPDowngrade' ? r : undefined;
    });
    certName = `route-${route.metadata.uid}`;
    expect(cond(route, 'CertificateProvisioned')?.message).toBe(`Certificate ${certName} is not ready downgrade HTTP.`);
    expect(route.status?.url).toBe(`http://${HOST}`);
    const cert = await kubectlJson<Obj & { spec: { dnsNames: string[]; secretName: string; domain: string } }>(['get', KCERT, certName]);
    expect(cert.spec).toEqual({ dnsNames: [HOST], secretName: certName, domain: 'tls.example' });
    expect(cert.metadata.labels).toMatchObject({ 'serving.knative.dev/route': NAME, 'networking.knative.dev/certificate-type': 'external-domain' });
    expect(((await kubectlJson<Obj>(['get', KINGRESS, NAME])).spec as { tls?: unknown }).tls).toBeUndefined();
  });

  it('once the Certificate is Ready: spec.tls, the Secret at the gateway, the Gateway of the KIngress, https URLs', async () => {
    const secret = tlsSecret('default', certName, [HOST]);
    await kubectl(['apply', '-f', '-'], JSON.stringify(secret));
    const cert = await kubectlJson<Obj>(['get', KCERT, certName]);
    const status = {
      observedGeneration: cert.metadata.generation,
      conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: new Date().toISOString() }],
    };
    await kubectl(['patch', KCERT, certName, '--subresource=status', '--type=merge', '-p', JSON.stringify({ status })]);

    const ksvc = await eventually('ksvc at https', async () => {
      const s = await getObject<Obj>('ksvc', NAME);
      return s?.status?.url === `https://${HOST}` && cond(s, 'Ready')?.status === 'True' ? s : undefined;
    });
    expect(ksvc.status?.url).toBe(`https://${HOST}`);
    const route = await getObject<Obj>('route', NAME);
    expect(cond(route, 'CertificateProvisioned')?.status).toBe('True');
    const ing = await kubectlJson<Obj & { spec: { tls?: unknown } }>(['get', KINGRESS, NAME]);
    expect(ing.spec.tls).toEqual([{ hosts: [HOST], secretName: certName, secretNamespace: 'default' }]);
    // net-istio's programming of it: the Secret copied to istio-system, a Gateway of the KIngress in its namespace.
    const uid = (await kubectlJson<Obj>(['get', 'secret', certName])).metadata.uid;
    const copy = await kubectlJson<Obj & { data: Record<string, string> }>(['get', 'secret', '-n', 'istio-system', `${NAME}-${uid}`]);
    expect(copy.data['tls.crt']).toBe(secret.data['tls.crt']);
    const gateways = await kubectlJson<{ items: Gateway[] }>(['get', GATEWAY, '-l', `networking.internal.knative.dev/ingress=${NAME}`]);
    expect(gateways.items).toHaveLength(1);
    expect(gateways.items[0]!.spec.servers.map((s) => [s.port.number, s.port.protocol, s.tls?.credentialName, s.hosts])).toEqual([
      [443, 'HTTPS', `${NAME}-${uid}`, [HOST]],
      [80, 'HTTP', undefined, [HOST]],
    ]);
    const vs = await kubectlJson<{ spec: { gateways: string[] } }>(['get', 'virtualservices.networking.istio.io', `${NAME}-ingress`]);
    expect(vs.spec.gateways).toContain(`default/${gateways.items[0]!.metadata.name}`);
  });

  it('http-protocol: Redirected makes the KIngress redirect, and its Gateway HTTP server with it', async () => {
    await patchCm('config-network', { 'http-protocol': 'Redirected' });
    const gw = await eventually('a redirecting HTTP server', async () => {
      const ing = await kubectlJson<{ spec: { httpOption?: string } }>(['get', KINGRESS, NAME]);
      if (ing.spec.httpOption !== 'Redirected') return undefined;
      const list = await kubectlJson<{ items: Gateway[] }>(['get', GATEWAY, '-l', `networking.internal.knative.dev/ingress=${NAME}`]);
      const http = list.items[0]?.spec.servers.find((s) => s.port.number === 80);
      return http?.tls?.httpsRedirect ? http : undefined;
    });
    expect(gw.port.name).toBe('http-server');
  });
});
