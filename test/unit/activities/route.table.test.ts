// The Route's pass as a table, after Knative's pkg/reconciler/route/table_test.go: each row seeds the cluster, says
// what happened before, and lists every write, status and Event the pass makes. The KIngress is of another class
// (contour) unless a row says otherwise, so `ingressReports` plays that class's controller as Knative's rows do with
// the Ingress status they seed; rows of Tidal's own class (istio) show its programming in the same pass (ADR 0005).
// Time is fake: the clock stands at NOW unless a row moves it.
//
// Knative's rows left out, and why:
// - "bad workqueue key": a Route's workflow is started with its key; no queue hands it a bad one.
// - The Certificate and auto-TLS rows (per-domain and wildcard Certificates, their readiness, HTTP-01 challenges):
//   Tidal's external-domain TLS is covered by route-tls.test.ts.
// - The rows on `lastPinned` and on finding a KIngress under an older naming: Tidal has neither; its labeler keeps
//   the routes annotation and routingState, which the labeler rows here cover.
// - The rows that make the status update fail: a failed status write fails Tidal's step, which is retried
//   (status.test.ts covers the write itself).
//
// Where Tidal's rows differ from Knative's: a pass that fails writes no status and records no Event of its failure
// (the step is retried; the failure is in the workflow's history); the first pass adds the finalizer with a merge
// patch and no Event; a KIngress someone else controls is left alone and named in the outcome.
import { afterEach, beforeEach, describe, expect, vi } from 'vitest';
import pino from 'pino';
import type { ActivityDeps, ConfigSource } from '../../../activities/deps.js';
import type { EventRecorder } from '../../../activities/events.js';
import { observing } from '../../../activities/observe.js';
import { createRouteActivities, RouteFinalizer, type RouteOptions, type RouteOutcome } from '../../../activities/route.js';
import { parseDomainConfig } from '../../../api/config/domain.js';
import { defaultFeaturesConfig, parseFeatures } from '../../../api/config/features.js';
import { parseNetworkConfig } from '../../../api/config/network.js';
import { Resources, type ResourceType } from '../../../api/kinds.js';
import type { KubeObject } from '../../../api/meta.js';
import type { Ingress } from '../../../api/networking.js';
import type { Configuration, Route } from '../../../api/serving.js';
import { revisionConfig } from '../../fixtures/revision.js';
import {
  cfg,
  clusterLocal,
  configFailed,
  configNotReady,
  deleted,
  foreignService,
  rev,
  revFailed,
  revNotReady,
  route,
  routedBy,
  withConfigAnnotations,
  withConfigTarget,
  withLatest,
  withoutFinalizer,
  withRevTarget,
  withRouteAnnotations,
  withTraffic,
  type Option,
} from '../../fixtures/routing.js';
import { KubeFake, refused } from './kube-fake.js';
import { conditionsOf, tableTest, type Row, type TableContext, type Want } from './table.js';

const NS = 'default';
const NOW = Date.parse('2026-11-23T10:00:00.000Z');
const CONTOUR = 'contour.ingress.networking.knative.dev';
const ISTIO = 'istio.ingress.networking.knative.dev';
const Endpoints: ResourceType = { group: '', version: 'v1', kind: 'Endpoints', plural: 'endpoints', namespaced: true };

function valueOf<T>(p: { ok: true; value: T } | { ok: false; error: string }): T {
  if (!p.ok) throw new Error(p.error);
  return p.value;
}

// --- What the pass must write. ---

/**
 * The Route's status as written: each condition `Type: Status [Reason[: message]]` (CertificateProvisioned, when
 * not given, is TLS off), and the other fields it must hold. A pass that programs nothing leaves CertificateProvisioned
 * Unknown (`NOTHING_PROGRAMMED`).
 */
function routeStatus(name: string, conditions: Record<string, string>, fields: Record<string, unknown> = {}): Want {
  const all: Record<string, string> = { CertificateProvisioned: 'True TLSNotEnabled: external-domain-tls is not enabled', ...conditions };
  const conds = conditionsOf(all);
  return [`Route ${name}`, { status: { conditions: conds, ...fields } }];
}

const IngressNotConfigured = 'Unknown IngressNotConfigured: Ingress has not yet been reconciled.';
const NOTHING_PROGRAMMED = { CertificateProvisioned: 'Unknown', IngressReady: IngressNotConfigured };
const url = (host: string) => `http://${host}`;
const address = (name: string) => ({ url: `http://${name}.${NS}.svc.cluster.local` });

/** A placeholder Service pointing at `externalName`. */
const placeholder = (name: string, externalName: string): Want => [`Service ${name}`, { spec: { type: 'ExternalName', externalName } }];

/** The Route's routes annotation (and, for a Revision, routingState active) as the labeler marks a target. */
const marked = (kind: 'Configuration' | 'Revision', name: string, routes = 'becomes-ready'): Want => [
  `${kind} ${name}`,
  {
    metadata: {
      annotations: { 'serving.knative.dev/routes': routes },
      ...(kind === 'Revision' ? { labels: { 'serving.knative.dev/routingState': 'active' } } : {}),
    },
  },
];

// --- The table's context. ---

interface RouteContext extends TableContext {
  setNetwork(data: Record<string, string>): void;
  setDomain(data: Record<string, string>): void;
  /** What the KIngress's own controller (another class) writes: its status for its generation. */
  ingressReports(name: string, status: 'True' | 'Unknown' | 'False', lb?: { ip?: string; domainInternal?: string }, reason?: string): void;
}

interface RouteRow extends Row<RouteContext> {
  /** config-network, on top of the ingress class (contour unless given). */
  network?: Record<string, string>;
  features?: Record<string, string>;
  options?: RouteOptions;
}

