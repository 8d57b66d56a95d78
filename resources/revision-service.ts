// makeRevisionService: the ClusterIP Service in front of a Revision's pods, which Routes target. In Knative this is
// the SKS "public" Service made by the autoscaler's KPA reconciler (Knative's PodAutoscaler); hakn has no autoscaler, so Tidal's
// Revision reconciler makes it.
import type { RevisionConfig } from '../api/config/types.js';
import { Labels } from '../api/labels.js';
import { isForeignModule } from '../api/modules.js';
import type { KubeObject, ObjectMeta } from '../api/meta.js';
import type { Revision } from '../api/serving.js';
import { makeRevisionLabels, revisionSelector } from './deployment.js';
import { controllerRef } from './owner.js';
import { QueuePorts, hasQueueProxy, isH2C, queueServingPort, userPortOf } from './queue.js';

export interface ServicePort {
  name: string;
  protocol: 'TCP';
  /** `kubernetes.io/h2c` on the plaintext port of an h2c Revision (Knative's networking.AppProtocol). */
  appProtocol?: string;
  port: number;
  targetPort: number;
}

/** The standard appProtocol for HTTP/2 over cleartext (KEP-3726), as Knative sets it for h2c ports. */
export const AppProtocolH2C = 'kubernetes.io/h2c';

/** A core/v1 Service as Tidal builds it: plain JSON. */
export interface KubeService extends KubeObject {
  apiVersion: 'v1';
  kind: 'Service';
  metadata: ObjectMeta & { name: string; namespace: string; labels: Record<string, string> };
  spec: { type: 'ClusterIP'; selector: Record<string, string>; ports: ServicePort[] };
}

/** Service port numbers and names, as Knative's networking package defines them. */
export const RevisionServicePorts = {
  http: { name: 'http', port: 80 },
  http2: { name: 'http2', port: 81 },
  https: { name: 'https', port: 443 },
} as const;

/**
 * The revision Service's plaintext port that a Route (KIngress split) must target: `http` 80, or `http2` 81 when the
 * user port is named h2c (Knative's networking.ServicePort / ServicePortName by protocol). The port *name* is also
 * what tells Istio to speak HTTP/2 to the pods.
 */
export function revisionServicePort(rev: Revision): { name: string; port: number } {
  const p = isH2C(rev) ? RevisionServicePorts.http2 : RevisionServicePorts.http;
  return { name: p.name, port: p.port };
}

/**
 * The ClusterIP Service `<rev>` (same name as the Revision: Revision names are already valid Service names) in the
 * Revision's namespace, controller-owned by the Revision, labelled like the Deployment (without the hash) — which
 * includes `serving.knative.dev/revision` — and selecting `{serving.knative.dev/revisionUID: <uid>}`.
 *
 * Ports: with queue-proxy, {@link revisionServicePort} → queue-proxy's serving port (8012, or 8013 for h2c) and
 * `https` 443 → 8112; without queue-proxy only {@link revisionServicePort} → the user port. For an h2c Revision the
 * plaintext port says `appProtocol: kubernetes.io/h2c`, so meshes and gateways speak HTTP/2 to it.
 *
 * A Revision of a foreign module (ADR 0009) gets only {@link revisionServicePort} → queue-proxy's serving port: the
 * module's sidecar stands where queue-proxy stands, whatever config-deployment says about queue-proxy.
 */
export function makeRevisionService(rev: Revision, cfg: RevisionConfig): KubeService {
  const name = rev.metadata.name ?? '';
  const plain = revisionServicePort(rev);
  const appProtocol = isH2C(rev) ? { appProtocol: AppProtocolH2C } : {};
  const ports: ServicePort[] = isForeignModule(rev)
    ? [{ name: plain.name, protocol: 'TCP', ...appProtocol, port: plain.port, targetPort: queueServingPort(rev) }]
    : hasQueueProxy(cfg)
      ? [
          { name: plain.name, protocol: 'TCP', ...appProtocol, port: plain.port, targetPort: queueServingPort(rev) },
          { name: RevisionServicePorts.https.name, protocol: 'TCP', port: RevisionServicePorts.https.port, targetPort: QueuePorts.https },
        ]
      : [{ name: plain.name, protocol: 'TCP', ...appProtocol, port: plain.port, targetPort: userPortOf(rev) }];
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: {
      name,
      namespace: rev.metadata.namespace ?? '',
      labels: { ...makeRevisionLabels(rev), [Labels.revision]: name },
      ownerReferences: [controllerRef(rev)],
    },
    spec: { type: 'ClusterIP', selector: revisionSelector(rev), ports },
  };
}
