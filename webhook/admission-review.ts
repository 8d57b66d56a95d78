// Kubernetes' AdmissionReview v1 in and out, for the three serving webhooks: what a request asks, which
// pure rule decides it (api/admission.ts), and the response the API server expects — a JSON patch for defaulting,
// `allowed: false` with Knative's "validation failed: …" message for validation, upstream's warnings beside either
// verdict. Pure: the server (server.ts) does the HTTP and passes the config in force.
import {
  defaultForAdmission,
  validateConfigMapForAdmission,
  validateForAdmission,
  type AdmissionContext,
  type AdmissionKind,
} from '../api/admission.js';
import { warningsForAdmission } from '../api/admission-warnings.js';
import type { DefaultsConfig } from '../api/config/types.js';
import type { KubeObject } from '../api/meta.js';
import { SERVING_GROUP } from '../api/kinds.js';
import { formatFieldErrors, type ValidationOptions } from '../api/validation.js';
import { diffJson } from './json-patch.js';

export const ADMISSION_API_VERSION = 'admission.k8s.io/v1';

export interface AdmissionRequest {
  uid: string;
  kind: { group: string; version: string; kind: string };
  resource?: { group: string; version: string; resource: string };
  subResource?: string;
  name?: string;
  namespace?: string;
  operation: 'CREATE' | 'UPDATE' | 'DELETE' | 'CONNECT';
  userInfo?: { username?: string; groups?: string[] };
  object?: KubeObject | null;
  oldObject?: KubeObject | null;
  dryRun?: boolean;
}

export interface AdmissionReview {
  apiVersion: string;
  kind: 'AdmissionReview';
  request?: AdmissionRequest;
  response?: AdmissionResponse;
}

export interface AdmissionResponse {
  uid: string;
  allowed: boolean;
  /** metav1.Status of a refusal: Knative answers 400 BadRequest (`webhook.MakeErrorStatus`). */
  status?: { status: 'Failure'; code: number; reason: string; message: string; metadata: Record<string, never> };
  patchType?: 'JSONPatch';
  /** Base64 of the JSON patch. */
  patch?: string;
  /** Knative's warning-level diagnostics (kubectl prints each as "Warning: …"); sent with a refusal too. */
  warnings?: string[];
}

/** The three endpoints and the webhook configuration each one serves. */
export const WebhookPaths = {
  defaulting: '/defaulting',
  resourceValidation: '/resource-validation',
  configValidation: '/config-validation',
} as const;
export type WebhookPath = (typeof WebhookPaths)[keyof typeof WebhookPaths];

/** The config the rules read, as the controller's ConfigStore holds it when the request arrives. */
export interface AdmissionConfig {
  defaults: DefaultsConfig;
  validation: ValidationOptions;
  systemNamespace: string;
}

/** What was decided, for logs and metrics. */
export interface AdmissionOutcome {
  response: AdmissionResponse;
  kind: string;
  namespace: string;
  name: string;
  operation: string;
  /** Number of patch operations (defaulting) or field errors (validation). */
  changes: number;
}

/** Kind → the serving.knative.dev version the webhook admits it in. */
const admissionKinds: ReadonlyMap<string, string> = new Map<AdmissionKind, string>([
  ['Service', 'v1'],
  ['Configuration', 'v1'],
  ['Revision', 'v1'],
  ['Route', 'v1'],
  ['DomainMapping', 'v1beta1'],
]);

function refuse(uid: string, message: string): AdmissionResponse {
  return { uid, allowed: false, status: { status: 'Failure', code: 400, reason: 'BadRequest', message, metadata: {} } };
}

function objectOf(req: AdmissionRequest): KubeObject | undefined {
  return req.object ?? undefined;
}

function contextOf(req: AdmissionRequest, cfg: AdmissionConfig): AdmissionContext {
  return {
    operation: req.operation,
    user: { username: req.userInfo?.username ?? '', ...(req.userInfo?.groups ? { groups: req.userInfo.groups } : {}) },
    ...(req.oldObject ? { old: req.oldObject } : {}),
    defaults: cfg.defaults,
    validation: cfg.validation,
    ...(req.subResource ? { subResource: req.subResource } : {}),
  };
}

