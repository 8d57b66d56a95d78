// The webhook inside the controller process: certificates from Secret `webhook-certs` (made by the first replica),
// the server, a poll that swaps in renewed certificates, readiness, and the drain on shutdown.
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import { defaultModulesConfig } from '../api/config/modules.js';
import { Resources } from '../api/kinds.js';
import type { KubeObject } from '../api/meta.js';
import type { KubeClient } from '../kube/client.js';
import type { ConfigSource } from '../activities/deps.js';
import { certificatesOfSecret, ensureWebhookCertificates } from '../pki/webhook-secret.js';
import { WEBHOOK_CERTS_SECRET, webhookCertificatesProblem, type WebhookCertificates } from '../pki/webhook-certificates.js';
import { WebhookServer } from './server.js';
import type { WebhookSettings } from './settings.js';

export interface RunningWebhook {
  /** Serving, not draining, and with the certificates the Secret holds now. */
  ready(): boolean;
  /** Stop reporting ready, keep answering for the drain period, then close. */
  drain(): Promise<void>;
}

export async function runWebhook(opts: {
  settings: WebhookSettings;
  kube: KubeClient;
  config: ConfigSource;
  log: Logger;
  registry: Registry;
}): Promise<RunningWebhook> {
  const { settings, kube, config, log } = opts;
  const namespace = config.systemNamespace;
  const ensure = () =>
    ensureWebhookCertificates(kube, {
      systemNamespace: namespace,
      validityHours: settings.certValidityHours,
      // At start only unusable or expired certificates are replaced: renewal ahead of expiry is the workflow's job,
      // so replicas starting together do not each renew.
      renewBeforeHours: 0,
      now: new Date(),
      log: (fields, msg) => log.info(fields, msg),
    });
  const first = await ensure();
  const server = new WebhookServer({
    port: settings.port,
    host: settings.host,
    log,
    registry: opts.registry,
    config: () => {
      const rc = config.revisionConfig();
      // config-features gates pod-spec fields in validation and drives secure-pod-defaults in defaulting.
      return {
        defaults: rc.defaults,
        validation: {
          autoscaler: rc.autoscaler,
          features: config.featuresConfig().podSpec,
          modules: config.modulesConfig?.() ?? defaultModulesConfig(),
        },
        systemNamespace: namespace,
      };
    },
  });
  await server.listen(first.certs, first.resourceVersion);
  let latestVersion = first.resourceVersion;

  // A renewed Secret reaches every replica within a poll; no restart, no watch to keep alive.
  const poll = async () => {
    const secret = await kube.get<KubeObject & { data?: Record<string, string> }>(Resources.Secret, namespace, WEBHOOK_CERTS_SECRET);
    const version = secret?.metadata.resourceVersion;
    if (version !== undefined && version === server.servingVersion) return;
    // Not ready until what the Secret now holds is served.
    latestVersion = version ?? '';
    const certs = certificatesOfSecret(secret);
    if (secret && version && webhookCertificatesProblem(certs, { systemNamespace: namespace, renewBeforeHours: 0, now: new Date() }) === undefined) {
      server.useCertificates(certs as WebhookCertificates, version);
      return;
    }
    // Deleted or broken: make it whole again (the first replica to get here writes, the others adopt).
    const fixed = await ensure();
    latestVersion = fixed.resourceVersion;
    server.useCertificates(fixed.certs, fixed.resourceVersion);
  };
  let polling = false;
  const timer = setInterval(() => {
    if (polling) return;
    polling = true;
    poll()
      .catch((err: unknown) => log.warn({ err, kind: 'Secret', namespace, name: WEBHOOK_CERTS_SECRET }, 'could not check the webhook certificates'))
      .finally(() => (polling = false));
  }, settings.certPollSeconds * 1000);
  timer.unref();

  return {
    ready: () => server.listening && server.servingVersion === latestVersion,
    drain: async () => {
      clearInterval(timer);
      server.beginDrain();
      await new Promise((r) => setTimeout(r, settings.drainSeconds * 1000));
      await server.close();
      log.info('admission webhook closed');
    },
  };
}
