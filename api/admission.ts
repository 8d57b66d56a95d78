// What Knative's admission webhook decides, as pure functions: the defaulted object a request should store,
// and the field errors that refuse it. The webhook server (webhook/) turns these into AdmissionReview responses
// (a JSON patch from the request's object to `defaultForAdmission`'s, and `formatFieldErrors` of the errors); the
// reconcilers never call them. Pure: no I/O, clocks or randomness.
import { validateConfigMap } from './config/validate.js';
import type { DefaultsConfig } from './config/types.js';
import { cloneJson } from './conditions.js';
import { setConfigurationDefaults, setRevisionSpecDefaults, setRouteDefaults, setServiceDefaults } from './defaults.js';
import type { FieldError } from './field-error.js';
import { goRoundTrip } from './go-round-trip.js';
import { Annotations } from './labels.js';
import type { KubeObject } from './meta.js';
import type { Configuration, Revision, Route, Service } from './serving.js';
import type { DomainMapping } from './domainmapping.js';
import { setDomainMappingDefaults, validateDomainMapping } from './validation-domainmapping.js';
import { semanticEqual, validateConfiguration, validateRevision, validateRoute, validateService, type ValidationOptions } from './validation.js';

/** The kinds the serving webhooks admit. */
export type AdmissionKind = 'Service' | 'Configuration' | 'Revision' | 'Route' | 'DomainMapping';

/** The request as the webhook sees it: who, what operation, the object before an update, and the config in force. */
export interface AdmissionContext {
  operation: 'CREATE' | 'UPDATE' | 'DELETE' | 'CONNECT';
  user: { username: string; groups?: readonly string[] };
  /** The stored object, on UPDATE. */
  old?: KubeObject;
  /** config-defaults as last parsed. */
  defaults: DefaultsConfig;
  /**
   * config-autoscaler and config-features (`parseFeaturesConfig`) for validation; the features' secure-pod-defaults
   * also drives defaulting.
   */
  validation: ValidationOptions;
  /** The `/status` and other subresources are not defaulted or validated as the main resource. */
  subResource?: string;
}

/** The object's spec, for the "did the spec change" tests of the user-info rules. */
const specOf = (obj: KubeObject | undefined): unknown => (obj as { spec?: unknown } | undefined)?.spec;

/**
 * serving.SetUserInfo: on create `creator` and `lastModifier` become the requesting user; on update only
 * `lastModifier`, and only when the spec changed. Configurations and Routes a Service owns are left alone (their
 * annotations come from the Service).
 */
function withUserInfo(kind: AdmissionKind, obj: KubeObject, ctx: AdmissionContext): KubeObject {
  if ((kind === 'Configuration' || kind === 'Route') && obj.metadata.ownerReferences !== undefined) return obj;
  if (kind === 'Revision') return obj;
  const update = ctx.operation === 'UPDATE' && ctx.old !== undefined;
  // Upstream compares with the stored object defaulted too, so its own defaults never count as a change.
  const oldDefaulted = ctx.old !== undefined ? setDefaultsFor(kind, ctx.old, { ...ctx, operation: 'CREATE' }) : undefined;
  if (update && semanticEqual(specOf(oldDefaulted), specOf(obj))) return obj;
  const annotations = { ...obj.metadata.annotations };
  if (!update) annotations[Annotations.creator] = ctx.user.username;
  annotations[Annotations.lastModifier] = ctx.user.username;
  return { ...obj, metadata: { ...obj.metadata, annotations } };
}

