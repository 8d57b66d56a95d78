// Routing as Knative users see it: URLs under config-domain, selectors, cluster-local visibility, traffic splits
// and tags, down to the Istio VirtualServices Tidal writes (accepted by the real Istio CRD schema on the API server).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Condition, Revision, Route, Service } from '../../api/serving.js';
import { apply, getObject, kubectl, temporalClient } from '../harness/cluster.js';
import { historySteps } from '../harness/history.js';
import { eventually } from '../harness/wait.js';

interface VirtualService {
  spec: {
    gateways: string[];
    hosts: string[];
    http: {
      match: { authority?: { prefix?: string }; gateways?: string[] }[];
      route: { destination: { host: string; port: { number: number } }; weight: number; headers?: { request?: { set?: Record<string, string> } } }[];
    }[];
  };
}

const cond = (o: { status?: { conditions?: Condition[] } } | undefined, t: string) => o?.status?.conditions?.find((c) => c.type === t);
const setDomain = (data: Record<string, string | null>) =>
  kubectl(['patch', 'configmap', 'config-domain', '-n', 'knative-serving', '--type=merge', '-p', JSON.stringify({ data })]);

function ksvc(name: string, extra: { labels?: Record<string, string>; image?: string; traffic?: object[] } = {}): object {
  return {
    apiVersion: 'serving.knative.dev/v1',
    kind: 'Service',
    metadata: { name, namespace: 'default', ...(extra.labels ? { labels: extra.labels } : {}) },
    spec: {
      template: { spec: { containers: [{ image: extra.image ?? 'nginx:1.27', ports: [{ containerPort: 80 }] }] } },
      ...(extra.traffic ? { traffic: extra.traffic } : {}),
    },
  };
}

async function readyService(name: string, check: (s: Service) => boolean = () => true): Promise<Service> {
  return eventually(
    `Service ${name} Ready`,
    async () => {
      const s = await getObject<Service>('ksvc', name);
      return cond(s, 'Ready')?.status === 'True' && s && check(s) ? s : undefined;
    },
    120_000,
  );
}

let t: Awaited<ReturnType<typeof temporalClient>>;
beforeAll(async () => (t = await temporalClient()));

afterAll(async () => {
  await t?.close();
  await setDomain({ '127.0.0.1.sslip.io': null, 'svc.coolcoffee.company': null });
  await kubectl(['delete', 'ksvc', 'web', 'coffee', 'private', '--ignore-not-found']);
  await kubectl(['delete', 'route', 'direct', '--ignore-not-found']);
  await kubectl(['delete', 'configuration', 'direct-cfg', '--ignore-not-found']);
  await kubectl(['delete', 'ingresses.networking.internal.knative.dev', 'lone', '--ignore-not-found']);
});

