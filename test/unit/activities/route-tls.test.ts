// A Route's external-domain TLS (activities/route-tls.ts inside the Route's pass) against the in-memory API server:
// external-domain-tls off, on with a Certificate not ready yet (downgraded to HTTP, or not, by http-protocol), Ready
// (spec.tls on the KIngress, https URLs), the Route's opt-out annotation, http-protocol Redirected, a Certificate the
// Route does not own, and the Certificate of a tag that goes.
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import type { ActivityDeps, ConfigSource } from '../../../activities/deps.js';
import type { EventRecorder } from '../../../activities/events.js';
import { createRouteActivities, RouteFinalizer } from '../../../activities/route.js';
import { withScheme } from '../../../activities/route-tls.js';
import type { Certificate } from '../../../api/certificate.js';
import { parseDomainConfig } from '../../../api/config/domain.js';
import { defaultFeaturesConfig } from '../../../api/config/features.js';
import { parseNetworkConfig } from '../../../api/config/network.js';
import { Resources } from '../../../api/kinds.js';
import type { KubeObject } from '../../../api/meta.js';
import type { Ingress } from '../../../api/networking.js';
import type { Condition, Configuration, Revision, Route, TrafficTarget } from '../../../api/serving.js';
import { KubeFake } from './kube-fake.js';

const NS = 'default';
const OTHER_CLASS = 'contour.ingress.networking.knative.dev';
const CERT_CLASS = 'test.certificate.networking.knative.dev';
const ready = (): Condition[] => [{ type: 'Ready', status: 'True', lastTransitionTime: '2026-11-23T09:00:00Z' }];

function harness(net: Record<string, string>, domain: Record<string, string> = { 'example.com': '' }) {
  const kube = new KubeFake();
  const recorded: string[] = [];
  const events: EventRecorder = { record: async (_o, type, reason, message) => void recorded.push(`${type} ${reason} ${message}`) };
  // Certificates of a class whose controller the test plays (writing their status); cert-manager's is Tidal's own.
  const n = parseNetworkConfig({ 'ingress-class': OTHER_CLASS, 'certificate-class': CERT_CLASS, ...net });
  const d = parseDomainConfig(domain);
  if (!n.ok || !d.ok) throw new Error('config');
  const config = {
    networkConfig: () => n.value,
    domainConfig: () => d.value,
    featuresConfig: () => defaultFeaturesConfig(),
    systemNamespace: 'knative-serving',
  } as unknown as ConfigSource;
  const deps = {
    kube: kube.client(),
    events,
    config,
    log: pino({ level: 'silent' }),
    now: () => new Date('2026-11-23T10:00:00Z'),
  } as unknown as ActivityDeps;
  const acts = createRouteActivities(deps);
  kube.seed<Configuration>(Resources.Configuration, {
    apiVersion: 'serving.knative.dev/v1',
    kind: 'Configuration',
    metadata: { name: 'hello', namespace: NS, generation: 1 },
    spec: { template: { spec: { containers: [{ image: 'nginx' }] } } },
    status: { observedGeneration: 1, conditions: ready(), latestReadyRevisionName: 'hello-00001', latestCreatedRevisionName: 'hello-00001' },
  });
  kube.seed<Revision>(Resources.Revision, {
    apiVersion: 'serving.knative.dev/v1',
    kind: 'Revision',
    metadata: { name: 'hello-00001', namespace: NS, generation: 1, labels: { 'serving.knative.dev/configuration': 'hello' } },
    spec: { containers: [{ image: 'nginx' }] },
    status: { observedGeneration: 1, conditions: ready() },
  });
  return {
    kube,
    recorded,
    seedRoute: (traffic: TrafficTarget[] = [{ configurationName: 'hello', percent: 100 }], annotations?: Record<string, string>) =>
      kube.seed<Route>(Resources.Route, {
        apiVersion: 'serving.knative.dev/v1',
        kind: 'Route',
        metadata: { name: 'hello', namespace: NS, generation: 1, finalizers: [RouteFinalizer], ...(annotations ? { annotations } : {}) },
        spec: { traffic },
      }),
    pass: () => acts.reconcileRoute({ namespace: NS, name: 'hello' }),
    route: () => kube.get<Route>(Resources.Route, NS, 'hello')!,
    ingress: () => kube.get<Ingress>(Resources.KIngress, NS, 'hello'),
    cert: (name: string) => kube.get<Certificate>(Resources.Certificate, NS, name),
    /** The Certificate's controller reports it Ready (or another state) for its generation. */
    certStatus: (name: string, status: 'True' | 'False' | 'Unknown', reason?: string) =>
      kube.edit<Certificate>(Resources.Certificate, NS, name, (c) => {
        c.status = { observedGeneration: c.metadata.generation ?? 1, conditions: [{ type: 'Ready', status, ...(reason ? { reason } : {}) }] };
      }),
  };
}

const cond = (r: Route, type: string) => {
  const c = r.status?.conditions?.find((x) => x.type === type);
  return c && { status: c.status, reason: c.reason, message: c.message };
};

