// config-deployment (Knative's pkg/deployment/config.go), plus the value parsers every config map here shares: Go
// durations, Kubernetes quantities, Go booleans and integers. Pure: no I/O, clocks or Node built-ins.
import type { DeploymentConfig, Parsed } from './types.js';

export const DeploymentConfigName = 'config-deployment';

// ---------------------------------------------------------------------------------------------------------------
// Shared value parsers (Go / Kubernetes syntax).

/** Nanoseconds per Go duration unit. */
const durationUnits: Record<string, bigint> = {
  ns: 1n,
  us: 1_000n,
  µs: 1_000n, // U+00B5 micro sign
  μs: 1_000n, // U+03BC Greek mu
  ms: 1_000_000n,
  s: 1_000_000_000n,
  m: 60_000_000_000n,
  h: 3_600_000_000_000n,
};
const maxInt64 = 9_223_372_036_854_775_807n;

/**
 * Parses a Go `time.ParseDuration` string ("600s", "10m", "1h30m", "1.5s", "-5s", "0") into nanoseconds. Returns
 * undefined when Go would reject it: empty input, a missing or unknown unit (except a bare "0"), or int64 overflow.
 */
export function parseGoDuration(raw: string): bigint | undefined {
  let s = raw;
  let negative = false;
  if (s.startsWith('-') || s.startsWith('+')) {
    negative = s.startsWith('-');
    s = s.slice(1);
  }
  if (s === '0') return 0n;
  if (s === '') return undefined;
  let total = 0n;
  const part = /^(\d*)(?:\.(\d*))?([^\d.]+)/u;
  while (s !== '') {
    const m = part.exec(s);
    if (m === null) return undefined;
    const [whole, intDigits = '', fracDigits, unitText = ''] = m;
    if (intDigits === '' && (fracDigits === undefined || fracDigits === '')) return undefined;
    const unit = durationUnits[unitText];
    if (unit === undefined) return undefined;
    let value = BigInt(intDigits === '' ? '0' : intDigits) * unit;
    if (fracDigits !== undefined && fracDigits !== '') {
      // Go keeps the fraction's contribution, truncated to whole nanoseconds.
      value += (BigInt(fracDigits) * unit) / 10n ** BigInt(fracDigits.length);
    }
    total += value;
    if (total > maxInt64 + (negative ? 1n : 0n)) return undefined;
    s = s.slice(whole.length);
  }
  return negative ? -total : total;
}

const nsPerSecond = 1_000_000_000n;

/** A nanosecond count as (possibly fractional) seconds. */
export function nanosToSeconds(ns: bigint): number {
  return Number(ns / nsPerSecond) + Number(ns % nsPerSecond) / 1e9;
}

/** True when `ns` is a whole number of seconds. */
export function isWholeSeconds(ns: bigint): boolean {
  return ns % nsPerSecond === 0n;
}

// Kubernetes resource.Quantity: a signed decimal number, then a binary (Ki..Ei), decimal (n u m "" k M G T P E) or
// exponent (e3, E-2) suffix.
const quantityPattern = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E|[eE][+-]?\d+)?$/u;

/** True when `raw` parses as a Kubernetes resource quantity ("25m", "1000m", "50Mi", "1.5", "1e3"). */
export function isQuantity(raw: string): boolean {
  return quantityPattern.test(raw);
}

const goTrue = new Set(['1', 't', 'T', 'TRUE', 'true', 'True']);
const goFalse = new Set(['0', 'f', 'F', 'FALSE', 'false', 'False']);

/** Go's strconv.ParseBool: undefined for anything but its twelve spellings. */
export function parseGoBool(raw: string): boolean | undefined {
  if (goTrue.has(raw)) return true;
  if (goFalse.has(raw)) return false;
  return undefined;
}

