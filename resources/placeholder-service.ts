// Placeholder Kubernetes Services of a Route, one per traffic name (knative/serving
// pkg/reconciler/route/resources/service.go, visibility/visibility.go).
import { Labels } from '../api/labels.js';
import { isControlledBy, type KubeObject, type ObjectMeta, type OwnerReference } from '../api/meta.js';
import {
  IngressVisibilityClusterLocal,
  IngressVisibilityExternalIP,
  NetworkingLabels,
  ServicePorts,
  type Ingress,
  type IngressVisibility,
} from '../api/networking.js';
import type { Route } from '../api/serving.js';
import { controllerRef } from './owner.js';

/** Port name and appProtocol of the placeholder's h2c port (networking `ServicePortNameH2C`, `AppProtocolH2C`). */
export const PlaceholderPortName = 'http2';
export const AppProtocolH2C = 'kubernetes.io/h2c';

export interface PlaceholderServicePort {
  name: string;
  appProtocol?: string;
  port: number;
  targetPort?: number;
}

type PlaceholderMeta = ObjectMeta & {
  name: string;
  namespace: string;
  labels: Record<string, string>;
  ownerReferences: OwnerReference[];
};

/** A core/v1 Service standing for one traffic name of a Route. Plain JSON. */
export interface PlaceholderService extends KubeObject {
  apiVersion: 'v1';
  kind: 'Service';
  metadata: PlaceholderMeta;
  spec: {
    type: 'ExternalName' | 'ClusterIP';
    externalName?: string;
    clusterIP?: string;
    sessionAffinity?: 'None';
    ports: PlaceholderServicePort[];
  };
}

/** The manually managed Endpoints of a headless placeholder (load balancer with an IP). */
export interface PlaceholderEndpoints extends KubeObject {
  apiVersion: 'v1';
  kind: 'Endpoints';
  metadata: PlaceholderMeta;
  subsets: { addresses: { ip: string }[]; ports: { name: string; port: number }[] }[];
}

/**
 * The hostname of a traffic name with the default tag-template `{{.Tag}}-{{.Name}}`: the Route's name for the
 * default target (`''`), `<tag>-<route>` for a tag. Also the placeholder Service's name.
 */
export function placeholderServiceName(routeName: string, trafficName: string): string {
  return trafficName === '' ? routeName : `${trafficName}-${routeName}`;
}

function h2cPort(): PlaceholderServicePort {
  return { name: PlaceholderPortName, appProtocol: AppProtocolH2C, port: ServicePorts.http, targetPort: ServicePorts.http };
}

/**
 * Upstream `makeServiceObjectMeta`: named `hostname` in the Route's namespace, controller-owned by the Route;
 * labels = the Route's minus `networking.knative.dev/visibility` (a tag is made cluster-local by that label on its
 * own placeholder, which the user sets) plus `serving.knative.dev/route`; annotations = the Route's.
 */
function objectMeta(route: Route, hostname: string): PlaceholderMeta {
  const labels: Record<string, string> = { ...route.metadata.labels };
  delete labels[NetworkingLabels.visibility];
  labels[Labels.route] = route.metadata.name ?? '';
  const meta: PlaceholderMeta = {
    name: hostname,
    namespace: route.metadata.namespace ?? '',
    labels,
    ownerReferences: [controllerRef(route)],
  };
  if (route.metadata.annotations && Object.keys(route.metadata.annotations).length) {
    meta.annotations = { ...route.metadata.annotations };
  }
  return meta;
}

/**
 * The initial placeholder Service of one traffic name (upstream `MakeK8sPlaceholderService`):
 * `type: ExternalName` to `domain` (the name's full domain, e.g. `hello.default.example.com`), session affinity
 * None, one port `http2` (appProtocol `kubernetes.io/h2c`) 80 → 80. `hostname` defaults to
 * `placeholderServiceName(route, trafficName)`; pass it when config-network's tag-template is not the default.
 */
export function makePlaceholderService(
  route: Route,
  trafficName: string,
  domain: string,
  hostname: string = placeholderServiceName(route.metadata.name ?? '', trafficName),
): PlaceholderService {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: objectMeta(route, hostname),
    spec: { type: 'ExternalName', externalName: domain, sessionAffinity: 'None', ports: [h2cPort()] },
  };
}

export type LoadBalancedPlaceholder = { ok: true; service: PlaceholderService; endpoints?: PlaceholderEndpoints } | { ok: false; error: string };

/** Upstream `errLoadBalancerNotFound`. */
export const LoadBalancerNotFoundMessage = 'failed to fetch loadbalancer domain/IP from ingress status';

/**
 * The placeholder Service once the Ingress reports a load balancer (upstream `MakeK8sService`). The
 * private load balancer is used when the name is cluster-local (`isPrivate`) or the Ingress has one; then, in this
 * order: an IP → headless ClusterIP plus Endpoints with that IP (port `http2` 80); `domainInternal` → ExternalName to
 * it; `domain` → ExternalName to it; `meshOnly` → ClusterIP with port `http` 80. No load balancer, or more than one,
 * is an error.
 */
