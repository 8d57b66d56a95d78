// Programming a KIngress with spec.tls (activities/ingress-tls.ts inside programIngress) against the in-memory API
// server: the Secret copied into istio-system, the Ingress's Gateway, the VirtualService matching on it, and the
// Gateway removed again when TLS goes. A Secret that is missing fails the pass with Ready Unknown.
import { describe, expect, it } from 'vitest';
import { programIngress } from '../../../activities/ingress.js';
import { certificateDNSNames } from '../../../activities/ingress-tls.js';
import { Resources } from '../../../api/kinds.js';
import type { KubeObject } from '../../../api/meta.js';
import type { Ingress } from '../../../api/networking.js';
import { ingressGatewayName, DEFAULT_INGRESS_GATEWAY_SERVICE } from '../../../resources/istio/ingress-tls.js';
import { tlsSecret as makeTLSSecret } from '../../fixtures/tls.js';
import { KubeFake, servicePassDeps } from './kube-fake.js';

const NS = 'default';
const HOST = 'hello.default.example.com';
const tlsSecret = (name: string, dnsNames: string[]) => makeTLSSecret(NS, name, dnsNames);

function kingress(spec: Partial<Ingress['spec']>): Ingress {
  return {
    apiVersion: 'networking.internal.knative.dev/v1alpha1',
    kind: 'Ingress',
    metadata: { name: 'hello', namespace: NS, annotations: { 'networking.knative.dev/ingress.class': 'istio.ingress.networking.knative.dev' } },
    spec: {
      rules: [
        {
          hosts: [HOST],
          visibility: 'ExternalIP',
          http: { paths: [{ splits: [{ serviceNamespace: NS, serviceName: 'hello-00001', servicePort: 80, percent: 100 }] }] },
        },
      ],
      httpOption: 'Enabled',
      ...spec,
    },
  };
}

type VS = KubeObject & { spec: { gateways: string[] } };
type Gateway = KubeObject & { spec: { servers: { port: { name: string }; tls?: { credentialName?: string } }[] } };

describe('programIngress with spec.tls', () => {
  it('reads the DNS names of a certificate in a Secret', () => {
    expect(certificateDNSNames(tlsSecret('c', [HOST, 'other.example.com']))).toEqual([HOST, 'other.example.com']);
    expect(() => certificateDNSNames({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'e', namespace: NS } })).toThrow(
      'failed to decode PEM data for secret default/e',
    );
  });

  it('copies the Secret, applies the Gateway, matches the VirtualService on it; dropping TLS removes the Gateway', async () => {
    const fake = new KubeFake();
    const deps = servicePassDeps(fake.client());
    const secret = fake.seed(Resources.Secret, tlsSecret('route-cert', [HOST]));
    const ing = fake.seed(Resources.KIngress, kingress({ tls: [{ hosts: [HOST], secretName: 'route-cert', secretNamespace: NS }] }));
    await programIngress(deps, ing);

    const copy = fake.get<KubeObject & { data: Record<string, string> }>(Resources.Secret, 'istio-system', `hello-${secret.metadata.uid}`);
    expect(copy?.data).toEqual(secret.data);
    expect(copy?.metadata.labels).toMatchObject({
      'networking.internal.knative.dev/originSecretName': 'route-cert',
      'networking.internal.knative.dev/originSecretNamespace': NS,
    });
    const gwName = ingressGatewayName('hello', DEFAULT_INGRESS_GATEWAY_SERVICE);
    const gw = fake.get<Gateway>(Resources.Gateway, NS, gwName);
    expect(gw?.spec.servers.map((s) => [s.port.name, s.tls?.credentialName])).toEqual([
      ['default/hello:0', `hello-${secret.metadata.uid}`],
      ['http-server', undefined],
    ]);
    expect(fake.get<VS>(Resources.VirtualService, NS, 'hello-ingress')?.spec.gateways).toEqual([`${NS}/${gwName}`]);
    expect(fake.get<Ingress>(Resources.KIngress, NS, 'hello')?.status?.conditions?.find((c) => c.type === 'Ready')?.status).toBe('True');

    // The origin rotates: the copy follows on the next pass.
    fake.edit<KubeObject & { data: Record<string, string> }>(Resources.Secret, NS, 'route-cert', (s) => void (s.data['tls.key'] = 'cm90YXRlZA=='));
    await programIngress(deps, fake.get<Ingress>(Resources.KIngress, NS, 'hello')!);
    expect(
      fake.get<KubeObject & { data: Record<string, string> }>(Resources.Secret, 'istio-system', `hello-${secret.metadata.uid}`)?.data['tls.key'],
    ).toBe('cm90YXRlZA==');

    fake.edit<Ingress>(Resources.KIngress, NS, 'hello', (i) => void delete i.spec.tls);
    await programIngress(deps, fake.get<Ingress>(Resources.KIngress, NS, 'hello')!);
    expect(fake.get(Resources.Gateway, NS, gwName)).toBeUndefined();
    expect(fake.get<VS>(Resources.VirtualService, NS, 'hello-ingress')?.spec.gateways).toEqual(['knative-serving/knative-ingress-gateway']);
  });

  it('httpOption Redirected without TLS: a Gateway whose HTTP server redirects', async () => {
    const fake = new KubeFake();
    const ing = fake.seed(Resources.KIngress, kingress({ httpOption: 'Redirected' }));
    await programIngress(servicePassDeps(fake.client()), ing);
    const gw = fake.get<KubeObject & { spec: { servers: unknown[] } }>(
      Resources.Gateway,
      NS,
      ingressGatewayName('hello', DEFAULT_INGRESS_GATEWAY_SERVICE),
    );
    expect(gw?.spec.servers).toEqual([{ hosts: [HOST], port: { name: 'http-server', number: 80, protocol: 'HTTP' }, tls: { httpsRedirect: true } }]);
  });

  it('a missing Secret: Ready Unknown ReconcileIngressFailed, and the pass fails to be retried', async () => {
    const fake = new KubeFake();
    const ing = fake.seed(Resources.KIngress, kingress({ tls: [{ hosts: [HOST], secretName: 'nope', secretNamespace: NS }] }));
    await expect(programIngress(servicePassDeps(fake.client()), ing)).rejects.toThrow('secret "nope" not found in namespace "default"');
    const ready = fake.get<Ingress>(Resources.KIngress, NS, 'hello')?.status?.conditions?.find((c) => c.type === 'Ready');
    expect([ready?.status, ready?.reason, ready?.message]).toEqual(['Unknown', 'ReconcileIngressFailed', 'Ingress reconciliation failed']);
    expect(fake.get(Resources.VirtualService, NS, 'hello-ingress')).toBeUndefined();
  });
});