/** Go's strconv.ParseInt(raw, 10, bits): an optionally signed run of decimal digits within the bit size's range. */
export function parseGoInt(raw: string, bits: 32 | 64): number | undefined {
  if (!/^[+-]?\d+$/u.test(raw)) return undefined;
  const v = BigInt(raw);
  const limit = 2n ** BigInt(bits - 1);
  if (v < -limit || v >= limit) return undefined;
  return Number(v);
}

/** Go's strconv.ParseFloat(raw, 64), minus hexadecimal floats and digit underscores. */
export function parseGoFloat(raw: string): number | undefined {
  if (/^[+-]?(?:inf|infinity)$/iu.test(raw)) return raw.startsWith('-') ? -Infinity : Infinity;
  if (/^[+-]?nan$/iu.test(raw)) return NaN;
  if (!/^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$/u.test(raw)) return undefined;
  return Number(raw);
}

/** A comma-separated list, entries trimmed, empty entries and duplicates dropped, first-seen order kept. */
export function parseStringSet(raw: string): string[] {
  const out: string[] = [];
  for (const item of raw.split(',')) {
    const v = item.trim();
    if (v !== '' && !out.includes(v)) out.push(v);
  }
  return out;
}

/** Thrown inside a parser to abort with "<configmap>: <key>: <reason>"; caught by {@link runParser}. */
export class ConfigKeyError extends Error {
  constructor(
    readonly key: string,
    readonly reason: string,
  ) {
    super(`${key}: ${reason}`);
  }
}

/** Runs `parse`, turning a {@link ConfigKeyError} into a Parsed failure prefixed with the config map's name. */
export function runParser<T>(configMap: string, parse: () => T): Parsed<T> {
  try {
    return { ok: true, value: parse() };
  } catch (err) {
    if (err instanceof ConfigKeyError) return { ok: false, error: `${configMap}: ${err.message}`, key: err.key, reason: err.reason };
    throw err;
  }
}

/**
 * Typed reads of a config map's data. Each takes the keys to read in order (legacy aliases first, then the current
 * key, as Knative's cm.Parse lists them), so a later key overrides an earlier one and every present key must parse.
 * `_example` is never read because no parser names it.
 */
export class ConfigReader {
  constructor(private readonly data: Readonly<Record<string, string>>) {}

  /** The value of the last present key among `keys`, with the key it came from. */
  raw(keys: readonly string[]): { key: string; value: string } | undefined {
    let found: { key: string; value: string } | undefined;
    for (const key of keys) {
      const value = this.data[key];
      if (value !== undefined) found = { key, value };
    }
    return found;
  }

  has(keys: readonly string[]): boolean {
    return this.raw(keys) !== undefined;
  }

  string(keys: readonly string[], def: string): string {
    return this.raw(keys)?.value ?? def;
  }

  bool(keys: readonly string[], def: boolean): boolean {
    let out = def;
    for (const key of keys) {
      const value = this.data[key];
      if (value === undefined) continue;
      const b = parseGoBool(value);
      if (b === undefined) throw new ConfigKeyError(key, `must be a boolean ("true" or "false"), got ${JSON.stringify(value)}`);
      out = b;
    }
    return out;
  }

  int(keys: readonly string[], def: number, bits: 32 | 64 = 64): number {
    let out = def;
    for (const key of keys) {
      const value = this.data[key];
      if (value === undefined) continue;
      const n = parseGoInt(value, bits);
      if (n === undefined) throw new ConfigKeyError(key, `must be a ${bits}-bit integer, got ${JSON.stringify(value)}`);
      out = n;
    }
    return out;
  }

  float(keys: readonly string[], def: number): number {
    let out = def;
    for (const key of keys) {
      const value = this.data[key];
      if (value === undefined) continue;
      const n = parseGoFloat(value);
      if (n === undefined) throw new ConfigKeyError(key, `must be a number, got ${JSON.stringify(value)}`);
      out = n;
    }
    return out;
  }

