// The DomainMapping pass against an in-memory API server (kube-fake.ts): the claim (autocreated, missing,
// another namespace's), `spec.ref` resolution, the KIngress programmed in the same step (VirtualService and status),
// spec.tls, the finalizer, a mapping that bypassed the webhook, and a second pass that writes nothing.
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import type { ActivityDeps, ConfigSource } from '../../../activities/deps.js';
import type { EventRecorder } from '../../../activities/events.js';
import { createDomainMappingActivities } from '../../../activities/domainmapping.js';
import { parseDomainConfig } from '../../../api/config/domain.js';
import { parseNetworkConfig } from '../../../api/config/network.js';
import type { ClusterDomainClaim, DomainMapping } from '../../../api/domainmapping.js';
import { Resources } from '../../../api/kinds.js';
import type { Ingress } from '../../../api/networking.js';
import type { Condition, Service } from '../../../api/serving.js';
import type { Certificate } from '../../../api/certificate.js';
import type { KubeObject } from '../../../api/meta.js';
import { DEFAULT_INGRESS_GATEWAY_SERVICE, ingressGatewayName } from '../../../resources/istio/ingress-tls.js';
import { tlsSecret } from '../../fixtures/tls.js';
import { KubeFake } from './kube-fake.js';

const NS = 'default';
const NAME = 'coolcoffee.company';
const key = { namespace: NS, name: NAME };

function setup(network: Record<string, string> = { 'autocreate-cluster-domain-claims': 'true' }) {
  const fake = new KubeFake();
  const recorded: { type: string; reason: string; message: string }[] = [];
  const events: EventRecorder = { record: async (_o, type, reason, message) => void recorded.push({ type, reason, message }) };
  const net = parseNetworkConfig(network);
  const dom = parseDomainConfig({});
  if (!net.ok || !dom.ok) throw new Error('config');
  const config = { networkConfig: () => net.value, domainConfig: () => dom.value, systemNamespace: 'knative-serving' } as unknown as ConfigSource;
  const deps = {
    kube: fake.client(),
    events,
    log: pino({ level: 'silent' }),
    config,
    now: () => new Date('2026-01-01T00:00:00Z'),
  } as unknown as ActivityDeps;
  return { fake, recorded, act: createDomainMappingActivities(deps) };
}

function mapping(edit: (d: DomainMapping) => void = () => undefined): DomainMapping {
  const d: DomainMapping = {
    apiVersion: 'serving.knative.dev/v1beta1',
    kind: 'DomainMapping',
    metadata: { name: NAME, namespace: NS },
    spec: { ref: { apiVersion: 'serving.knative.dev/v1', kind: 'Service', name: 'coolcoffee-company', namespace: NS } },
  };
  edit(d);
  return d;
}

const ksvc = (name = 'coolcoffee-company'): Service =>
  ({
    apiVersion: 'serving.knative.dev/v1',
    kind: 'Service',
    metadata: { name, namespace: NS },
    spec: {},
    status: { address: { url: `http://${name}.${NS}.svc.cluster.local` } },
  }) as Service;

const cond = (d: DomainMapping | undefined, t: string): Partial<Condition> | undefined => {
  const c = d?.status?.conditions?.find((x) => x.type === t);
  return c ? { status: c.status, ...(c.reason ? { reason: c.reason } : {}), ...(c.message ? { message: c.message } : {}) } : undefined;
};
const stored = (fake: KubeFake) => fake.get<DomainMapping>(Resources.DomainMapping, NS, NAME);
const claim = (fake: KubeFake, name = NAME) => fake.get<ClusterDomainClaim>(Resources.ClusterDomainClaim, '', name);