describe('routing', () => {
  it('a Service is Ready at http://<name>.<ns>.svc.cluster.local under the default domain', async () => {
    await apply(ksvc('web'));
    const svc = await readyService('web');
    expect(svc.status?.url).toBe('http://web.default.svc.cluster.local');
    const route = (await getObject<Route>('route', 'web'))!;
    expect(cond(route, 'AllTrafficAssigned')?.status).toBe('True');
    expect(cond(route, 'IngressReady')?.status).toBe('True');
    expect(cond(route, 'CertificateProvisioned')).toMatchObject({ status: 'True', reason: 'TLSNotEnabled' });
    const vs = (await getObject<VirtualService>('virtualservice', 'web-ingress'))!;
    expect(vs.spec.gateways).toEqual(['knative-serving/knative-local-gateway']);
    const mesh = (await getObject<VirtualService>('virtualservice', 'web-mesh'))!;
    expect(mesh.spec.gateways).toEqual(['mesh']);
    // The placeholder Service, owned by the Route, points at the load balancer once the Ingress reports it.
    const placeholder = await eventually(
      'placeholder on the load balancer',
      async () => {
        const p = await getObject<{ metadata: { ownerReferences?: { kind: string }[] }; spec: { type: string; externalName?: string } }>(
          'service',
          'web',
        );
        return p?.spec.externalName === 'knative-local-gateway.istio-system.svc.cluster.local' ? p : undefined;
      },
      60_000,
    );
    expect(placeholder.spec.type).toBe('ExternalName');
    expect(placeholder.metadata.ownerReferences?.[0]?.kind).toBe('Route');
  });

  it('with a default domain in config-domain the URL moves to it and the external gateway serves it', async () => {
    await setDomain({ '127.0.0.1.sslip.io': '' });
    const svc = await readyService('web', (s) => s.status?.url === 'http://web.default.127.0.0.1.sslip.io');
    expect(svc.status?.address?.url).toBe('http://web.default.svc.cluster.local');
    const vs = await eventually(
      'external VirtualService',
      async () => {
        const v = await getObject<VirtualService>('virtualservice', 'web-ingress');
        return v?.spec.hosts.includes('web.default.127.0.0.1.sslip.io') ? v : undefined;
      },
      60_000,
    );
    expect(vs.spec.gateways).toEqual(['knative-serving/knative-ingress-gateway', 'knative-serving/knative-local-gateway']);
  });

  it('a selector entry gives a labelled Service its domain (most specific wins)', async () => {
    await setDomain({ 'svc.coolcoffee.company': 'selector:\n  app: coolcoffee.company\n' });
    await apply(ksvc('coffee', { labels: { app: 'coolcoffee.company' } }));
    const svc = await readyService('coffee', (s) => s.status?.url === 'http://coffee.default.svc.coolcoffee.company');
    expect(svc.status?.url).toBe('http://coffee.default.svc.coolcoffee.company');
  });

  it('networking.knative.dev/visibility=cluster-local keeps a Service off the external gateway', async () => {
    await apply(ksvc('private', { labels: { 'networking.knative.dev/visibility': 'cluster-local' } }));
    const svc = await readyService('private');
    expect(svc.status?.url).toBe('http://private.default.svc.cluster.local');
    const vs = (await getObject<VirtualService>('virtualservice', 'private-ingress'))!;
    expect(vs.spec.gateways).toEqual(['knative-serving/knative-local-gateway']);
    expect(vs.spec.hosts.some((h) => h.includes('sslip.io'))).toBe(false);
  });

  it('90 % latest / 10 % web-00001 shows as weights 90/10 in web-ingress and in the Route status', async () => {
    await apply(
      ksvc('web', {
        image: 'nginx:1.28',
        traffic: [
          { latestRevision: true, percent: 90 },
          { revisionName: 'web-00001', percent: 10 },
        ],
      }),
    );
    const svc = await readyService('web', (s) => s.status?.latestReadyRevisionName === 'web-00002' && (s.status.traffic?.length ?? 0) === 2);
    expect(svc.status?.traffic).toEqual([
      { revisionName: 'web-00002', latestRevision: true, percent: 90 },
      { revisionName: 'web-00001', latestRevision: false, percent: 10 },
    ]);
    const vs = await eventually(
      'weights 90/10',
      async () => {
        const v = await getObject<VirtualService>('virtualservice', 'web-ingress');
        const weights = v?.spec.http[0]?.route.map((r) => r.weight).sort((a, b) => b - a);
        return weights?.join('/') === '90/10' ? v : undefined;
      },
      60_000,
    );
    const dest = vs.spec.http[0]!.route.map((r) => [r.destination.host, r.weight, r.headers?.request?.set?.['Knative-Serving-Revision']]);
    expect(dest).toEqual(
      expect.arrayContaining([
        ['web-00002.default.svc.cluster.local', 90, 'web-00002'],
        ['web-00001.default.svc.cluster.local', 10, 'web-00001'],
      ]),
    );
  });

  it('a tag gets a tag URL and its own route to its revision', async () => {
    await apply(
      ksvc('web', {
        image: 'nginx:1.28',
        traffic: [
          { latestRevision: true, percent: 100 },
          { revisionName: 'web-00001', percent: 0, tag: 'old' },
        ],
      }),
    );
    const svc = await readyService('web', (s) => s.status?.traffic?.some((t) => t.tag === 'old') ?? false);
    expect(svc.status?.traffic).toContainEqual({
      tag: 'old',
      revisionName: 'web-00001',
      latestRevision: false,
      percent: 0,
      url: 'http://old-web.default.127.0.0.1.sslip.io',
    });
    const vs = await eventually(
      'tag route',
      async () => {
        const v = await getObject<VirtualService>('virtualservice', 'web-ingress');
        return v?.spec.hosts.includes('old-web.default.127.0.0.1.sslip.io') ? v : undefined;
      },
      60_000,
    );
    const tagRoute = vs.spec.http.find((h) => h.match.some((m) => m.authority?.prefix === 'old-web.default.127.0.0.1.sslip.io'));
    expect(tagRoute?.route).toEqual([
      expect.objectContaining({ destination: { host: 'web-00001.default.svc.cluster.local', port: { number: 80 } }, weight: 100 }),
    ]);
    // The tag's placeholder Service exists, owned by the Route.
    const placeholder = await getObject<{ spec: { type: string; externalName: string } }>('service', 'old-web');
    expect(placeholder?.spec.type).toBe('ExternalName');
    const old = (await getObject<Revision>('revision', 'web-00001'))!;
    expect(old.metadata.labels?.['serving.knative.dev/routingState']).toBe('active');
    expect(old.metadata.annotations?.['serving.knative.dev/routes']).toBe('web');
  });

  it('a Revision no Route carries any more becomes reserve with a fresh routingStateModified', async () => {
    const before = (await getObject<Revision>('revision', 'web-00001'))!;
    await apply(ksvc('web', { image: 'nginx:1.28' }));
    const rev = await eventually(
      'web-00001 reserve',
      async () => {
        const r = await getObject<Revision>('revision', 'web-00001');
        return r?.metadata.labels?.['serving.knative.dev/routingState'] === 'reserve' ? r : undefined;
      },
      60_000,
    );
    expect(rev.metadata.annotations?.['serving.knative.dev/routes']).toBeUndefined();
    expect(rev.metadata.annotations?.['serving.knative.dev/routingStateModified']).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    expect(
      (rev.metadata.annotations?.['serving.knative.dev/routingStateModified'] ?? '') >=
        (before.metadata.annotations?.['serving.knative.dev/routingStateModified'] ?? ''),
    ).toBe(true);
    const latest = (await getObject<Revision>('revision', 'web-00002'))!;
    expect(latest.metadata.labels?.['serving.knative.dev/routingState']).toBe('active');
    // The removed tag's placeholder Service goes with it.
    await eventually('old-web placeholder deleted', async () => (await getObject('service', 'old-web')) === undefined, 30_000);
  });

  it('deleting a Route takes it off the Revisions it carried (the routes.serving.knative.dev finalizer)', async () => {
    await apply({
      apiVersion: 'serving.knative.dev/v1',
      kind: 'Route',
      metadata: { name: 'extra', namespace: 'default' },
      spec: { traffic: [{ revisionName: 'web-00002', percent: 100 }] },
    });
    await eventually(
      'extra carries web-00002',
      async () => (await getObject<Revision>('revision', 'web-00002'))?.metadata.annotations?.['serving.knative.dev/routes'] === 'extra,web',
      60_000,
    );
    const route = (await getObject<Route>('route', 'extra'))!;
    expect(route.metadata.finalizers).toContain('routes.serving.knative.dev');
    await kubectl(['delete', 'route', 'extra', '--wait=false']);
    await eventually('route gone', async () => (await getObject('route', 'extra')) === undefined, 60_000);
    const rev = (await getObject<Revision>('revision', 'web-00002'))!;
    expect(rev.metadata.annotations?.['serving.knative.dev/routes']).toBe('web');
    expect(rev.metadata.labels?.['serving.knative.dev/routingState']).toBe('active');
    const cfg = (await getObject<{ metadata: { annotations?: Record<string, string> } }>('configuration', 'web'))!;
    expect(cfg.metadata.annotations?.['serving.knative.dev/routes']).toBe('web');
  });

  it('a Route at a Configuration (no Service) lists itself on it and follows its new latest ready Revision at once', async () => {
    const cfg = (image: string) => ({
      apiVersion: 'serving.knative.dev/v1',
      kind: 'Configuration',
      metadata: { name: 'direct-cfg', namespace: 'default' },
      spec: { template: { spec: { containers: [{ image, ports: [{ containerPort: 80 }] }] } } },
    });
    await apply(cfg('nginx:1.27'));
    await apply({
      apiVersion: 'serving.knative.dev/v1',
      kind: 'Route',
      metadata: { name: 'direct', namespace: 'default' },
      spec: { traffic: [{ configurationName: 'direct-cfg', percent: 100 }] },
    });
    await eventually(
      'direct Ready on direct-cfg-00001',
      async () => {
        const r = await getObject<Route>('route', 'direct');
        return cond(r, 'Ready')?.status === 'True' && r?.status?.traffic?.[0]?.revisionName === 'direct-cfg-00001';
      },
      120_000,
    );
    const annotated = await getObject<{ metadata: { annotations?: Record<string, string> } }>('configuration', 'direct-cfg');
    expect(annotated?.metadata.annotations?.['serving.knative.dev/routes']).toBe('direct');
    await apply(cfg('nginx:1.28'));
    // Well within the 30 s resync of the e2e stack: the Configuration's change pokes the Route.
    await eventually(
      'direct on direct-cfg-00002',
      async () => (await getObject<Route>('route', 'direct'))?.status?.traffic?.[0]?.revisionName === 'direct-cfg-00002',
      20_000,
    );
    // ADR 0005: the Route's own workflow programs its KIngress (VirtualServices and status) in the Route's step; the
    // KIngress has no workflow of its own. The Configuration, which no Service controls, has its own workflow.
    const routeSteps = historySteps(await t.client.workflow.getHandle('Route/default/direct').fetchHistory()).map((st) => st.summary);
    expect(routeSteps).toEqual(
      expect.arrayContaining([
        expect.stringContaining('program Route default/direct (traffic, placeholder Services, Ingress and its VirtualServices, status)'),
      ]),
    );
    expect(await getObject<VirtualService>('virtualservice', 'direct-ingress')).toBeDefined();
    await expect(t.client.workflow.getHandle('Ingress/default/direct').describe()).rejects.toThrow(/not found/i);
    const cfgSteps = historySteps(await t.client.workflow.getHandle('Configuration/default/direct-cfg').fetchHistory()).map((st) => st.summary);
    expect(cfgSteps).toEqual(expect.arrayContaining([expect.stringContaining('ensure Revision of Configuration default/direct-cfg')]));
  });

  it('a KIngress no Route owns is programmed by its own workflow (class istio): VirtualServices, then Ready', async () => {
    await apply({
      apiVersion: 'networking.internal.knative.dev/v1alpha1',
      kind: 'Ingress',
      metadata: {
        name: 'lone',
        namespace: 'default',
        annotations: { 'networking.knative.dev/ingress.class': 'istio.ingress.networking.knative.dev' },
      },
      spec: {
        rules: [
          {
            hosts: ['lone.example.com'],
            visibility: 'ExternalIP',
            http: { paths: [{ splits: [{ serviceName: 'web-00002', serviceNamespace: 'default', servicePort: 80, percent: 100 }] }] },
          },
        ],
      },
    });
    const ing = await eventually(
      'lone Ready',
      async () => {
        const i = await getObject<{ status?: { conditions?: Condition[] } }>('ingresses.networking.internal.knative.dev', 'lone');
        return cond(i, 'Ready')?.status === 'True' ? i : undefined;
      },
      60_000,
    );
    expect(cond(ing, 'LoadBalancerReady')?.status).toBe('True');
    const vs = (await getObject<VirtualService>('virtualservice', 'lone-ingress'))!;
    expect(vs.spec.hosts).toContain('lone.example.com');
    const steps = historySteps(await t.client.workflow.getHandle('Ingress/default/lone').fetchHistory()).map((st) => st.summary);
    expect(steps).toEqual(
      expect.arrayContaining([expect.stringContaining('apply VirtualServices lone-ingress/-mesh and Ingress default/lone status')]),
    );
  });
});
