// A benchmark stack's ports (bench/ports.ts): one layout at a prefix, never in the ephemeral port range.
import { describe, expect, it } from 'vitest';
import { benchPorts } from '../../bench/ports.js';

describe('benchPorts', () => {
  it('lays the stack out at the prefix, the Temporal UI clear of the PostgreSQL Temporal’s eight ports', () => {
    const p = benchPorts(14);
    expect(p).toEqual({
      etcdClient: 14379,
      etcdPeer: 14380,
      apiserver: 14443,
      controllerManager: 14257,
      scheduler: 14259,
      temporal: 14233,
      temporalUi: 14283,
      temporalHttp: 14243,
      temporalMetrics: 14244,
      controllerMetrics: 14464,
    });
    expect(new Set(Object.values(p)).size).toBe(Object.values(p).length);
    expect(p.temporalUi > p.temporal + 8).toBe(true);
  });

  it('refuses a prefix in the ephemeral range (32768–60999), and takes the ones just outside it', () => {
    for (const prefix of [32, 33, 45, 60]) expect(() => benchPorts(prefix)).toThrow(/ephemeral range/);
    expect(benchPorts(31).temporal).toBe(31233);
    expect(benchPorts(61).temporal).toBe(61233);
  });
});
