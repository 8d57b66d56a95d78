// Pure validation of Services, Configurations, Routes and revision specs, as Knative's validating webhook does it
// (spec §8.2; pkg/apis/serving/*_validation.go, k8s_validation.go, metadata_validation.go,
// pkg/apis/autoscaling/annotation_validation.go). Tidal has no webhook: reconcilers call these and report the result
// (e.g. as a failed condition) instead of rejecting the write.
//
// Validate DEFAULTED objects (api/defaults.ts first), as Knative's webhook does: e.g. a readiness probe without
// successThreshold is an error until defaulting sets it to 1.
//
// Errors carry Knative's field paths (`spec.template.spec.containers[0].ports`) and messages. Knative's
// apis.FieldError helpers read: missing → "missing field(s)", disallowed → "must not set the field(s)", invalid →
// "invalid value: <v>", out of bounds → "expected <lo> <= <v> <= <hi>", one-of → "expected exactly one, got
// both|neither". Where one error names several fields, `path` lists them joined by ", ".
//
// Not covered (needs a request context, other config maps, or is left to the API server): creator/lastModifier
// immutability, status-update skipping, server-side dry-run, field masks for the `kubernetes.podspec-*` features
// (affinity, nodeSelector, tolerations, fieldRef, …), probe-port matching, warnings.
import { parseGoDuration } from './config/deployment.js';
import type { AutoscalerConfig, DefaultsConfig } from './config/types.js';
import { Annotations, Labels } from './labels.js';
import type { ObjectMeta, OwnerReference } from './meta.js';
import type { Configuration, Container, RevisionSpec, RevisionTemplateSpec, Route, Service, TrafficTarget } from './serving.js';

/** One validation failure: where (Knative's field path) and why. */
export interface FieldError {
  path: string;
  message: string;
  details?: string;
}

/** Pod-spec features from config-features that change what validation accepts. */
export interface PodSpecFeatures {
  /** `multi-container` (Knative default: Enabled). */
  multiContainer: boolean;
  /** `kubernetes.podspec-init-containers` (Knative default: Disabled; hakn enables it). */
  initContainers: boolean;
  /** `kubernetes.podspec-volumes-emptydir` (Knative default: Enabled). */
  emptyDir: boolean;
  /** `kubernetes.podspec-persistent-volume-claim` (Disabled). */
  persistentVolumeClaim: boolean;
  /** `kubernetes.podspec-persistent-volume-write` (Disabled). */
  persistentVolumeWrite: boolean;
  /** `kubernetes.podspec-volumes-hostpath` (Disabled). */
  hostPath: boolean;
  /** `kubernetes.podspec-volumes-csi` (Disabled). */
  csi: boolean;
  /** `kubernetes.podspec-volumes-ephemeral` (Disabled). */
  ephemeral: boolean;
}

/** hakn's config-features for the fields validated here: multi-container, emptyDir and init containers on. */
export const haknPodSpecFeatures: PodSpecFeatures = {
  multiContainer: true,
  initContainers: true,
  emptyDir: true,
  persistentVolumeClaim: false,
  persistentVolumeWrite: false,
  hostPath: false,
  csi: false,
  ephemeral: false,
};

export interface ValidationOptions {
  /** config-autoscaler, for template autoscaling annotations (initial-scale 0, max-scale-limit). */
  autoscaler?: AutoscalerConfig;
  /** config-features overrides; unset fields take {@link haknPodSpecFeatures}. */
  features?: Partial<PodSpecFeatures>;
}

/** Knative's FieldError.Error() rendering of a list: "message: path\ndetails", one per error. */
export function formatFieldErrors(errs: readonly FieldError[]): string {
  return errs.map((e) => `${e.message}: ${e.path}${e.details !== undefined ? `\n${e.details}` : ''}`).join('\n');
}

// ---------------------------------------------------------------------------------------------------------------
// Small helpers: paths, Kubernetes name rules, error constructors.

function at(path: string, field: string): string {
  if (path === '') return field;
  if (field === '') return path;
  return field.startsWith('[') ? `${path}${field}` : `${path}.${field}`;
}

const missing = (path: string): FieldError => ({ path, message: 'missing field(s)' });
const disallowed = (path: string, details?: string): FieldError => ({
  path,
  message: 'must not set the field(s)',
  ...(details !== undefined ? { details } : {}),
});
const invalid = (value: unknown, path: string, details?: string): FieldError => ({
  path,
  message: `invalid value: ${String(value)}`,
  ...(details !== undefined ? { details } : {}),
});
const outOfBounds = (value: unknown, lo: unknown, hi: unknown, path: string): FieldError => ({
  path,
  message: `expected ${String(lo)} <= ${String(value)} <= ${String(hi)}`,
});
const multipleOneOf = (paths: string[]): FieldError => ({ path: paths.join(', '), message: 'expected exactly one, got both' });
const missingOneOf = (paths: string[]): FieldError => ({ path: paths.join(', '), message: 'expected exactly one, got neither' });

const maxInt32 = 2_147_483_647;
const dns1035Fmt = '[a-z]([-a-z0-9]*[a-z0-9])?';
const dns1123LabelFmt = '[a-z0-9]([-a-z0-9]*[a-z0-9])?';
const dns1123SubdomainFmt = `${dns1123LabelFmt}(\\.${dns1123LabelFmt})*`;
const qualifiedNameFmt = '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]';

/** k8s IsDNS1035Label: the messages for an invalid label (empty when valid). */
export function dns1035LabelErrors(value: string): string[] {
  const errs: string[] = [];
  if (value.length > 63) errs.push('must be no more than 63 characters');
  if (!new RegExp(`^${dns1035Fmt}$`, 'u').test(value)) {
    errs.push(
      `a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '${dns1035Fmt}')`,
    );
  }
  return errs;
}

