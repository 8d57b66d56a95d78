// The ConfigMap webhook's check (`/config-validation`): an edit of a config map of the system namespace is
// refused when the controller's own parser would reject it, with the offending key as the path and the parser's
// reason as the message. Maps Tidal does not parse (config-certmanager, …) are accepted, and config-features never fails, as
// upstream. Pure.
import type { FieldError } from '../field-error.js';
import { AutoscalerConfigName, parseAutoscalerConfig } from './autoscaler.js';
import { DefaultsConfigName, parseDefaultsConfig } from './defaults.js';
import { DeploymentConfigName, parseDeploymentConfig } from './deployment.js';
import { DomainConfigName, parseDomainConfig } from './domain.js';
import { ExampleChecksumAnnotation, ExampleKey, exampleChecksum } from './example-checksum.js';
import { FeaturesConfigName, parseFeaturesConfig } from './features.js';
import { GcConfigName, parseGcConfig } from './gc.js';
import { IstioConfigName, parseIstioConfig } from './istio.js';
import { LeaderElectionConfigName, parseLeaderElectionConfig } from './leader-election.js';
import { LoggingConfigName, parseLoggingConfig } from './logging.js';
import { ModulesConfigName, parseModulesConfig } from './modules.js';
import { NetworkConfigName, parseNetworkConfig } from './network.js';
import { ObservabilityConfigName, parseObservabilityConfig } from './observability.js';
import type { Parsed } from './types.js';

type Data = Readonly<Record<string, string>>;

const parsers: Readonly<Record<string, (data: Data) => Parsed<unknown>>> = {
  [DefaultsConfigName]: parseDefaultsConfig,
  [DeploymentConfigName]: parseDeploymentConfig,
  [AutoscalerConfigName]: parseAutoscalerConfig,
  [DomainConfigName]: (data) => parseDomainConfig(data),
  [NetworkConfigName]: parseNetworkConfig,
  [FeaturesConfigName]: parseFeaturesConfig,
  [GcConfigName]: parseGcConfig,
  [ModulesConfigName]: parseModulesConfig,
  [ObservabilityConfigName]: parseObservabilityConfig,
  [IstioConfigName]: parseIstioConfig,
  [LeaderElectionConfigName]: parseLeaderElectionConfig,
  [LoggingConfigName]: parseLoggingConfig,
};

/** The config maps upstream's config webhook knows (their `_example` checksum is checked), parsed here or not. */
const knownConfigMaps = new Set([...Object.keys(parsers), 'config-certmanager']);

/** The names of the config maps whose values are validated. */
export const ValidatedConfigMapNames: readonly string[] = Object.keys(parsers);

/**
 * Why `data` is not a valid `name` config map (empty when it is, or when Tidal does not parse `name`). With the map's
 * `annotations`, an edit inside `_example` that no longer matches `knative.dev/example-checksum` is refused first,
 * as upstream.
 */
export function validateConfigMap(name: string, data: Data, annotations?: Readonly<Record<string, string>>): FieldError[] {
  if (!knownConfigMaps.has(name)) return [];
  const example = data[ExampleKey];
  const checksum = annotations?.[ExampleChecksumAnnotation];
  if (example !== undefined && checksum !== undefined && checksum !== exampleChecksum(example)) {
    return [
      {
        path: ExampleKey,
        message: `the update modifies a key in "${ExampleKey}" which is probably not what you want. Instead, copy the respective setting to the top-level of the ConfigMap, directly below "data"`,
      },
    ];
  }
  const parse = parsers[name];
  if (parse === undefined) return [];
  const parsed = parse(data);
  if (parsed.ok) return [];
  return [{ path: parsed.key ?? '', message: parsed.reason ?? parsed.error }];
}
