// config-leader-election: upstream's keys, legacy aliases, defaults and messages, the elector's own limits, and the
// shipped file (Tidal's fast hand-over as active keys, Knative's defaults in _example).
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { validateConfigMapForAdmission } from '../../../api/admission.js';
import { defaultLeaderElectionConfig, parseLeaderElectionConfig, type LeaderElectionConfig } from '../../../api/config/leader-election.js';
import { shippedConfigData } from '../../fixtures/shipped-config.js';

const parsed = (data: Record<string, string>): LeaderElectionConfig => {
  const p = parseLeaderElectionConfig(data);
  if (!p.ok) throw new Error(p.error);
  return p.value;
};
const refusal = (data: Record<string, string>) => validateConfigMapForAdmission('config-leader-election', data);

describe('config-leader-election', () => {
  it("is knative/pkg's 60s / 40s / 10s and one bucket when empty; the current keys win over the legacy ones", () => {
    expect(parsed({})).toEqual({ leaseDurationMs: 60_000, renewDeadlineMs: 40_000, retryPeriodMs: 10_000, buckets: 1 });
    expect(parsed({})).toEqual(defaultLeaderElectionConfig());
    expect(parsed({ leaseDuration: '30s', 'lease-duration': '15s', renewDeadline: '10s', retryPeriod: '2s', buckets: '10' })).toEqual({
      leaseDurationMs: 15_000,
      renewDeadlineMs: 10_000,
      retryPeriodMs: 2_000,
      buckets: 10,
    });
  });

  it("refuses upstream's bad values with its messages", () => {
    expect(refusal({ 'lease-duration': 'soon' })).toEqual([
      { path: 'lease-duration', message: 'failed to parse "lease-duration": time: invalid duration "soon"' },
    ]);
    expect(refusal({ buckets: '11' })).toEqual([{ path: 'buckets', message: 'buckets: value must be between 1 <= 11 <= 10' }]);
    expect(refusal({ buckets: '0' })).toEqual([{ path: 'buckets', message: 'buckets: value must be between 1 <= 0 <= 10' }]);
    expect(refusal({ buckets: '-1' })).toEqual([
      { path: 'buckets', message: 'failed to parse "buckets": strconv.ParseUint: parsing "-1": invalid syntax' },
    ]);
  });

  it('refuses timings the elector cannot run with, naming the key', () => {
    expect(refusal({ 'renew-deadline': '60s' })).toEqual([
      { path: 'renew-deadline', message: 'must be positive and shorter than the lease duration (60s), got "60s"' },
    ]);
    expect(refusal({ 'lease-duration': '1500ms', 'renew-deadline': '1s' })).toEqual([
      { path: 'lease-duration', message: 'must be a positive whole number of seconds, got "1500ms"' },
    ]);
    expect(refusal({ 'lease-duration': '30s' })).toEqual([
      { path: 'renew-deadline', message: 'must be positive and shorter than the lease duration (30s), got "40s"' },
    ]);
    expect(refusal({ 'retry-period': '0s' })).toEqual([{ path: 'retry-period', message: 'must be positive, got "0s"' }]);
  });

  it("ships Tidal's 3s / 2s / 500ms as active keys and documents Knative's defaults in _example", () => {
    const data = shippedConfigData('config-leader-election');
    expect(parsed(data)).toEqual({ leaseDurationMs: 3000, renewDeadlineMs: 2000, retryPeriodMs: 500, buckets: 1 });
    expect(parsed(parse(data._example ?? '') as Record<string, string>)).toEqual(defaultLeaderElectionConfig());
  });
});
