// The Route activity against an in-memory API server (kube-fake.ts): the labeler's routes annotation on
// Configurations, placeholder ownership / orphans / Endpoints, domain-template errors, and removed fields reaching
// the KIngress and placeholder Services.
import pino from 'pino';
import { beforeEach, describe, expect, it } from 'vitest';
import type { ActivityDeps, ConfigSource, MetadataCache } from '../../../activities/deps.js';
import type { WrittenVersions } from '../../../activities/written.js';
import { observing } from '../../../activities/observe.js';
import type { EventRecorder } from '../../../activities/events.js';
import type { KubeClient } from '../../../kube/client.js';
import { createRouteActivities, RouteFinalizer, type RouteOutcome } from '../../../activities/route.js';
import { parseDomainConfig, type DomainConfig } from '../../../api/config/domain.js';
import { defaultFeaturesConfig, parseFeatures } from '../../../api/config/features.js';
import { parseNetworkConfig, type NetworkConfig } from '../../../api/config/network.js';
import { Resources } from '../../../api/kinds.js';
import type { KubeObject } from '../../../api/meta.js';
import type { Ingress } from '../../../api/networking.js';
import type { Condition, Configuration, Revision, Route, TrafficTarget } from '../../../api/serving.js';
import { KubeFake, refused } from './kube-fake.js';
import { revisionConfig } from '../../fixtures/revision.js';

const NS = 'default';
const NOW = new Date('2026-11-23T10:00:00.000Z');
const Endpoints = { group: '', version: 'v1', kind: 'Endpoints', plural: 'endpoints', namespaced: true };
const OTHER_CLASS = 'contour.ingress.networking.knative.dev';
const ISTIO = { 'ingress-class': 'istio.ingress.networking.knative.dev' };

function network(data: Record<string, string> = {}): NetworkConfig {
  const p = parseNetworkConfig(data);
  if (!p.ok) throw new Error(p.error);
  return p.value;
}
function domains(data: Record<string, string>): DomainConfig {
  const p = parseDomainConfig(data);
  if (!p.ok) throw new Error(p.error);
  return p.value;
}

const ready = (): Condition[] => [{ type: 'Ready', status: 'True', lastTransitionTime: '2026-11-23T09:00:00Z' }];

function configuration(
  name: string,
  latestReady: string | undefined,
  latestCreated = latestReady,
  annotations?: Record<string, string>,
): Configuration {
  return {
    apiVersion: 'serving.knative.dev/v1',
    kind: 'Configuration',
    metadata: { name, namespace: NS, generation: 1, ...(annotations ? { annotations } : {}) },
    spec: { template: { spec: { containers: [{ image: 'nginx' }] } } },
    status: {
      observedGeneration: 1,
      conditions: ready(),
      ...(latestReady ? { latestReadyRevisionName: latestReady } : {}),
      ...(latestCreated ? { latestCreatedRevisionName: latestCreated } : {}),
    },
  };
}

function revision(name: string, cfg: string, isReady = true): Revision {
  return {
    apiVersion: 'serving.knative.dev/v1',
    kind: 'Revision',
    metadata: {
      name,
      namespace: NS,
      generation: 1,
      labels: { 'serving.knative.dev/configuration': cfg, 'serving.knative.dev/routingState': 'pending' },
      ownerReferences: [{ apiVersion: 'serving.knative.dev/v1', kind: 'Configuration', name: cfg, uid: `uid-${cfg}`, controller: true }],
    },
    spec: { containers: [{ image: 'nginx' }] },
    status: { observedGeneration: 1, conditions: isReady ? ready() : [{ type: 'Ready', status: 'Unknown' }] },
  };
}

function route(name: string, traffic: TrafficTarget[], meta: { labels?: Record<string, string>; annotations?: Record<string, string> } = {}): Route {
  return {
    apiVersion: 'serving.knative.dev/v1',
    kind: 'Route',
    metadata: { name, namespace: NS, generation: 1, finalizers: [RouteFinalizer], ...meta },
    spec: { traffic },
  };
}

/**
 * `client` with every call answered after `delayMs(verb, name)` milliseconds, so calls made side by side complete in
 * the order a test chooses.
 */
/** `delayMs` is asked with the verb (`status` for a status write), the object's name and its kind. */
function delayed(client: KubeClient, delayMs: (verb: string, name: string, kind: string) => number): KubeClient {
  const nameOf = (verb: string, args: unknown[]) =>
    verb === 'apply' || verb === 'create' ? ((args[1] as KubeObject).metadata.name ?? '') : typeof args[2] === 'string' ? args[2] : '';
  return new Proxy(client, {
    get(target, verb: string) {
      const call: unknown = Reflect.get(target, verb);
      if (typeof call !== 'function') return call;
      return async (...args: unknown[]) => {
        const as = verb === 'apply' && args[2] === 'status' ? 'status' : verb;
        await new Promise((r) => setTimeout(r, delayMs(as, nameOf(verb, args), (args[0] as { kind?: string } | undefined)?.kind ?? '')));
        return Reflect.apply(call, target, args) as unknown;
      };
    },
  });
}

function harness(
  net: Record<string, string> = {},
  opts: { delayMs?: (verb: string, name: string, kind: string) => number; cache?: MetadataCache } = {},
) {
  const kube = new KubeFake();
  const recorded: string[] = [];
  const events: EventRecorder = { record: async (_o, type, reason, message) => void recorded.push(`${type} ${reason} ${message}`) };
  // KIngresses of another class by default, so `ingressReady` plays that class's controller; an istio KIngress is
  // programmed by the Route's pass itself (ADR 0005, tested with `ISTIO`).
  const withClass = (data: Record<string, string>) => network({ 'ingress-class': OTHER_CLASS, ...data });
  let networkCfg = withClass(net);
  let featuresCfg = defaultFeaturesConfig();
  const config: ConfigSource = {
    // Read only for a Revision the Route waits for (its scale once routed).
    revisionConfig: () => revisionConfig(),
    networkConfig: () => networkCfg,
    domainConfig: () => domains({ 'example.com': '' }),
    featuresConfig: () => featuresCfg,
    systemNamespace: 'knative-serving',
  };
  const client = opts.delayMs ? delayed(kube.client(), opts.delayMs) : kube.client();
  const deps = { kube: client, events, config, log: pino({ level: 'silent' }), now: () => NOW, cache: opts.cache } as unknown as ActivityDeps;
  const acts = createRouteActivities(deps);
  return {
    kube,
    recorded,
    setNetwork: (data: Record<string, string>) => (networkCfg = withClass(data)),
    setFeatures: (data: Record<string, string>) => {
      const parsed = parseFeatures(data);
      if (parsed.ok) featuresCfg = parsed.value;
    },
    pass: (name: string, written?: WrittenVersions) => observing(() => acts.reconcileRoute({ namespace: NS, name }, written ? { written } : {})),
    /** A pass as a Service's status pass makes it: handed what the Configuration's part read (here: nothing). */
    statusPass: (name: string) => observing(() => acts.reconcileRoute({ namespace: NS, name }, { seen: Promise.resolve(undefined) })),
    route: (name: string) => kube.get<Route>(Resources.Route, NS, name)!,
    cond: (name: string, type: string) => kube.get<Route>(Resources.Route, NS, name)?.status?.conditions?.find((c) => c.type === type),
    annotation: (type: typeof Resources.Configuration, name: string, key = 'serving.knative.dev/routes') =>
      kube.get<KubeObject>(type, NS, name)?.metadata.annotations?.[key],
    /** What another class's ingress controller would do: report the KIngress Ready for its generation, with a load balancer. */
    ingressReady: (
      name: string,
      lb: { ip?: string; domainInternal?: string } = { domainInternal: 'istio-ingressgateway.istio-system.svc.cluster.local' },
    ) =>
      kube.edit<Ingress>(Resources.KIngress, NS, name, (i) => {
        i.status = {
          observedGeneration: i.metadata.generation ?? 1,
          conditions: ready(),
          publicLoadBalancer: { ingress: [lb] },
          privateLoadBalancer: { ingress: [lb] },
        };
      }),
  };
}

