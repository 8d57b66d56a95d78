// The admission webhook's answers, case by case: every bad input in test/fixtures/admission-cases.ts is
// refused with upstream's one error (path, message, details where pinned), every good one and every seed / docs
// manifest is admitted unchanged, and a typical Service is stored exactly as upstream's webhook stores it.
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import {
  defaultForAdmission,
  validateConfigMapForAdmission,
  validateForAdmission,
  type AdmissionContext,
  type AdmissionKind,
} from '../../../api/admission.js';
import { defaultAutoscalerConfig, defaultDefaultsConfig, parseDefaultsConfig } from '../../../api/config/index.js';
import type { DefaultsConfig } from '../../../api/config/index.js';
import type { KubeObject } from '../../../api/meta.js';
import { formatFieldErrors, knativePodSpecFeatures, mergeFieldErrors, type FieldError, type PodSpecFeatures } from '../../../api/validation.js';
import { shippedPodSpecFeatures } from '../../fixtures/shipped-config.js';
import { docsManifests, invalidCases, seedManifests, service, validCases, type AdmissionCase } from '../../fixtures/admission-cases.js';

function context(
  operation: 'CREATE' | 'UPDATE',
  features: PodSpecFeatures,
  old?: KubeObject,
  defaults: DefaultsConfig = defaultDefaultsConfig(),
): AdmissionContext {
  return {
    operation,
    user: { username: 'alice@example.com' },
    defaults,
    validation: { autoscaler: defaultAutoscalerConfig(), features },
    ...(old !== undefined ? { old } : {}),
  };
}

type Json = unknown;
const isObj = (v: Json): v is Record<string, Json> => v !== null && typeof v === 'object' && !Array.isArray(v);

/** RFC 7386 merge patch from `a` to `b`, as kubectl apply computes it for custom resources (lists replaced whole). */
function mergePatch(a: Json, b: Json): Json {
  if (!isObj(a) || !isObj(b)) return b;
  const out: Record<string, Json> = {};
  for (const k of Object.keys(a)) if (!(k in b)) out[k] = null;
  for (const [k, v] of Object.entries(b)) if (JSON.stringify(a[k]) !== JSON.stringify(v)) out[k] = isObj(a[k]) && isObj(v) ? mergePatch(a[k], v) : v;
  return out;
}

function applyMergePatch(target: Json, patch: Json): Json {
  if (!isObj(patch)) return patch;
  const out: Record<string, Json> = isObj(target) ? { ...target } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = applyMergePatch(out[k], v);
  }
  return out;
}

/**
 * What the webhook answers for a case: the errors of the defaulted object. An UPDATE is `kubectl apply` of
 * `object` over the stored `old`: the merge patch between the two manifests applied to what the webhook stored.
 */
function admit(c: AdmissionCase, features: PodSpecFeatures): FieldError[] {
  if (c.kind === 'ConfigMap') {
    const annotations = c.object.metadata.annotations as Record<string, string> | undefined;
    return validateConfigMapForAdmission(String(c.object.metadata.name), (c.object as unknown as { data: Record<string, string> }).data, annotations);
  }
  const kind: AdmissionKind = c.kind;
  let stored: KubeObject | undefined;
  if (c.old !== undefined) {
    const create = context('CREATE', features);
    stored = defaultForAdmission(kind, c.old, create);
    expect(validateForAdmission(kind, stored, create)).toEqual([]);
  }
  const ctx = context(stored === undefined ? 'CREATE' : 'UPDATE', features, stored);
  const sent = stored === undefined ? c.object : (applyMergePatch(stored, mergePatch(c.old, c.object)) as KubeObject);
  return validateForAdmission(kind, defaultForAdmission(kind, sent, ctx), ctx);
}

describe('bad inputs are refused with upstream’s path and message', () => {
  it('has at least 60 cases across Service, Configuration, Revision, Route, DomainMapping and ConfigMaps', () => {
    expect(invalidCases.length).toBeGreaterThanOrEqual(60);
    const kinds = new Set(invalidCases.map((c) => c.kind));
    expect([...kinds].sort()).toEqual(['ConfigMap', 'Configuration', 'DomainMapping', 'Revision', 'Route', 'Service']);
  });

  describe.each([
    ['upstream features', knativePodSpecFeatures],
    ['the shipped (hakn) features', shippedPodSpecFeatures()],
  ])('with %s', (_, features) => {
    it.each(invalidCases.map((c) => [c.name, c] as const))('%s', (_name, c) => {
      const errs = mergeFieldErrors(admit(c, features));
      const lines = [`${c.expectMessage ?? ''}: ${c.expectPath ?? ''}`, ...(c.alsoExpect ?? [])];
      expect(errs.map((e) => `${e.message}: ${e.path}`).sort()).toEqual(lines.sort());
      if (c.expectDetails !== undefined) expect(errs[0]?.details).toBe(c.expectDetails);
      expect(formatFieldErrors(errs).split('\n')).toContain(`${c.expectMessage ?? ''}: ${c.expectPath ?? ''}`);
    });

    it.each(validCases.map((c) => [c.name, c] as const))('admits %s', (_name, c) => {
      expect(admit(c, features)).toEqual([]);
    });
  });
});

