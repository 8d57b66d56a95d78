// Activities of the Ingress workflow (class istio): the KIngress's VirtualServices `<name>-ingress` and
// `<name>-mesh`, then its status. Readiness probing of gateway pods comes later; for now Ready follows a
// successful apply.
import { beginReconcile, cloneJson, endReconcile } from '../api/conditions.js';
import { Resources } from '../api/kinds.js';
import { ingressConditionSet, markLoadBalancerReady, markNetworkConfigured } from '../api/lifecycle/ingress.js';
import type { KubeObject, ObjectKey } from '../api/meta.js';
import { IstioIngressClassName, NetworkingAnnotations, type Ingress, type IngressStatus } from '../api/networking.js';
import { DEFAULT_ISTIO_GATEWAYS, makeIngressVirtualService, makeMeshVirtualService } from '../resources/istio/virtual-service.js';
import { nowOf, type ActivityDeps } from './deps.js';
import { statusOutcome, type StatusOutcome } from './service.js';
import { containsAll, writeStatus } from './status.js';

export type IngressOutcome = { outcome: 'gone' } | { outcome: 'otherClass'; ingressClass: string } | (StatusOutcome & { virtualServices: number });

export function createIngressActivities(deps: ActivityDeps) {
  const { kube } = deps;
  return {
    async reconcileIngress(key: ObjectKey): Promise<IngressOutcome> {
      const ing = await kube.get<Ingress>(Resources.KIngress, key.namespace, key.name);
      if (!ing || ing.metadata.deletionTimestamp) return { outcome: 'gone' };
      const cls = ing.metadata.annotations?.[NetworkingAnnotations.ingressClass] ?? IstioIngressClassName;
      if (cls !== IstioIngressClassName) return { outcome: 'otherClass', ingressClass: cls };
      const vss = [makeIngressVirtualService(ing, DEFAULT_ISTIO_GATEWAYS), makeMeshVirtualService(ing, DEFAULT_ISTIO_GATEWAYS)].filter((v) => v !== undefined);
      for (const vs of vss) {
        const existing = await kube.get<KubeObject>(Resources.VirtualService, vs.metadata.namespace ?? key.namespace, vs.metadata.name ?? '');
        if (!existing || !containsAll(existing, vs)) await kube.apply(Resources.VirtualService, vs);
      }
      const now = nowOf(deps);
      const copy = cloneJson(ing);
      const before = beginReconcile(copy, ingressConditionSet, now);
      const status = copy.status as IngressStatus;
      markNetworkConfigured(status, now);
      markLoadBalancerReady(status, [{ domainInternal: 'istio-ingressgateway.istio-system.svc.cluster.local' }], [{ domainInternal: 'knative-local-gateway.istio-system.svc.cluster.local' }], now);
      endReconcile(copy, before, now);
      const written = await writeStatus(kube, Resources.KIngress, ing, copy.status);
      return { ...statusOutcome(written, copy.status), virtualServices: vss.length };
    },
  };
}
