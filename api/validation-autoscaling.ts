// The autoscaling.knative.dev annotations of a Revision or revision template, as Knative's webhook validates them
// (pkg/apis/autoscaling/annotation_validation.go): same keys (current key first, then the legacy camelCase alias),
// same messages, and the same paths — several rules name the canonical key even when the alias was used. Pure.
import { parseGoDuration, parseGoFloat } from './config/deployment.js';
import type { AutoscalerConfig } from './config/types.js';
import { at, generic, invalid, outOfBounds, type FieldError } from './field-error.js';

const group = 'autoscaling.knative.dev';
const key = (name: string): string => `${group}/${name}`;
/** Each annotation's keys in Knative's priority order (kmap.KeyPriority). */
const keys = {
  class: [key('class')],
  minScale: [key('min-scale'), key('minScale')],
  maxScale: [key('max-scale'), key('maxScale')],
  initialScale: [key('initial-scale'), key('initialScale')],
  activationScale: [key('activation-scale')],
  metric: [key('metric')],
  algorithm: [key('metric-aggregation-algorithm'), key('metricAggregationAlgorithm')],
  target: [key('target')],
  targetUtilization: [key('target-utilization-percentage'), key('targetUtilizationPercentage')],
  targetBurstCapacity: [key('target-burst-capacity'), key('targetBurstCapacity')],
  panicWindow: [key('panic-window-percentage'), key('panicWindowPercentage')],
  panicThreshold: [key('panic-threshold-percentage'), key('panicThresholdPercentage')],
  window: [key('window')],
  scaleDownDelay: [key('scale-down-delay'), key('scaleDownDelay')],
  podRetention: [key('scale-to-zero-pod-retention-period'), key('scaleToZeroPodRetentionPeriod')],
} as const;
export const kpaClass = 'kpa.autoscaling.knative.dev';
export const hpaClass = 'hpa.autoscaling.knative.dev';
const maxInt32 = 2_147_483_647;
const second = 1_000_000_000n;
const hour = 3600n * second;

type Annotations = Readonly<Record<string, string>>;

/** kmap.KeyPriority.Get: the first key present and its value. */
function get(anns: Annotations, priority: readonly string[]): { key: string; value: string } | undefined {
  for (const k of priority) {
    const value = anns[k];
    if (value !== undefined) return { key: k, value };
  }
  return undefined;
}

/** strconv.ParseInt(v, 10, 32): the value, 'range' for a well-formed number out of int32, or undefined. */
function parseInt32(v: string): number | 'range' | undefined {
  if (!/^[+-]?\d+$/u.test(v)) return undefined;
  const n = Number(v);
  return n < -2_147_483_648 || n > maxInt32 ? 'range' : n;
}

/** getIntGE0: a non-negative int32 (0 when absent), or the error. */
function intGE0(anns: Annotations, priority: readonly string[], path: string, errs: FieldError[]): number {
  const a = get(anns, priority);
  if (a === undefined) return 0;
  const n = parseInt32(a.value);
  if (n === undefined) errs.push(invalid(a.value, at(path, a.key)));
  else if (n === 'range' || n < 0) errs.push(outOfBounds(a.value, 0, maxInt32, at(path, a.key)));
  else return n;
  return 0;
}

function validateClass(anns: Annotations, path: string): FieldError[] {
  const c = get(anns, keys.class);
  if (c !== undefined && c.value.endsWith(group) && c.value !== kpaClass && c.value !== hpaClass) return [invalid(c.value, at(path, c.key))];
  return [];
}

function validateActivationScale(anns: Annotations, min: number, max: number, path: string): FieldError[] {
  const a = get(anns, keys.activationScale);
  if (a === undefined) return [];
  const p = at(path, a.key);
  const n = parseInt32(a.value);
  if (n === undefined || n === 'range') return [invalid(a.value, p)];
  if (min > n) return [generic(`min-scale=${min} is greater than activation-scale=${n}`, p)];
  if (max < n && max !== 0) return [generic(`max-scale=${max} is less than activation-scale=${n}`, p)];
  if (n < 2) return [generic(`activation-scale=${n} must be greater than 1`, p)];
  return [];
}

function validateMinMaxScale(anns: Annotations, cfg: AutoscalerConfig, path: string): FieldError[] {
  const errs: FieldError[] = [];
  const min = intGE0(anns, keys.minScale, path, errs);
  const max = intGE0(anns, keys.maxScale, path, errs);
  if (max !== 0 && max < min) {
    errs.push({
      path: [at(path, key('max-scale')), at(path, key('min-scale'))].join(', '),
      message: `max-scale=${max} is less than min-scale=${min}`,
    });
  }
  const maxKey = get(anns, keys.maxScale)?.key;
  if (maxKey !== undefined && cfg.maxScaleLimit !== 0) {
    if (max > cfg.maxScaleLimit) errs.push(outOfBounds(max, 1, cfg.maxScaleLimit, at(path, maxKey)));
    if (max === 0) errs.push(generic(`max-scale=0 (unlimited), must be less than ${cfg.maxScaleLimit}`, at(path, maxKey)));
  }
  errs.push(...validateActivationScale(anns, min, max, path));
  return errs;
}

