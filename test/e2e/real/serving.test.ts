// Requests served for real: Services whose pods run on the real node (queue-proxy in front of Knative's test images)
// answer through Traefik by the host their URL names — splits, tags, cluster-local visibility and domain mappings as
// a user of Knative checks them with curl.
import { describe, expect, it } from 'vitest';
import {
  apply,
  condition,
  domainMapping,
  hostOf,
  image,
  ksvc,
  kubectlJson,
  request,
  serviceReady,
  tally,
  type KService,
  PizzaPlanet,
  useNamespace,
} from '../../harness/real.js';
import { eventually } from '../../harness/wait.js';

const ns = useNamespace('real-serving');
const V1 = PizzaPlanet.v1;
const V2 = PizzaPlanet.v2;

describe('a Service on the real node', () => {
  it('is Ready only once its URL answers through the ingress, and answers with its container', async () => {
    await apply(ksvc('hello', { image: image('helloworld'), readinessProbe: { httpGet: { path: '/' } } }), ns);
    // Watch the Service as a user would; the first time it says Ready, a request must already succeed.
    const firstReady = await eventually(
      'ksvc hello Ready',
      async () => {
        const s = await kubectlJson<KService>(['get', 'ksvc', 'hello', '-n', ns]);
        return condition(s, 'Ready')?.status === 'True' ? s : undefined;
      },
      180_000,
      50,
    );
    const host = hostOf(firstReady.status?.url);
    expect(host).toBe(`hello.${ns}.127.0.0.1.sslip.io`);
    const first = await request(host);
    expect({ status: first.status, body: first.body.trim() }).toEqual({ status: 200, body: 'Hello World! How about some tasty noodles?' });

    // The pods ran for real on the real node, with queue-proxy beside the user container.
    const pods = await kubectlJson<{ items: { spec: { nodeName: string; containers: { name: string }[] }; status: { phase: string } }[] }>([
      'get',
      'pods',
      '-n',
      ns,
      '-l',
      'serving.knative.dev/service=hello',
    ]);
    expect(pods.items.length).toBeGreaterThan(0);
    for (const p of pods.items) {
      expect(p.spec.nodeName).toBe('tidal-node');
      expect(p.spec.containers.map((c) => c.name)).toEqual(['user-container', 'queue-proxy']);
      expect(p.status.phase).toBe('Running');
    }
    const hundred = await tally(host, 100);
    expect(hundred.failures).toEqual([]);
    expect([...hundred.bodies.keys()]).toEqual(['Hello World! How about some tasty noodles?']);
  });

  it('splits 90/10 within 3 points over 2,000 requests, and each tag reaches only its Revision', async () => {
    await apply(ksvc('split', { image: image('pizzaplanetv1') }, { revisionName: 'split-v1' }), ns);
    await serviceReady('split', ns);
    await apply(
      ksvc(
        'split',
        { image: image('pizzaplanetv2') },
        {
          revisionName: 'split-v2',
          traffic: [
            { revisionName: 'split-v1', percent: 90, tag: 'v1' },
            { revisionName: 'split-v2', percent: 10, tag: 'v2' },
          ],
        },
      ),
      ns,
    );
    const svc = await serviceReady('split', ns);
    const host = hostOf(svc.status?.url);
    const t = await tally(host, 2000, { concurrency: 16 });
    expect(t.failures).toEqual([]);
    const v1Share = (100 * (t.bodies.get(V1) ?? 0)) / t.total;
    const v2Share = (100 * (t.bodies.get(V2) ?? 0)) / t.total;
    expect(t.total).toBe(2000);
    expect(Math.abs(v1Share - 90)).toBeLessThanOrEqual(3);
    expect(Math.abs(v2Share - 10)).toBeLessThanOrEqual(3);

    const tagUrl = (tag: string) => svc.status?.traffic?.find((x) => x.tag === tag)?.url;
    expect(hostOf(tagUrl('v1'))).toBe(`v1-split.${ns}.127.0.0.1.sslip.io`);
    for (const [tag, body] of [
      ['v1', V1],
      ['v2', V2],
    ] as const) {
      const byTag = await tally(hostOf(tagUrl(tag)), 200);
      expect(byTag.failures).toEqual([]);
      expect([...byTag.bodies.entries()]).toEqual([[body, 200]]);
    }
  });

  it('serves a cluster-local Service on the private entry point only', async () => {
    await apply(ksvc('inside', { image: image('helloworld') }, { labels: { 'networking.knative.dev/visibility': 'cluster-local' } }), ns);
    const svc = await serviceReady('inside', ns);
    const host = hostOf(svc.status?.url);
    expect(host).toBe(`inside.${ns}.svc.cluster.local`);
    const inside = await request(host, { private: true });
    expect({ status: inside.status, body: inside.body.trim() }).toEqual({ status: 200, body: 'Hello World! How about some tasty noodles?' });
    const outside = await request(host);
    expect(outside.status).toBe(404);
    // Nor under its name in the public domain: a cluster-local Route has no public host at all.
    expect((await request(`inside.${ns}.127.0.0.1.sslip.io`)).status).toBe(404);
  });

  it("serves a DomainMapping's host with the mapped Service", async () => {
    await apply(ksvc('mapped', { image: image('pizzaplanetv2') }), ns);
    await serviceReady('mapped', ns);
    const domain = 'pizza.tidal.test';
    // The stack keeps hakn's autocreate-cluster-domain-claims: the mapping claims its domain itself.
    await apply(domainMapping(domain, 'mapped', ns), ns);
    await eventually(
      `DomainMapping ${domain} Ready`,
      async () => condition(await kubectlJson(['get', 'domainmapping', domain, '-n', ns]), 'Ready')?.status === 'True',
      120_000,
    );
    const t = await tally(domain, 50);
    expect(t.failures).toEqual([]);
    expect([...t.bodies.entries()]).toEqual([[V2, 50]]);
  });

  it('runs a Revision that mounts a projected service account token, as any cluster admits its pods', async () => {
    // Pods get their ServiceAccount (and its token) at admission; without that the API server refuses this pod
    // ("serviceAccountToken: must not be specified when serviceAccountName is not set").
    const withToken = ksvc('token', {
      image: image('helloworld'),
      volumeMounts: [{ name: 'token', mountPath: '/var/run/secrets/tidal-test', readOnly: true }],
    });
    const spec = (withToken as { spec: { template: { spec: Record<string, unknown> } } }).spec.template.spec;
    spec.volumes = [{ name: 'token', projected: { sources: [{ serviceAccountToken: { path: 'token', audience: 'tidal-test' } }] } }];
    await apply(withToken, ns);
    const svc = await serviceReady('token', ns);
    expect((await request(hostOf(svc.status?.url))).status).toBe(200);
    const pods = await kubectlJson<{ items: { spec: { serviceAccountName?: string; volumes: { name: string }[] } }[] }>([
      'get',
      'pods',
      '-n',
      ns,
      '-l',
      'serving.knative.dev/service=token',
    ]);
    expect(pods.items.length).toBeGreaterThan(0);
    for (const p of pods.items) {
      expect(p.spec.serviceAccountName).toBe('default');
      expect(p.spec.volumes.map((v) => v.name)).toContain('token');
    }
  });
});
