// config-leader-election (knative/pkg leaderelection/config.go): how long the controller's Lease lasts, how long a
// leader tries to renew it before stepping down, how often candidates retry, and the bucket count. Keys and legacy
// aliases as upstream (`leaseDuration` is read first, `lease-duration` wins). Read once when a replica starts, as
// upstream's sharedmain does. Beyond upstream, a map the elector could not run with is refused (ADR 0020): the renew
// deadline must be positive and shorter than the lease, the retry period positive, and the lease whole seconds
// (the Lease records `leaseDurationSeconds`). Pure.
import { ConfigKeyError, parseGoDuration, runParser } from './deployment.js';
import type { Parsed } from './types.js';

export const LeaderElectionConfigName = 'config-leader-election';

/** knative/pkg's MaxBuckets. */
export const MaxBuckets = 10;

export interface LeaderElectionConfig {
  leaseDurationMs: number;
  renewDeadlineMs: number;
  retryPeriodMs: number;
  /**
   * Validated as upstream; Tidal has one Lease whatever the count: the Temporal workers of every replica share the
   * reconciling already, and the leader only pokes (ADR 0020).
   */
  buckets: number;
}

/** knative/pkg's defaults: 60 s, 40 s, 10 s, one bucket. */
export function defaultLeaderElectionConfig(): LeaderElectionConfig {
  return { leaseDurationMs: 60_000, renewDeadlineMs: 40_000, retryPeriodMs: 10_000, buckets: 1 };
}

const durationKeys = {
  leaseDurationMs: ['leaseDuration', 'lease-duration'],
  renewDeadlineMs: ['renewDeadline', 'renew-deadline'],
  retryPeriodMs: ['retryPeriod', 'retry-period'],
} as const;

/** cm.AsDuration: Go's time.ParseDuration, with upstream's message; returns the key it came from. */
function duration(data: Readonly<Record<string, string>>, keys: readonly string[], def: number): { ms: number; key: string } {
  let out = { ms: def, key: keys[keys.length - 1] ?? '' };
  for (const key of keys) {
    const raw = data[key];
    if (raw === undefined) continue;
    const ns = parseGoDuration(raw);
    if (ns === undefined) throw new ConfigKeyError(key, `failed to parse ${JSON.stringify(key)}: time: invalid duration ${JSON.stringify(raw)}`);
    out = { ms: Number(ns) / 1e6, key };
  }
  return out;
}

/** Parses config-leader-election's data with upstream's rules and messages, plus the elector's own limits. */
export function parseLeaderElectionConfig(data: Readonly<Record<string, string>>): Parsed<LeaderElectionConfig> {
  return runParser(LeaderElectionConfigName, () => {
    const d = defaultLeaderElectionConfig();
    const lease = duration(data, durationKeys.leaseDurationMs, d.leaseDurationMs);
    const renew = duration(data, durationKeys.renewDeadlineMs, d.renewDeadlineMs);
    const retry = duration(data, durationKeys.retryPeriodMs, d.retryPeriodMs);
    let buckets = d.buckets;
    const rawBuckets = data.buckets;
    if (rawBuckets !== undefined) {
      if (!/^\d+$/u.test(rawBuckets))
        throw new ConfigKeyError('buckets', `failed to parse "buckets": strconv.ParseUint: parsing ${JSON.stringify(rawBuckets)}: invalid syntax`);
      const n = BigInt(rawBuckets);
      if (n >= 2n ** 32n)
        throw new ConfigKeyError(
          'buckets',
          `failed to parse "buckets": strconv.ParseUint: parsing ${JSON.stringify(rawBuckets)}: value out of range`,
        );
      buckets = Number(n);
    }
    if (buckets < 1 || buckets > MaxBuckets) throw new ConfigKeyError('buckets', `buckets: value must be between 1 <= ${buckets} <= ${MaxBuckets}`);
    if (lease.ms <= 0 || lease.ms % 1000 !== 0)
      throw new ConfigKeyError(lease.key, `must be a positive whole number of seconds, got ${JSON.stringify(data[lease.key] ?? '')}`);
    if (renew.ms <= 0 || renew.ms >= lease.ms) {
      throw new ConfigKeyError(
        renew.key,
        `must be positive and shorter than the lease duration (${lease.ms / 1000}s), got ${JSON.stringify(data[renew.key] ?? `${renew.ms / 1000}s`)}`,
      );
    }
    if (retry.ms <= 0) throw new ConfigKeyError(retry.key, `must be positive, got ${JSON.stringify(data[retry.key] ?? '')}`);
    return { leaseDurationMs: lease.ms, renewDeadlineMs: renew.ms, retryPeriodMs: retry.ms, buckets };
  });
}
