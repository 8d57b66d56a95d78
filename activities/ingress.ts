// Programming a KIngress of class istio: its TLS Gateways and Secret copies (activities/ingress-tls.ts), its
// VirtualServices `<name>-ingress` and `<name>-mesh`, then its status —
// inside the pass of the Route that owns it (ADR 0005), or by the Ingress workflow for a KIngress no Route owns.
// Ready follows a successful apply, or with config-network's readiness probing on, gateways that serve it.
import { beginReconcile, cloneJson, endReconcile } from '../api/conditions.js';
import { Resources } from '../api/kinds.js';
import {
  ingressConditionSet,
  isIngressReady,
  markLoadBalancerNotReady,
  markIngressNotReady,
  markLoadBalancerReady,
  markNetworkConfigured,
} from '../api/lifecycle/ingress.js';
import type { KubeObject, ObjectKey } from '../api/meta.js';
import { isIstioIngress, NetworkingAnnotations, type Ingress, type IngressStatus } from '../api/networking.js';
import { ingressVirtualServiceName, meshVirtualServiceName } from '../resources/istio/names.js';
import { defaultIstioConfig, qualifiedName, type IstioConfig } from '../api/config/istio.js';
import { makeVirtualServices } from '../resources/istio/virtual-service.js';
import type { IngressTLSPlan } from '../resources/istio/ingress-tls.js';
import { ingressProbeHash } from '../resources/probe-hash.js';
import { applyIngressTLS, readIngressTLS } from './ingress-tls.js';
import { gatewayTargets, probeGateways, type GatewayPodLike } from './prober.js';
import { nowOf, type ActivityDeps } from './deps.js';
import { applyIfChanged, ownedWhole, settleAll } from './apply.js';
import type { KubeClient } from '../kube/client.js';
import { statusOutcome, writeStatus, type StatusOutcome } from './status.js';

/** Ready Unknown when programming failed (net-istio `notReconciledReason` / `notReconciledMessage`). */
export const ReconcileIngressFailed = 'ReconcileIngressFailed';
export const ReconcileIngressFailedMessage = 'Ingress reconciliation failed';

export type IngressOutcome = { outcome: 'gone' } | { outcome: 'otherClass'; ingressClass: string } | (StatusOutcome & { virtualServices: number });

/** The two VirtualServices a KIngress may have (`<name>-mesh`, `<name>-ingress`), by name: read side by side. */
export async function readVirtualServices(kube: KubeClient, namespace: string, ingressName: string): Promise<Map<string, KubeObject | undefined>> {
  const names = [meshVirtualServiceName(ingressName), ingressVirtualServiceName(ingressName)];
  const found = await Promise.all(names.map((name) => kube.get<KubeObject>(Resources.VirtualService, namespace, name)));
  return new Map(names.map((name, i) => [name, found[i]]));
}

/** What a caller writes beside a KIngress's programming, given the KIngress with the status it gets. */
export interface BesideIngress {
  /** Beside the VirtualServices' applies, when the status is known before them (no readiness probe to wait for). */
  virtualServices?: (ready: Ingress) => Promise<unknown> | undefined;
  /** Beside the status write, once the KIngress is Ready. */
  status?: (ready: Ingress) => Promise<unknown> | undefined;
}

/**
 * Programs one KIngress of class istio: its VirtualServices, then its status. Shared by the Ingress workflow and by
 * the Route's pass, which programs the KIngress it owns in the same step (ADR 0005), may pass the VirtualServices it
 * read already ({@link readVirtualServices}) and gives `beside` what to write beside the VirtualServices or beside
 * the status once the KIngress is Ready. Returns the KIngress with the status written; throws (after writing
 * NotReady) while gateways do not serve the new configuration yet, so the step is retried with backoff.
 */
