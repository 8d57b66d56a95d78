// The Go/Kubernetes value syntaxes the config parsers share, and parseRevisionConfig.
import { describe, expect, it } from 'vitest';
import {
  RevisionConfigMapNames,
  defaultAutoscalerConfig,
  defaultDefaultsConfig,
  defaultDeploymentConfig,
  isQuantity,
  parseGoBool,
  parseGoDuration,
  parseGoFloat,
  parseGoInt,
  parseRevisionConfig,
  parseStringSet,
} from '../../../api/config/index.js';

describe('parseGoDuration (time.ParseDuration)', () => {
  it.each([
    ['0', 0n],
    ['600s', 600_000_000_000n],
    ['10m', 600_000_000_000n],
    ['1h30m', 5_400_000_000_000n],
    ['1.5s', 1_500_000_000n],
    ['.5s', 500_000_000n],
    ['5.s', 5_000_000_000n],
    ['-5s', -5_000_000_000n],
    ['+5s', 5_000_000_000n],
    ['300ms', 300_000_000n],
    ['2us', 2_000n],
    ['2µs', 2_000n],
    ['2μs', 2_000n],
    ['7ns', 7n],
    ['1h1m1s1ms', 3_661_001_000_000n],
  ])('%s = %s ns', (raw, ns) => {
    expect(parseGoDuration(raw)).toBe(ns);
  });

  it.each(['', '600', 's', '.s', '1d', '1 s', '1s ', '--1s', '1e3s', '9999999999h'])('rejects %j', (raw) => {
    expect(parseGoDuration(raw)).toBeUndefined();
  });
});

describe('isQuantity (resource.ParseQuantity)', () => {
  it.each(['25m', '1000m', '1', '0.5', '.5', '50Mi', '1Gi', '100M', '1e3', '1E-2', '+1k', '-1', '2Ei', '5n', '3u'])('accepts %s', (q) => {
    expect(isQuantity(q)).toBe(true);
  });
  it.each(['', 'Mi', '1MB', '1 Gi', 'lots', '1.2.3', '1mi', '1KB'])('rejects %j', (q) => {
    expect(isQuantity(q)).toBe(false);
  });
});

describe('Go scalar parsers', () => {
  it('parseGoBool accepts exactly strconv.ParseBool spellings', () => {
    for (const t of ['1', 't', 'T', 'TRUE', 'true', 'True']) expect(parseGoBool(t)).toBe(true);
    for (const f of ['0', 'f', 'F', 'FALSE', 'false', 'False']) expect(parseGoBool(f)).toBe(false);
    for (const x of ['yes', 'tRuE', '', ' true']) expect(parseGoBool(x)).toBeUndefined();
  });

  it('parseGoInt enforces base 10 and the bit size', () => {
    expect(parseGoInt('+42', 32)).toBe(42);
    expect(parseGoInt('-7', 64)).toBe(-7);
    expect(parseGoInt('007', 32)).toBe(7);
    expect(parseGoInt('2147483647', 32)).toBe(2147483647);
    expect(parseGoInt('2147483648', 32)).toBeUndefined();
    expect(parseGoInt('-2147483648', 32)).toBe(-2147483648);
    expect(parseGoInt('1.0', 64)).toBeUndefined();
    expect(parseGoInt('0x10', 64)).toBeUndefined();
    expect(parseGoInt('', 64)).toBeUndefined();
  });

  it('parseGoFloat', () => {
    expect(parseGoFloat('10.0')).toBe(10);
    expect(parseGoFloat('1e3')).toBe(1000);
    expect(parseGoFloat('-1')).toBe(-1);
    expect(parseGoFloat('+Inf')).toBe(Infinity);
    expect(parseGoFloat('NaN')).toBeNaN();
    expect(parseGoFloat('ten')).toBeUndefined();
  });

  it('parseStringSet trims, drops empties and duplicates', () => {
    expect(parseStringSet('a, b,,a ,c')).toEqual(['a', 'b', 'c']);
    expect(parseStringSet('')).toEqual([]);
  });
});

describe('parseRevisionConfig', () => {
  it('lists the config maps a Revision reconcile reads', () => {
    expect(RevisionConfigMapNames).toEqual(['config-deployment', 'config-defaults', 'config-autoscaler']);
  });

  it('treats missing maps as all defaults', () => {
    expect(parseRevisionConfig({})).toEqual({
      ok: true,
      value: { deployment: defaultDeploymentConfig(), defaults: defaultDefaultsConfig(), autoscaler: defaultAutoscalerConfig() },
    });
    expect(parseRevisionConfig({ deployment: undefined, defaults: undefined, autoscaler: undefined }).ok).toBe(true);
  });

  it('parses each map', () => {
    const p = parseRevisionConfig({
      deployment: { 'queue-sidecar-image': 'q:1' },
      defaults: { 'container-concurrency': '5' },
      autoscaler: { 'min-scale': '1' },
    });
    if (!p.ok) throw new Error(p.error);
    expect(p.value.deployment.queueSidecarImage).toBe('q:1');
    expect(p.value.defaults.containerConcurrency).toBe(5);
    expect(p.value.autoscaler.minScale).toBe(1);
  });

  it('returns the error of the invalid map, named', () => {
    expect(parseRevisionConfig({ deployment: { 'progress-deadline': '-5s' } })).toEqual({
      ok: false,
      error: 'config-deployment: progress-deadline: must be a positive whole number of seconds, got "-5s"',
      key: 'progress-deadline',
      reason: 'must be a positive whole number of seconds, got "-5s"',
    });
    expect(parseRevisionConfig({ defaults: { 'container-concurrency': 'x' } })).toMatchObject({
      ok: false,
      error: expect.stringMatching(/^config-defaults: container-concurrency: /) as unknown,
    });
    expect(parseRevisionConfig({ autoscaler: { 'min-scale': '-1' } })).toMatchObject({
      ok: false,
      error: expect.stringMatching(/^config-autoscaler: min-scale: /) as unknown,
    });
  });
});
