import { describe, expect, it } from 'vitest';
import { entityWorkflowId, parseEntityWorkflowId, workflowTypeOf } from '../../../api/entity.js';
import { resourcePath, Resources } from '../../../api/kinds.js';

describe('entity workflow ids', () => {
  it('are <Kind>/<namespace>/<name> and parse back', () => {
    const id = entityWorkflowId('Service', { namespace: 'default', name: 'nginx' });
    expect(id).toBe('Service/default/nginx');
    expect(parseEntityWorkflowId(id)).toEqual({ kind: 'Service', key: { namespace: 'default', name: 'nginx' } });
  });

  it('reject ids of unknown kinds or the wrong shape', () => {
    expect(parseEntityWorkflowId('Deployment/default/x')).toBeUndefined();
    expect(parseEntityWorkflowId('Service/default')).toBeUndefined();
    expect(parseEntityWorkflowId('Service//x')).toBeUndefined();
  });

  it('name one workflow type per kind', () => {
    expect(workflowTypeOf('Service')).toBe('serviceWorkflow');
    expect(workflowTypeOf('Configuration')).toBe('configurationWorkflow');
  });
});

describe('resourcePath', () => {
  it('builds core, grouped, namespaced and subresource paths', () => {
    expect(resourcePath(Resources.Service, 'default', 'nginx')).toBe('/apis/serving.knative.dev/v1/namespaces/default/services/nginx');
    expect(resourcePath(Resources.Service, 'default', 'nginx', 'status')).toBe(
      '/apis/serving.knative.dev/v1/namespaces/default/services/nginx/status',
    );
    expect(resourcePath(Resources.Pod)).toBe('/api/v1/pods');
    expect(resourcePath(Resources.Namespace, 'ignored', 'kube-system')).toBe('/api/v1/namespaces/kube-system');
  });
});
