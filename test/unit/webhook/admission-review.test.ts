import { describe, expect, it } from 'vitest';
import { defaultAutoscalerConfig, defaultDefaultsConfig } from '../../../api/config/index.js';
import type { KubeObject } from '../../../api/meta.js';
import { reviewAdmission, WebhookPaths, type AdmissionRequest, type AdmissionReview } from '../../../webhook/admission-review.js';
import { applyJsonPatch, type JsonPatchOperation } from '../../../webhook/json-patch.js';

const cfg = { defaults: defaultDefaultsConfig(), validation: { autoscaler: defaultAutoscalerConfig() }, systemNamespace: 'knative-serving' };

function review(req: Partial<AdmissionRequest> & { object?: KubeObject | null }): AdmissionReview {
  const obj = req.object ?? undefined;
  return {
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid: 'uid-1',
      kind: { group: 'serving.knative.dev', version: 'v1', kind: obj?.kind ?? 'Service' },
      operation: 'CREATE',
      userInfo: { username: 'alice', groups: ['system:authenticated'] },
      ...req,
    },
  };
}

const service = (name: string, over: Record<string, unknown> = {}): KubeObject & { spec: Record<string, unknown> } => ({
  apiVersion: 'serving.knative.dev/v1',
  kind: 'Service',
  metadata: { name, namespace: 'default' },
  spec: { template: { spec: { containers: [{ image: 'nginx', ports: [{ containerPort: 80 }] }] } }, ...over },
});

/** A Service as validation sees it: after the defaulting webhook (traffic filled in). */
const admitted = (name: string): KubeObject & { spec: Record<string, unknown> } =>
  service(name, { traffic: [{ latestRevision: true, percent: 100 }] });

function patched(obj: KubeObject, patch: string | undefined): KubeObject {
  const ops = JSON.parse(Buffer.from(patch ?? 'W10=', 'base64').toString()) as JsonPatchOperation[];
  return applyJsonPatch(obj, ops) as KubeObject;
}