type H = ReturnType<typeof harness>;
const ok = (o: RouteOutcome) => {
  if (o.outcome === 'gone') throw new Error('gone');
  return o;
};

/** A Route `direct` at Configuration `cfg` (not through a Service), programmed and Ready. */
async function readyDirectRoute(h: H, traffic: TrafficTarget[] = [{ configurationName: 'cfg', percent: 100 }]) {
  h.kube.seed(Resources.Configuration, configuration('cfg', 'cfg-00001'));
  h.kube.seed(Resources.Revision, revision('cfg-00001', 'cfg'));
  h.kube.seed(Resources.Route, route('direct', traffic));
  await h.pass('direct');
  h.ingressReady('direct');
  const o = ok(await h.pass('direct'));
  expect(o.ready).toBe('True');
}

/** `direct` at Configuration `cfg`, whose Revision `cfg-00001` is Ready: nothing programmed yet. */
function seedDirect(h: H): void {
  h.kube.seed(Resources.Configuration, configuration('cfg', 'cfg-00001'));
  h.kube.seed(Resources.Revision, revision('cfg-00001', 'cfg'));
  h.kube.seed(Resources.Route, route('direct', [{ configurationName: 'cfg', percent: 100 }]));
}

/** `direct` at `cfg`, with `old` and its Revision still listing it from before (the labeler's clear has work). */
function seedOldRouting(h: ReturnType<typeof harness>) {
  h.kube.seed(Resources.Configuration, configuration('cfg', 'cfg-00001'));
  h.kube.seed(Resources.Revision, revision('cfg-00001', 'cfg'));
  h.kube.seed(Resources.Configuration, configuration('old', 'old-00001', 'old-00001', { 'serving.knative.dev/routes': 'direct,keep' }));
  h.kube.seed(Resources.Revision, revision('old-00001', 'old'));
  h.kube.edit<Revision>(Resources.Revision, NS, 'old-00001', (r) => {
    r.metadata.labels = { ...r.metadata.labels, 'serving.knative.dev/routingState': 'active' };
    r.metadata.annotations = { 'serving.knative.dev/routes': 'direct' };
  });
  h.kube.seed(Resources.Route, route('direct', [{ configurationName: 'cfg', percent: 100 }]));
}

describe('labeler: serving.knative.dev/routes on Configurations', () => {
  let h: H;
  beforeEach(() => (h = harness()));

  it('a Route at a Configuration lists itself on it, so a new latest ready Revision pokes the Route', async () => {
    h.kube.seed(Resources.Configuration, configuration('cfg', 'cfg-00001', 'cfg-00002'));
    h.kube.seed(Resources.Revision, revision('cfg-00001', 'cfg'));
    h.kube.seed(Resources.Revision, revision('cfg-00002', 'cfg', false));
    h.kube.seed(Resources.Route, route('direct', [{ configurationName: 'cfg', percent: 100 }]));
    await h.pass('direct');
    expect(h.annotation(Resources.Configuration, 'cfg')).toBe('direct');
    // The latest created Revision is active already (latestRevision target), as is the one serving.
    for (const rev of ['cfg-00001', 'cfg-00002']) {
      expect(h.kube.get<Revision>(Resources.Revision, NS, rev)?.metadata.labels?.['serving.knative.dev/routingState']).toBe('active');
      expect(h.annotation(Resources.Revision, rev)).toBe('direct');
    }
  });

  it('a named Revision lists the Route on its controlling Configuration too; other Routes are kept, sorted', async () => {
    h.kube.seed(Resources.Configuration, configuration('cfg', 'cfg-00002', 'cfg-00002', { 'serving.knative.dev/routes': 'zeta' }));
    h.kube.seed(Resources.Revision, revision('cfg-00001', 'cfg'));
    h.kube.seed(Resources.Revision, revision('cfg-00002', 'cfg'));
    h.kube.seed(Resources.Route, route('alpha', [{ revisionName: 'cfg-00001', percent: 100 }]));
    await h.pass('alpha');
    expect(h.annotation(Resources.Configuration, 'cfg')).toBe('alpha,zeta');
    expect(h.annotation(Resources.Revision, 'cfg-00001')).toBe('alpha');
    // Not a latestRevision target: the latest created Revision is not carried.
    expect(h.annotation(Resources.Revision, 'cfg-00002')).toBeUndefined();
  });

  it('once Ready, Configurations the Route no longer references lose it (others keep theirs); not before', async () => {
    await readyDirectRoute(h);
    h.kube.seed(Resources.Configuration, configuration('other', 'other-00001'));
    h.kube.seed(Resources.Revision, revision('other-00001', 'other'));
    h.kube.edit<Configuration>(Resources.Configuration, NS, 'cfg', (c) => (c.metadata.annotations = { 'serving.knative.dev/routes': 'direct,keep' }));
    h.kube.edit<Route>(Resources.Route, NS, 'direct', (r) => (r.spec.traffic = [{ configurationName: 'other', percent: 100 }]));

    const first = ok(await h.pass('direct'));
    expect(first.ready).not.toBe('True'); // the Ingress has not caught up with the new generation
    expect(h.annotation(Resources.Configuration, 'other')).toBe('direct');
    expect(h.annotation(Resources.Configuration, 'cfg')).toBe('direct,keep');

    h.ingressReady('direct');
    expect(ok(await h.pass('direct')).ready).toBe('True');
    expect(h.annotation(Resources.Configuration, 'cfg')).toBe('keep');
    expect(h.annotation(Resources.Revision, 'cfg-00001')).toBeUndefined();
    expect(h.kube.get<Revision>(Resources.Revision, NS, 'cfg-00001')?.metadata.labels?.['serving.knative.dev/routingState']).toBe('reserve');
  });

  it('a settled pass with nothing to change writes nothing', async () => {
    await readyDirectRoute(h);
    h.kube.calls = [];
    const o = ok(await h.pass('direct'));
    expect(o).toMatchObject({ outcome: 'unchanged', ingress: 'unchanged', ready: 'True' });
    expect(h.kube.writes()).toEqual([]);
    // Settled before and after, with the same targets: no namespace-wide list of Revisions or Configurations.
    expect(h.kube.calls.filter((c) => c.verb === 'list' && (c.kind === 'Revision' || c.kind === 'Configuration'))).toEqual([]);
  });

  /** A watcher cache over the fake's store that records what it was asked; `vouch` false plays one still catching up. */
  function cacheOver(kube: KubeFake, vouch: () => boolean) {
    const asked: { kind: string; labels: Record<string, string>; after?: string }[] = [];
    const cache: MetadataCache = {
      list: async (type, ns, opts = {}) => {
        asked.push({ kind: type.kind, labels: { ...opts.labels }, ...(opts.after ? { after: opts.after } : {}) });
        if (!vouch()) return undefined;
        const labels = Object.entries(opts.labels ?? {});
        return kube.list(type, ns).filter((o) => labels.every(([k, v]) => o.metadata.labels?.[k] === v));
      },
    };
    return { cache, asked };
  }

  it('with the watcher cache, the clear and the orphan list read it, asking it to reflect what earlier passes wrote', async () => {
    const c = { cache: undefined as unknown as MetadataCache, asked: [] as ReturnType<typeof cacheOver>['asked'] };
    const h = harness(ISTIO, { cache: { list: (...a) => c.cache.list(...a) } });
    Object.assign(
      c,
      cacheOver(h.kube, () => true),
    );
    seedOldRouting(h);
    const out = ok(await h.pass('direct', { Revision: '3', Service: '2' }));
    expect(out.ready).toBe('True');
    // No namespace-wide list went to the API server.
    expect(h.kube.calls.filter((call) => call.verb === 'list')).toEqual([]);
    expect(h.annotation(Resources.Configuration, 'old')).toBe('keep');
    expect(h.annotation(Resources.Revision, 'old-00001')).toBeUndefined();
    expect(h.annotation(Resources.Revision, 'cfg-00001')).toBe('direct');
    // The cache was asked to reflect what the earlier passes wrote (the clear's lists start while the KIngress is
    // programmed, before this pass writes any Revision; its own writes go only to the targets, which the clear keeps).
    expect(c.asked.find((a) => a.kind === 'Revision')).toEqual({
      kind: 'Revision',
      labels: { 'serving.knative.dev/routingState': 'active' },
      after: '3',
    });
    expect(c.asked.find((a) => a.kind === 'Service')).toEqual({ kind: 'Service', labels: { 'serving.knative.dev/route': 'direct' }, after: '2' });
    expect(c.asked.find((a) => a.kind === 'Configuration')?.labels).toEqual({});
    // What this pass wrote goes back to the workflow for the next one: the labeler's Revision patches, the placeholder.
    const patched = h.kube.get<Revision>(Resources.Revision, NS, 'old-00001')!.metadata.resourceVersion!;
    expect(BigInt(out.written?.Revision ?? '0')).toBeGreaterThanOrEqual(BigInt(patched));
    expect(out.written?.Service).toBe(h.kube.get<KubeObject>(Resources.KubeService, NS, 'direct')!.metadata.resourceVersion);
  });

  it('a cache that cannot vouch for those writes in time leaves the lists to the API server, with the same result', async () => {
    const c = { cache: undefined as unknown as MetadataCache, asked: [] as ReturnType<typeof cacheOver>['asked'] };
    const h = harness(ISTIO, { cache: { list: (...a) => c.cache.list(...a) } });
    Object.assign(
      c,
      cacheOver(h.kube, () => false),
    );
    seedOldRouting(h);
    expect(ok(await h.pass('direct', { Configuration: '99' })).ready).toBe('True');
    expect(c.asked.find((a) => a.kind === 'Configuration')?.after).toBe('99');
    expect(
      h.kube.calls
        .filter((call) => call.verb === 'list')
        .map((call) => call.kind)
        .sort(),
    ).toEqual(['Configuration', 'Revision', 'Service']);
    expect(h.annotation(Resources.Configuration, 'old')).toBe('keep');
    expect(h.annotation(Resources.Revision, 'old-00001')).toBeUndefined();
  });

  it('a refused labeler patch fails the step once the other patches have settled, before the status write; the retry completes', async () => {
    h.kube.seed(Resources.Configuration, configuration('cfg', 'cfg-00001', 'cfg-00002'));
    h.kube.seed(Resources.Revision, revision('cfg-00001', 'cfg'));
    h.kube.seed(Resources.Revision, revision('cfg-00002', 'cfg', false));
    h.kube.seed(Resources.Route, route('direct', [{ configurationName: 'cfg', percent: 100 }]));
    h.kube.failNext('patch', Resources.Revision, refused(500, 'InternalError', 'etcd timeout', 'PATCH'));
    await expect(h.pass('direct')).rejects.toThrow('etcd timeout');
    const listing = ['cfg-00001', 'cfg-00002'].filter((rev) => h.annotation(Resources.Revision, rev) === 'direct');
    expect(listing).toHaveLength(1); // the other Revision's patch went through
    expect(h.annotation(Resources.Configuration, 'cfg')).toBe('direct');
    expect(h.route('direct').status).toBeUndefined();
    await h.pass('direct');
    for (const rev of ['cfg-00001', 'cfg-00002']) expect(h.annotation(Resources.Revision, rev)).toBe('direct');
    expect(h.route('direct').status?.traffic).toEqual([{ revisionName: 'cfg-00001', latestRevision: true, percent: 100 }]);
  });

  it('the finalizer takes the Route off its Configurations and Revisions, then removes itself', async () => {
    await readyDirectRoute(h);
    h.kube.seed(Resources.Configuration, configuration('old', 'old-00001', 'old-00001', { 'serving.knative.dev/routes': 'direct,keep' }));
    h.kube.edit<Route>(Resources.Route, NS, 'direct', (r) => (r.metadata.deletionTimestamp = NOW.toISOString()));
    expect(await h.pass('direct')).toEqual({ outcome: 'gone' });
    expect(h.annotation(Resources.Configuration, 'cfg')).toBeUndefined();
    expect(h.annotation(Resources.Configuration, 'old')).toBe('keep');
    expect(h.annotation(Resources.Revision, 'cfg-00001')).toBeUndefined();
    expect(h.route('direct').metadata.finalizers).toEqual([]);
  });
});

