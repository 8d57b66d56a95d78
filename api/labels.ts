// Label and annotation keys Knative defines (serving.knative.dev/..., networking.knative.dev/...).

export const ServingGroupPrefix = 'serving.knative.dev/';

export const Labels = {
  service: 'serving.knative.dev/service',
  serviceUID: 'serving.knative.dev/serviceUID',
  configuration: 'serving.knative.dev/configuration',
  configurationUID: 'serving.knative.dev/configurationUID',
  configurationGeneration: 'serving.knative.dev/configurationGeneration',
  revision: 'serving.knative.dev/revision',
  revisionUID: 'serving.knative.dev/revisionUID',
  route: 'serving.knative.dev/route',
  routingState: 'serving.knative.dev/routingState',
  visibility: 'networking.knative.dev/visibility',
} as const;

export const Annotations = {
  routes: 'serving.knative.dev/routes',
  creator: 'serving.knative.dev/creator',
  lastModifier: 'serving.knative.dev/lastModifier',
  routingStateModified: 'serving.knative.dev/routingStateModified',
  rolloutDuration: 'serving.knative.dev/rollout-duration',
  rolloutDurationLegacy: 'serving.knative.dev/rolloutDuration',
  lastAppliedConfiguration: 'kubectl.kubernetes.io/last-applied-configuration',
} as const;

/** Tidal's own annotation keys (not Knative's). */
export const TidalAnnotations = {
  /**
   * Control of a gradual rollout, on a Service (copied to its Route) or a Route: `pause`, `resume`, `promote` or
   * `abort`, optionally `:<revision>` (resources/rollout.ts `parseRolloutControl`, docs/gradual-rollouts.md).
   */
  rollout: 'tidal.dev/rollout',
} as const;
