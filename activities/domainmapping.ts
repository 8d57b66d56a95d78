// The DomainMapping pass (upstream pkg/reconciler/domainmapping/reconciler.go): url/address, the TLS
// condition, the ClusterDomainClaim (created when config-network autocreates claims), `spec.ref` resolved to a
// Kubernetes Service of the mapping's namespace, the KIngress that rewrites the mapping's host to it — programmed in
// the same step when its class is Tidal's (ADR 0005, as a Route's) — and the status. The finalizer deletes an
// autocreated claim of the mapping's own namespace. A mapping stored bypassing the admission webhook is checked by the
// same rules; what the webhook would refuse shows on its status.
import { beginReconcile, cloneJson, endReconcile } from '../api/conditions.js';
import { DomainMappingFinalizer, type ClusterDomainClaim, type DomainMapping, type DomainMappingStatus } from '../api/domainmapping.js';
import { formatFieldErrors } from '../api/field-error.js';
import { Resources, type ResourceType } from '../api/kinds.js';
import {
  DomainMappingConditionIngressReady,
  domainMappingConditionSet,
  markCertificateNotRequired,
  markDomainClaimed,
  markDomainClaimFailed,
  markDomainClaimNotOwned,
  markIngressNotConfigured,
  markInvalidSpec,
  markReferenceNotResolved,
  markReferenceResolved,
  markTLSNotEnabled,
  markCertificateNotOwned,
  markCertificateNotReady,
  markCertificateProvisionFailed,
  markCertificateReady,
  markHTTPDowngrade,
  propagateIngressStatus,
} from '../api/lifecycle/domainmapping.js';
import { isControlledBy, type KubeObject, type ObjectKey } from '../api/meta.js';
import { isCertificateReady } from '../api/certificate.js';
import { isIstioIngress, type Ingress } from '../api/networking.js';
import { externalDomainTLSEnabled, makeDomainMappingCertificate, makeIngressTLS } from '../resources/certificate.js';
import type { Addressable } from '../api/serving.js';
import { setDomainMappingDefaults, validateDomainMapping } from '../api/validation-domainmapping.js';
import {
  addressNotSetMessage,
  checkResolvedURL,
  claimNotOwnedMessage,
  domainMappingHTTPOption,
  domainMappingIngressClass,
  domainMappingTLS,
  isKubernetesServiceRef,
  kubernetesServiceURL,
  makeDomainClaim,
  makeDomainMappingIngress,
  notFoundMessage,
  refType,
  type ResolvedTarget,
} from '../resources/domainmapping.js';
import { apiErrorMessage, applyReportingFailures, ownedWhole, isPermanentApiError } from './apply.js';
import { nowOf, type ActivityDeps } from './deps.js';
import { programIngress } from './ingress.js';
import { certificateContext, reconcileCertificate } from './knative-certificate.js';
import { isConflict } from '../kube/errors.js';
import { statusOutcome, writeStatus, type StatusOutcome } from './status.js';

/** What the claim step found or did. */
export type ClaimAction = 'created' | 'owned' | 'notOwned' | 'missing' | 'failed' | 'skipped';

export type DomainMappingOutcome =
  | { outcome: 'gone'; claimDeleted?: boolean }
  | (StatusOutcome & {
      url?: string;
      claim: ClaimAction;
      /** The target's host, when `spec.ref` resolved. */
      target?: string;
      ingress: 'created' | 'updated' | 'unchanged' | 'notOwned' | 'none';
      /** `spec.ref` names a kind the watcher does not follow: nothing announces its changes (pass again later). */
      unwatchedRef?: boolean;
    });

/** Kinds whose changes the watcher delivers to the mappings that reference them (watcher/domainmapping-index.ts). */
const watchedRefKinds = new Set(['serving.knative.dev/Service', 'serving.knative.dev/Route']);