  /** A Go duration in nanoseconds, with the key it came from (for later range errors). */
  duration(keys: readonly string[], defNanos: bigint): { key: string; raw: string | undefined; nanos: bigint } {
    let out: { key: string; raw: string | undefined; nanos: bigint } = { key: keys[keys.length - 1] ?? '', raw: undefined, nanos: defNanos };
    for (const key of keys) {
      const value = this.data[key];
      if (value === undefined) continue;
      const ns = parseGoDuration(value);
      if (ns === undefined) throw new ConfigKeyError(key, `must be a duration such as "600s" or "10m", got ${JSON.stringify(value)}`);
      out = { key, raw: value, nanos: ns };
    }
    return out;
  }

  quantity(keys: readonly string[], def: string | undefined): string | undefined {
    let out = def;
    for (const key of keys) {
      const value = this.data[key];
      if (value === undefined) continue;
      if (!isQuantity(value)) throw new ConfigKeyError(key, `must be a resource quantity such as "25m" or "50Mi", got ${JSON.stringify(value)}`);
      out = value;
    }
    return out;
  }

  stringSet(keys: readonly string[], def: readonly string[]): string[] {
    const raw = this.raw(keys);
    return raw === undefined ? [...def] : parseStringSet(raw.value);
  }
}

// ---------------------------------------------------------------------------------------------------------------
// config-deployment

/** Knative's spelling of each key, with its legacy camelCase alias (read first; the current key wins). */
export const DeploymentKeys = {
  queueSidecarImage: ['queueSidecarImage', 'queue-sidecar-image'],
  progressDeadlineSeconds: ['progressDeadline', 'progress-deadline'],
  digestResolutionTimeoutSeconds: ['digestResolutionTimeout', 'digest-resolution-timeout'],
  registriesSkippingTagResolving: ['registriesSkippingTagResolving', 'registries-skipping-tag-resolving'],
  queueSidecarCpuRequest: ['queueSidecarCPURequest', 'queue-sidecar-cpu-request'],
  queueSidecarCpuLimit: ['queueSidecarCPULimit', 'queue-sidecar-cpu-limit'],
  queueSidecarMemoryRequest: ['queueSidecarMemoryRequest', 'queue-sidecar-memory-request'],
  queueSidecarMemoryLimit: ['queueSidecarMemoryLimit', 'queue-sidecar-memory-limit'],
  queueSidecarEphemeralStorageRequest: ['queueSidecarEphemeralStorageRequest', 'queue-sidecar-ephemeral-storage-request'],
  queueSidecarEphemeralStorageLimit: ['queueSidecarEphemeralStorageLimit', 'queue-sidecar-ephemeral-storage-limit'],
  defaultAffinityType: ['default-affinity-type'],
  podIsAlwaysSchedulable: ['pod-is-always-schedulable'],
  podDisruptionBudget: ['pod-disruption-budget'],
} as const satisfies Record<keyof DeploymentConfig, readonly string[]>;

const affinityTypes: readonly DeploymentConfig['defaultAffinityType'][] = ['prefer-spread-revision-over-nodes', 'none'];

/**
 * Tidal's defaults: Knative's (progress deadline 600 s, digest resolution 10 s, kind/ko/dev.local skip tag
 * resolution, spread affinity) with hakn's queue-proxy resources (cpu 25m/1000m, memory 50Mi/800Mi).
 *
 * The queue image defaults to '' — no queue-proxy sidecar. Knative has no default to follow here: it refuses to start
 * without `queue-sidecar-image`. Tidal keeps running instead, so a cluster without the config map (or a
 * test) gets Revisions of their user containers alone rather than a controller that will not start; the image a real
 * cluster needs is named by deploy/config/config-deployment.yaml, Knative's released queue-proxy.
 */
