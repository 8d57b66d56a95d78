// The dynamic config every local Temporal gets: the history cache's entries expire and are swept (issue 9).
import { describe, expect, it } from 'vitest';
import { temporalDynamicConfig } from '../../../dev/stack.js';

describe('temporalDynamicConfig', () => {
  it('expires history cache entries a minute after their load and sweeps them every 15 s', () => {
    const settings = temporalDynamicConfig([], {});
    expect(settings).toEqual(['history.cacheTTL="1m"', 'history.cacheBackgroundEvict={"Enabled":true,"LoopInterval":"15s","MaxEntryPerCall":1024}']);
    for (const s of settings) expect(() => JSON.parse(s.slice(s.indexOf('=') + 1)) as unknown).not.toThrow();
  });

  it('takes the TTL from TIDAL_TEMPORAL_CACHE_TTL, and keeps Temporal defaults when it is empty', () => {
    expect(temporalDynamicConfig([], { TIDAL_TEMPORAL_CACHE_TTL: '5m' })[0]).toBe('history.cacheTTL="5m"');
    expect(temporalDynamicConfig([], { TIDAL_TEMPORAL_CACHE_TTL: '' })).toEqual([]);
  });

  it("puts the caller's settings after these, one value per key, the caller's winning", () => {
    expect(temporalDynamicConfig(['history.cacheTTL="10m"', 'limit.maxIDLength=1000'], {})).toEqual([
      'history.cacheTTL="10m"',
      'history.cacheBackgroundEvict={"Enabled":true,"LoopInterval":"15s","MaxEntryPerCall":1024}',
      'limit.maxIDLength=1000',
    ]);
  });
});
