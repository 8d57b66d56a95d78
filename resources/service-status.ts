// computeServiceStatus: the Service's status from what its children report (Knative's Service reconciler), as a pure function of
// the observed objects, so the status step of the Service workflow is a read → compute → write.
import { beginReconcile, cloneJson, endReconcile, statusEqual } from '../api/conditions.js';
import {
  markConfigurationNotOwned,
  markConfigurationNotReconciled,
  markRevisionNameTaken,
  markRouteNotMigrated,
  markRouteNotOwned,
  markRouteNotReconciled,
  propagateConfigurationStatus,
  propagateRouteStatus,
  serviceConditionSet,
  type ServiceStatus,
} from '../api/lifecycle/service.js';
import { isControlledBy } from '../api/meta.js';
import type { Configuration, Revision, Route, Service, TrafficTarget } from '../api/serving.js';
import { isRevisionNameTaken } from './revision-lookup.js';

export interface ServiceObservation {
  /** The Service with defaults applied. */
  service: Service;
  configuration: Configuration | undefined;
  route: Route | undefined;
  /** The Revision named by the template's BYO name, when the template names one and it exists. */
  byoRevision?: Revision | undefined;
}

/** Status traffic differs from spec traffic once configuration targets resolve to latestReady (step 5). */
export function isTrafficNotMigrated(route: Route, cfg: Configuration): boolean {
  const spec = route.spec.traffic ?? [];
  const status = route.status?.traffic ?? [];
  if (spec.length !== status.length) return true;
  const norm = (t: TrafficTarget): TrafficTarget => {
    const { url: _url, latestRevision: _latest, ...rest } = t;
    if (rest.configurationName === cfg.metadata.name) {
      delete rest.configurationName;
      if (cfg.status?.latestReadyRevisionName) rest.revisionName = cfg.status.latestReadyRevisionName;
    }
    return JSON.parse(JSON.stringify(rest)) as TrafficTarget;
  };
  return spec.some((t, i) => !statusEqual(norm(t), norm(status[i] as TrafficTarget)));
}

/** The Service's new status, with observedGeneration set and unchanged conditions keeping their times. */
export function computeServiceStatus(obs: ServiceObservation, now: string): ServiceStatus {
  const svc = cloneJson(obs.service);
  const before = beginReconcile(svc, serviceConditionSet, now);
  const status = svc.status as ServiceStatus;
  fill(svc, status, obs, now);
  endReconcile(svc, before, now);
  return svc.status as ServiceStatus;
}

function fill(svc: Service, status: ServiceStatus, obs: ServiceObservation, now: string): void {
  const uid = svc.metadata.uid;
  const cfg = obs.configuration;
  const name = svc.metadata.name ?? '';
  if (!cfg) return markConfigurationNotReconciled(status, now);
  if (!isControlledBy(cfg, uid)) return markConfigurationNotOwned(status, name, now);
  const byoName = svc.spec.template.metadata?.name;
  if (cfg.metadata.generation !== cfg.status?.observedGeneration) {
    markConfigurationNotReconciled(status, now);
    if (byoName) return; // the Route must not move before the named Revision exists
  } else {
    propagateConfigurationStatus(status, cfg.status ?? {}, now);
  }
  if (byoName && isRevisionNameTaken(cfg, obs.byoRevision)) return markRevisionNameTaken(status, byoName, now);

  const route = obs.route;
  if (!route) return markRouteNotReconciled(status, now);
  if (!isControlledBy(route, uid)) return markRouteNotOwned(status, name, now);
  if (route.metadata.generation !== route.status?.observedGeneration) markRouteNotReconciled(status, now);
  else propagateRouteStatus(status, route.status ?? {}, now);
  if (serviceConditionSet.get(status, 'RoutesReady')?.status === 'True' && isTrafficNotMigrated(route, cfg)) markRouteNotMigrated(status, now);
}
