import { describe, expect, it } from 'vitest';
import { AutoscalerConfigName, defaultAutoscalerConfig, parseAutoscalerConfig } from '../../../api/config/index.js';
import type { AutoscalerConfig, Parsed } from '../../../api/config/index.js';

function ok(p: Parsed<AutoscalerConfig>): AutoscalerConfig {
  if (!p.ok) throw new Error(`expected ok, got ${p.error}`);
  return p.value;
}
function err(p: Parsed<AutoscalerConfig>): string {
  if (p.ok) throw new Error('expected an error');
  return p.error;
}

describe('config-autoscaler', () => {
  it('is named config-autoscaler', () => {
    expect(AutoscalerConfigName).toBe('config-autoscaler');
  });

  it('defaults to hakn: min-scale 2, max-scale 30, no scale to zero; otherwise Knative', () => {
    expect(defaultAutoscalerConfig()).toEqual({
      minScale: 2,
      maxScale: 30,
      maxScaleLimit: 0,
      initialScale: 1,
      allowZeroInitialScale: false,
      enableScaleToZero: false,
      podAutoscalerClass: 'kpa.autoscaling.knative.dev',
    });
    expect(ok(parseAutoscalerConfig({}))).toEqual(defaultAutoscalerConfig());
  });

  it('parses every key', () => {
    expect(
      ok(
        parseAutoscalerConfig({
          'min-scale': '1',
          'max-scale': '10',
          'max-scale-limit': '20',
          'initial-scale': '0',
          'allow-zero-initial-scale': 'true',
          'enable-scale-to-zero': 'true',
          'pod-autoscaler-class': 'hpa.autoscaling.knative.dev',
          _example: 'min-scale: "-1"',
        }),
      ),
    ).toEqual({
      minScale: 1,
      maxScale: 10,
      maxScaleLimit: 20,
      initialScale: 0,
      allowZeroInitialScale: true,
      enableScaleToZero: true,
      podAutoscalerClass: 'hpa.autoscaling.knative.dev',
    });
  });

  it('accepts max-scale 0 (unlimited) with any min-scale when there is no limit', () => {
    expect(ok(parseAutoscalerConfig({ 'max-scale': '0', 'min-scale': '50' }))).toMatchObject({ maxScale: 0, minScale: 50 });
  });

  it('validates, but does not keep, the keys only Knative autoscaler uses', () => {
    expect(
      ok(
        parseAutoscalerConfig({
          'target-burst-capacity': '0',
          'container-concurrency-target-percentage': '0.7',
          'stable-window': '2m',
          'scale-down-delay': '15s',
          'activator-capacity': '50',
        }),
      ),
    ).toEqual(defaultAutoscalerConfig());
    expect(ok(parseAutoscalerConfig({ 'target-burst-capacity': '-1' })).minScale).toBe(2);
  });

  describe('errors name the key and the reason', () => {
    it.each([
      [{ 'min-scale': 'two' }, 'config-autoscaler: min-scale: must be a 32-bit integer, got "two"'],
      [{ 'max-scale': '2147483648' }, 'config-autoscaler: max-scale: must be a 32-bit integer, got "2147483648"'],
      [{ 'max-scale-limit': '1.0' }, 'config-autoscaler: max-scale-limit: must be a 32-bit integer, got "1.0"'],
      [{ 'initial-scale': '' }, 'config-autoscaler: initial-scale: must be a 32-bit integer, got ""'],
      [{ 'allow-zero-initial-scale': 'y' }, 'config-autoscaler: allow-zero-initial-scale: must be a boolean ("true" or "false"), got "y"'],
      [{ 'enable-scale-to-zero': 'off' }, 'config-autoscaler: enable-scale-to-zero: must be a boolean ("true" or "false"), got "off"'],
      [{ 'initial-scale': '0' }, 'config-autoscaler: initial-scale: must be at least 1 (or 0 when allow-zero-initial-scale is true), got 0'],
      [
        { 'initial-scale': '-1', 'allow-zero-initial-scale': 'true' },
        'config-autoscaler: initial-scale: must be at least 1 (or 0 when allow-zero-initial-scale is true), got -1',
      ],
      [{ 'max-scale-limit': '-1' }, 'config-autoscaler: max-scale-limit: must be at least 0, got -1'],
      [{ 'max-scale': '-1' }, 'config-autoscaler: max-scale: must be in [0, unlimited], got -1'],
      [{ 'max-scale-limit': '10' }, 'config-autoscaler: max-scale: must be in [1, max-scale-limit (10)], got 30'],
      [{ 'max-scale-limit': '10', 'max-scale': '0' }, 'config-autoscaler: max-scale: must be in [1, max-scale-limit (10)], got 0'],
      [{ 'min-scale': '-1' }, 'config-autoscaler: min-scale: must be at least 0, got -1'],
      [{ 'min-scale': '31' }, 'config-autoscaler: min-scale: must not exceed max-scale (30), got 31'],
      [{ 'target-burst-capacity': '-2' }, 'config-autoscaler: target-burst-capacity: must be non-negative or -1 (unlimited), got -2'],
      [{ 'target-burst-capacity': 'many' }, 'config-autoscaler: target-burst-capacity: must be a number, got "many"'],
      [{ 'container-concurrency-target-percentage': '0' }, 'config-autoscaler: container-concurrency-target-percentage: must be in (0, 100], got 0'],
      [
        { 'container-concurrency-target-percentage': '101' },
        'config-autoscaler: container-concurrency-target-percentage: must be in (0, 100], got 101',
      ],
      [
        { 'container-concurrency-target-default': '0.001' },
        'config-autoscaler: container-concurrency-target-default: with container-concurrency-target-percentage must yield a target of at least 0.01, got 0.0007',
      ],
      [{ 'requests-per-second-target-default': '0' }, 'config-autoscaler: requests-per-second-target-default: must be at least 0.01, got 0'],
      [{ 'panic-window-percentage': '0.5' }, 'config-autoscaler: panic-window-percentage: must be in [1, 100], got 0.5'],
      [{ 'panic-threshold-percentage': '100' }, 'config-autoscaler: panic-threshold-percentage: must be in [110, 1000], got 100'],
      [{ 'max-scale-up-rate': '1' }, 'config-autoscaler: max-scale-up-rate: must be greater than 1.0, got 1'],
      [{ 'max-scale-down-rate': '0.5' }, 'config-autoscaler: max-scale-down-rate: must be greater than 1.0, got 0.5'],
      [{ 'activator-capacity': '0' }, 'config-autoscaler: activator-capacity: must be at least 1, got 0'],
      [{ 'stable-window': '5s' }, 'config-autoscaler: stable-window: must be a whole number of seconds in [6s, 1h], got "5s"'],
      [{ 'stable-window': '60.5s' }, 'config-autoscaler: stable-window: must be a whole number of seconds in [6s, 1h], got "60.5s"'],
      [{ 'stable-window': 'forever' }, 'config-autoscaler: stable-window: must be a duration such as "600s" or "10m", got "forever"'],
      [{ 'scale-to-zero-grace-period': '0s' }, 'config-autoscaler: scale-to-zero-grace-period: must be positive, got "0s"'],
      [{ 'scale-to-zero-pod-retention-period': '-1s' }, 'config-autoscaler: scale-to-zero-pod-retention-period: must not be negative, got "-1s"'],
      [{ 'scale-down-delay': '1.5s' }, 'config-autoscaler: scale-down-delay: must be a non-negative whole number of seconds, got "1.5s"'],
    ])('%j', (data, message) => {
      expect(err(parseAutoscalerConfig(data))).toBe(message);
    });
  });
});
