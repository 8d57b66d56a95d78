// The ConfigMap webhook's check (spec §9, `/config-validation`): an edit of a config map of the system namespace is
// refused when the controller's own parser would reject it, with the offending key as the path and the parser's
// reason as the message. Maps Tidal does not parse (config-gc, …) are accepted, and config-features never fails, as
// upstream. Pure.
import type { FieldError } from '../field-error.js';
import { AutoscalerConfigName, parseAutoscalerConfig } from './autoscaler.js';
import { DefaultsConfigName, parseDefaultsConfig } from './defaults.js';
import { DeploymentConfigName, parseDeploymentConfig } from './deployment.js';
import { DomainConfigName, parseDomainConfig } from './domain.js';
import { FeaturesConfigName, parseFeaturesConfig } from './features.js';
import { NetworkConfigName, parseNetworkConfig } from './network.js';
import type { Parsed } from './types.js';

type Data = Readonly<Record<string, string>>;

const parsers: Readonly<Record<string, (data: Data) => Parsed<unknown>>> = {
  [DefaultsConfigName]: parseDefaultsConfig,
  [DeploymentConfigName]: parseDeploymentConfig,
  [AutoscalerConfigName]: parseAutoscalerConfig,
  [DomainConfigName]: (data) => parseDomainConfig(data),
  [NetworkConfigName]: parseNetworkConfig,
  [FeaturesConfigName]: parseFeaturesConfig,
};

/** The names of the config maps whose edits are validated. */
export const ValidatedConfigMapNames: readonly string[] = Object.keys(parsers);

/** Why `data` is not a valid `name` config map (empty when it is, or when Tidal does not parse `name`). */
export function validateConfigMap(name: string, data: Data): FieldError[] {
  const parse = parsers[name];
  if (parse === undefined) return [];
  const parsed = parse(data);
  if (parsed.ok) return [];
  return [{ path: parsed.key ?? '', message: parsed.reason ?? parsed.error }];
}
