// hakn's gateways: the two Istio Gateway objects, and the self-signed certificate Secret that a durable workflow
// keeps valid (7 days, renewed when under 24 hours remain).
import { X509Certificate } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getObject, kubectl, temporalClient } from '../harness/cluster.js';
import { eventually } from '../harness/wait.js';

let t: Awaited<ReturnType<typeof temporalClient>>;
beforeAll(async () => (t = await temporalClient()));
afterAll(async () => t.close());

describe('gateways and the gateway certificate', () => {
  it('ships the external and the cluster-local Istio Gateway', async () => {
    const ext = await getObject<{ spec: { servers: { port: { number: number }; tls?: { credentialName?: string } }[] } }>(
      'gateways.networking.istio.io',
      'knative-ingress-gateway',
      'knative-serving',
    );
    expect(ext?.spec.servers.map((s) => s.port.number).sort()).toEqual([443, 80]);
    expect(ext?.spec.servers.find((s) => s.port.number === 443)?.tls?.credentialName).toBe('tls-cert');
    const local = await getObject<{ spec: { servers: { port: { number: number } }[] } }>(
      'gateways.networking.istio.io',
      'knative-local-gateway',
      'knative-serving',
    );
    expect(local?.spec.servers.map((s) => s.port.number)).toEqual([8081]);
  });

  it('keeps istio-system/tls-cert filled with a valid self-signed certificate of the configured lifetime', async () => {
    const secret = await eventually(
      'tls-cert',
      () => getObject<{ type: string; data: Record<string, string> }>('secret', 'tls-cert', 'istio-system'),
      60_000,
    );
    expect(secret.type).toBe('kubernetes.io/tls');
    const cert = new X509Certificate(Buffer.from(secret.data['tls.crt'] ?? '', 'base64'));
    expect(cert.subject).toContain('CN=*');
    expect(cert.subjectAltName).toBe('DNS:*');
    const hours = (Date.parse(cert.validTo) - Date.parse(cert.validFrom)) / 3_600_000;
    expect(Math.round(hours)).toBe(168);
    expect(Buffer.from(secret.data['tls.key'] ?? '', 'base64').toString()).toContain('BEGIN PRIVATE KEY');
  });

  it('renews it when it is deleted, and waits for renewal on a durable timer', async () => {
    const handle = t.client.workflow.getHandle('GatewayCertificate/istio-system/tls-cert');
    expect((await handle.describe()).status.name).toBe('RUNNING');
    const before = (await getObject<{ metadata: { uid: string } }>('secret', 'tls-cert', 'istio-system'))!.metadata.uid;
    await kubectl(['delete', 'secret', 'tls-cert', '-n', 'istio-system']);
    // The watcher does not follow Secrets: a poke (what a Secret event will send) makes it look again at once.
    await handle.signal('poke', { source: 'Secret/istio-system/tls-cert', reason: 'deleted' });
    const after = await eventually(
      'recreated',
      async () => {
        const s = await getObject<{ metadata: { uid: string } }>('secret', 'tls-cert', 'istio-system');
        return s && s.metadata.uid !== before ? s : undefined;
      },
      60_000,
    );
    expect(after.metadata.uid).not.toBe(before);
    const history = await handle.fetchHistory();
    expect((history.events ?? []).some((e) => e.timerStartedEventAttributes)).toBe(true);
  });
});
