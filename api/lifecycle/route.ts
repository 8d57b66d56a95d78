// Route status transitions (knative/serving pkg/apis/serving/v1/route_lifecycle.go; RevisionNotOwned from
// knative/serving#16294).
// Every function mutates the status it is given; `now` is an RFC3339 timestamp.
import { ConditionReady, conditionSet } from '../conditions.js';
import type { Ingress } from '../networking.js';
import type { Route, RouteStatusFields, Status } from '../serving.js';

export const RouteConditionReady = ConditionReady;
/** Every traffic target resolved to a ready Revision. */
export const RouteConditionAllTrafficAssigned = 'AllTrafficAssigned';
/** The KIngress is programmed and ready. */
export const RouteConditionIngressReady = 'IngressReady';
/** TLS certificates are ready (or TLS is off). */
export const RouteConditionCertificateProvisioned = 'CertificateProvisioned';

export type RouteStatus = Status & RouteStatusFields;

/** Ready = AllTrafficAssigned ∧ IngressReady ∧ CertificateProvisioned. */
export const routeConditionSet = conditionSet(
  RouteConditionReady,
  RouteConditionAllTrafficAssigned,
  RouteConditionIngressReady,
  RouteConditionCertificateProvisioned,
);

/** CertificateProvisioned message when external-domain-tls is off (upstream `ExternalDomainTLSNotEnabledMessage`). */
export const ExternalDomainTLSNotEnabledMessage = 'external-domain-tls is not enabled';
/** CertificateProvisioned message for a cluster-local-only Route (upstream `TLSNotEnabledForClusterLocalMessage`). */
export const TLSNotEnabledForClusterLocalMessage = 'TLS is not enabled for cluster-local';

/** Go's %q for the names used here (DNS names): a double-quoted, escaped string. */
const quote = (s: string): string => JSON.stringify(s);

export function initializeRouteConditions(status: RouteStatus, now: string): void {
  routeConditionSet.initialize(status, now);
}

/** Ready is True and the status is of the current generation (upstream `Route.IsReady`). */
export function isRouteReady(route: Pick<Route, 'metadata' | 'status'>): boolean {
  return (route.status?.observedGeneration ?? 0) === (route.metadata.generation ?? 0) && routeConditionSet.isHappy(route.status);
}

/** Ready is False and the status is of the current generation (upstream `Route.IsFailed`). */
export function isRouteFailed(route: Pick<Route, 'metadata' | 'status'>): boolean {
  return (
    (route.status?.observedGeneration ?? 0) === (route.metadata.generation ?? 0) &&
    routeConditionSet.get(route.status, RouteConditionReady)?.status === 'False'
  );
}

// --- AllTrafficAssigned (Knative's traffic.go) ---

export function markTrafficAssigned(status: RouteStatus, now: string): void {
  routeConditionSet.markTrue(status, RouteConditionAllTrafficAssigned, now);
}

/** A non-target error while building the traffic: AllTrafficAssigned Unknown, reason `Unknown`. */
export function markUnknownTrafficError(status: RouteStatus, message: string, now: string): void {
  routeConditionSet.markUnknown(status, RouteConditionAllTrafficAssigned, 'Unknown', message, now);
}

/** AllTrafficAssigned False with the caller's reason (upstream uses `ErrorConfig` for a domain template error). */
export function markRevisionTargetTrafficError(status: RouteStatus, reason: string, message: string, now: string): void {
  routeConditionSet.markFalse(status, RouteConditionAllTrafficAssigned, reason, message, now);
}

/** Upstream's reason for a Route whose host names cannot be made (route.go `errorConfigMsg`). */
export const ErrorConfigReason = 'ErrorConfig';

/**
 * A domain-template or tag-template error (Knative's `ErrDomainName`): AllTrafficAssigned False `ErrorConfig` with
 * the error as message, as route.go marks it; Ready follows. Nothing is programmed until the config or the Route
 * changes.
 */
export function markDomainNameError(status: RouteStatus, message: string, now: string): void {
  markRevisionTargetTrafficError(status, ErrorConfigReason, message, now);
}

/** The Configuration has no latestReadyRevisionName yet: Unknown `RevisionMissing`. */
export function markConfigurationNotReady(status: RouteStatus, name: string, now: string): void {
  routeConditionSet.markUnknown(
    status,
    RouteConditionAllTrafficAssigned,
    'RevisionMissing',
    `Configuration ${quote(name)} is waiting for a Revision to become ready.`,
    now,
  );
}