const LB = { domainInternal: 'lb.contour.svc.cluster.local' };
const pass = (c: RouteContext) => c.reconcile();
const reports =
  (status: 'True' | 'Unknown' | 'False', lb?: { ip?: string; domainInternal?: string }, reason?: string, name = 'becomes-ready') =>
  (c: RouteContext) =>
    c.ingressReports(name, status, lb, reason);
const edit =
  <T extends KubeObject>(type: ResourceType, name: string, fn: (o: T) => void) =>
  (c: RouteContext) =>
    c.kube.edit<T>(type, NS, name, fn);
const outcome = (want: Partial<Extract<RouteOutcome, { ingress: unknown }>> | { outcome: 'gone' }) => (_c: RouteContext, got: unknown) =>
  expect(got).toMatchObject(want);

function setup(row: RouteRow): RouteContext {
  const kube = new KubeFake();
  const events: string[] = [];
  const recorder: EventRecorder = { record: async (_o, type, reason, message) => void events.push(`${type} ${reason} ${message}`) };
  const network = (data: Record<string, string>) => valueOf(parseNetworkConfig({ 'ingress-class': CONTOUR, ...data }));
  let net = network(row.network ?? {});
  let dom = valueOf(parseDomainConfig({ 'example.com': '' }));
  const features = row.features ? valueOf(parseFeatures(row.features)) : defaultFeaturesConfig();
  const config: ConfigSource = {
    revisionConfig: () => revisionConfig(),
    networkConfig: () => net,
    domainConfig: () => dom,
    featuresConfig: () => features,
    systemNamespace: 'knative-serving',
  };
  const deps = { kube: kube.client(), events: recorder, config, log: pino({ level: 'silent' }) } as unknown as ActivityDeps;
  const acts = createRouteActivities(deps);
  const key = { namespace: NS, name: 'becomes-ready' };
  return {
    kube,
    events,
    reconcile: () => observing(() => acts.reconcileRoute(key, row.options ?? {})),
    setNetwork: (data) => (net = network(data)),
    setDomain: (data) => (dom = valueOf(parseDomainConfig(data))),
    ingressReports: (name, status, lb, reason) =>
      kube.edit<Ingress>(Resources.KIngress, NS, name, (i) => {
        i.status = {
          observedGeneration: i.metadata.generation ?? 1,
          conditions: [{ type: 'Ready', status, ...(reason ? { reason, message: `${reason} happened` } : {}) }],
          ...(lb ? { publicLoadBalancer: { ingress: [lb] }, privateLoadBalancer: { ingress: [lb] } } : {}),
        };
      }),
  };
}

/** `config` at its Revision `config-00001`, Ready: the objects of most rows. */
const simple = (...opts: Option<Route>[]): KubeObject[] => [
  route('becomes-ready', withConfigTarget('config'), ...opts),
  cfg('config'),
  rev('config-00001', 'config'),
];
const HOST = 'becomes-ready.default.example.com';
const TRAFFIC = [{ revisionName: 'config-00001', latestRevision: true, percent: 100 }];
const readyRoute = (fields: Record<string, unknown> = {}) =>
  routeStatus('becomes-ready', { AllTrafficAssigned: 'True', IngressReady: 'True', Ready: 'True' }, fields);
const created = (what: string) => `Normal Created Created ${what}`;
/** The Ingress's rules: the hosts of each, and the split of its first path. */
const rules = (...r: { hosts: string[]; splits: { serviceName: string; percent: number }[] }[]) => ({
  spec: { rules: r.map(({ hosts, splits }) => ({ hosts, http: { paths: [{ splits: splits.map((x) => ({ ...x, serviceNamespace: NS })) }] } })) },
});
const localHosts = (name: string) => [`${name}.${NS}`, `${name}.${NS}.svc`, `${name}.${NS}.svc.cluster.local`];
/** The Ingress of the public Route `becomes-ready`: the same split under its cluster-local hosts and its external host. */
const publicSplit = (...splits: { serviceName: string; percent: number }[]) =>
  rules({ hosts: localHosts('becomes-ready'), splits }, { hosts: [HOST], splits });
/** A Route brought to Ready by a pass and its KIngress's controller, then settled by another pass. */
const settled = [pass, reports('True', LB), pass];
/** config-00002 created and Ready: `config`'s latest ready Revision moves on. */
const newRevision = (c: RouteContext) => {
  c.kube.seed(Resources.Revision, rev('config-00002', 'config'));
  c.kube.edit<Configuration>(Resources.Configuration, NS, 'config', (x) => withLatest('config-00002')(x));
};
const at = (seconds: number) => () => vi.setSystemTime(NOW + seconds * 1000);
const ROLLOUT = { 'serving.knative.dev/rollout-duration': '20s' };

