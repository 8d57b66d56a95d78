// The changes bench:scale makes to its resident Services — a spec edit, a child deleted, a child edited, a config map
// edited — and how each is seen converged. Its leader changes make one of each while no leader watches; its storm
// makes many of the first three.
import { Resources } from '../api/kinds.js';
import type { KubeObject } from '../api/meta.js';
import type { KubeClient } from '../kube/client.js';

type DeploymentLike = KubeObject & { spec?: { replicas?: number } };

/**
 * A new image for the Service: returns the generation the edit made, which the Service must be Ready having observed
 * (ServiceTimeline `serviceReadySince`). Not a Revision's name: edits in quick succession reach its Configuration as one.
 */
export async function changeImage(kube: KubeClient, service: string, image: string): Promise<number> {
  const svc = await kube.mergePatch<KubeObject>(Resources.Service, 'default', service, {
    spec: { template: { spec: { containers: [{ image, ports: [{ containerPort: 80 }] }] } } },
  });
  return svc.metadata.generation ?? 1;
}

/** The Service's KIngress (named after its Route, the Service's name) deleted. */
export async function deleteIngress(kube: KubeClient, service: string): Promise<void> {
  await kube.delete(Resources.KIngress, 'default', service);
}

export async function ingressBack(kube: KubeClient, service: string): Promise<boolean> {
  return (await kube.get(Resources.KIngress, 'default', service)) !== undefined;
}

/**
 * One of the Service's Deployments scaled to 0 — `name` when given and there, else one with replicas — and the
 * replicas it must regain (`atLeast` when a previous edit's are larger: it may still be at 0 from that one).
 */
export async function scaleToZero(kube: KubeClient, service: string, name?: string, atLeast = 0): Promise<{ deployment: string; replicas: number }> {
  const deployments = (await kube.list<DeploymentLike>(Resources.Deployment, 'default', { labelSelector: `serving.knative.dev/service=${service}` }))
    .items;
  const deployment = deployments.find((d) => name !== undefined && d.metadata.name === name) ?? deployments.find((d) => (d.spec?.replicas ?? 0) > 0);
  if (!deployment) throw new Error(`${service} has no Deployment with replicas`);
  const deploymentName = deployment.metadata.name ?? '';
  await kube.mergePatch(Resources.Deployment, 'default', deploymentName, { spec: { replicas: 0 } });
  return { deployment: deploymentName, replicas: Math.max(atLeast, deployment.spec?.replicas ?? 0) };
}

export async function replicasBack(kube: KubeClient, deployment: string, replicas: number): Promise<boolean> {
  return ((await kube.get<DeploymentLike>(Resources.Deployment, 'default', deployment))?.spec?.replicas ?? 0) >= replicas;
}

/**
 * config-gc's `max-non-active-revisions` toggled between 1 (hakn's) and 2: every Service and Configuration reads it
 * (upstream's garbage collector resyncs them all), while only Services with old Revisions (s-0, the leader changes'
 * image edits) have anything to collect. Its cost is its readers' passes. Returns the value set.
 */
export async function editGcConfig(kube: KubeClient): Promise<string> {
  const cm = await kube.get<KubeObject & { data?: Record<string, string> }>(Resources.ConfigMap, 'knative-serving', 'config-gc');
  const value = cm?.data?.['max-non-active-revisions'] === '2' ? '1' : '2';
  await kube.mergePatch(Resources.ConfigMap, 'knative-serving', 'config-gc', { data: { 'max-non-active-revisions': value } });
  return value;
}
