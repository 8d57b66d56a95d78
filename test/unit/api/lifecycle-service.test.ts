import { describe, expect, it } from 'vitest';
import {
  initializeServiceConditions,
  isServiceReady,
  markConfigurationNotOwned,
  markConfigurationNotReconciled,
  markRevisionNameTaken,
  markRouteNotMigrated,
  markRouteNotOwned,
  markRouteNotReconciled,
  markRouteNotYetReady,
  markRoutesPending,
  propagateConfigurationStatus,
  propagateRouteStatus,
  serviceConditionSet,
  type ServiceStatus,
} from '../../../api/lifecycle/service.js';

const T0 = '2025-01-01T00:00:00Z';
const T1 = '2025-01-01T00:01:00Z';
const T2 = '2025-01-01T00:02:00Z';

function fresh(): ServiceStatus {
  const status: ServiceStatus = {};
  initializeServiceConditions(status, T0);
  return status;
}

describe('Service condition set', () => {
  it('is Ready over ConfigurationsReady and RoutesReady', () => {
    expect(serviceConditionSet.happy).toBe('Ready');
    expect(serviceConditionSet.dependents).toEqual(['ConfigurationsReady', 'RoutesReady']);
    expect(fresh()).toEqual({
      conditions: [
        { type: 'ConfigurationsReady', status: 'Unknown', lastTransitionTime: T0 },
        { type: 'Ready', status: 'Unknown', lastTransitionTime: T0 },
        { type: 'RoutesReady', status: 'Unknown', lastTransitionTime: T0 },
      ],
    });
  });
});

describe('ownership', () => {
  it('a foreign Configuration → ConfigurationsReady False NotOwned, Ready False', () => {
    const status = fresh();
    markConfigurationNotOwned(status, 'hello', T1);
    const message = 'There is an existing Configuration "hello" that we do not own.';
    expect(status.conditions).toEqual([
      { type: 'ConfigurationsReady', status: 'False', reason: 'NotOwned', message, lastTransitionTime: T1 },
      { type: 'Ready', status: 'False', reason: 'NotOwned', message, lastTransitionTime: T1 },
      { type: 'RoutesReady', status: 'Unknown', lastTransitionTime: T0 },
    ]);
  });

  it('a foreign Route → RoutesReady False NotOwned, Ready False', () => {
    const status = fresh();
    markRouteNotOwned(status, 'hello', T1);
    const message = 'There is an existing Route "hello" that we do not own.';
    expect(status.conditions).toEqual([
      { type: 'ConfigurationsReady', status: 'Unknown', lastTransitionTime: T0 },
      { type: 'Ready', status: 'False', reason: 'NotOwned', message, lastTransitionTime: T1 },
      { type: 'RoutesReady', status: 'False', reason: 'NotOwned', message, lastTransitionTime: T1 },
    ]);
  });
});

describe('out of date children', () => {
  it('stale Configuration → ConfigurationsReady Unknown OutOfDate', () => {
    const status = fresh();
    markConfigurationNotReconciled(status, T1);
    const message = 'The Configuration is still working to reflect the latest desired specification.';
    expect(status.conditions).toEqual([
      { type: 'ConfigurationsReady', status: 'Unknown', reason: 'OutOfDate', message, lastTransitionTime: T1 },
      { type: 'Ready', status: 'Unknown', reason: 'OutOfDate', message, lastTransitionTime: T1 },
      { type: 'RoutesReady', status: 'Unknown', lastTransitionTime: T0 },
    ]);
  });

  it('stale Route → RoutesReady Unknown OutOfDate (markRouteNotReconciled = markRouteNotYetReady)', () => {
    const message = 'The Route is still working to reflect the latest desired specification.';
    for (const mark of [markRouteNotReconciled, markRouteNotYetReady]) {
      const status = fresh();
      mark(status, T1);
      expect(status.conditions).toEqual([
        { type: 'ConfigurationsReady', status: 'Unknown', lastTransitionTime: T0 },
        { type: 'Ready', status: 'Unknown', reason: 'OutOfDate', message, lastTransitionTime: T1 },
        { type: 'RoutesReady', status: 'Unknown', reason: 'OutOfDate', message, lastTransitionTime: T1 },
      ]);
    }
  });

  it('an OutOfDate Route does not hide a failed Configuration: Ready stays False', () => {
    const status = fresh();
    markConfigurationNotOwned(status, 'hello', T1);
    markRouteNotReconciled(status, T2);
    expect(serviceConditionSet.get(status, 'Ready')).toEqual({
      type: 'Ready',
      status: 'False',
      reason: 'NotOwned',
      message: 'There is an existing Configuration "hello" that we do not own.',
      lastTransitionTime: T1,
    });
  });
});