function setDefaultsFor(kind: AdmissionKind, obj: KubeObject, ctx: AdmissionContext): KubeObject {
  const old = ctx.operation === 'UPDATE' ? ctx.old : undefined;
  const features = { securePodDefaults: ctx.validation.features?.securePodDefaults ?? 'Disabled' } as const;
  switch (kind) {
    case 'Service':
      return setServiceDefaults(obj as Service, ctx.defaults, old as Service | undefined, features);
    case 'Configuration':
      return setConfigurationDefaults(obj as Configuration, ctx.defaults, old as Configuration | undefined, features);
    case 'Route':
      return setRouteDefaults(obj as Route);
    case 'DomainMapping':
      return setDomainMappingDefaults(obj as DomainMapping);
    case 'Revision': {
      // A Revision is defaulted on create only: its spec is immutable afterwards.
      if (old !== undefined) return obj;
      const rev = obj as Revision;
      const defaulted: Revision = { ...rev, spec: setRevisionSpecDefaults(rev.spec, ctx.defaults, undefined, features) };
      return defaulted;
    }
  }
}

/**
 * The object to store: a defaulted copy of `obj` (never mutates it), as upstream's defaulting webhook builds it —
 * Knative's SetDefaults, the fields Go's types always serialize (`resources: {}`, a probe's `port: 0`, …), then the
 * creator/lastModifier annotations. The webhook sends the difference as a JSON patch. A subresource write
 * is returned unchanged.
 */
export function defaultForAdmission(kind: AdmissionKind, obj: KubeObject, ctx: AdmissionContext): KubeObject {
  if ((ctx.subResource ?? '') !== '' || (ctx.operation !== 'CREATE' && ctx.operation !== 'UPDATE')) return cloneJson(obj);
  // Go re-encodes the defaulted object: the zero-valued fields appear around what SetDefaults added, too.
  let defaulted = goRoundTrip(kind, setDefaultsFor(kind, obj, ctx));
  // An update that leaves the spec as stored keeps the stored spec byte for byte. Otherwise Go's zero-valued fields
  // would change the spec of an object stored before the webhook, and a server-side apply that drops one the
  // webhook added would remove it: either bumps the generation and, for a Configuration, stamps a new Revision on a
  // mere label patch or re-apply. (Objects the webhook stored already carry them: the same result as upstream.)
  if (ctx.operation === 'UPDATE' && ctx.old !== undefined && semanticEqual(specOf(ctx.old), specOf(defaulted))) {
    defaulted = { ...defaulted, spec: cloneJson(specOf(ctx.old)) } as KubeObject;
  }
  return withUserInfo(kind, defaulted, ctx);
}

/**
 * Why the (already defaulted) object is refused, with Knative's field paths and messages; empty when admitted.
 * On UPDATE `ctx.old` is the stored object (for Revision immutability, BYO names and the user-info rules).
 */
export function validateForAdmission(kind: AdmissionKind, obj: KubeObject, ctx: AdmissionContext): FieldError[] {
  if (ctx.operation !== 'CREATE' && ctx.operation !== 'UPDATE') return [];
  const update = {
    ...ctx.validation,
    ...(ctx.operation === 'UPDATE' && ctx.old !== undefined ? { previous: ctx.old } : {}),
    ...(ctx.subResource !== undefined ? { subResource: ctx.subResource } : {}),
  };
  switch (kind) {
    case 'Service':
      return validateService(obj as Service, ctx.defaults, update);
    case 'Configuration':
      return validateConfiguration(obj as Configuration, ctx.defaults, update);
    case 'Route':
      return validateRoute(obj as Route, update);
    case 'DomainMapping':
      return validateDomainMapping(obj as DomainMapping, update);
    case 'Revision':
      return validateRevision(obj as Revision, ctx.defaults, update);
  }
}

/**
 * Why an edit of a `config-*` map of the system namespace is refused: the key and the reason, from the same parsers
 * the controller uses (`_example` is not a setting, as upstream). Pass the map's `annotations` to also refuse an edit
 * inside `_example` that breaks its `knative.dev/example-checksum`. Maps Tidal does not parse are accepted.
 */
export function validateConfigMapForAdmission(
  name: string,
  data: Readonly<Record<string, string>>,
  annotations?: Readonly<Record<string, string>>,
): FieldError[] {
  return validateConfigMap(name, data, annotations);
}
