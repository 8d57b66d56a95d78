// config-leader-election as a replica reads it when it starts (upstream's sharedmain does the same): absent, Knative's
// defaults; invalid, the replica refuses to start, naming the key and the reason (the config webhook refuses such an
// edit first). The elector renews every retry period, as client-go's does.
import type { Logger } from 'pino';
import { defaultLeaderElectionConfig, LeaderElectionConfigName, parseLeaderElectionConfig } from '../api/config/leader-election.js';
import { Resources } from '../api/kinds.js';
import type { KubeObject } from '../api/meta.js';
import type { KubeClient } from '../kube/client.js';
import type { LeaderElectionTimings } from '../watcher/leader-election.js';

export async function loadLeaderElectionTimings(kube: KubeClient, systemNamespace: string, log: Logger): Promise<LeaderElectionTimings> {
  // A list, not a get: Tidal's RBAC lets it list the system namespace's config maps (the config store does).
  const found = await kube.list<KubeObject & { data?: Record<string, string> }>(Resources.ConfigMap, systemNamespace, {
    fieldSelector: `metadata.name=${LeaderElectionConfigName}`,
  });
  const data = found.items[0]?.data;
  const parsed = data === undefined ? { ok: true as const, value: defaultLeaderElectionConfig() } : parseLeaderElectionConfig(data);
  if (!parsed.ok) throw new Error(`cannot start: ${parsed.error}`);
  const c = parsed.value;
  log.info({ ...c, from: data === undefined ? 'defaults' : LeaderElectionConfigName }, 'leader election timings');
  return { leaseDurationMs: c.leaseDurationMs, renewDeadlineMs: c.renewDeadlineMs, renewPeriodMs: c.retryPeriodMs, retryPeriodMs: c.retryPeriodMs };
}