describe('placeholder Services', () => {
  let h: H;
  beforeEach(() => (h = harness()));

  it('a foreign Service with the placeholder name: IngressReady/Ready False NotOwned, no Ingress, the pass fails to be retried', async () => {
    h.kube.seed(Resources.Configuration, configuration('cfg', 'cfg-00001'));
    h.kube.seed(Resources.Revision, revision('cfg-00001', 'cfg'));
    h.kube.seed(Resources.KubeService, {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'direct', namespace: NS },
      spec: { type: 'ClusterIP' },
    } as KubeObject);
    h.kube.seed(Resources.Route, route('direct', [{ configurationName: 'cfg', percent: 100 }]));
    await expect(h.pass('direct')).rejects.toThrow('route "direct" does not own Service "direct"');
    const message = 'There is an existing placeholder Service "direct" that we do not own.';
    expect(h.cond('direct', 'IngressReady')).toMatchObject({ status: 'False', reason: 'NotOwned', message });
    expect(h.cond('direct', 'Ready')).toMatchObject({ status: 'False', reason: 'NotOwned', message });
    expect(h.kube.get(Resources.KIngress, NS, 'direct')).toBeUndefined();
    expect(h.kube.get<KubeObject>(Resources.KubeService, NS, 'direct')?.metadata.ownerReferences).toBeUndefined();
    expect(h.recorded).toEqual(['Warning InternalError route "direct" does not own Service "direct"']);

    // The foreign Service goes: the next attempt programs the Route.
    await h.kube.client().delete(Resources.KubeService, NS, 'direct');
    await h.pass('direct');
    h.ingressReady('direct');
    expect(ok(await h.pass('direct')).ready).toBe('True');
  });

  it('several traffic names, reconciled side by side: the outcome and the Events do not depend on the order the API server answers in', async () => {
    const traffic: TrafficTarget[] = [
      { configurationName: 'cfg', percent: 100 },
      { revisionName: 'cfg-00001', percent: 0, tag: 'a' },
      { revisionName: 'cfg-00001', percent: 0, tag: 'b' },
    ];
    const created = ['direct', 'a-direct', 'b-direct'].map((name) => `Normal Created Created placeholder service "${name}"`);
    // The later a name sorts, the sooner its apply is answered; then the other way round.
    for (const slow of [
      { direct: 20, 'a-direct': 10, 'b-direct': 1 },
      { direct: 1, 'a-direct': 10, 'b-direct': 20 },
    ] as Record<string, number>[]) {
      const hd = harness({}, { delayMs: (verb, name) => (verb === 'apply' ? (slow[name] ?? 0) : 0) });
      hd.kube.seed(Resources.Configuration, configuration('cfg', 'cfg-00001'));
      hd.kube.seed(Resources.Revision, revision('cfg-00001', 'cfg'));
      hd.kube.seed(Resources.Route, route('direct', traffic));
      expect(ok(await hd.pass('direct')).placeholders).toBe('created direct, a-direct, b-direct');
      expect(hd.recorded.filter((e) => e.includes('placeholder')).sort()).toEqual([...created].sort());
      for (const name of ['direct', 'a-direct', 'b-direct']) expect(hd.kube.get(Resources.KubeService, NS, name)).toBeDefined();
    }
  });

  it('config-features tag-header-based-routing: enabled programs the KIngress with Knative-Serving-Tag matches', async () => {
    h.kube.seed(Resources.Configuration, configuration('cfg', 'cfg-00001'));
    h.kube.seed(Resources.Revision, revision('cfg-00001', 'cfg'));
    h.kube.seed(
      Resources.Route,
      route('direct', [
        { configurationName: 'cfg', percent: 100 },
        { revisionName: 'cfg-00001', percent: 0, tag: 'a' },
      ]),
    );
    const paths = () => (h.kube.get<Ingress>(Resources.KIngress, NS, 'direct')?.spec?.rules ?? []).map((r) => r.http?.paths ?? []);
    await h.pass('direct');
    expect(JSON.stringify(paths())).not.toContain('Knative-Serving-Tag');
    h.setFeatures({ 'tag-header-based-routing': 'Enabled' });
    await h.pass('direct');
    const [defaultRule] = paths();
    expect(defaultRule?.[0]?.headers).toEqual({ 'Knative-Serving-Tag': { exact: 'a' } });
    expect(defaultRule?.[1]?.appendHeaders).toMatchObject({ 'Knative-Serving-Default-Route': 'true' });
    expect(paths().some((p) => p[0]?.appendHeaders?.['Knative-Serving-Tag'] === 'a')).toBe(true);
  });

  it('a foreign Service holding one name: the names before it are still created, those after it are not (as one by one)', async () => {
    h.kube.seed(Resources.Configuration, configuration('cfg', 'cfg-00001'));
    h.kube.seed(Resources.Revision, revision('cfg-00001', 'cfg'));
    h.kube.seed(Resources.KubeService, { apiVersion: 'v1', kind: 'Service', metadata: { name: 'a-direct', namespace: NS } });
    h.kube.seed(
      Resources.Route,
      route('direct', [
        { configurationName: 'cfg', percent: 100 },
        { revisionName: 'cfg-00001', percent: 0, tag: 'a' },
        { revisionName: 'cfg-00001', percent: 0, tag: 'b' },
      ]),
    );
    await expect(h.pass('direct')).rejects.toThrow('route "direct" does not own Service "a-direct"');
    expect(h.kube.get<KubeObject>(Resources.KubeService, NS, 'direct')?.metadata.ownerReferences?.[0]).toMatchObject({
      kind: 'Route',
      name: 'direct',
    });
    expect(h.kube.get(Resources.KubeService, NS, 'b-direct')).toBeUndefined();
    expect(h.kube.get(Resources.KIngress, NS, 'direct')).toBeUndefined();
    expect(h.recorded).toEqual([
      'Normal Created Created placeholder service "direct"',
      'Warning InternalError route "direct" does not own Service "a-direct"',
    ]);
  });

  it('placeholder Services of removed tags are deleted; a labelled Service the Route does not control is left alone', async () => {
    await readyDirectRoute(h, [
      { configurationName: 'cfg', percent: 100 },
      { revisionName: 'cfg-00001', percent: 0, tag: 'old' },
    ]);
    expect(h.kube.get(Resources.KubeService, NS, 'old-direct')).toBeDefined();
    h.kube.seed(Resources.KubeService, {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'mine-direct', namespace: NS, labels: { 'serving.knative.dev/route': 'direct' } },
    });
    h.kube.edit<Route>(Resources.Route, NS, 'direct', (r) => (r.spec.traffic = [{ configurationName: 'cfg', percent: 100 }]));
    const o = ok(await h.pass('direct'));
    expect(o.placeholders).toBe('deleted old-direct');
    expect(h.kube.get(Resources.KubeService, NS, 'old-direct')).toBeUndefined();
    expect(h.kube.get(Resources.KubeService, NS, 'direct')).toBeDefined();
    expect(h.kube.get(Resources.KubeService, NS, 'mine-direct')).toBeDefined();
  });

  it('a load balancer with an IP: headless placeholder plus Endpoints owned by the Route (golden); gone again with the IP', async () => {
    await readyDirectRoute(h);
    h.ingressReady('direct', { ip: '10.0.0.9' });
    await h.pass('direct');
    const svc = h.kube.get<KubeObject & { spec: unknown }>(Resources.KubeService, NS, 'direct')!;
    expect(svc.spec).toEqual({
      type: 'ClusterIP',
      clusterIP: 'None',
      ports: [{ name: 'http2', appProtocol: 'kubernetes.io/h2c', port: 80, targetPort: 80 }],
    });
    const ep = h.kube.get<KubeObject & { subsets: unknown }>(Endpoints, NS, 'direct')!;
    expect(ep.subsets).toEqual([{ addresses: [{ ip: '10.0.0.9' }], ports: [{ name: 'http2', port: 80 }] }]);
    expect(ep.metadata).toMatchObject({
      labels: { 'serving.knative.dev/route': 'direct' },
      ownerReferences: [{ kind: 'Route', name: 'direct', controller: true, uid: h.route('direct').metadata.uid }],
    });

    // Back to a domain: headless → ExternalName is re-created (the API server refuses it in place); Endpoints deleted.
    h.ingressReady('direct', { domainInternal: 'gw.istio-system.svc.cluster.local' });
    h.kube.calls = [];
    const o = ok(await h.pass('direct'));
    expect(o.placeholders).toBe('updated direct');
    expect(h.kube.writes('delete').map((w) => w.id)).toEqual(['core/services/default/direct', 'core/endpoints/default/direct']);
    expect(h.kube.get<KubeObject & { spec: unknown }>(Resources.KubeService, NS, 'direct')!.spec).toEqual({
      type: 'ExternalName',
      externalName: 'gw.istio-system.svc.cluster.local',
      sessionAffinity: 'None',
      ports: [{ name: 'http2', appProtocol: 'kubernetes.io/h2c', port: 80, targetPort: 80 }],
    });
    expect(h.kube.get(Endpoints, NS, 'direct')).toBeUndefined();
  });

  it('foreign Endpoints with the name of a headless placeholder: NotOwned for the Endpoint', async () => {
    await readyDirectRoute(h);
    h.kube.seed(Endpoints, { apiVersion: 'v1', kind: 'Endpoints', metadata: { name: 'direct', namespace: NS } });
    h.ingressReady('direct', { ip: '10.0.0.9' });
    await expect(h.pass('direct')).rejects.toThrow('does not own Endpoints "direct"');
    expect(h.cond('direct', 'IngressReady')).toMatchObject({
      status: 'False',
      reason: 'NotOwned',
      message: 'There is an existing placeholder Endpoint "direct" that we do not own.',
    });
  });
});