function dns1123LabelErrors(value: string): string[] {
  const errs: string[] = [];
  if (value.length > 63) errs.push('must be no more than 63 characters');
  if (!new RegExp(`^${dns1123LabelFmt}$`, 'u').test(value)) {
    errs.push(
      `a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '${dns1123LabelFmt}')`,
    );
  }
  return errs;
}

function dns1123SubdomainErrors(value: string): string[] {
  const errs: string[] = [];
  if (value.length > 253) errs.push('must be no more than 253 characters');
  if (!new RegExp(`^${dns1123SubdomainFmt}$`, 'u').test(value)) {
    errs.push(
      `a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '${dns1123SubdomainFmt}')`,
    );
  }
  return errs;
}

function qualifiedNameErrors(value: string): string[] {
  const parts = value.split('/');
  let name = value;
  const errs: string[] = [];
  if (parts.length === 2) {
    const [prefix = '', n = ''] = parts;
    name = n;
    if (prefix === '') errs.push('prefix part must be non-empty');
    else errs.push(...dns1123SubdomainErrors(prefix).map((m) => `prefix part ${m}`));
  } else if (parts.length > 2) {
    return [
      `a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '${qualifiedNameFmt}') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`,
    ];
  }
  if (name === '') errs.push('name part must be non-empty');
  else {
    if (name.length > 63) errs.push('name part must be no more than 63 characters');
    if (!new RegExp(`^${qualifiedNameFmt}$`, 'u').test(name)) {
      errs.push(
        `name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '${qualifiedNameFmt}')`,
      );
    }
  }
  return errs;
}

/** Go's fmt.Sprint of a []string. */
const goList = (msgs: string[]): string => `[${msgs.join(' ')}]`;

/** Lexical path.Clean for absolute and relative POSIX paths. */
function cleanPath(p: string): string {
  const abs = p.startsWith('/');
  const out: string[] = [];
  for (const seg of p.split('/')) {
    if (seg === '' || seg === '.') continue;
    if (seg === '..') {
      if (out.length > 0 && out[out.length - 1] !== '..') out.pop();
      else if (!abs) out.push('..');
    } else out.push(seg);
  }
  const joined = out.join('/');
  return abs ? `/${joined}` : joined === '' ? '.' : joined;
}