const rows: RouteRow[] = [
  {
    name: 'key not found',
    objects: [],
    then: outcome({ outcome: 'gone' }),
  },
  {
    name: 'first reconcile adds the finalizer',
    objects: simple(withoutFinalizer),
    wantPatches: [
      ['Route becomes-ready', { metadata: { finalizers: [RouteFinalizer] } }],
      marked('Configuration', 'config'),
      marked('Revision', 'config-00001'),
    ],
    wantCreates: ['Service becomes-ready', 'Ingress becomes-ready'],
    wantStatusUpdates: [
      routeStatus('becomes-ready', { AllTrafficAssigned: 'True', IngressReady: IngressNotConfigured, Ready: IngressNotConfigured }),
    ],
    wantEvents: [created('placeholder service "becomes-ready"'), created('Ingress "becomes-ready"')],
  },
  {
    name: 'configuration not yet ready',
    objects: [route('becomes-ready', withConfigTarget('config')), cfg('config', configNotReady), rev('config-00001', 'config', revNotReady)],
    // The labeler marks the Configuration and its latest created Revision all the same (a latestRevision target).
    wantPatches: [marked('Configuration', 'config'), marked('Revision', 'config-00001')],
    wantStatusUpdates: [
      routeStatus('becomes-ready', {
        AllTrafficAssigned: 'Unknown RevisionMissing: Configuration "config" is waiting for a Revision to become ready.',
        ...NOTHING_PROGRAMMED,
        Ready: 'Unknown RevisionMissing: Configuration "config" is waiting for a Revision to become ready.',
      }),
    ],
    then: outcome({ ingress: 'none', ready: 'Unknown' }),
  },
  {
    name: 'configuration permanently failed',
    objects: [route('becomes-ready', withConfigTarget('config')), cfg('config', configFailed), rev('config-00001', 'config', revFailed)],
    wantPatches: [marked('Configuration', 'config'), marked('Revision', 'config-00001')],
    wantStatusUpdates: [
      routeStatus('becomes-ready', {
        AllTrafficAssigned: 'False RevisionMissing: Configuration "config" does not have any ready Revision.',
        ...NOTHING_PROGRAMMED,
        Ready: 'False RevisionMissing: Configuration "config" does not have any ready Revision.',
      }),
    ],
  },
  {
    name: 'simple route becomes ready, ingress unknown',
    objects: simple(),
    wantCreates: [
      placeholder('becomes-ready', HOST),
      [
        'Ingress becomes-ready',
        {
          metadata: { annotations: { 'networking.knative.dev/ingress.class': CONTOUR } },
          ...publicSplit({ serviceName: 'config-00001', percent: 100 }),
        },
      ],
    ],
    wantPatches: [marked('Configuration', 'config'), marked('Revision', 'config-00001')],
    wantStatusUpdates: [
      routeStatus(
        'becomes-ready',
        { AllTrafficAssigned: 'True', IngressReady: IngressNotConfigured, Ready: IngressNotConfigured },
        { url: url(HOST), address: address('becomes-ready'), traffic: TRAFFIC },
      ),
    ],
    wantEvents: [created('placeholder service "becomes-ready"'), created('Ingress "becomes-ready"')],
    then: outcome({ outcome: 'written', ingress: 'created', ready: 'Unknown', placeholders: 'created becomes-ready' }),
  },
  {
    name: 'custom ingress route becomes ready, ingress unknown',
    objects: simple(withRouteAnnotations({ 'networking.knative.dev/ingress.class': 'traefik.ingress.networking.knative.dev' })),
    // Tidal's own class is configured, the Route asks for another: nothing of Tidal's programming runs.
    network: { 'ingress-class': ISTIO },
    wantCreates: [
      placeholder('becomes-ready', HOST),
      ['Ingress becomes-ready', { metadata: { annotations: { 'networking.knative.dev/ingress.class': 'traefik.ingress.networking.knative.dev' } } }],
    ],
    wantPatches: [marked('Configuration', 'config'), marked('Revision', 'config-00001')],
    wantStatusUpdates: [
      routeStatus('becomes-ready', { AllTrafficAssigned: 'True', IngressReady: IngressNotConfigured, Ready: IngressNotConfigured }),
    ],
    wantEvents: [created('placeholder service "becomes-ready"'), created('Ingress "becomes-ready"')],
  },
  {
    name: 'cluster local route becomes ready, ingress unknown',
    objects: simple(clusterLocal),
    wantCreates: [
      placeholder('becomes-ready', 'becomes-ready.default.svc.cluster.local'),
      ['Ingress becomes-ready', rules({ hosts: localHosts('becomes-ready'), splits: [{ serviceName: 'config-00001', percent: 100 }] })],
    ],
    wantPatches: [marked('Configuration', 'config'), marked('Revision', 'config-00001')],
    wantStatusUpdates: [
      routeStatus(
        'becomes-ready',
        { AllTrafficAssigned: 'True', IngressReady: IngressNotConfigured, Ready: IngressNotConfigured },
        { url: url('becomes-ready.default.svc.cluster.local'), address: address('becomes-ready') },
      ),
    ],
    wantEvents: [created('placeholder service "becomes-ready"'), created('Ingress "becomes-ready"')],
  },
  {
    name: 'simple route becomes ready',
    objects: simple(),
    given: [pass, reports('True', LB)],
    // The placeholder moves to the load balancer the KIngress reports; settled, the labeler lists what to clear.
    wantUpdates: [placeholder('becomes-ready', LB.domainInternal)],
    wantStatusUpdates: [readyRoute({ url: url(HOST), address: address('becomes-ready'), traffic: TRAFFIC })],
    then: outcome({ outcome: 'written', ingress: 'unchanged', ready: 'True', placeholders: 'updated becomes-ready' }),
  },
  {
    name: 'ingress not ready',
    objects: simple(),
    given: [pass, reports('Unknown', undefined, 'Uninitialized')],
    wantStatusUpdates: [
      routeStatus('becomes-ready', {
        AllTrafficAssigned: 'True',
        IngressReady: 'Unknown Uninitialized: Uninitialized happened',
        Ready: 'Unknown Uninitialized: Uninitialized happened',
      }),
    ],
  },
  {
    name: 'ingress failed',
    objects: simple(),
    given: [pass, reports('False', undefined, 'ConfigError')],
    wantStatusUpdates: [
      routeStatus('becomes-ready', {
        AllTrafficAssigned: 'True',
        IngressReady: 'False ConfigError: ConfigError happened',
        Ready: 'False ConfigError: ConfigError happened',
      }),
    ],
    then: outcome({ ready: 'False', reason: 'ConfigError' }),
  },
  {
    name: 'steady state',
    objects: simple(),
    given: settled,
    then: outcome({ outcome: 'unchanged', ingress: 'unchanged', ready: 'True' }),
  },
  {
    name: 'failure creating k8s placeholder service',
    objects: simple(),
    given: [(c) => c.kube.failNext('apply', Resources.KubeService, refused(500, 'InternalError', 'inducing failure for create services'))],
    wantCreates: ['Service becomes-ready'],
    wantPatches: [marked('Configuration', 'config'), marked('Revision', 'config-00001')],
    wantErr: 'inducing failure for create services',
  },
  {
    name: 'failure creating ingress',
    objects: simple(),
    given: [(c) => c.kube.failNext('apply', Resources.KIngress, refused(500, 'InternalError', 'inducing failure for create ingresses'))],
    wantCreates: [placeholder('becomes-ready', HOST), 'Ingress becomes-ready'],
    wantPatches: [marked('Configuration', 'config'), marked('Revision', 'config-00001')],
    wantEvents: [created('placeholder service "becomes-ready"')],
    wantErr: 'inducing failure for create ingresses',
  },
  {
    name: 'failure updating cluster ingress',
    objects: simple(),
    given: [
      ...settled,
      newRevision,
      // The new split changes the KIngress's rollout annotation: written as upstream writes it, an update (PUT).
      (c) => c.kube.failNext('update', Resources.KIngress, refused(500, 'InternalError', 'inducing failure for update ingresses')),
    ],
    wantUpdates: ['Ingress becomes-ready'],
    wantPatches: [marked('Revision', 'config-00002')],
    wantErr: 'inducing failure for update ingresses',
  },
  {
    name: 'reconcile service mutation',
    objects: simple(),
    given: [
      ...settled,
      edit<KubeObject & { spec: { externalName: string } }>(
        Resources.KubeService,
        'becomes-ready',
        (s) => (s.spec.externalName = 'hijacked.example.org'),
      ),
    ],
    wantUpdates: [placeholder('becomes-ready', LB.domainInternal)],
    then: outcome({ outcome: 'unchanged', placeholders: 'updated becomes-ready' }),
  },
  {
    name: 'reconcile cluster ingress mutation',
    objects: simple(),
    given: [...settled, edit<Ingress>(Resources.KIngress, 'becomes-ready', (i) => (i.spec.rules = []))],
    // The KIngress's controller has not seen the generation this write makes: the Route waits for it.
    wantUpdates: [['Ingress becomes-ready', publicSplit({ serviceName: 'config-00001', percent: 100 })]],
    wantStatusUpdates: [
      routeStatus('becomes-ready', { AllTrafficAssigned: 'True', IngressReady: IngressNotConfigured, Ready: IngressNotConfigured }),
    ],
  },
  {
    name: 'unhappy about ownership of placeholder service',
    objects: [...simple(), foreignService('becomes-ready')],
    wantPatches: [marked('Configuration', 'config'), marked('Revision', 'config-00001')],
    wantStatusUpdates: [
      routeStatus('becomes-ready', {
        AllTrafficAssigned: 'True',
        IngressReady: 'False NotOwned: There is an existing placeholder Service "becomes-ready" that we do not own.',
        Ready: 'False NotOwned: There is an existing placeholder Service "becomes-ready" that we do not own.',
      }),
    ],
    wantEvents: ['Warning InternalError route "becomes-ready" does not own Service "becomes-ready"'],
    wantErr: 'route "becomes-ready" does not own Service "becomes-ready"',
  },
  {
    name: 'unhappy about ownership of placeholder service, in a Service’s pass',
    objects: [...simple(), foreignService('becomes-ready')],
    // The Service's pass goes on to write the Service's status: the outcome names the foreign object.
    options: { reportNotOwned: true },
    wantPatches: [marked('Configuration', 'config'), marked('Revision', 'config-00001')],
    wantStatusUpdates: [
      routeStatus('becomes-ready', {
        AllTrafficAssigned: 'True',
        IngressReady: 'False NotOwned: There is an existing placeholder Service "becomes-ready" that we do not own.',
        Ready: 'False NotOwned: There is an existing placeholder Service "becomes-ready" that we do not own.',
      }),
    ],
    wantEvents: ['Warning InternalError route "becomes-ready" does not own Service "becomes-ready"'],
    then: outcome({ ingress: 'none', notOwned: 'Service becomes-ready' }),
  },
  {
    name: 'unhappy about ownership of ingress',
    objects: [
      ...simple(),
      // A KIngress of the Route's name that someone else made.
      {
        apiVersion: 'networking.internal.knative.dev/v1alpha1',
        kind: 'Ingress',
        metadata: { name: 'becomes-ready', namespace: NS },
        spec: {},
      } as KubeObject,
    ],
    wantCreates: [placeholder('becomes-ready', HOST)],
    wantPatches: [marked('Configuration', 'config'), marked('Revision', 'config-00001')],
    wantStatusUpdates: [
      routeStatus('becomes-ready', { AllTrafficAssigned: 'True', IngressReady: IngressNotConfigured, Ready: IngressNotConfigured }),
    ],
    wantEvents: [created('placeholder service "becomes-ready"')],
    then: outcome({ ingress: 'notOwned' }),
  },
  {
    name: 'update single target to traffic split with unready revision',
    objects: simple(),
    given: [
      ...settled,
      (c) => c.kube.seed(Resources.Revision, rev('config-00002', 'config', revNotReady)),
      edit<Route>(Resources.Route, 'becomes-ready', (r) => {
        r.spec.traffic = [
          { configurationName: 'config', percent: 50 },
          { revisionName: 'config-00002', percent: 50 },
        ];
      }),
    ],
    // Nothing is programmed: the KIngress keeps the split it has until the Revision is ready.
    wantPatches: [marked('Revision', 'config-00002')],
    wantStatusUpdates: [
      routeStatus(
        'becomes-ready',
        {
          AllTrafficAssigned: 'Unknown RevisionMissing: Revision "config-00002" is not yet ready.',
          IngressReady: IngressNotConfigured,
          Ready: 'Unknown RevisionMissing: Revision "config-00002" is not yet ready.',
        },
        { traffic: TRAFFIC },
      ),
    ],
  },
  {
    name: 'configuration missing',
    objects: [route('becomes-ready', withConfigTarget('config'))],
    wantStatusUpdates: [
      routeStatus('becomes-ready', {
        AllTrafficAssigned: 'False ConfigurationMissing: Configuration "config" referenced in traffic not found.',
        ...NOTHING_PROGRAMMED,
        Ready: 'False ConfigurationMissing: Configuration "config" referenced in traffic not found.',
      }),
    ],
  },
  {
    name: 'revision missing (direct)',
    objects: [route('becomes-ready', withRevTarget('config-00001')), cfg('config')],
    wantStatusUpdates: [
      routeStatus('becomes-ready', {
        AllTrafficAssigned: 'False RevisionMissing: Revision "config-00001" referenced in traffic not found.',
        ...NOTHING_PROGRAMMED,
        Ready: 'False RevisionMissing: Revision "config-00001" referenced in traffic not found.',
      }),
    ],
  },
  {
    name: 'revision not yet ready (direct)',
    objects: [route('becomes-ready', withRevTarget('config-00001')), cfg('config'), rev('config-00001', 'config', revNotReady)],
    wantPatches: [marked('Configuration', 'config'), marked('Revision', 'config-00001')],
    wantStatusUpdates: [
      routeStatus('becomes-ready', {
        AllTrafficAssigned: 'Unknown RevisionMissing: Revision "config-00001" is not yet ready.',
        ...NOTHING_PROGRAMMED,
        Ready: 'Unknown RevisionMissing: Revision "config-00001" is not yet ready.',
      }),
    ],
  },
  {
    name: 'revision failed (direct)',
    objects: [route('becomes-ready', withRevTarget('config-00001')), cfg('config'), rev('config-00001', 'config', revFailed)],
    wantPatches: [marked('Configuration', 'config'), marked('Revision', 'config-00001')],
    wantStatusUpdates: [
      routeStatus('becomes-ready', {
        AllTrafficAssigned: 'False RevisionMissing: Revision "config-00001" failed to become ready.',
        ...NOTHING_PROGRAMMED,
        Ready: 'False RevisionMissing: Revision "config-00001" failed to become ready.',
      }),
    ],
  },
  {
    name: 'traffic targets: revision name',
    objects: [route('becomes-ready', withRevTarget('config-00001')), cfg('config'), rev('config-00001', 'config')],
    wantCreates: [placeholder('becomes-ready', HOST), 'Ingress becomes-ready'],
    wantPatches: [marked('Configuration', 'config'), marked('Revision', 'config-00001')],
    wantStatusUpdates: [
      routeStatus(
        'becomes-ready',
        { AllTrafficAssigned: 'True', IngressReady: IngressNotConfigured, Ready: IngressNotConfigured },
        { traffic: [{ revisionName: 'config-00001', latestRevision: false, percent: 100 }] },
      ),
    ],
    wantEvents: [created('placeholder service "becomes-ready"'), created('Ingress "becomes-ready"')],
  },
  {
    name: 'traffic split: the latest ready Revision and a pinned one',
    objects: [
      route('becomes-ready', withTraffic({ configurationName: 'config', percent: 70 }, { revisionName: 'config-00001', percent: 30 })),
      cfg('config', withLatest('config-00002')),
      rev('config-00001', 'config'),
      rev('config-00002', 'config'),
    ],
    wantCreates: [
      placeholder('becomes-ready', HOST),
      ['Ingress becomes-ready', publicSplit({ serviceName: 'config-00002', percent: 70 }, { serviceName: 'config-00001', percent: 30 })],
    ],
    wantPatches: [marked('Configuration', 'config'), marked('Revision', 'config-00001'), marked('Revision', 'config-00002')],
    wantStatusUpdates: [
      routeStatus(
        'becomes-ready',
        { AllTrafficAssigned: 'True', IngressReady: IngressNotConfigured, Ready: IngressNotConfigured },
        {
          traffic: [
            { revisionName: 'config-00002', latestRevision: true, percent: 70 },
            { revisionName: 'config-00001', latestRevision: false, percent: 30 },
          ],
        },
      ),
    ],
    wantEvents: [created('placeholder service "becomes-ready"'), created('Ingress "becomes-ready"')],
  },
  {
    name: 'route with duplicate targets',
    objects: [
      route(
        'becomes-ready',
        withTraffic(
          { configurationName: 'config', percent: 30 },
          { configurationName: 'config', percent: 20 },
          { revisionName: 'config-00001', percent: 10 },
          { revisionName: 'config-00001', percent: 40 },
        ),
      ),
      ...simple().slice(1),
    ],
    wantCreates: [placeholder('becomes-ready', HOST), ['Ingress becomes-ready', publicSplit({ serviceName: 'config-00001', percent: 100 })]],
    wantPatches: [marked('Configuration', 'config'), marked('Revision', 'config-00001')],
    wantStatusUpdates: [
      routeStatus(
        'becomes-ready',
        { AllTrafficAssigned: 'True', IngressReady: IngressNotConfigured, Ready: IngressNotConfigured },
        {
          traffic: [
            { revisionName: 'config-00001', latestRevision: true, percent: 50 },
            { revisionName: 'config-00001', latestRevision: false, percent: 50 },
          ],
        },
      ),
    ],
    wantEvents: [created('placeholder service "becomes-ready"'), created('Ingress "becomes-ready"')],
  },
  {
    name: 'config with traffic tags',
    objects: [
      route('becomes-ready', withTraffic({ configurationName: 'config', percent: 100 }, { revisionName: 'config-00001', percent: 0, tag: 'v1' })),
      ...simple().slice(1),
    ],
    wantCreates: [
      placeholder('becomes-ready', HOST),
      placeholder('v1-becomes-ready', 'v1-becomes-ready.default.example.com'),
      'Ingress becomes-ready',
    ],
    wantPatches: [marked('Configuration', 'config'), marked('Revision', 'config-00001')],
    wantStatusUpdates: [
      routeStatus(
        'becomes-ready',
        { AllTrafficAssigned: 'True', IngressReady: IngressNotConfigured, Ready: IngressNotConfigured },
        {
          url: url(HOST),
          traffic: [
            { revisionName: 'config-00001', latestRevision: true, percent: 100 },
            { tag: 'v1', revisionName: 'config-00001', latestRevision: false, percent: 0, url: url('v1-becomes-ready.default.example.com') },
          ],
        },
      ),
    ],
    wantEvents: [
      created('placeholder service "becomes-ready"'),
      created('placeholder service "v1-becomes-ready"'),
      created('Ingress "becomes-ready"'),
    ],
  },
  {
    name: 'deletes the placeholder of a tag the Route no longer has',
    objects: [
      route('becomes-ready', withTraffic({ configurationName: 'config', percent: 100 }, { revisionName: 'config-00001', percent: 0, tag: 'v1' })),
      ...simple().slice(1),
    ],
    given: [
      ...settled,
      edit<Route>(Resources.Route, 'becomes-ready', (r) => void (r.spec.traffic = [{ configurationName: 'config', percent: 100 }])),
    ],
    wantDeletes: ['Service v1-becomes-ready'],
    wantUpdates: ['Ingress becomes-ready'],
    wantStatusUpdates: [
      routeStatus(
        'becomes-ready',
        { AllTrafficAssigned: 'True', IngressReady: IngressNotConfigured, Ready: IngressNotConfigured },
        { traffic: TRAFFIC },
      ),
    ],
    then: outcome({ placeholders: 'deleted v1-becomes-ready' }),
  },
  {
    name: 'switch to a different config',
    objects: [...simple(), cfg('config2'), rev('config2-00001', 'config2')],
    given: [
      ...settled,
      edit<Route>(Resources.Route, 'becomes-ready', (r) => void (r.spec.traffic = [{ configurationName: 'config2', percent: 100 }])),
    ],
    // Not settled for its new generation: the labeler marks the new targets and clears nothing yet.
    wantUpdates: [['Ingress becomes-ready', publicSplit({ serviceName: 'config2-00001', percent: 100 })]],
    wantPatches: [marked('Configuration', 'config2'), marked('Revision', 'config2-00001')],
    wantStatusUpdates: [
      routeStatus(
        'becomes-ready',
        { AllTrafficAssigned: 'True', IngressReady: IngressNotConfigured, Ready: IngressNotConfigured },
        { traffic: [{ revisionName: 'config2-00001', latestRevision: true, percent: 100 }] },
      ),
    ],
  },
  {
    name: 'switch to a different config, settled: the labeler takes the Route off the old one',
    objects: [...simple(), cfg('config2'), rev('config2-00001', 'config2')],
    given: [
      ...settled,
      edit<Route>(Resources.Route, 'becomes-ready', (r) => void (r.spec.traffic = [{ configurationName: 'config2', percent: 100 }])),
      pass,
      reports('True', LB),
    ],
    wantPatches: [
      ['Configuration config', { metadata: { annotations: { 'serving.knative.dev/routes': null } } }],
      [
        'Revision config-00001',
        { metadata: { labels: { 'serving.knative.dev/routingState': 'reserve' }, annotations: { 'serving.knative.dev/routes': null } } },
      ],
    ],
    wantStatusUpdates: [readyRoute({ traffic: [{ revisionName: 'config2-00001', latestRevision: true, percent: 100 }] })],
  },
  {
    name: 'change route configuration: a new latest ready Revision',
    objects: simple(),
    given: [...settled, newRevision],
    wantUpdates: [['Ingress becomes-ready', publicSplit({ serviceName: 'config-00002', percent: 100 })]],
    wantPatches: [marked('Revision', 'config-00002')],
    wantStatusUpdates: [
      routeStatus(
        'becomes-ready',
        { AllTrafficAssigned: 'True', IngressReady: IngressNotConfigured, Ready: IngressNotConfigured },
        { traffic: [{ revisionName: 'config-00002', latestRevision: true, percent: 100 }] },
      ),
    ],
  },
  {
    name: 'public becomes cluster local',
    objects: simple(),
    given: [...settled, edit<Route>(Resources.Route, 'becomes-ready', (r) => clusterLocal(r))],
    wantUpdates: [['Ingress becomes-ready', rules({ hosts: localHosts('becomes-ready'), splits: [{ serviceName: 'config-00001', percent: 100 }] })]],
    wantStatusUpdates: [
      routeStatus(
        'becomes-ready',
        { AllTrafficAssigned: 'True', IngressReady: IngressNotConfigured, Ready: IngressNotConfigured },
        { url: url('becomes-ready.default.svc.cluster.local') },
      ),
    ],
  },
  {
    name: 'cluster local becomes public',
    objects: simple(clusterLocal),
    given: [...settled, edit<Route>(Resources.Route, 'becomes-ready', (r) => void delete r.metadata.labels?.['networking.knative.dev/visibility'])],
    wantUpdates: ['Ingress becomes-ready'],
    wantStatusUpdates: [
      routeStatus(
        'becomes-ready',
        { AllTrafficAssigned: 'True', IngressReady: IngressNotConfigured, Ready: IngressNotConfigured },
        { url: url(HOST) },
      ),
    ],
  },
  {
    name: 'update ingress with new domain: a change in config-domain',
    objects: simple(),
    given: [...settled, (c) => c.setDomain({ 'example.org': '' })],
    wantUpdates: [
      [
        'Ingress becomes-ready',
        rules(
          { hosts: localHosts('becomes-ready'), splits: [{ serviceName: 'config-00001', percent: 100 }] },
          { hosts: ['becomes-ready.default.example.org'], splits: [{ serviceName: 'config-00001', percent: 100 }] },
        ),
      ],
    ],
    wantStatusUpdates: [
      routeStatus(
        'becomes-ready',
        { AllTrafficAssigned: 'True', IngressReady: IngressNotConfigured, Ready: IngressNotConfigured },
        { url: url('becomes-ready.default.example.org') },
      ),
    ],
  },
  {
    name: 'change in config-network domain template',
    objects: simple(),
    given: [...settled, (c) => c.setNetwork({ 'domain-template': '{{.Name}}-{{.Namespace}}.{{.Domain}}' })],
    wantUpdates: [
      [
        'Ingress becomes-ready',
        rules(
          { hosts: localHosts('becomes-ready'), splits: [{ serviceName: 'config-00001', percent: 100 }] },
          { hosts: ['becomes-ready-default.example.com'], splits: [{ serviceName: 'config-00001', percent: 100 }] },
        ),
      ],
    ],
    wantStatusUpdates: [
      routeStatus(
        'becomes-ready',
        { AllTrafficAssigned: 'True', IngressReady: IngressNotConfigured, Ready: IngressNotConfigured },
        { url: url('becomes-ready-default.example.com') },
      ),
    ],
  },
  {
    name: 'domain template error: nothing is programmed',
    objects: simple(),
    network: { 'domain-template': '{{.Name}}.{{index .Annotations "sub"}}.{{.Domain}}' },
    wantPatches: [marked('Configuration', 'config'), marked('Revision', 'config-00001')],
    wantStatusUpdates: [
      routeStatus('becomes-ready', {
        AllTrafficAssigned: 'False ErrorConfig',
        ...NOTHING_PROGRAMMED,
        Ready: 'False ErrorConfig',
      }),
    ],
    then: outcome({ ingress: 'none', reason: 'ErrorConfig' }),
  },
  {
    name: 'route being deleted: the finalizer takes it off its Configuration and Revision',
    objects: [
      route('becomes-ready', withConfigTarget('config'), deleted),
      cfg('config', withConfigAnnotations({ 'serving.knative.dev/routes': 'becomes-ready,other' })),
      rev('config-00001', 'config', routedBy('becomes-ready')),
    ],
    wantPatches: [
      ['Configuration config', { metadata: { annotations: { 'serving.knative.dev/routes': 'other' } } }],
      ['Revision config-00001', { metadata: { labels: { 'serving.knative.dev/routingState': 'reserve' } } }],
      ['Route becomes-ready', { metadata: { finalizers: [] } }],
    ],
    then: outcome({ outcome: 'gone' }),
  },
  {
    name: 'a load balancer with an IP: a headless placeholder with its own Endpoints',
    objects: simple(),
    given: [pass, reports('True', { ip: '10.0.0.9' })],
    wantUpdates: [['Service becomes-ready', { spec: { type: 'ClusterIP', clusterIP: 'None' } }]],
    wantCreates: [['Endpoints becomes-ready', { subsets: [{ addresses: [{ ip: '10.0.0.9' }] }] }]],
    wantStatusUpdates: [readyRoute()],
  },
  {
    name: 'a load balancer back at a domain: the headless placeholder is made again, its Endpoints deleted',
    objects: simple(),
    given: [pass, reports('True', { ip: '10.0.0.9' }), pass, reports('True', LB)],
    // The API server refuses a headless Service turning ExternalName in place.
    wantDeletes: ['Service becomes-ready', 'Endpoints becomes-ready'],
    wantCreates: [placeholder('becomes-ready', LB.domainInternal)],
    then: outcome({ outcome: 'unchanged', placeholders: 'updated becomes-ready' }),
  },
  {
    name: 'unhappy about ownership of placeholder endpoints',
    objects: simple(),
    given: [
      pass,
      (c) => c.kube.seed(Endpoints, { apiVersion: 'v1', kind: 'Endpoints', metadata: { name: 'becomes-ready', namespace: NS } }),
      reports('True', { ip: '10.0.0.9' }),
    ],
    wantStatusUpdates: [
      routeStatus('becomes-ready', {
        AllTrafficAssigned: 'True',
        IngressReady: 'False NotOwned: There is an existing placeholder Endpoint "becomes-ready" that we do not own.',
        Ready: 'False NotOwned: There is an existing placeholder Endpoint "becomes-ready" that we do not own.',
      }),
    ],
    wantEvents: ['Warning InternalError route "becomes-ready" does not own Endpoints "becomes-ready"'],
    wantErr: 'does not own Endpoints "becomes-ready"',
  },
  {
    name: 'gradual rollout: a new Revision starts at 1 %',
    objects: simple(withRouteAnnotations(ROLLOUT)),
    given: [...settled, newRevision],
    wantUpdates: [['Ingress becomes-ready', publicSplit({ serviceName: 'config-00001', percent: 99 }, { serviceName: 'config-00002', percent: 1 })]],
    wantPatches: [marked('Revision', 'config-00002')],
    wantStatusUpdates: [
      routeStatus(
        'becomes-ready',
        {
          AllTrafficAssigned: 'True',
          IngressReady: 'Unknown RolloutInProgress: A gradual rollout of the latest revision(s) is in progress.',
          Ready: 'Unknown RolloutInProgress: A gradual rollout of the latest revision(s) is in progress.',
        },
        {
          traffic: [
            { revisionName: 'config-00001', latestRevision: true, percent: 99 },
            { revisionName: 'config-00002', latestRevision: true, percent: 1 },
          ],
        },
      ),
    ],
    wantEvents: ['Normal RolloutStarted config: rollout of config-00002 started: config-00001 99%, config-00002 1%.'],
    // Not observed ready yet: the only wake is the readiness bound (max(10 s, duration / 10)).
    then: outcome({
      rollout: { summary: 'config-00002 0% → 1% (config-00001 99%, config-00002 1%), next step at 10:00:10.000Z', nextStepAtMs: NOW + 10_000 },
    }),
  },
  {
    name: 'gradual rollout: the 1 % step is ready, the schedule starts',
    objects: simple(withRouteAnnotations(ROLLOUT)),
    given: [...settled, newRevision, pass, at(5), reports('True', LB)],
    // 99 % in the 15 s left at 5 s a step: 33 % every 5 s. Only the KIngress's annotation moves.
    wantUpdates: [['Ingress becomes-ready', publicSplit({ serviceName: 'config-00001', percent: 99 }, { serviceName: 'config-00002', percent: 1 })]],
    wantEvents: ['Normal RolloutScheduled config: config-00002 moves 33% every 5s, next step at 2026-11-23T10:00:10.000Z.'],
    then: outcome({
      rollout: { summary: 'config-00002 at 1% (config-00001 99%, config-00002 1%), next step at 10:00:10.000Z', nextStepInMs: 5_000 },
    }),
  },
  {
    name: 'gradual rollout: a step falls due',
    objects: simple(withRouteAnnotations(ROLLOUT)),
    given: [...settled, newRevision, pass, at(5), reports('True', LB), pass, at(10)],
    wantUpdates: [['Ingress becomes-ready', publicSplit({ serviceName: 'config-00001', percent: 66 }, { serviceName: 'config-00002', percent: 34 })]],
    wantStatusUpdates: [
      routeStatus(
        'becomes-ready',
        {
          AllTrafficAssigned: 'True',
          IngressReady: 'Unknown RolloutInProgress: A gradual rollout of the latest revision(s) is in progress.',
          Ready: 'Unknown RolloutInProgress: A gradual rollout of the latest revision(s) is in progress.',
        },
        {
          traffic: [
            { revisionName: 'config-00001', latestRevision: true, percent: 66 },
            { revisionName: 'config-00002', latestRevision: true, percent: 34 },
          ],
        },
      ),
    ],
    wantEvents: ['Normal RolloutStep config: config-00002 1% → 34% (config-00001 66%, config-00002 34%), next step at 2026-11-23T10:00:15.000Z.'],
  },
  {
    name: 'istio: simple route becomes ready in one pass',
    objects: simple(),
    network: { 'ingress-class': ISTIO },
    // Tidal programs its own class in the same pass: the VirtualServices, the KIngress's status, and the placeholder
    // written once, at the local gateway the KIngress reports.
    wantCreates: [
      ['Ingress becomes-ready', { metadata: { annotations: { 'networking.knative.dev/ingress.class': ISTIO } } }],
      'VirtualService becomes-ready-ingress',
      'VirtualService becomes-ready-mesh',
      placeholder('becomes-ready', 'knative-local-gateway.istio-system.svc.cluster.local'),
    ],
    wantPatches: [marked('Configuration', 'config'), marked('Revision', 'config-00001')],
    wantStatusUpdates: [
      [
        'Ingress becomes-ready',
        { status: { conditions: expect.arrayContaining([expect.objectContaining({ type: 'Ready', status: 'True' })]) as unknown } },
      ],
      readyRoute({ url: url(HOST), traffic: TRAFFIC }),
    ],
    wantEvents: [created('Ingress "becomes-ready"'), created('placeholder service "becomes-ready"')],
    then: outcome({ outcome: 'written', ingress: 'created', ready: 'True', placeholders: 'created becomes-ready' }),
  },
  {
    name: 'istio: steady state',
    objects: simple(),
    network: { 'ingress-class': ISTIO },
    given: [pass],
    then: outcome({ outcome: 'unchanged', ingress: 'unchanged', ready: 'True' }),
  },
  {
    name: 'istio: a VirtualService edited by someone else is written back',
    objects: simple(),
    network: { 'ingress-class': ISTIO },
    given: [
      pass,
      edit<KubeObject & { spec: { hosts: string[] } }>(
        Resources.VirtualService,
        'becomes-ready-ingress',
        (vs) => void (vs.spec.hosts = ['hijacked.example.org']),
      ),
    ],
    wantUpdates: ['VirtualService becomes-ready-ingress'],
    then: outcome({ outcome: 'unchanged', ingress: 'unchanged', ready: 'True' }),
  },
  {
    name: 'config with traffic tags, tag header based routing',
    objects: [
      route('becomes-ready', withTraffic({ configurationName: 'config', percent: 100 }, { revisionName: 'config-00001', percent: 0, tag: 'v1' })),
      ...simple().slice(1),
    ],
    features: { 'tag-header-based-routing': 'Enabled' },
    wantCreates: [
      placeholder('becomes-ready', HOST),
      placeholder('v1-becomes-ready', 'v1-becomes-ready.default.example.com'),
      [
        'Ingress becomes-ready',
        {
          spec: {
            rules: expect.arrayContaining([
              expect.objectContaining({
                http: { paths: expect.arrayContaining([expect.objectContaining({ headers: { 'Knative-Serving-Tag': { exact: 'v1' } } })]) },
              }),
            ]) as unknown,
          },
        },
      ],
    ],
    wantPatches: [marked('Configuration', 'config'), marked('Revision', 'config-00001')],
    wantStatusUpdates: [
      routeStatus('becomes-ready', { AllTrafficAssigned: 'True', IngressReady: IngressNotConfigured, Ready: IngressNotConfigured }),
    ],
    wantEvents: [
      created('placeholder service "becomes-ready"'),
      created('placeholder service "v1-becomes-ready"'),
      created('Ingress "becomes-ready"'),
    ],
  },
];

describe('Route pass, table', () => {
  beforeEach(() => vi.useFakeTimers({ now: NOW, toFake: ['Date', 'setTimeout', 'clearTimeout'] }));
  afterEach(() => vi.useRealTimers());
  tableTest(rows, setup, [Endpoints]);
});
