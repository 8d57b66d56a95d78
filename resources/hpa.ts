// makeHPA: the autoscaling/v2 HorizontalPodAutoscaler of a Revision whose autoscaler class is
// `hpa.autoscaling.knative.dev` (Knative's MakeHPA in pkg/reconciler/autoscaling/hpa/resources, with
// the Revision standing in for the PodAutoscaler Tidal does not have). The HPA then owns the Deployment's replica
// count: Tidal stops applying `spec.replicas` on that Deployment. Pure.
import { parseGoFloat } from '../api/config/deployment.js';
import type { RevisionConfig } from '../api/config/types.js';
import type { KubeObject, ObjectMeta } from '../api/meta.js';
import type { Revision } from '../api/serving.js';
import { hpaClass } from '../api/validation-autoscaling.js';
import { AUTOSCALING_PREFIX, makeRevisionAnnotations, makeRevisionLabels, scaleBounds } from './deployment.js';
import { deploymentName } from './names.js';
import { controllerRef } from './owner.js';

export const AutoscalingAnnotations = {
  class: 'autoscaling.knative.dev/class',
  metric: 'autoscaling.knative.dev/metric',
  target: 'autoscaling.knative.dev/target',
} as const;

/** Go's math.MaxInt32: upstream's "no limit" for an HPA when max-scale is 0. */
const MAX_INT32 = 2_147_483_647;

export interface MetricSpec {
  type: 'Resource' | 'Pods';
  resource?: { name: string; target: { type: 'Utilization' | 'AverageValue'; averageUtilization?: number; averageValue?: string } };
  pods?: { metric: { name: string }; target: { type: 'AverageValue'; averageValue: string } };
}

/** An autoscaling/v2 HorizontalPodAutoscaler as Tidal builds it: plain JSON. */
export interface HorizontalPodAutoscaler extends KubeObject {
  apiVersion: 'autoscaling/v2';
  kind: 'HorizontalPodAutoscaler';
  metadata: ObjectMeta & { name: string; namespace: string; labels: Record<string, string>; annotations: Record<string, string> };
  spec: {
    scaleTargetRef: { apiVersion: 'apps/v1'; kind: 'Deployment'; name: string };
    minReplicas?: number;
    maxReplicas: number;
    metrics?: MetricSpec[];
  };
  /** Written by the HPA controller. */
  status?: { currentReplicas?: number; desiredReplicas?: number; conditions?: { type: string; status: string; reason?: string }[] };
}

/**
 * The HPA with the defaults the API server stores filled in (autoscaling/v2 SetDefaults: minReplicas 1, and 80 % CPU
 * when no metric is given), so the owner's comparison sees only what someone else changed. Upstream's HPA reconciler
 * updates the whole object when its spec differs from the desired one.
 */
export function withHpaDefaults(hpa: HorizontalPodAutoscaler): HorizontalPodAutoscaler {
  const metrics: MetricSpec[] = hpa.spec.metrics?.length
    ? hpa.spec.metrics
    : [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 80 } } }];
  return { ...hpa, spec: { ...hpa.spec, minReplicas: hpa.spec.minReplicas ?? 1, metrics } };
}

/** The Revision's autoscaler class: its `autoscaling.knative.dev/class` annotation, else config-autoscaler's. */
export function autoscalerClass(rev: Revision, cfg: RevisionConfig): string {
  return rev.metadata.annotations?.[AutoscalingAnnotations.class] ?? cfg.autoscaler.podAutoscalerClass;
}

/** True when an HPA, not Tidal, sizes the Revision's Deployment. */
export function usesHPA(rev: Revision, cfg: RevisionConfig): boolean {
  return autoscalerClass(rev, cfg) === hpaClass;
}

/**
 * `n` MiB as a Kubernetes quantity in canonical form (resource.NewQuantity(n·2^20, BinarySI).String()): the largest
 * binary suffix that divides it exactly, so the API server stores the string Tidal sent (`512Mi`, `1Gi`, `1536Mi`).
 */
export function mebibytesQuantity(n: number): string {
  if (n === 0) return '0';
  const suffixes = ['Mi', 'Gi', 'Ti', 'Pi', 'Ei'];
  let value = n;
  let i = 0;
  while (i < suffixes.length - 1 && value % 1024 === 0) {
    value /= 1024;
    i++;
  }
  return `${value}${suffixes[i]!}`;
}

/** The metric the HPA scales on (upstream's default for the HPA class: cpu), and the target when one is set. */
function metricsOf(rev: Revision): MetricSpec[] | undefined {
  const ann = rev.metadata.annotations ?? {};
  const metric = ann[AutoscalingAnnotations.metric] ?? 'cpu';
  const raw = ann[AutoscalingAnnotations.target];
  const target = raw === undefined ? undefined : parseGoFloat(raw);
  // No target: no metrics, and the HPA controller applies its own default (80 % CPU), as upstream leaves it.
  if (target === undefined) return undefined;
  switch (metric) {
    case 'cpu':
      return [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: Math.ceil(target) } } }];
    case 'memory':
      return [
        { type: 'Resource', resource: { name: 'memory', target: { type: 'AverageValue', averageValue: mebibytesQuantity(Math.trunc(target)) } } },
      ];
    default:
      // Any other metric is a custom per-pod metric served by a metrics adapter.
      return [{ type: 'Pods', pods: { metric: { name: metric }, target: { type: 'AverageValue', averageValue: String(Math.trunc(target)) } } }];
  }
}

/**
 * The HPA of `rev` (upstream's MakeHPA): named as the Revision (upstream names it after the PodAutoscaler, which is
 * named after the Revision), in its namespace, controller-owned by it, labelled like the Deployment and annotated
 * with the Revision's annotations (the autoscaling ones included, as the PodAutoscaler carries them); it targets
 * `<rev>-deployment`. `minReplicas` is the min-scale (annotation, else config-autoscaler: hakn's 2), left out when 0;
 * `maxReplicas` the max-scale, or 2147483647 when 0 (unbounded). Metric `cpu` (the default) with a target: average
 * utilization of ⌈target⌉ percent; `memory`: average value of ⌊target⌋ MiB; any other name: a Pods metric.
 */
export function makeHPA(rev: Revision, cfg: RevisionConfig): HorizontalPodAutoscaler {
  const name = rev.metadata.name ?? '';
  const { min, max } = scaleBounds(rev, cfg);
  const annotations = { ...makeRevisionAnnotations(rev) };
  for (const [k, v] of Object.entries(rev.metadata.annotations ?? {})) if (k.startsWith(AUTOSCALING_PREFIX)) annotations[k] = v;
  const metrics = metricsOf(rev);
  return {
    apiVersion: 'autoscaling/v2',
    kind: 'HorizontalPodAutoscaler',
    metadata: {
      name,
      namespace: rev.metadata.namespace ?? '',
      labels: makeRevisionLabels(rev),
      annotations,
      ownerReferences: [controllerRef(rev)],
    },
    spec: {
      scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: deploymentName(name) },
      ...(min > 0 ? { minReplicas: min } : {}),
      maxReplicas: max === 0 ? MAX_INT32 : max,
      ...(metrics ? { metrics } : {}),
    },
  };
}
