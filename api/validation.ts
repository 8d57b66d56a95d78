// Pure validation of Services, Configurations, Revisions and Routes, as Knative's validating webhook does it
// (pkg/apis/serving/v1/*_validation.go, metadata_validation.go, knative/pkg apis/metadata_validation.go). The
// admission webhook (api/admission.ts → webhook/) refuses a request with these errors; the reconcilers do not call
// them.
//
// Validate DEFAULTED objects (api/defaults.ts first), as Knative's webhook does: e.g. a readiness probe without
// successThreshold is an error until defaulting sets it to 1. Errors carry Knative's field paths and messages
// (api/field-error.ts); the pod spec rules are in validation-podspec.ts, the autoscaling annotations in
// validation-autoscaling.ts.
//
// Not covered: the server-side dry-run Pod (needs the API server), warnings (they never refuse a request), the
// field masks inside probe handlers, env sources and projections beyond their one-of rules.
import { defaultAutoscalerConfig } from './config/autoscaler.js';
import { isQuantity, parseGoDuration, parseGoFloat } from './config/deployment.js';
import type { ModulesConfig } from './config/modules.js';
import type { AutoscalerConfig, DefaultsConfig } from './config/types.js';
import {
  at,
  disallowed,
  generic,
  invalid,
  invalidKeyName,
  missing,
  missingOneOf,
  multipleOneOf,
  outOfBounds,
  type FieldError,
} from './field-error.js';
import { dns1035LabelErrors, goList, nameIsDNS1035Label, qualifiedNameErrors } from './k8s-names.js';
import { Annotations, Labels } from './labels.js';
import type { ObjectMeta, OwnerReference } from './meta.js';
import { validateModuleImmutable, validateModuleKnown, validateModuleShape } from './modules.js';
import { revisionSpecDiff, templateDiff } from './short-diff.js';
import type { Configuration, Revision, RevisionSpec, RevisionTemplateSpec, Route, Service, TrafficTarget } from './serving.js';
import { validateAutoscalingAnnotations, validateNoAutoscalingAnnotations } from './validation-autoscaling.js';
import { knativePodSpecFeatures, validatePodSpec, type PodSpecFeatures } from './validation-podspec.js';

export type { FieldError } from './field-error.js';
export { formatFieldErrors, mergeFieldErrors } from './field-error.js';
export { dns1035LabelErrors, isImageReference } from './k8s-names.js';
export { knativePodSpecFeatures, reservedPorts, type PodSpecFeatures } from './validation-podspec.js';

export interface ValidationOptions {
  /** config-autoscaler, for autoscaling annotations (max-scale-limit, allow-zero-initial-scale, the default class). */
  autoscaler?: AutoscalerConfig;
  /** config-features as parsed from the cluster (`parseFeaturesConfig`); unset fields take Knative's defaults. */
  features?: Partial<PodSpecFeatures>;
  /** config-modules: the foreign modules a template may name (absent: none). */
  modules?: ModulesConfig;
}

/** What an UPDATE adds to validation: the stored object, and whether only a subresource (`/status`) is written. */
export interface UpdateContext {
  previous?: KubeObjectWithSpec;
  subResource?: string;
}
type KubeObjectWithSpec = { metadata: ObjectMeta; spec?: unknown };

// ---------------------------------------------------------------------------------------------------------------
// Metadata.

/** knative/pkg apis.ValidateObjectMetadata: name / generateName are DNS-1035 labels (prefix), one is required. */
function validateObjectName(meta: ObjectMeta, path: string): FieldError[] {
  const name = meta.name ?? '';
  const generateName = meta.generateName ?? '';
  if (generateName !== '') {
    const msgs = nameIsDNS1035Label(generateName, true);
    if (msgs.length > 0) return [{ path: at(path, 'generateName'), message: `not a DNS 1035 label prefix: ${goList(msgs)}` }];
  }
  if (name !== '') {
    const msgs = dns1035LabelErrors(name);
    if (msgs.length > 0) return [{ path: at(path, 'name'), message: `not a DNS 1035 label: ${goList(msgs)}` }];
  }
  if (name === '' && generateName === '') return [{ path: at(path, 'name'), message: 'name or generateName is required' }];
  return [];
}

