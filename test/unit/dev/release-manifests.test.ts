import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { kustomizationResources, releaseManifests, VERSION_LABEL } from '../../../dev/release-manifests.js';

const digest = `sha256:${'a'.repeat(64)}`;
const files = [
  { path: 'core/namespace.yaml', text: 'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: knative-serving\n' },
  {
    path: 'crds/x.yaml',
    text: 'apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: services.serving.knative.dev\n  labels:\n    knative.dev/crd-install: "true"\n',
  },
  {
    path: 'controller/deployment.yaml',
    text: [
      'apiVersion: apps/v1',
      'kind: Deployment',
      'metadata: {name: controller, namespace: knative-serving}',
      'spec:',
      '  selector: {matchLabels: {app: controller}}',
      '  template:',
      '    metadata: {labels: {app: controller}}',
      '    spec:',
      '      containers:',
      '        - {name: controller, image: ghcr.io/tidal-serving/controller:0.1.0}',
      '        - {name: sidecar, image: example.com/other:1}',
    ].join('\n'),
  },
];
type Manifest = {
  kind: string;
  metadata: { name: string; labels: Record<string, string> };
  spec: { selector?: unknown; template: { metadata: { labels: Record<string, string> }; spec: { containers: { image: string }[] } } };
};
const docs = (s: string) => parseAllDocuments(s).map((d) => d.toJSON() as Manifest);

describe('releaseManifests', () => {
  const m = releaseManifests({ version: 'v0.2.0', image: `ghcr.io/tidal-serving/controller@${digest}`, files });

  it('puts the CRDs in one file and everything else, in order, in the other', () => {
    expect(docs(m.crds).map((o) => o.metadata.name)).toEqual(['services.serving.knative.dev']);
    expect(docs(m.core).map((o) => o.kind)).toEqual(['Namespace', 'Deployment']);
  });

  it('labels every object with the version, keeping its own labels', () => {
    const all = [...docs(m.crds), ...docs(m.core)];
    expect(all.map((o) => o.metadata.labels[VERSION_LABEL])).toEqual(['v0.2.0', 'v0.2.0', 'v0.2.0']);
    expect(docs(m.crds)[0]!.metadata.labels['knative.dev/crd-install']).toBe('true');
  });

  it("names the controller's image by digest and the version on its pods, leaving the selector and other containers", () => {
    const d = docs(m.core)[1]!;
    expect(d.spec.template.spec.containers.map((c) => c.image)).toEqual([`ghcr.io/tidal-serving/controller@${digest}`, 'example.com/other:1']);
    expect(d.spec.template.metadata.labels).toEqual({ app: 'controller', [VERSION_LABEL]: 'v0.2.0' });
    expect(d.spec.selector).toEqual({ matchLabels: { app: 'controller' } });
  });

  it('refuses a version that is not v-semver, an image by tag, and manifests with no controller', () => {
    expect(() => releaseManifests({ version: '0.2.0', image: `r@${digest}`, files })).toThrow(/expected v<major>/);
    expect(() => releaseManifests({ version: 'v0.2.0', image: 'r:0.2.0', files })).toThrow(/expected <repository>@sha256/);
    expect(() => releaseManifests({ version: 'v0.2.0', image: `r@${digest}`, files: files.slice(0, 2) })).toThrow(/no controller container/);
  });
});

describe('kustomizationResources', () => {
  it('lists the resources in order', () => {
    expect(kustomizationResources('kind: Kustomization\nresources:\n  - b.yaml\n  - a.yaml\n')).toEqual(['b.yaml', 'a.yaml']);
  });
});
