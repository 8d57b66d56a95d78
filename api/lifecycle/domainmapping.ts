// DomainMapping status transitions (knative/serving pkg/apis/serving/v1beta1/domainmapping_lifecycle.go).
// Every function mutates the status it is given; `now` is an RFC3339 timestamp.
import { ConditionReady, conditionSet } from '../conditions.js';
import type { DomainMapping, DomainMappingStatus } from '../domainmapping.js';
import type { IngressStatus } from '../networking.js';

export const DomainMappingConditionReady = ConditionReady;
/** The ClusterDomainClaim for the name exists and belongs to the mapping's namespace. */
export const DomainMappingConditionDomainClaimed = 'DomainClaimed';
/** `spec.ref` resolved to a `{name}.{namespace}.svc.<cluster domain>` URL in the mapping's namespace. */
export const DomainMappingConditionReferenceResolved = 'ReferenceResolved';
/** The KIngress is programmed and ready. */
export const DomainMappingConditionIngressReady = 'IngressReady';
/** TLS is provided, not enabled, or its certificate is ready. */
export const DomainMappingConditionCertificateProvisioned = 'CertificateProvisioned';

/** Ready = DomainClaimed ∧ ReferenceResolved ∧ IngressReady ∧ CertificateProvisioned (upstream's order). */
export const domainMappingConditionSet = conditionSet(
  DomainMappingConditionReady,
  DomainMappingConditionDomainClaimed,
  DomainMappingConditionReferenceResolved,
  DomainMappingConditionIngressReady,
  DomainMappingConditionCertificateProvisioned,
);

/** CertificateProvisioned message when external-domain-tls is off (upstream `ExternalDomainTLSNotEnabledMessage`). */
export const ExternalDomainTLSNotEnabledMessage = 'external-domain-tls is not enabled';
/** CertificateProvisioned message for `spec.tls` (upstream `TLSCertificateProvidedExternally`). */
export const TLSCertificateProvidedExternally = 'TLS certificate was provided externally';
/** Reason of DomainClaimed False for a claim that is missing or another namespace's. */
export const DomainAlreadyClaimedReason = 'DomainAlreadyClaimed';
/** Reason of ReferenceResolved False. */
export const ResolveFailedReason = 'ResolveFailed';
/** Tidal's reason for a DomainMapping the admission webhook would have refused (it was stored bypassing it). */
export const InvalidSpecReason = 'InvalidSpec';

/** Ready is True and the status is of the current generation (upstream `DomainMapping.IsReady`). */
export function isDomainMappingReady(dm: Pick<DomainMapping, 'metadata' | 'status'>): boolean {
  return (dm.status?.observedGeneration ?? 0) === (dm.metadata.generation ?? 0) && domainMappingConditionSet.isHappy(dm.status);
}

/** Ready is False and the status is of the current generation. */
export function isDomainMappingFailed(dm: Pick<DomainMapping, 'metadata' | 'status'>): boolean {
  return (
    (dm.status?.observedGeneration ?? 0) === (dm.metadata.generation ?? 0) &&
    domainMappingConditionSet.get(dm.status, DomainMappingConditionReady)?.status === 'False'
  );
}

export function markTLSNotEnabled(status: DomainMappingStatus, now: string): void {
  domainMappingConditionSet.markTrueWithReason(
    status,
    DomainMappingConditionCertificateProvisioned,
    'TLSNotEnabled',
    ExternalDomainTLSNotEnabledMessage,
    now,
  );
}

export function markCertificateReady(status: DomainMappingStatus, now: string): void {
  domainMappingConditionSet.markTrue(status, DomainMappingConditionCertificateProvisioned, now);
}

export function markCertificateNotReady(status: DomainMappingStatus, certificateName: string, now: string): void {
  domainMappingConditionSet.markUnknown(
    status,
    DomainMappingConditionCertificateProvisioned,
    'CertificateNotReady',
    `Certificate ${certificateName} is not ready.`,
    now,
  );
}

