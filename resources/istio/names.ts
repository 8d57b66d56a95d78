// Names and keys of the Istio objects Tidal's routing layer makes (net-istio `pkg/reconciler/ingress/resources/names`,
// `config/202-gateway.yaml`, `config/203-local-gateway.yaml`, hakn `config/serving/202-gateway.yaml`).
import { childName } from '../names.js';

/**
 * The Istio networking API version Tidal writes. net-istio builds its VirtualServices with istio.io/client-go
 * `networking/v1beta1`; v1beta1 is served by every Istio from 1.19 to HEAD (v1 only from 1.22).
 */
export const ISTIO_NETWORKING_API_VERSION = 'networking.istio.io/v1beta1';

/** API version and kind of the Knative Ingress (KIngress) that owns the VirtualServices. */
export const KINGRESS_API_VERSION = 'networking.internal.knative.dev/v1alpha1';
export const KINGRESS_KIND = 'Ingress';

/** Namespace of Knative's control plane: where VirtualServices of a namespace-less Ingress go (system.Namespace()). */
export const SYSTEM_NAMESPACE = 'knative-serving';

/** Default Kubernetes cluster domain (network.GetClusterDomainName() without /etc/resolv.conf). */
export const DEFAULT_CLUSTER_DOMAIN = 'cluster.local';

/** Label put on every VirtualService (and per-ingress Gateway) naming the Ingress it was made for. */
export const INGRESS_LABEL_KEY = 'networking.internal.knative.dev/ingress';
/** The two Ingress labels net-istio copies onto its VirtualServices; every other label is dropped. */
export const ROUTE_LABEL_KEY = 'serving.knative.dev/route';
export const ROUTE_NAMESPACE_LABEL_KEY = 'serving.knative.dev/routeNamespace';

/** The gateway name Istio reserves for the sidecars of the mesh. */
export const MESH_GATEWAY = 'mesh';

/** The shared Gateways (Knative's defaults, shipped by net-istio and by hakn). */
export const KNATIVE_INGRESS_GATEWAY_NAME = 'knative-ingress-gateway';
export const KNATIVE_LOCAL_GATEWAY_NAME = 'knative-local-gateway';
export const GATEWAY_NAMESPACE = 'knative-serving';
/** Namespace of the Istio gateway workload, its Services and the Secrets it reads through credentialName. */
export const ISTIO_NAMESPACE = 'istio-system';

/** `namespace/name`, the form a VirtualService uses to name a Gateway. */
export function qualifiedGatewayName(namespace: string, name: string): string {
  return `${namespace}/${name}`;
}

/** `knative-serving/knative-ingress-gateway`: the default external gateway of config-istio. */
export const DEFAULT_INGRESS_GATEWAY = qualifiedGatewayName(GATEWAY_NAMESPACE, KNATIVE_INGRESS_GATEWAY_NAME);
/** `knative-serving/knative-local-gateway`: the default cluster-local gateway of config-istio. */
export const DEFAULT_LOCAL_GATEWAY = qualifiedGatewayName(GATEWAY_NAMESPACE, KNATIVE_LOCAL_GATEWAY_NAME);

/** The VirtualService bound to the gateways: `kmeta.ChildName(ingress, "-ingress")`. */
export function ingressVirtualServiceName(ingressName: string): string {
  return childName(ingressName, '-ingress');
}

/** The VirtualService for the sidecar mesh: `kmeta.ChildName(ingress, "-mesh")`. */
export function meshVirtualServiceName(ingressName: string): string {
  return childName(ingressName, '-mesh');
}

/** `<name>.<namespace>.svc.<cluster-domain>` (knative.dev/pkg `network.GetServiceHostname`). */
export function serviceHostname(name: string, namespace: string, clusterDomain: string = DEFAULT_CLUSTER_DOMAIN): string {
  return `${name}.${namespace}.svc.${clusterDomain}`;
}
