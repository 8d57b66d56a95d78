// Typed forms of the config maps in the system namespace (Knative's config maps). Parsers live beside this file
// (`parseDeploymentConfig`, `parseDefaultsConfig`, `parseAutoscalerConfig`); builders take these as parameters.

/** config-deployment */
export interface DeploymentConfig {
  /** queue-proxy image; '' = no sidecar (hakn ships one; a cluster without it runs the user container alone). */
  queueSidecarImage: string;
  progressDeadlineSeconds: number;
  digestResolutionTimeoutSeconds: number;
  registriesSkippingTagResolving: string[];
  queueSidecarCpuRequest: string | undefined;
  queueSidecarCpuLimit: string | undefined;
  queueSidecarMemoryRequest: string | undefined;
  queueSidecarMemoryLimit: string | undefined;
  queueSidecarEphemeralStorageRequest: string | undefined;
  queueSidecarEphemeralStorageLimit: string | undefined;
  defaultAffinityType: 'prefer-spread-revision-over-nodes' | 'none';
  podIsAlwaysSchedulable: boolean;
  /** Tidal's `pod-disruption-budget`: a PodDisruptionBudget per Revision (enabled, the default) or none. */
  podDisruptionBudget: 'enabled' | 'disabled';
}

/** config-defaults */
export interface DefaultsConfig {
  revisionTimeoutSeconds: number;
  maxRevisionTimeoutSeconds: number;
  /** undefined = unset (Knative's default: equal to revisionTimeoutSeconds, which leaves the field unset). */
  revisionResponseStartTimeoutSeconds: number | undefined;
  revisionIdleTimeoutSeconds: number;
  containerConcurrency: number;
  containerConcurrencyMaxLimit: number;
  allowContainerConcurrencyZero: boolean;
  containerNameTemplate: string;
  initContainerNameTemplate: string;
  enableServiceLinks: boolean | undefined;
  revisionCpuRequest: string | undefined;
  revisionCpuLimit: string | undefined;
  revisionMemoryRequest: string | undefined;
  revisionMemoryLimit: string | undefined;
  revisionEphemeralStorageRequest: string | undefined;
  revisionEphemeralStorageLimit: string | undefined;
}

/** config-autoscaler (hakn: no scale to zero, min-scale 2) */
export interface AutoscalerConfig {
  minScale: number;
  maxScale: number;
  maxScaleLimit: number;
  initialScale: number;
  allowZeroInitialScale: boolean;
  enableScaleToZero: boolean;
  podAutoscalerClass: string;
}

/** config-gc. Durations in milliseconds; -1 (`GcDisabled`) where a setting is `disabled`. */
export interface GcConfig {
  retainSinceCreateTimeMs: number;
  retainSinceLastActiveTimeMs: number;
  minNonActiveRevisions: number;
  maxNonActiveRevisions: number;
}

/** Everything a Revision reconcile reads from config maps: loaded by an activity, passed to builders. */
export interface RevisionConfig {
  deployment: DeploymentConfig;
  defaults: DefaultsConfig;
  autoscaler: AutoscalerConfig;
}

/** A parse result: the config, or why it was rejected ("<map>: <key>: <reason>", and the key and reason apart). */
export type Parsed<T> = { ok: true; value: T } | { ok: false; error: string; key?: string; reason?: string };
