// networking.internal.knative.dev/v1alpha1 Ingress ("KIngress") types and the label, annotation and header keys of
// networking.knative.dev / networking.internal.knative.dev (knative/networking pkg/apis/networking/register.go,
// v1alpha1/ingress_types.go, pkg/http/header; serving pkg/activator for the revision headers).
// Plain JSON, safe inside workflows.
import type { KubeObject, ObjectMeta } from './meta.js';
import type { Status } from './serving.js';

export const NETWORKING_INTERNAL_GROUP = 'networking.internal.knative.dev';
export const NETWORKING_INTERNAL_API_VERSION = 'networking.internal.knative.dev/v1alpha1';
/** The user-facing group of the networking annotations and labels. */
export const NETWORKING_PUBLIC_GROUP = 'networking.knative.dev';

/** config-network `ingress-class` default: net-istio's class. */
export const IstioIngressClassName = 'istio.ingress.networking.knative.dev';

/** `ExternalIP` (public gateways; the default when a rule has none) or `ClusterLocal` (cluster-local gateway). */
export type IngressVisibility = 'ExternalIP' | 'ClusterLocal';
export const IngressVisibilityExternalIP: IngressVisibility = 'ExternalIP';
export const IngressVisibilityClusterLocal: IngressVisibility = 'ClusterLocal';

/** `spec.httpOption`: plain HTTP served, or redirected to HTTPS. */
export type HTTPOption = 'Enabled' | 'Redirected';

/** Value of the `networking.knative.dev/visibility` label that makes a Route, Service or tag cluster-local. */
export const VisibilityClusterLocal = 'cluster-local';

export const NetworkingLabels = {
  /** On a Route / ksvc / placeholder Service: any non-empty value makes it cluster-local. */
  visibility: `${NETWORKING_PUBLIC_GROUP}/visibility`,
  /** On a Certificate: the wildcard domain it was issued for. */
  wildcardDomain: `${NETWORKING_PUBLIC_GROUP}/wildcardDomain`,
  /** On a Certificate: `external-domain` or `cluster-local-domain`. */
  certificateType: `${NETWORKING_PUBLIC_GROUP}/certificate-type`,
  /** On network programming made for an Ingress (VirtualServices, Gateways): the Ingress name. */
  ingress: `${NETWORKING_INTERNAL_GROUP}/ingress`,
  certificateUID: `${NETWORKING_INTERNAL_GROUP}/certificate-uid`,
  originSecretName: `${NETWORKING_INTERNAL_GROUP}/originSecretName`,
  originSecretNamespace: `${NETWORKING_INTERNAL_GROUP}/originSecretNamespace`,
} as const;

export const NetworkingAnnotations = {
  ingressClass: `${NETWORKING_PUBLIC_GROUP}/ingress.class`,
  /** Alternative spelling accepted on Routes/ksvcs; never copied to the KIngress. */
  ingressClassAlt: `${NETWORKING_PUBLIC_GROUP}/ingress-class`,
  certificateClass: `${NETWORKING_PUBLIC_GROUP}/certificate.class`,
  /** Alternative spelling accepted on Routes/ksvcs; never copied to the KIngress. */
  certificateClassAlt: `${NETWORKING_PUBLIC_GROUP}/certificate-class`,
  disableAutoTLS: `${NETWORKING_PUBLIC_GROUP}/disableAutoTLS`,
  disableAutoTLSAlt: `${NETWORKING_PUBLIC_GROUP}/disable-auto-tls`,
  disableExternalDomainTLS: `${NETWORKING_PUBLIC_GROUP}/disable-external-domain-tls`,
  /** HTTP option of a Route/ksvc (`enabled` | `redirected`, case-insensitive); takes precedence over `httpProtocol`. */
  httpOption: `${NETWORKING_PUBLIC_GROUP}/httpOption`,
  httpProtocol: `${NETWORKING_PUBLIC_GROUP}/http-protocol`,
  /** On the KIngress: the JSON rollout state (Knative's route/traffic/rollout.go). */
  rollout: `${NETWORKING_INTERNAL_GROUP}/rollout`,
  /** On the KIngress: JSON `{"<tag>": ["<host>", ...]}` for every tagged traffic target. */
  tagToHost: `${NETWORKING_INTERNAL_GROUP}/tag-to-host`,
} as const;

/** A KIngress Tidal programs itself (class istio; an absent annotation means the default, Tidal's). */
export function isIstioIngress(ing: { metadata: Pick<ObjectMeta, 'annotations'> }): boolean {
  return (ing.metadata.annotations?.[NetworkingAnnotations.ingressClass] ?? IstioIngressClassName) === IstioIngressClassName;
}

/** The labels a Route puts on its KIngress (serving.knative.dev keys that live with the networking objects). */
export const IngressOwnerLabels = {
  route: 'serving.knative.dev/route',
  routeNamespace: 'serving.knative.dev/routeNamespace',
} as const;

/** Request headers the Route programs into KIngress paths and splits. */
export const RoutingHeaders = {
  /** Appended by every split: the revision name (serving `activator.RevisionHeaderName`). */
  revision: 'Knative-Serving-Revision',
  /** Appended by every split: the revision namespace (serving `activator.RevisionHeaderNamespace`). */
  namespace: 'Knative-Serving-Namespace',
  /** tag-header-based-routing: matched (`exact: <tag>`) and appended by tag paths (networking `header.RouteTagKey`). */
  routeTag: 'Knative-Serving-Tag',
  /** tag-header-based-routing: appended (`"true"`) by the default route's path (networking `header.DefaultRouteKey`). */
  defaultRoute: 'Knative-Serving-Default-Route',
} as const;

/** Service port numbers and names (knative/networking pkg/apis/networking/ports.go). */
export const ServicePorts = {
  http: 80,
  http2: 81,
  https: 443,
} as const;

export interface IngressTLS {
  hosts?: string[];
  secretName?: string;
  secretNamespace?: string;
}

/** Only exact matching is supported. */
export interface HeaderMatch {
  exact: string;
}

export interface IngressBackendSplit {
  serviceNamespace: string;
  serviceName: string;
  /** IntOrString. */
  servicePort: number | string;
  /** 0..100; a lone split defaults to 100. */
  percent?: number;
  appendHeaders?: Record<string, string>;
}

export interface HTTPIngressPath {
  /** A literal prefix; empty means every path. */
  path?: string;
  rewriteHost?: string;
  headers?: Record<string, HeaderMatch>;
  splits: IngressBackendSplit[];
  appendHeaders?: Record<string, string>;
}

export interface HTTPIngressRuleValue {
  paths: HTTPIngressPath[];
}

export interface IngressRule {
  hosts?: string[];
  visibility?: IngressVisibility;
  http?: HTTPIngressRuleValue;
}

export interface IngressSpec {
  tls?: IngressTLS[];
  rules?: IngressRule[];
  httpOption?: HTTPOption;
}

export interface LoadBalancerIngressStatus {
  ip?: string;
  domain?: string;
  domainInternal?: string;
  meshOnly?: boolean;
}

export interface LoadBalancerStatus {
  ingress?: LoadBalancerIngressStatus[];
}

export interface IngressStatus extends Status {
  publicLoadBalancer?: LoadBalancerStatus;
  privateLoadBalancer?: LoadBalancerStatus;
}

export interface Ingress extends KubeObject {
  apiVersion: typeof NETWORKING_INTERNAL_API_VERSION;
  kind: 'Ingress';
  metadata: ObjectMeta;
  spec: IngressSpec;
  status?: IngressStatus;
}
