// The warnings Knative's validation webhook answers beside its verdict (knative/pkg: the WarningLevel diagnostics of
// Validate, merged like errors, one `response.warnings` entry each; kubectl prints them as "Warning: …"). Upstream
// has three: container security-context fields left at Kubernetes' insecure defaults (unless config-features'
// secure-pod-defaults is Enabled or AllowRootBounded), `capabilities.drop` spelled `all`, and the deprecated
// queue-proxy resource-percentage annotation on a template. Pure.
import type { AdmissionContext, AdmissionKind } from './admission.js';
import { at, formatFieldErrors, generic, invalid, mergeFieldErrors, type FieldError } from './field-error.js';
import type { KubeObject } from './meta.js';
import type { Configuration, Revision, RevisionSpec, RevisionTemplateSpec, Service } from './serving.js';

type Obj = Record<string, unknown>;
interface SecurityContext {
  runAsNonRoot?: boolean | null;
  allowPrivilegeEscalation?: boolean | null;
  seccompProfile?: { type?: string | null } | null;
  capabilities?: { drop?: string[] | null } | null;
}

const insecureMessage = 'Kubernetes default value is insecure, Knative may default this to secure in a future release';
const percentageMessage =
  'Queue proxy resource percentage annotation is deprecated. Please use the available annotations to explicitly set resource values per service';
const percentageKeys = ['queue.sidecar.serving.knative.dev/resource-percentage', 'queue.sidecar.serving.knative.dev/resourcePercentage'];

const isSet = (v: unknown): boolean => v !== undefined && v !== null;

/** warnDefaultContainerSecurityContext: what one container leaves at Kubernetes' default, the pod's context considered. */
function containerWarnings(pod: SecurityContext, sc: SecurityContext, path: string): FieldError[] {
  const out: FieldError[] = [];
  const insecure = (field: string) => out.push(generic(insecureMessage, at(path, field)));
  if (!isSet(pod.runAsNonRoot) && !isSet(sc.runAsNonRoot)) insecure('runAsNonRoot');
  if (!isSet(sc.allowPrivilegeEscalation)) insecure('allowPrivilegeEscalation');
  if (!isSet(sc.seccompProfile) && !isSet(pod.seccompProfile)) insecure('seccompProfile');
  else if ((pod.seccompProfile?.type ?? '') === '' && (sc.seccompProfile?.type ?? '') === '') insecure('seccompProfile.type');
  if (!isSet(sc.capabilities)) insecure('capabilities');
  else if (!isSet(sc.capabilities?.drop)) insecure('capabilities.drop');
  // A common misspelling: lower-case "all" drops nothing.
  else if (sc.capabilities?.drop?.[0] === 'all') out.push(invalid('all', at(path, 'capabilities.drop'), "Must be spelled as 'ALL'"));
  return out;
}

/** The security-context warnings of a pod spec at `path` (every container, then every init container). */
function podSpecWarnings(spec: RevisionSpec | undefined, path: string, ctx: AdmissionContext): FieldError[] {
  const mode = ctx.validation.features?.securePodDefaults ?? 'Disabled';
  if (spec === undefined || mode === 'Enabled' || mode === 'AllowRootBounded') return [];
  const pod = (spec.securityContext ?? {}) as SecurityContext;
  const list = (field: 'containers' | 'initContainers') => (Array.isArray(spec[field]) ? (spec[field] as Obj[]) : []);
  return (['containers', 'initContainers'] as const).flatMap((field) =>
    list(field).flatMap((c, i) => containerWarnings(pod, (c.securityContext ?? {}) as SecurityContext, at(path, `${field}[${i}].securityContext`))),
  );
}

/** RevisionTemplateSpec.Validate's warnings: the pod spec's and the deprecated resource-percentage annotation's. */
function templateWarnings(tmpl: RevisionTemplateSpec | undefined, path: string, ctx: AdmissionContext): FieldError[] {
  const anns = tmpl?.metadata?.annotations ?? {};
  const key = percentageKeys.find((k) => anns[k] !== undefined);
  // ViaKey then ViaField: knative/pkg keeps the key in brackets after a dot.
  const deprecated = key !== undefined ? [generic(percentageMessage, `${at(path, 'metadata.annotations')}.[${key}]`)] : [];
  return [...podSpecWarnings(tmpl?.spec, at(path, 'spec'), ctx), ...deprecated];
}

/** The warnings' FieldErrors, merged as knative/pkg merges them (same message and details: one entry, paths sorted). */
export function admissionWarningErrors(kind: AdmissionKind, obj: KubeObject, ctx: AdmissionContext): FieldError[] {
  if ((ctx.subResource ?? '') !== '' || (ctx.operation !== 'CREATE' && ctx.operation !== 'UPDATE')) return [];
  switch (kind) {
    case 'Service':
      return mergeFieldErrors(templateWarnings((obj as Service).spec?.template, 'spec.template', ctx));
    case 'Configuration':
      return mergeFieldErrors(templateWarnings((obj as Configuration).spec?.template, 'spec.template', ctx));
    case 'Revision':
      // A Revision's spec is validated on create only (afterwards it may not change).
      return ctx.operation === 'CREATE' ? mergeFieldErrors(podSpecWarnings((obj as Revision).spec, 'spec', ctx)) : [];
    case 'Route':
    case 'DomainMapping':
      return [];
  }
}

/** `response.warnings` of the validation webhook: each merged warning as FieldError.Error() renders it. */
export function warningsForAdmission(kind: AdmissionKind, obj: KubeObject, ctx: AdmissionContext): string[] {
  return admissionWarningErrors(kind, obj, ctx).map((w) => formatFieldErrors([w]));
}
