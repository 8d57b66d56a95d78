// resources/deployment-update.ts: the update of a live Deployment as upstream's checkAndUpdateDeployment makes it —
// the desired spec whole (selector and an HPA's count kept), foreign labels and annotations kept at both levels.
import { describe, expect, it } from 'vitest';
import type { Deployment } from '../../../resources/deployment.js';
import { deploymentUpdate, mergeMetadata } from '../../../resources/deployment-update.js';

const desired = (replicas?: number): Deployment => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: {
    name: 'hello-00001-deployment',
    namespace: 'default',
    labels: { app: 'hello-00001', 'serving.knative.dev/revision': 'hello-00001', team: 'web' },
    annotations: { 'tidal.dev/applied-hash': 'new' },
  },
  spec: {
    ...(replicas !== undefined ? { replicas } : {}),
    selector: { matchLabels: { 'serving.knative.dev/revisionUID': 'u1' } },
    progressDeadlineSeconds: 600,
    revisionHistoryLimit: 0,
    strategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 0 } },
    template: {
      metadata: { labels: { app: 'hello-00001', 'serving.knative.dev/revision': 'hello-00001' }, annotations: {} },
      spec: { containers: [{ name: 'user-container', image: 'nginx@sha256:1' }] },
    },
  },
});

/** What the API server holds: Tidal's earlier object, edited by others (a label, `kubectl rollout restart`, an env). */
const live = (replicas: number): Deployment => {
  const d = desired(replicas);
  return {
    ...d,
    metadata: {
      ...d.metadata,
      uid: 'd1',
      resourceVersion: '42',
      labels: { ...d.metadata.labels, 'serving.knative.dev/revision': 'stale', foreign: 'yes', team: 'ops' },
      annotations: { 'tidal.dev/applied-hash': 'old', 'deployment.kubernetes.io/revision': '3', 'serving.knative.dev/gone': 'x' },
    },
    spec: {
      ...d.spec,
      selector: { matchLabels: { 'serving.knative.dev/revisionUID': 'u1' } },
      template: {
        metadata: { labels: { ...d.spec.template.metadata.labels, app: 'other' }, annotations: { 'kubectl.kubernetes.io/restartedAt': 't' } },
        spec: {
          containers: [{ name: 'user-container', image: 'nginx@sha256:0', env: [{ name: 'FOREIGN', value: '1' }] }],
          dnsPolicy: 'ClusterFirst',
        },
      },
    },
  };
};

describe('mergeMetadata (upstream kmap.Union(desired, non-Knative live keys))', () => {
  it("keeps others' keys, drops stale Knative and Tidal keys, and a foreign key's live value wins", () => {
    expect(
      mergeMetadata(
        { app: 'a', 'serving.knative.dev/x': '1', team: 'web' },
        { app: 'b', 'serving.knative.dev/y': '2', 'tidal.dev/z': '3', team: 'ops', mine: 'm' },
      ),
    ).toEqual({
      app: 'a',
      'serving.knative.dev/x': '1',
      team: 'ops',
      mine: 'm',
    });
    expect(mergeMetadata(undefined, undefined)).toEqual({});
  });
});

describe('deploymentUpdate', () => {
  it('writes the desired spec whole (a foreign env goes) and keeps foreign metadata at both levels (golden)', () => {
    expect(deploymentUpdate(live(2), desired(2))).toEqual({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: {
        name: 'hello-00001-deployment',
        namespace: 'default',
        uid: 'd1',
        resourceVersion: '42',
        labels: { app: 'hello-00001', 'serving.knative.dev/revision': 'hello-00001', team: 'ops', foreign: 'yes' },
        annotations: { 'tidal.dev/applied-hash': 'new', 'deployment.kubernetes.io/revision': '3' },
      },
      spec: {
        replicas: 2,
        selector: { matchLabels: { 'serving.knative.dev/revisionUID': 'u1' } },
        progressDeadlineSeconds: 600,
        revisionHistoryLimit: 0,
        strategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 0 } },
        template: {
          metadata: {
            labels: { app: 'hello-00001', 'serving.knative.dev/revision': 'hello-00001' },
            annotations: { 'kubectl.kubernetes.io/restartedAt': 't' },
          },
          spec: { containers: [{ name: 'user-container', image: 'nginx@sha256:1' }] },
        },
      },
    });
  });

  it("hakn's fixed count is written; without one (the HPA class) the live count stays; the live selector stays", () => {
    expect(deploymentUpdate(live(5), desired(2)).spec.replicas).toBe(2);
    expect(deploymentUpdate(live(5), desired()).spec.replicas).toBe(5);
    const moved = { ...live(1), spec: { ...live(1).spec, selector: { matchLabels: { old: 'selector' } } } };
    expect(deploymentUpdate(moved, desired(1)).spec.selector).toEqual({ matchLabels: { old: 'selector' } });
  });
});
