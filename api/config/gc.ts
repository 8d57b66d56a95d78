// config-gc (Knative's pkg/gc/config.go): when Revisions a Configuration no longer routes to are deleted.
// Knative's defaults when a key is absent; the shipped deploy/config/config-gc.yaml carries hakn's aggressive values.
import { ConfigKeyError, parseGoDuration, runParser } from './deployment.js';
import type { GcConfig, Parsed } from './types.js';

export const GcConfigName = 'config-gc';

/** The value a disabled setting holds, as upstream's `gc.Disabled`. */
export const GcDisabled = -1;

export const GcKeys = {
  retainSinceCreateTimeMs: ['retain-since-create-time'],
  retainSinceLastActiveTimeMs: ['retain-since-last-active-time'],
  minNonActiveRevisions: ['min-non-active-revisions'],
  maxNonActiveRevisions: ['max-non-active-revisions'],
} as const satisfies Record<keyof GcConfig, readonly string[]>;

/** Knative's defaults: 48 h since creation, 15 h since last active, at least 20 and at most 1,000 non-active. */
export function defaultGcConfig(): GcConfig {
  return {
    retainSinceCreateTimeMs: 48 * 3_600_000,
    retainSinceLastActiveTimeMs: 15 * 3_600_000,
    minNonActiveRevisions: 20,
    maxNonActiveRevisions: 1000,
  };
}

const maxInt64 = 9_223_372_036_854_775_807n;
const isDisabled = (v: string): boolean => v.toLowerCase() === 'disabled';

/** A duration key: empty keeps the default, `disabled` (any case) is -1, else a non-negative Go duration. */
function durationMs(data: Readonly<Record<string, string>>, key: string, def: number): number {
  const v = data[key];
  if (v === undefined || v === '') return def;
  if (isDisabled(v)) return GcDisabled;
  const ns = parseGoDuration(v);
  if (ns === undefined) throw new ConfigKeyError(key, `time: invalid duration ${JSON.stringify(v)}`);
  if (ns < 0n) throw new ConfigKeyError(key, 'must be non-negative');
  return Number(ns) / 1e6;
}

/** max-non-active-revisions: empty keeps the default, `disabled` is -1, else Go's ParseUint below 2^63. */
function maxRevisions(data: Readonly<Record<string, string>>, key: string, def: number): number {
  const v = data[key];
  if (v === undefined || v === '') return def;
  if (isDisabled(v)) return GcDisabled;
  if (!/^\d+$/u.test(v)) throw new ConfigKeyError(key, `strconv.ParseUint: parsing ${JSON.stringify(v)}: invalid syntax`);
  const n = BigInt(v);
  if (n >= 2n ** 64n) throw new ConfigKeyError(key, `strconv.ParseUint: parsing ${JSON.stringify(v)}: value out of range`);
  if (n > maxInt64) throw new ConfigKeyError(key, `value should be lower than ${maxInt64}`);
  return Number(n);
}

/** min-non-active-revisions: Go's ParseInt (cm.AsInt64); `disabled` is not accepted. */
function minRevisions(data: Readonly<Record<string, string>>, key: string, def: number): number {
  const v = data[key];
  if (v === undefined) return def;
  if (!/^[+-]?\d+$/u.test(v)) throw new ConfigKeyError(key, `strconv.ParseInt: parsing ${JSON.stringify(v)}: invalid syntax`);
  const n = BigInt(v);
  if (n > maxInt64 || n < -maxInt64 - 1n) throw new ConfigKeyError(key, `strconv.ParseInt: parsing ${JSON.stringify(v)}: value out of range`);
  return Number(n);
}

/** Parses config-gc's data with Knative's rules and messages (`NewConfigFromConfigMapFunc`). */
export function parseGcConfig(data: Readonly<Record<string, string>>): Parsed<GcConfig> {
  return runParser(GcConfigName, () => {
    const d = defaultGcConfig();
    const K = GcKeys;
    const min = minRevisions(data, K.minNonActiveRevisions[0], d.minNonActiveRevisions);
    const cfg: GcConfig = {
      retainSinceCreateTimeMs: durationMs(data, K.retainSinceCreateTimeMs[0], d.retainSinceCreateTimeMs),
      retainSinceLastActiveTimeMs: durationMs(data, K.retainSinceLastActiveTimeMs[0], d.retainSinceLastActiveTimeMs),
      minNonActiveRevisions: min,
      maxNonActiveRevisions: maxRevisions(data, K.maxNonActiveRevisions[0], d.maxNonActiveRevisions),
    };
    if (cfg.minNonActiveRevisions < 0) {
      throw new ConfigKeyError('min-non-active-revisions', `min-non-active-revisions must be non-negative, was: ${cfg.minNonActiveRevisions}`);
    }
    if (cfg.maxNonActiveRevisions >= 0 && cfg.minNonActiveRevisions > cfg.maxNonActiveRevisions) {
      throw new ConfigKeyError(
        'min-non-active-revisions',
        `min-non-active-revisions(${cfg.minNonActiveRevisions}) must be <= max-non-active-revisions(${cfg.maxNonActiveRevisions})`,
      );
    }
    return cfg;
  });
}

/** "retain-since-create-time 20s, retain-since-last-active-time disabled, min 0, max 0": the settings in one line. */
export function describeGcConfig(c: GcConfig): string {
  const dur = (ms: number) => (ms === GcDisabled ? 'disabled' : `${ms / 1000}s`);
  const count = (n: number) => (n === GcDisabled ? 'disabled' : String(n));
  return (
    `retain-since-create-time ${dur(c.retainSinceCreateTimeMs)}, retain-since-last-active-time ${dur(c.retainSinceLastActiveTimeMs)}, ` +
    `min-non-active-revisions ${c.minNonActiveRevisions}, max-non-active-revisions ${count(c.maxNonActiveRevisions)}`
  );
}