describe('domain-template errors (ErrDomainName)', () => {
  it("Ready=False ErrorConfig with Knative's message, nothing programmed, the pass returns; a fixed config recovers", async () => {
    const h = harness({ 'domain-template': '{{.Name}}.{{index .Annotations "sub"}}.{{.Domain}}' });
    h.kube.seed(Resources.Configuration, configuration('cfg', 'cfg-00001'));
    h.kube.seed(Resources.Revision, revision('cfg-00001', 'cfg'));
    h.kube.seed(Resources.Route, route('direct', [{ configurationName: 'cfg', percent: 100 }]));
    const o = ok(await h.pass('direct'));
    expect(o).toMatchObject({ outcome: 'written', ready: 'False', reason: 'ErrorConfig', ingress: 'none' });
    expect(o.domainError).toMatch(/^invalid domain name "direct\.\.example\.com": url: Invalid value/u);
    const message = `domain name error: ${o.domainError!}`;
    expect(h.cond('direct', 'AllTrafficAssigned')).toMatchObject({ status: 'False', reason: 'ErrorConfig', message });
    expect(h.cond('direct', 'Ready')).toMatchObject({ status: 'False', reason: 'ErrorConfig', message });
    expect(h.kube.get(Resources.KIngress, NS, 'direct')).toBeUndefined();
    expect(h.kube.get(Resources.KubeService, NS, 'direct')).toBeUndefined();

    // Another pass with the same config changes nothing (it does not retry, it waits for a change).
    h.kube.calls = [];
    expect(ok(await h.pass('direct')).outcome).toBe('unchanged');
    expect(h.kube.writes()).toEqual([]);

    h.setNetwork({});
    await h.pass('direct');
    h.ingressReady('direct');
    expect(ok(await h.pass('direct'))).toMatchObject({ ready: 'True' });
    expect(h.route('direct').status?.url).toBe('http://direct.default.example.com');
  });

  it('a tag whose host is invalid under the template fails the same way', async () => {
    const h = harness({ 'domain-template': '{{.Name}}.{{.Namespace}}.{{.Domain}}', 'tag-template': '{{.Tag}}_{{.Name}}' });
    h.kube.seed(Resources.Configuration, configuration('cfg', 'cfg-00001'));
    h.kube.seed(Resources.Revision, revision('cfg-00001', 'cfg'));
    h.kube.seed(Resources.Route, route('direct', [{ configurationName: 'cfg', percent: 100, tag: 'v1' }]));
    const o = ok(await h.pass('direct'));
    expect(o).toMatchObject({ ready: 'False', reason: 'ErrorConfig' });
    expect(o.domainError).toContain('"v1_direct.default.example.com"');
  });
});

