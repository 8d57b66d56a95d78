// config-autoscaler (Knative's pkg/autoscaler/config/config.go), with hakn's opinions: no scale to zero, min-scale 2.
import { ConfigKeyError, ConfigReader, isWholeSeconds, runParser } from './deployment.js';
import type { AutoscalerConfig, Parsed } from './types.js';

export const AutoscalerConfigName = 'config-autoscaler';

export const AutoscalerKeys = {
  minScale: ['min-scale'],
  maxScale: ['max-scale'],
  maxScaleLimit: ['max-scale-limit'],
  initialScale: ['initial-scale'],
  allowZeroInitialScale: ['allow-zero-initial-scale'],
  enableScaleToZero: ['enable-scale-to-zero'],
  podAutoscalerClass: ['pod-autoscaler-class'],
} as const satisfies Record<keyof AutoscalerConfig, readonly string[]>;

/**
 * Keys the Knative autoscaler reads that Tidal's control plane does not use. They are validated with Knative's rules
 * (so a config map Tidal accepts is one Knative's autoscaler would accept too) but not kept. Defaults are Knative's.
 */
export const AutoscalerOtherDefaults = {
  'container-concurrency-target-percentage': '70',
  'container-concurrency-target-default': '100',
  'requests-per-second-target-default': '200',
  'target-burst-capacity': '200',
  'stable-window': '60s',
  'panic-window-percentage': '10.0',
  'panic-threshold-percentage': '200.0',
  'max-scale-up-rate': '1000.0',
  'max-scale-down-rate': '2.0',
  'activator-capacity': '100.0',
  'scale-to-zero-grace-period': '30s',
  'scale-to-zero-pod-retention-period': '0s',
  'scale-down-delay': '0s',
} as const;

/** Tidal's defaults: Knative's, except hakn's min-scale 2, max-scale 30 and no scale to zero. */
export function defaultAutoscalerConfig(): AutoscalerConfig {
  return {
    minScale: 2,
    maxScale: 30,
    maxScaleLimit: 0,
    initialScale: 1,
    allowZeroInitialScale: false,
    enableScaleToZero: false,
    podAutoscalerClass: 'kpa.autoscaling.knative.dev',
  };
}

const second = 1_000_000_000n;

/** Validates the keys Tidal does not keep, as Knative's validate() does. */
function validateOtherKeys(r: ConfigReader): void {
  const D = AutoscalerOtherDefaults;
  const float = (key: keyof typeof D): number => r.float([key], Number(D[key]));

  let targetFraction = float('container-concurrency-target-percentage');
  if (targetFraction > 1) targetFraction /= 100; // percentages above 1, fractions in (0, 1] for legacy reasons
  if (!(targetFraction > 0 && targetFraction <= 1)) {
    throw new ConfigKeyError(
      'container-concurrency-target-percentage',
      `must be in (0, 100], got ${r.string(['container-concurrency-target-percentage'], '')}`,
    );
  }
  const targetDefault = float('container-concurrency-target-default');
  if (targetFraction * targetDefault < 0.01) {
    throw new ConfigKeyError(
      'container-concurrency-target-default',
      `with container-concurrency-target-percentage must yield a target of at least 0.01, got ${targetFraction * targetDefault}`,
    );
  }
  const rps = float('requests-per-second-target-default');
  if (!(rps >= 0.01)) throw new ConfigKeyError('requests-per-second-target-default', `must be at least 0.01, got ${rps}`);
  const tbc = float('target-burst-capacity');
  if (!(tbc >= 0 || tbc === -1)) throw new ConfigKeyError('target-burst-capacity', `must be non-negative or -1 (unlimited), got ${tbc}`);
  const panicWindow = float('panic-window-percentage');
  if (!(panicWindow >= 1 && panicWindow <= 100)) throw new ConfigKeyError('panic-window-percentage', `must be in [1, 100], got ${panicWindow}`);
  const panicThreshold = float('panic-threshold-percentage');
  if (!(panicThreshold >= 110 && panicThreshold <= 1000))
    throw new ConfigKeyError('panic-threshold-percentage', `must be in [110, 1000], got ${panicThreshold}`);
  for (const key of ['max-scale-up-rate', 'max-scale-down-rate'] as const) {
    const v = float(key);
    if (!(v > 1)) throw new ConfigKeyError(key, `must be greater than 1.0, got ${v}`);
  }
  const activator = float('activator-capacity');
  if (!(activator >= 1)) throw new ConfigKeyError('activator-capacity', `must be at least 1, got ${activator}`);

  const stable = r.duration(['stable-window'], 60n * second);
  if (stable.nanos < 6n * second || stable.nanos > 3600n * second || !isWholeSeconds(stable.nanos)) {
    throw new ConfigKeyError('stable-window', `must be a whole number of seconds in [6s, 1h], got ${JSON.stringify(stable.raw)}`);
  }
  const grace = r.duration(['scale-to-zero-grace-period'], 30n * second);
  if (grace.nanos <= 0n) throw new ConfigKeyError('scale-to-zero-grace-period', `must be positive, got ${JSON.stringify(grace.raw)}`);
  const retention = r.duration(['scale-to-zero-pod-retention-period'], 0n);
  if (retention.nanos < 0n)
    throw new ConfigKeyError('scale-to-zero-pod-retention-period', `must not be negative, got ${JSON.stringify(retention.raw)}`);
  const delay = r.duration(['scale-down-delay'], 0n);
  if (delay.nanos < 0n || !isWholeSeconds(delay.nanos)) {
    throw new ConfigKeyError('scale-down-delay', `must be a non-negative whole number of seconds, got ${JSON.stringify(delay.raw)}`);
  }
}

