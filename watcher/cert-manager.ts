// Whether the API server serves cert-manager's Certificates (cert-manager.io/v1): the watcher follows them only then,
// so a cluster without cert-manager costs no informer that can never list.
import { Resources } from '../api/kinds.js';
import type { KubeClient } from '../kube/client.js';
import { KubeApiError } from '../kube/errors.js';

export async function servesCertManager(kube: KubeClient): Promise<boolean> {
  try {
    await kube.list(Resources.CertManagerCertificate, undefined, { labelSelector: 'networking.knative.dev/certificate-type' });
    return true;
  } catch (err) {
    // Not served (404), or not ours to read (403): nothing to follow.
    if (err instanceof KubeApiError && (err.code === 404 || err.code === 403)) return false;
    throw err;
  }
}
