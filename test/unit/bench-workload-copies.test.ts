// bench:floor's workload copies (bench/workload-copies.ts): templates from what Tidal wrote, copies under new names.
import { describe, expect, it } from 'vitest';
import { Resources } from '../../api/kinds.js';
import type { KubeObject } from '../../api/meta.js';
import { asTemplate, instantiate } from '../../bench/workload-copies.js';

const revUid = '0b7c5b1e-1111-4a2b-9c3d-123456789abc';
const cfgUid = '5f0e2d9a-2222-4b3c-8d4e-abcdef012345';

const deployment = {
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: {
    name: 'tpl-00001-deployment',
    namespace: 'default',
    uid: 'aaaaaaaa-3333-4c4d-8e5f-000000000001',
    resourceVersion: '42',
    generation: 1,
    creationTimestamp: '2026-11-28T12:00:00Z',
    managedFields: [{ manager: 'tidal' }],
    ownerReferences: [{ apiVersion: 'serving.knative.dev/v1', kind: 'Revision', name: 'tpl-00001', uid: revUid }],
    labels: {
      'serving.knative.dev/revision': 'tpl-00001',
      'serving.knative.dev/revisionUID': revUid,
      'serving.knative.dev/configurationUID': cfgUid,
    },
  },
  spec: { replicas: 2, selector: { matchLabels: { 'serving.knative.dev/revisionUID': revUid } } },
  status: { availableReplicas: 2 },
} as unknown as KubeObject;

const service = {
  apiVersion: 'v1',
  kind: 'Service',
  metadata: {
    name: 'tpl-00001',
    namespace: 'default',
    uid: 'bbbbbbbb-4444-4d5e-9f60-000000000002',
    labels: { 'serving.knative.dev/revisionUID': revUid },
  },
  spec: { clusterIP: '10.96.0.12', clusterIPs: ['10.96.0.12'], selector: { 'serving.knative.dev/revisionUID': revUid }, ports: [{ port: 80 }] },
} as unknown as KubeObject;

describe('asTemplate', () => {
  it('keeps what Tidal wrote and drops what the API server added, the owner and the status', () => {
    expect(asTemplate(deployment, Resources.Deployment)).toEqual({
      type: Resources.Deployment,
      obj: {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: {
          name: 'tpl-00001-deployment',
          namespace: 'default',
          labels: {
            'serving.knative.dev/revision': 'tpl-00001',
            'serving.knative.dev/revisionUID': revUid,
            'serving.knative.dev/configurationUID': cfgUid,
          },
        },
        spec: { replicas: 2, selector: { matchLabels: { 'serving.knative.dev/revisionUID': revUid } } },
      },
    });
  });

  it("drops a Service's allocated cluster IPs", () => {
    const spec = (asTemplate(service, Resources.KubeService).obj as unknown as { spec: Record<string, unknown> }).spec;
    expect(spec).toEqual({ selector: { 'serving.knative.dev/revisionUID': revUid }, ports: [{ port: 80 }] });
    expect((service as unknown as { spec: { clusterIP: string } }).spec.clusterIP).toBe('10.96.0.12'); // the input is untouched
  });
});

describe('instantiate', () => {
  const templates = [asTemplate(deployment, Resources.Deployment), asTemplate(service, Resources.KubeService)];

  it('renames every mention and gives every uid one new value across the copy', () => {
    let n = 0;
    const copy = instantiate(templates, 'tpl', 'b50-7', () => `00000000-0000-4000-8000-00000000000${++n}`);
    const [d, s] = copy.map((w) => JSON.stringify(w.obj));
    expect(d).not.toContain('tpl');
    expect(d).not.toContain(revUid);
    expect(d).not.toContain(cfgUid);
    expect(copy[0]!.obj.metadata.name).toBe('b50-7-00001-deployment');
    expect(copy[0]!.obj.metadata.labels).toEqual({
      'serving.knative.dev/revision': 'b50-7-00001',
      'serving.knative.dev/revisionUID': '00000000-0000-4000-8000-000000000001',
      'serving.knative.dev/configurationUID': '00000000-0000-4000-8000-000000000002',
    });
    // The Service selects the copy's pods: the same new Revision uid as the Deployment's.
    expect(JSON.parse(s!).spec.selector).toEqual({ 'serving.knative.dev/revisionUID': '00000000-0000-4000-8000-000000000001' });
    expect(n).toBe(2);
  });

  it('gives two copies different uids and leaves the templates as they were', () => {
    const before = JSON.stringify(templates);
    const a = instantiate(templates, 'tpl', 'a');
    const b = instantiate(templates, 'tpl', 'b');
    expect(a[0]!.obj.metadata.labels!['serving.knative.dev/revisionUID']).not.toBe(b[0]!.obj.metadata.labels!['serving.knative.dev/revisionUID']);
    expect(JSON.stringify(templates)).toBe(before);
  });
});
