// The update of a live Deployment of a Revision, as upstream's checkAndUpdateDeployment makes it
// (pkg/reconciler/revision/cruds.go): the Deployment is only partly the Revision's.
//   - spec: the desired spec replaces the live one whole (a container field someone added goes), except the label
//     selector, which is immutable, and the replica count while something other than Tidal sizes it (the HPA class:
//     the desired object then has none; hakn's fixed count is Tidal's and is written);
//   - labels and annotations, of the Deployment and of its pod template: the desired ones, plus every live key that
//     is not Knative's (`app`, any key containing `knative.dev/`) or Tidal's (`tidal.dev/`) — so
//     `kubectl rollout restart`'s `kubectl.kubernetes.io/restartedAt`, the Deployment controller's revision counter
//     and anyone's own labels stay.
// When the update is made is the caller's rule (activities/revision.ts `deploymentInSync`): upstream makes it when
// the deployment-hash label changes, not on every foreign edit.
import { APP_LABEL, type Deployment } from './deployment.js';

/** A key upstream's mergeMetadata counts as Knative's own; Tidal's keys count as its own too. */
function isServingKey(key: string): boolean {
  return key === APP_LABEL || key.includes('knative.dev/') || key.startsWith('tidal.dev/');
}

/**
 * Upstream's mergeMetadata: the desired entries plus the live entries whose keys are not Knative's or Tidal's; a
 * live foreign key wins over a desired one of the same name, as kmap.Union(desired, external) lets the later map win.
 */
export function mergeMetadata(desired: Record<string, string> | undefined, live: Record<string, string> | undefined): Record<string, string> {
  const external: Record<string, string> = {};
  for (const [k, v] of Object.entries(live ?? {})) if (!isServingKey(k)) external[k] = v;
  return { ...desired, ...external };
}

/** The Deployment to PUT over `live` so that it carries `desired` (see the file comment). */
export function deploymentUpdate(live: Deployment, desired: Deployment): Deployment {
  const liveSpec = live.spec as Partial<Deployment['spec']> | undefined;
  const liveTemplate = liveSpec?.template?.metadata;
  const template = desired.spec.template;
  const replicas = desired.spec.replicas ?? liveSpec?.replicas;
  return {
    ...live,
    metadata: {
      ...live.metadata,
      labels: mergeMetadata(desired.metadata.labels, live.metadata.labels),
      annotations: mergeMetadata(desired.metadata.annotations, live.metadata.annotations),
    },
    spec: {
      ...desired.spec,
      ...(replicas !== undefined ? { replicas } : {}),
      selector: liveSpec?.selector ?? desired.spec.selector,
      template: {
        ...template,
        metadata: {
          ...template.metadata,
          labels: mergeMetadata(template.metadata.labels, liveTemplate?.labels),
          annotations: mergeMetadata(template.metadata.annotations, liveTemplate?.annotations),
        },
      },
    },
  };
}
