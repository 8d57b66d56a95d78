import { describe, expect, it } from 'vitest';
import { autoscalerClass, makeHPA, mebibytesQuantity, usesHPA } from '../../../resources/hpa.js';
import { makeDeployment } from '../../../resources/deployment.js';
import { deploymentInSync } from '../../../activities/revision.js';
import { revision, revisionConfig, withRevAnnotations } from '../../fixtures/revision.js';

const hpaAnn = { 'autoscaling.knative.dev/class': 'hpa.autoscaling.knative.dev' };
// hakn's config-autoscaler: min-scale 2, no max.
const hakn = revisionConfig((c) => void (c.autoscaler.minScale = 2));

describe('makeHPA', () => {
  it("the seed's HPA from Knative annotations: min 3, max 10, 80 % CPU (golden)", () => {
    const rev = revision(
      'nginx-00001',
      'default',
      withRevAnnotations({
        ...hpaAnn,
        'autoscaling.knative.dev/metric': 'cpu',
        'autoscaling.knative.dev/target': '80',
        'autoscaling.knative.dev/min-scale': '3',
        'autoscaling.knative.dev/max-scale': '10',
      }),
    );
    expect(makeHPA(rev, hakn)).toEqual({
      apiVersion: 'autoscaling/v2',
      kind: 'HorizontalPodAutoscaler',
      metadata: {
        name: 'nginx-00001',
        namespace: 'default',
        labels: {
          'serving.knative.dev/configuration': 'hello',
          'serving.knative.dev/configurationGeneration': '1',
          'serving.knative.dev/configurationUID': 'uid-hello',
          'serving.knative.dev/service': 'hello',
          'serving.knative.dev/serviceUID': 'uid-svc-hello',
          'serving.knative.dev/revision': 'nginx-00001',
          'serving.knative.dev/revisionUID': 'uid-nginx-00001',
          app: 'nginx-00001',
        },
        annotations: {
          'serving.knative.dev/creator': 'alice',
          'autoscaling.knative.dev/class': 'hpa.autoscaling.knative.dev',
          'autoscaling.knative.dev/metric': 'cpu',
          'autoscaling.knative.dev/target': '80',
          'autoscaling.knative.dev/min-scale': '3',
          'autoscaling.knative.dev/max-scale': '10',
        },
        ownerReferences: [
          {
            apiVersion: 'serving.knative.dev/v1',
            kind: 'Revision',
            name: 'nginx-00001',
            uid: 'uid-nginx-00001',
            controller: true,
            blockOwnerDeletion: true,
          },
        ],
      },
      spec: {
        scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'nginx-00001-deployment' },
        minReplicas: 3,
        maxReplicas: 10,
        metrics: [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 80 } } }],
      },
    });
  });

  it("bounds from config-autoscaler: hakn's min-scale 2, max unbounded (MaxInt32); no target, no metrics", () => {
    const hpa = makeHPA(revision('r-00001', 'ns', withRevAnnotations(hpaAnn)), hakn);
    expect(hpa.spec).toEqual({
      scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'r-00001-deployment' },
      minReplicas: 2,
      maxReplicas: 2147483647,
    });
  });

  it('min-scale 0 leaves minReplicas out; a fractional cpu target rounds up', () => {
    const rev = revision(
      'r-00001',
      'ns',
      withRevAnnotations({ ...hpaAnn, 'autoscaling.knative.dev/min-scale': '0', 'autoscaling.knative.dev/target': '70.2' }),
    );
    const hpa = makeHPA(rev, hakn);
    expect(hpa.spec.minReplicas).toBeUndefined();
    expect(hpa.spec.metrics).toEqual([{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 71 } } }]);
  });

  it('memory: an average value in MiB, in canonical quantity form', () => {
    const mem = (target: string) =>
      makeHPA(
        revision(
          'r-1',
          'ns',
          withRevAnnotations({ ...hpaAnn, 'autoscaling.knative.dev/metric': 'memory', 'autoscaling.knative.dev/target': target }),
        ),
        hakn,
      ).spec.metrics;
    expect(mem('75')).toEqual([{ type: 'Resource', resource: { name: 'memory', target: { type: 'AverageValue', averageValue: '75Mi' } } }]);
    expect(mem('1024')?.[0]?.resource?.target.averageValue).toBe('1Gi');
    expect(mem('1536.9')?.[0]?.resource?.target.averageValue).toBe('1536Mi');
  });

  it('another metric name is a per-pod custom metric', () => {
    const rev = revision(
      'r-1',
      'ns',
      withRevAnnotations({ ...hpaAnn, 'autoscaling.knative.dev/metric': 'rps', 'autoscaling.knative.dev/target': '150' }),
    );
    expect(makeHPA(rev, hakn).spec.metrics).toEqual([
      { type: 'Pods', pods: { metric: { name: 'rps' }, target: { type: 'AverageValue', averageValue: '150' } } },
    ]);
  });

  it('mebibytesQuantity', () => {
    expect([0, 1, 512, 1024, 2048, 1048576, 1025].map(mebibytesQuantity)).toEqual(['0', '1Mi', '512Mi', '1Gi', '2Gi', '1Ti', '1025Mi']);
  });
});

describe('autoscaler class', () => {
  it('the annotation, else config-autoscaler pod-autoscaler-class', () => {
    const kpa = revision('r-1', 'ns');
    expect(autoscalerClass(kpa, hakn)).toBe('kpa.autoscaling.knative.dev');
    expect(usesHPA(kpa, hakn)).toBe(false);
    expect(
      usesHPA(
        kpa,
        revisionConfig((c) => void (c.autoscaler.podAutoscalerClass = 'hpa.autoscaling.knative.dev')),
      ),
    ).toBe(true);
    expect(usesHPA(revision('r-1', 'ns', withRevAnnotations(hpaAnn)), hakn)).toBe(true);
  });

  it('the HPA class drops replicas from the Deployment; the default class keeps the fixed count', () => {
    const hpaRev = revision('r-1', 'ns', withRevAnnotations({ ...hpaAnn, 'autoscaling.knative.dev/min-scale': '3' }));
    const kpaRev = revision('r-1', 'ns', withRevAnnotations({ 'autoscaling.knative.dev/min-scale': '3' }));
    const opts = { systemNamespace: 'knative-serving' };
    expect('replicas' in makeDeployment(hpaRev, hakn, opts).spec).toBe(false);
    expect(makeDeployment(kpaRev, hakn, opts).spec.replicas).toBe(3);
  });

  it("deploymentInSync: the HPA's count is not an edit; with fixed replicas a changed count is", () => {
    const opts = { systemNamespace: 'knative-serving' };
    const hpaDesired = makeDeployment(revision('r-1', 'ns', withRevAnnotations(hpaAnn)), hakn, opts);
    expect(deploymentInSync({ ...hpaDesired, spec: { ...hpaDesired.spec, replicas: 7 } }, hpaDesired)).toBe(true);
    const kpaDesired = makeDeployment(revision('r-1', 'ns'), hakn, opts);
    expect(deploymentInSync({ ...kpaDesired, spec: { ...kpaDesired.spec, replicas: 7 } }, kpaDesired)).toBe(false);
    expect(deploymentInSync(kpaDesired, kpaDesired)).toBe(true);
  });
});
