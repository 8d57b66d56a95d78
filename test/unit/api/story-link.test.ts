import { describe, expect, it } from 'vitest';
import { linkedWarning, storyWorkflowOf, withStoryAnnotations, workflowUiUrl } from '../../../api/story-link.js';
import { parseObservabilityConfig } from '../../../api/config/observability.js';

const link = { workflowId: 'Service/default/nginx', temporalNamespace: 'default', uiUrl: 'http://127.0.0.1:8233' };

describe("the link to an object's story", () => {
  it('names the workflow and, with a UI, its page there (the id encoded)', () => {
    expect(workflowUiUrl(link)).toBe('http://127.0.0.1:8233/namespaces/default/workflows/Service%2Fdefault%2Fnginx');
    expect(workflowUiUrl({ ...link, uiUrl: '' })).toBeUndefined();
  });

  it('goes into status.annotations beside what is there; a URL no longer configured is dropped', () => {
    const status = { observedGeneration: 2, annotations: { other: 'x', 'tidal.dev/workflow-url': 'http://old/…' } };
    expect(withStoryAnnotations(status, link)).toEqual({
      observedGeneration: 2,
      annotations: {
        other: 'x',
        'tidal.dev/workflow': 'Service/default/nginx',
        'tidal.dev/workflow-url': 'http://127.0.0.1:8233/namespaces/default/workflows/Service%2Fdefault%2Fnginx',
      },
    });
    expect(withStoryAnnotations(status, { ...link, uiUrl: '' }).annotations).toEqual({ other: 'x', 'tidal.dev/workflow': 'Service/default/nginx' });
  });

  it('ends a Warning once', () => {
    const once = linkedWarning('Revision failed', link);
    expect(once).toBe('Revision failed (story: http://127.0.0.1:8233/namespaces/default/workflows/Service%2Fdefault%2Fnginx)');
    expect(linkedWarning(once, link)).toBe(once);
    expect(linkedWarning('x', { ...link, uiUrl: '' })).toBe('x (story: workflow Service/default/nginx)');
  });

  it('is worked out from the object when its status has none yet', () => {
    const meta = (kind: string, name: string, labels: Record<string, string> = {}) => ({
      apiVersion: 'v1',
      kind,
      metadata: { name, namespace: 'ns', labels },
    });
    expect(storyWorkflowOf(meta('Revision', 'a-00001', { 'serving.knative.dev/service': 'a' }))).toBe('Revision/ns/a-00001');
    expect(storyWorkflowOf(meta('Configuration', 'a', { 'serving.knative.dev/service': 'a' }))).toBe('Service/ns/a');
    expect(storyWorkflowOf(meta('Ingress', 'r', { 'serving.knative.dev/route': 'r' }))).toBe('Route/ns/r');
    expect(storyWorkflowOf(meta('Route', 'r'))).toBe('Route/ns/r');
    expect(storyWorkflowOf({ ...meta('Route', 'r'), status: { annotations: { 'tidal.dev/workflow': 'Service/ns/s' } } })).toBe('Service/ns/s');
  });

  it('config-observability temporal-ui-url: an http(s) URL, its trailing slash dropped; anything else refused', () => {
    expect(parseObservabilityConfig({ 'temporal-ui-url': 'https://temporal.example.com/ui/' })).toMatchObject({
      value: { temporalUiUrl: 'https://temporal.example.com/ui' },
    });
    expect(parseObservabilityConfig({})).toMatchObject({ value: { temporalUiUrl: '' } });
    expect(parseObservabilityConfig({ 'temporal-ui-url': 'temporal:8233' })).toMatchObject({ ok: false, key: 'temporal-ui-url' });
  });
});