/** The serving kind a request is about, or undefined when this webhook has nothing to say about it. */
function servingKind(req: AdmissionRequest): AdmissionKind | undefined {
  if (req.kind.group !== SERVING_GROUP || admissionKinds.get(req.kind.kind) !== req.kind.version) return undefined;
  // Status updates and DELETE are admitted untouched (Knative skips spec validation on /status).
  if (req.subResource || (req.operation !== 'CREATE' && req.operation !== 'UPDATE')) return undefined;
  return req.kind.kind as AdmissionKind;
}

function defaulting(req: AdmissionRequest, cfg: AdmissionConfig): { response: AdmissionResponse; changes: number } {
  const kind = servingKind(req);
  const obj = objectOf(req);
  if (!kind || !obj) return { response: { uid: req.uid, allowed: true }, changes: 0 };
  const ctx = contextOf(req, cfg);
  // Knative's defaults and its creator/lastModifier rules (api/admission.ts).
  const defaulted = defaultForAdmission(kind, obj, ctx);
  const ops = diffJson(obj, defaulted);
  if (ops.length === 0) return { response: { uid: req.uid, allowed: true }, changes: 0 };
  return {
    response: { uid: req.uid, allowed: true, patchType: 'JSONPatch', patch: Buffer.from(JSON.stringify(ops)).toString('base64') },
    changes: ops.length,
  };
}

function validation(req: AdmissionRequest, cfg: AdmissionConfig): { response: AdmissionResponse; changes: number } {
  const kind = servingKind(req);
  const obj = objectOf(req);
  if (!kind || !obj) return { response: { uid: req.uid, allowed: true }, changes: 0 };
  const ctx = contextOf(req, cfg);
  const errs = validateForAdmission(kind, obj, ctx);
  const warnings = warningsForAdmission(kind, obj, ctx);
  const response = errs.length === 0 ? { uid: req.uid, allowed: true } : refuse(req.uid, `validation failed: ${formatFieldErrors(errs)}`);
  return { response: warnings.length > 0 ? { ...response, warnings } : response, changes: errs.length };
}

function configValidation(req: AdmissionRequest, cfg: AdmissionConfig): { response: AdmissionResponse; changes: number } {
  const obj: (KubeObject & { data?: Record<string, string> }) | undefined = objectOf(req);
  const name = obj?.metadata.name ?? req.name ?? '';
  const ours =
    req.kind.group === '' &&
    req.kind.kind === 'ConfigMap' &&
    (req.operation === 'CREATE' || req.operation === 'UPDATE') &&
    !req.subResource &&
    (obj?.metadata.namespace ?? req.namespace) === cfg.systemNamespace &&
    name.startsWith('config-');
  if (!ours || !obj) return { response: { uid: req.uid, allowed: true }, changes: 0 };
  const errs = validateConfigMapForAdmission(name, obj.data ?? {}, obj.metadata.annotations ?? {});
  if (errs.length === 0) return { response: { uid: req.uid, allowed: true }, changes: 0 };
  return { response: refuse(req.uid, `validation failed: ${formatFieldErrors(errs)}`), changes: errs.length };
}

/**
 * Answers one AdmissionReview for `path`. A malformed review (no request) is answered with a refusal rather than an
 * exception, so the API server shows a reason; a rule that throws is reported the same way (upstream's
 * "mutation failed" / "validation failed").
 */
export function reviewAdmission(path: WebhookPath, review: AdmissionReview, cfg: AdmissionConfig): AdmissionOutcome {
  const req = review.request;
  if (!req) {
    return { response: refuse('', 'AdmissionReview has no request'), kind: '', namespace: '', name: '', operation: '', changes: 0 };
  }
  const obj = objectOf(req) ?? req.oldObject ?? undefined;
  const id = {
    kind: req.kind.kind,
    namespace: obj?.metadata.namespace ?? req.namespace ?? '',
    name: obj?.metadata.name ?? req.name ?? '',
    operation: req.operation,
  };
  try {
    const decided =
      path === WebhookPaths.defaulting
        ? defaulting(req, cfg)
        : path === WebhookPaths.resourceValidation
          ? validation(req, cfg)
          : configValidation(req, cfg);
    return { ...id, ...decided };
  } catch (err) {
    const verb = path === WebhookPaths.defaulting ? 'mutation failed' : 'validation failed';
    return { ...id, response: refuse(req.uid, `${verb}: ${err instanceof Error ? err.message : String(err)}`), changes: 0 };
  }
}

/** The AdmissionReview to send back. */
export function reviewResponse(response: AdmissionResponse): AdmissionReview {
  return { apiVersion: ADMISSION_API_VERSION, kind: 'AdmissionReview', response };
}
