// Readiness probing of the Istio ingress gateway pods for a KIngress, after knative/networking `pkg/status/status.go`
// and net-istio `pkg/reconciler/ingress/lister.go`.
//
// The scheme: `makeVirtualServices(ingress, opts, hash)` prepends, for every path, a probe route matching
// `K-Network-Hash: override` that sets `K-Network-Hash: <hash>` on the request. The prober dials each gateway pod
// directly with `Host: <ingress host>`, `K-Network-Probe: probe` and `K-Network-Hash: override`; the activator or
// queue-proxy behind it answers a `K-Network-Probe` request with 200 and echoes the `K-Network-Hash` it received. So
// the echo is `<hash>` only once that pod's Envoy runs the current VirtualService; before that it is `override`
// (old config without probe route for this hash is bypassed to the real route) or an older hash.
//
// Note: the prober sends `override`, never the hash itself; sending the hash would be echoed back unchanged by any
// backend and would prove nothing about the gateway's configuration.
//
// Verdict per (pod, host), as upstream:
//   * 200 with `K-Network-Hash` equal to the hash → ok;
//   * 200 with another `K-Network-Hash` → not yet (`hash mismatch (got x)`);
//   * 404 or 503 → not yet (`status 404`): the route is not programmed on that gateway yet;
//   * 200 without the header, or any other status (e.g. a 302/403 from an auth filter in front) → upstream stops
//     probing and counts it as success, so a gateway that is not Knative-aware cannot block readiness forever;
//   * a connection error or no answer within `timeoutMs` → not yet.
import http from 'node:http';
import { PROBE_HASH_HEADER, PROBE_HASH_OVERRIDE } from '../resources/istio/virtual-service.js';

/** Probe request header and value (knative/networking `header.ProbeKey` / `header.ProbeValue`). */
export const PROBE_HEADER = 'K-Network-Probe';
export const PROBE_HEADER_VALUE = 'probe';
/** User agent of the ingress prober (knative/networking `header.IngressReadinessUserAgent`). */
export const PROBE_USER_AGENT = 'Knative-Ingress-Probe';
/** Path the prober requests (net-istio's probe URL path). */
export const DEFAULT_PROBE_PATH = '/healthz';
/** Probes in flight at once (upstream runs 15 workers). */
const MAX_CONCURRENT_PROBES = 15;

export interface ProbeTarget {
  /** Pod IP (IPv4 or IPv6) of a gateway pod. */
  ip: string;
  /** Container port of the gateway's HTTP server on that pod (not the Service port). */
  port: number;
}

export interface ProbeGatewaysOptions {
  targets: ProbeTarget[];
  /** Hosts of the Ingress to probe on every target (each sent as the `Host` header). */
  hosts: string[];
  /** The expected hash (`ingressProbeHash(ingress)`, the one given to `makeVirtualServices`). */
  hash: string;
  /** Per-request deadline, connect included (upstream: 1 s). */
  timeoutMs: number;
  /** Request path; `/healthz` when unset. */
  path?: string;
}

export interface ProbeResult {
  /** Every (target, host) probe succeeded. */
  ready: boolean;
  /** One line per failed probe: `<ip>:<port> host <h>: <reason>`, in target then host order. */
  failures: string[];
}

/**
 * Probes every target for every host once. Ready when every probe succeeds (see the verdict in the file comment).
 * No hosts means nothing to wait for (ready); hosts without any target is not ready. Never throws.
 */
export async function probeGateways(opts: ProbeGatewaysOptions): Promise<ProbeResult> {
  if (opts.hosts.length === 0) return { ready: true, failures: [] };
  if (opts.targets.length === 0) return { ready: false, failures: ['no ready gateway pods to probe'] };
  const path = opts.path ?? DEFAULT_PROBE_PATH;
  const work: { target: ProbeTarget; host: string }[] = [];
  for (const target of opts.targets) for (const host of opts.hosts) work.push({ target, host });

  const results: (string | undefined)[] = new Array<string | undefined>(work.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < work.length) {
      const i = next++;
      const { target, host } = work[i]!;
      const reason = await probeOne(target, host, opts.hash, path, opts.timeoutMs);
      results[i] = reason === undefined ? undefined : `${targetLabel(target)} host ${host}: ${reason}`;
    }
  };
  await Promise.all(Array.from({ length: Math.min(MAX_CONCURRENT_PROBES, work.length) }, () => worker()));
  const failures = results.filter((r): r is string => r !== undefined);
  return { ready: failures.length === 0, failures };
}

/** One probe: undefined when it succeeded, else the reason. */
export function probeOne(target: ProbeTarget, host: string, hash: string, path: string, timeoutMs: number): Promise<string | undefined> {
  return new Promise((resolve) => {
    let settled = false;
    const finish = (reason: string | undefined): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(reason);
    };
    let req: http.ClientRequest | undefined;
    const timer = setTimeout(() => {
      finish('timeout');
      req?.destroy();
    }, timeoutMs);
    try {
      req = http.request({
        host: target.ip,
        port: target.port,
        path,
        method: 'GET',
        agent: false, // a fresh connection each time: a pooled one could reach a pod that is already gone
        headers: {
          Host: host,
          'User-Agent': PROBE_USER_AGENT,
          [PROBE_HEADER]: PROBE_HEADER_VALUE,
          [PROBE_HASH_HEADER]: PROBE_HASH_OVERRIDE,
        },
      });
    } catch (err) {
      finish(err instanceof Error ? err.message : String(err)); // e.g. an invalid port or header value
      return;
    }
    req.on('response', (res) => {
      finish(verdict(res.statusCode ?? 0, res.headers[PROBE_HASH_HEADER.toLowerCase()], hash));
      res.destroy(); // only the status and headers matter
    });
    req.on('error', (err: NodeJS.ErrnoException) => {
      finish(err.code ? `${err.syscall ?? 'request'} ${err.code}` : err.message);
    });
    req.end();
  });
}

function verdict(status: number, got: string | string[] | undefined, hash: string): string | undefined {
  if (status === 404 || status === 503) return `status ${status}`;
  if (status !== 200) return undefined; // upstream: not a Knative answer (auth filter, redirect…): treated as success
  const echoed = Array.isArray(got) ? got[0] : got;
  if (echoed === undefined) return undefined; // upstream: 200 without the header is success
  return echoed === hash ? undefined : `hash mismatch (got ${echoed})`;
}

function targetLabel(t: ProbeTarget): string {
  return t.ip.includes(':') ? `[${t.ip}]:${t.port}` : `${t.ip}:${t.port}`;
}

/** The fields of a Pod that `gatewayTargets` reads. */
export interface GatewayPodLike {
  metadata?: { deletionTimestamp?: string | null };
  status?: {
    phase?: string;
    podIP?: string;
    conditions?: readonly { type: string; status: string }[];
  };
}

/**
 * Probe targets from gateway pods (e.g. `istio=ingressgateway` in istio-system): pods with an IP, phase Running, the
 * `Ready` condition True and not being deleted, each on `port`; one target per IP, in list order.
 */
export function gatewayTargets(pods: readonly GatewayPodLike[], port: number): ProbeTarget[] {
  const seen = new Set<string>();
  const out: ProbeTarget[] = [];
  for (const pod of pods) {
    const ip = pod.status?.podIP;
    if (!ip || seen.has(ip)) continue;
    if (pod.metadata?.deletionTimestamp) continue;
    if (pod.status?.phase !== 'Running') continue;
    if (!pod.status.conditions?.some((c) => c.type === 'Ready' && c.status === 'True')) continue;
    seen.add(ip);
    out.push({ ip, port });
  }
  return out;
}