describe('reconcileDomainMapping', () => {
  it('autocreate on: claims the name, programs the KIngress and its VirtualService, and is Ready at http://<name>', async () => {
    const { fake, act, recorded } = setup();
    fake.seed(Resources.Service, ksvc());
    fake.seed(Resources.DomainMapping, mapping());
    const out = await act.reconcileDomainMapping(key);
    expect(out).toMatchObject({ outcome: 'written', ready: 'True', claim: 'created', ingress: 'created', url: 'http://coolcoffee.company' });
    const dm = stored(fake);
    expect(dm?.metadata.finalizers).toEqual(['domainmappings.serving.knative.dev']);
    expect(dm?.status?.url).toBe('http://coolcoffee.company');
    expect(dm?.status?.address).toEqual({ url: 'http://coolcoffee.company' });
    for (const t of ['DomainClaimed', 'ReferenceResolved', 'IngressReady', 'Ready']) expect(cond(dm, t)?.status).toBe('True');
    expect(cond(dm, 'CertificateProvisioned')).toEqual({ status: 'True', reason: 'TLSNotEnabled', message: 'external-domain-tls is not enabled' });
    expect(claim(fake)?.spec).toEqual({ namespace: NS });
    const ing = fake.get<Ingress>(Resources.KIngress, NS, NAME);
    expect(ing?.spec.rules?.[0]?.http?.paths[0]?.rewriteHost).toBe('coolcoffee-company.default.svc.cluster.local');
    expect(cond(ing as unknown as DomainMapping, 'Ready')?.status).toBe('True');
    expect(fake.get(Resources.VirtualService, NS, `${NAME}-ingress`)).toBeDefined();
    expect(recorded).toContainEqual({ type: 'Normal', reason: 'Created', message: 'Created Ingress "coolcoffee.company"' });

    // A second pass has nothing to do: it writes nothing.
    fake.calls = [];
    const again = await act.reconcileDomainMapping(key);
    expect(again).toMatchObject({ outcome: 'unchanged', ready: 'True', claim: 'owned', ingress: 'unchanged' });
    expect(fake.writes()).toEqual([]);
  });

  it('autocreate off and no claim: DomainClaimed=False DomainAlreadyClaimed, nothing routed, until the claim exists', async () => {
    const { fake, act, recorded } = setup({});
    fake.seed(Resources.Service, ksvc());
    fake.seed(Resources.DomainMapping, mapping());
    const out = await act.reconcileDomainMapping(key);
    expect(out).toMatchObject({ ready: 'False', reason: 'DomainAlreadyClaimed', claim: 'missing', ingress: 'none' });
    expect(cond(stored(fake), 'DomainClaimed')).toEqual({
      status: 'False',
      reason: 'DomainAlreadyClaimed',
      message: 'The domain name is already in use by another DomainMapping',
    });
    expect(claim(fake)).toBeUndefined();
    expect(fake.get(Resources.KIngress, NS, NAME)).toBeUndefined();
    expect(recorded).toContainEqual({
      type: 'Warning',
      reason: 'InternalError',
      message: 'namespace "default" does not own ClusterDomainClaim for "coolcoffee.company"',
    });
    fake.seed(Resources.ClusterDomainClaim, {
      apiVersion: 'networking.internal.knative.dev/v1alpha1',
      kind: 'ClusterDomainClaim',
      metadata: { name: NAME },
      spec: { namespace: NS },
    });
    expect(await act.reconcileDomainMapping(key)).toMatchObject({ ready: 'True', claim: 'owned' });
  });

  it('a claim of another namespace: DomainClaimed=False; deleting the mapping leaves that claim', async () => {
    const { fake, act } = setup();
    fake.seed(Resources.Service, ksvc());
    fake.seed(Resources.ClusterDomainClaim, {
      apiVersion: 'networking.internal.knative.dev/v1alpha1',
      kind: 'ClusterDomainClaim',
      metadata: { name: NAME },
      spec: { namespace: 'elsewhere' },
    });
    fake.seed(Resources.DomainMapping, mapping());
    expect(await act.reconcileDomainMapping(key)).toMatchObject({ ready: 'False', reason: 'DomainAlreadyClaimed', claim: 'notOwned' });
    fake.edit<DomainMapping>(Resources.DomainMapping, NS, NAME, (d) => void (d.metadata.deletionTimestamp = '2026-01-01T00:00:00Z'));
    expect(await act.reconcileDomainMapping(key)).toEqual({ outcome: 'gone' });
    expect(claim(fake)?.spec.namespace).toBe('elsewhere');
    expect(stored(fake)?.metadata.finalizers).toEqual([]);
  });

  it('the finalizer deletes the claim it autocreated, but not while autocreate is off', async () => {
    const { fake, act } = setup();
    fake.seed(Resources.Service, ksvc());
    fake.seed(Resources.DomainMapping, mapping());
    await act.reconcileDomainMapping(key);
    fake.edit<DomainMapping>(Resources.DomainMapping, NS, NAME, (d) => void (d.metadata.deletionTimestamp = '2026-01-01T00:00:00Z'));
    expect(await act.reconcileDomainMapping(key)).toEqual({ outcome: 'gone', claimDeleted: true });
    expect(claim(fake)).toBeUndefined();

    const off = setup({});
    off.fake.seed(Resources.ClusterDomainClaim, {
      apiVersion: 'networking.internal.knative.dev/v1alpha1',
      kind: 'ClusterDomainClaim',
      metadata: { name: NAME },
      spec: { namespace: NS },
    });
    off.fake.seed(
      Resources.DomainMapping,
      mapping((d) => void (d.metadata = { ...d.metadata, finalizers: ['domainmappings.serving.knative.dev'], deletionTimestamp: 'x' })),
    );
    expect(await off.act.reconcileDomainMapping(key)).toEqual({ outcome: 'gone' });
    expect(claim(off.fake)).toBeDefined();
  });

  it('a missing target: ReferenceResolved=False ResolveFailed with the resolver’s message; Ready once it exists', async () => {
    const { fake, act } = setup();
    fake.seed(Resources.DomainMapping, mapping());
    expect(await act.reconcileDomainMapping(key)).toMatchObject({ ready: 'False', reason: 'ResolveFailed', claim: 'created', ingress: 'none' });
    expect(cond(stored(fake), 'ReferenceResolved')).toEqual({
      status: 'False',
      reason: 'ResolveFailed',
      message: 'failed to get object default/coolcoffee-company: services.serving.knative.dev "coolcoffee-company" not found',
    });
    fake.seed(Resources.Service, { ...ksvc(), status: {} });
    await act.reconcileDomainMapping(key);
    expect(cond(stored(fake), 'ReferenceResolved')?.message).toMatch(
      /^address not set for &ObjectReference\{Kind:Service,Namespace:default,Name:coolcoffee-company,/,
    );
    fake.edit<Service>(Resources.Service, NS, 'coolcoffee-company', (s) => void (s.status = ksvc().status));
    expect(await act.reconcileDomainMapping(key)).toMatchObject({ ready: 'True', target: 'coolcoffee-company.default.svc.cluster.local' });
  });

  it('a core Service resolves to its cluster name; spec.tls makes the URL https and is CertificateExternallyProvided', async () => {
    const { fake, act } = setup();
    const secret = fake.seed(Resources.Secret, tlsSecret(NS, 'coffee-cert', [NAME]));
    fake.seed(
      Resources.DomainMapping,
      mapping((d) => {
        d.spec.ref = { apiVersion: 'v1', kind: 'Service', name: 'plain' };
        d.spec.tls = { secretName: 'coffee-cert' };
      }),
    );
    expect(await act.reconcileDomainMapping(key)).toMatchObject({
      ready: 'True',
      url: 'https://coolcoffee.company',
      target: 'plain.default.svc.cluster.local',
    });
    const dm = stored(fake);
    expect(dm?.status?.address?.url).toBe('https://coolcoffee.company');
    expect(cond(dm, 'CertificateProvisioned')).toEqual({
      status: 'True',
      reason: 'CertificateExternallyProvided',
      message: 'TLS certificate was provided externally',
    });
    expect(fake.get<Ingress>(Resources.KIngress, NS, NAME)?.spec.tls).toEqual([{ hosts: [NAME], secretName: 'coffee-cert', secretNamespace: NS }]);
    // The certificate reaches the gateway: copied into istio-system and named by the mapping's own Gateway.
    const gateway = fake.get<KubeObject & { spec: { servers: { tls?: { credentialName?: string } }[] } }>(
      Resources.Gateway,
      NS,
      ingressGatewayName(NAME, DEFAULT_INGRESS_GATEWAY_SERVICE),
    );
    expect(gateway?.spec.servers[0]?.tls?.credentialName).toBe(`${NAME}-${secret.metadata.uid}`);
    expect(fake.get(Resources.Secret, 'istio-system', `${NAME}-${secret.metadata.uid}`)).toBeDefined();
  });

  it('external-domain-tls on: a Certificate of the mapping; HTTP until it is Ready, then spec.tls and https', async () => {
    const { fake, act, recorded } = setup({
      'autocreate-cluster-domain-claims': 'true',
      'external-domain-tls': 'Enabled',
      // A class whose controller the test plays (cert-manager's is programmed by Tidal itself).
      'certificate-class': 'test.certificate.networking.knative.dev',
    });
    fake.seed(Resources.Service, ksvc());
    fake.seed(Resources.DomainMapping, mapping());
    expect(await act.reconcileDomainMapping(key)).toMatchObject({ url: 'http://coolcoffee.company' });
    const cert = fake.get<Certificate>(Resources.Certificate, NS, NAME);
    expect(cert?.spec).toEqual({ dnsNames: [NAME], domain: NAME, secretName: NAME });
    expect(cert?.metadata.labels).toEqual({
      'serving.knative.dev/domainMappingUID': NAME,
      'networking.knative.dev/certificate-type': 'external-domain',
    });
    expect(cert?.metadata.ownerReferences?.[0]).toMatchObject({ kind: 'DomainMapping', name: NAME, controller: true });
    expect(cond(stored(fake), 'CertificateProvisioned')).toEqual({
      status: 'True',
      reason: 'HTTPDowngrade',
      message: `Certificate ${NAME} is not ready downgrade HTTP.`,
    });
    expect(recorded.map((e) => e.message)).toContain(`Created Certificate ${NS}/${NAME}`);
    expect(fake.get<Ingress>(Resources.KIngress, NS, NAME)?.spec.tls).toBeUndefined();

    // The certificate's controller writes the Secret and reports the Certificate Ready.
    fake.seed(Resources.Secret, tlsSecret(NS, NAME, [NAME]));
    fake.edit<Certificate>(Resources.Certificate, NS, NAME, (c) => {
      c.status = { observedGeneration: c.metadata.generation ?? 1, conditions: [{ type: 'Ready', status: 'True' }] };
    });
    expect(await act.reconcileDomainMapping(key)).toMatchObject({ ready: 'True', url: 'https://coolcoffee.company' });
    expect(cond(stored(fake), 'CertificateProvisioned')).toEqual({ status: 'True' });
    expect(fake.get<Ingress>(Resources.KIngress, NS, NAME)?.spec.tls).toEqual([{ hosts: [NAME], secretName: NAME, secretNamespace: NS }]);
  });

  it('external-domain-tls on and the mapping opts out: no Certificate, TLSNotEnabled', async () => {
    const { fake, act } = setup({ 'autocreate-cluster-domain-claims': 'true', 'external-domain-tls': 'Enabled' });
    fake.seed(Resources.Service, ksvc());
    fake.seed(
      Resources.DomainMapping,
      mapping((d) => void (d.metadata.annotations = { 'networking.knative.dev/disable-external-domain-tls': 'true' })),
    );
    await act.reconcileDomainMapping(key);
    expect(fake.list(Resources.Certificate, NS)).toEqual([]);
    expect(cond(stored(fake), 'CertificateProvisioned')).toEqual({
      status: 'True',
      reason: 'TLSNotEnabled',
      message: 'external-domain-tls is not enabled',
    });
  });

  it('a mapping stored bypassing the webhook: the same rules on its status, and nothing claimed or routed', async () => {
    const { fake, act } = setup();
    fake.seed(Resources.Service, ksvc());
    fake.seed(
      Resources.DomainMapping,
      mapping((d) => void (d.metadata.name = 'web.default.svc.cluster.local')),
    );
    const bad = await act.reconcileDomainMapping({ namespace: NS, name: 'web.default.svc.cluster.local' });
    expect(bad).toMatchObject({ ready: 'False', reason: 'InvalidSpec', claim: 'skipped' });
    expect(fake.list(Resources.ClusterDomainClaim)).toEqual([]);

    fake.seed(
      Resources.DomainMapping,
      mapping((d) => void (d.spec.ref = { ...d.spec.ref, namespace: 'elsewhere' })),
    );
    expect(await act.reconcileDomainMapping(key)).toMatchObject({ ready: 'False', reason: 'ResolveFailed' });
    expect(cond(stored(fake), 'ReferenceResolved')?.message).toBe(
      'mismatched namespaces: spec.ref.namespace\nparent namespace: "default" does not match ref: "elsewhere"',
    );
    expect(fake.get(Resources.KIngress, NS, NAME)).toBeUndefined();
  });

  it('a KIngress of the mapping’s name that it does not control is left alone: IngressReady=False NotOwned', async () => {
    const { fake, act } = setup();
    fake.seed(Resources.Service, ksvc());
    fake.seed(Resources.KIngress, {
      apiVersion: 'networking.internal.knative.dev/v1alpha1',
      kind: 'Ingress',
      metadata: { name: NAME, namespace: NS },
      spec: {},
    });
    fake.seed(Resources.DomainMapping, mapping());
    expect(await act.reconcileDomainMapping(key)).toMatchObject({ ready: 'False', reason: 'NotOwned', ingress: 'notOwned' });
    expect(fake.get<Ingress>(Resources.KIngress, NS, NAME)?.spec).toEqual({});
  });
});

describe('reconcileDomainMapping: a KIngress of another class', () => {
  const TRAEFIK = 'traefik.ingress.networking.knative.dev';
  const foreign = () => mapping((d) => void (d.metadata.annotations = { 'networking.knative.dev/ingress.class': TRAEFIK }));
  /** What Traefik's Knative provider writes: the KIngress's status for the generation it has seen. */
  const reports = (fake: KubeFake, ready: Condition) =>
    fake.edit<Ingress>(Resources.KIngress, NS, NAME, (i) => {
      const lb = { ingress: [{ domainInternal: 'traefik.traefik.svc.cluster.local' }] };
      i.status = { observedGeneration: i.metadata.generation ?? 1, conditions: [ready], publicLoadBalancer: lb, privateLoadBalancer: lb };
    });
  const at = '2026-01-01T00:00:00Z';

  it('is left to its controller: no VirtualService, no status from Tidal; the mapping waits for it, mirrors it, and is Ready with it', async () => {
    const { fake, act } = setup();
    fake.seed(Resources.Service, ksvc());
    fake.seed(Resources.DomainMapping, foreign());
    expect(await act.reconcileDomainMapping(key)).toMatchObject({ ready: 'Unknown', reason: 'IngressNotConfigured', ingress: 'created' });
    const ing = fake.get<Ingress>(Resources.KIngress, NS, NAME)!;
    expect(ing.metadata.annotations?.['networking.knative.dev/ingress.class']).toBe(TRAEFIK);
    expect(ing.status).toBeUndefined();
    expect(fake.list(Resources.VirtualService, NS)).toEqual([]);
    expect(cond(stored(fake), 'IngressReady')).toMatchObject({ status: 'Unknown', reason: 'IngressNotConfigured' });
    expect(stored(fake)?.status?.url).toBe('http://coolcoffee.company');

    reports(fake, {
      type: 'Ready',
      status: 'Unknown',
      reason: 'Uninitialized',
      message: 'Waiting for load balancer to be ready',
      lastTransitionTime: at,
    });
    expect(await act.reconcileDomainMapping(key)).toMatchObject({ ready: 'Unknown', reason: 'Uninitialized' });
    expect(cond(stored(fake), 'IngressReady')).toEqual({
      status: 'Unknown',
      reason: 'Uninitialized',
      message: 'Waiting for load balancer to be ready',
    });

    reports(fake, { type: 'Ready', status: 'True', lastTransitionTime: at });
    expect(await act.reconcileDomainMapping(key)).toMatchObject({ ready: 'True' });
    for (const t of ['IngressReady', 'Ready']) expect(cond(stored(fake), t)?.status).toBe('True');

    // A new target changes the KIngress's rules: Ready no longer holds until its controller reports the new generation.
    fake.seed(Resources.Service, ksvc('elsewhere'));
    fake.edit<DomainMapping>(Resources.DomainMapping, NS, NAME, (d) => void (d.spec.ref.name = 'elsewhere'));
    expect(await act.reconcileDomainMapping(key)).toMatchObject({ ready: 'Unknown', reason: 'IngressNotConfigured', ingress: 'updated' });
    reports(fake, { type: 'Ready', status: 'True', lastTransitionTime: at });
    expect(await act.reconcileDomainMapping(key)).toMatchObject({ ready: 'True' });

    expect(fake.writes('status').filter((w) => w.kind === 'Ingress')).toEqual([]);
    expect(fake.list(Resources.VirtualService, NS)).toEqual([]);
  });
});
