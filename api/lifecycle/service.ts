// Service status transitions (knative/serving pkg/apis/serving/v1/service_lifecycle.go).
// Every function mutates the status it is given; `now` is an RFC3339 timestamp.
import { ConditionReady, cloneJson, conditionSet } from '../conditions.js';
import type { ConfigurationStatusFields, RouteStatusFields, Status } from '../serving.js';

export const ServiceConditionReady = ConditionReady;
export const ServiceConditionConfigurationsReady = 'ConfigurationsReady';
export const ServiceConditionRoutesReady = 'RoutesReady';

export type ServiceStatus = Status & ConfigurationStatusFields & RouteStatusFields;

/** Ready = ConfigurationsReady ∧ RoutesReady. */
export const serviceConditionSet = conditionSet(ServiceConditionReady, ServiceConditionConfigurationsReady, ServiceConditionRoutesReady);

/** Go's %q for the names used here (DNS labels): a double-quoted, escaped string. */
const quote = (s: string): string => JSON.stringify(s);

export function initializeServiceConditions(status: ServiceStatus, now: string): void {
  serviceConditionSet.initialize(status, now);
}

export function isServiceReady(status: ServiceStatus | undefined): boolean {
  return serviceConditionSet.isHappy(status);
}

/** A Configuration with our name exists but is not controlled by the Service. */
export function markConfigurationNotOwned(status: ServiceStatus, name: string, now: string): void {
  serviceConditionSet.markFalse(
    status,
    ServiceConditionConfigurationsReady,
    'NotOwned',
    `There is an existing Configuration ${quote(name)} that we do not own.`,
    now,
  );
}

/** A Route with our name exists but is not controlled by the Service. */
export function markRouteNotOwned(status: ServiceStatus, name: string, now: string): void {
  serviceConditionSet.markFalse(
    status,
    ServiceConditionRoutesReady,
    'NotOwned',
    `There is an existing Route ${quote(name)} that we do not own.`,
    now,
  );
}

/** The Configuration has not observed its latest generation yet. */
export function markConfigurationNotReconciled(status: ServiceStatus, now: string): void {
  serviceConditionSet.markUnknown(
    status,
    ServiceConditionConfigurationsReady,
    'OutOfDate',
    'The Configuration is still working to reflect the latest desired specification.',
    now,
  );
}

/** The Route has not observed its latest generation yet. Knative `MarkRouteNotReconciled`. */
export function markRouteNotReconciled(status: ServiceStatus, now: string): void {
  serviceConditionSet.markUnknown(
    status,
    ServiceConditionRoutesReady,
    'OutOfDate',
    'The Route is still working to reflect the latest desired specification.',
    now,
  );
}

/**
 * Alias of `markRouteNotReconciled` (RoutesReady Unknown `OutOfDate`), named as in Tidal's brief.
 * NB: upstream's `MarkRouteNotYetReady` is the TrafficNotMigrated transition, which here is `markRouteNotMigrated`.
 */
export const markRouteNotYetReady = markRouteNotReconciled;

/** Route Ready, but its status traffic does not match the spec yet. Upstream `MarkRouteNotYetReady`. */
export function markRouteNotMigrated(status: ServiceStatus, now: string): void {
  serviceConditionSet.markUnknown(
    status,
    ServiceConditionRoutesReady,
    'TrafficNotMigrated',
    'Traffic is not yet migrated to the latest revision.',
    now,
  );
}

/** A BYO revision name is taken by a conflicting Revision; the Route is left alone. */
export function markRevisionNameTaken(status: ServiceStatus, name: string, now: string): void {
  serviceConditionSet.markFalse(
    status,
    ServiceConditionRoutesReady,
    'RevisionNameTaken',
    `The revision name ${quote(name)} is taken by a conflicting Revision, so traffic will not be migrated`,
    now,
  );
}

/**
 * An honest RoutesReady=Unknown while Tidal has no Route reconciler: the caller picks the reason and message.
 * (Not an upstream transition.)
 */
export function markRoutesPending(status: ServiceStatus, reason: string, message: string, now: string): void {
  serviceConditionSet.markUnknown(status, ServiceConditionRoutesReady, reason, message, now);
}

function assignOrDelete<T extends object, K extends keyof T>(target: T, key: K, value: T[K] | undefined): void {
  if (value === undefined) delete target[key];
  else target[key] = value;
}

/**
 * Copies latestReadyRevisionName / latestCreatedRevisionName wholesale (absent fields are cleared) and mirrors the
 * Configuration's Ready into ConfigurationsReady with the same reason/message. A Configuration
 * without a Ready condition leaves the condition untouched.
 */
export function propagateConfigurationStatus(status: ServiceStatus, cfgStatus: Status & ConfigurationStatusFields, now: string): void {
  assignOrDelete(status, 'latestReadyRevisionName', cfgStatus.latestReadyRevisionName);
  assignOrDelete(status, 'latestCreatedRevisionName', cfgStatus.latestCreatedRevisionName);

  const ready = cfgStatus.conditions?.find((c) => c.type === ConditionReady);
  if (!ready) return;
  switch (ready.status) {
    case 'True':
      serviceConditionSet.markTrue(status, ServiceConditionConfigurationsReady, now);
      break;
    case 'False':
      serviceConditionSet.markFalse(status, ServiceConditionConfigurationsReady, ready.reason ?? '', ready.message ?? '', now);
      break;
    case 'Unknown':
      serviceConditionSet.markUnknown(status, ServiceConditionConfigurationsReady, ready.reason ?? '', ready.message ?? '', now);
      break;
  }
}

/**
 * Copies url, address and traffic wholesale (deep copies; absent fields are cleared) and mirrors the Route's Ready
 * into RoutesReady with the same reason/message. A Route without a Ready condition leaves the
 * condition untouched.
 */
export function propagateRouteStatus(status: ServiceStatus, routeStatus: Status & RouteStatusFields, now: string): void {
  assignOrDelete(status, 'url', routeStatus.url);
  assignOrDelete(status, 'address', routeStatus.address === undefined ? undefined : cloneJson(routeStatus.address));
  assignOrDelete(status, 'traffic', routeStatus.traffic === undefined ? undefined : cloneJson(routeStatus.traffic));

  const ready = routeStatus.conditions?.find((c) => c.type === ConditionReady);
  if (!ready) return;
  switch (ready.status) {
    case 'True':
      serviceConditionSet.markTrue(status, ServiceConditionRoutesReady, now);
      break;
    case 'False':
      serviceConditionSet.markFalse(status, ServiceConditionRoutesReady, ready.reason ?? '', ready.message ?? '', now);
      break;
    case 'Unknown':
      serviceConditionSet.markUnknown(status, ServiceConditionRoutesReady, ready.reason ?? '', ready.message ?? '', now);
      break;
  }
}
