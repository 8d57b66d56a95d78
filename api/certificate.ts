// networking.internal.knative.dev/v1alpha1 Certificate ("KCert"): the TLS certificate a Route or DomainMapping asks
// for (knative/networking pkg/apis/networking/v1alpha1/certificate_types.go, certificate_lifecycle.go), its keys and
// readiness. Plain JSON, safe inside workflows.
import { ConditionReady, conditionSet } from './conditions.js';
import type { KubeObject, ObjectMeta } from './meta.js';
import type { NETWORKING_INTERNAL_API_VERSION } from './networking.js';
import { NETWORKING_PUBLIC_GROUP } from './networking.js';
import type { Status } from './serving.js';

/** `networking.knative.dev/certificate-type` of a Route's or DomainMapping's certificate (`config.CertificateExternalDomain`). */
export const CertificateTypeExternalDomain = 'external-domain';

/** On a DomainMapping's Certificate: the mapping's name (upstream `serving.DomainMappingUIDLabelKey`, despite the key). */
export const DomainMappingUIDLabel = 'serving.knative.dev/domainMappingUID';

/** The Route or DomainMapping annotation that turns external-domain-tls off for it (and its deprecated spellings). */
export const DisableExternalDomainTLSAnnotations: readonly string[] = [
  `${NETWORKING_PUBLIC_GROUP}/disableAutoTLS`,
  `${NETWORKING_PUBLIC_GROUP}/disable-auto-tls`,
  `${NETWORKING_PUBLIC_GROUP}/disable-external-domain-tls`,
];

export interface HTTP01Challenge {
  url?: string;
  serviceName?: string;
  serviceNamespace?: string;
  servicePort?: number | string;
}

export interface CertificateSpec {
  dnsNames: string[];
  domain?: string;
  secretName: string;
}

export interface CertificateStatus extends Status {
  notAfter?: string;
  http01Challenges?: HTTP01Challenge[];
}

export interface Certificate extends KubeObject {
  apiVersion: typeof NETWORKING_INTERNAL_API_VERSION;
  kind: 'Certificate';
  metadata: ObjectMeta;
  spec: CertificateSpec;
  status?: CertificateStatus;
}

/** Ready alone (upstream `certificateCondSet`, a living condition set with no dependents). */
export const certificateConditionSet = conditionSet(ConditionReady);

function observed(cert: Pick<Certificate, 'metadata' | 'status'>): boolean {
  return (cert.status?.observedGeneration ?? 0) === (cert.metadata.generation ?? 0);
}

/** Ready True for the current generation (upstream `Certificate.IsReady`). */
export function isCertificateReady(cert: Pick<Certificate, 'metadata' | 'status'>): boolean {
  return observed(cert) && certificateConditionSet.get(cert.status, ConditionReady)?.status === 'True';
}

/** Ready False for the current generation (upstream `Certificate.IsFailed`). */
export function isCertificateFailed(cert: Pick<Certificate, 'metadata' | 'status'>): boolean {
  return observed(cert) && certificateConditionSet.get(cert.status, ConditionReady)?.status === 'False';
}

/** The reason of the Certificate's Ready condition ('' without one): what a Route's messages quote. */
export function certificateReadyReason(cert: Pick<Certificate, 'status'>): string {
  return certificateConditionSet.get(cert.status, ConditionReady)?.reason ?? '';
}