/** Parses config-autoscaler's data; rules as Knative's NewConfigFromMap/validate. */
export function parseAutoscalerConfig(data: Readonly<Record<string, string>>): Parsed<AutoscalerConfig> {
  return runParser(AutoscalerConfigName, () => {
    const r = new ConfigReader(data);
    const d = defaultAutoscalerConfig();
    const K = AutoscalerKeys;
    const cfg: AutoscalerConfig = {
      minScale: r.int(K.minScale, d.minScale, 32),
      maxScale: r.int(K.maxScale, d.maxScale, 32),
      maxScaleLimit: r.int(K.maxScaleLimit, d.maxScaleLimit, 32),
      initialScale: r.int(K.initialScale, d.initialScale, 32),
      allowZeroInitialScale: r.bool(K.allowZeroInitialScale, d.allowZeroInitialScale),
      enableScaleToZero: r.bool(K.enableScaleToZero, d.enableScaleToZero),
      podAutoscalerClass: r.string(K.podAutoscalerClass, d.podAutoscalerClass),
    };
    validateOtherKeys(r);

    if (cfg.initialScale < 0 || (cfg.initialScale === 0 && !cfg.allowZeroInitialScale)) {
      throw new ConfigKeyError('initial-scale', `must be at least 1 (or 0 when allow-zero-initial-scale is true), got ${cfg.initialScale}`);
    }
    if (cfg.maxScaleLimit < 0) {
      throw new ConfigKeyError('max-scale-limit', `must be at least 0, got ${cfg.maxScaleLimit}`);
    }
    // A max-scale-limit makes an unlimited (0) max-scale invalid.
    const minMaxScale = cfg.maxScaleLimit > 0 ? 1 : 0;
    if (cfg.maxScale < minMaxScale || (cfg.maxScaleLimit > 0 && cfg.maxScale > cfg.maxScaleLimit)) {
      const upper = cfg.maxScaleLimit > 0 ? `max-scale-limit (${cfg.maxScaleLimit})` : 'unlimited';
      throw new ConfigKeyError('max-scale', `must be in [${minMaxScale}, ${upper}], got ${cfg.maxScale}`);
    }
    if (cfg.minScale < 0) {
      throw new ConfigKeyError('min-scale', `must be at least 0, got ${cfg.minScale}`);
    }
    if (cfg.maxScale > 0 && cfg.minScale > cfg.maxScale) {
      throw new ConfigKeyError('min-scale', `must not exceed max-scale (${cfg.maxScale}), got ${cfg.minScale}`);
    }
    return cfg;
  });
}
