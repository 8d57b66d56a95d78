// serving.knative.dev/v1beta1 DomainMapping and networking.internal.knative.dev/v1alpha1 ClusterDomainClaim: the
// fields Tidal reads or writes, and the keys that go with them (knative/serving pkg/apis/serving/v1beta1
// domainmapping_types.go, pkg/apis/serving/register.go; knative/networking domainclaim_types.go, pkg/http/header).
// Plain JSON, safe inside workflows.
import type { KubeObject, ObjectMeta } from './meta.js';
import type { Addressable, Status } from './serving.js';

export const DOMAIN_MAPPING_API_VERSION = 'serving.knative.dev/v1beta1';
export const CLUSTER_DOMAIN_CLAIM_API_VERSION = 'networking.internal.knative.dev/v1alpha1';

/** knative.dev/pkg duckv1.KReference: what `spec.ref` names. */
export interface KReference {
  kind?: string;
  name?: string;
  namespace?: string;
  apiVersion?: string;
  group?: string;
  address?: string;
}

export interface DomainMappingSpec {
  ref: KReference;
  /** Terminate TLS with an existing secret of the DomainMapping's namespace. */
  tls?: { secretName?: string };
}

export interface DomainMappingStatus extends Status {
  url?: string;
  address?: Addressable;
}

export interface DomainMapping extends KubeObject {
  apiVersion: typeof DOMAIN_MAPPING_API_VERSION;
  kind: 'DomainMapping';
  metadata: ObjectMeta;
  spec: DomainMappingSpec;
  status?: DomainMappingStatus;
}

export interface ClusterDomainClaim extends KubeObject {
  apiVersion: typeof CLUSTER_DOMAIN_CLAIM_API_VERSION;
  kind: 'ClusterDomainClaim';
  metadata: ObjectMeta;
  /** The namespace whose DomainMappings may use the claim's name. */
  spec: { namespace: string };
}

/** Labels a DomainMapping puts on its KIngress (serving `DomainMappingUIDLabelKey`, `DomainMappingNamespaceLabelKey`). */
export const DomainMappingLabels = {
  uid: 'serving.knative.dev/domainMappingUID',
  namespace: 'serving.knative.dev/domainMappingNamespace',
} as const;

/** Knative's finalizer for DomainMappings (`<plural>.<group>`): the autocreated claim goes when the mapping goes. */
export const DomainMappingFinalizer = 'domainmappings.serving.knative.dev';

/** Appended to every request the mapping forwards: the host the client asked for (networking `OriginalHostHeader`). */
export const OriginalHostHeader = 'K-Original-Host';

/** The cluster domain suffix Tidal serves (knative.dev/pkg `network.GetClusterDomainName()` on a default cluster). */
export const ClusterDomain = 'cluster.local';