/** The Configuration failed without ever having a ready Revision: False `RevisionMissing`. */
export function markConfigurationFailed(status: RouteStatus, name: string, now: string): void {
  routeConditionSet.markFalse(
    status,
    RouteConditionAllTrafficAssigned,
    'RevisionMissing',
    `Configuration ${quote(name)} does not have any ready Revision.`,
    now,
  );
}

/** A named Revision is not ready yet: Unknown `RevisionMissing`. */
export function markRevisionNotReady(status: RouteStatus, name: string, now: string): void {
  routeConditionSet.markUnknown(status, RouteConditionAllTrafficAssigned, 'RevisionMissing', `Revision ${quote(name)} is not yet ready.`, now);
}

/** A named Revision failed: False `RevisionMissing`. */
export function markRevisionFailed(status: RouteStatus, name: string, now: string): void {
  routeConditionSet.markFalse(status, RouteConditionAllTrafficAssigned, 'RevisionMissing', `Revision ${quote(name)} failed to become ready.`, now);
}

/** A referenced Configuration/Revision does not exist: False `<Kind>Missing`. */
export function markMissingTrafficTarget(status: RouteStatus, kind: 'Configuration' | 'Revision', name: string, now: string): void {
  routeConditionSet.markFalse(
    status,
    RouteConditionAllTrafficAssigned,
    `${kind}Missing`,
    `${kind} ${quote(name)} referenced in traffic not found.`,
    now,
  );
}

/**
 * A Service-owned Route names a Revision of another Service (or of none): False `RevisionNotOwned`.
 * `revisionService` is the Revision's `serving.knative.dev/service` label ('' or undefined when it has none).
 */
export function markRevisionNotOwned(
  status: RouteStatus,
  revisionName: string,
  revisionService: string | undefined,
  routeService: string,
  now: string,
): void {
  const message = revisionService
    ? `Revision ${quote(revisionName)} belongs to Service ${quote(revisionService)}, not Service ${quote(routeService)}.`
    : `Revision ${quote(revisionName)} does not belong to Service ${quote(routeService)}.`;
  routeConditionSet.markFalse(status, RouteConditionAllTrafficAssigned, 'RevisionNotOwned', message, now);
}

/**
 * A configuration's traffic is held on an older Revision than the one the spec names (Tidal's rollout abort or
 * automatic rollback; `RolloutHold` of resources/rollout.ts): AllTrafficAssigned False with the hold's reason
 * (`RolloutAborted`, `RolloutRolledBack`) and message. False as Knative's other "traffic is not where the spec says"
 * reasons (RevisionMissing of a failed Revision): the Route stays Ready False until someone acts (removes the abort,
 * fixes the Revision), so its run may end idle (ADR 0006) and the next change starts one.
 */
export function markRolloutHeld(status: RouteStatus, reason: string, message: string, now: string): void {
  routeConditionSet.markFalse(status, RouteConditionAllTrafficAssigned, reason, message, now);
}

// --- IngressReady (Knative's Route reconciler) ---

/** The placeholder Service of that name is not ours: IngressReady False `NotOwned`. */
export function markServiceNotOwned(status: RouteStatus, name: string, now: string): void {
  routeConditionSet.markFalse(
    status,
    RouteConditionIngressReady,
    'NotOwned',
    `There is an existing placeholder Service ${quote(name)} that we do not own.`,
    now,
  );
}

/** The placeholder Endpoints of that name are not ours: IngressReady False `NotOwned`. */
export function markEndpointNotOwned(status: RouteStatus, name: string, now: string): void {
  routeConditionSet.markFalse(
    status,
    RouteConditionIngressReady,
    'NotOwned',
    `There is an existing placeholder Endpoint ${quote(name)} that we do not own.`,
    now,
  );
}

/** A gradual rollout is running: IngressReady Unknown `RolloutInProgress`. */
export function markIngressRolloutInProgress(status: RouteStatus, now: string): void {
  routeConditionSet.markUnknown(
    status,
    RouteConditionIngressReady,
    'RolloutInProgress',
    'A gradual rollout of the latest revision(s) is in progress.',
    now,
  );
}

/**
 * A gradual rollout is paused by `tidal.dev/rollout: pause` (Tidal's, docs/gradual-rollouts.md): IngressReady Unknown
 * `RolloutPaused`. Unknown as `RolloutInProgress`: the split is neither failed nor where the spec says.
 */
