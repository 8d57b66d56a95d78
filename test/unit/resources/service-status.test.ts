import { describe, expect, it } from 'vitest';
import type { Revision, Route, TrafficTarget } from '../../../api/serving.js';
import { computeServiceStatus, isTrafficNotMigrated } from '../../../resources/service-status.js';
import { revision } from '../../fixtures/revision.js';
import {
  childConfiguration,
  childRoute,
  cond,
  ownedBy,
  svc,
  T0,
  T1,
  T2,
  withByoName,
  withConditions,
  withConfigStatus,
  withObservedGeneration,
} from '../../fixtures/status.js';

const URL = 'http://hello.default.example.com';
const ADDRESS = { url: 'http://hello.default.svc.cluster.local' };
const TRAFFIC_1: TrafficTarget[] = [{ revisionName: 'hello-00001', latestRevision: true, percent: 100 }];

const OUT_OF_DATE_CFG = 'The Configuration is still working to reflect the latest desired specification.';
const OUT_OF_DATE_ROUTE = 'The Route is still working to reflect the latest desired specification.';

/** Configuration reconciled at `gen` with latestCreated = latestReady = hello-00001 and Ready True. */
const readyConfiguration = (gen = 1) =>
  childConfiguration(gen, withConfigStatus('hello-00001', 'hello-00001'), withConditions(cond('Ready', 'True', T0)));

/** Route reconciled at `gen`, Ready True, all traffic on hello-00001. */
const readyRoute = (gen = 1, ...opts: ((r: Route) => void)[]) =>
  childRoute(
    gen,
    (r) => void (r.status = { ...r.status, url: URL, address: { ...ADDRESS }, traffic: structuredClone(TRAFFIC_1) }),
    withConditions(cond('Ready', 'True', T0)),
    ...opts,
  );

/** A Revision controlled by the Configuration `hello` of these tests (uid `uid-cfg-hello`). */
const byoRevision = (name: string, generation: string, ...opts: ((r: Revision) => void)[]) =>
  revision(
    name,
    'default',
    (r) =>
      void (r.metadata.ownerReferences = [
        {
          apiVersion: 'serving.knative.dev/v1',
          kind: 'Configuration',
          name: 'hello',
          uid: 'uid-cfg-hello',
          controller: true,
          blockOwnerDeletion: true,
        },
      ]),
    (r) => void (r.metadata.labels = { ...r.metadata.labels, 'serving.knative.dev/configurationGeneration': generation }),
    ...opts,
  );