describe('defaulting', () => {
  it('answers a Service create with a JSON patch carrying the defaults and the user annotations', () => {
    const obj = service('hello');
    const out = reviewAdmission(WebhookPaths.defaulting, review({ object: obj }), cfg);
    expect(out.response).toMatchObject({ uid: 'uid-1', allowed: true, patchType: 'JSONPatch' });
    const stored = patched(obj, out.response.patch) as KubeObject & { spec: { template: { spec: Record<string, unknown> }; traffic: unknown } };
    expect(stored.metadata.annotations).toEqual({ 'serving.knative.dev/creator': 'alice', 'serving.knative.dev/lastModifier': 'alice' });
    expect(stored.spec.template.spec.timeoutSeconds).toBe(300);
    expect(stored.spec.template.spec.containerConcurrency).toBe(cfg.defaults.containerConcurrency);
    expect(stored.spec.traffic).toEqual([{ percent: 100, latestRevision: true }]);
    expect(out).toMatchObject({ kind: 'Service', namespace: 'default', name: 'hello', operation: 'CREATE' });
  });

  it('on update sets lastModifier only when the spec changed, and never rewrites creator', () => {
    const stored = patched(service('hello'), reviewAdmission(WebhookPaths.defaulting, review({ object: service('hello') }), cfg).response.patch);
    const sameSpec = structuredClone(stored);
    const unchanged = reviewAdmission(
      WebhookPaths.defaulting,
      review({ operation: 'UPDATE', object: sameSpec, oldObject: stored, userInfo: { username: 'bob' } }),
      cfg,
    );
    expect(unchanged.response.patch).toBeUndefined();

    const edited = structuredClone(stored) as KubeObject & { spec: { template: { spec: { containers: { image: string }[] } } } };
    edited.spec.template.spec.containers[0]!.image = 'nginx:2';
    const changed = reviewAdmission(
      WebhookPaths.defaulting,
      review({ operation: 'UPDATE', object: edited, oldObject: stored, userInfo: { username: 'bob' } }),
      cfg,
    );
    expect(patched(edited, changed.response.patch).metadata.annotations).toEqual({
      'serving.knative.dev/creator': 'alice',
      'serving.knative.dev/lastModifier': 'bob',
    });
  });

  it('leaves Configurations and Routes owned by a Service without user annotations', () => {
    const cfgObj: KubeObject = {
      apiVersion: 'serving.knative.dev/v1',
      kind: 'Configuration',
      metadata: {
        name: 'hello',
        namespace: 'default',
        ownerReferences: [{ apiVersion: 'serving.knative.dev/v1', kind: 'Service', name: 'hello', uid: 'u' }],
      },
      spec: { template: { spec: { containers: [{ image: 'nginx' }] } } },
    } as KubeObject;
    const out = reviewAdmission(WebhookPaths.defaulting, review({ object: cfgObj }), cfg);
    expect(patched(cfgObj, out.response.patch).metadata.annotations).toBeUndefined();
  });

  it('admits status updates, DELETE and other kinds untouched', () => {
    const obj = service('hello');
    for (const r of [
      review({ object: obj, subResource: 'status', operation: 'UPDATE', oldObject: obj }),
      review({ object: null, oldObject: obj, operation: 'DELETE' }),
    ]) {
      expect(reviewAdmission(WebhookPaths.defaulting, r, cfg).response).toEqual({ uid: 'uid-1', allowed: true });
      expect(reviewAdmission(WebhookPaths.resourceValidation, r, cfg).response).toEqual({ uid: 'uid-1', allowed: true });
    }
    const pod = review({ object: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' } }, kind: { group: '', version: 'v1', kind: 'Pod' } });
    expect(reviewAdmission(WebhookPaths.defaulting, pod, cfg).response).toEqual({ uid: 'uid-1', allowed: true });
  });
});

describe('validation', () => {
  it("admits a valid, defaulted Service with upstream's warning about its insecure security context", () => {
    const obj = patched(service('hello'), reviewAdmission(WebhookPaths.defaulting, review({ object: service('hello') }), cfg).response.patch);
    const sc = 'spec.template.spec.containers[0].securityContext';
    expect(reviewAdmission(WebhookPaths.resourceValidation, review({ object: obj }), cfg).response).toEqual({
      uid: 'uid-1',
      allowed: true,
      warnings: [
        'Kubernetes default value is insecure, Knative may default this to secure in a future release: ' +
          `${sc}.allowPrivilegeEscalation, ${sc}.capabilities, ${sc}.runAsNonRoot, ${sc}.seccompProfile`,
      ],
    });
  });

  it('sends the warnings with a refusal too, and none for a Route', () => {
    const bad = service('hello', { traffic: [{ latestRevision: true, percent: 70 }] });
    const out = reviewAdmission(WebhookPaths.resourceValidation, review({ object: bad }), cfg);
    expect(out.response.allowed).toBe(false);
    expect(out.response.warnings).toHaveLength(1);
    const route = {
      apiVersion: 'serving.knative.dev/v1',
      kind: 'Route',
      metadata: { name: 'r', namespace: 'default' },
      spec: { traffic: [{ configurationName: 'c', percent: 100 }] },
    };
    expect(reviewAdmission(WebhookPaths.resourceValidation, review({ object: route }), cfg).response).toEqual({ uid: 'uid-1', allowed: true });
  });

  it("refuses with Knative's message, 400 BadRequest and the field path", () => {
    const bad = service('hello', {
      traffic: [
        { latestRevision: true, percent: 70 },
        { latestRevision: true, percent: 50 },
      ],
    });
    const out = reviewAdmission(WebhookPaths.resourceValidation, review({ object: bad }), cfg);
    expect(out.response.allowed).toBe(false);
    expect(out.response.status).toEqual({
      status: 'Failure',
      code: 400,
      reason: 'BadRequest',
      message: 'validation failed: Traffic targets sum to 120, want 100: spec.traffic',
      metadata: {},
    });
    expect(out.changes).toBe(1);
  });

  it('refuses an invalid name and a bad min-scale, each with its path', () => {
    const name = reviewAdmission(WebhookPaths.resourceValidation, review({ object: admitted('Bad_Name') }), cfg);
    expect(name.response.status?.message).toMatch(/^validation failed: not a DNS 1035 label: .*: metadata\.name$/s);
    const scaled = admitted('hello');
    (scaled.spec.template as { metadata?: unknown }).metadata = { annotations: { 'autoscaling.knative.dev/min-scale': '-3' } };
    const out = reviewAdmission(WebhookPaths.resourceValidation, review({ object: scaled }), cfg);
    expect(out.response.status?.message).toContain('spec.template.metadata.annotations.autoscaling.knative.dev/min-scale');
  });

  it('refuses a changed creator, and a changed lastModifier when the spec did not change', () => {
    const old = admitted('hello');
    old.metadata.annotations = { 'serving.knative.dev/creator': 'alice', 'serving.knative.dev/lastModifier': 'alice' };
    const next = structuredClone(old);
    next.metadata.annotations = { 'serving.knative.dev/creator': 'mallory', 'serving.knative.dev/lastModifier': 'mallory' };
    const out = reviewAdmission(WebhookPaths.resourceValidation, review({ operation: 'UPDATE', object: next, oldObject: old }), cfg);
    expect(out.response.status?.message).toBe(
      'validation failed: annotation value is immutable: metadata.annotations.serving.knative.dev/creator\n' +
        'invalid value: mallory: metadata.annotations.serving.knative.dev/lastModifier',
    );
  });
});

describe('config validation', () => {
  const cm = (namespace: string, name: string): KubeObject =>
    ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace }, data: { x: 'y' } }) as KubeObject;
  it('admits config maps outside the system namespace or not named config-* without asking the rules', () => {
    for (const obj of [cm('default', 'config-defaults'), cm('knative-serving', 'other')]) {
      const r = review({ object: obj, kind: { group: '', version: 'v1', kind: 'ConfigMap' } });
      expect(reviewAdmission(WebhookPaths.configValidation, r, cfg).response).toEqual({ uid: 'uid-1', allowed: true });
    }
  });

  it('answers a malformed review with a refusal', () => {
    expect(reviewAdmission(WebhookPaths.configValidation, { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview' }, cfg).response.allowed).toBe(
      false,
    );
  });
});
