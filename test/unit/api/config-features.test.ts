import { describe, expect, it } from 'vitest';
import { defaultForAdmission, validateConfigMapForAdmission, validateForAdmission, type AdmissionContext } from '../../../api/admission.js';
import { defaultDefaultsConfig, defaultFeaturesConfig, parseFeatures, parseFeaturesConfig } from '../../../api/config/index.js';
import type { KubeObject } from '../../../api/meta.js';
import { knativePodSpecFeatures, type PodSpecFeatures } from '../../../api/validation.js';
import { service } from '../../fixtures/admission-cases.js';
import { shippedPodSpecFeatures } from '../../fixtures/shipped-config.js';

const parsed = (data: Record<string, string>): PodSpecFeatures => {
  const p = parseFeaturesConfig(data);
  if (!p.ok) throw new Error(p.error);
  return p.value;
};

describe('config-features', () => {
  it("is Knative's defaults when empty, and reads Enabled/Allowed/Disabled in any case", () => {
    expect(parsed({})).toEqual(knativePodSpecFeatures);
    expect(
      parsed({ 'kubernetes.podspec-init-containers': 'enabled', 'multi-container': 'Disabled', 'kubernetes.podspec-fieldref': 'Allowed' }),
    ).toEqual({
      ...knativePodSpecFeatures,
      initContainers: true,
      multiContainer: false,
      fieldRef: true,
    });
    expect(parsed({ 'kubernetes.podspec-affinity': 'Enabled', 'kubernetes.podspec-nodeselector': 'disabled' }).podSpecFields).toEqual(['affinity']);
    expect(parsed({ 'secure-pod-defaults': 'allowrootbounded' }).securePodDefaults).toBe('AllowRootBounded');
  });

  it('parseFeatures: the pod-spec gates plus tag-header-based-routing (Disabled by default)', () => {
    expect(parseFeatures({})).toEqual({ ok: true, value: defaultFeaturesConfig() });
    expect(defaultFeaturesConfig()).toEqual({ podSpec: knativePodSpecFeatures, tagHeaderBasedRouting: false });
    const p = parseFeatures({ 'tag-header-based-routing': 'Enabled', 'secure-pod-defaults': 'enabled' });
    expect(p).toMatchObject({ ok: true, value: { tagHeaderBasedRouting: true, podSpec: { securePodDefaults: 'Enabled' } } });
    expect(parseFeatures({ 'tag-header-based-routing': 'maybe' })).toMatchObject({ ok: true, value: { tagHeaderBasedRouting: false } });
  });

  it("the shipped deploy/config/config-features.yaml enables hakn's pod-spec features and nothing else", () => {
    expect(shippedPodSpecFeatures()).toEqual({
      ...knativePodSpecFeatures,
      multiContainer: true,
      fieldRef: true,
      emptyDir: true,
      initContainers: true,
      securityContext: true,
      podSpecFields: ['affinity', 'topologySpreadConstraints'],
    });
  });

  it('keeps the default for a value it does not know, and so never refuses an edit (as upstream)', () => {
    expect(parsed({ 'multi-container': 'sometimes' }).multiContainer).toBe(true);
    expect(validateConfigMapForAdmission('config-features', { 'multi-container': 'sometimes' })).toEqual([]);
  });

  it('gates a pod-spec field in validation', () => {
    const ctx = (features: PodSpecFeatures): AdmissionContext => ({
      operation: 'CREATE',
      user: { username: 'u' },
      defaults: defaultDefaultsConfig(),
      validation: { features },
    });
    const svc = service((s) => void ((s.spec.template as { spec: Record<string, unknown> }).spec.nodeSelector = { disk: 'ssd' }));
    const run = (f: PodSpecFeatures) => validateForAdmission('Service', defaultForAdmission('Service', svc, ctx(f)), ctx(f));
    expect(run(parsed({}))).toEqual([{ path: 'spec.template.spec.nodeSelector', message: 'must not set the field(s)' }]);
    expect(run(parsed({ 'kubernetes.podspec-nodeselector': 'enabled' }))).toEqual([]);
  });
});

describe('secure-pod-defaults', () => {
  const admit = (mode: string, obj: KubeObject): KubeObject => {
    const features = parsed({ 'secure-pod-defaults': mode });
    const ctx: AdmissionContext = { operation: 'CREATE', user: { username: 'u' }, defaults: defaultDefaultsConfig(), validation: { features } };
    const stored = defaultForAdmission('Service', obj, ctx);
    expect(validateForAdmission('Service', stored, ctx)).toEqual([]);
    return stored;
  };
  const firstContainer = (o: KubeObject): Record<string, unknown> =>
    (o as unknown as { spec: { template: { spec: { containers: Record<string, unknown>[] } } } }).spec.template.spec.containers[0] ?? {};

  it('Enabled: no privilege escalation, RuntimeDefault seccomp, drop ALL, run as non-root', () => {
    expect(firstContainer(admit('enabled', service())).securityContext).toEqual({
      allowPrivilegeEscalation: false,
      seccompProfile: { type: 'RuntimeDefault' },
      capabilities: { drop: ['ALL'] },
      runAsNonRoot: true,
    });
  });

  it('AllowRootBounded: the same without runAsNonRoot; a low port keeps NET_BIND_SERVICE; set fields are kept', () => {
    const svc = service((s) => {
      const c = (s.spec.template as { spec: { containers: Record<string, unknown>[] } }).spec.containers[0] ?? {};
      c.ports = [{ containerPort: 80 }];
      c.securityContext = { allowPrivilegeEscalation: true };
    });
    expect(firstContainer(admit('AllowRootBounded', svc)).securityContext).toEqual({
      allowPrivilegeEscalation: true,
      seccompProfile: { type: 'RuntimeDefault' },
      capabilities: { drop: ['ALL'], add: ['NET_BIND_SERVICE'] },
    });
  });

  it('Disabled (the default) leaves the security context alone', () => {
    expect(firstContainer(admit('disabled', service()))).not.toHaveProperty('securityContext');
  });
});
