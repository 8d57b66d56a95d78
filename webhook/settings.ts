// The webhook's part of the controller's environment, validated at start-up like the rest (workers/config.ts).
import { bool, int } from '../api/config/env.js';

export interface WebhookSettings {
  /** TIDAL_WEBHOOK: serve admission in this process (default true; false for a worker-only process). */
  enabled: boolean;
  port: number;
  /** Listen address: all interfaces in a cluster; the local stack sets 127.0.0.1. */
  host: string;
  /** How long a stopping replica keeps answering after it stopped reporting ready. */
  drainSeconds: number;
  certValidityHours: number;
  certRenewBeforeHours: number;
  /** How often a replica looks at Secret `webhook-certs` for a renewed certificate. */
  certPollSeconds: number;
}

export function loadWebhookSettings(env: NodeJS.ProcessEnv = process.env): WebhookSettings {
  const s: WebhookSettings = {
    enabled: bool(env, 'TIDAL_WEBHOOK', true),
    port: int(env, 'TIDAL_WEBHOOK_PORT', 8443),
    host: env.TIDAL_WEBHOOK_HOST || '0.0.0.0',
    drainSeconds: int(env, 'TIDAL_WEBHOOK_DRAIN_SECONDS', 5),
    certValidityHours: int(env, 'TIDAL_WEBHOOK_CERT_VALIDITY_HOURS', 168),
    certRenewBeforeHours: int(env, 'TIDAL_WEBHOOK_CERT_RENEW_BEFORE_HOURS', 24),
    certPollSeconds: int(env, 'TIDAL_WEBHOOK_CERT_POLL_SECONDS', 10),
  };
  if (s.certValidityHours <= s.certRenewBeforeHours) {
    throw new Error(
      `TIDAL_WEBHOOK_CERT_VALIDITY_HOURS (${s.certValidityHours}) must exceed TIDAL_WEBHOOK_CERT_RENEW_BEFORE_HOURS (${s.certRenewBeforeHours})`,
    );
  }
  return s;
}
