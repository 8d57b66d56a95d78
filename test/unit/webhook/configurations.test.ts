import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parseAllDocuments } from 'yaml';
import { describe, expect, it } from 'vitest';
import { serviceClientConfig, urlClientConfig, webhookConfigurations } from '../../../webhook/configurations.js';

const file = path.join(import.meta.dirname, '..', '..', '..', 'deploy', 'webhook', 'webhooks.yaml');

describe('webhook configurations', () => {
  it('deploy/webhook/webhooks.yaml is the Service form of what the code registers', () => {
    const docs = parseAllDocuments(readFileSync(file, 'utf8')).map((d) => d.toJS() as unknown);
    expect(docs).toEqual(webhookConfigurations('knative-serving', serviceClientConfig('knative-serving')));
  });

  it("uses Knative's names and paths, failurePolicy Fail, and a loopback URL on the local stack", () => {
    const configs = webhookConfigurations('knative-serving', urlClientConfig('https://127.0.0.1:8443')) as {
      kind: string;
      metadata: { name: string };
      webhooks: { name: string; failurePolicy: string; clientConfig: { url?: string; service?: unknown } }[];
    }[];
    expect(configs.map((c) => [c.kind, c.metadata.name, c.webhooks[0]?.clientConfig.url, c.webhooks[0]?.failurePolicy])).toEqual([
      ['MutatingWebhookConfiguration', 'webhook.serving.knative.dev', 'https://127.0.0.1:8443/defaulting', 'Fail'],
      ['ValidatingWebhookConfiguration', 'validation.webhook.serving.knative.dev', 'https://127.0.0.1:8443/resource-validation', 'Fail'],
      ['ValidatingWebhookConfiguration', 'config.webhook.serving.knative.dev', 'https://127.0.0.1:8443/config-validation', 'Fail'],
    ]);
    for (const c of configs) expect(c.webhooks[0]?.clientConfig.service).toBeUndefined();
  });
});
