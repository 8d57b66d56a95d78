// TLS served for real: with external-domain-tls on, a Service's Route gets a certificate from the stack's cert-manager
// (the CA ClusterIssuer tidal-ca, dev/cert-manager.ts), Traefik serves it on its https loopback entry point, and a
// client that trusts only that CA gets the Service's answer over a verified chain for the URL's host. A renewal
// changes the certificate served without a failed request, and http-protocol Redirected sends plain HTTP to https.
// config-network is put back at the end.
import https from 'node:https';
import type { TLSSocket } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apply, condition, hostOf, image, ksvc, kubectl, kubectlJson, realStack, request, type KService, useNamespace } from '../../harness/real.js';
import { eventually } from '../../harness/wait.js';

const ns = useNamespace('real-tls');
const CMCERT = 'certificates.cert-manager.io';

interface Served {
  status: number;
  body: string;
  serial?: string;
  error?: string;
}

let ca = '';
let before: Record<string, string> = {};

/** One GET over TLS to the ingress's https entry point, SNI and Host the given host, trusting only the stack CA. */
function get(host: string): Promise<Served> {
  return new Promise((resolve) => {
    const req = https.get(
      {
        host: '127.0.0.1',
        port: realStack().ports.ingressTls,
        servername: host,
        ca,
        headers: { Host: host },
        path: '/',
        timeout: 30_000,
        agent: false,
      },
      (res) => {
        const serial = (res.socket as TLSSocket).getPeerCertificate().serialNumber;
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8').trim(), serial }));
        res.on('error', (err) => resolve({ status: 0, body: '', error: err.message }));
      },
    );
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', (err) => resolve({ status: 0, body: '', error: err.message }));
  });
}

const patchNetwork = (data: Record<string, string | null>) =>
  kubectl(['patch', 'configmap', 'config-network', '-n', 'knative-serving', '--type=merge', '-p', JSON.stringify({ data })]);

beforeAll(async () => {
  const secret = await kubectlJson<{ data: Record<string, string> }>(['get', 'secret', '-n', 'cert-manager', 'tidal-ca']);
  ca = Buffer.from(secret.data['ca.crt'] ?? '', 'base64').toString('utf8');
  before = (await kubectlJson<{ data?: Record<string, string> }>(['get', 'configmap', 'config-network', '-n', 'knative-serving'])).data ?? {};
  await patchNetwork({ 'external-domain-tls': 'Enabled' });
});

afterAll(async () => {
  await patchNetwork({ 'external-domain-tls': before['external-domain-tls'] ?? null, 'http-protocol': before['http-protocol'] ?? null });
});

describe('a Service over https with a certificate from cert-manager', () => {
  let host = '';

  it('gets an https URL, and answers over a chain verified against the stack CA for its host', async () => {
    await apply(ksvc('hello', { image: image('helloworld'), readinessProbe: { httpGet: { path: '/' } } }), ns);
    const svc = await eventually(
      'ksvc hello Ready at https',
      async () => {
        const s = await kubectlJson<KService>(['get', 'ksvc', 'hello', '-n', ns]);
        return condition(s, 'Ready')?.status === 'True' && s.status?.url?.startsWith('https://') ? s : undefined;
      },
      240_000,
    );
    host = hostOf(svc.status?.url);
    expect(svc.status?.url).toBe(`https://hello.${ns}.127.0.0.1.sslip.io`);
    const r = await eventually('an answer over TLS', async () => {
      const x = await get(host);
      return x.status === 200 ? x : undefined;
    });
    expect(r.body).toBe('Hello World! How about some tasty noodles?');
  });

  it('a renewal changes the certificate served, with no failed request meanwhile', async () => {
    const first = await get(host);
    const route = await kubectlJson<{ metadata: { uid: string } }>(['get', 'route', 'hello', '-n', ns]);
    const name = `route-${route.metadata.uid}`;
    const cm = await kubectlJson<{ status?: { conditions?: { type: string }[] } }>(['get', CMCERT, name, '-n', ns]);
    const issuing = {
      type: 'Issuing',
      status: 'True',
      reason: 'ManuallyTriggered',
      message: 'Certificate re-issuance manually triggered',
      lastTransitionTime: new Date().toISOString(),
    };
    const conditions = [...(cm.status?.conditions ?? []).filter((c) => c.type !== 'Issuing'), issuing];
    const seen: Served[] = [];
    let done = false;
    const load = (async () => {
      while (!done) seen.push(await get(host));
    })();
    try {
      await kubectl(['patch', CMCERT, name, '-n', ns, '--subresource=status', '--type=merge', '-p', JSON.stringify({ status: { conditions } })]);
      await eventually('the renewed certificate served', async () => (seen.at(-1)?.serial ?? first.serial) !== first.serial, 120_000);
    } finally {
      done = true;
      await load;
    }
    expect(seen.filter((s) => s.status !== 200)).toEqual([]);
    expect(new Set(seen.map((s) => s.serial)).size).toBeGreaterThan(1);
  });

  it('http-protocol Redirected: plain HTTP answers with a redirect to https', async () => {
    await patchNetwork({ 'http-protocol': 'Redirected' });
    const r = await eventually('a redirect', async () => {
      const x = await request(host);
      return x.status === 301 || x.status === 308 ? x : undefined;
    });
    expect(r.headers.location).toBe(`https://${host}/`);
  });
});