export async function programIngress(
  deps: ActivityDeps,
  ing: Ingress,
  virtualServices?: Map<string, KubeObject | undefined>,
  beside: BesideIngress = {},
): Promise<{ ingress: Ingress; outcome: StatusOutcome; virtualServices: number }> {
  const { kube, config } = deps;
  const key = { namespace: ing.metadata.namespace ?? '', name: ing.metadata.name ?? '' };
  // The probe routes (K-Network-Hash) are always programmed; probing itself is behind config-network's switch.
  const hash = ingressProbeHash(ing);
  // The gateways config-istio names, in every VirtualService and in the load balancers the status reports.
  const istio = config.istioConfig?.() ?? defaultIstioConfig();
  const gateways = { ingressGateways: istio.ingressGateways.map(qualifiedName), localGateways: istio.localGateways.map(qualifiedName) };
  const now = nowOf(deps);
  const copy = cloneJson(ing);
  const before = beginReconcile(copy, ingressConditionSet, now);
  const status = copy.status as IngressStatus;
  // spec.tls and `httpOption: Redirected` give the Ingress Gateways of its own, applied before the VirtualServices
  // that match on them (net-istio's order); a Secret that cannot be read fails the pass, as upstream.
  let tls: IngressTLSPlan | undefined;
  try {
    tls = await readIngressTLS(kube, ing, gateways.ingressGateways);
    if (tls) await applyIngressTLS(kube, ing, tls);
  } catch (err) {
    markIngressNotReady(status, ReconcileIngressFailed, ReconcileIngressFailedMessage, now);
    await writeStatus(kube, Resources.KIngress, ing, finished(copy, before, now));
    throw new Error(`Ingress ${key.namespace}/${key.name}: ${(err as Error).message}`, { cause: err });
  }
  const vss = makeVirtualServices(ing, tls ? { ...gateways, ingressGateways: tls.externalGateways } : gateways, hash);
  const live = virtualServices ?? (await readVirtualServices(kube, key.namespace, key.name));
  markNetworkConfigured(status, now);
  const probing = config.networkConfig().ingressReadinessProbing === 'enabled' && !isIngressReady(ing);
  // Without a probe the status is known before the VirtualServices are applied (it is written after them).
  if (!probing) markReady(status, istio, now);
  const ready = probing ? undefined : { ...ing, status: finished(copy, before, now) };
  // The two VirtualServices are independent: applied side by side (one round trip less on the tail).
  await settleAll([
    ...vss.map((vs) => applyIfChanged(kube, Resources.VirtualService, live.get(vs.metadata.name ?? ''), vs, ownedWhole())),
    tls ? undefined : applyIngressTLS(kube, ing, undefined, live.get(ingressVirtualServiceName(key.name))),
    ready ? beside.virtualServices?.(ready) : undefined,
  ]);
  let probeFailures: string[] = [];
  if (probing) {
    const pods = await kube.list<KubeObject & GatewayPodLike>(Resources.Pod, 'istio-system', { labelSelector: 'istio=ingressgateway' });
    const hosts = [...new Set((ing.spec.rules ?? []).flatMap((r) => r.hosts ?? []))];
    const result = await probeGateways({ targets: gatewayTargets(pods.items, 8080), hosts, hash, timeoutMs: 1000 });
    probeFailures = result.failures;
    if (probeFailures.length === 0) markReady(status, istio, now);
    else markLoadBalancerNotReady(status, now);
    finished(copy, before, now);
  }
  // What hangs only on the load balancer this Ready status reports (the Route's placeholders) goes side by side with
  // its write: one round trip less on the way to the Route Ready.
  const [written] = await settleAll([
    writeStatus(kube, Resources.KIngress, ing, copy.status),
    probeFailures.length === 0 ? beside.status?.({ ...ing, status: copy.status }) : undefined,
  ] as const);
  // Not every gateway serves the new configuration yet: retry (with backoff) until they do.
  if (probeFailures.length > 0)
    throw new Error(`gateways not ready for Ingress ${key.namespace}/${key.name}: ${probeFailures.slice(0, 3).join('; ')}`);
  const ingress: Ingress = {
    ...ing,
    metadata: { ...ing.metadata, ...(written ? { resourceVersion: written } : {}) },
    status: copy.status,
  };
  return { ingress, outcome: statusOutcome(written, copy.status), virtualServices: vss.length };
}

/**
 * The load balancers a KIngress of class istio reports once its gateways serve it: the Service of the first
 * configured gateway of each kind, or `meshOnly` when config-istio lists none (net-istio's getLBStatus).
 */
function markReady(status: IngressStatus, istio: IstioConfig, now: string): void {
  const lb = (service: string | undefined) => (service ? [{ domainInternal: service }] : [{ meshOnly: true }]);
  markLoadBalancerReady(status, lb(istio.ingressGateways[0]?.service), lb(istio.localGateways[0]?.service), now);
}

/** Ends the reconcile of `copy`'s status (observed generation, transition times) and returns it. */
function finished(copy: Ingress, before: ReturnType<typeof beginReconcile>, now: string): IngressStatus {
  endReconcile(copy, before, now);
  return copy.status as IngressStatus;
}

export function createIngressActivities(deps: ActivityDeps) {
  const { kube } = deps;
  return {
    async reconcileIngress(key: ObjectKey): Promise<IngressOutcome> {
      const ing = await kube.get<Ingress>(Resources.KIngress, key.namespace, key.name);
      if (!ing || ing.metadata.deletionTimestamp) return { outcome: 'gone' };
      if (!isIstioIngress(ing)) return { outcome: 'otherClass', ingressClass: ing.metadata.annotations?.[NetworkingAnnotations.ingressClass] ?? '' };
      const { outcome, virtualServices } = await programIngress(deps, ing);
      return { ...outcome, virtualServices };
    },
  };
}