export function defaultDeploymentConfig(): DeploymentConfig {
  return {
    queueSidecarImage: '',
    progressDeadlineSeconds: 600,
    digestResolutionTimeoutSeconds: 10,
    registriesSkippingTagResolving: ['kind.local', 'ko.local', 'dev.local'],
    queueSidecarCpuRequest: '25m',
    queueSidecarCpuLimit: '1000m',
    queueSidecarMemoryRequest: '50Mi',
    queueSidecarMemoryLimit: '800Mi',
    queueSidecarEphemeralStorageRequest: undefined,
    queueSidecarEphemeralStorageLimit: undefined,
    defaultAffinityType: 'prefer-spread-revision-over-nodes',
    podIsAlwaysSchedulable: false,
    podDisruptionBudget: 'enabled',
  };
}

/**
 * Parses config-deployment's data. Unknown keys (queue-sidecar-token-audiences, queue-sidecar-rootca,
 * runtime-class-name, concurrency-state-endpoint, `_example`, …) are ignored.
 */
export function parseDeploymentConfig(data: Readonly<Record<string, string>>): Parsed<DeploymentConfig> {
  return runParser(DeploymentConfigName, () => {
    const r = new ConfigReader(data);
    const d = defaultDeploymentConfig();
    const K = DeploymentKeys;

    const progress = r.duration(K.progressDeadlineSeconds, 600n * nsPerSecond);
    if (progress.nanos <= 0n || !isWholeSeconds(progress.nanos)) {
      throw new ConfigKeyError(progress.key, `must be a positive whole number of seconds, got ${JSON.stringify(progress.raw)}`);
    }
    const digest = r.duration(K.digestResolutionTimeoutSeconds, 10n * nsPerSecond);
    if (digest.nanos <= 0n) {
      throw new ConfigKeyError(digest.key, `must be a positive duration, got ${JSON.stringify(digest.raw)}`);
    }

    const affinity = r.raw(K.defaultAffinityType);
    let defaultAffinityType = d.defaultAffinityType;
    if (affinity !== undefined) {
      const found = affinityTypes.find((t) => t === affinity.value);
      if (found === undefined) {
        throw new ConfigKeyError(
          affinity.key,
          `must be one of ${affinityTypes.map((t) => JSON.stringify(t)).join(', ')}, got ${JSON.stringify(affinity.value)}`,
        );
      }
      defaultAffinityType = found;
    }
    const pdb = r.raw(K.podDisruptionBudget);
    if (pdb !== undefined && pdb.value !== 'enabled' && pdb.value !== 'disabled') {
      throw new ConfigKeyError(pdb.key, `must be one of "enabled", "disabled", got ${JSON.stringify(pdb.value)}`);
    }

    return {
      queueSidecarImage: r.string(K.queueSidecarImage, d.queueSidecarImage),
      progressDeadlineSeconds: nanosToSeconds(progress.nanos),
      digestResolutionTimeoutSeconds: nanosToSeconds(digest.nanos),
      registriesSkippingTagResolving: r.stringSet(K.registriesSkippingTagResolving, d.registriesSkippingTagResolving),
      queueSidecarCpuRequest: r.quantity(K.queueSidecarCpuRequest, d.queueSidecarCpuRequest),
      queueSidecarCpuLimit: r.quantity(K.queueSidecarCpuLimit, d.queueSidecarCpuLimit),
      queueSidecarMemoryRequest: r.quantity(K.queueSidecarMemoryRequest, d.queueSidecarMemoryRequest),
      queueSidecarMemoryLimit: r.quantity(K.queueSidecarMemoryLimit, d.queueSidecarMemoryLimit),
      queueSidecarEphemeralStorageRequest: r.quantity(K.queueSidecarEphemeralStorageRequest, d.queueSidecarEphemeralStorageRequest),
      queueSidecarEphemeralStorageLimit: r.quantity(K.queueSidecarEphemeralStorageLimit, d.queueSidecarEphemeralStorageLimit),
      defaultAffinityType,
      podIsAlwaysSchedulable: r.bool(K.podIsAlwaysSchedulable, d.podIsAlwaysSchedulable),
      podDisruptionBudget: pdb === undefined ? d.podDisruptionBudget : (pdb.value as DeploymentConfig['podDisruptionBudget']),
    };
  });
}
