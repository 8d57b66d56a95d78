import { describe, expect, it } from 'vitest';
import { revisionSpecDiff, templateDiff } from '../../../api/short-diff.js';

// The image, service account, containerConcurrency and template-image strings are upstream's own test expectations
// (revision_validation_test.go, service_validation_test.go); the others show Tidal's naming for the same shapes
// (upstream prints a Quantity or an IntOrString as its Go struct).
describe('kmp.ShortDiff details', () => {
  it('names a changed container image as Go does', () => {
    expect(revisionSpecDiff({ containers: [{ image: 'busybox' }] }, { containers: [{ image: 'helloworld' }] })).toBe(
      '{v1.RevisionSpec}.PodSpec.Containers[0].Image:\n\t-: "busybox"\n\t+: "helloworld"\n',
    );
    expect(revisionSpecDiff({ serviceAccountName: 'a' }, { serviceAccountName: 'b' })).toBe(
      '{v1.RevisionSpec}.PodSpec.ServiceAccountName:\n\t-: "a"\n\t+: "b"\n',
    );
  });

  it('prints a revision-level pointer field with the leading * and quoted values', () => {
    expect(revisionSpecDiff({ containerConcurrency: 2, containers: [] }, { containerConcurrency: 1, containers: [] })).toBe(
      '*{v1.RevisionSpec}.ContainerConcurrency:\n\t-: "2"\n\t+: "1"\n',
    );
  });

  it('names map keys, probe handlers and template fields', () => {
    expect(
      revisionSpecDiff({ containers: [{ resources: { requests: { cpu: '100m' } } }] }, { containers: [{ resources: { requests: { cpu: '50m' } } }] }),
    ).toBe('{v1.RevisionSpec}.PodSpec.Containers[0].Resources.Requests["cpu"]:\n\t-: "100m"\n\t+: "50m"\n');
    expect(templateDiff({ spec: { containers: [{ image: 'helloworld:bar' }] } }, { spec: { containers: [{ image: 'helloworld:foo' }] } })).toBe(
      '{*v1.RevisionTemplateSpec}.Spec.PodSpec.Containers[0].Image:\n\t-: "helloworld:bar"\n\t+: "helloworld:foo"\n',
    );
    expect(templateDiff({ metadata: { annotations: { a: 'b' } } }, { metadata: { annotations: { a: 'c' } } })).toBe(
      '{*v1.RevisionTemplateSpec}.ObjectMeta.Annotations["a"]:\n\t-: "b"\n\t+: "c"\n',
    );
    expect(
      revisionSpecDiff(
        { containers: [{ readinessProbe: { tcpSocket: { port: 0 } } }] },
        { containers: [{ readinessProbe: { tcpSocket: { port: 8080 } } }] },
      ),
    ).toBe('{v1.RevisionSpec}.PodSpec.Containers[0].ReadinessProbe.ProbeHandler.TCPSocket.Port:\n\t-: 0\n\t+: 8080\n');
  });

  it('is empty when only zero values differ', () => {
    expect(revisionSpecDiff({ containers: [{ image: 'a' }] }, { containers: [{ image: 'a', resources: {} }] })).toBe('');
  });
});