describe('removed fields reach the KIngress and placeholder Services', () => {
  it('an annotation and a label dropped from the Route leave the Ingress; the placeholder keeps them, as upstream unions them', async () => {
    const h = harness();
    h.kube.seed(Resources.Configuration, configuration('cfg', 'cfg-00001'));
    h.kube.seed(Resources.Revision, revision('cfg-00001', 'cfg'));
    h.kube.seed(
      Resources.Route,
      route('direct', [{ configurationName: 'cfg', percent: 100 }], { labels: { team: 'a' }, annotations: { note: 'x' } }),
    );
    await h.pass('direct');
    const ing = () => h.kube.get<Ingress>(Resources.KIngress, NS, 'direct')!;
    const svc = () => h.kube.get<KubeObject>(Resources.KubeService, NS, 'direct')!;
    expect(ing().metadata.annotations?.['note']).toBe('x');
    expect(svc().metadata.labels?.['team']).toBe('a');

    h.kube.edit<Route>(Resources.Route, NS, 'direct', (r) => {
      r.metadata.labels = {};
      r.metadata.annotations = {};
    });
    const o = ok(await h.pass('direct'));
    expect(o.ingress).toBe('updated');
    expect(ing().metadata.annotations?.['note']).toBeUndefined();
    expect(ing().metadata.labels?.['team']).toBeUndefined();
    // Knative's conformance suite (TestLabelPropagation, TestAnnotationPropagation) reads them on the placeholder
    // after the Service dropped them: upstream writes kmap.Union(live, desired).
    expect(o.placeholders).toBeUndefined();
    expect(svc().metadata.labels?.['team']).toBe('a');
    expect(svc().metadata.annotations?.['note']).toBe('x');
    expect(svc().metadata.labels?.['serving.knative.dev/route']).toBe('direct');
  });

  it('an edit to the Ingress spec is reverted, and a label someone else added is removed (upstream replaces them whole)', async () => {
    const h = harness();
    await readyDirectRoute(h);
    const before = h.kube.get<Ingress>(Resources.KIngress, NS, 'direct')!.spec;
    h.kube.edit<Ingress>(Resources.KIngress, NS, 'direct', (i) => {
      i.spec.rules = [];
      i.metadata.labels = { ...i.metadata.labels, extra: 'foreign' };
    });
    expect(ok(await h.pass('direct')).ingress).toBe('updated');
    const after = h.kube.get<Ingress>(Resources.KIngress, NS, 'direct')!;
    expect(after.spec).toEqual(before);
    expect(after.metadata.labels?.['extra']).toBeUndefined();
    expect(after.metadata.labels?.['serving.knative.dev/route']).toBe('direct');
  });

  it('regression (chaos run): a key someone adds inside a KIngress rule is reverted too (the spec must match exactly)', async () => {
    const h = harness();
    await readyDirectRoute(h);
    const before = h.kube.get<Ingress>(Resources.KIngress, NS, 'direct')!.spec;
    h.kube.edit<Ingress>(Resources.KIngress, NS, 'direct', (i) => {
      const rule = i.spec.rules![0]! as unknown as Record<string, unknown>;
      rule['hijacked'] = true;
    });
    expect(ok(await h.pass('direct')).ingress).toBe('updated');
    expect(h.kube.get<Ingress>(Resources.KIngress, NS, 'direct')!.spec).toEqual(before);
  });
});