export function makeLoadBalancedPlaceholder(
  route: Route,
  trafficName: string,
  ingress: Pick<Ingress, 'metadata' | 'status'>,
  isPrivate: boolean,
  hostname: string = placeholderServiceName(route.metadata.name ?? '', trafficName),
): LoadBalancedPlaceholder {
  const privateLB = ingress.status?.privateLoadBalancer;
  const lb = isPrivate || (privateLB?.ingress?.length ?? 0) > 0 ? privateLB : ingress.status?.publicLoadBalancer;
  const lbs = lb?.ingress ?? [];
  if (lbs.length === 0) return { ok: false, error: LoadBalancerNotFoundMessage };
  if (lbs.length > 1) {
    return {
      ok: false,
      error: `more than one ingress are specified in status(LoadBalancer) of Ingress ${ingress.metadata.name ?? ''}`,
    };
  }
  const balancer = lbs[0]!;
  const meta = objectMeta(route, hostname);

  if (balancer.ip) {
    const service: PlaceholderService = {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: meta,
      spec: { type: 'ClusterIP', clusterIP: 'None', ports: [h2cPort()] },
    };
    const endpoints: PlaceholderEndpoints = {
      apiVersion: 'v1',
      kind: 'Endpoints',
      metadata: objectMeta(route, hostname),
      subsets: [{ addresses: [{ ip: balancer.ip }], ports: [{ name: PlaceholderPortName, port: ServicePorts.http }] }],
    };
    return { ok: true, service, endpoints };
  }
  if (balancer.domainInternal) {
    return {
      ok: true,
      service: {
        apiVersion: 'v1',
        kind: 'Service',
        metadata: meta,
        spec: { type: 'ExternalName', externalName: balancer.domainInternal, sessionAffinity: 'None', ports: [h2cPort()] },
      },
    };
  }
  if (balancer.domain) {
    return {
      ok: true,
      service: {
        apiVersion: 'v1',
        kind: 'Service',
        metadata: meta,
        spec: { type: 'ExternalName', externalName: balancer.domain, ports: [h2cPort()] },
      },
    };
  }
  if (balancer.meshOnly) {
    return {
      ok: true,
      service: { apiVersion: 'v1', kind: 'Service', metadata: meta, spec: { type: 'ClusterIP', ports: [{ name: 'http', port: ServicePorts.http }] } },
    };
  }
  return { ok: false, error: LoadBalancerNotFoundMessage };
}

/**
 * The visibility a placeholder Service asks for (visibility.go): ClusterLocal when it carries a
 * non-empty `networking.knative.dev/visibility` label, else ExternalIP. The effective visibility of a traffic name
 * is the more restrictive of this and the Route's (`minVisibility`).
 */
export function placeholderVisibility(svc: Pick<KubeObject, 'metadata'> | undefined): IngressVisibility {
  return svc?.metadata.labels?.[NetworkingLabels.visibility] ? IngressVisibilityClusterLocal : IngressVisibilityExternalIP;
}

/** ClusterLocal if either is (upstream `minVisibility`). */
export function minVisibility(a: IngressVisibility, b: IngressVisibility): IngressVisibility {
  return a === IngressVisibilityClusterLocal || b === IngressVisibilityClusterLocal ? IngressVisibilityClusterLocal : a;
}

/**
 * How a live placeholder Service becomes the desired one (upstream `updatePlaceholderServices`): in place, or by
 * delete and re-create where the API server refuses the update. ExternalName → any type is updated in place;
 * ClusterIP → ExternalName is not (kubernetes#104329); cluster IPs are immutable, so between ClusterIP Services a
 * changed `clusterIP` ("None" ↔ allocated) means re-create, while a desired Service that leaves `clusterIP` empty
 * keeps the allocated one.
 */
export function placeholderUpdate(
  live: { spec?: { type?: string; clusterIP?: string } },
  desired: Pick<PlaceholderService, 'spec'>,
): 'inPlace' | 'recreate' {
  const from = live.spec?.type ?? 'ClusterIP';
  const to = desired.spec.type;
  if (from !== to) return from === 'ExternalName' ? 'inPlace' : 'recreate';
  if (to !== 'ClusterIP') return 'inPlace';
  const liveIP = live.spec?.clusterIP ?? '';
  const wantIP = desired.spec.clusterIP ?? '';
  if (liveIP === wantIP) return 'inPlace';
  if (liveIP !== 'None' && wantIP === '') return 'inPlace';
  return 'recreate';
}

/**
 * The desired placeholder with the live one's labels and annotations kept under its own (upstream
 * `kmap.Union(live, desired)`): a label or annotation the Route's Service once propagated stays on the placeholder
 * after the Service drops it, as Knative's conformance suite expects (TestLabelPropagation,
 * TestAnnotationPropagation), and one another controller set is not removed.
 */
export function withLiveMetadata(live: Pick<KubeObject, 'metadata'> | undefined, desired: PlaceholderService): PlaceholderService {
  if (!live) return desired;
  return {
    ...desired,
    metadata: {
      ...desired.metadata,
      labels: { ...live.metadata.labels, ...desired.metadata.labels },
      ...(live.metadata.annotations || desired.metadata.annotations
        ? { annotations: { ...live.metadata.annotations, ...desired.metadata.annotations } }
        : {}),
    },
  };
}

/**
 * The placeholder Services to delete (upstream `deleteOrphanedServices`): of the Services labelled
 * `serving.knative.dev/route=<route>` (`labelled`), those the Route controls whose name no traffic name needs any
 * more (`wanted`). A Service someone else controls is left alone even if it carries the label.
 */
export function orphanedPlaceholders(labelled: readonly KubeObject[], routeUid: string | undefined, wanted: ReadonlySet<string>): string[] {
  return labelled
    .filter((svc) => isControlledBy(svc, routeUid))
    .map((svc) => svc.metadata.name ?? '')
    .filter((name) => name !== '' && !wanted.has(name))
    .sort();
}