/** A `serving.knative.dev/*` duration annotation: a Go duration, whole seconds, not negative. */
function validateDurationAnnotation(
  annotations: Record<string, string> | undefined,
  keys: readonly string[],
  label: string,
  path: string,
): FieldError[] {
  const key = keys.find((k) => annotations?.[k] !== undefined);
  const v = key === undefined ? '' : (annotations?.[key] ?? '');
  if (key === undefined || v === '') return [];
  const p = at(path, key);
  const ns = parseGoDuration(v);
  if (ns === undefined) return [invalid(v, p)];
  if (ns % 1_000_000_000n !== 0n) return [{ path: p, message: `${label}=${v} is not at second precision` }];
  if (ns < 0n) return [{ path: p, message: `${label}=${v} must be positive` }];
  return [];
}

const rolloutDurationKeys = [Annotations.rolloutDuration, Annotations.rolloutDurationLegacy] as const;
const progressDeadlineKeys = ['serving.knative.dev/progress-deadline'] as const;

/** verifyLabelOwnerRef: an ownership label must be backed by an owner reference of that kind and name. */
function validateOwnerLabel(meta: ObjectMeta, label: string, kind: string, path: string): FieldError[] {
  const val = meta.labels?.[label];
  if (val === undefined) return [];
  const owned = (meta.ownerReferences ?? []).some((r: OwnerReference) => r.kind === kind && r.name === val);
  return owned ? [] : [missing(at(path, label))];
}

// knative/networking ValidateAnnotations: networking.knative.dev annotations a template may carry.
const networkingAnnotations = new Set(
  [
    'ingress.class',
    'ingress-class',
    'certificate.class',
    'certificate-class',
    'disableAutoTLS',
    'disable-auto-tls',
    'disable-external-domain-tls',
    'httpOption',
    'http-protocol',
  ].map((k) => `networking.knative.dev/${k}`),
);

function validateNetworkingAnnotations(anns: Record<string, string> | undefined, path: string): FieldError[] {
  return Object.keys(anns ?? {})
    .filter((k) => k.startsWith('networking.knative.dev') && !networkingAnnotations.has(k))
    .sort()
    .map((k) => invalidKeyName(k, path));
}

const queueResourceKeys = [
  'cpu-resource-request',
  'cpu-resource-limit',
  'memory-resource-request',
  'memory-resource-limit',
  'ephemeral-storage-resource-request',
  'ephemeral-storage-resource-limit',
].map((k) => `queue.sidecar.serving.knative.dev/${k}`);
const queuePercentageKeys = ['queue.sidecar.serving.knative.dev/resource-percentage', 'queue.sidecar.serving.knative.dev/resourcePercentage'];

/** validateQueueSidecarResourceAnnotations: the (deprecated) percentage in [0.1, 100], the others quantities. */
function validateQueueSidecarAnnotations(anns: Record<string, string> | undefined, path: string): FieldError[] {
  const errs: FieldError[] = [];
  const pctKey = queuePercentageKeys.find((k) => anns?.[k] !== undefined);
  if (pctKey !== undefined) {
    const raw = anns?.[pctKey] ?? '';
    const f = parseGoFloat(raw);
    const p = `${path}.[${pctKey}]`; // ViaKey then ViaField: knative/pkg's flatten splits the key at its dots
    if (f === undefined) errs.push(invalid(raw, p));
    else if (f < 0.1 || f > 100) errs.push(outOfBounds(f, 0.1, 100, p));
  }
  for (const k of queueResourceKeys) {
    const v = anns?.[k];
    if (v !== undefined && !isQuantity(v)) errs.push(invalid(v, `${path}.[${k}]`));
  }
  return errs;
}

// ---------------------------------------------------------------------------------------------------------------
// Creator and last modifier (knative/pkg apis.ValidateCreatorAndModifier).

/** True for what Go decodes to a zero value: absent, null, false, 0, "", and empty or all-zero lists and objects. */
function isGoZero(v: unknown): boolean {
  if (v === undefined || v === null || v === false || v === 0 || v === '') return true;
  if (Array.isArray(v)) return v.length === 0;
  if (typeof v === 'object') return Object.values(v as Record<string, unknown>).every(isGoZero);
  return false;
}

/**
 * Equality of two specs as Knative compares them (typed Go structs): a field absent on one side equals its zero
 * value on the other, so the fields Go's round trip adds (`resources: {}`, a probe's `port: 0`,
 * `creationTimestamp: null`) never count as a change. Lenient where Go would not be (a pointer field's 0 vs
 * absent): a spurious "changed" would refuse a request upstream admits.
 */
