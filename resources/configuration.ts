// makeConfiguration: the Configuration a Service owns (Knative's MakeConfigurationFromExisting).
import { SERVING_API_VERSION } from '../api/kinds.js';
import { Annotations, Labels } from '../api/labels.js';
import type { Configuration, Service } from '../api/serving.js';
import { controllerRef } from './owner.js';

// Annotations a Service carries that must not reach its Configuration.
const dropFromConfiguration = new Set<string>([Annotations.lastAppliedConfiguration, Annotations.rolloutDuration, Annotations.rolloutDurationLegacy]);

/** Sorted, de-duplicated union of a comma-separated route list and more route names. */
export function unionRoutes(existing: string | undefined, ...more: string[]): string {
  const names = new Set(
    (existing ?? '')
      .split(',')
      .map((s) => s.trim())
      .filter((s) => s !== ''),
  );
  for (const m of more) names.add(m);
  return [...names].sort().join(',');
}

/**
 * The desired Configuration for `service`: same name and namespace, the Service's template verbatim, the Service's
 * labels plus service/serviceUID, its annotations minus kubectl's and the rollout duration, and the
 * `serving.knative.dev/routes` list kept from `existing` (the labeler's bookkeeping) plus the Service's own Route.
 */
export function makeConfiguration(service: Service, existing?: Configuration): Configuration {
  const name = service.metadata.name ?? '';
  const annotations: Record<string, string> = {};
  for (const [k, v] of Object.entries(service.metadata.annotations ?? {})) {
    if (!dropFromConfiguration.has(k)) annotations[k] = v;
  }
  annotations[Annotations.routes] = unionRoutes(existing?.metadata.annotations?.[Annotations.routes], name);
  return {
    apiVersion: SERVING_API_VERSION,
    kind: 'Configuration',
    metadata: {
      name,
      namespace: service.metadata.namespace ?? '',
      labels: {
        ...service.metadata.labels,
        [Labels.service]: name,
        [Labels.serviceUID]: service.metadata.uid ?? '',
      },
      annotations,
      ownerReferences: [controllerRef(service)],
    },
    spec: { template: templateOf(service) },
  };
}

/**
 * The Service's template as upstream's Go types carry it over: a template stored before Tidal's webhook matched
 * apimachinery v0.36 holds `creationTimestamp: null`, which Go encodes as nothing (`metadata: {}`).
 */
function templateOf(service: Service): Configuration['spec']['template'] {
  const template = structuredClone(service.spec.template);
  const meta: Record<string, unknown> = { ...template.metadata };
  if (meta.creationTimestamp === null) delete meta.creationTimestamp;
  return { ...template, metadata: meta };
}