describe('traffic not migrated', () => {
  it('Route Ready but traffic not migrated → RoutesReady Unknown TrafficNotMigrated', () => {
    const status = fresh();
    markRouteNotMigrated(status, T1);
    const message = 'Traffic is not yet migrated to the latest revision.';
    expect(status.conditions).toEqual([
      { type: 'ConfigurationsReady', status: 'Unknown', lastTransitionTime: T0 },
      { type: 'Ready', status: 'Unknown', reason: 'TrafficNotMigrated', message, lastTransitionTime: T1 },
      { type: 'RoutesReady', status: 'Unknown', reason: 'TrafficNotMigrated', message, lastTransitionTime: T1 },
    ]);
  });
});

describe('BYO name taken', () => {
  it('RoutesReady False RevisionNameTaken', () => {
    const status = fresh();
    markRevisionNameTaken(status, 'hello-v2', T1);
    const message = 'The revision name "hello-v2" is taken by a conflicting Revision, so traffic will not be migrated';
    expect(status.conditions).toEqual([
      { type: 'ConfigurationsReady', status: 'Unknown', lastTransitionTime: T0 },
      { type: 'Ready', status: 'False', reason: 'RevisionNameTaken', message, lastTransitionTime: T1 },
      { type: 'RoutesReady', status: 'False', reason: 'RevisionNameTaken', message, lastTransitionTime: T1 },
    ]);
  });
});

describe('markRoutesPending', () => {
  it('RoutesReady Unknown with the caller-chosen reason and message', () => {
    const status = fresh();
    markRoutesPending(status, 'RouteReconcilerMissing', 'Routes are not reconciled yet.', T1);
    expect(status.conditions).toEqual([
      { type: 'ConfigurationsReady', status: 'Unknown', lastTransitionTime: T0 },
      { type: 'Ready', status: 'Unknown', reason: 'RouteReconcilerMissing', message: 'Routes are not reconciled yet.', lastTransitionTime: T1 },
      { type: 'RoutesReady', status: 'Unknown', reason: 'RouteReconcilerMissing', message: 'Routes are not reconciled yet.', lastTransitionTime: T1 },
    ]);
  });
});

