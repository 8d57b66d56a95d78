// Controller replicas as the leader tests, the failover bench and the chaos run see them: each replica's metrics
// endpoint (who leads, how many pokes it delivered) and the Lease the replicas campaign for.
import { Resources } from '../../api/kinds.js';
import type { KubeClient } from '../../kube/client.js';
import type { LeaseObject } from '../../watcher/leader-election.js';

/** One metric's samples from a replica's /metrics (name → summed value over its labels, and the labelled lines). */
export interface Scrape {
  sum(name: string): number;
  lines: string[];
}

export async function scrape(port: number, timeoutMs = 2000): Promise<Scrape | undefined> {
  try {
    const res = await fetch(`http://127.0.0.1:${port}/metrics`, { signal: AbortSignal.timeout(timeoutMs) });
    if (!res.ok) return undefined;
    const lines = (await res.text()).split('\n').filter((l) => l !== '' && !l.startsWith('#'));
    return {
      lines,
      sum: (name) =>
        lines
          .filter((l) => l.startsWith(`${name}{`) || l.startsWith(`${name} `))
          .reduce((acc, l) => acc + Number(l.slice(l.lastIndexOf(' ') + 1)), 0),
    };
  } catch {
    return undefined; // down (killed, restarting)
  }
}

/** The replica's leader identity and whether it leads, from `tidal_leader{identity="…"} 0|1`. */
export function leaderGauge(s: Scrape): { identity: string; leading: boolean } | undefined {
  const line = s.lines.find((l) => l.startsWith('tidal_leader{'));
  const m = line && /identity="([^"]*)"\} (\d+)/.exec(line);
  return m ? { identity: m[1]!, leading: m[2] === '1' } : undefined;
}

/** Pokes a replica delivered so far (0 when it never led: the counter is made by its first term). */
export const pokesDelivered = (s: Scrape): number => s.sum('tidal_pokes_delivered_total');

export async function readLease(kube: KubeClient, namespace = 'knative-serving', name = 'tidal-controller'): Promise<LeaseObject | undefined> {
  return (await kube.get(Resources.Lease, namespace, name)) as unknown as LeaseObject | undefined;
}