export function createDomainMappingActivities(deps: ActivityDeps) {
  const { kube, events, config } = deps;

  /** Upstream's FinalizeKind: delete the claim only when claims are autocreated and it is this namespace's. */
  async function finalize(dm: DomainMapping): Promise<boolean> {
    if (!(dm.metadata.finalizers ?? []).includes(DomainMappingFinalizer)) return false;
    let deleted = false;
    if (config.networkConfig().autocreateClusterDomainClaims) {
      const claim = await kube.get<ClusterDomainClaim>(Resources.ClusterDomainClaim, '', dm.metadata.name ?? '');
      if (claim && claim.spec?.namespace === dm.metadata.namespace)
        deleted = await kube.delete(Resources.ClusterDomainClaim, '', claim.metadata.name ?? '');
    }
    await kube.mergePatch(Resources.DomainMapping, dm.metadata.namespace ?? '', dm.metadata.name ?? '', {
      metadata: { finalizers: (dm.metadata.finalizers ?? []).filter((f) => f !== DomainMappingFinalizer) },
    });
    return deleted;
  }

  /** The claim for the mapping's name (upstream `reconcileDomainClaim`): the pass goes on only when it is the mapping's. */
  async function reconcileClaim(dm: DomainMapping, status: DomainMappingStatus, now: string): Promise<ClaimAction> {
    const name = dm.metadata.name ?? '';
    let claim = await kube.get<ClusterDomainClaim>(Resources.ClusterDomainClaim, '', name);
    let action: ClaimAction = 'owned';
    if (!claim) {
      if (!config.networkConfig().autocreateClusterDomainClaims) {
        markDomainClaimNotOwned(status, now);
        return 'missing';
      }
      try {
        claim = await kube.create(Resources.ClusterDomainClaim, makeDomainClaim(dm));
        action = 'created';
      } catch (err) {
        // Someone claimed it meanwhile: judge the claim that is there.
        if (!isConflict(err)) {
          if (!isPermanentApiError(err)) throw err;
          markDomainClaimFailed(status, `failed to create ClusterDomainClaim: ${apiErrorMessage(err)}`, now);
          return 'failed';
        }
        claim = await kube.get<ClusterDomainClaim>(Resources.ClusterDomainClaim, '', name);
        if (!claim) throw err;
      }
    }
    if (claim.spec?.namespace !== dm.metadata.namespace) {
      markDomainClaimNotOwned(status, now);
      return 'notOwned';
    }
    markDomainClaimed(status, now);
    return action;
  }

  /** `spec.ref` → the URL the Addressable publishes (upstream's URI resolver), or why it cannot be had. */
  async function resolveURL(dm: DomainMapping): Promise<{ ok: true; url: string } | { ok: false; message: string }> {
    const ref = dm.spec.ref;
    if (isKubernetesServiceRef(ref)) return { ok: true, url: kubernetesServiceURL(ref) };
    const t = refType(ref);
    const type: ResourceType = { group: t.group, version: t.version, kind: t.kind, plural: t.plural, namespaced: true };
    let obj: (KubeObject & { status?: { address?: Addressable } }) | undefined;
    try {
      obj = await kube.get(type, ref.namespace ?? '', ref.name ?? '');
    } catch (err) {
      // An unknown kind or version is the API server's 404 too; anything permanent is the reference's fault.
      if (!isPermanentApiError(err)) throw err;
      return { ok: false, message: `failed to get object ${ref.namespace ?? ''}/${ref.name ?? ''}: ${apiErrorMessage(err)}` };
    }
    if (!obj) return { ok: false, message: notFoundMessage(t, ref.namespace ?? '', ref.name ?? '') };
    const url = obj.status?.address?.url;
    if (!url) return { ok: false, message: addressNotSetMessage(ref) };
    return { ok: true, url };
  }

  return {
    /** One DomainMapping pass; `gone` once it is deleted (after its finalizer ran). */
    async reconcileDomainMapping(key: ObjectKey): Promise<DomainMappingOutcome> {
      const raw = await kube.get<DomainMapping>(Resources.DomainMapping, key.namespace, key.name);
      if (!raw) return { outcome: 'gone' };
      if (raw.metadata.deletionTimestamp) {
        const claimDeleted = await finalize(raw);
        return { outcome: 'gone', ...(claimDeleted ? { claimDeleted } : {}) };
      }
      if (!(raw.metadata.finalizers ?? []).includes(DomainMappingFinalizer)) {
        await kube.mergePatch(Resources.DomainMapping, key.namespace, key.name, {
          metadata: { finalizers: [...(raw.metadata.finalizers ?? []), DomainMappingFinalizer] },
        });
      }
      const dm = setDomainMappingDefaults(raw);
      const net = config.networkConfig();
      const now = nowOf(deps);
      const copy = cloneJson(dm);
      const before = beginReconcile(copy, domainMappingConditionSet, now);
      const status = copy.status as DomainMappingStatus;
      const { record, recorded } = recorder();
      // Defensively not Ready for a new generation until its Ingress is reconciled (upstream).
      if ((raw.status?.observedGeneration ?? 0) !== (raw.metadata.generation ?? 0)) markIngressNotConfigured(status, now);

      let scheme = net.defaultExternalScheme;
      let claim: ClaimAction = 'skipped';
      let target: ResolvedTarget | undefined;
      let ingressAction: 'created' | 'updated' | 'unchanged' | 'notOwned' | 'none' = 'none';
      let certificateError: string | undefined;
      const errs = validateDomainMapping(dm);
      const metaErrs = errs.filter((e) => e.path.startsWith('metadata.'));
      const refErrs = errs.filter((e) => !e.path.startsWith('metadata.'));
      if (metaErrs.length > 0) {
        // The webhook would have refused it: nothing is claimed or routed for a name that is not a valid domain.
        markInvalidSpec(status, formatFieldErrors(metaErrs), now);
      } else {
        const certificates = !dm.spec.tls && externalDomainTLSEnabled(dm.metadata.annotations, net.externalDomainTls);
        if (dm.spec.tls) {
          markCertificateNotRequired(status, now);
          scheme = 'https';
        } else if (!certificates) {
          markTLSNotEnabled(status, now);
        }
        claim = await reconcileClaim(dm, status, now);
        if (claim === 'missing' || claim === 'notOwned') record('Warning', 'InternalError', claimNotOwnedMessage(dm));
        let tls = domainMappingTLS(dm);
        if (certificates && claim !== 'missing' && claim !== 'notOwned' && claim !== 'failed') {
          // external-domain-tls: the mapping's own Certificate (upstream `tls`), before its target is resolved.
          const desired = makeDomainMappingCertificate(dm, net.certificateClass);
          const certName = desired.metadata.name ?? '';
          const res = await reconcileCertificate(certificateContext(deps), dm, desired, (_o, type, reason, message) => record(type, reason, message));
          if (res.outcome === 'notOwned') {
            markCertificateNotOwned(status, certName, now);
            certificateError = `domain mapping "${key.name}" does not own Certificate "${certName}"`;
          } else if (res.outcome === 'failed') {
            markCertificateProvisionFailed(status, certName, now);
            certificateError = res.message;
          } else {
            if (desired.spec.dnsNames.includes(key.name)) scheme = 'https';
            if (isCertificateReady(res.cert)) {
              markCertificateReady(status, now);
              tls = [makeIngressTLS(res.cert, desired.spec.dnsNames)];
            } else if (net.httpProtocol === 'enabled') {
              scheme = 'http';
              markHTTPDowngrade(status, res.cert.metadata.name ?? '', now);
            } else {
              markCertificateNotReady(status, res.cert.metadata.name ?? '', now);
            }
          }
        }
        if (claim !== 'missing' && claim !== 'notOwned' && claim !== 'failed' && certificateError === undefined) {
          if (refErrs.length > 0) {
            target = { ok: false, message: formatFieldErrors(refErrs) };
          } else {
            const resolved = await resolveURL(dm);
            target = resolved.ok ? checkResolvedURL(resolved.url, key.namespace) : resolved;
          }
          if (!target.ok) {
            markReferenceNotResolved(status, target.message, now);
            record('Warning', 'InternalError', `resolving reference: ${target.message}`);
          } else {
            markReferenceResolved(status, now);
            const ingressClass = domainMappingIngressClass(dm, net.ingressClass);
            const desired = makeDomainMappingIngress(dm, target, ingressClass, {
              httpOption: domainMappingHTTPOption(net.httpProtocol),
              tls,
            });
            const existing = await kube.get<Ingress>(Resources.KIngress, key.namespace, desired.metadata.name ?? '');
            if (existing && !isControlledBy(existing, dm.metadata.uid)) {
              ingressAction = 'notOwned';
              domainMappingConditionSet.markFalse(
                status,
                DomainMappingConditionIngressReady,
                'NotOwned',
                `There is an existing Ingress ${JSON.stringify(desired.metadata.name ?? '')} that we do not own.`,
                now,
              );
            } else {
              const failure = {
                obj: raw,
                type: Resources.DomainMapping,
                set: domainMappingConditionSet,
                condition: DomainMappingConditionIngressReady,
              };
              const applied = await applyReportingFailures(deps, failure, Resources.KIngress, existing, desired, now, ownedWhole());
              ingressAction = applied.action;
              if (applied.action === 'created') record('Normal', 'Created', `Created Ingress ${JSON.stringify(desired.metadata.name ?? '')}`);
              // Tidal's class is programmed here, in the same step (ADR 0005): the mapping sees it Ready at once.
              const ingress = isIstioIngress(applied.obj) ? (await programIngress(deps, applied.obj)).ingress : applied.obj;
              if ((ingress.metadata.generation ?? 0) !== (ingress.status?.observedGeneration ?? -1)) markIngressNotConfigured(status, now);
              else propagateIngressStatus(status, ingress.status, now);
            }
          }
        }
      }
      const url = `${scheme}://${key.name}`;
      status.url = url;
      status.address = { url };
      endReconcile(copy, before, now);
      const written = await writeStatus(kube, Resources.DomainMapping, raw, copy.status);
      if (written !== undefined) for (const e of recorded) await events.record(raw, e.type, e.reason, e.message);
      deps.log.info(
        {
          kind: 'DomainMapping',
          namespace: key.namespace,
          name: key.name,
          claim,
          ingress: ingressAction,
          ready: copy.status?.conditions?.find((c) => c.type === 'Ready')?.status,
        },
        'domain mapping reconciled',
      );
      // As upstream, a Certificate that is not the mapping's or cannot be written fails the pass (retried with backoff).
      if (certificateError !== undefined) throw new Error(certificateError);
      const t = refType(dm.spec.ref);
      return {
        ...statusOutcome(written, copy.status),
        url,
        claim,
        ...(target?.ok ? { target: target.host } : {}),
        ingress: ingressAction,
        ...(!isKubernetesServiceRef(dm.spec.ref) && !watchedRefKinds.has(`${t.group}/${t.kind}`) ? { unwatchedRef: true } : {}),
      };
    },
  };
}

/** Events of a pass, recorded once its status write shows something changed (a repeat pass records nothing new). */
function recorder(): {
  record: (type: 'Normal' | 'Warning', reason: string, message: string) => void;
  recorded: { type: 'Normal' | 'Warning'; reason: string; message: string }[];
} {
  const recorded: { type: 'Normal' | 'Warning'; reason: string; message: string }[] = [];
  return { record: (type, reason, message) => void recorded.push({ type, reason, message }), recorded };
}