/** A float annotation: invalid when it does not parse, else `check` decides. */
function validateFloat(
  anns: Annotations,
  priority: readonly string[],
  path: string,
  check: (f: number, raw: string, p: string) => FieldError[],
): FieldError[] {
  const a = get(anns, priority);
  if (a === undefined) return [];
  const p = at(path, a.key);
  const f = parseGoFloat(a.value);
  return f === undefined ? [invalid(a.value, p)] : check(f, a.value, p);
}

function validateFloats(anns: Annotations, path: string): FieldError[] {
  const within = (lo: number, hi: number) => (f: number, raw: string, p: string) => (f < lo || f > hi ? [outOfBounds(raw, lo, hi, p)] : []);
  return [
    ...validateFloat(anns, keys.panicWindow, path, within(1, 100)),
    ...validateFloat(anns, keys.panicThreshold, path, within(110, 1000)),
    ...validateFloat(anns, keys.target, path, (f, raw, p) => (f < 0.01 ? [generic(`target ${raw} should be at least 0.01`, p)] : [])),
    ...validateFloat(anns, keys.targetUtilization, path, within(1, 100)),
    ...validateFloat(anns, keys.targetBurstCapacity, path, (f, raw, p) => (f < 0 && f !== -1 ? [invalid(raw, p)] : [])),
  ];
}

/** A duration annotation bounded by [lo, 1h]; `precise` demands whole seconds. `pathKey` overrides the reported key. */
function validateDuration(
  anns: Annotations,
  priority: readonly string[],
  path: string,
  bounds: { lo: bigint; loText: string; precise: boolean; pathKey?: string },
): FieldError[] {
  const a = get(anns, priority);
  if (a === undefined) return [];
  const p = at(path, bounds.pathKey ?? a.key);
  const ns = parseGoDuration(a.value);
  if (ns === undefined) return [invalid(a.value, p)];
  if (ns < bounds.lo || ns > hour) return [outOfBounds(a.value, bounds.loText, '1h0m0s', p)];
  if (bounds.precise && ns % second !== 0n) return [generic('must be specified with at most second precision', p)];
  return [];
}

function validateMetric(anns: Annotations, cfg: AutoscalerConfig, path: string): FieldError[] {
  const m = get(anns, keys.metric);
  if (m === undefined) return [];
  const cls = get(anns, keys.class)?.value ?? cfg.podAutoscalerClass;
  const ok = cls === kpaClass ? m.value === 'concurrency' || m.value === 'rps' : cls === hpaClass ? m.value !== '' : true;
  return ok ? [] : [invalid(m.value, at(path, key('metric')))];
}

function validateAlgorithm(anns: Annotations, path: string): FieldError[] {
  if (get(anns, keys.class)?.value !== kpaClass) return []; // custom autoscalers may define their own
  const a = get(anns, keys.algorithm);
  if (a === undefined || a.value === '' || ['linear', 'weighted-exponential', 'weightedExponential'].includes(a.value)) return [];
  return [invalid(a.value, at(path, a.key))];
}

function validateInitialScale(anns: Annotations, cfg: AutoscalerConfig, path: string): FieldError[] {
  const a = get(anns, keys.initialScale);
  if (a === undefined) return [];
  const n = /^[+-]?\d+$/u.test(a.value) ? Number(a.value) : undefined;
  // Upstream puts the reason into the path ("<key> must be greater than 0").
  if (n === undefined || !Number.isSafeInteger(n)) return [invalid(a.value, at(path, a.key))];
  if (n < 0) return [invalid(a.value, at(path, `${a.key} must be greater than 0`))];
  if (n === 0 && !cfg.allowZeroInitialScale) return [invalid(a.value, at(path, `${a.key}=0 not allowed by cluster`))];
  return [];
}

/**
 * autoscaling.ValidateAnnotations: the annotations of a Revision or revision template, under `path` (e.g.
 * `spec.template.metadata.annotations`), against config-autoscaler (`max-scale-limit`, `allow-zero-initial-scale`,
 * `pod-autoscaler-class`).
 */
export function validateAutoscalingAnnotations(anns: Annotations | undefined, cfg: AutoscalerConfig, path: string): FieldError[] {
  if (anns === undefined || Object.keys(anns).length === 0) return [];
  return [
    ...validateClass(anns, path),
    ...validateMinMaxScale(anns, cfg, path),
    ...validateFloats(anns, path),
    ...validateDuration(anns, keys.window, path, { lo: 6n * second, loText: '6s', precise: true, pathKey: key('window') }),
    ...validateDuration(anns, keys.podRetention, path, { lo: 0n, loText: '0s', precise: false }),
    ...validateDuration(anns, keys.scaleDownDelay, path, { lo: 0n, loText: '0s', precise: true }),
    ...validateMetric(anns, cfg, path),
    ...validateAlgorithm(anns, path),
    ...validateInitialScale(anns, cfg, path),
  ];
}

/** ValidateHasNoAutoscalingAnnotation: Service, Configuration and Route metadata may not carry any. */
export function validateNoAutoscalingAnnotations(anns: Annotations | undefined, path: string): FieldError[] {
  return Object.keys(anns ?? {})
    .filter((k) => k.startsWith(group))
    .sort()
    .map((k) => ({
      path,
      message: `invalid key name ${JSON.stringify(k)}`,
      details: 'autoscaling annotations must be put under "spec.template.metadata.annotations" to work',
    }));
}
