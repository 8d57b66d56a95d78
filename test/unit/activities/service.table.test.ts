// The Service's own steps of a pass as a table, after Knative's pkg/reconciler/service/table_test.go: its
// Configuration applied, its Route applied, its status from both (the order workflows/service.ts runs them in). What
// the Configuration's and the Route's own reconcilers do in between is played by the rows (`configurationReports`,
// `routeReports`), as Knative's rows seed their children's status.
//
// Knative's rows left out, and why:
// - "bad workqueue key": a Service's workflow is started with its key.
// - The rows on the `runLatest`, `pinned` and `release` modes of v1alpha1 Services: Tidal serves v1 only.
// - The rows that make the status update fail: a failed status write fails the step, which is retried.
// - The rows on an old Route label (`serving.knative.dev/route`) of Configurations: Tidal's labeler is the routes
//   annotation, tested with the Route (route.table.test.ts).
//
// Where Tidal's rows differ from Knative's: a refused apply writes the failure to the Service's status and records
// one Warning Event, then fails the step (Knative's reconciler reports the error the same way through its event).
import { describe, expect } from 'vitest';
import { createServiceActivities } from '../../../activities/service.js';
import { Resources, type ResourceType } from '../../../api/kinds.js';
import type { KubeObject } from '../../../api/meta.js';
import type { Condition, Configuration, Route, Service, TrafficTarget } from '../../../api/serving.js';
import { service, withAnnotations, withImage, withLabels } from '../../fixtures/serving.js';
import { fakeDeps, KubeFake, refused } from './kube-fake.js';
import { conditionsOf, tableTest, type Row, type TableContext, type Want } from './table.js';

const NS = 'default';
const HOST = 'svc.default.example.com';

type Option<T> = (obj: T) => void;

/** Service `svc` (uid `uid-svc`) at image nginx. */
const svc = (...opts: Option<Service>[]): Service => service('svc', NS, ...opts);
const withTraffic =
  (...traffic: TrafficTarget[]): Option<Service> =>
  (s) =>
    void (s.spec.traffic = traffic);
const byoName =
  (name: string): Option<Service> =>
  (s) =>
    void (s.spec.template.metadata = { ...s.spec.template.metadata, name });
const deleting: Option<Service> = (s) => void (s.metadata.deletionTimestamp = '2025-01-01T00:00:00Z');

/** A child of the Service's name that someone else made. */
const foreign = (kind: 'Configuration' | 'Route'): KubeObject =>
  ({ apiVersion: 'serving.knative.dev/v1', kind, metadata: { name: 'svc', namespace: NS }, spec: {} }) as KubeObject;

/**
 * The Service's status as written: each condition `Type: Status [Reason[: message]]`, and the other fields it must
 * hold.
 */
function serviceStatus(conditions: Record<string, string>, fields: Record<string, unknown> = {}): Want {
  const conds = conditionsOf(conditions);
  return ['Service svc', { status: { conditions: conds, ...fields } }];
}

const ConfigurationOutOfDate = 'Unknown OutOfDate: The Configuration is still working to reflect the latest desired specification.';
const RouteOutOfDate = 'Unknown OutOfDate: The Route is still working to reflect the latest desired specification.';
const TRAFFIC = [{ revisionName: 'svc-00001', latestRevision: true, percent: 100 }];

interface ServiceContext extends TableContext {
  /** What the Configuration's reconciler writes: its status for its generation, at Revision `latest`. */
  configurationReports(ready: 'True' | 'Unknown' | 'False', latest?: string, reason?: string): void;
  /** What the Route's reconciler writes: its status for its generation, with `traffic`. */
  routeReports(ready: 'True' | 'Unknown' | 'False', traffic?: TrafficTarget[], reason?: string): void;
}

type ServiceRow = Row<ServiceContext>;

const pass = (c: ServiceContext) => c.reconcile();
const configurationReports =
  (ready: 'True' | 'Unknown' | 'False', latest = 'svc-00001', reason?: string) =>
  (c: ServiceContext) =>
    c.configurationReports(ready, latest, reason);
const routeReports =
  (ready: 'True' | 'Unknown' | 'False', traffic: TrafficTarget[] = TRAFFIC, reason?: string) =>
  (c: ServiceContext) =>
    c.routeReports(ready, traffic, reason);
const edit =
  <T extends KubeObject>(type: ResourceType, fn: (o: T) => void) =>
  (c: ServiceContext) =>
    c.kube.edit<T>(type, NS, 'svc', fn);
const outcome = (want: Record<string, unknown>) => (_c: ServiceContext, got: unknown) => expect(got).toMatchObject(want);
/** The Service and its children created, their reconcilers report them Ready, and the Service says so. */
const ready = [pass, configurationReports('True'), routeReports('True'), pass];
const condition = (status: 'True' | 'Unknown' | 'False', reason?: string): Condition[] => [
  { type: 'Ready', status, ...(reason ? { reason, message: `${reason} happened` } : {}) },
];

