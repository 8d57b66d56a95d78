import { describe, expect, it } from 'vitest';
import { DeploymentConfigName, defaultDeploymentConfig, parseDeploymentConfig } from '../../../api/config/index.js';
import type { DeploymentConfig, Parsed } from '../../../api/config/index.js';

function ok(p: Parsed<DeploymentConfig>): DeploymentConfig {
  if (!p.ok) throw new Error(`expected ok, got ${p.error}`);
  return p.value;
}
function err(p: Parsed<DeploymentConfig>): string {
  if (p.ok) throw new Error('expected an error');
  return p.error;
}

describe('config-deployment', () => {
  it('is named config-deployment', () => {
    expect(DeploymentConfigName).toBe('config-deployment');
  });

  it('defaults to Knative with hakn queue-proxy resources and no queue sidecar image', () => {
    expect(defaultDeploymentConfig()).toEqual({
      queueSidecarImage: '',
      progressDeadlineSeconds: 600,
      digestResolutionTimeoutSeconds: 10,
      registriesSkippingTagResolving: ['kind.local', 'ko.local', 'dev.local'],
      queueSidecarCpuRequest: '25m',
      queueSidecarCpuLimit: '1000m',
      queueSidecarMemoryRequest: '50Mi',
      queueSidecarMemoryLimit: '800Mi',
      queueSidecarEphemeralStorageRequest: undefined,
      queueSidecarEphemeralStorageLimit: undefined,
      defaultAffinityType: 'prefer-spread-revision-over-nodes',
      podIsAlwaysSchedulable: false,
      podDisruptionBudget: 'enabled',
    });
    expect(ok(parseDeploymentConfig({}))).toEqual(defaultDeploymentConfig());
  });

  it('returns a fresh object each time', () => {
    const a = defaultDeploymentConfig();
    a.registriesSkippingTagResolving.push('x');
    expect(defaultDeploymentConfig().registriesSkippingTagResolving).toEqual(['kind.local', 'ko.local', 'dev.local']);
  });

  it('parses every key', () => {
    expect(
      ok(
        parseDeploymentConfig({
          'queue-sidecar-image': 'gcr.io/knative/queue:v1',
          'progress-deadline': '10m',
          'digest-resolution-timeout': '500ms',
          'registries-skipping-tag-resolving': ' a.io , b.io,,a.io',
          'queue-sidecar-cpu-request': '100m',
          'queue-sidecar-cpu-limit': '2',
          'queue-sidecar-memory-request': '64Mi',
          'queue-sidecar-memory-limit': '1Gi',
          'queue-sidecar-ephemeral-storage-request': '512Mi',
          'queue-sidecar-ephemeral-storage-limit': '1e9',
          'default-affinity-type': 'none',
          'pod-is-always-schedulable': 'true',
          'pod-disruption-budget': 'disabled',
          _example: 'progress-deadline: "garbage"',
        }),
      ),
    ).toEqual({
      queueSidecarImage: 'gcr.io/knative/queue:v1',
      progressDeadlineSeconds: 600,
      digestResolutionTimeoutSeconds: 0.5,
      registriesSkippingTagResolving: ['a.io', 'b.io'],
      queueSidecarCpuRequest: '100m',
      queueSidecarCpuLimit: '2',
      queueSidecarMemoryRequest: '64Mi',
      queueSidecarMemoryLimit: '1Gi',
      queueSidecarEphemeralStorageRequest: '512Mi',
      queueSidecarEphemeralStorageLimit: '1e9',
      defaultAffinityType: 'none',
      podIsAlwaysSchedulable: true,
      podDisruptionBudget: 'disabled',
    });
  });

  it('accepts the legacy camelCase aliases', () => {
    expect(
      ok(
        parseDeploymentConfig({
          queueSidecarImage: 'ko://knative.dev/serving/cmd/queue',
          progressDeadline: '120s',
          digestResolutionTimeout: '20s',
          registriesSkippingTagResolving: 'r.local',
          queueSidecarCPURequest: '10m',
          queueSidecarCPULimit: '20m',
          queueSidecarMemoryRequest: '1Mi',
          queueSidecarMemoryLimit: '2Mi',
          queueSidecarEphemeralStorageRequest: '3Mi',
          queueSidecarEphemeralStorageLimit: '4Mi',
        }),
      ),
    ).toMatchObject({
      queueSidecarImage: 'ko://knative.dev/serving/cmd/queue',
      progressDeadlineSeconds: 120,
      digestResolutionTimeoutSeconds: 20,
      registriesSkippingTagResolving: ['r.local'],
      queueSidecarCpuRequest: '10m',
      queueSidecarCpuLimit: '20m',
      queueSidecarMemoryRequest: '1Mi',
      queueSidecarMemoryLimit: '2Mi',
      queueSidecarEphemeralStorageRequest: '3Mi',
      queueSidecarEphemeralStorageLimit: '4Mi',
    });
  });

  it('prefers the current key over its legacy alias', () => {
    const cfg = ok(
      parseDeploymentConfig({ progressDeadline: '1s', 'progress-deadline': '2s', queueSidecarImage: 'old', 'queue-sidecar-image': 'new' }),
    );
    expect(cfg.progressDeadlineSeconds).toBe(2);
    expect(cfg.queueSidecarImage).toBe('new');
  });

  it('treats an empty queue-sidecar-image as "no queue-proxy" (Knative would reject it)', () => {
    expect(ok(parseDeploymentConfig({ 'queue-sidecar-image': '' })).queueSidecarImage).toBe('');
  });

  it('ignores keys it does not know', () => {
    expect(ok(parseDeploymentConfig({ 'queue-sidecar-rootca': 'x', 'runtime-class-name': 'kata: {}', whatever: '1' }))).toEqual(
      defaultDeploymentConfig(),
    );
  });

  describe('errors name the key and the reason', () => {
    it.each([
      ['progress-deadline', '-5s', 'config-deployment: progress-deadline: must be a positive whole number of seconds, got "-5s"'],
      ['progress-deadline', '0s', 'config-deployment: progress-deadline: must be a positive whole number of seconds, got "0s"'],
      ['progress-deadline', '1.5s', 'config-deployment: progress-deadline: must be a positive whole number of seconds, got "1.5s"'],
      ['progress-deadline', '600', 'config-deployment: progress-deadline: must be a duration such as "600s" or "10m", got "600"'],
      ['progressDeadline', 'abc', 'config-deployment: progressDeadline: must be a duration such as "600s" or "10m", got "abc"'],
      ['digest-resolution-timeout', '0s', 'config-deployment: digest-resolution-timeout: must be a positive duration, got "0s"'],
      ['digest-resolution-timeout', '-1s', 'config-deployment: digest-resolution-timeout: must be a positive duration, got "-1s"'],
      ['digestResolutionTimeout', '10', 'config-deployment: digestResolutionTimeout: must be a duration such as "600s" or "10m", got "10"'],
      [
        'queue-sidecar-cpu-request',
        'lots',
        'config-deployment: queue-sidecar-cpu-request: must be a resource quantity such as "25m" or "50Mi", got "lots"',
      ],
      [
        'queue-sidecar-cpu-limit',
        '1 core',
        'config-deployment: queue-sidecar-cpu-limit: must be a resource quantity such as "25m" or "50Mi", got "1 core"',
      ],
      [
        'queue-sidecar-memory-request',
        '50MB',
        'config-deployment: queue-sidecar-memory-request: must be a resource quantity such as "25m" or "50Mi", got "50MB"',
      ],
      [
        'queue-sidecar-memory-limit',
        '',
        'config-deployment: queue-sidecar-memory-limit: must be a resource quantity such as "25m" or "50Mi", got ""',
      ],
      [
        'queue-sidecar-ephemeral-storage-request',
        'x',
        'config-deployment: queue-sidecar-ephemeral-storage-request: must be a resource quantity such as "25m" or "50Mi", got "x"',
      ],
      [
        'queue-sidecar-ephemeral-storage-limit',
        'Mi',
        'config-deployment: queue-sidecar-ephemeral-storage-limit: must be a resource quantity such as "25m" or "50Mi", got "Mi"',
      ],
      ['queueSidecarCPURequest', '?', 'config-deployment: queueSidecarCPURequest: must be a resource quantity such as "25m" or "50Mi", got "?"'],
      [
        'default-affinity-type',
        'spread',
        'config-deployment: default-affinity-type: must be one of "prefer-spread-revision-over-nodes", "none", got "spread"',
      ],
      ['pod-is-always-schedulable', 'yes', 'config-deployment: pod-is-always-schedulable: must be a boolean ("true" or "false"), got "yes"'],
    ])('%s: %s', (key, value, message) => {
      expect(err(parseDeploymentConfig({ [key]: value }))).toBe(message);
    });

    it('an invalid legacy alias fails even when the current key is valid (as cm.Parse does)', () => {
      expect(err(parseDeploymentConfig({ progressDeadline: 'x', 'progress-deadline': '60s' }))).toContain('progressDeadline');
    });
  });

  it('accepts Go duration forms', () => {
    expect(ok(parseDeploymentConfig({ 'progress-deadline': '1h30m' })).progressDeadlineSeconds).toBe(5400);
    expect(ok(parseDeploymentConfig({ 'progress-deadline': '1.5m' })).progressDeadlineSeconds).toBe(90);
    expect(ok(parseDeploymentConfig({ 'progress-deadline': '90000ms' })).progressDeadlineSeconds).toBe(90);
  });
});