export function markCertificateNotOwned(status: DomainMappingStatus, certificateName: string, now: string): void {
  domainMappingConditionSet.markFalse(
    status,
    DomainMappingConditionCertificateProvisioned,
    'CertificateNotOwned',
    `There is an existing certificate ${certificateName} that we don't own.`,
    now,
  );
}

export function markCertificateProvisionFailed(status: DomainMappingStatus, certificateName: string, now: string): void {
  domainMappingConditionSet.markFalse(
    status,
    DomainMappingConditionCertificateProvisioned,
    'CertificateProvisionFailed',
    `Certificate ${certificateName} failed to be provisioned.`,
    now,
  );
}

/** Plain HTTP is served while the certificate is not ready: True `HTTPDowngrade`. */
export function markHTTPDowngrade(status: DomainMappingStatus, certificateName: string, now: string): void {
  domainMappingConditionSet.markTrueWithReason(
    status,
    DomainMappingConditionCertificateProvisioned,
    'HTTPDowngrade',
    `Certificate ${certificateName} is not ready downgrade HTTP.`,
    now,
  );
}

export function markCertificateNotRequired(status: DomainMappingStatus, now: string): void {
  domainMappingConditionSet.markTrueWithReason(
    status,
    DomainMappingConditionCertificateProvisioned,
    'CertificateExternallyProvided',
    TLSCertificateProvidedExternally,
    now,
  );
}

export function markIngressNotConfigured(status: DomainMappingStatus, now: string): void {
  domainMappingConditionSet.markUnknown(
    status,
    DomainMappingConditionIngressReady,
    'IngressNotConfigured',
    'Ingress has not yet been reconciled.',
    now,
  );
}

export function markDomainClaimed(status: DomainMappingStatus, now: string): void {
  domainMappingConditionSet.markTrue(status, DomainMappingConditionDomainClaimed, now);
}

/** The claim is missing (and autocreate is off) or belongs to another namespace. */
export function markDomainClaimNotOwned(status: DomainMappingStatus, now: string): void {
  domainMappingConditionSet.markFalse(
    status,
    DomainMappingConditionDomainClaimed,
    DomainAlreadyClaimedReason,
    'The domain name is already in use by another DomainMapping',
    now,
  );
}

/** Creating the claim failed (upstream `MarkDomainClaimFailed`). */
export function markDomainClaimFailed(status: DomainMappingStatus, message: string, now: string): void {
  domainMappingConditionSet.markFalse(status, DomainMappingConditionDomainClaimed, 'DomainClaimFailed', message, now);
}

export function markReferenceResolved(status: DomainMappingStatus, now: string): void {
  domainMappingConditionSet.markTrue(status, DomainMappingConditionReferenceResolved, now);
}

export function markReferenceNotResolved(status: DomainMappingStatus, message: string, now: string): void {
  domainMappingConditionSet.markFalse(status, DomainMappingConditionReferenceResolved, ResolveFailedReason, message, now);
}

/**
 * The mapping breaks a rule the admission webhook enforces (it was stored while the webhook was bypassed): Ready
 * False `InvalidSpec` with the webhook's message. Not a dependent: no dependent says it, so Ready is set directly.
 */
export function markInvalidSpec(status: DomainMappingStatus, message: string, now: string): void {
  domainMappingConditionSet.markFalse(status, DomainMappingConditionReady, InvalidSpecReason, message, now);
}

/** The KIngress's Ready, as IngressReady (upstream `PropagateIngressStatus`). */
export function propagateIngressStatus(status: DomainMappingStatus, ingress: IngressStatus | undefined, now: string): void {
  const ready = ingress?.conditions?.find((c) => c.type === ConditionReady);
  if (!ready) return markIngressNotConfigured(status, now);
  switch (ready.status) {
    case 'True':
      return domainMappingConditionSet.markTrue(status, DomainMappingConditionIngressReady, now);
    case 'False':
      return domainMappingConditionSet.markFalse(status, DomainMappingConditionIngressReady, ready.reason ?? '', ready.message ?? '', now);
    default:
      return domainMappingConditionSet.markUnknown(status, DomainMappingConditionIngressReady, ready.reason ?? '', ready.message ?? '', now);
  }
}