// Image references as go-containerregistry's name.ParseReference(WeakValidation) accepts them.
const repoComponent = '[a-z0-9]+(?:(?:\\.|_|__|-+)[a-z0-9]+)*';
const repoPattern = new RegExp(`^${repoComponent}(?:/${repoComponent})*$`, 'u');
const registryPattern = /^(?:[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*|\[[0-9A-Fa-f:.]+\])(?::\d+)?$/u;
const tagPattern = /^[\w][\w.-]{0,127}$/u;
const digestPattern = /^[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}$/u;

/** True when `image` parses as an image reference (registry/repo[:tag][@digest]). */
export function isImageReference(image: string): boolean {
  let rest = image;
  const at_ = rest.indexOf('@');
  if (at_ !== -1) {
    if (!digestPattern.test(rest.slice(at_ + 1))) return false;
    rest = rest.slice(0, at_);
  }
  const lastSlash = rest.lastIndexOf('/');
  const colon = rest.lastIndexOf(':');
  if (colon > lastSlash) {
    if (!tagPattern.test(rest.slice(colon + 1))) return false;
    rest = rest.slice(0, colon);
  }
  const slash = rest.indexOf('/');
  if (slash !== -1) {
    const first = rest.slice(0, slash);
    if (first.includes('.') || first.includes(':') || first === 'localhost') {
      if (!registryPattern.test(first)) return false;
      rest = rest.slice(slash + 1);
    }
  }
  return rest.length > 0 && rest.length <= 255 && repoPattern.test(rest);
}

// ---------------------------------------------------------------------------------------------------------------
// Metadata.

/** knative/pkg apis.ValidateObjectMetadata: name / generateName are DNS-1035 labels (prefix). */
function validateObjectName(meta: ObjectMeta, path: string): FieldError[] {
  const name = meta.name ?? '';
  const generateName = meta.generateName ?? '';
  if (generateName !== '') {
    const msgs = dns1035LabelErrors(generateName.replace(/-$/u, 'a'));
    if (msgs.length > 0) return [{ path: at(path, 'generateName'), message: `not a DNS 1035 label prefix: ${goList(msgs)}` }];
  }
  if (name !== '') {
    const msgs = dns1035LabelErrors(name);
    if (msgs.length > 0) return [{ path: at(path, 'name'), message: `not a DNS 1035 label: ${goList(msgs)}` }];
  }
  if (name === '' && generateName === '') return [{ path: at(path, 'name'), message: 'name or generateName is required' }];
  return [];
}

const autoscalingGroup = 'autoscaling.knative.dev';

/** Service, Configuration and Route metadata may not carry autoscaling annotations. */
function validateNoAutoscalingAnnotations(annotations: Record<string, string> | undefined, path: string): FieldError[] {
  return Object.keys(annotations ?? {})
    .filter((k) => k.startsWith(autoscalingGroup))
    .sort()
    .map((k) => ({
      path,
      message: `invalid key name ${JSON.stringify(k)}`,
      details: 'autoscaling annotations must be put under "spec.template.metadata.annotations" to work',
    }));
}

/** A `serving.knative.dev/*` duration annotation: a Go duration, whole seconds, not negative. */
function validateDurationAnnotation(
  annotations: Record<string, string> | undefined,
  keys: readonly string[],
  label: string,
  path: string,
): FieldError[] {
  const key = keys.find((k) => (annotations?.[k] ?? '') !== '');
  if (key === undefined) return [];
  const v = annotations?.[key] ?? '';
  const p = at(path, key);
  const ns = parseGoDuration(v);
  if (ns === undefined) return [invalid(v, p)];
  if (ns % 1_000_000_000n !== 0n) return [{ path: p, message: `${label}=${v} is not at second precision` }];
  if (ns < 0n) return [{ path: p, message: `${label}=${v} must be positive` }];
  return [];
}

const rolloutDurationKeys = [Annotations.rolloutDuration, Annotations.rolloutDurationLegacy] as const;
const progressDeadlineKey = 'serving.knative.dev/progress-deadline';
const queueSidecarResourcePercentageKey = 'queue.sidecar.serving.knative.dev/resource-percentage';

function hasOwner(val: string, kind: string, refs: OwnerReference[] | undefined): boolean {
  return (refs ?? []).some((r) => r.kind === kind && r.name === val);
}

type LabelRules = { allowed: readonly string[]; visibility: boolean; owner?: { label: string; kind: string } };

/** serving.knative.dev/* labels: known ones only, ownership labels backed by an ownerReference. */
function validateLabels(meta: ObjectMeta, rules: LabelRules, path: string): FieldError[] {
  const errs: FieldError[] = [];
  for (const [key, val] of Object.entries(meta.labels ?? {}).sort(([a], [b]) => a.localeCompare(b))) {
    if (rules.visibility && key === Labels.visibility) {
      if (val !== 'cluster-local') errs.push(invalid(val, at(path, key)));
    } else if (rules.owner !== undefined && key === rules.owner.label) {
      if (!hasOwner(val, rules.owner.kind, meta.ownerReferences)) errs.push(missing(at(path, key)));
    } else if (key.startsWith('serving.knative.dev/') && !rules.allowed.includes(key)) {
      errs.push({ path, message: `invalid key name ${JSON.stringify(key)}` });
    }
  }
  return errs;
}

// ---------------------------------------------------------------------------------------------------------------
// Traffic.

/** Knative's validateTrafficList for a spec: per-target rules, unique DNS-1035 tags, percents summing to 100. */
function validateTrafficList(traffic: readonly TrafficTarget[], path: string, inService: boolean): FieldError[] {
  const errs: FieldError[] = [];
  const tags = new Map<string, number>();
  let sum = 0;
  traffic.forEach((tt, i) => {
    const p = at(path, `[${i}]`);
    const revisionName = tt.revisionName ?? '';
    const configurationName = tt.configurationName ?? '';
    if (tt.latestRevision !== undefined && (revisionName !== '') === tt.latestRevision) {
      errs.push({
        path: at(p, 'latestRevision'),
        message: `may not set revisionName ${JSON.stringify(revisionName)} when latestRevision is ${String(tt.latestRevision)}`,
      });
    }
    if (inService && configurationName !== '') {
      errs.push(disallowed(at(p, 'configurationName')));
    } else if (revisionName !== '' && configurationName !== '') {
      errs.push(multipleOneOf([at(p, 'revisionName'), at(p, 'configurationName')]));
    } else if (revisionName !== '') {
      const msgs = qualifiedNameErrors(revisionName);
      if (msgs.length > 0)
        errs.push({ path: at(p, 'revisionName'), message: `invalid key name ${JSON.stringify(revisionName)}`, details: msgs.join(', ') });
    } else if (configurationName !== '') {
      const msgs = qualifiedNameErrors(configurationName);
      if (msgs.length > 0)
        errs.push({ path: at(p, 'configurationName'), message: `invalid key name ${JSON.stringify(configurationName)}`, details: msgs.join(', ') });
    } else if (!inService) {
      errs.push(missingOneOf([at(p, 'revisionName'), at(p, 'configurationName')]));
    }
    if (tt.percent !== undefined) {
      if (tt.percent < 0 || tt.percent > 100) errs.push(outOfBounds(tt.percent, 0, 100, at(p, 'percent')));
      sum += tt.percent;
    }
    if ((tt.url ?? '') !== '') errs.push(disallowed(at(p, 'url')));

    const tag = tt.tag ?? '';
    if (tag === '') return;
    const msgs = dns1035LabelErrors(tag);
    if (msgs.length > 0) errs.push(invalid(`not a DNS 1035 label: ${goList(msgs)}`, at(p, 'tag')));
    const first = tags.get(tag);
    if (first !== undefined) {
      errs.push({
        path: [at(path, `[${i}].tag`), at(path, `[${first}].tag`)].join(', '),
        message: `Multiple definitions for ${JSON.stringify(tag)}`,
      });
    } else tags.set(tag, i);
  });
  if (sum !== 100) errs.push({ path, message: `Traffic targets sum to ${sum}, want 100` });
  return errs;
}

// ---------------------------------------------------------------------------------------------------------------
// Autoscaling annotations on a revision template.

const A = (name: string): string => `${autoscalingGroup}/${name}`;
const scaleKeys = {
  class: [A('class')],
  minScale: [A('min-scale'), A('minScale')],
  maxScale: [A('max-scale'), A('maxScale')],
  initialScale: [A('initial-scale'), A('initialScale')],
  metric: [A('metric')],
  target: [A('target')],
  targetUtilization: [A('target-utilization-percentage'), A('targetUtilizationPercentage')],
  targetBurstCapacity: [A('target-burst-capacity'), A('targetBurstCapacity')],
  window: [A('window')],
  scaleDownDelay: [A('scale-down-delay'), A('scaleDownDelay')],
} as const;
const kpaClass = 'kpa.autoscaling.knative.dev';
const hpaClass = 'hpa.autoscaling.knative.dev';

function getAnnotation(anns: Record<string, string>, keys: readonly string[]): { key: string; value: string } | undefined {
  for (const key of keys) {
    const value = anns[key];
    if (value !== undefined) return { key, value };
  }
  return undefined;
}

function parseFloatStrict(v: string): number | undefined {
  return /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$/u.test(v) ? Number(v) : undefined;
}

/** pkg/apis/autoscaling ValidateAnnotations, for the annotations Tidal and hakn care about. */
function validateAutoscalingAnnotations(anns: Record<string, string> | undefined, cfg: AutoscalerConfig | undefined, path: string): FieldError[] {
  if (anns === undefined || Object.keys(anns).length === 0) return [];
  const errs: FieldError[] = [];
  const p = (key: string): string => at(path, key);

  const cls = getAnnotation(anns, scaleKeys.class);
  if (cls !== undefined && cls.value.endsWith(`.${autoscalingGroup}`) && cls.value !== kpaClass && cls.value !== hpaClass) {
    errs.push(invalid(cls.value, p(cls.key)));
  }

  const intGE0 = (keys: readonly string[]): { key: string; n: number } | undefined => {
    const a = getAnnotation(anns, keys);
    if (a === undefined) return undefined;
    if (!/^[+-]?\d+$/u.test(a.value)) {
      errs.push(invalid(a.value, p(a.key)));
      return undefined;
    }
    const n = Number(a.value);
    if (n < 0 || n > maxInt32) {
      errs.push(outOfBounds(a.value, 0, maxInt32, p(a.key)));
      return undefined;
    }
    return { key: a.key, n };
  };
  const min = intGE0(scaleKeys.minScale);
  const max = intGE0(scaleKeys.maxScale);
  const minN = min?.n ?? 0;
  const maxN = max?.n ?? 0;
  if (max !== undefined && maxN !== 0 && maxN < minN) {
    errs.push({ path: [p(max.key), p(min?.key ?? scaleKeys.minScale[0])].join(', '), message: `max-scale=${maxN} is less than min-scale=${minN}` });
  }
  const limit = cfg?.maxScaleLimit ?? 0;
  if (max !== undefined && limit > 0 && (maxN === 0 || maxN > limit)) errs.push(outOfBounds(maxN, 1, limit, p(max.key)));

  const initial = getAnnotation(anns, scaleKeys.initialScale);
  if (initial !== undefined) {
    const n = /^[+-]?\d+$/u.test(initial.value) ? Number(initial.value) : NaN;
    if (Number.isNaN(n) || n < 0 || (n === 0 && !(cfg?.allowZeroInitialScale ?? false))) errs.push(invalid(initial.value, p(initial.key)));
  }

  const metric = getAnnotation(anns, scaleKeys.metric);
  if (metric !== undefined) {
    const c = cls?.value ?? cfg?.podAutoscalerClass ?? kpaClass;
    const ok = c === kpaClass ? ['concurrency', 'rps'].includes(metric.value) : c === hpaClass ? ['cpu', 'memory'].includes(metric.value) : true;
    if (!ok) errs.push(invalid(metric.value, p(metric.key)));
  }

  const target = getAnnotation(anns, scaleKeys.target);
  if (target !== undefined) {
    const f = parseFloatStrict(target.value);
    if (f === undefined || f < 0.01) errs.push({ path: p(target.key), message: `target ${target.value} should be at least 0.01` });
  }
  const util = getAnnotation(anns, scaleKeys.targetUtilization);
  if (util !== undefined) {
    const f = parseFloatStrict(util.value);
    if (f === undefined) errs.push(invalid(util.value, p(util.key)));
    else if (f < 1 || f > 100) errs.push(outOfBounds(util.value, 1, 100, p(util.key)));
  }
  const tbc = getAnnotation(anns, scaleKeys.targetBurstCapacity);
  if (tbc !== undefined) {
    const f = parseFloatStrict(tbc.value);
    if (f === undefined || (f < 0 && f !== -1)) errs.push(invalid(tbc.value, p(tbc.key)));
  }
  const window = getAnnotation(anns, scaleKeys.window);
  if (window !== undefined) {
    const ns = parseGoDuration(window.value);
    if (ns === undefined) errs.push(invalid(window.value, p(window.key)));
    else if (ns < 6_000_000_000n || ns > 3_600_000_000_000n) errs.push(outOfBounds(window.value, '6s', '1h0m0s', p(window.key)));
  }
  const delay = getAnnotation(anns, scaleKeys.scaleDownDelay);
  if (delay !== undefined) {
    const ns = parseGoDuration(delay.value);
    if (ns === undefined) errs.push(invalid(delay.value, p(delay.key)));
    else if (ns < 0n || ns > 3_600_000_000_000n) errs.push(outOfBounds(delay.value, '0s', '1h0m0s', p(delay.key)));
    else if (ns % 1_000_000_000n !== 0n)
      errs.push({ path: p(delay.key), message: `must be specified with at most second precision, got ${delay.value}` });
  }
  return errs;
}

// ---------------------------------------------------------------------------------------------------------------
// Pod spec.

interface Probe {
  httpGet?: unknown;
  tcpSocket?: unknown;
  exec?: unknown;
  grpc?: unknown;
  periodSeconds?: number;
  timeoutSeconds?: number;
  successThreshold?: number;
  failureThreshold?: number;
  initialDelaySeconds?: number;
}
interface SecurityContext {
  runAsUser?: number;
  runAsGroup?: number;
  fsGroup?: number;
}
interface VolumeMount {
  name?: string;
  mountPath?: string;
  readOnly?: boolean;
}
type Volume = { name?: string; [source: string]: unknown };
type ContainerFields = Container & {
  readinessProbe?: Probe;
  livenessProbe?: Probe;
  startupProbe?: Probe;
  lifecycle?: unknown;
  securityContext?: SecurityContext;
  volumeMounts?: VolumeMount[];
  terminationMessagePolicy?: string;
};
type PodFields = RevisionSpec & {
  containers?: ContainerFields[];
  initContainers?: ContainerFields[];
  volumes?: Volume[];
  securityContext?: SecurityContext;
};

type ContainerKind = 'serving' | 'sidecar' | 'init';

const reservedContainerNames = new Set(['queue-proxy']);
const reservedEnvVars = new Set(['PORT', 'K_SERVICE', 'K_CONFIGURATION', 'K_REVISION']);
/** queue-proxy's ports (8012 http, 8013 h2c, 8022 admin, 9090/9091 metrics) and the profiling port 8008. */
export const reservedPorts: ReadonlySet<number> = new Set([8012, 8013, 8022, 9090, 9091, 8008]);
const validPortNames = new Set(['', 'h2c', 'http1']);
const reservedMountPaths = new Set(['/', '/dev', '/dev/log']);

function validateSecurityContextIds(
  sc: SecurityContext | undefined,
  path: string,
  fields: readonly ('runAsUser' | 'runAsGroup' | 'fsGroup')[],
): FieldError[] {
  const errs: FieldError[] = [];
  for (const f of fields) {
    const v = sc?.[f];
    if (v !== undefined && (v < 0 || v > maxInt32)) errs.push(outOfBounds(v, 0, maxInt32, at(path, f)));
  }
  return errs;
}

function validateProbeHandler(p: Probe, path: string): FieldError[] {
  const handlers = (['httpGet', 'tcpSocket', 'exec', 'grpc'] as const).filter((h) => p[h] != null);
  if (handlers.length === 0) return [missingOneOf(['httpGet', 'tcpSocket', 'exec', 'grpc'].map((h) => at(path, h)))];
  if (handlers.length > 1) return [multipleOneOf(handlers.map((h) => at(path, h)))];
  return [];
}

function validateReadinessProbe(p: Probe, path: string): FieldError[] {
  const errs = validateProbeHandler(p, path);
  const period = p.periodSeconds ?? 0;
  const timeout = p.timeoutSeconds ?? 0;
  const failure = p.failureThreshold ?? 0;
  const success = p.successThreshold ?? 0;
  if (period < 0) errs.push(outOfBounds(period, 0, maxInt32, at(path, 'periodSeconds')));
  if ((p.initialDelaySeconds ?? 0) < 0) errs.push(outOfBounds(p.initialDelaySeconds, 0, maxInt32, at(path, 'initialDelaySeconds')));
  if (success < 1) errs.push(outOfBounds(success, 1, maxInt32, at(path, 'successThreshold')));
  if (period === 0) {
    // periodSeconds 0 selects Knative's aggressive probing, which ignores these.
    if (failure !== 0) errs.push({ path: at(path, 'failureThreshold'), message: 'failureThreshold is disallowed when periodSeconds is zero' });
    if (timeout !== 0) errs.push({ path: at(path, 'timeoutSeconds'), message: 'timeoutSeconds is disallowed when periodSeconds is zero' });
  } else {
    if (timeout < 1) errs.push(outOfBounds(timeout, 1, maxInt32, at(path, 'timeoutSeconds')));
    if (failure < 1) errs.push(outOfBounds(failure, 1, maxInt32, at(path, 'failureThreshold')));
  }
  return errs;
}

interface VolumeInfo {
  /** Mounts may be writable (emptyDir, ephemeral, a writable PVC with write support). */
  writable: boolean;
  /** A PVC declared read-only. */
  readOnlyClaim: boolean;
}

function validateVolumeMounts(mounts: readonly VolumeMount[], volumes: ReadonlyMap<string, VolumeInfo>, path: string): FieldError[] {
  const errs: FieldError[] = [];
  const seenPaths = new Set<string>();
  mounts.forEach((m, i) => {
    const p = at(path, `[${i}]`);
    const vol = volumes.get(m.name ?? '');
    if (vol === undefined) errs.push({ path: at(p, 'name'), message: 'volumeMount has no matching volume' });
    const mountPath = m.mountPath ?? '';
    if (mountPath === '') errs.push(missing(at(p, 'mountPath')));
    else {
      const clean = cleanPath(mountPath);
      if (reservedMountPaths.has(clean)) errs.push({ path: at(p, 'mountPath'), message: `mountPath ${JSON.stringify(clean)} is a reserved path` });
      else if (!mountPath.startsWith('/')) errs.push(invalid(mountPath, at(p, 'mountPath')));
      else if (seenPaths.has(clean)) errs.push(invalid(`${JSON.stringify(mountPath)} must be unique`, at(p, 'mountPath')));
      seenPaths.add(clean);
    }
    if (m.readOnly !== true) {
      if (vol?.readOnlyClaim === true) errs.push({ path: at(p, 'readOnly'), message: 'volume is readOnly but volume mount is not' });
      else if (vol?.writable !== true) errs.push({ path: at(p, 'readOnly'), message: 'volume mount should be readOnly for this type of volume' });
    }
  });
  return errs;
}

function validateContainer(
  c: ContainerFields,
  kind: ContainerKind,
  volumes: ReadonlyMap<string, VolumeInfo>,
  path: string,
  multi: boolean,
): FieldError[] {
  if (Object.keys(c).length === 0) return [missing(path)];
  const errs: FieldError[] = [];
  const name = c.name ?? '';
  if (reservedContainerNames.has(name)) errs.push({ path: at(path, 'name'), message: `${JSON.stringify(name)} is a reserved container name` });

  // PORT is only reserved in the serving container (queue-proxy sets it there).
  (c.env ?? []).forEach((e, j) => {
    const p = at(path, `env[${j}].name`);
    if ((e.name ?? '') === '') errs.push(missing(p));
    else if (reservedEnvVars.has(e.name) && (kind === 'serving' || e.name !== 'PORT')) {
      errs.push({ path: p, message: `${JSON.stringify(e.name)} is a reserved environment variable` });
    }
  });

  if ((c.image ?? '') === '') errs.push(missing(at(path, 'image')));
  else if (!isImageReference(c.image)) {
    errs.push({
      path: at(path, 'image'),
      message: 'Failed to parse image reference',
      details: `image: ${JSON.stringify(c.image)}, error: could not parse reference: ${c.image}`,
    });
  }

  const ports = c.ports ?? [];
  if (kind === 'serving' && !multi && ports.length > 1) {
    errs.push({ path: at(path, 'ports'), message: 'more than one container port is set', details: 'Only a single port is allowed' });
  }
  const port = ports[0];
  if (port !== undefined && kind !== 'init') {
    const pp = at(path, 'ports');
    if ((port.protocol ?? '') !== '' && port.protocol !== 'TCP') errs.push(invalid(port.protocol, at(pp, 'protocol')));
    const n = port.containerPort;
    if (reservedPorts.has(n))
      errs.push({
        path: at(pp, 'containerPort'),
        message: `${n} is a reserved port`,
        details: `${n} is a reserved port, please use a different value`,
      });
    if (n < 0 || n > 65535) errs.push(outOfBounds(n, 0, 65535, at(pp, 'containerPort')));
    if (!validPortNames.has(port.name ?? '')) {
      errs.push({ path: pp, message: `Port name ${port.name ?? ''} is not allowed`, details: "Name must be empty, or one of: 'h2c', 'http1'" });
    }
  }

  if (kind === 'init') {
    for (const f of ['lifecycle', 'livenessProbe', 'readinessProbe', 'startupProbe'] as const) {
      if (c[f] != null) errs.push({ path: at(path, f), message: 'field not allowed in an init container' });
    }
  } else if (kind === 'sidecar') {
    // Probes on non-serving containers need the multi-container-probing feature (off by default).
    for (const f of ['livenessProbe', 'readinessProbe'] as const) {
      if (c[f] != null) errs.push(disallowed(at(path, f)));
    }
  } else {
    if (c.livenessProbe != null) errs.push(...validateProbeHandler(c.livenessProbe, at(path, 'livenessProbe')));
    if (c.readinessProbe != null) errs.push(...validateReadinessProbe(c.readinessProbe, at(path, 'readinessProbe')));
  }

  errs.push(...validateSecurityContextIds(c.securityContext, at(path, 'securityContext'), ['runAsUser', 'runAsGroup']));
  const policy = c.terminationMessagePolicy ?? '';
  if (!['', 'File', 'FallbackToLogsOnError'].includes(policy)) errs.push(invalid(policy, at(path, 'terminationMessagePolicy')));
  errs.push(...validateVolumeMounts(c.volumeMounts ?? [], volumes, at(path, 'volumeMounts')));
  return errs;
}

const alwaysAllowedSources = ['secret', 'configMap', 'projected'] as const;
const gatedSources: Record<string, keyof PodSpecFeatures> = {
  emptyDir: 'emptyDir',
  persistentVolumeClaim: 'persistentVolumeClaim',
  hostPath: 'hostPath',
  csi: 'csi',
  ephemeral: 'ephemeral',
};

function validateVolumes(
  volumes: readonly Volume[],
  mounted: ReadonlySet<string>,
  features: PodSpecFeatures,
  path: string,
): { errs: FieldError[]; infos: Map<string, VolumeInfo> } {
  const errs: FieldError[] = [];
  const infos = new Map<string, VolumeInfo>();
  const seen = new Set<string>();
  volumes.forEach((v, i) => {
    const p = at(path, `[${i}]`);
    const name = v.name ?? '';
    if (seen.has(name)) errs.push({ path: at(p, 'name'), message: `duplicate volume name ${JSON.stringify(name)}` });
    if (!mounted.has(name)) errs.push({ path: at(p, 'name'), message: `volume with name ${JSON.stringify(name)} not mounted` });
    if (name === '') errs.push(missing(at(p, 'name')));
    else if (dns1123LabelErrors(name).length > 0) errs.push(invalid(name, at(p, 'name')));
    seen.add(name);

    const sources = Object.keys(v).filter((k) => k !== 'name' && v[k] != null);
    for (const s of sources) {
      const gate = gatedSources[s];
      if ((alwaysAllowedSources as readonly string[]).includes(s) || (gate !== undefined && features[gate])) continue;
      errs.push(disallowed(at(p, s), gate !== undefined ? `the ${s} volume type needs config-features to enable it` : undefined));
    }
    if (sources.length === 0) {
      const allowed = [...alwaysAllowedSources, ...Object.keys(gatedSources).filter((s) => features[gatedSources[s] as keyof PodSpecFeatures])];
      errs.push(missingOneOf(allowed.map((s) => at(p, s))));
    } else if (sources.length > 1) {
      errs.push(multipleOneOf(sources.map((s) => at(p, s))));
    }

    const emptyDir = v.emptyDir as { medium?: string } | undefined;
    if (emptyDir != null && !['', 'Memory'].includes(emptyDir.medium ?? '')) errs.push(invalid(emptyDir.medium, at(p, 'emptyDir.medium')));
    const pvc = v.persistentVolumeClaim as { claimName?: string; readOnly?: boolean } | undefined;
    let info: VolumeInfo = { writable: emptyDir != null || v.ephemeral != null, readOnlyClaim: false };
    if (pvc != null) {
      if (pvc.readOnly !== true && features.persistentVolumeClaim && !features.persistentVolumeWrite) {
        errs.push({
          path: at(p, 'persistentVolumeClaim.readOnly'),
          message: `Persistent volume write support is disabled, but found persistent volume claim ${pvc.claimName ?? ''} that is not read-only`,
        });
      }
      info = { writable: pvc.readOnly !== true && features.persistentVolumeWrite, readOnlyClaim: pvc.readOnly === true };
    }
    if (name !== '') infos.set(name, info);
  });
  return { errs, infos };
}

function validatePodSpec(spec: PodFields, path: string, features: PodSpecFeatures): FieldError[] {
  const errs: FieldError[] = [];
  const containers = spec.containers ?? [];
  const initContainers = spec.initContainers ?? [];

  const mounted = new Set<string>();
  for (const c of [...containers, ...initContainers]) for (const m of c.volumeMounts ?? []) mounted.add(m.name ?? '');
  const { errs: volumeErrs, infos } = validateVolumes(spec.volumes ?? [], mounted, features, at(path, 'volumes'));
  errs.push(...volumeErrs);

  if (initContainers.length > 0 && !features.initContainers) {
    errs.push(disallowed(at(path, 'initContainers'), 'init containers need the kubernetes.podspec-init-containers feature'));
  } else {
    initContainers.forEach((c, i) => errs.push(...validateContainer(c, 'init', infos, at(path, `initContainers[${i}]`), false)));
  }

  if (containers.length === 0) {
    errs.push(missing(at(path, 'containers')));
  } else if (containers.length === 1) {
    errs.push(...validateContainer(containers[0] as ContainerFields, 'serving', infos, at(path, 'containers[0]'), false));
  } else if (!features.multiContainer) {
    errs.push({ path, message: `multi-container is off, but found ${containers.length} containers` });
  } else {
    const portCount = containers.reduce((n, c) => n + (c.ports?.length ?? 0), 0);
    if (portCount === 0) errs.push(missing(at(path, 'containers[*].ports')));
    if (portCount > 1) {
      errs.push({
        path: at(path, 'containers[*].ports'),
        message: 'more than one container port is set',
        details: 'Only a single port is allowed across all containers',
      });
    }
    containers.forEach((c, i) => {
      const kind: ContainerKind = (c.ports?.length ?? 0) > 0 ? 'serving' : 'sidecar';
      errs.push(...validateContainer(c, kind, infos, at(path, `containers[${i}]`), true));
    });
  }

  // Names are unique across init and regular containers; the later duplicate is reported.
  const names = new Set<string>();
  const checkName = (c: ContainerFields, p: string): void => {
    const n = c.name ?? '';
    if (n === '') return;
    if (names.has(n)) errs.push({ path: at(p, 'name'), message: `duplicate container name ${JSON.stringify(n)}` });
    names.add(n);
  };
  initContainers.forEach((c, i) => checkName(c, at(path, `initContainers[${i}]`)));
  containers.forEach((c, i) => checkName(c, at(path, `containers[${i}]`)));

  const sa = spec.serviceAccountName ?? '';
  if (sa !== '' && dns1123SubdomainErrors(sa).length > 0) {
    errs.push(invalid(sa, at(path, 'serviceAccountName'), dns1123SubdomainErrors(sa).join('\n')));
  }
  errs.push(...validateSecurityContextIds(spec.securityContext, at(path, 'securityContext'), ['runAsUser', 'runAsGroup', 'fsGroup']));
  return errs;
}

// ---------------------------------------------------------------------------------------------------------------
// Revision spec and template.

function resolveFeatures(opts: ValidationOptions | undefined): PodSpecFeatures {
  return { ...haknPodSpecFeatures, ...opts?.features };
}

/**
 * RevisionSpec.Validate: the pod spec, `timeoutSeconds` in [0, max-revision-timeout-seconds],
 * `responseStartTimeoutSeconds` in [0, timeoutSeconds], `idleTimeoutSeconds` in [0, max-revision-timeout-seconds],
 * `containerConcurrency` in [0 (1 if zero is not allowed), container-concurrency-max-limit]. `path` is where the
 * spec sits (e.g. "spec.template.spec", or "spec" for a Revision).
 */
export function validateRevisionSpec(spec: RevisionSpec, path: string, cfg: DefaultsConfig, opts?: ValidationOptions): FieldError[] {
  const rs = spec as PodFields;
  const errs = validatePodSpec(rs, path, resolveFeatures(opts));
  const max = cfg.maxRevisionTimeoutSeconds;
  const timeout = rs.timeoutSeconds;
  if (timeout !== undefined && timeout !== 0 && (timeout < 0 || timeout > max)) errs.push(outOfBounds(timeout, 0, max, at(path, 'timeoutSeconds')));
  const responseStart = rs.responseStartTimeoutSeconds;
  const rsMax = timeout !== undefined && timeout !== 0 ? Math.min(timeout, max) : max;
  if (responseStart !== undefined && (responseStart < 0 || responseStart > rsMax)) {
    errs.push(outOfBounds(responseStart, 0, rsMax, at(path, 'responseStartTimeoutSeconds')));
  }
  const idle = rs.idleTimeoutSeconds;
  if (idle !== undefined && (idle < 0 || idle > max)) errs.push(outOfBounds(idle, 0, max, at(path, 'idleTimeoutSeconds')));
  const cc = rs.containerConcurrency;
  if (cc !== undefined) {
    const lo = cfg.allowContainerConcurrencyZero ? 0 : 1;
    if (cc < lo || cc > cfg.containerConcurrencyMaxLimit)
      errs.push(outOfBounds(cc, lo, cfg.containerConcurrencyMaxLimit, at(path, 'containerConcurrency')));
  }
  return errs;
}

/** validateRevisionName: DNS-1035 names; a BYO name needs the `<parent>-` prefix and a parent with a real name. */
function validateTemplateName(tmpl: RevisionTemplateSpec, parent: ObjectMeta, path: string): FieldError[] {
  const generateName = tmpl.metadata?.generateName ?? '';
  const name = tmpl.metadata?.name ?? '';
  if (generateName !== '') {
    const msgs = dns1035LabelErrors(generateName.replace(/-$/u, 'a'));
    if (msgs.length > 0) return [invalid(`not a DNS 1035 label prefix: ${goList(msgs)}`, at(path, 'metadata.generateName'))];
  }
  if (name === '') return [];
  const msgs = dns1035LabelErrors(name);
  if (msgs.length > 0) return [invalid(`not a DNS 1035 label: ${goList(msgs)}`, at(path, 'metadata.name'))];
  const parentName = parent.name ?? '';
  if (parentName === '' && (parent.generateName ?? '') !== '') return [disallowed(at(path, 'metadata.name'))];
  const prefix = `${parentName}-`;
  if (!name.startsWith(prefix)) return [invalid(`${JSON.stringify(name)} must have prefix ${JSON.stringify(prefix)}`, at(path, 'metadata.name'))];
  return [];
}

function validateRevisionTemplate(
  tmpl: RevisionTemplateSpec,
  parent: ObjectMeta,
  path: string,
  cfg: DefaultsConfig,
  opts?: ValidationOptions,
): FieldError[] {
  const anns = tmpl.metadata?.annotations;
  const annPath = at(path, 'metadata.annotations');
  const errs = validateRevisionSpec(tmpl.spec, at(path, 'spec'), cfg, opts);
  errs.push(...validateAutoscalingAnnotations(anns, opts?.autoscaler, annPath));
  errs.push(...validateTemplateName(tmpl, parent, path));
  errs.push(...validateDurationAnnotation(anns, [progressDeadlineKey], 'progress-deadline', annPath));
  const pct = anns?.[queueSidecarResourcePercentageKey];
  if (pct !== undefined) {
    const f = parseFloatStrict(pct);
    const p = at(annPath, queueSidecarResourcePercentageKey);
    if (f === undefined) errs.push(invalid(pct, p));
    else if (f < 0.1 || f > 100) errs.push(outOfBounds(pct, 0.1, 100, p));
  }
  return errs;
}

/** Plain-JSON deep equality (absent and undefined fields are equal). */
function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) || Array.isArray(b)) {
    return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((v, i) => jsonEqual(v, b[i]));
  }
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return false;
  const ao = a as Record<string, unknown>;
  const bo = b as Record<string, unknown>;
  const keys = new Set([...Object.keys(ao), ...Object.keys(bo)]);
  for (const k of keys) if (!jsonEqual(ao[k], bo[k])) return false;
  return true;
}

