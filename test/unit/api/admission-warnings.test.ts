// The validation webhook's warnings, against upstream's text (serving's warnDefaultContainerSecurityContext and the
// deprecated resource-percentage annotation, merged and rendered as knative/pkg's FieldError.Error()).
import { describe, expect, it } from 'vitest';
import type { AdmissionContext } from '../../../api/admission.js';
import { warningsForAdmission } from '../../../api/admission-warnings.js';
import { defaultDefaultsConfig } from '../../../api/config/index.js';
import type { KubeObject } from '../../../api/meta.js';
import type { SecurePodDefaults } from '../../../api/validation-podspec.js';

const insecure = 'Kubernetes default value is insecure, Knative may default this to secure in a future release';

function ctx(operation: 'CREATE' | 'UPDATE' = 'CREATE', securePodDefaults: SecurePodDefaults = 'Disabled', subResource?: string): AdmissionContext {
  return {
    operation,
    user: { username: 'u' },
    defaults: defaultDefaultsConfig(),
    validation: { features: { securePodDefaults } },
    ...(subResource !== undefined ? { subResource } : {}),
  };
}

function service(podSpec: Record<string, unknown>, annotations?: Record<string, string>): KubeObject {
  return {
    apiVersion: 'serving.knative.dev/v1',
    kind: 'Service',
    metadata: { name: 's', namespace: 'default' },
    spec: { template: { ...(annotations ? { metadata: { annotations } } : {}), spec: podSpec } },
  } as KubeObject;
}

const secure = { runAsNonRoot: true, allowPrivilegeEscalation: false, seccompProfile: { type: 'RuntimeDefault' }, capabilities: { drop: ['ALL'] } };

describe('admission warnings', () => {
  it('names every insecure default of every container and init container in one merged warning, paths sorted', () => {
    const svc = service({ containers: [{ image: 'a' }, { image: 'b', securityContext: secure }], initContainers: [{ image: 'i' }] });
    const c = 'spec.template.spec.containers[0].securityContext';
    const i = 'spec.template.spec.initContainers[0].securityContext';
    expect(warningsForAdmission('Service', svc, ctx())).toEqual([
      `${insecure}: ${c}.allowPrivilegeEscalation, ${c}.capabilities, ${c}.runAsNonRoot, ${c}.seccompProfile, ` +
        `${i}.allowPrivilegeEscalation, ${i}.capabilities, ${i}.runAsNonRoot, ${i}.seccompProfile`,
    ]);
  });

  it("counts the pod's runAsNonRoot and seccompProfile; an empty seccomp type and a missing drop list still warn", () => {
    const svc = service({
      securityContext: { runAsNonRoot: true, seccompProfile: {} },
      containers: [{ image: 'a', securityContext: { allowPrivilegeEscalation: false, capabilities: { add: ['NET_ADMIN'] } } }],
    });
    const c = 'spec.template.spec.containers[0].securityContext';
    expect(warningsForAdmission('Service', svc, ctx())).toEqual([`${insecure}: ${c}.capabilities.drop, ${c}.seccompProfile.type`]);
  });

  it("warns that drop 'all' must be spelled 'ALL', with upstream's details line", () => {
    const svc = service({ containers: [{ image: 'a', securityContext: { ...secure, capabilities: { drop: ['all'] } } }] });
    expect(warningsForAdmission('Service', svc, ctx())).toEqual([
      "invalid value: all: spec.template.spec.containers[0].securityContext.capabilities.drop\nMust be spelled as 'ALL'",
    ]);
  });

  it('warns about the deprecated resource-percentage annotation of a template, after the security warning', () => {
    const cfg = {
      ...service({ containers: [{ image: 'a' }] }, { 'queue.sidecar.serving.knative.dev/resource-percentage': '20' }),
      kind: 'Configuration',
    };
    const out = warningsForAdmission('Configuration', cfg, ctx());
    expect(out).toHaveLength(2);
    expect(out[1]).toBe(
      'Queue proxy resource percentage annotation is deprecated. Please use the available annotations to explicitly set resource values per ' +
        'service: spec.template.metadata.annotations.[queue.sidecar.serving.knative.dev/resource-percentage]',
    );
  });

  it('says nothing for a fully secure container, or when secure-pod-defaults is Enabled or AllowRootBounded', () => {
    expect(warningsForAdmission('Service', service({ containers: [{ image: 'a', securityContext: secure }] }), ctx())).toEqual([]);
    const bare = service({ containers: [{ image: 'a' }] });
    expect(warningsForAdmission('Service', bare, ctx('CREATE', 'Enabled'))).toEqual([]);
    expect(warningsForAdmission('Service', bare, ctx('CREATE', 'AllowRootBounded'))).toEqual([]);
    expect(warningsForAdmission('Service', bare, ctx('UPDATE'))).toHaveLength(1);
    expect(warningsForAdmission('Service', bare, ctx('UPDATE', 'Disabled', 'status'))).toEqual([]);
  });

  it("checks a Revision's spec on create only, at `spec`", () => {
    const rev = {
      apiVersion: 'serving.knative.dev/v1',
      kind: 'Revision',
      metadata: { name: 'r' },
      spec: { containers: [{ image: 'a', securityContext: { ...secure, runAsNonRoot: undefined } }] },
    } as unknown as KubeObject;
    expect(warningsForAdmission('Revision', rev, ctx())).toEqual([`${insecure}: spec.containers[0].securityContext.runAsNonRoot`]);
    expect(warningsForAdmission('Revision', rev, ctx('UPDATE'))).toEqual([]);
  });
});
