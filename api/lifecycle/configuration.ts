// Configuration status transitions (knative/serving pkg/apis/serving/v1/configuration_lifecycle.go).
// Every function mutates the status it is given; `now` is an RFC3339 timestamp.
import { ConditionReady, conditionSet } from '../conditions.js';
import type { ConfigurationStatusFields, Status } from '../serving.js';

export const ConfigurationConditionReady = ConditionReady;

export type ConfigurationStatus = Status & ConfigurationStatusFields;

/** A living set with no dependents: only `Ready`. */
export const configurationConditionSet = conditionSet(ConfigurationConditionReady);

export function initializeConfigurationConditions(status: ConfigurationStatus, now: string): void {
  configurationConditionSet.initialize(status, now);
}

/** Ready is True. */
export function isConfigurationReady(status: ConfigurationStatus | undefined): boolean {
  return configurationConditionSet.isHappy(status);
}

/** Ready is True and latestCreated == latestReady (upstream `IsLatestReadyRevisionNameUpToDate`). */
export function isLatestReadyRevisionNameUpToDate(status: ConfigurationStatus | undefined): boolean {
  return isConfigurationReady(status) && status?.latestCreatedRevisionName === status?.latestReadyRevisionName;
}

/** Records the Revision of the current generation; Ready goes Unknown (empty reason) unless it is latestReady. */
export function setLatestCreatedRevisionName(status: ConfigurationStatus, name: string, now: string): void {
  status.latestCreatedRevisionName = name;
  if (status.latestReadyRevisionName !== name) {
    configurationConditionSet.markUnknown(status, ConfigurationConditionReady, '', '', now);
  }
}

/** Records the newest ready Revision; Ready goes True when it is also latestCreated. */
export function setLatestReadyRevisionName(status: ConfigurationStatus, name: string, now: string): void {
  status.latestReadyRevisionName = name;
  if (status.latestReadyRevisionName === status.latestCreatedRevisionName) {
    configurationConditionSet.markTrue(status, ConfigurationConditionReady, now);
  }
}

/** The latest created Revision failed. `message` is that Revision's Ready message. */
export function markLatestCreatedFailed(status: ConfigurationStatus, revisionName: string, message: string, now: string): void {
  configurationConditionSet.markFalse(
    status,
    ConfigurationConditionReady,
    'RevisionFailed',
    `Revision ${JSON.stringify(revisionName)} failed with message: ${message}.`,
    now,
  );
}

/** Creating the Revision failed (non-AlreadyExists error, or a BYO name conflict). */
export function markRevisionCreationFailed(status: ConfigurationStatus, errMessage: string, now: string): void {
  configurationConditionSet.markFalse(
    status,
    ConfigurationConditionReady,
    'RevisionFailed',
    `Revision creation failed with message: ${errMessage}.`,
    now,
  );
}