/** Top-level template fields that differ, for the "changes without a name change" details. */
function changedFields(a: RevisionTemplateSpec, b: RevisionTemplateSpec): string[] {
  const out: string[] = [];
  for (const section of ['metadata', 'spec'] as const) {
    const ao = (a[section] ?? {}) as Record<string, unknown>;
    const bo = (b[section] ?? {}) as Record<string, unknown>;
    for (const k of new Set([...Object.keys(ao), ...Object.keys(bo)])) if (!jsonEqual(ao[k], bo[k])) out.push(`${section}.${k}`);
  }
  return out.sort();
}

/** VerifyNameChange: with an explicit template name kept from `previous`, the template may not change. */
function verifyNameChange(tmpl: RevisionTemplateSpec, previous: RevisionTemplateSpec | undefined, path: string): FieldError[] {
  const name = tmpl.metadata?.name ?? '';
  if (previous === undefined || name === '' || name !== (previous.metadata?.name ?? '')) return [];
  if (jsonEqual(tmpl, previous)) return [];
  return [
    {
      path: at(path, 'metadata.name'),
      message: 'Saw the following changes without a name change (-old +new)',
      details: `changed: ${changedFields(previous, tmpl).join(', ')}`,
    },
  ];
}

// ---------------------------------------------------------------------------------------------------------------
// Kinds.