describe('computeServiceStatus', () => {
  describe('propagation from the children', () => {
    it('copies latestCreated/latestReady/url/address/traffic and is Ready when both children are Ready (golden)', () => {
      const status = computeServiceStatus({ service: svc(), configuration: readyConfiguration(), route: readyRoute() }, T1);
      expect(status).toEqual({
        observedGeneration: 1,
        latestCreatedRevisionName: 'hello-00001',
        latestReadyRevisionName: 'hello-00001',
        url: URL,
        address: ADDRESS,
        traffic: TRAFFIC_1,
        conditions: [cond('ConfigurationsReady', 'True', T1), cond('Ready', 'True', T1), cond('RoutesReady', 'True', T1)],
      });
    });

    it('mirrors a failed Configuration and an Unknown Route with their reasons and messages (golden)', () => {
      const cfgMsg = 'Revision "hello-00002" failed with message: Container failed with: boom.';
      const configuration = childConfiguration(
        2,
        withConfigStatus('hello-00002', 'hello-00001'),
        withConditions(cond('Ready', 'False', T0, 'RevisionFailed', cfgMsg)),
      );
      const route = readyRoute(1, withConditions(cond('Ready', 'Unknown', T0, 'IngressNotConfigured', 'Ingress has not yet been reconciled.')));
      const status = computeServiceStatus({ service: svc(), configuration, route }, T1);
      expect(status).toEqual({
        observedGeneration: 1,
        latestCreatedRevisionName: 'hello-00002',
        latestReadyRevisionName: 'hello-00001',
        url: URL,
        address: ADDRESS,
        traffic: TRAFFIC_1,
        conditions: [
          cond('ConfigurationsReady', 'False', T1, 'RevisionFailed', cfgMsg),
          cond('Ready', 'False', T1, 'RevisionFailed', cfgMsg),
          cond('RoutesReady', 'Unknown', T1, 'IngressNotConfigured', 'Ingress has not yet been reconciled.'),
        ],
      });
    });

    it('copies the children fields wholesale: fields absent on the child are cleared on the Service', () => {
      const service = svc(
        (s) => void (s.status = { observedGeneration: 1, url: 'http://old', traffic: TRAFFIC_1, latestCreatedRevisionName: 'old' }),
      );
      const configuration = childConfiguration(1, withConfigStatus(undefined, undefined), withConditions(cond('Ready', 'Unknown', T0)));
      const route = childRoute(1, withConditions(cond('Ready', 'Unknown', T0)));
      const status = computeServiceStatus({ service, configuration, route }, T1);
      expect(status.url).toBeUndefined();
      expect(status.traffic).toBeUndefined();
      expect(status.address).toBeUndefined();
      expect(status.latestCreatedRevisionName).toBeUndefined();
      expect(status.latestReadyRevisionName).toBeUndefined();
    });

    it('deep-copies address and traffic (later edits of the Route do not leak into the Service status)', () => {
      const route = readyRoute();
      const status = computeServiceStatus({ service: svc(), configuration: readyConfiguration(), route }, T1);
      route.status!.traffic![0]!.percent = 50;
      route.status!.address!.url = 'changed';
      expect(status.traffic).toEqual(TRAFFIC_1);
      expect(status.address).toEqual(ADDRESS);
    });

    it('does not mutate the Service it is given', () => {
      const service = svc();
      computeServiceStatus({ service, configuration: readyConfiguration(), route: readyRoute() }, T1);
      expect(service).toEqual(svc());
    });
  });

  describe('children not owned by the Service', () => {
    it('a foreign Configuration → ConfigurationsReady False NotOwned, Route not looked at (golden)', () => {
      const msg = 'There is an existing Configuration "hello" that we do not own.';
      const foreign = childConfiguration(
        1,
        ownedBy('uid-other'),
        withConfigStatus('hello-00001', 'hello-00001'),
        withConditions(cond('Ready', 'True', T0)),
      );
      expect(computeServiceStatus({ service: svc(), configuration: foreign, route: readyRoute() }, T1)).toEqual({
        observedGeneration: 1,
        conditions: [
          cond('ConfigurationsReady', 'False', T1, 'NotOwned', msg),
          cond('Ready', 'False', T1, 'NotOwned', msg),
          cond('RoutesReady', 'Unknown', T1),
        ],
      });
    });

    it('a Configuration without any controller reference is not owned either', () => {
      const cfg = readyConfiguration();
      cfg.metadata.ownerReferences = [{ ...cfg.metadata.ownerReferences![0]!, controller: false }];
      const status = computeServiceStatus({ service: svc(), configuration: cfg, route: readyRoute() }, T1);
      expect(status.conditions?.find((c) => c.type === 'ConfigurationsReady')).toEqual(
        cond('ConfigurationsReady', 'False', T1, 'NotOwned', 'There is an existing Configuration "hello" that we do not own.'),
      );
    });

    it('a foreign Route → RoutesReady False NotOwned; the Configuration part is still propagated (golden)', () => {
      const msg = 'There is an existing Route "hello" that we do not own.';
      const route = readyRoute(1, ownedBy('uid-other'));
      expect(computeServiceStatus({ service: svc(), configuration: readyConfiguration(), route }, T1)).toEqual({
        observedGeneration: 1,
        latestCreatedRevisionName: 'hello-00001',
        latestReadyRevisionName: 'hello-00001',
        conditions: [
          cond('ConfigurationsReady', 'True', T1),
          cond('Ready', 'False', T1, 'NotOwned', msg),
          cond('RoutesReady', 'False', T1, 'NotOwned', msg),
        ],
      });
    });
  });

  describe('children with a stale observedGeneration', () => {
    it('a Configuration that has not observed its generation → ConfigurationsReady Unknown OutOfDate, nothing copied (golden)', () => {
      const cfg = childConfiguration(
        2,
        withObservedGeneration(1),
        withConfigStatus('hello-00001', 'hello-00001'),
        withConditions(cond('Ready', 'True', T0)),
      );
      expect(computeServiceStatus({ service: svc(), configuration: cfg, route: readyRoute() }, T1)).toEqual({
        observedGeneration: 1,
        url: URL,
        address: ADDRESS,
        traffic: TRAFFIC_1,
        conditions: [
          cond('ConfigurationsReady', 'Unknown', T1, 'OutOfDate', OUT_OF_DATE_CFG),
          cond('Ready', 'Unknown', T1, 'OutOfDate', OUT_OF_DATE_CFG),
          cond('RoutesReady', 'True', T1),
        ],
      });
    });

    it('a Route that has not observed its generation → RoutesReady Unknown OutOfDate, url/address/traffic not copied (golden)', () => {
      const route = readyRoute(3, withObservedGeneration(2));
      expect(computeServiceStatus({ service: svc(), configuration: readyConfiguration(), route }, T1)).toEqual({
        observedGeneration: 1,
        latestCreatedRevisionName: 'hello-00001',
        latestReadyRevisionName: 'hello-00001',
        conditions: [
          cond('ConfigurationsReady', 'True', T1),
          cond('Ready', 'Unknown', T1, 'OutOfDate', OUT_OF_DATE_ROUTE),
          cond('RoutesReady', 'Unknown', T1, 'OutOfDate', OUT_OF_DATE_ROUTE),
        ],
      });
    });

    it('a missing Route (not created / not yet visible) → RoutesReady Unknown OutOfDate (golden)', () => {
      expect(computeServiceStatus({ service: svc(), configuration: readyConfiguration(), route: undefined }, T1)).toEqual({
        observedGeneration: 1,
        latestCreatedRevisionName: 'hello-00001',
        latestReadyRevisionName: 'hello-00001',
        conditions: [
          cond('ConfigurationsReady', 'True', T1),
          cond('Ready', 'Unknown', T1, 'OutOfDate', OUT_OF_DATE_ROUTE),
          cond('RoutesReady', 'Unknown', T1, 'OutOfDate', OUT_OF_DATE_ROUTE),
        ],
      });
    });

    it('a missing Configuration → ConfigurationsReady Unknown OutOfDate, Route not looked at', () => {
      expect(computeServiceStatus({ service: svc(), configuration: undefined, route: readyRoute() }, T1)).toEqual({
        observedGeneration: 1,
        conditions: [
          cond('ConfigurationsReady', 'Unknown', T1, 'OutOfDate', OUT_OF_DATE_CFG),
          cond('Ready', 'Unknown', T1, 'OutOfDate', OUT_OF_DATE_CFG),
          cond('RoutesReady', 'Unknown', T1),
        ],
      });
    });
  });

  describe('TrafficNotMigrated', () => {
    it('Route Ready but its status traffic is not on the latest ready revision → RoutesReady Unknown TrafficNotMigrated (golden)', () => {
      const msg = 'Traffic is not yet migrated to the latest revision.';
      const cfg = childConfiguration(2, withConfigStatus('hello-00002', 'hello-00002'), withConditions(cond('Ready', 'True', T0)));
      expect(computeServiceStatus({ service: svc(), configuration: cfg, route: readyRoute() }, T1)).toEqual({
        observedGeneration: 1,
        latestCreatedRevisionName: 'hello-00002',
        latestReadyRevisionName: 'hello-00002',
        url: URL,
        address: ADDRESS,
        traffic: TRAFFIC_1,
        conditions: [
          cond('ConfigurationsReady', 'True', T1),
          cond('Ready', 'Unknown', T1, 'TrafficNotMigrated', msg),
          cond('RoutesReady', 'Unknown', T1, 'TrafficNotMigrated', msg),
        ],
      });
    });

    it('is not checked when the Route is not Ready', () => {
      const cfg = childConfiguration(2, withConfigStatus('hello-00002', 'hello-00002'), withConditions(cond('Ready', 'True', T0)));
      const route = readyRoute(1, withConditions(cond('Ready', 'Unknown', T0, 'IngressNotConfigured', 'x')));
      const status = computeServiceStatus({ service: svc(), configuration: cfg, route }, T1);
      expect(status.conditions?.find((c) => c.type === 'RoutesReady')).toEqual(cond('RoutesReady', 'Unknown', T1, 'IngressNotConfigured', 'x'));
    });
  });

  describe('isTrafficNotMigrated', () => {
    const cfg = childConfiguration(1, withConfigStatus('hello-00002', 'hello-00002'));
    const route = (spec: TrafficTarget[], status: TrafficTarget[]) =>
      childRoute(
        1,
        (r) => void (r.spec.traffic = spec),
        (r) => void (r.status = { ...r.status, traffic: status }),
      );

    it('configuration targets resolve to latestReady; url and latestRevision are ignored', () => {
      expect(
        isTrafficNotMigrated(
          route(
            [
              { configurationName: 'hello', latestRevision: true, percent: 90 },
              { tag: 'old', revisionName: 'hello-00001', latestRevision: false, percent: 10 },
            ],
            [
              { revisionName: 'hello-00002', latestRevision: true, percent: 90 },
              { tag: 'old', revisionName: 'hello-00001', percent: 10, url: 'http://old-hello.default.example.com' },
            ],
          ),
          cfg,
        ),
      ).toBe(false);
    });

    it('a different revision, percent or tag counts as not migrated', () => {
      const spec: TrafficTarget[] = [{ configurationName: 'hello', latestRevision: true, percent: 100 }];
      expect(isTrafficNotMigrated(route(spec, [{ revisionName: 'hello-00001', latestRevision: true, percent: 100 }]), cfg)).toBe(true);
      expect(isTrafficNotMigrated(route(spec, [{ revisionName: 'hello-00002', latestRevision: true, percent: 50 }]), cfg)).toBe(true);
      expect(isTrafficNotMigrated(route(spec, [{ tag: 'x', revisionName: 'hello-00002', latestRevision: true, percent: 100 }]), cfg)).toBe(true);
    });

    it('a length mismatch counts as not migrated', () => {
      const spec: TrafficTarget[] = [{ configurationName: 'hello', latestRevision: true, percent: 100 }];
      expect(isTrafficNotMigrated(route(spec, []), cfg)).toBe(true);
      expect(
        isTrafficNotMigrated(
          route(spec, [
            { revisionName: 'hello-00002', percent: 100 },
            { revisionName: 'hello-00001', percent: 0 },
          ]),
          cfg,
        ),
      ).toBe(true);
    });

    it("only targets of this Configuration are resolved (another configuration's target stays as is)", () => {
      expect(isTrafficNotMigrated(route([{ configurationName: 'other', percent: 100 }], [{ revisionName: 'hello-00002', percent: 100 }]), cfg)).toBe(
        true,
      );
    });
  });

  describe('BYO revision name', () => {
    it('the Route part is not touched while the Configuration has not observed the new generation (golden)', () => {
      const previous = {
        observedGeneration: 1,
        latestCreatedRevisionName: 'hello-v1',
        latestReadyRevisionName: 'hello-v1',
        url: URL,
        address: ADDRESS,
        traffic: [{ revisionName: 'hello-v1', latestRevision: true, percent: 100 }],
        conditions: [cond('ConfigurationsReady', 'True', T0), cond('Ready', 'True', T0), cond('RoutesReady', 'True', T0)],
      };
      const service = svc(
        withByoName('hello-v2'),
        (s) => void (s.metadata.generation = 2),
        (s) => void (s.status = structuredClone(previous)),
      );
      const cfg = childConfiguration(
        2,
        withByoName('hello-v2'),
        withObservedGeneration(1),
        withConfigStatus('hello-v1', 'hello-v1'),
        withConditions(cond('Ready', 'True', T0)),
      );
      // The Route already moved on (it would point at a Revision that does not exist yet).
      const route = childRoute(
        2,
        withConditions(cond('Ready', 'False', T0, 'RevisionMissing', 'Revision "hello-v2" referenced in traffic not found.')),
      );
      expect(computeServiceStatus({ service, configuration: cfg, route, byoRevision: undefined }, T1)).toEqual({
        ...previous,
        observedGeneration: 2,
        conditions: [
          cond('ConfigurationsReady', 'Unknown', T1, 'OutOfDate', OUT_OF_DATE_CFG),
          cond('Ready', 'Unknown', T1, 'OutOfDate', OUT_OF_DATE_CFG),
          cond('RoutesReady', 'True', T0),
        ],
      });
    });

    it('once the Configuration observed the generation and owns the named Revision, the Route is propagated', () => {
      const service = svc(withByoName('hello-v2'));
      const cfg = childConfiguration(1, withByoName('hello-v2'), withConfigStatus('hello-v2', 'hello-v2'), withConditions(cond('Ready', 'True', T0)));
      const route = childRoute(
        1,
        (r) => void (r.status = { ...r.status, url: URL, traffic: [{ revisionName: 'hello-v2', latestRevision: true, percent: 100 }] }),
        withConditions(cond('Ready', 'True', T0)),
      );
      const status = computeServiceStatus({ service, configuration: cfg, route, byoRevision: byoRevision('hello-v2', '1') }, T1);
      expect(status.url).toBe(URL);
      expect(status.conditions).toEqual([cond('ConfigurationsReady', 'True', T1), cond('Ready', 'True', T1), cond('RoutesReady', 'True', T1)]);
    });
  });

  describe('BYO name taken by a conflicting Revision', () => {
    const revFailed = 'Revision creation failed with message: revisions.serving.knative.dev "hello-v2" already exists.';
    const taken = 'The revision name "hello-v2" is taken by a conflicting Revision, so traffic will not be migrated';
    const cfg = () =>
      childConfiguration(
        1,
        withByoName('hello-v2'),
        withConfigStatus('hello-v1', 'hello-v1'),
        withConditions(cond('Ready', 'False', T0, 'RevisionFailed', revFailed)),
      );

    it('a Revision of that name controlled by someone else → RoutesReady False RevisionNameTaken, Route not propagated (golden)', () => {
      const foreign = byoRevision('hello-v2', '1', ownedBy('uid-other-cfg'));
      expect(
        computeServiceStatus({ service: svc(withByoName('hello-v2')), configuration: cfg(), route: readyRoute(), byoRevision: foreign }, T1),
      ).toEqual({
        observedGeneration: 1,
        latestCreatedRevisionName: 'hello-v1',
        latestReadyRevisionName: 'hello-v1',
        conditions: [
          cond('ConfigurationsReady', 'False', T1, 'RevisionFailed', revFailed),
          cond('Ready', 'False', T1, 'RevisionNameTaken', taken),
          cond('RoutesReady', 'False', T1, 'RevisionNameTaken', taken),
        ],
      });
    });

    it('our own Revision of another generation with a different spec is taken too', () => {
      const stale = byoRevision('hello-v2', '7', (r) => void (r.spec = { containers: [{ image: 'other' }] }));
      const status = computeServiceStatus(
        { service: svc(withByoName('hello-v2')), configuration: cfg(), route: readyRoute(), byoRevision: stale },
        T1,
      );
      expect(status.conditions?.find((c) => c.type === 'RoutesReady')).toEqual(cond('RoutesReady', 'False', T1, 'RevisionNameTaken', taken));
    });

    it('no Revision of that name yet → not taken, the Route is propagated', () => {
      const route = readyRoute(1, (r) => void (r.status!.traffic = [{ revisionName: 'hello-v1', latestRevision: true, percent: 100 }]));
      const status = computeServiceStatus({ service: svc(withByoName('hello-v2')), configuration: cfg(), route, byoRevision: undefined }, T1);
      expect(status.conditions?.find((c) => c.type === 'RoutesReady')).toEqual(cond('RoutesReady', 'True', T1));
      expect(status.url).toBe(URL);
    });
  });

  describe('observedGeneration and lastTransitionTime', () => {
    it('unchanged conditions keep their lastTransitionTime across computations with a different now', () => {
      const obs = { configuration: readyConfiguration(), route: readyRoute() };
      const first = computeServiceStatus({ service: svc(), ...obs }, T1);
      const second = computeServiceStatus({ service: svc((s) => void (s.status = first)), ...obs }, T2);
      expect(second).toEqual(first);
      expect(second.conditions?.map((c) => c.lastTransitionTime)).toEqual([T1, T1, T1]);
    });

    it('only the conditions that change get the new time', () => {
      const first = computeServiceStatus({ service: svc(), configuration: readyConfiguration(), route: readyRoute() }, T1);
      const route = readyRoute(1, withConditions(cond('Ready', 'Unknown', T0, 'IngressNotConfigured', 'Ingress has not yet been reconciled.')));
      const second = computeServiceStatus({ service: svc((s) => void (s.status = first)), configuration: readyConfiguration(), route }, T2);
      expect(second.conditions).toEqual([
        cond('ConfigurationsReady', 'True', T1),
        cond('Ready', 'Unknown', T2, 'IngressNotConfigured', 'Ingress has not yet been reconciled.'),
        cond('RoutesReady', 'Unknown', T2, 'IngressNotConfigured', 'Ingress has not yet been reconciled.'),
      ]);
    });

    it('a new Service generation bumps observedGeneration; Ready that ends where it was keeps its time', () => {
      const first = computeServiceStatus({ service: svc(), configuration: readyConfiguration(), route: readyRoute() }, T1);
      const service = svc(
        (s) => void (s.metadata.generation = 2),
        (s) => void (s.status = first),
      );
      const second = computeServiceStatus({ service, configuration: readyConfiguration(), route: readyRoute() }, T2);
      expect(second).toEqual({ ...first, observedGeneration: 2 });
    });
  });
});