export function semanticEqual(a: unknown, b: unknown): boolean {
  if (a === b || (isGoZero(a) && isGoZero(b))) return true;
  if (Array.isArray(a) || Array.isArray(b)) {
    return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((v, i) => semanticEqual(v, b[i]));
  }
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return false;
  const ao = a as Record<string, unknown>;
  const bo = b as Record<string, unknown>;
  for (const k of new Set([...Object.keys(ao), ...Object.keys(bo)])) if (!semanticEqual(ao[k], bo[k])) return false;
  return true;
}

/** On update: the creator annotation is immutable; lastModifier may change only with the spec. */
export function validateCreatorAndModifier(obj: KubeObjectWithSpec, previous: KubeObjectWithSpec): FieldError[] {
  const errs: FieldError[] = [];
  const oldAnns = previous.metadata.annotations ?? {};
  const newAnns = obj.metadata.annotations ?? {};
  const path = 'metadata.annotations';
  if ((oldAnns[Annotations.creator] ?? '') !== (newAnns[Annotations.creator] ?? '')) {
    errs.push({ path: at(path, Annotations.creator), message: 'annotation value is immutable' });
  }
  const modifier = newAnns[Annotations.lastModifier] ?? '';
  if (semanticEqual(previous.spec, obj.spec) && (oldAnns[Annotations.lastModifier] ?? '') !== modifier) {
    errs.push(invalid(modifier, at(path, Annotations.lastModifier)));
  }
  return errs;
}

// ---------------------------------------------------------------------------------------------------------------
// Traffic.

/** TrafficTarget.Validate (in a spec): latestRevision sense, one of revisionName/configurationName, percent, url. */
function validateTrafficTarget(tt: TrafficTarget, p: string, inService: boolean): FieldError[] {
  const errs: FieldError[] = [];
  const revisionName = tt.revisionName ?? '';
  const configurationName = tt.configurationName ?? '';
  if (tt.latestRevision != null && (revisionName !== '') === tt.latestRevision) {
    errs.push(
      generic(
        `may not set revisionName ${JSON.stringify(revisionName)} when latestRevision is ${String(tt.latestRevision)}`,
        at(p, 'latestRevision'),
      ),
    );
  }
  if (inService && configurationName !== '') errs.push(disallowed(at(p, 'configurationName')));
  else if (revisionName !== '' && configurationName !== '') errs.push(multipleOneOf(at(p, 'revisionName'), at(p, 'configurationName')));
  else if (revisionName !== '') {
    const msgs = qualifiedNameErrors(revisionName);
    if (msgs.length > 0) errs.push(invalidKeyName(revisionName, at(p, 'revisionName'), msgs.join(', ')));
  } else if (configurationName !== '') {
    const msgs = qualifiedNameErrors(configurationName);
    if (msgs.length > 0) errs.push(invalidKeyName(configurationName, at(p, 'configurationName'), msgs.join(', ')));
  } else if (!inService) errs.push(missingOneOf(at(p, 'revisionName'), at(p, 'configurationName')));
  if (tt.percent != null && (tt.percent < 0 || tt.percent > 100)) errs.push(outOfBounds(tt.percent, 0, 100, at(p, 'percent')));
  // A url is never allowed in spec, nor on an untagged target (the two errors merge into one).
  if ((tt.url ?? '') !== '') errs.push(disallowed(at(p, 'url')));
  return errs;
}

/** validateTrafficList: per-target rules, unique DNS-1035 tags, percents summing to exactly 100. */
function validateTrafficList(traffic: readonly TrafficTarget[], path: string, inService: boolean): FieldError[] {
  const errs: FieldError[] = [];
  const tags = new Map<string, number>();
  let sum = 0;
  traffic.forEach((tt, i) => {
    const p = at(path, `[${i}]`);
    errs.push(...validateTrafficTarget(tt, p, inService));
    sum += tt.percent ?? 0;
    const tag = tt.tag ?? '';
    if (tag === '') return;
    const msgs = dns1035LabelErrors(tag);
    // ErrInvalidArrayValue(…, "tag", i): upstream puts the index on the field, `spec.traffic.tag[i]`.
    if (msgs.length > 0) errs.push(invalid(`not a DNS 1035 label: ${goList(msgs)}`, at(path, `tag[${i}]`)));
    const first = tags.get(tag);
    if (first !== undefined)
      errs.push({ path: `${at(p, 'tag')}, ${at(path, `[${first}].tag`)}`, message: `Multiple definitions for ${JSON.stringify(tag)}` });
    else tags.set(tag, i);
  });
  if (sum !== 100) errs.push({ path, message: `Traffic targets sum to ${sum}, want 100` });
  return errs;
}

