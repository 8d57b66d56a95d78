// makeRoute: the Route a Service owns (Knative's MakeRoute).
import { SERVING_API_VERSION } from '../api/kinds.js';
import { Annotations, Labels } from '../api/labels.js';
import type { Route, Service, TrafficTarget } from '../api/serving.js';
import { controllerRef } from './owner.js';

/**
 * The desired Route for `service`: same name and namespace; the Service's traffic with `configurationName` filled in
 * for every target that names no revision (an empty traffic list means 100 % to the latest revision); the Service's
 * labels plus `serving.knative.dev/service`; its annotations minus kubectl's (the rollout duration is kept: the Route
 * runs rollouts).
 */
export function makeRoute(service: Service): Route {
  const name = service.metadata.name ?? '';
  const traffic: TrafficTarget[] = (service.spec.traffic?.length ? service.spec.traffic : [{ percent: 100, latestRevision: true }]).map((t) =>
    t.revisionName ? { ...t } : { ...t, configurationName: name },
  );
  const annotations: Record<string, string> = { ...service.metadata.annotations };
  delete annotations[Annotations.lastAppliedConfiguration];
  return {
    apiVersion: SERVING_API_VERSION,
    kind: 'Route',
    metadata: {
      name,
      namespace: service.metadata.namespace ?? '',
      labels: { ...service.metadata.labels, [Labels.service]: name },
      ...(Object.keys(annotations).length ? { annotations } : {}),
      ownerReferences: [controllerRef(service)],
    },
    spec: { traffic },
  };
}
