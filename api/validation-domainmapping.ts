// DomainMapping defaults and validation (knative/serving pkg/apis/serving/v1beta1/domainmapping_defaults.go,
// domainmapping_validation.go; knative.dev/pkg duckv1.KReference.Validate; k8s IsFullyQualifiedDomainName).
// The admission webhook refuses what these find; the reconciler reports the same on the
// DomainMapping's status when it was stored bypassing the webhook. Pure.
import { cloneJson } from './conditions.js';
import { ClusterDomain, type DomainMapping, type KReference } from './domainmapping.js';
import { at, disallowed, generic, missing, via, type FieldError } from './field-error.js';
import { dns1123LabelErrors, dns1123SubdomainErrors } from './k8s-names.js';
import { validateCreatorAndModifier, type UpdateContext } from './validation.js';

/** DomainMapping.SetDefaults: `spec.ref.namespace` defaults to the mapping's namespace. Never mutates `dm`. */
export function setDomainMappingDefaults(dm: DomainMapping): DomainMapping {
  const out = cloneJson(dm);
  out.spec ??= { ref: {} };
  out.spec.ref ??= {};
  if ((out.spec.ref.namespace ?? '') === '' && (dm.metadata.namespace ?? '') !== '') out.spec.ref.namespace = dm.metadata.namespace;
  return out;
}

/** field.Invalid(path, value, detail).Error(), as ToAggregate renders a single error. */
const fieldInvalid = (path: string, value: string, detail: string): string => `${path}: Invalid value: ${JSON.stringify(value)}: ${detail}`;

/** k8s validation.IsFullyQualifiedDomainName(field.NewPath("name"), name).ToAggregate().Error(), or '' when valid. */
export function fqdnError(name: string): string {
  const errs: string[] = [];
  if (name === '') errs.push('name: Required value');
  else {
    const trimmed = name.endsWith('.') ? name.slice(0, -1) : name;
    const sub = dns1123SubdomainErrors(trimmed);
    if (sub.length > 0) errs.push(...sub.map((e) => fieldInvalid('name', trimmed, e)));
    else if (trimmed.split('.').length < 2)
      errs.push(fieldInvalid('name', trimmed, 'should be a domain with at least two segments separated by dots'));
    else for (const label of trimmed.split('.')) errs.push(...dns1123LabelErrors(label).map((e) => fieldInvalid('name', label, e)));
  }
  // utilerrors.Aggregate: one error prints as itself, several as "[a, b]".
  return errs.length === 0 ? '' : errs.length === 1 ? errs[0]! : `[${errs.join(', ')}]`;
}

/** duckv1.KReference.Validate (group not allowed, no cross-namespace refs), paths relative to the ref. */
export function validateKReference(ref: KReference | undefined, parentNamespace: string): FieldError[] {
  if (ref === undefined) return [missing('name'), missing('apiVersion'), missing('kind')];
  const errs: FieldError[] = [];
  if ((ref.name ?? '') === '') errs.push(missing('name'));
  if ((ref.apiVersion ?? '') === '') errs.push(missing('apiVersion'));
  if ((ref.kind ?? '') === '') errs.push(missing('kind'));
  const ns = ref.namespace ?? '';
  if (ns !== '' && parentNamespace !== '' && ns !== parentNamespace) {
    errs.push(
      generic('mismatched namespaces', 'namespace', `parent namespace: ${JSON.stringify(parentNamespace)} does not match ref: ${JSON.stringify(ns)}`),
    );
  }
  return errs;
}

/**
 * DomainMapping.Validate: metadata (no generateName, the name an FQDN not under the cluster domain; on update the
 * creator/lastModifier rules) and `spec.ref`. A `/status` write is not validated.
 */
export function validateDomainMapping(dm: DomainMapping, opts: UpdateContext = {}): FieldError[] {
  if ((opts.subResource ?? '') !== '') return [];
  const meta = dm.metadata;
  const name = meta.name ?? '';
  const metaErrs: FieldError[] = [];
  if ((meta.generateName ?? '') !== '') metaErrs.push(disallowed('generateName'));
  const fqdn = fqdnError(name);
  if (fqdn !== '') metaErrs.push(generic(`invalid name ${JSON.stringify(name)}: ${fqdn}`, 'name'));
  if (name.endsWith(`.${ClusterDomain}`)) {
    metaErrs.push(
      generic(`invalid name ${JSON.stringify(name)}: must not be a subdomain of cluster local domain ${JSON.stringify(ClusterDomain)}`, 'name'),
    );
  }
  const errs = via('metadata', metaErrs);
  if (opts.previous !== undefined) errs.push(...validateCreatorAndModifier(dm, opts.previous));
  errs.push(...via(at('spec', 'ref'), validateKReference(dm.spec?.ref, meta.namespace ?? '')));
  return errs;
}