describe('propagation', () => {
  it('copies latestCreated/latestReady and mirrors a True Configuration Ready', () => {
    const status = fresh();
    propagateConfigurationStatus(
      status,
      {
        observedGeneration: 1,
        latestCreatedRevisionName: 'hello-00001',
        latestReadyRevisionName: 'hello-00001',
        conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: T0 }],
      },
      T1,
    );
    expect(status).toEqual({
      latestCreatedRevisionName: 'hello-00001',
      latestReadyRevisionName: 'hello-00001',
      conditions: [
        { type: 'ConfigurationsReady', status: 'True', lastTransitionTime: T1 },
        { type: 'Ready', status: 'Unknown', lastTransitionTime: T0 },
        { type: 'RoutesReady', status: 'Unknown', lastTransitionTime: T0 },
      ],
    });
  });

  it('mirrors a failed Configuration (RevisionFailed) into ConfigurationsReady and Ready', () => {
    const status = fresh();
    const message = 'Revision "hello-00002" failed with message: Container failed with: boom.';
    propagateConfigurationStatus(
      status,
      {
        latestCreatedRevisionName: 'hello-00002',
        latestReadyRevisionName: 'hello-00001',
        conditions: [{ type: 'Ready', status: 'False', reason: 'RevisionFailed', message, lastTransitionTime: T0 }],
      },
      T1,
    );
    expect(status).toEqual({
      latestCreatedRevisionName: 'hello-00002',
      latestReadyRevisionName: 'hello-00001',
      conditions: [
        { type: 'ConfigurationsReady', status: 'False', reason: 'RevisionFailed', message, lastTransitionTime: T1 },
        { type: 'Ready', status: 'False', reason: 'RevisionFailed', message, lastTransitionTime: T1 },
        { type: 'RoutesReady', status: 'Unknown', lastTransitionTime: T0 },
      ],
    });
  });

  it('mirrors an Unknown Configuration Ready with its reason, and clears fields the Configuration lacks', () => {
    const status: ServiceStatus = { ...fresh(), latestReadyRevisionName: 'old-00001', latestCreatedRevisionName: 'old-00001' };
    propagateConfigurationStatus(
      status,
      { latestCreatedRevisionName: 'hello-00001', conditions: [{ type: 'Ready', status: 'Unknown', reason: 'Waiting', message: 'w' }] },
      T1,
    );
    expect(status).toEqual({
      latestCreatedRevisionName: 'hello-00001',
      conditions: [
        { type: 'ConfigurationsReady', status: 'Unknown', reason: 'Waiting', message: 'w', lastTransitionTime: T1 },
        { type: 'Ready', status: 'Unknown', reason: 'Waiting', message: 'w', lastTransitionTime: T1 },
        { type: 'RoutesReady', status: 'Unknown', lastTransitionTime: T0 },
      ],
    });
  });

  it('a Configuration without a Ready condition copies the fields only', () => {
    const status = fresh();
    propagateConfigurationStatus(status, { latestCreatedRevisionName: 'hello-00001' }, T1);
    expect(status).toEqual({ ...fresh(), latestCreatedRevisionName: 'hello-00001' });
  });

  it('copies url/address/traffic and mirrors Route Ready; Service Ready = both True', () => {
    const status = fresh();
    propagateConfigurationStatus(
      status,
      { latestCreatedRevisionName: 'hello-00001', latestReadyRevisionName: 'hello-00001', conditions: [{ type: 'Ready', status: 'True' }] },
      T1,
    );
    const routeStatus = {
      url: 'http://hello.default.example.com',
      address: { url: 'http://hello.default.svc.cluster.local' },
      traffic: [{ revisionName: 'hello-00001', percent: 100, latestRevision: true }],
      conditions: [{ type: 'Ready', status: 'True' as const }],
    };
    propagateRouteStatus(status, routeStatus, T2);
    expect(status).toEqual({
      latestCreatedRevisionName: 'hello-00001',
      latestReadyRevisionName: 'hello-00001',
      url: 'http://hello.default.example.com',
      address: { url: 'http://hello.default.svc.cluster.local' },
      traffic: [{ revisionName: 'hello-00001', percent: 100, latestRevision: true }],
      conditions: [
        { type: 'ConfigurationsReady', status: 'True', lastTransitionTime: T1 },
        { type: 'Ready', status: 'True', lastTransitionTime: T2 },
        { type: 'RoutesReady', status: 'True', lastTransitionTime: T2 },
      ],
    });
    expect(isServiceReady(status)).toBe(true);
    // Deep copies: later edits of the Route status do not leak into the Service.
    routeStatus.traffic[0]!.percent = 50;
    routeStatus.address.url = 'x';
    expect(status.traffic?.[0]?.percent).toBe(100);
    expect(status.address?.url).toBe('http://hello.default.svc.cluster.local');
  });

  it('mirrors a False and an Unknown Route Ready into RoutesReady', () => {
    const failed = fresh();
    propagateRouteStatus(failed, { conditions: [{ type: 'Ready', status: 'False', reason: 'RevisionMissing', message: 'm' }] }, T1);
    expect(serviceConditionSet.get(failed, 'RoutesReady')).toEqual({
      type: 'RoutesReady',
      status: 'False',
      reason: 'RevisionMissing',
      message: 'm',
      lastTransitionTime: T1,
    });
    expect(serviceConditionSet.get(failed, 'Ready')?.status).toBe('False');

    const pending = { ...fresh(), url: 'http://stale', traffic: [] };
    propagateRouteStatus(pending, { conditions: [{ type: 'Ready', status: 'Unknown', reason: 'IngressNotConfigured', message: 'i' }] }, T1);
    expect(pending).toEqual({
      conditions: [
        { type: 'ConfigurationsReady', status: 'Unknown', lastTransitionTime: T0 },
        { type: 'Ready', status: 'Unknown', reason: 'IngressNotConfigured', message: 'i', lastTransitionTime: T1 },
        { type: 'RoutesReady', status: 'Unknown', reason: 'IngressNotConfigured', message: 'i', lastTransitionTime: T1 },
      ],
    });
  });
});
