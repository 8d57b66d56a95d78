// The resources Tidal reads and writes, with what a REST path needs. Pure: shared by activities, watcher and tests.

export interface ResourceType {
  group: string; // '' for the core group
  version: string;
  kind: string;
  plural: string;
  namespaced: boolean;
}

function rt(group: string, version: string, kind: string, plural: string, namespaced = true): ResourceType {
  return { group, version, kind, plural, namespaced };
}

export const SERVING_GROUP = 'serving.knative.dev';
export const SERVING_API_VERSION = `${SERVING_GROUP}/v1`;

export const Resources = {
  Service: rt(SERVING_GROUP, 'v1', 'Service', 'services'),
  Configuration: rt(SERVING_GROUP, 'v1', 'Configuration', 'configurations'),
  Revision: rt(SERVING_GROUP, 'v1', 'Revision', 'revisions'),
  Route: rt(SERVING_GROUP, 'v1', 'Route', 'routes'),
  DomainMapping: rt(SERVING_GROUP, 'v1beta1', 'DomainMapping', 'domainmappings'),
  ClusterDomainClaim: rt('networking.internal.knative.dev', 'v1alpha1', 'ClusterDomainClaim', 'clusterdomainclaims', false),
  Deployment: rt('apps', 'v1', 'Deployment', 'deployments'),
  HorizontalPodAutoscaler: rt('autoscaling', 'v2', 'HorizontalPodAutoscaler', 'horizontalpodautoscalers'),
  PodDisruptionBudget: rt('policy', 'v1', 'PodDisruptionBudget', 'poddisruptionbudgets'),
  Pod: rt('', 'v1', 'Pod', 'pods'),
  KubeService: rt('', 'v1', 'Service', 'services'),
  ConfigMap: rt('', 'v1', 'ConfigMap', 'configmaps'),
  Secret: rt('', 'v1', 'Secret', 'secrets'),
  Event: rt('', 'v1', 'Event', 'events'),
  Namespace: rt('', 'v1', 'Namespace', 'namespaces', false),
  Lease: rt('coordination.k8s.io', 'v1', 'Lease', 'leases'),
  KIngress: rt('networking.internal.knative.dev', 'v1alpha1', 'Ingress', 'ingresses'),
  VirtualService: rt('networking.istio.io', 'v1beta1', 'VirtualService', 'virtualservices'),
  Gateway: rt('networking.istio.io', 'v1beta1', 'Gateway', 'gateways'),
  Certificate: rt('networking.internal.knative.dev', 'v1alpha1', 'Certificate', 'certificates'),
  CertManagerCertificate: rt('cert-manager.io', 'v1', 'Certificate', 'certificates'),
  MutatingWebhookConfiguration: rt('admissionregistration.k8s.io', 'v1', 'MutatingWebhookConfiguration', 'mutatingwebhookconfigurations', false),
  ValidatingWebhookConfiguration: rt(
    'admissionregistration.k8s.io',
    'v1',
    'ValidatingWebhookConfiguration',
    'validatingwebhookconfigurations',
    false,
  ),
} as const satisfies Record<string, ResourceType>;

export type ResourceName = keyof typeof Resources;

export function apiVersionOf(t: ResourceType): string {
  return t.group === '' ? t.version : `${t.group}/${t.version}`;
}

/** The REST path of a collection (namespace given) or of one object (name given). */
export function resourcePath(t: ResourceType, namespace?: string, name?: string, subresource?: string): string {
  const base = t.group === '' ? `/api/${t.version}` : `/apis/${t.group}/${t.version}`;
  const ns = t.namespaced && namespace ? `/namespaces/${encodeURIComponent(namespace)}` : '';
  const obj = name ? `/${encodeURIComponent(name)}` : '';
  const sub = name && subresource ? `/${subresource}` : '';
  return `${base}${ns}/${t.plural}${obj}${sub}`;
}
