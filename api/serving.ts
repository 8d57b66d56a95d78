// serving.knative.dev/v1 types: the fields Tidal reads or writes. Plain JSON, safe inside workflows.
import type { KubeObject, ObjectMeta } from './meta.js';

export type ConditionStatus = 'True' | 'False' | 'Unknown';

export interface Condition {
  type: string;
  status: ConditionStatus;
  severity?: '' | 'Warning' | 'Info';
  reason?: string;
  message?: string;
  lastTransitionTime?: string;
}

export interface Status {
  observedGeneration?: number;
  conditions?: Condition[];
  annotations?: Record<string, string>;
}

export interface ContainerPort {
  name?: string;
  containerPort: number;
  protocol?: string;
}

export interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: unknown;
}

export interface Container {
  name?: string;
  image: string;
  command?: string[];
  args?: string[];
  env?: EnvVar[];
  ports?: ContainerPort[];
  [field: string]: unknown;
}

export interface RevisionSpec {
  containers: Container[];
  containerConcurrency?: number;
  timeoutSeconds?: number;
  responseStartTimeoutSeconds?: number;
  idleTimeoutSeconds?: number;
  serviceAccountName?: string;
  imagePullSecrets?: { name: string }[];
  [field: string]: unknown;
}

export interface RevisionTemplateSpec {
  metadata?: Pick<ObjectMeta, 'name' | 'generateName' | 'labels' | 'annotations'>;
  spec: RevisionSpec;
}

export interface ConfigurationSpec {
  template: RevisionTemplateSpec;
}

export interface TrafficTarget {
  tag?: string;
  revisionName?: string;
  configurationName?: string;
  latestRevision?: boolean;
  percent?: number;
  url?: string;
}

export interface RouteSpec {
  traffic?: TrafficTarget[];
}

export interface Addressable {
  url?: string;
  name?: string;
}

export interface ConfigurationStatusFields {
  latestReadyRevisionName?: string;
  latestCreatedRevisionName?: string;
}

export interface RouteStatusFields {
  url?: string;
  address?: Addressable;
  traffic?: TrafficTarget[];
}

export interface Service extends KubeObject {
  spec: ConfigurationSpec & RouteSpec;
  status?: Status & ConfigurationStatusFields & RouteStatusFields;
}

export interface Configuration extends KubeObject {
  spec: ConfigurationSpec;
  status?: Status & ConfigurationStatusFields;
}

export interface Route extends KubeObject {
  spec: RouteSpec;
  status?: Status & RouteStatusFields;
}

export interface ContainerStatus {
  name: string;
  imageDigest?: string;
}

export interface Revision extends KubeObject {
  spec: RevisionSpec;
  status?: Status & {
    serviceName?: string;
    logUrl?: string;
    containerStatuses?: ContainerStatus[];
    initContainerStatuses?: ContainerStatus[];
    actualReplicas?: number;
    desiredReplicas?: number;
  };
}