describe('a KIngress of class istio is programmed in the Route’s own pass (ADR 0005)', () => {
  it('a key someone adds inside a VirtualService route is reverted by the next pass', async () => {
    const h = harness(ISTIO);
    h.kube.seed(Resources.Configuration, configuration('cfg', 'cfg-00001'));
    h.kube.seed(Resources.Revision, revision('cfg-00001', 'cfg'));
    h.kube.seed(Resources.Route, route('direct', [{ configurationName: 'cfg', percent: 100 }]));
    ok(await h.pass('direct'));
    type VS = KubeObject & { spec: { http: Record<string, unknown>[] } };
    const before = h.kube.get<VS>(Resources.VirtualService, NS, 'direct-ingress')!.spec;
    h.kube.edit<VS>(Resources.VirtualService, NS, 'direct-ingress', (vs) => void (vs.spec.http[0]!['rewrite'] = { authority: 'hijacked.invalid' }));
    ok(await h.pass('direct'));
    expect(h.kube.get<VS>(Resources.VirtualService, NS, 'direct-ingress')!.spec).toEqual(before);
  });

  it('one pass: KIngress, its VirtualServices and status, the Route Ready and its placeholder at the gateway; then nothing to write', async () => {
    const h = harness(ISTIO);
    h.kube.seed(Resources.Configuration, configuration('cfg', 'cfg-00001'));
    h.kube.seed(Resources.Revision, revision('cfg-00001', 'cfg'));
    h.kube.seed(Resources.Route, route('direct', [{ configurationName: 'cfg', percent: 100 }]));
    const o = ok(await h.pass('direct'));
    expect(o).toMatchObject({ ingress: 'created', ready: 'True' });
    const ing = h.kube.get<Ingress>(Resources.KIngress, NS, 'direct')!;
    expect(ing.status?.observedGeneration).toBe(ing.metadata.generation);
    expect(ing.status?.conditions?.find((c) => c.type === 'Ready')?.status).toBe('True');
    expect(h.kube.get(Resources.VirtualService, NS, 'direct-ingress')).toBeDefined();
    expect(h.kube.get(Resources.VirtualService, NS, 'direct-mesh')).toBeDefined();
    expect(h.cond('direct', 'IngressReady')?.status).toBe('True');
    // The load balancer the KIngress now reports reaches the placeholder in the same pass.
    expect(h.kube.get<KubeObject & { spec: unknown }>(Resources.KubeService, NS, 'direct')!.spec).toMatchObject({
      type: 'ExternalName',
      externalName: 'knative-local-gateway.istio-system.svc.cluster.local',
    });
    h.kube.calls = [];
    expect(ok(await h.pass('direct'))).toMatchObject({ outcome: 'unchanged', ingress: 'unchanged', ready: 'True' });
    expect(h.kube.writes()).toEqual([]);
  });

  it('a new placeholder is written once, at the load balancer, beside the VirtualServices (not first at its domain)', async () => {
    const h = harness(ISTIO);
    h.kube.seed(Resources.Configuration, configuration('cfg', 'cfg-00001'));
    h.kube.seed(Resources.Revision, revision('cfg-00001', 'cfg'));
    h.kube.seed(Resources.Route, route('direct', [{ configurationName: 'cfg', percent: 100 }]));
    const o = ok(await h.pass('direct'));
    expect(o.placeholders).toBe('created direct');
    expect(h.recorded).toContain('Normal Created Created placeholder service "direct"');
    const placeholderCalls = h.kube.calls.filter((c) => c.id.startsWith('core/services/'));
    // Read once (and the labelled list, for orphans), then one apply: at the gateway, after the VirtualServices.
    expect(placeholderCalls.map((c) => `${c.verb} ${c.name}`).sort()).toEqual(['apply direct', 'get direct', 'list ']);
    const apply = h.kube.calls.findIndex((c) => c.verb === 'apply' && c.id.startsWith('core/services/'));
    expect(apply).toBeGreaterThan(h.kube.calls.findIndex((c) => c.verb === 'apply' && c.kind === 'VirtualService'));
    expect((placeholderCalls.find((c) => c.verb === 'apply')?.body as { spec?: unknown }).spec).toMatchObject({
      type: 'ExternalName',
      externalName: 'knative-local-gateway.istio-system.svc.cluster.local',
    });
  });

  it('the Route’s status goes beside the KIngress’s, from the status about to be written, after its placeholder', async () => {
    // The KIngress's status write answers 50 ms late: a Route status written only after it would land after it.
    const h = harness(ISTIO, { delayMs: (verb, _name, kind) => (verb === 'status' && kind === 'Ingress' ? 50 : 0) });
    seedDirect(h);
    expect(ok(await h.pass('direct'))).toMatchObject({ ingress: 'created', ready: 'True' });
    const at = (verb: string, kind: string) => h.kube.calls.findIndex((c) => c.verb === verb && c.kind === kind);
    expect(at('status', 'Route')).toBeGreaterThanOrEqual(0);
    expect(at('status', 'Route')).toBeLessThan(at('status', 'Ingress'));
    // The placeholder, at the load balancer, before the Route says Ready (upstream's order).
    expect(at('apply', 'Service')).toBeLessThan(at('status', 'Route'));
    // The Route's status is the one the KIngress's readiness makes: Ready, its KIngress's too.
    expect(h.cond('direct', 'IngressReady')?.status).toBe('True');
    const ing = h.kube.get<Ingress>(Resources.KIngress, NS, 'direct')!;
    expect(ing.status?.conditions?.find((c) => c.type === 'Ready')?.status).toBe('True');
    h.kube.calls = [];
    expect(ok(await h.pass('direct'))).toMatchObject({ outcome: 'unchanged', ingress: 'unchanged', ready: 'True' });
    expect(h.kube.writes()).toEqual([]);
  });

  it('the labeler marks its Revision while the KIngress is programmed, not after the Route is', async () => {
    // The KIngress's apply answers 50 ms late: a mark made only after programming would land after it.
    const h = harness(ISTIO, { delayMs: (verb, name) => (verb === 'apply' && name === 'direct' ? 50 : 0) });
    seedDirect(h);
    expect(ok(await h.pass('direct')).ready).toBe('True');
    const at = (verb: string, kind: string) => h.kube.calls.findIndex((c) => c.verb === verb && c.kind === kind);
    expect(at('patch', 'Revision')).toBeGreaterThanOrEqual(0);
    expect(at('patch', 'Revision')).toBeLessThan(at('apply', 'Ingress'));
    expect(h.kube.get<Revision>(Resources.Revision, NS, 'cfg-00001')!.metadata.labels?.['serving.knative.dev/routingState']).toBe('active');
    // The Route's status comes after both.
    expect(at('status', 'Route')).toBeGreaterThan(Math.max(at('patch', 'Revision'), at('status', 'Ingress')));
  });

  it('in a Service’s status pass, reads what programming needs beside the Route itself; in its own pass, only to program', async () => {
    // The Route's read answers 50 ms late: the KIngress, its VirtualServices and the placeholder are asked for meanwhile.
    const h = harness(ISTIO, { delayMs: (verb, name) => (verb === 'get' && name === 'direct' ? 50 : 0) });
    seedDirect(h);
    expect(ok(await h.statusPass('direct')).ready).toBe('True');
    const first = (kind: string, name: string) => h.kube.calls.findIndex((c) => c.verb === 'get' && c.kind === kind && c.name === name);
    expect(first('VirtualService', 'direct-ingress')).toBeGreaterThanOrEqual(0);
    expect(first('VirtualService', 'direct-ingress')).toBeLessThan(first('Route', 'direct'));
    expect(first('Configuration', 'cfg')).toBeGreaterThan(first('Route', 'direct'));
    // Each read once: the pass reads nothing again for its programming.
    for (const [kind, name] of [
      ['Ingress', 'direct'],
      ['Service', 'direct'],
      ['VirtualService', 'direct-mesh'],
    ] as const) {
      expect(h.kube.calls.filter((c) => c.verb === 'get' && c.kind === kind && c.name === name)).toHaveLength(1);
      expect(first(kind, name)).toBeLessThan(first('Route', 'direct'));
    }
    // A Route's own pass that programs nothing (no ready Revision yet) reads none of it.
    h.kube.seed(Resources.Configuration, configuration('fresh', undefined, 'fresh-00001'));
    h.kube.seed(Resources.Route, route('first', [{ configurationName: 'fresh', percent: 100 }]));
    h.kube.calls = [];
    expect(ok(await h.pass('first')).ready).not.toBe('True');
    expect(h.kube.calls.filter((c) => ['Ingress', 'VirtualService', 'Service'].includes(c.kind))).toEqual([]);
  });

  it('a pass that fails while its mark is in flight returns only once the mark has landed', async () => {
    // The mark answers 50 ms late; the KIngress's apply is refused at once.
    const h = harness(ISTIO, { delayMs: (verb) => (verb === 'mergePatch' ? 50 : 0) });
    seedDirect(h);
    h.kube.failNext('apply', Resources.KIngress, refused(500, 'InternalError', 'etcd timeout'));
    await expect(h.pass('direct')).rejects.toThrow('etcd timeout');
    const marks = h.kube.calls.filter((c) => c.verb === 'patch' && c.kind === 'Revision');
    expect(marks).toHaveLength(1);
    expect(h.cond('direct', 'Ready')?.status).not.toBe('True');
  });

  it('with readiness probing on, the placeholder is created at its domain before the KIngress, as upstream', async () => {
    const h = harness(ISTIO);
    h.setNetwork({ ...ISTIO, 'ingress-readiness-probing': 'enabled' });
    h.kube.seed(Resources.Configuration, configuration('cfg', 'cfg-00001'));
    h.kube.seed(Resources.Revision, revision('cfg-00001', 'cfg'));
    h.kube.seed(Resources.Route, route('direct', [{ configurationName: 'cfg', percent: 100 }]));
    await h.pass('direct').catch(() => undefined);
    const first = h.kube.calls.find((c) => c.verb === 'apply' && c.id.startsWith('core/services/'));
    expect((first?.body as { spec?: { externalName?: string } }).spec?.externalName).toBe('direct.default.example.com');
    expect(h.kube.calls.indexOf(first!)).toBeLessThan(h.kube.calls.findIndex((c) => c.verb === 'apply' && c.kind === 'Ingress'));
  });

  it('a Route settling for the first time takes itself off what it no longer references; settled again, it lists nothing', async () => {
    const h = harness(ISTIO);
    seedOldRouting(h);
    expect(ok(await h.pass('direct')).ready).toBe('True');
    // The clear's lists were read while the KIngress was programmed, before its status was written.
    const at = (verb: string, kind: string) => h.kube.calls.findIndex((c) => c.verb === verb && c.kind === kind);
    expect(at('list', 'Revision')).toBeGreaterThanOrEqual(0);
    expect(at('list', 'Revision')).toBeLessThan(at('status', 'Ingress'));
    expect(h.annotation(Resources.Configuration, 'old')).toBe('keep');
    expect(h.annotation(Resources.Revision, 'old-00001')).toBeUndefined();
    expect(h.kube.get<Revision>(Resources.Revision, NS, 'old-00001')?.metadata.labels?.['serving.knative.dev/routingState']).toBe('reserve');
    expect(h.annotation(Resources.Revision, 'cfg-00001')).toBe('direct');
    expect(h.annotation(Resources.Configuration, 'cfg')).toBe('direct');
    h.kube.calls = [];
    ok(await h.pass('direct'));
    expect(h.kube.calls.filter((c) => c.verb === 'list' && (c.kind === 'Revision' || c.kind === 'Configuration'))).toEqual([]);
  });
});

describe('labeler: a Revision the Route stops routing to becomes reserve (revision GC depends on it)', () => {
  it('istio class: the pass that moves traffic to the new latest ready Revision clears the old one', async () => {
    const h = harness(ISTIO);
    h.kube.seed(Resources.Configuration, configuration('cfg', 'cfg-00001'));
    h.kube.seed(Resources.Revision, revision('cfg-00001', 'cfg'));
    h.kube.seed(Resources.Route, route('direct', [{ configurationName: 'cfg', percent: 100, latestRevision: true }]));
    await h.pass('direct');
    expect(ok(await h.pass('direct')).ready).toBe('True');
    expect(h.kube.get<Revision>(Resources.Revision, NS, 'cfg-00001')?.metadata.labels?.['serving.knative.dev/routingState']).toBe('active');
    h.kube.seed(Resources.Revision, revision('cfg-00002', 'cfg'));
    h.kube.edit<Configuration>(
      Resources.Configuration,
      NS,
      'cfg',
      (c) => (c.status = { ...c.status, latestReadyRevisionName: 'cfg-00002', latestCreatedRevisionName: 'cfg-00002' }),
    );
    const moved = ok(await h.pass('direct'));
    expect(moved.ready).toBe('True');
    expect(h.route('direct').status?.traffic?.map((t) => t.revisionName)).toEqual(['cfg-00002']);
    expect(h.kube.get<Revision>(Resources.Revision, NS, 'cfg-00001')?.metadata.labels?.['serving.knative.dev/routingState']).toBe('reserve');
  });
});