describe('the seeds’ and Knative docs’ manifests are admitted unchanged', () => {
  it.each([...seedManifests, ...docsManifests].map((m) => [m.name, m] as const))('%s', (_name, m) => {
    const obj = parse(m.yaml) as KubeObject;
    const kind = obj.kind as AdmissionKind;
    const ctx = context('CREATE', shippedPodSpecFeatures());
    const stored = defaultForAdmission(kind, obj, ctx);
    expect(validateForAdmission(kind, stored, ctx)).toEqual([]);
    // Defaulting only adds: every field the user wrote is stored as written.
    expect(stored).toMatchObject(obj as unknown as Record<string, unknown>);
  });
});

describe('a typical Service is stored as upstream’s webhook stores it', () => {
  // Upstream's config-defaults (container-concurrency 0), not hakn's 100.
  const upstreamDefaults = (): DefaultsConfig => {
    const parsed = parseDefaultsConfig({ 'container-concurrency': '0' });
    if (!parsed.ok) throw new Error(parsed.error);
    return parsed.value;
  };

  it('on CREATE: Go round-trip fields, SetDefaults and the user annotations, field by field', () => {
    const obj = service((s) => void (s.metadata.namespace = 'default'));
    const stored = defaultForAdmission('Service', obj, context('CREATE', knativePodSpecFeatures, undefined, upstreamDefaults()));
    expect(stored).toEqual({
      apiVersion: 'serving.knative.dev/v1',
      kind: 'Service',
      metadata: {
        name: 'web',
        namespace: 'default',
        annotations: { 'serving.knative.dev/creator': 'alice@example.com', 'serving.knative.dev/lastModifier': 'alice@example.com' },
      },
      spec: {
        template: {
          metadata: {},
          spec: {
            containerConcurrency: 0,
            containers: [
              {
                image: 'ghcr.io/tidal/hello:v1',
                name: 'user-container',
                readinessProbe: { successThreshold: 1, tcpSocket: { port: 0 } },
                resources: {},
              },
            ],
            enableServiceLinks: false,
            timeoutSeconds: 300,
          },
        },
        traffic: [{ latestRevision: true, percent: 100 }],
      },
    });
  });

  it('on UPDATE: lastModifier only when the spec changes; enableServiceLinks is not defaulted; creator is kept', () => {
    const create = context('CREATE', knativePodSpecFeatures, undefined, upstreamDefaults());
    const stored = defaultForAdmission('Service', service(), create);
    const bob = (old: KubeObject): AdmissionContext => ({
      ...context('UPDATE', knativePodSpecFeatures, old, upstreamDefaults()),
      user: { username: 'bob' },
    });

    const same = defaultForAdmission('Service', stored, bob(stored));
    expect(same.metadata.annotations).toEqual({
      'serving.knative.dev/creator': 'alice@example.com',
      'serving.knative.dev/lastModifier': 'alice@example.com',
    });

    const changed = defaultForAdmission(
      'Service',
      service(
        (s) => void (s.metadata.annotations = stored.metadata.annotations),
        (s) =>
          void (s.spec as { template: { spec: { containers: { image: string }[] } } }).template.spec.containers.forEach(
            (c) => (c.image = 'ghcr.io/tidal/hello:v2'),
          ),
      ),
      bob(stored),
    );
    expect(changed.metadata.annotations).toEqual({ 'serving.knative.dev/creator': 'alice@example.com', 'serving.knative.dev/lastModifier': 'bob' });
    expect((changed as unknown as { spec: { template: { spec: Record<string, unknown> } } }).spec.template.spec).not.toHaveProperty(
      'enableServiceLinks',
    );
    expect(validateForAdmission('Service', changed, bob(stored))).toEqual([]);
  });

  it('a Revision is defaulted on CREATE only, with no user annotations', () => {
    const rev: KubeObject = {
      apiVersion: 'serving.knative.dev/v1',
      kind: 'Revision',
      metadata: { name: 'rev-1' },
      spec: { containers: [{ image: 'nginx' }] },
    } as KubeObject;
    const created = defaultForAdmission('Revision', rev, context('CREATE', knativePodSpecFeatures, undefined, upstreamDefaults()));
    expect(created).toEqual({
      apiVersion: 'serving.knative.dev/v1',
      kind: 'Revision',
      metadata: { name: 'rev-1' },
      spec: {
        containerConcurrency: 0,
        containers: [{ image: 'nginx', name: 'user-container', readinessProbe: { successThreshold: 1, tcpSocket: { port: 0 } }, resources: {} }],
        enableServiceLinks: false,
        timeoutSeconds: 300,
      },
    });
    // On UPDATE only Go's round trip adds its zero-valued fields; SetDefaults leaves the spec alone.
    expect(defaultForAdmission('Revision', rev, context('UPDATE', knativePodSpecFeatures, created))).toEqual({
      ...rev,
      spec: { containers: [{ image: 'nginx', resources: {} }] },
    });
  });

  it('a status write is neither defaulted nor validated as the main resource', () => {
    const bad = service((s) => void (s.spec.traffic = [{ percent: 7 }]));
    const ctx = { ...context('UPDATE', knativePodSpecFeatures, bad), subResource: 'status' };
    expect(defaultForAdmission('Service', bad, ctx)).toEqual(bad);
    expect(validateForAdmission('Service', bad, ctx)).toEqual([]);
  });
});