export function markIngressRolloutPaused(status: RouteStatus, now: string): void {
  routeConditionSet.markUnknown(
    status,
    RouteConditionIngressReady,
    'RolloutPaused',
    'A gradual rollout of the latest revision(s) is paused by the tidal.dev/rollout annotation.',
    now,
  );
}

/** The Ingress has not caught up yet: IngressReady Unknown `IngressNotConfigured`. */
export function markIngressNotConfigured(status: RouteStatus, now: string): void {
  routeConditionSet.markUnknown(status, RouteConditionIngressReady, 'IngressNotConfigured', 'Ingress has not yet been reconciled.', now);
}

/**
 * What route.go does with the reconciled KIngress, combined with upstream `PropagateIngressStatus`:
 * - the Ingress has not observed its latest generation → IngressReady Unknown `IngressNotConfigured`;
 * - it has, but has no Ready condition → the same;
 * - otherwise its Ready is mirrored into IngressReady with the same reason and message (so an Ingress still waiting
 *   for its load balancer shows `Uninitialized`, a failed one False).
 * Upstream skips the propagation while a gradual rollout is in progress (the caller then calls
 * `markIngressRolloutInProgress` instead).
 */
export function propagateIngressStatus(status: RouteStatus, ingress: Pick<Ingress, 'metadata' | 'status'>, now: string): void {
  if ((ingress.metadata.generation ?? 0) !== (ingress.status?.observedGeneration ?? 0)) {
    markIngressNotConfigured(status, now);
    return;
  }
  const ready = ingress.status?.conditions?.find((c) => c.type === ConditionReady);
  if (!ready) {
    markIngressNotConfigured(status, now);
    return;
  }
  switch (ready.status) {
    case 'True':
      routeConditionSet.markTrue(status, RouteConditionIngressReady, now);
      break;
    case 'False':
      routeConditionSet.markFalse(status, RouteConditionIngressReady, ready.reason ?? '', ready.message ?? '', now);
      break;
    case 'Unknown':
      routeConditionSet.markUnknown(status, RouteConditionIngressReady, ready.reason ?? '', ready.message ?? '', now);
      break;
  }
}

// --- CertificateProvisioned (Knative's Route certificates) ---

/** TLS is off for this Route: CertificateProvisioned True `TLSNotEnabled` with the given message. */
export function markTLSNotEnabled(status: RouteStatus, message: string, now: string): void {
  routeConditionSet.markTrueWithReason(status, RouteConditionCertificateProvisioned, 'TLSNotEnabled', message, now);
}

/**
 * external-domain-tls is disabled (hakn's default): CertificateProvisioned True `TLSNotEnabled`
 * "external-domain-tls is not enabled".
 */
export function markCertificateNotEnabled(status: RouteStatus, now: string): void {
  markTLSNotEnabled(status, ExternalDomainTLSNotEnabledMessage, now);
}

/** Plain HTTP is served while the certificate is not ready: True `HTTPDowngrade`. */
export function markHTTPDowngrade(status: RouteStatus, certificateName: string, now: string): void {
  routeConditionSet.markTrueWithReason(
    status,
    RouteConditionCertificateProvisioned,
    'HTTPDowngrade',
    `Certificate ${certificateName} is not ready downgrade HTTP.`,
    now,
  );
}

export function markCertificateReady(status: RouteStatus, now: string): void {
  routeConditionSet.markTrue(status, RouteConditionCertificateProvisioned, now);
}

/** `certificateReason` is the reason of the Certificate's Ready condition ('' if none). */
export function markCertificateNotReady(status: RouteStatus, certificateName: string, certificateReason: string, now: string): void {
  routeConditionSet.markUnknown(
    status,
    RouteConditionCertificateProvisioned,
    'CertificateNotReady',
    `Certificate ${certificateName} is not ready: ${certificateReason}`,
    now,
  );
}

/** `certificateReason` is the reason of the Certificate's Ready condition ('' if none). */
export function markCertificateProvisionFailed(status: RouteStatus, certificateName: string, certificateReason: string, now: string): void {
  routeConditionSet.markFalse(
    status,
    RouteConditionCertificateProvisioned,
    'CertificateProvisionFailed',
    `Certificate ${certificateName} fails to be provisioned: ${certificateReason}`,
    now,
  );
}

export function markCertificateNotOwned(status: RouteStatus, certificateName: string, now: string): void {
  routeConditionSet.markFalse(
    status,
    RouteConditionCertificateProvisioned,
    'CertificateNotOwned',
    `There is an existing certificate ${certificateName} that we don't own.`,
    now,
  );
}
