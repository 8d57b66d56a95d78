// The config maps in the system namespace that reconcilers read (Knative's config maps): names, parsers, defaults.
import { AutoscalerConfigName, parseAutoscalerConfig } from './autoscaler.js';
import { DefaultsConfigName, parseDefaultsConfig } from './defaults.js';
import { DeploymentConfigName, parseDeploymentConfig } from './deployment.js';
import type { Parsed, RevisionConfig } from './types.js';

export type { AutoscalerConfig, DefaultsConfig, DeploymentConfig, GcConfig, Parsed, RevisionConfig } from './types.js';
export { GcConfigName, GcDisabled, GcKeys, defaultGcConfig, describeGcConfig, parseGcConfig } from './gc.js';
export { AutoscalerConfigName, AutoscalerKeys, AutoscalerOtherDefaults, defaultAutoscalerConfig, parseAutoscalerConfig } from './autoscaler.js';
export {
  DefaultsConfigName,
  DefaultsKeys,
  defaultDefaultsConfig,
  executeNameTemplate,
  parseDefaultsConfig,
  parseNameTemplate,
  renderNameTemplate,
} from './defaults.js';
export type { NameTemplate, TemplateMeta } from './defaults.js';
export { BuiltinModule, ModulesConfigName, defaultModulesConfig, parseModulesConfig, type ModulesConfig } from './modules.js';
export {
  ObservabilityConfigName,
  defaultObservabilityConfig,
  parseObservabilityConfig,
  revisionLogUrl,
  type ObservabilityConfig,
} from './observability.js';
export { FeaturesConfigName, defaultFeaturesConfig, parseFeatures, parseFeaturesConfig, type FeaturesConfig } from './features.js';
export {
  DeploymentConfigName,
  DeploymentKeys,
  defaultDeploymentConfig,
  isQuantity,
  isWholeSeconds,
  nanosToSeconds,
  parseDeploymentConfig,
  parseGoBool,
  parseGoDuration,
  parseGoFloat,
  parseGoInt,
  parseStringSet,
} from './deployment.js';

/** The config maps a Revision reconcile reads, by name. */
export const RevisionConfigMapNames = [DeploymentConfigName, DefaultsConfigName, AutoscalerConfigName] as const;

/**
 * Parses the three config maps a Revision reconcile needs. A missing map (undefined) parses as empty data, i.e. all
 * defaults. The first invalid map's error is returned.
 */
export function parseRevisionConfig(maps: {
  deployment?: Readonly<Record<string, string>> | undefined;
  defaults?: Readonly<Record<string, string>> | undefined;
  autoscaler?: Readonly<Record<string, string>> | undefined;
}): Parsed<RevisionConfig> {
  const deployment = parseDeploymentConfig(maps.deployment ?? {});
  if (!deployment.ok) return deployment;
  const defaults = parseDefaultsConfig(maps.defaults ?? {});
  if (!defaults.ok) return defaults;
  const autoscaler = parseAutoscalerConfig(maps.autoscaler ?? {});
  if (!autoscaler.ok) return autoscaler;
  return { ok: true, value: { deployment: deployment.value, defaults: defaults.value, autoscaler: autoscaler.value } };
}