/**
 * Service.Validate: metadata (DNS-1035 name, serving labels, no autoscaling annotations, rollout-duration), the
 * template (spec, autoscaling annotations, BYO name, progress-deadline), and traffic (no configurationName; an empty
 * list is accepted because defaulting fills it). Pass `opts.previous` on update for the BYO-name immutability rule.
 */
export function validateService(svc: Service, cfg: DefaultsConfig, opts?: ValidationOptions & { previous?: Service }): FieldError[] {
  const meta = svc.metadata;
  const errs = [
    ...validateObjectName(meta, 'metadata'),
    ...validateLabels(meta, { allowed: [], visibility: true }, 'metadata.labels'),
    ...validateNoAutoscalingAnnotations(meta.annotations, 'metadata.annotations'),
    ...validateDurationAnnotation(meta.annotations, rolloutDurationKeys, 'rollout-duration', 'metadata.annotations'),
    ...validateRevisionTemplate(svc.spec.template, meta, 'spec.template', cfg, opts),
  ];
  const traffic = svc.spec.traffic ?? [];
  if (traffic.length > 0) errs.push(...validateTrafficList(traffic, 'spec.traffic', true));
  errs.push(...verifyNameChange(svc.spec.template, opts?.previous?.spec.template, 'spec.template'));
  return errs;
}

