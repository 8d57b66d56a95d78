// The config maps of the system namespace, followed by an informer. Each update is parsed; a valid one replaces
// the config in force and notifies listeners (the watcher resyncs the objects that read it), an invalid one is
// logged and reported as a Warning event on the ConfigMap while the last good config stays in force.
import type { Logger } from 'pino';
import {
  defaultAutoscalerConfig,
  defaultFeaturesConfig,
  FeaturesConfigName,
  parseFeatures,
  type FeaturesConfig,
  defaultDefaultsConfig,
  defaultDeploymentConfig,
  defaultGcConfig,
  GcConfigName,
  ModulesConfigName,
  defaultModulesConfig,
  parseModulesConfig,
  type ModulesConfig,
  ObservabilityConfigName,
  defaultObservabilityConfig,
  parseObservabilityConfig,
  type ObservabilityConfig,
  parseAutoscalerConfig,
  parseGcConfig,
  parseDefaultsConfig,
  parseDeploymentConfig,
  type GcConfig,
  type Parsed,
  type RevisionConfig,
} from '../api/config/index.js';
import { Resources } from '../api/kinds.js';
import type { KubeObject } from '../api/meta.js';
import type { ConfigSource } from '../activities/deps.js';
import type { EventRecorder } from '../activities/events.js';
import type { KubeClient } from '../kube/client.js';
import { Informer } from './informer.js';
import { defaultNetworkConfig, NetworkConfigName, parseNetworkConfig, type NetworkConfig } from '../api/config/network.js';
import { defaultDomainConfig, DomainConfigName, parseDomainConfig, type DomainConfig } from '../api/config/domain.js';
import { defaultIstioConfig, IstioConfigName, parseIstioConfig, type IstioConfig } from '../api/config/istio.js';
import { defaultLoggingConfig, LoggingConfigName, parseLoggingConfig, type LoggingConfig } from '../api/config/logging.js';

type ConfigMap = KubeObject & { data?: Record<string, string> };

/** Every config map Tidal reads, parsed. */
interface AllConfig extends RevisionConfig {
  network: NetworkConfig;
  domain: DomainConfig;
  features: FeaturesConfig;
  gc: GcConfig;
  modules: ModulesConfig;
  observability: ObservabilityConfig;
  istio: IstioConfig;
  logging: LoggingConfig;
}

/** Config map name → the field it fills and its parser. Each map is parsed on its own, as Knative's config store
 * does: a bad config-autoscaler must not hold back a good change of config-deployment. */
const parsers: Record<string, { [K in keyof AllConfig]: [K, (data: Record<string, string>) => Parsed<AllConfig[K]>] }[keyof AllConfig]> = {
  'config-deployment': ['deployment', parseDeploymentConfig],
  'config-defaults': ['defaults', parseDefaultsConfig],
  'config-autoscaler': ['autoscaler', parseAutoscalerConfig],
  [NetworkConfigName]: ['network', parseNetworkConfig],
  [DomainConfigName]: ['domain', parseDomainConfig],
  [FeaturesConfigName]: ['features', parseFeatures],
  [GcConfigName]: ['gc', parseGcConfig],
  [ModulesConfigName]: ['modules', parseModulesConfig],
  [ObservabilityConfigName]: ['observability', parseObservabilityConfig],
  [IstioConfigName]: ['istio', parseIstioConfig],
  [LoggingConfigName]: ['logging', parseLoggingConfig],
};

export class ConfigStore implements ConfigSource {
  private current: AllConfig = {
    deployment: defaultDeploymentConfig(),
    defaults: defaultDefaultsConfig(),
    autoscaler: defaultAutoscalerConfig(),
    network: defaultNetworkConfig(),
    domain: defaultDomainConfig(),
    features: defaultFeaturesConfig(),
    gc: defaultGcConfig(),
    modules: defaultModulesConfig(),
    observability: defaultObservabilityConfig(),
    istio: defaultIstioConfig(),
    logging: defaultLoggingConfig(),
  };
  private readonly informer: Informer;
  private readonly listeners: ((changed: ConfigMap) => void)[] = [];
  lastError: string | undefined;

  constructor(
    kube: KubeClient,
    readonly systemNamespace: string,
    private readonly log: Logger,
    private readonly events: EventRecorder,
  ) {
    this.informer = new Informer(
      kube,
      Resources.ConfigMap,
      { namespace: systemNamespace, relistMs: 300_000, maxBackoffMs: 30_000, onChange: (type, obj) => this.onChange(type, obj) },
      log.child({ informer: 'ConfigMap' }),
    );
  }

  revisionConfig(): RevisionConfig {
    return this.current;
  }

  networkConfig(): NetworkConfig {
    return this.current.network;
  }

  domainConfig(): DomainConfig {
    return this.current.domain;
  }

  featuresConfig(): FeaturesConfig {
    return this.current.features;
  }

  gcConfig(): GcConfig {
    return this.current.gc;
  }

  modulesConfig(): ModulesConfig {
    return this.current.modules;
  }

  observabilityConfig(): ObservabilityConfig {
    return this.current.observability;
  }

  istioConfig(): IstioConfig {
    return this.current.istio;
  }

  loggingConfig(): LoggingConfig {
    return this.current.logging;
  }

  onUpdate(fn: (changed: ConfigMap) => void): void {
    this.listeners.push(fn);
  }

  start(): void {
    this.informer.start();
  }

  get synced(): Promise<void> {
    return this.informer.synced;
  }

  /** The newest resourceVersion the config maps' cache reflects (the watch bookmark's `ConfigMap`). */
  get newestVersion(): string {
    return this.informer.newestVersion;
  }

  /** The config maps Tidal reads, as cached. */
  maps(): ConfigMap[] {
    return this.informer.list().filter((cm) => parsers[cm.metadata.name ?? ''] !== undefined);
  }

  close(): Promise<void> {
    return this.informer.close();
  }

  private onChange(type: 'added' | 'updated' | 'deleted', cm: ConfigMap): void {
    const entry = parsers[cm.metadata.name ?? ''];
    if (!entry) return;
    const [field, parse] = entry;
    const parsed = parse(type === 'deleted' ? {} : (cm.data ?? {}));
    if (!parsed.ok) return this.reject(cm, parsed.error);
    this.current = { ...this.current, [field]: parsed.value };
    this.accept(cm, type);
  }

  private reject(cm: ConfigMap, error: string): void {
    this.lastError = error;
    this.log.error(
      { kind: 'ConfigMap', namespace: this.systemNamespace, name: cm.metadata.name, error },
      'invalid config; keeping the last good one',
    );
    void this.events.record(cm, 'Warning', 'InvalidConfig', `${error}; the last valid configuration stays in force`);
  }

  private accept(cm: ConfigMap, type: string): void {
    this.lastError = undefined;
    this.log.info({ kind: 'ConfigMap', namespace: this.systemNamespace, name: cm.metadata.name, change: type }, 'config updated');
    for (const fn of this.listeners) fn(cm);
  }
}