// ---------------------------------------------------------------------------------------------------------------
// Revision spec and template.

function resolveFeatures(opts: ValidationOptions | undefined): PodSpecFeatures {
  return { ...knativePodSpecFeatures, ...opts?.features };
}

/**
 * RevisionSpec.Validate: the pod spec, `timeoutSeconds` in [0, max-revision-timeout-seconds], `containerConcurrency`
 * in [0 (1 if zero is not allowed), container-concurrency-max-limit]. `path` is where the spec sits (e.g.
 * "spec.template.spec", or "spec" for a Revision).
 */
export function validateRevisionSpec(spec: RevisionSpec, path: string, cfg: DefaultsConfig, opts?: ValidationOptions): FieldError[] {
  const errs = validatePodSpec(spec, path, resolveFeatures(opts));
  const max = cfg.maxRevisionTimeoutSeconds;
  const timeout = spec.timeoutSeconds;
  if (timeout != null && timeout !== 0 && (timeout < 0 || timeout > max)) errs.push(outOfBounds(timeout, 0, max, at(path, 'timeoutSeconds')));
  const cc = spec.containerConcurrency;
  if (cc != null) {
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
    const msgs = nameIsDNS1035Label(generateName, true);
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

/**
 * RevisionTemplateSpec.Validate: spec, autoscaling and networking annotations, BYO name, queue and deadline
 * annotations, and Tidal's module annotations (ADR 0009). `previous` is the stored template on an update: the module
 * must be known only when the template changes (a change makes a Revision), so a module dropped from config-modules
 * refuses new Revisions of it but not a label edit of an object that already names it.
 */
function validateRevisionTemplate(
  tmpl: RevisionTemplateSpec,
  parent: ObjectMeta,
  cfg: DefaultsConfig,
  opts?: ValidationOptions,
  previous?: RevisionTemplateSpec,
): FieldError[] {
  const path = 'spec.template';
  const anns = tmpl.metadata?.annotations;
  const annPath = at(path, 'metadata.annotations');
  const makesRevision = previous === undefined || !semanticEqual(previous, tmpl);
  return [
    ...validateModuleShape(anns, annPath),
    ...(makesRevision ? validateModuleKnown(anns, opts?.modules, annPath) : []),
    ...validateRevisionSpec(tmpl.spec, at(path, 'spec'), cfg, opts),
    ...validateAutoscalingAnnotations(anns, opts?.autoscaler ?? defaultAutoscalerConfig(), annPath),
    ...validateNetworkingAnnotations(anns, annPath),
    ...validateTemplateName(tmpl, parent, path),
    ...validateQueueSidecarAnnotations(anns, annPath),
    ...validateDurationAnnotation(anns, progressDeadlineKeys, 'progress-deadline', annPath),
  ];
}

/** VerifyNameChange: with an explicit template name kept from `previous`, the template may not change. */
function verifyNameChange(tmpl: RevisionTemplateSpec, previous: RevisionTemplateSpec | undefined): FieldError[] {
  const name = tmpl.metadata?.name ?? '';
  if (previous === undefined || name === '' || name !== (previous.metadata?.name ?? '')) return [];
  const diff = semanticEqual(previous, tmpl) ? '' : templateDiff(previous, tmpl);
  if (diff === '') return [];
  return [{ path: 'spec.template.metadata.name', message: 'Saw the following changes without a name change (-old +new)', details: diff }];
}

// ---------------------------------------------------------------------------------------------------------------
// Kinds.

const previousOf = <T>(u: UpdateContext | undefined): T | undefined => u?.previous as T | undefined;

/**
 * Service.Validate: metadata (name, no autoscaling annotations, rollout-duration), the template, traffic (no
 * configurationName); on update the creator/lastModifier rules and the BYO-name rule. A `/status` write skips
 * metadata and spec.
 */
export function validateService(svc: Service, cfg: DefaultsConfig, opts?: ValidationOptions & UpdateContext): FieldError[] {
  const meta = svc.metadata;
  const errs: FieldError[] = [];
  if ((opts?.subResource ?? '') === '') {
    errs.push(
      ...validateObjectName(meta, 'metadata'),
      ...validateNoAutoscalingAnnotations(meta.annotations, 'metadata.annotations'),
      ...validateDurationAnnotation(meta.annotations, rolloutDurationKeys, 'rollout-duration', 'metadata.annotations'),
      ...validateRevisionTemplate(svc.spec.template, meta, cfg, opts, previousOf<Service>(opts)?.spec.template),
      ...validateTrafficList(svc.spec.traffic ?? [], 'spec.traffic', true),
    );
  }
  const previous = previousOf<Service>(opts);
  if (previous !== undefined) {
    errs.push(...validateCreatorAndModifier(svc, previous), ...verifyNameChange(svc.spec.template, previous.spec.template));
  }
  return errs;
}

/** Configuration.Validate: metadata (name, ownership label, no autoscaling annotations) and the template. */
export function validateConfiguration(config: Configuration, cfg: DefaultsConfig, opts?: ValidationOptions & UpdateContext): FieldError[] {
  const meta = config.metadata;
  const errs: FieldError[] = [];
  if ((opts?.subResource ?? '') === '') {
    errs.push(
      ...validateObjectName(meta, 'metadata'),
      ...validateNoAutoscalingAnnotations(meta.annotations, 'metadata.annotations'),
      ...validateOwnerLabel(meta, Labels.service, 'Service', 'metadata.labels'),
      ...validateRevisionTemplate(config.spec.template, meta, cfg, opts, previousOf<Configuration>(opts)?.spec.template),
    );
  }
  const previous = previousOf<Configuration>(opts);
  if (previous !== undefined) {
    if (meta.ownerReferences === undefined) errs.push(...validateCreatorAndModifier(config, previous));
    errs.push(...verifyNameChange(config.spec.template, previous.spec.template));
  }
  return errs;
}

/** Route.Validate: metadata (name, ownership label, no autoscaling annotations, rollout-duration) and traffic. */
export function validateRoute(route: Route, opts?: UpdateContext): FieldError[] {
  const meta = route.metadata;
  const errs = [
    ...validateObjectName(meta, 'metadata'),
    ...validateNoAutoscalingAnnotations(meta.annotations, 'metadata.annotations'),
    ...validateOwnerLabel(meta, Labels.service, 'Service', 'metadata.labels'),
    ...validateDurationAnnotation(meta.annotations, rolloutDurationKeys, 'rollout-duration', 'metadata.annotations'),
    ...validateTrafficList(route.spec.traffic ?? [], 'spec.traffic', false),
  ];
  const previous = previousOf<Route>(opts);
  if (previous !== undefined && meta.ownerReferences === undefined) errs.push(...validateCreatorAndModifier(route, previous));
  return errs;
}

/**
 * Revision.Validate: metadata (name, autoscaling annotations allowed and validated, the configuration ownership
 * label); on create the spec, on update only that the spec is unchanged ("Immutable fields changed").
 */
export function validateRevision(rev: Revision, cfg: DefaultsConfig, opts?: ValidationOptions & UpdateContext): FieldError[] {
  const meta = rev.metadata;
  const errs = [
    ...validateObjectName(meta, 'metadata'),
    ...validateAutoscalingAnnotations(meta.annotations, opts?.autoscaler ?? defaultAutoscalerConfig(), 'metadata.annotations'),
    ...validateOwnerLabel(meta, Labels.configuration, 'Configuration', 'metadata.labels'),
  ];
  const previous = previousOf<Revision>(opts);
  if (previous === undefined) {
    return [
      ...errs,
      ...validateModuleShape(meta.annotations, 'metadata.annotations'),
      ...validateModuleKnown(meta.annotations, opts?.modules, 'metadata.annotations'),
      ...validateRevisionSpec(rev.spec, 'spec', cfg, opts),
    ];
  }
  // The module and its configuration are as immutable as the spec (ADR 0009); the labeler's metadata edits pass.
  errs.push(...validateModuleImmutable(meta.annotations, previous.metadata.annotations, 'metadata.annotations'));
  const diff = semanticEqual(previous.spec, rev.spec) ? '' : revisionSpecDiff(previous.spec, rev.spec);
  // Upstream returns this error alone, dropping the metadata errors found above.
  return diff === '' ? errs : [{ path: 'spec', message: 'Immutable fields changed (-old +new)', details: diff }];
}
