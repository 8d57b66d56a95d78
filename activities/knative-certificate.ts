// Applying one Knative Certificate for its owner (serving pkg/reconciler/accessor/networking/certificate.go
// `ReconcileCertificate`): created when missing, its spec, labels and annotations brought back when they differ, refused
// when another object controls the name. Events as upstream: Created, Updated, CreationFailed, UpdateFailed.
import type { Certificate } from '../api/certificate.js';
import { Resources } from '../api/kinds.js';
import { isControlledBy, type KubeObject } from '../api/meta.js';
import { applyIfChanged, exactSpecInSync, type RecordLater } from './apply.js';
import type { KubeClient } from './kube/client.js';

export type CertificateResult = { outcome: 'ok'; cert: Certificate } | { outcome: 'notOwned' } | { outcome: 'failed'; message: string };

export async function reconcileCertificate(
  kube: KubeClient,
  owner: KubeObject,
  desired: Certificate,
  record: RecordLater,
): Promise<CertificateResult> {
  const ns = desired.metadata.namespace ?? '';
  const name = desired.metadata.name ?? '';
  const live = await kube.get<Certificate>(Resources.Certificate, ns, name);
  if (live && !isControlledBy(live, owner.metadata.uid)) return { outcome: 'notOwned' };
  try {
    const applied = await applyIfChanged(kube, Resources.Certificate, live, desired, { inSync: exactSpecInSync() });
    if (applied.action === 'created') record(owner, 'Normal', 'Created', `Created Certificate ${ns}/${name}`);
    if (applied.action === 'updated') record(owner, 'Normal', 'Updated', `Updated Spec for Certificate ${ns}/${name}`);
    // An update keeps the status the Certificate's controller wrote: the apply's answer carries it.
    return { outcome: 'ok', cert: applied.obj };
  } catch (err) {
    const message = `${live ? 'Failed to update' : 'Failed to create'} Certificate ${ns}/${name}: ${(err as Error).message}`;
    record(owner, 'Warning', live ? 'UpdateFailed' : 'CreationFailed', message);
    return { outcome: 'failed', message };
  }
}