describe('labeler: a new Revision its Configuration marked with the Route, which the traffic does not name', () => {
  it('is cleared by the next settled pass, though the Route names the same targets: it becomes reserve', async () => {
    const h = harness(ISTIO);
    h.kube.seed(Resources.Configuration, configuration('cfg', 'cfg-00001'));
    h.kube.seed(Resources.Revision, revision('cfg-00001', 'cfg'));
    h.kube.seed(Resources.Route, route('pinned', [{ revisionName: 'cfg-00001', percent: 100 }]));
    await h.pass('pinned');
    expect(ok(await h.pass('pinned')).ready).toBe('True');
    // The Configuration creates cfg-00002 and copies its routes annotation onto it, active (upstream's MakeRevision).
    const born = revision('cfg-00002', 'cfg');
    born.metadata.labels = { ...born.metadata.labels, 'serving.knative.dev/routingState': 'active' };
    born.metadata.annotations = { ...born.metadata.annotations, 'serving.knative.dev/routes': 'pinned' };
    h.kube.seed(Resources.Revision, born);
    h.kube.edit<Configuration>(Resources.Configuration, NS, 'cfg', (c) => (c.status = { ...c.status, latestCreatedRevisionName: 'cfg-00002' }));
    expect(ok(await h.pass('pinned')).ready).toBe('True');
    expect(h.route('pinned').status?.traffic?.map((t) => t.revisionName)).toEqual(['cfg-00001']);
    expect(h.kube.get<Revision>(Resources.Revision, NS, 'cfg-00002')?.metadata.labels?.['serving.knative.dev/routingState']).toBe('reserve');
    expect(h.annotation(Resources.Revision, 'cfg-00002')).toBeUndefined();
    expect(h.kube.get<Revision>(Resources.Revision, NS, 'cfg-00001')?.metadata.labels?.['serving.knative.dev/routingState']).toBe('active');
  });
});

describe('labeler: a new Revision superseded by a newer one before the Route sent it traffic', () => {
  it('is cleared while the newer one rolls out, though the Route then names the same targets as before', async () => {
    const h = harness(ISTIO);
    const born = (name: string) => {
      // The Configuration creates it and copies its routes annotation onto it, active (upstream's MakeRevision).
      const rev = revision(name, 'cfg');
      rev.metadata.labels = { ...rev.metadata.labels, 'serving.knative.dev/routingState': 'active' };
      rev.metadata.annotations = { ...rev.metadata.annotations, 'serving.knative.dev/routes': 'latest' };
      h.kube.seed(Resources.Revision, rev);
      h.kube.edit<Configuration>(Resources.Configuration, NS, 'cfg', (c) => (c.status = { ...c.status, latestCreatedRevisionName: name }));
    };
    h.kube.seed(Resources.Configuration, configuration('cfg', 'cfg-00001'));
    h.kube.seed(Resources.Revision, revision('cfg-00001', 'cfg'));
    h.kube.seed(Resources.Route, route('latest', [{ configurationName: 'cfg', percent: 100, latestRevision: true }]));
    await h.pass('latest');
    expect(ok(await h.pass('latest')).ready).toBe('True');
    // cfg-00002 is created, and before it is ready cfg-00003 (two template changes in a row).
    born('cfg-00002');
    expect(ok(await h.pass('latest')).ready).toBe('True');
    born('cfg-00003');
    expect(ok(await h.pass('latest')).ready).toBe('True');
    expect(h.route('latest').status?.traffic?.map((t) => t.revisionName)).toEqual(['cfg-00001']);
    // cfg-00002 will never serve: neither the Route's status nor its spec names it.
    expect(h.kube.get<Revision>(Resources.Revision, NS, 'cfg-00002')?.metadata.labels?.['serving.knative.dev/routingState']).toBe('reserve');
    expect(h.annotation(Resources.Revision, 'cfg-00002')).toBeUndefined();
    expect(h.kube.get<Revision>(Resources.Revision, NS, 'cfg-00003')?.metadata.labels?.['serving.knative.dev/routingState']).toBe('active');
  });
});

describe('a reserve Revision scaled to zero gets traffic only once its pods are up (ADR 0018)', () => {
  const setActive = (h: H, name: string, status: Condition['status'], reason?: string) =>
    h.kube.edit<Revision>(Resources.Revision, NS, name, (r) => {
      r.status = {
        ...r.status,
        conditions: [...(r.status?.conditions ?? []).filter((c) => c.type !== 'Active'), { type: 'Active', status, ...(reason ? { reason } : {}) }],
      };
    });

  /** A Route settled on cfg-00002, both Revisions Active True; then cfg-00001 labelled reserve. */
  async function settledThenReserve(): Promise<H> {
    const h = harness(ISTIO);
    h.kube.seed(Resources.Configuration, configuration('cfg', 'cfg-00002'));
    h.kube.seed(Resources.Revision, revision('cfg-00001', 'cfg'));
    h.kube.seed(Resources.Revision, revision('cfg-00002', 'cfg'));
    setActive(h, 'cfg-00001', 'True');
    setActive(h, 'cfg-00002', 'True');
    h.kube.seed(Resources.Route, route('direct', [{ configurationName: 'cfg', percent: 100, latestRevision: true }]));
    await h.pass('direct');
    expect(ok(await h.pass('direct')).ready).toBe('True');
    h.kube.edit<Revision>(Resources.Revision, NS, 'cfg-00001', (r) => void (r.metadata.labels!['serving.knative.dev/routingState'] = 'reserve'));
    return h;
  }

  /** The Route's spec splits half the traffic back to cfg-00001. */
  const splitBack = (h: H) =>
    h.kube.edit<Route>(Resources.Route, NS, 'direct', (r) => {
      r.metadata.generation = 2;
      r.spec.traffic = [
        { configurationName: 'cfg', percent: 50, latestRevision: true },
        { revisionName: 'cfg-00001', percent: 50, latestRevision: false },
      ];
    });

  it('the Route keeps its split and marks the Revision active; once its pods are up the split is programmed', async () => {
    const h = await settledThenReserve();
    // cfg-00001 is reserve and scaled to zero; a split sends it half the traffic.
    setActive(h, 'cfg-00001', 'False', 'NoTraffic');
    const ingressBefore = h.kube.get<Ingress>(Resources.KIngress, NS, 'direct')!.spec;
    splitBack(h);
    const held = ok(await h.pass('direct'));
    expect(held.ready).toBe('Unknown');
    expect(h.cond('direct', 'AllTrafficAssigned')).toMatchObject({
      status: 'Unknown',
      reason: 'RevisionMissing',
      message: 'Revision "cfg-00001" is not yet ready.',
    });
    expect(h.route('direct').status?.traffic?.map((t) => [t.revisionName, t.percent])).toEqual([['cfg-00002', 100]]);
    expect(h.kube.get<Ingress>(Resources.KIngress, NS, 'direct')!.spec).toEqual(ingressBefore);
    expect(h.kube.get<Revision>(Resources.Revision, NS, 'cfg-00001')?.metadata.labels?.['serving.knative.dev/routingState']).toBe('active');
    // Scaling back up: still held.
    setActive(h, 'cfg-00001', 'Unknown', 'Queued');
    expect(ok(await h.pass('direct')).ready).toBe('Unknown');
    // Its pods are up: the split is programmed and the Route Ready.
    setActive(h, 'cfg-00001', 'True');
    expect(ok(await h.pass('direct')).ready).toBe('True');
    expect(h.route('direct').status?.traffic?.map((t) => [t.revisionName, t.percent])).toEqual([
      ['cfg-00002', 50],
      ['cfg-00001', 50],
    ]);
  });

  it('a Revision labelled reserve whose Active is still True (its scale-down not reported yet) is held and relabelled; the pass asks for a look again', async () => {
    const h = await settledThenReserve();
    splitBack(h);
    const held = ok(await h.pass('direct'));
    expect(held).toMatchObject({ ready: 'Unknown', relabelled: ['cfg-00001'] });
    expect(h.route('direct').status?.traffic?.map((t) => [t.revisionName, t.percent])).toEqual([['cfg-00002', 100]]);
    expect(h.kube.get<Revision>(Resources.Revision, NS, 'cfg-00001')?.metadata.labels?.['serving.knative.dev/routingState']).toBe('active');
    // The look again: active and Active True (its pass saw the relabel before scaling down) — the split goes out.
    const next = ok(await h.pass('direct'));
    expect(next.ready).toBe('True');
    expect(next).not.toHaveProperty('relabelled');
    expect(h.route('direct').status?.traffic?.map((t) => [t.revisionName, t.percent])).toEqual([
      ['cfg-00002', 50],
      ['cfg-00001', 50],
    ]);
  });
});