describe('objects stored before the webhook existed', () => {
  it('a label patch on a Revision without the round-trip fields is not a spec change', () => {
    const old = {
      apiVersion: 'serving.knative.dev/v1',
      kind: 'Revision',
      metadata: { name: 'web-00001' },
      spec: { containers: [{ image: 'nginx', name: 'user-container' }], timeoutSeconds: 300 },
    } as KubeObject;
    const patched = { ...old, metadata: { ...old.metadata, labels: { 'serving.knative.dev/routingState': 'active' } } };
    const ctx = context('UPDATE', shippedPodSpecFeatures(), old);
    const sent = defaultForAdmission('Revision', patched, ctx);
    expect(sent).toEqual(patched); // the spec is kept as stored, without Go's round-trip fields
    expect(validateForAdmission('Revision', sent, ctx)).toEqual([]);
  });

  it('re-applying a Service stored without defaults keeps lastModifier (the spec did not change)', () => {
    const old = service(
      (s) => void (s.metadata.annotations = { 'serving.knative.dev/creator': 'alice', 'serving.knative.dev/lastModifier': 'alice' }),
    );
    const ctx = { ...context('UPDATE', shippedPodSpecFeatures(), old), user: { username: 'bob' } };
    const sent = defaultForAdmission('Service', old, ctx);
    expect(sent.metadata.annotations).toEqual({ 'serving.knative.dev/creator': 'alice', 'serving.knative.dev/lastModifier': 'alice' });
  });
});

describe('an update that leaves the spec as stored', () => {
  it('keeps the spec of an object stored before the webhook byte for byte (no generation bump, no new Revision)', () => {
    const old = {
      apiVersion: 'serving.knative.dev/v1',
      kind: 'Configuration',
      metadata: {
        name: 'web',
        ownerReferences: [{ apiVersion: 'serving.knative.dev/v1', kind: 'Service', name: 'web', uid: 'u', controller: true }],
      },
      spec: {
        template: {
          spec: {
            containerConcurrency: 100,
            timeoutSeconds: 300,
            enableServiceLinks: false,
            containers: [{ image: 'nginx', name: 'user-container', readinessProbe: { successThreshold: 1, tcpSocket: {} } }],
          },
        },
      },
    } as KubeObject;
    const labelled = { ...old, metadata: { ...old.metadata, labels: { 'serving.knative.dev/route': 'web' } } };
    const ctx = context('UPDATE', shippedPodSpecFeatures(), old);
    const sent = defaultForAdmission('Configuration', labelled, ctx);
    expect(sent).toEqual(labelled);
    expect(validateForAdmission('Configuration', sent, ctx)).toEqual([]);
  });
});

describe('a re-apply that drops a field the webhook added', () => {
  it('keeps the stored spec, so the generation does not move', () => {
    const create = context('CREATE', shippedPodSpecFeatures());
    const stored = defaultForAdmission('Service', service(), create);
    const reapplied = service((s) => void (s.metadata.annotations = stored.metadata.annotations));
    const sent = defaultForAdmission('Service', reapplied, context('UPDATE', shippedPodSpecFeatures(), stored));
    expect((sent as unknown as { spec: unknown }).spec).toEqual((stored as unknown as { spec: unknown }).spec);
  });
});
