import { describe, expect, it } from 'vitest';
import { makePodDisruptionBudget, minAvailable } from '../../../resources/pdb.js';
import { parseDeploymentConfig } from '../../../api/config/index.js';
import { revision, revisionConfig, withRevAnnotations } from '../../fixtures/revision.js';

const hakn = revisionConfig((c) => void (c.autoscaler.minScale = 2));

describe('makePodDisruptionBudget', () => {
  it("a plain Revision under hakn's min-scale 2: the seed's PDB, minAvailable 2 (golden)", () => {
    expect(makePodDisruptionBudget(revision('nginx-00001', 'default'), hakn)).toEqual({
      apiVersion: 'policy/v1',
      kind: 'PodDisruptionBudget',
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
      spec: { minAvailable: 2, selector: { matchLabels: { 'serving.knative.dev/revision': 'nginx-00001' } } },
    });
  });

  it('minAvailable follows the min-scale annotation, capped by max-scale', () => {
    expect(minAvailable(revision('r-1', 'ns', withRevAnnotations({ 'autoscaling.knative.dev/min-scale': '3' })), hakn)).toBe(3);
    expect(minAvailable(revision('r-1', 'ns', withRevAnnotations({ 'autoscaling.knative.dev/minScale': '4' })), hakn)).toBe(4);
    const capped = revision('r-1', 'ns', withRevAnnotations({ 'autoscaling.knative.dev/min-scale': '5', 'autoscaling.knative.dev/max-scale': '3' }));
    expect(minAvailable(capped, hakn)).toBe(3);
  });

  it('none when the minimum is 0, the Revision opts out, or config-deployment disables it', () => {
    expect(makePodDisruptionBudget(revision('r-1', 'ns', withRevAnnotations({ 'autoscaling.knative.dev/min-scale': '0' })), hakn)).toBeUndefined();
    expect(makePodDisruptionBudget(revision('r-1', 'ns', withRevAnnotations({ 'tidal.dev/pod-disruption-budget': 'false' })), hakn)).toBeUndefined();
    expect(makePodDisruptionBudget(revision('r-1', 'ns', withRevAnnotations({ 'tidal.dev/pod-disruption-budget': 'true' })), hakn)).toBeDefined();
    const off = revisionConfig((c) => {
      c.autoscaler.minScale = 2;
      c.deployment.podDisruptionBudget = 'disabled';
    });
    expect(makePodDisruptionBudget(revision('r-1', 'ns'), off)).toBeUndefined();
  });
});

describe('config-deployment pod-disruption-budget', () => {
  it('enabled by default; enabled or disabled; anything else refused with the key', () => {
    expect(parseDeploymentConfig({})).toMatchObject({ ok: true, value: { podDisruptionBudget: 'enabled' } });
    expect(parseDeploymentConfig({ 'pod-disruption-budget': 'disabled' })).toMatchObject({ ok: true, value: { podDisruptionBudget: 'disabled' } });
    expect(parseDeploymentConfig({ 'pod-disruption-budget': 'off' })).toMatchObject({
      ok: false,
      key: 'pod-disruption-budget',
      reason: 'must be one of "enabled", "disabled", got "off"',
    });
  });
});
