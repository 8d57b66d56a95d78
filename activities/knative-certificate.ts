// Applying one Knative Certificate for its owner (serving pkg/reconciler/accessor/networking/certificate.go
// `ReconcileCertificate`): created when missing, its spec, labels and annotations brought back when they differ, refused
// when another object controls the name. Events as upstream: Created, Updated, CreationFailed, UpdateFailed. A
// Certificate of cert-manager's class is then programmed in the same step (ADR 0005, as the Route programs a KIngress
// of Tidal's class): its cert-manager Certificate applied and its status mirrored (serving pkg/reconciler/certificate).
import { type Certificate } from '../api/certificate.js';
import { CertManagerCertificateClassName } from '../api/config/network.js';
import { Resources } from '../api/kinds.js';
import { isControlledBy, type KubeObject } from '../api/meta.js';
import { NetworkingAnnotations } from '../api/networking.js';
import {
  CertManagerConfigName,
  certificateStatusFromCertManager,
  makeCertManagerCertificate,
  parseCertManagerConfig,
  type CertManagerCertificate,
} from '../resources/certmanager.js';
import { applyIfChanged, ownedWhole, type RecordLater } from './apply.js';
import type { KubeClient } from '../kube/client.js';
import { nowOf, type ActivityDeps } from './deps.js';
import { writeStatus } from './status.js';

export type CertificateResult = { outcome: 'ok'; cert: Certificate } | { outcome: 'notOwned' } | { outcome: 'failed'; message: string };

/** What programming a Certificate of cert-manager's class needs besides the API: the system namespace and the clock. */
export interface CertificateContext {
  kube: KubeClient;
  systemNamespace: string;
  now: () => Date;
}

export function certificateContext(deps: ActivityDeps): CertificateContext {
  return { kube: deps.kube, systemNamespace: deps.config.systemNamespace, now: () => new Date(nowOf(deps)) };
}

export async function reconcileCertificate(
  ctx: CertificateContext,
  owner: KubeObject,
  desired: Certificate,
  record: RecordLater,
): Promise<CertificateResult> {
  const { kube } = ctx;
  const ns = desired.metadata.namespace ?? '';
  const name = desired.metadata.name ?? '';
  const live = await kube.get<Certificate>(Resources.Certificate, ns, name);
  if (live && !isControlledBy(live, owner.metadata.uid)) return { outcome: 'notOwned' };
  let cert: Certificate;
  try {
    const applied = await applyIfChanged(kube, Resources.Certificate, live, desired, ownedWhole());
    if (applied.action === 'created') record(owner, 'Normal', 'Created', `Created Certificate ${ns}/${name}`);
    if (applied.action === 'updated') record(owner, 'Normal', 'Updated', `Updated Spec for Certificate ${ns}/${name}`);
    // An update keeps the status the Certificate's controller wrote: the apply's answer carries it.
    cert = applied.obj;
  } catch (err) {
    const message = `${live ? 'Failed to update' : 'Failed to create'} Certificate ${ns}/${name}: ${(err as Error).message}`;
    record(owner, 'Warning', live ? 'UpdateFailed' : 'CreationFailed', message);
    return { outcome: 'failed', message };
  }
  if (cert.metadata.annotations?.[NetworkingAnnotations.certificateClass] === CertManagerCertificateClassName)
    cert = await programCertManager(ctx, cert, record);
  return { outcome: 'ok', cert };
}

/**
 * A Knative Certificate of cert-manager's class: its cert-manager Certificate (issuer from config-certmanager) applied,
 * then its status from that one's; returns it with the status written.
 */
async function programCertManager(ctx: CertificateContext, kcert: Certificate, record: RecordLater): Promise<Certificate> {
  const { kube } = ctx;
  const ns = kcert.metadata.namespace ?? '';
  const name = kcert.metadata.name ?? '';
  const now = ctx.now();
  const at = now.toISOString().replace(/\.\d{3}Z$/, 'Z');
  const listed = await kube.list<KubeObject & { data?: Record<string, string> }>(Resources.ConfigMap, ctx.systemNamespace, {
    fieldSelector: `metadata.name=${CertManagerConfigName}`,
  });
  const failed = (reason: string, message: string): CertificateStatusWrite => ({
    observedGeneration: kcert.metadata.generation ?? 0,
    conditions: [{ type: 'Ready', status: 'False', reason, message, lastTransitionTime: at }],
  });
  let status: CertificateStatusWrite;
  let desired: ReturnType<typeof makeCertManagerCertificate> | undefined;
  try {
    desired = makeCertManagerCertificate(parseCertManagerConfig(listed.items[0]?.data ?? {}), kcert);
  } catch (err) {
    desired = { reason: 'InvalidConfig', message: (err as Error).message };
  }
  if ('reason' in desired) {
    status = failed(desired.reason, desired.message);
  } else {
    const live = await kube.get<CertManagerCertificate>(Resources.CertManagerCertificate, ns, name);
    if (live && !isControlledBy(live, kcert.metadata.uid)) {
      status = failed('NotOwned', `There is an existing CertManagerCertificate ${JSON.stringify(name)} that we do not own.`);
    } else {
      const applied = await applyIfChanged(kube, Resources.CertManagerCertificate, live, desired, ownedWhole());
      if (applied.action === 'created') record(kcert, 'Normal', 'Created', `Created Cert-Manager Certificate ${ns}/${name}`);
      if (applied.action === 'updated') record(kcert, 'Normal', 'Updated', `Updated Spec for Cert-Manager Certificate ${ns}/${name}`);
      status = certificateStatusFromCertManager(kcert, applied.obj, now.getTime(), at);
    }
  }
  const written = await writeStatus(kube, Resources.Certificate, kcert, status);
  return { ...kcert, metadata: { ...kcert.metadata, ...(written ? { resourceVersion: written } : {}) }, status };
}

type CertificateStatusWrite = NonNullable<Certificate['status']>;