function setup(): ServiceContext {
  const kube = new KubeFake();
  const { deps } = fakeDeps(kube);
  const events: string[] = [];
  const acts = createServiceActivities({
    ...deps,
    events: { record: async (_o, type, reason, message) => void events.push(`${type} ${reason} ${message}`) },
  });
  const key = { namespace: NS, name: 'svc' };
  return {
    kube,
    events,
    reconcile: async () => {
      const configuration = await acts.reconcileServiceConfiguration(key);
      if (configuration.outcome === 'gone') return { configuration };
      const route = await acts.reconcileServiceRoute(key);
      const status = await acts.updateServiceStatus(key);
      return { configuration, route, status };
    },
    configurationReports: (status, latest, reason) =>
      kube.edit<Configuration>(Resources.Configuration, NS, 'svc', (c) => {
        c.status = {
          observedGeneration: c.metadata.generation ?? 1,
          conditions: condition(status, reason),
          ...(latest ? { latestCreatedRevisionName: latest, ...(status === 'True' ? { latestReadyRevisionName: latest } : {}) } : {}),
        };
      }),
    routeReports: (status, traffic, reason) =>
      kube.edit<Route>(Resources.Route, NS, 'svc', (r) => {
        r.status = {
          observedGeneration: r.metadata.generation ?? 1,
          conditions: condition(status, reason),
          url: `http://${HOST}`,
          address: { url: 'http://svc.default.svc.cluster.local' },
          ...(traffic ? { traffic } : {}),
        };
      }),
  };
}

const created = (kind: string) => `Normal Created Created ${kind} "svc"`;

