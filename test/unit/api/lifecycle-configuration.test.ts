import { describe, expect, it } from 'vitest';
import {
  configurationConditionSet,
  type ConfigurationStatus,
  initializeConfigurationConditions,
  isConfigurationReady,
  isLatestReadyRevisionNameUpToDate,
  markLatestCreatedFailed,
  markRevisionCreationFailed,
  setLatestCreatedRevisionName,
  setLatestReadyRevisionName,
} from '../../../api/lifecycle/configuration.js';

const T0 = '2025-01-01T00:00:00Z';
const T1 = '2025-01-01T00:01:00Z';
const T2 = '2025-01-01T00:02:00Z';
const T3 = '2025-01-01T00:03:00Z';

function fresh(): ConfigurationStatus {
  const status: ConfigurationStatus = {};
  initializeConfigurationConditions(status, T0);
  return status;
}

describe('Configuration condition set', () => {
  it('has only Ready', () => {
    expect(configurationConditionSet.dependents).toEqual([]);
    expect(fresh()).toEqual({ conditions: [{ type: 'Ready', status: 'Unknown', lastTransitionTime: T0 }] });
  });
});

describe('latestCreated / latestReady', () => {
  it('latestCreatedRevisionName is set at once and Ready goes Unknown with no reason', () => {
    const status: ConfigurationStatus = {
      latestCreatedRevisionName: 'hello-00001',
      latestReadyRevisionName: 'hello-00001',
      conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: T0 }],
    };
    setLatestCreatedRevisionName(status, 'hello-00002', T1);
    expect(status).toEqual({
      latestCreatedRevisionName: 'hello-00002',
      latestReadyRevisionName: 'hello-00001',
      conditions: [{ type: 'Ready', status: 'Unknown', lastTransitionTime: T1 }],
    });
    expect(isConfigurationReady(status)).toBe(false);
  });

  it('setting latestCreated equal to latestReady leaves Ready alone', () => {
    const status: ConfigurationStatus = {
      latestReadyRevisionName: 'hello-00001',
      conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: T0 }],
    };
    setLatestCreatedRevisionName(status, 'hello-00001', T1);
    expect(status).toEqual({
      latestCreatedRevisionName: 'hello-00001',
      latestReadyRevisionName: 'hello-00001',
      conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: T0 }],
    });
  });

  it('Ready True when latestReady == latestCreated', () => {
    const status = fresh();
    setLatestCreatedRevisionName(status, 'hello-00001', T1);
    setLatestReadyRevisionName(status, 'hello-00001', T2);
    expect(status).toEqual({
      latestCreatedRevisionName: 'hello-00001',
      latestReadyRevisionName: 'hello-00001',
      conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: T2 }],
    });
    expect(isConfigurationReady(status)).toBe(true);
    expect(isLatestReadyRevisionNameUpToDate(status)).toBe(true);
  });

  it('an older ready revision becomes latestReady without making the Configuration Ready', () => {
    const status = fresh();
    setLatestCreatedRevisionName(status, 'hello-00002', T1);
    setLatestReadyRevisionName(status, 'hello-00001', T2);
    expect(status).toEqual({
      latestCreatedRevisionName: 'hello-00002',
      latestReadyRevisionName: 'hello-00001',
      conditions: [{ type: 'Ready', status: 'Unknown', lastTransitionTime: T0 }],
    });
    expect(isLatestReadyRevisionNameUpToDate(status)).toBe(false);
  });
});

describe('failures', () => {
  it('latest revision failing → Ready False RevisionFailed, latestReady unchanged', () => {
    const status: ConfigurationStatus = {
      latestCreatedRevisionName: 'hello-00001',
      latestReadyRevisionName: 'hello-00001',
      conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: T0 }],
    };
    setLatestCreatedRevisionName(status, 'hello-00002', T1);
    markLatestCreatedFailed(status, 'hello-00002', 'Container failed with: boom', T2);
    expect(status).toEqual({
      latestCreatedRevisionName: 'hello-00002',
      latestReadyRevisionName: 'hello-00001',
      conditions: [
        {
          type: 'Ready',
          status: 'False',
          reason: 'RevisionFailed',
          message: 'Revision "hello-00002" failed with message: Container failed with: boom.',
          lastTransitionTime: T2,
        },
      ],
    });
    expect(isLatestReadyRevisionNameUpToDate(status)).toBe(false);
  });

  it('revision creation failure → Ready False RevisionFailed "Revision creation failed with message: …"', () => {
    const status = fresh();
    markRevisionCreationFailed(status, 'admission webhook denied the request', T1);
    expect(status).toEqual({
      conditions: [
        {
          type: 'Ready',
          status: 'False',
          reason: 'RevisionFailed',
          message: 'Revision creation failed with message: admission webhook denied the request.',
          lastTransitionTime: T1,
        },
      ],
    });
  });

  it('a BYO name conflict is reported through markRevisionCreationFailed', () => {
    const status = fresh();
    markRevisionCreationFailed(status, 'revisions.serving.knative.dev "hello-v2" already exists', T1);
    expect(configurationConditionSet.get(status, 'Ready')).toEqual({
      type: 'Ready',
      status: 'False',
      reason: 'RevisionFailed',
      message: 'Revision creation failed with message: revisions.serving.knative.dev "hello-v2" already exists.',
      lastTransitionTime: T1,
    });
  });

  it('a failure recovers once the next revision is ready', () => {
    const status = fresh();
    setLatestCreatedRevisionName(status, 'hello-00002', T1);
    markLatestCreatedFailed(status, 'hello-00002', 'x', T2);
    setLatestCreatedRevisionName(status, 'hello-00003', T3);
    expect(configurationConditionSet.get(status, 'Ready')).toEqual({ type: 'Ready', status: 'Unknown', lastTransitionTime: T3 });
    setLatestReadyRevisionName(status, 'hello-00003', T3);
    expect(configurationConditionSet.get(status, 'Ready')).toEqual({ type: 'Ready', status: 'True', lastTransitionTime: T3 });
  });
});