describe('a KIngress of another class: its own controller writes its status, the Route mirrors it', () => {
  const TRAEFIK = 'traefik.ingress.networking.knative.dev';
  const lb = { domainInternal: 'traefik.traefik.svc.cluster.local' };
  const condition = (type: string, status: Condition['status'], reason?: string, message?: string): Condition => ({
    type,
    status,
    lastTransitionTime: '2026-11-23T09:30:00Z',
    ...(reason ? { reason, message } : {}),
  });

  /** Tidal's default class configured, the Route asking for Traefik's: nothing programmed yet. */
  function traefikRoute() {
    const h = harness(ISTIO);
    h.kube.seed(Resources.Configuration, configuration('cfg', 'cfg-00001'));
    h.kube.seed(Resources.Revision, revision('cfg-00001', 'cfg'));
    h.kube.seed(
      Resources.Route,
      route('direct', [{ configurationName: 'cfg', percent: 100 }], { annotations: { 'networking.knative.dev/ingress.class': TRAEFIK } }),
    );
    return h;
  }

  /** What Traefik's Knative provider writes: the KIngress's status, for the generation it has seen. */
  function reports(h: H, conditions: Condition[], balancers?: { domainInternal: string }) {
    h.kube.edit<Ingress>(Resources.KIngress, NS, 'direct', (i) => {
      i.status = {
        observedGeneration: i.metadata.generation ?? 1,
        conditions,
        ...(balancers ? { publicLoadBalancer: { ingress: [balancers] }, privateLoadBalancer: { ingress: [balancers] } } : {}),
      };
    });
    return h.kube.get<Ingress>(Resources.KIngress, NS, 'direct')!.status;
  }

  const placeholder = (h: H) => h.kube.get<KubeObject & { spec: { type: string; externalName?: string } }>(Resources.KubeService, NS, 'direct')!.spec;
  const ingressStatusWrites = (h: H) => h.kube.writes('status').filter((w) => w.kind === 'Ingress');

  it('while the KIngress reports nothing or Unknown the Route is not Ready, with its URL and address; Tidal writes none of its status', async () => {
    const h = traefikRoute();
    const first = ok(await h.pass('direct'));
    expect(first).toMatchObject({ ingress: 'created', ready: 'Unknown' });
    const ing = h.kube.get<Ingress>(Resources.KIngress, NS, 'direct')!;
    expect(ing.metadata.annotations?.['networking.knative.dev/ingress.class']).toBe(TRAEFIK);
    expect(ing.status).toBeUndefined();
    expect(h.kube.list(Resources.VirtualService, NS)).toEqual([]);
    expect(h.cond('direct', 'IngressReady')).toMatchObject({ status: 'Unknown', reason: 'IngressNotConfigured' });
    expect(h.cond('direct', 'Ready')).toMatchObject({ status: 'Unknown', reason: 'IngressNotConfigured' });
    expect(h.cond('direct', 'AllTrafficAssigned')?.status).toBe('True');
    expect(h.route('direct').status).toMatchObject({
      url: 'http://direct.default.example.com',
      address: { url: 'http://direct.default.svc.cluster.local' },
    });
    expect(placeholder(h)).toMatchObject({ type: 'ExternalName', externalName: 'direct.default.example.com' });

    // Its controller has configured the network but waits for its load balancer: Unknown, with its reason.
    const waiting = reports(h, [
      condition('LoadBalancerReady', 'Unknown', 'Uninitialized', 'Waiting for load balancer to be ready'),
      condition('NetworkConfigured', 'True'),
      condition('Ready', 'Unknown', 'Uninitialized', 'Waiting for load balancer to be ready'),
    ]);
    expect(ok(await h.pass('direct')).ready).toBe('Unknown');
    expect(h.cond('direct', 'IngressReady')).toMatchObject({
      status: 'Unknown',
      reason: 'Uninitialized',
      message: 'Waiting for load balancer to be ready',
    });
    expect(h.cond('direct', 'Ready')).toMatchObject({ status: 'Unknown', reason: 'Uninitialized' });
    expect(h.kube.get<Ingress>(Resources.KIngress, NS, 'direct')!.status).toEqual(waiting);
    expect(placeholder(h)).toMatchObject({ externalName: 'direct.default.example.com' });
    expect(ingressStatusWrites(h)).toEqual([]);
    expect(h.kube.list(Resources.VirtualService, NS)).toEqual([]);
  });

  it('turns Ready once the KIngress reports Ready, its placeholder at the load balancer the KIngress names', async () => {
    const h = traefikRoute();
    await h.pass('direct');
    const ready = reports(h, [condition('LoadBalancerReady', 'True'), condition('NetworkConfigured', 'True'), condition('Ready', 'True')], lb);
    expect(ok(await h.pass('direct')).ready).toBe('True');
    expect(h.cond('direct', 'IngressReady')?.status).toBe('True');
    expect(h.cond('direct', 'Ready')?.status).toBe('True');
    expect(placeholder(h)).toMatchObject({ type: 'ExternalName', externalName: 'traefik.traefik.svc.cluster.local' });
    expect(h.kube.get<Ingress>(Resources.KIngress, NS, 'direct')!.status).toEqual(ready);
    expect(ingressStatusWrites(h)).toEqual([]);
    expect(h.kube.list(Resources.VirtualService, NS)).toEqual([]);
  });

  it('a new generation is not Ready on the status of the old one; Ready again once the controller reports it', async () => {
    const h = traefikRoute();
    await h.pass('direct');
    reports(h, [condition('Ready', 'True')], lb);
    expect(ok(await h.pass('direct')).ready).toBe('True');
    // A tag changes the KIngress's rules: its generation moves on, its status still speaks of the one before.
    h.kube.edit<Route>(Resources.Route, NS, 'direct', (r) => {
      r.spec.traffic = [
        { configurationName: 'cfg', percent: 100 },
        { revisionName: 'cfg-00001', percent: 0, tag: 'old' },
      ];
    });
    expect(ok(await h.pass('direct')).ready).toBe('Unknown');
    const ing = h.kube.get<Ingress>(Resources.KIngress, NS, 'direct')!;
    expect(ing.metadata.generation).toBe(2);
    expect(ing.status?.observedGeneration).toBe(1);
    expect(h.cond('direct', 'IngressReady')).toMatchObject({ status: 'Unknown', reason: 'IngressNotConfigured' });
    expect(h.cond('direct', 'Ready')?.status).toBe('Unknown');
    reports(h, [condition('Ready', 'True')], lb);
    expect(ok(await h.pass('direct')).ready).toBe('True');
    expect(ingressStatusWrites(h)).toEqual([]);
  });

  it('a KIngress its controller fails: the Route is Ready=False with the same reason and message', async () => {
    const h = traefikRoute();
    await h.pass('direct');
    reports(h, [
      condition('NetworkConfigured', 'False', 'ConfigError', 'no entry point named web'),
      condition('Ready', 'False', 'ConfigError', 'no entry point named web'),
    ]);
    expect(ok(await h.pass('direct'))).toMatchObject({ ready: 'False', reason: 'ConfigError' });
    expect(h.cond('direct', 'IngressReady')).toMatchObject({ status: 'False', reason: 'ConfigError', message: 'no entry point named web' });
    expect(ingressStatusWrites(h)).toEqual([]);
  });
});