const rows: ServiceRow[] = [
  {
    name: 'key not found',
    objects: [],
    then: outcome({ configuration: { outcome: 'gone' } }),
  },
  {
    name: 'service being deleted: its children go with their owner references',
    objects: [svc(deleting)],
    then: outcome({ configuration: { outcome: 'gone' } }),
  },
  {
    name: 'create route and configuration',
    objects: [svc()],
    wantCreates: [
      ['Configuration svc', { metadata: { ownerReferences: [{ kind: 'Service', name: 'svc', uid: 'uid-svc', controller: true }] } }],
      ['Route svc', { spec: { traffic: [{ configurationName: 'svc', percent: 100, latestRevision: true }] } }],
    ],
    // Ready takes the reason of the dependent condition marked last, as Knative's condition sets do.
    wantStatusUpdates: [serviceStatus({ ConfigurationsReady: ConfigurationOutOfDate, RoutesReady: RouteOutOfDate, Ready: RouteOutOfDate })],
    wantEvents: [created('Configuration'), created('Route')],
    then: outcome({ configuration: { outcome: 'applied', action: 'created' }, route: { outcome: 'applied', action: 'created' } }),
  },
  {
    name: 'create with traffic to a named revision',
    objects: [svc(withTraffic({ revisionName: 'svc-00001', percent: 100 }))],
    wantCreates: ['Configuration svc', ['Route svc', { spec: { traffic: [{ revisionName: 'svc-00001', percent: 100, latestRevision: false }] } }]],
    wantStatusUpdates: [serviceStatus({ ConfigurationsReady: ConfigurationOutOfDate, RoutesReady: RouteOutOfDate, Ready: RouteOutOfDate })],
    wantEvents: [created('Configuration'), created('Route')],
  },
  {
    name: 'labels and annotations of the Service reach its children',
    objects: [svc(withLabels({ team: 'a' }), withAnnotations({ note: 'x' }))],
    wantCreates: [
      ['Configuration svc', { metadata: { labels: { team: 'a', 'serving.knative.dev/service': 'svc' }, annotations: { note: 'x' } } }],
      ['Route svc', { metadata: { labels: { team: 'a', 'serving.knative.dev/service': 'svc' }, annotations: { note: 'x' } } }],
    ],
    wantStatusUpdates: ['Service svc'],
    wantEvents: [created('Configuration'), created('Route')],
  },
  {
    name: 'configuration and route ready: the service becomes ready',
    objects: [svc()],
    given: [pass, configurationReports('True'), routeReports('True')],
    wantStatusUpdates: [
      serviceStatus(
        { ConfigurationsReady: 'True', RoutesReady: 'True', Ready: 'True' },
        {
          latestCreatedRevisionName: 'svc-00001',
          latestReadyRevisionName: 'svc-00001',
          url: `http://${HOST}`,
          address: { url: 'http://svc.default.svc.cluster.local' },
          traffic: TRAFFIC,
        },
      ),
    ],
  },
  {
    name: 'steady state',
    objects: [svc()],
    given: ready,
    then: outcome({ configuration: { action: 'unchanged' }, route: { action: 'unchanged' }, status: { outcome: 'unchanged', ready: 'True' } }),
  },
  {
    name: 'configuration not yet ready',
    objects: [svc()],
    given: [pass, configurationReports('Unknown', 'svc-00001', 'Deploying'), routeReports('Unknown', [], 'RevisionMissing')],
    wantStatusUpdates: [
      serviceStatus({
        ConfigurationsReady: 'Unknown Deploying: Deploying happened',
        RoutesReady: 'Unknown RevisionMissing: RevisionMissing happened',
        Ready: 'Unknown RevisionMissing: RevisionMissing happened',
      }),
    ],
  },
  {
    name: 'configuration failed',
    objects: [svc()],
    given: [pass, configurationReports('False', 'svc-00001', 'RevisionFailed'), routeReports('False', [], 'RevisionMissing')],
    wantStatusUpdates: [
      serviceStatus({
        ConfigurationsReady: 'False RevisionFailed: RevisionFailed happened',
        RoutesReady: 'False RevisionMissing: RevisionMissing happened',
        Ready: 'False RevisionMissing: RevisionMissing happened',
      }),
    ],
  },
  {
    name: 'route not yet ready',
    objects: [svc()],
    given: [pass, configurationReports('True'), routeReports('Unknown', TRAFFIC, 'IngressNotConfigured')],
    wantStatusUpdates: [
      serviceStatus({
        ConfigurationsReady: 'True',
        RoutesReady: 'Unknown IngressNotConfigured: IngressNotConfigured happened',
        Ready: 'Unknown IngressNotConfigured: IngressNotConfigured happened',
      }),
    ],
  },
  {
    name: 'route failed',
    objects: [svc()],
    given: [pass, configurationReports('True'), routeReports('False', TRAFFIC, 'NotOwned')],
    wantStatusUpdates: [
      serviceStatus({ ConfigurationsReady: 'True', RoutesReady: 'False NotOwned: NotOwned happened', Ready: 'False NotOwned: NotOwned happened' }),
    ],
  },
  {
    name: 'route ready, traffic not yet migrated to the latest ready revision',
    objects: [svc()],
    given: [...ready, configurationReports('True', 'svc-00002')],
    wantStatusUpdates: [
      serviceStatus(
        {
          ConfigurationsReady: 'True',
          RoutesReady: 'Unknown TrafficNotMigrated: Traffic is not yet migrated to the latest revision.',
          Ready: 'Unknown TrafficNotMigrated: Traffic is not yet migrated to the latest revision.',
        },
        { latestReadyRevisionName: 'svc-00002', traffic: TRAFFIC },
      ),
    ],
  },
  {
    name: 'update configuration: a new image',
    objects: [svc()],
    given: [...ready, edit<Service>(Resources.Service, withImage('nginx:2'))],
    wantUpdates: [['Configuration svc', { spec: { template: { spec: { containers: [{ image: 'nginx:2' }] } } } }]],
    // The Configuration has not observed its new generation yet.
    wantStatusUpdates: [serviceStatus({ ConfigurationsReady: ConfigurationOutOfDate, RoutesReady: 'True', Ready: ConfigurationOutOfDate })],
    then: outcome({ configuration: { action: 'updated' }, route: { action: 'unchanged' } }),
  },
  {
    name: 'update route: traffic split to a named revision',
    objects: [svc()],
    given: [
      ...ready,
      edit<Service>(
        Resources.Service,
        withTraffic({ latestRevision: true, percent: 50 }, { revisionName: 'svc-00001', percent: 50, latestRevision: false }),
      ),
    ],
    wantUpdates: [
      [
        'Route svc',
        {
          spec: {
            traffic: [
              { configurationName: 'svc', latestRevision: true, percent: 50 },
              { revisionName: 'svc-00001', percent: 50, latestRevision: false },
            ],
          },
        },
      ],
    ],
    wantStatusUpdates: [serviceStatus({ ConfigurationsReady: 'True', RoutesReady: RouteOutOfDate, Ready: RouteOutOfDate })],
  },
  {
    name: 'reconcile configuration mutation',
    objects: [svc()],
    given: [...ready, edit<Configuration>(Resources.Configuration, (c) => void (c.spec.template.spec.containers = [{ image: 'hijacked' }]))],
    wantUpdates: [['Configuration svc', { spec: { template: { spec: { containers: [{ image: 'nginx' }] } } } }]],
    wantStatusUpdates: [serviceStatus({ ConfigurationsReady: ConfigurationOutOfDate, RoutesReady: 'True', Ready: ConfigurationOutOfDate })],
  },
  {
    name: 'reconcile route mutation',
    objects: [svc()],
    given: [...ready, edit<Route>(Resources.Route, (r) => void (r.spec.traffic = [{ configurationName: 'svc', percent: 100, tag: 'hijacked' }]))],
    wantUpdates: [['Route svc', { spec: { traffic: [{ configurationName: 'svc', percent: 100, latestRevision: true }] } }]],
    wantStatusUpdates: [serviceStatus({ ConfigurationsReady: 'True', RoutesReady: RouteOutOfDate, Ready: RouteOutOfDate })],
  },
  {
    name: 'configuration not owned',
    objects: [svc(), foreign('Configuration')],
    wantCreates: ['Route svc'],
    wantStatusUpdates: [
      serviceStatus({
        ConfigurationsReady: 'False NotOwned: There is an existing Configuration "svc" that we do not own.',
        RoutesReady: 'Unknown',
        Ready: 'False NotOwned: There is an existing Configuration "svc" that we do not own.',
      }),
    ],
    wantEvents: [created('Route')],
    then: outcome({ configuration: { outcome: 'notOwned', name: 'svc' } }),
  },
  {
    name: 'route not owned',
    objects: [svc(), foreign('Route')],
    wantCreates: ['Configuration svc'],
    wantStatusUpdates: [
      serviceStatus({
        ConfigurationsReady: ConfigurationOutOfDate,
        RoutesReady: 'False NotOwned: There is an existing Route "svc" that we do not own.',
        Ready: 'False NotOwned: There is an existing Route "svc" that we do not own.',
      }),
    ],
    wantEvents: [created('Configuration')],
    then: outcome({ route: { outcome: 'notOwned', name: 'svc' } }),
  },
  {
    name: 'failure creating configuration',
    objects: [svc()],
    given: [(c) => c.kube.failNext('apply', Resources.Configuration, refused(422, 'Invalid', 'inducing failure for create configurations'))],
    wantCreates: ['Configuration svc'],
    wantStatusUpdates: [
      serviceStatus({
        ConfigurationsReady: 'False CreationFailed: failed to create Configuration "svc": inducing failure for create configurations',
        RoutesReady: 'Unknown',
        Ready: 'False CreationFailed: failed to create Configuration "svc": inducing failure for create configurations',
      }),
    ],
    wantEvents: ['Warning CreationFailed failed to create Configuration "svc": inducing failure for create configurations'],
    wantErr: 'inducing failure for create configurations',
  },
  {
    name: 'failure creating route',
    objects: [svc()],
    given: [(c) => c.kube.failNext('apply', Resources.Route, refused(422, 'Invalid', 'inducing failure for create routes'))],
    wantCreates: ['Configuration svc', 'Route svc'],
    wantStatusUpdates: [
      serviceStatus({
        ConfigurationsReady: 'Unknown',
        RoutesReady: 'False CreationFailed: failed to create Route "svc": inducing failure for create routes',
        Ready: 'False CreationFailed: failed to create Route "svc": inducing failure for create routes',
      }),
    ],
    wantEvents: [created('Configuration'), 'Warning CreationFailed failed to create Route "svc": inducing failure for create routes'],
    wantErr: 'inducing failure for create routes',
  },
  {
    name: 'failure updating configuration',
    objects: [svc()],
    given: [
      ...ready,
      edit<Service>(Resources.Service, withImage('nginx:2')),
      // A changed field of a child wholly the Service's is written as upstream writes it: an update (PUT).
      (c) => c.kube.failNext('update', Resources.Configuration, refused(422, 'Invalid', 'inducing failure for update configurations')),
    ],
    wantUpdates: ['Configuration svc'],
    wantStatusUpdates: [
      serviceStatus({
        ConfigurationsReady: 'False InternalError: failed to update Configuration "svc": inducing failure for update configurations',
        RoutesReady: 'True',
        Ready: 'False InternalError: failed to update Configuration "svc": inducing failure for update configurations',
      }),
    ],
    wantEvents: ['Warning InternalError failed to update Configuration "svc": inducing failure for update configurations'],
    wantErr: 'inducing failure for update configurations',
  },
  {
    name: 'bring-your-own revision name: the route waits for that revision',
    objects: [svc(byoName('svc-blue'))],
    wantCreates: ['Configuration svc'],
    wantStatusUpdates: [serviceStatus({ ConfigurationsReady: ConfigurationOutOfDate, RoutesReady: 'Unknown', Ready: ConfigurationOutOfDate })],
    wantEvents: [created('Configuration')],
    then: outcome({ route: { outcome: 'held', reason: 'waiting for Revision "svc-blue"' } }),
  },
];

describe('Service pass, table', () => {
  tableTest(rows, setup);
});