/** Configuration.Validate: metadata (ownership label, no autoscaling annotations) and the template. */
export function validateConfiguration(
  config: Configuration,
  cfg: DefaultsConfig,
  opts?: ValidationOptions & { previous?: Configuration },
): FieldError[] {
  const meta = config.metadata;
  return [
    ...validateObjectName(meta, 'metadata'),
    ...validateLabels(
      meta,
      { allowed: [Labels.route, Labels.configurationUID, Labels.serviceUID], visibility: false, owner: { label: Labels.service, kind: 'Service' } },
      'metadata.labels',
    ),
    ...validateNoAutoscalingAnnotations(meta.annotations, 'metadata.annotations'),
    ...validateRevisionTemplate(config.spec.template, meta, 'spec.template', cfg, opts),
    ...verifyNameChange(config.spec.template, opts?.previous?.spec.template, 'spec.template'),
  ];
}

/** Route.Validate: metadata (visibility and ownership labels, no autoscaling annotations, rollout-duration) and traffic. */
export function validateRoute(route: Route): FieldError[] {
  const meta = route.metadata;
  return [
    ...validateObjectName(meta, 'metadata'),
    ...validateLabels(meta, { allowed: [], visibility: true, owner: { label: Labels.service, kind: 'Service' } }, 'metadata.labels'),
    ...validateNoAutoscalingAnnotations(meta.annotations, 'metadata.annotations'),
    ...validateDurationAnnotation(meta.annotations, rolloutDurationKeys, 'rollout-duration', 'metadata.annotations'),
    ...validateTrafficList(route.spec.traffic ?? [], 'spec.traffic', false),
  ];
}