describe('Route external-domain TLS', () => {
  it('off (the default): no Certificate, TLSNotEnabled "external-domain-tls is not enabled", http URL', async () => {
    const h = harness({});
    h.seedRoute();
    await h.pass();
    expect(h.kube.list(Resources.Certificate, NS)).toEqual([]);
    expect(cond(h.route(), 'CertificateProvisioned')).toEqual({
      status: 'True',
      reason: 'TLSNotEnabled',
      message: 'external-domain-tls is not enabled',
    });
    expect(h.route().status?.url).toBe('http://hello.default.example.com');
  });

  it('on: a Certificate route-<uid> as upstream makes it; not ready yet and http-protocol Enabled: HTTPDowngrade, http URL, no spec.tls', async () => {
    const h = harness({ 'external-domain-tls': 'Enabled' });
    const route = h.seedRoute(undefined, {
      'kubectl.kubernetes.io/last-applied-configuration': '{}',
      'networking.knative.dev/certificate-class': 'x',
    });
    await h.pass();
    const name = `route-${route.metadata.uid}`;
    const cert = h.cert(name)!;
    expect(cert.metadata.labels).toEqual({ 'serving.knative.dev/route': 'hello', 'networking.knative.dev/certificate-type': 'external-domain' });
    // The Route's class (here in its alternative spelling) wins over config-network's; the alternative spelling and
    // last-applied never reach networking objects.
    const { 'tidal.dev/applied-hash': _hash, ...annotations } = cert.metadata.annotations ?? {};
    expect(annotations).toEqual({ 'networking.knative.dev/certificate.class': 'x' });
    expect(cert.metadata.ownerReferences?.[0]).toMatchObject({ kind: 'Route', name: 'hello', controller: true });
    expect(cert.spec).toEqual({ dnsNames: ['hello.default.example.com'], domain: 'example.com', secretName: name });
    expect(cond(h.route(), 'CertificateProvisioned')).toEqual({
      status: 'True',
      reason: 'HTTPDowngrade',
      message: `Certificate ${name} is not ready downgrade HTTP.`,
    });
    expect(h.route().status?.url).toBe('http://hello.default.example.com');
    expect(h.ingress()?.spec.tls).toBeUndefined();
    expect(h.recorded).toContain(`Normal Created Created Certificate default/${name}`);
  });

  it('Ready: the KIngress gets spec.tls with the Secret, the URL and tag URLs become https', async () => {
    const h = harness({ 'external-domain-tls': 'Enabled' });
    const route = h.seedRoute([
      { configurationName: 'hello', percent: 100 },
      { revisionName: 'hello-00001', tag: 'blue', percent: 0 },
    ]);
    await h.pass();
    const main = `route-${route.metadata.uid}`;
    // A tag's Certificate: route-<uid>-<adler32(tag)>, decimal.
    const tag = `${main}-69140905`;
    expect(h.cert(tag)?.spec.dnsNames).toEqual(['blue-hello.default.example.com']);
    h.certStatus(main, 'True');
    h.certStatus(tag, 'True');
    await h.pass();
    expect(h.ingress()?.spec.tls).toEqual([
      { hosts: ['blue-hello.default.example.com'], secretName: tag, secretNamespace: NS },
      { hosts: ['hello.default.example.com'], secretName: main, secretNamespace: NS },
    ]);
    expect(cond(h.route(), 'CertificateProvisioned')).toEqual({ status: 'True', reason: undefined, message: undefined });
    expect(h.route().status?.url).toBe('https://hello.default.example.com');
    expect(h.route().status?.traffic?.find((t) => t.tag === 'blue')?.url).toBe('https://blue-hello.default.example.com');

    // The tag goes: its Certificate is deleted as an orphan.
    h.kube.edit<Route>(Resources.Route, NS, 'hello', (r) => void (r.spec.traffic = [{ configurationName: 'hello', percent: 100 }]));
    await h.pass();
    expect(h.cert(tag)).toBeUndefined();
    expect(h.cert(main)).toBeDefined();
  });

  it('not ready with http-protocol Redirected: CertificateNotReady quoting its reason, https URL, KIngress httpOption Redirected', async () => {
    const h = harness({ 'external-domain-tls': 'Enabled', 'http-protocol': 'Redirected' });
    const route = h.seedRoute();
    await h.pass();
    const name = `route-${route.metadata.uid}`;
    h.certStatus(name, 'Unknown', 'Issuing');
    await h.pass();
    expect(cond(h.route(), 'CertificateProvisioned')).toEqual({
      status: 'Unknown',
      reason: 'CertificateNotReady',
      message: `Certificate ${name} is not ready: Issuing`,
    });
    expect(h.route().status?.url).toBe('https://hello.default.example.com');
    expect(h.ingress()?.spec.httpOption).toBe('Redirected');
    h.certStatus(name, 'False', 'Failed');
    await h.pass();
    expect(cond(h.route(), 'CertificateProvisioned')).toEqual({
      status: 'False',
      reason: 'CertificateProvisionFailed',
      message: `Certificate ${name} fails to be provisioned: Failed`,
    });
  });

  it('disable-external-domain-tls: "true" on the Route turns it off for that Route only', async () => {
    const h = harness({ 'external-domain-tls': 'Enabled' });
    h.seedRoute(undefined, { 'networking.knative.dev/disable-external-domain-tls': 'true' });
    await h.pass();
    expect(h.kube.list(Resources.Certificate, NS)).toEqual([]);
    expect(cond(h.route(), 'CertificateProvisioned')?.reason).toBe('TLSNotEnabled');
  });

  it('a cluster-local Route: no Certificate, TLSNotEnabled "TLS is not enabled for cluster-local"', async () => {
    const h = harness({ 'external-domain-tls': 'Enabled' });
    h.seedRoute();
    h.kube.edit<Route>(Resources.Route, NS, 'hello', (r) => void (r.metadata.labels = { 'networking.knative.dev/visibility': 'cluster-local' }));
    await h.pass();
    expect(h.kube.list(Resources.Certificate, NS)).toEqual([]);
    expect(cond(h.route(), 'CertificateProvisioned')).toEqual({
      status: 'True',
      reason: 'TLSNotEnabled',
      message: 'TLS is not enabled for cluster-local',
    });
  });

  it("a domain under the cluster domain (hakn's default, svc.cluster.local) gets no Certificate: TLSNotEnabled for cluster-local", async () => {
    const h = harness({ 'external-domain-tls': 'Enabled' }, { 'svc.cluster.local': '' });
    h.seedRoute();
    await h.pass();
    expect(h.route().status?.url).toBe('http://hello.default.svc.cluster.local');
    expect(h.kube.list(Resources.Certificate, NS)).toEqual([]);
    expect(cond(h.route(), 'CertificateProvisioned')).toEqual({
      status: 'True',
      reason: 'TLSNotEnabled',
      message: 'TLS is not enabled for cluster-local',
    });
  });

  it('a Certificate of that name the Route does not control: CertificateNotOwned, nothing programmed, the pass fails', async () => {
    const h = harness({ 'external-domain-tls': 'Enabled' });
    const route = h.seedRoute();
    const name = `route-${route.metadata.uid}`;
    h.kube.seed<Certificate>(Resources.Certificate, {
      apiVersion: 'networking.internal.knative.dev/v1alpha1',
      kind: 'Certificate',
      metadata: { name, namespace: NS },
      spec: { dnsNames: ['x.example.com'], secretName: 'x' },
    });
    await expect(h.pass()).rejects.toThrow(`route "hello" does not own Certificate "${name}"`);
    expect(cond(h.route(), 'CertificateProvisioned')).toEqual({
      status: 'False',
      reason: 'CertificateNotOwned',
      message: `There is an existing certificate ${name} that we don't own.`,
    });
    expect(h.ingress()).toBeUndefined();
  });

  it("cert-manager's class: Tidal applies the cert-manager Certificate (issuer from config-certmanager) and mirrors its Ready", async () => {
    const h = harness({ 'external-domain-tls': 'Enabled', 'certificate-class': 'cert-manager.certificate.networking.knative.dev' });
    h.kube.seed(Resources.ConfigMap, {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'config-certmanager', namespace: 'knative-serving' },
      data: { issuerRef: 'kind: ClusterIssuer\nname: tidal-ca\n' },
    } as KubeObject);
    const route = h.seedRoute();
    await h.pass();
    const name = `route-${route.metadata.uid}`;
    type CM = KubeObject & { spec: { issuerRef: unknown; dnsNames: string[] }; status?: unknown };
    const cm = h.kube.get<CM>(Resources.CertManagerCertificate, NS, name)!;
    expect(cm.spec.issuerRef).toEqual({ kind: 'ClusterIssuer', name: 'tidal-ca' });
    expect(cm.metadata.ownerReferences?.[0]).toMatchObject({ kind: 'Certificate', name, controller: true });
    expect(h.cert(name)?.status?.conditions?.[0]).toMatchObject({ type: 'Ready', status: 'Unknown', reason: 'NoCertManagerCertCondition' });
    expect(cond(h.route(), 'CertificateProvisioned')?.reason).toBe('HTTPDowngrade');

    // cert-manager issues it.
    h.kube.edit<CM>(Resources.CertManagerCertificate, NS, name, (c) => {
      c.status = { conditions: [{ type: 'Ready', status: 'True', reason: 'Ready' }], notAfter: '2027-03-01T00:00:00Z' };
    });
    await h.pass();
    expect(h.cert(name)?.status).toMatchObject({ notAfter: '2027-03-01T00:00:00Z', conditions: [{ type: 'Ready', status: 'True' }] });
    expect(cond(h.route(), 'CertificateProvisioned')?.status).toBe('True');
    expect(h.ingress()?.spec.tls).toEqual([{ hosts: ['hello.default.example.com'], secretName: name, secretNamespace: NS }]);
    expect(h.route().status?.url).toBe('https://hello.default.example.com');
  });

  it('withScheme sets the scheme of a URL whose host is listed', () => {
    const schemes = new Map<string, 'http' | 'https'>([['a.example.com', 'https']]);
    expect(withScheme('http://a.example.com', schemes)).toBe('https://a.example.com');
    expect(withScheme('http://b.example.com', schemes)).toBe('http://b.example.com');
  });
});
