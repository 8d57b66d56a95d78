// The three webhook configurations, as Knative names them, for either way of reaching the webhook: a
// Service in the cluster (deploy/webhook/) or a URL (the local stack, which has no Service network: loopback only).
// The caBundle is left out: each replica publishes its CA (pki/webhook-secret.ts).
import { WebhookPaths } from './admission-review.js';

export type ClientConfigFor = (path: string) => { url: string } | { service: { name: string; namespace: string; path: string; port?: number } };

export function serviceClientConfig(systemNamespace: string): ClientConfigFor {
  return (path) => ({ service: { name: 'webhook', namespace: systemNamespace, path } });
}

export function urlClientConfig(base: string): ClientConfigFor {
  return (path) => ({ url: `${base}${path}` });
}

const servingRules = [
  {
    apiGroups: ['serving.knative.dev'],
    apiVersions: ['v1'],
    operations: ['CREATE', 'UPDATE'],
    resources: ['services', 'configurations', 'revisions', 'routes'],
    scope: 'Namespaced',
  },
  {
    apiGroups: ['serving.knative.dev'],
    apiVersions: ['v1beta1'],
    operations: ['CREATE', 'UPDATE'],
    resources: ['domainmappings'],
    scope: 'Namespaced',
  },
];

function webhook(name: string, clientConfig: ReturnType<ClientConfigFor>, extra: Record<string, unknown>) {
  return {
    name,
    admissionReviewVersions: ['v1'],
    clientConfig,
    // Knative's choice: without the webhook nothing unchecked gets in (hakn keeps several replicas behind it).
    failurePolicy: 'Fail',
    sideEffects: 'None',
    timeoutSeconds: 10,
    matchPolicy: 'Equivalent',
    ...extra,
  };
}

/** MutatingWebhookConfiguration `webhook.serving.knative.dev` and the two ValidatingWebhookConfigurations. */
export function webhookConfigurations(systemNamespace: string, clientConfig: ClientConfigFor): Record<string, unknown>[] {
  const labels = { 'app.kubernetes.io/name': 'knative-serving', 'app.kubernetes.io/component': 'webhook' };
  const notExcluded = { matchExpressions: [{ key: 'webhooks.knative.dev/exclude', operator: 'DoesNotExist' }] };
  return [
    {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'MutatingWebhookConfiguration',
      metadata: { name: 'webhook.serving.knative.dev', labels },
      webhooks: [
        webhook('webhook.serving.knative.dev', clientConfig(WebhookPaths.defaulting), {
          rules: servingRules,
          namespaceSelector: notExcluded,
          reinvocationPolicy: 'IfNeeded',
        }),
      ],
    },
    {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingWebhookConfiguration',
      metadata: { name: 'validation.webhook.serving.knative.dev', labels },
      webhooks: [
        webhook('validation.webhook.serving.knative.dev', clientConfig(WebhookPaths.resourceValidation), {
          rules: servingRules,
          namespaceSelector: notExcluded,
        }),
      ],
    },
    {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingWebhookConfiguration',
      metadata: { name: 'config.webhook.serving.knative.dev', labels },
      webhooks: [
        webhook('config.webhook.serving.knative.dev', clientConfig(WebhookPaths.configValidation), {
          rules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE', 'UPDATE'], resources: ['configmaps'], scope: 'Namespaced' }],
          // Only the system namespace's maps, and only Knative's own (the server also checks the `config-` prefix).
          namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': systemNamespace } },
          objectSelector: { matchExpressions: [{ key: 'app.kubernetes.io/name', operator: 'In', values: ['knative-serving'] }] },
        }),
      ],
    },
  ];
}
