// makeDeployment: the apps/v1 Deployment that runs a Revision's pods (Knative's MakeDeployment), with
// hakn's fixed replica count (no autoscaler, no activator) and an optional queue-proxy.
import { nanosToSeconds, parseGoDuration, parseGoInt } from '../api/config/index.js';
import { DefaultsSnapshotAnnotation } from '../api/defaults.js';
import type { RevisionConfig } from '../api/config/types.js';
import { Annotations, Labels } from '../api/labels.js';
import type { KubeObject, ObjectMeta } from '../api/meta.js';
import type { Container, EnvVar, Revision } from '../api/serving.js';
import { hpaClass } from '../api/validation-autoscaling.js';
import { deploymentHash } from './hash.js';
import { deploymentName } from './names.js';
import { RoutingState } from './revision.js';
import { scaleTargetInitialized } from './revision-status.js';
import { controllerRef } from './owner.js';
import {
  DRAIN_PATH,
  QueuePorts,
  USER_PORT_NAME,
  hasQueueProxy,
  isNetworkProbe,
  makeQueueContainer,
  probeOf,
  servingContainerIndex,
  userPortOf,
  type Probe,
  type QueueProxyOptions,
} from './queue.js';

// Keys not (yet) in api/labels.ts.
/** Label on the Deployment: hash of its desired spec + metadata; the Deployment is updated only when it changes. */
export const DEPLOYMENT_HASH_LABEL = 'serving.knative.dev/deployment-hash';
/** Label set to the revision name unless the user set it. */
export const APP_LABEL = 'app';
/** Revision annotations that never reach the Deployment or its pods (plus every `autoscaling.knative.dev*` key). */
export const LAST_PINNED_ANNOTATION = 'serving.knative.dev/lastPinned';
export const NO_GC_ANNOTATION = 'serving.knative.dev/no-gc';
export const AUTOSCALING_PREFIX = 'autoscaling.knative.dev';
/** Per-revision progress deadline, a Go duration such as `42s`. */
export const PROGRESS_DEADLINE_ANNOTATION = 'serving.knative.dev/progress-deadline';
/** Pod annotation telling kubectl logs/exec which container to pick. */
export const DEFAULT_CONTAINER_ANNOTATION = 'kubectl.kubernetes.io/default-container';
/** Scale annotations, current key first, then the legacy camelCase one Knative still accepts. */
export const ScaleAnnotations = {
  initialScale: ['autoscaling.knative.dev/initial-scale', 'autoscaling.knative.dev/initialScale'],
  minScale: ['autoscaling.knative.dev/min-scale', 'autoscaling.knative.dev/minScale'],
  maxScale: ['autoscaling.knative.dev/max-scale', 'autoscaling.knative.dev/maxScale'],
} as const;

/** Env vars Knative sets on every user container. */
const K_REVISION = 'K_REVISION';
const K_CONFIGURATION = 'K_CONFIGURATION';
const K_SERVICE = 'K_SERVICE';

export interface PodSpec {
  containers: Container[];
  initContainers?: Container[];
  terminationGracePeriodSeconds?: number;
  enableServiceLinks?: boolean;
  affinity?: unknown;
  [field: string]: unknown;
}

export interface PodTemplateSpec {
  metadata: { labels: Record<string, string>; annotations: Record<string, string> };
  spec: PodSpec;
}

export interface DeploymentSpec {
  /** Absent when an HPA owns the count (autoscaler class `hpa.autoscaling.knative.dev`). */
  replicas?: number;
  selector: { matchLabels: Record<string, string> };
  progressDeadlineSeconds: number;
  revisionHistoryLimit: number;
  strategy: { type: 'RollingUpdate'; rollingUpdate: { maxUnavailable: number } };
  template: PodTemplateSpec;
}

/** The apps/v1 Deployment as Tidal builds it: plain JSON, ready for a create or update call. */
export interface Deployment extends KubeObject {
  apiVersion: 'apps/v1';
  kind: 'Deployment';
  metadata: ObjectMeta & { name: string; namespace: string; labels: Record<string, string>; annotations: Record<string, string> };
  spec: DeploymentSpec;
}

/** Options that do not come from the Revision or the config maps. */
export type DeploymentOptions = QueueProxyOptions;

// ---- metadata ----

/**
 * Labels for everything made for a Revision (Deployment, pods, revision Service): the Revision's labels without
 * `serving.knative.dev/route` and `/routingState` (they change with routing, which must not roll pods), plus
 * `serving.knative.dev/revision`, `/revisionUID`, and `app=<rev>` unless the user set `app`.
 */
export function makeRevisionLabels(rev: Revision): Record<string, string> {
  const labels: Record<string, string> = {};
  for (const [k, v] of Object.entries(rev.metadata.labels ?? {})) {
    if (k !== Labels.route && k !== Labels.routingState) labels[k] = v;
  }
  const name = rev.metadata.name ?? '';
  labels[Labels.revision] = name;
  labels[Labels.revisionUID] = rev.metadata.uid ?? '';
  if (!(APP_LABEL in labels)) labels[APP_LABEL] = name;
  return labels;
}

/**
 * Annotations for the Deployment and its pods: the Revision's annotations without the routing/GC bookkeeping
 * (`serving.knative.dev/lastPinned`, `/no-gc`, `/routingStateModified`, `/routes`), without Tidal's frozen defaults
 * (`tidal.dev/defaults`) and without every key starting with `autoscaling.knative.dev` (scale changes must not roll
 * pods).
 */
export function makeRevisionAnnotations(rev: Revision): Record<string, string> {
  const drop = new Set<string>([
    LAST_PINNED_ANNOTATION,
    NO_GC_ANNOTATION,
    Annotations.routingStateModified,
    Annotations.routes,
    DefaultsSnapshotAnnotation,
  ]);
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(rev.metadata.annotations ?? {})) {
    if (!drop.has(k) && !k.startsWith(AUTOSCALING_PREFIX)) out[k] = v;
  }
  return out;
}

/** The selector of the Deployment and the revision Service: `{serving.knative.dev/revisionUID: <uid>}`. */
export function revisionSelector(rev: Revision): Record<string, string> {
  return { [Labels.revisionUID]: rev.metadata.uid ?? '' };
}

// ---- numbers from annotations ----

/** The first of `keys` present in `ann`, parsed as Go's strconv.ParseInt(v, 10, 32); undefined when absent or bad. */
function intAnnotation(ann: Record<string, string>, keys: readonly string[]): number | undefined {
  for (const k of keys) {
    const v = ann[k];
    if (v !== undefined) return parseGoInt(v, 32);
  }
  return undefined;
}

/**
 * A Revision no Route references any more: the labeler made it `reserve` (upstream's PodAutoscaler turns
 * Unreachable then, and the Revision scales to zero whatever its min-scale).
 */
export function isReserve(rev: Revision): boolean {
  return rev.metadata.labels?.[Labels.routingState] === RoutingState.reserve;
}

/**
 * A `reserve` Revision whose pods once reached their threshold (its scale target initialized) runs none. One that
 * never got there — labelled reserve before it was first Ready, say its name reused while the old Revision's Route
 * let it go — first reaches its serving count, as upstream's initial scale does, so it can turn Ready at all.
 */
export function holdsNoPods(rev: Revision): boolean {
  return isReserve(rev) && scaleTargetInitialized(rev);
}

/**
 * hakn's fixed replica count (there is no autoscaler to grow the Deployment later):
 * `max(initialScale, minScale)`, capped by maxScale when that is > 0 — or 0 for a `reserve` Revision. Each comes
 * from the Revision annotation (`autoscaling.knative.dev/initial-scale`, `/min-scale`, `/max-scale`, or their legacy
 * camelCase keys) when it is a non-negative integer, else from config-autoscaler.
 */
export function desiredReplicas(rev: Revision, cfg: RevisionConfig): number {
  return holdsNoPods(rev) ? 0 : servingReplicas(rev, cfg);
}

/** The replicas the Revision runs while a Route references it: `max(initialScale, minScale)`, capped by maxScale. */
export function servingReplicas(rev: Revision, cfg: RevisionConfig): number {
  const { initial, min, max } = scaleBounds(rev, cfg);
  const replicas = Math.max(initial, min);
  return max > 0 ? Math.min(replicas, max) : replicas;
}

/**
 * How many ready pods make the Revision's scale target initialized and it `Active` (upstream `activeThreshold`):
 * before it was first initialized `max(minScale, initialScale)`, after `max(minScale, 1)`, capped by maxScale when
 * that is > 0. A `reserve` Revision has no min-scale (upstream ignores it for an Unreachable PodAutoscaler).
 */
export function activeThreshold(rev: Revision, cfg: RevisionConfig, initialized: boolean): number {
  const { initial, min, max } = scaleBounds(rev, cfg);
  const floor = holdsNoPods(rev) ? 0 : min;
  const threshold = Math.max(floor, initialized ? 1 : initial);
  return max > 0 ? Math.min(threshold, max) : threshold;
}

/**
 * The Revision's scale bounds as Knative's PodAutoscaler.ScaleBounds reads them: each from the annotation when it is
 * a non-negative integer, else from config-autoscaler (hakn: min-scale 2). `max` 0 means unbounded.
 */
export function scaleBounds(rev: Revision, cfg: RevisionConfig): { initial: number; min: number; max: number } {
  const ann = rev.metadata.annotations ?? {};
  const pick = (keys: readonly string[], fallback: number): number => {
    const v = intAnnotation(ann, keys);
    return v !== undefined && v >= 0 ? v : fallback;
  };
  return {
    initial: pick(ScaleAnnotations.initialScale, cfg.autoscaler.initialScale),
    min: pick(ScaleAnnotations.minScale, cfg.autoscaler.minScale),
    max: pick(ScaleAnnotations.maxScale, cfg.autoscaler.maxScale),
  };
}

/**
 * `progressDeadlineSeconds`: the annotation `serving.knative.dev/progress-deadline` (a Go duration, truncated to
 * whole seconds) when it parses to a positive value, else config-deployment `progress-deadline`.
 */
export function progressDeadlineSeconds(rev: Revision, cfg: RevisionConfig): number {
  const v = rev.metadata.annotations?.[PROGRESS_DEADLINE_ANNOTATION];
  if (v !== undefined) {
    const ns = parseGoDuration(v);
    if (ns !== undefined) {
      const seconds = Math.trunc(nanosToSeconds(ns)); // Go: int32(d.Seconds())
      if (seconds > 0) return seconds;
    }
  }
  return cfg.deployment.progressDeadlineSeconds;
}

// ---- pod spec ----

/** RevisionSpec fields that are Knative's, not the PodSpec's (containers are rebuilt separately). */
const knativeOnlyFields = ['containers', 'containerConcurrency', 'timeoutSeconds', 'responseStartTimeoutSeconds', 'idleTimeoutSeconds'] as const;

/** Fill an unset (absent, 0, '') HTTP/TCP/gRPC probe port with the user port. */
function withPortFilled(p: Probe, userPort: number): Probe {
  const out = structuredClone(p);
  const unset = (port: number | string | undefined) => port === undefined || port === 0 || port === '';
  if (out.httpGet && unset(out.httpGet.port)) out.httpGet.port = userPort;
  if (out.tcpSocket && unset(out.tcpSocket.port)) out.tcpSocket.port = userPort;
  if (out.grpc && unset(out.grpc.port)) out.grpc.port = userPort;
  return out;
}

/** Knative's liveness rewrite: an HTTP or TCP liveness probe always targets the user port. */
function withPortForced(p: Probe, userPort: number): Probe {
  const out = structuredClone(p);
  if (out.httpGet) out.httpGet.port = userPort;
  else if (out.tcpSocket) out.tcpSocket.port = userPort;
  return out;
}

function knativeEnv(rev: Revision): EnvVar[] {
  const labels = rev.metadata.labels ?? {};
  return [
    { name: K_REVISION, value: rev.metadata.name ?? '' },
    { name: K_CONFIGURATION, value: labels[Labels.configuration] ?? '' },
    { name: K_SERVICE, value: labels[Labels.service] ?? '' },
  ];
}

function digestOr(image: string, statuses: { imageDigest?: string }[] | undefined, i: number): string {
  const digest = statuses?.[i]?.imageDigest;
  return digest !== undefined && digest !== '' ? digest : image;
}

/**
 * One user container as the pod runs it. Every container: resolved digest as image, K_REVISION / K_CONFIGURATION /
 * K_SERVICE appended to env, stdin/tty false, terminationMessagePolicy FallbackToLogsOnError unless set; with
 * queue-proxy, the preStop hook GET :8022/wait-for-drain and no HTTP/TCP/gRPC readiness probe (queue-proxy runs
 * it). The serving container also gets the single port `user-port`, env PORT before the K_* vars, and its liveness
 * probe aimed at the user port; without queue-proxy its readiness probe stays, with an unset port filled in.
 */
function makeUserContainer(rev: Revision, index: number, serving: boolean, withQueue: boolean): Container {
  const c = structuredClone(rev.spec.containers[index]!);
  c.image = digestOr(c.image, rev.status?.containerStatuses, index);
  const userPort = userPortOf(rev);
  const envs: EnvVar[] = [...(c.env ?? [])];
  if (serving) {
    c.ports = [{ name: USER_PORT_NAME, containerPort: userPort }];
    envs.push({ name: 'PORT', value: String(userPort) });
  }
  envs.push(...knativeEnv(rev));
  c.env = envs;
  c.stdin = false;
  c.tty = false;
  if (c.terminationMessagePolicy === undefined || c.terminationMessagePolicy === '') {
    c.terminationMessagePolicy = 'FallbackToLogsOnError';
  }

  const readiness = probeOf(c, 'readinessProbe');
  if (withQueue) {
    // The hook calls queue-proxy's admin port: kubelet runs preStop before SIGTERM, so the user container keeps
    // serving until queue-proxy has drained in-flight requests.
    c.lifecycle = { preStop: { httpGet: { port: QueuePorts.admin, path: DRAIN_PATH } } };
    if (isNetworkProbe(readiness)) delete c.readinessProbe;
  } else if (serving && readiness) {
    c.readinessProbe = withPortFilled(readiness, userPort);
  }
  if (serving) {
    const liveness = probeOf(c, 'livenessProbe');
    if (liveness) c.livenessProbe = withPortForced(liveness, userPort);
  }
  return c;
}

/**
 * The pod spec: a copy of the Revision's PodSpec without the Knative-only fields (containerConcurrency,
 * timeoutSeconds, responseStartTimeoutSeconds, idleTimeoutSeconds), with the user containers rewritten (see
 * makeUserContainer), images of init containers replaced by their resolved digests, queue-proxy appended when
 * configured, `terminationGracePeriodSeconds = timeoutSeconds`, `enableServiceLinks` from config-defaults when unset,
 * and, when config-deployment `default-affinity-type` is `prefer-spread-revision-over-nodes` and the user set no
 * affinity, a preferred (weight 100) pod anti-affinity spreading the revision's pods over nodes.
 */
export function makePodSpec(rev: Revision, cfg: RevisionConfig, opts: DeploymentOptions): PodSpec {
  const podFields: Record<string, unknown> = structuredClone(rev.spec);
  const timeoutSeconds = rev.spec.timeoutSeconds;
  for (const k of knativeOnlyFields) delete podFields[k];
  const withQueue = hasQueueProxy(cfg);
  const servingIndex = servingContainerIndex(rev.spec);

  const containers = rev.spec.containers.map((_, i) => makeUserContainer(rev, i, i === servingIndex, withQueue));
  if (withQueue) containers.push(makeQueueContainer(rev, cfg, opts));

  const pod: PodSpec = { ...podFields, containers };
  const init = podFields.initContainers;
  if (Array.isArray(init)) {
    pod.initContainers = (init as Container[]).map((c, i) => ({
      ...c,
      image: digestOr(c.image, rev.status?.initContainerStatuses, i),
    }));
  }
  if (timeoutSeconds !== undefined) pod.terminationGracePeriodSeconds = timeoutSeconds;
  else delete pod.terminationGracePeriodSeconds;
  if (pod.enableServiceLinks === undefined && cfg.defaults.enableServiceLinks !== undefined) {
    pod.enableServiceLinks = cfg.defaults.enableServiceLinks;
  }
  if (cfg.deployment.defaultAffinityType === 'prefer-spread-revision-over-nodes' && pod.affinity === undefined) {
    pod.affinity = {
      podAntiAffinity: {
        preferredDuringSchedulingIgnoredDuringExecution: [
          {
            weight: 100,
            podAffinityTerm: {
              topologyKey: 'kubernetes.io/hostname',
              labelSelector: { matchLabels: { [Labels.revision]: rev.metadata.name ?? '' } },
            },
          },
        ],
      },
    };
  }
  return pod;
}

// ---- the Deployment ----

/**
 * The desired Deployment for `rev` (Knative's MakeDeployment), hakn flavour:
 *
 * - name `ChildName(rev, "-deployment")`, the Revision's namespace, controller-owned by the Revision;
 * - labels {@link makeRevisionLabels} plus `serving.knative.dev/deployment-hash` (Deployment only, not the pods);
 *   annotations {@link makeRevisionAnnotations}; the pod template also gets `kubectl.kubernetes.io/default-container`
 *   naming the serving container;
 * - selector `{serving.knative.dev/revisionUID: <uid>}`, replicas {@link desiredReplicas} (none with the HPA autoscaler
 *   class, resources/hpa.ts, unless the Revision is `reserve`: then 0), progressDeadlineSeconds
 *   {@link progressDeadlineSeconds}, revisionHistoryLimit 0, RollingUpdate with maxUnavailable 0;
 * - pod spec {@link makePodSpec}; queue-proxy only when config-deployment `queue-sidecar-image` is not empty.
 *
 * Without queue-proxy nothing listens on 8022, so no preStop hook is set (it would only fail at every pod stop), and
 * the user container keeps its readiness probe for the kubelet to run.
 *
 * The hash covers the whole desired spec and metadata, so "hash label equal" means "nothing to update".
 */
export function makeDeployment(rev: Revision, cfg: RevisionConfig, opts: DeploymentOptions): Deployment {
  const labels = makeRevisionLabels(rev);
  const annotations = makeRevisionAnnotations(rev);
  const podSpec = makePodSpec(rev, cfg, opts);
  const servingIndex = servingContainerIndex(rev.spec);
  const servingName = servingIndex < 0 ? '' : (rev.spec.containers[servingIndex]!.name ?? '');

  // With the HPA class the HPA owns the count: the field is left out of what Tidal applies (server-side apply then
  // leaves it to the HPA's writes), so Tidal never fights the autoscaler. A `reserve` Revision has no HPA: 0 replicas.
  const hpa = (rev.metadata.annotations?.['autoscaling.knative.dev/class'] ?? cfg.autoscaler.podAutoscalerClass) === hpaClass;
  const spec: DeploymentSpec = {
    ...(hpa && !holdsNoPods(rev) ? {} : { replicas: desiredReplicas(rev, cfg) }),
    selector: { matchLabels: revisionSelector(rev) },
    progressDeadlineSeconds: progressDeadlineSeconds(rev, cfg),
    revisionHistoryLimit: 0,
    strategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 0 } },
    template: {
      metadata: {
        labels: { ...labels },
        annotations: { ...annotations, [DEFAULT_CONTAINER_ANNOTATION]: servingName },
      },
      spec: podSpec,
    },
  };

  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: {
      name: deploymentName(rev.metadata.name ?? ''),
      namespace: rev.metadata.namespace ?? '',
      labels: { ...labels, [DEPLOYMENT_HASH_LABEL]: deploymentHash({ spec, annotations, labels }) },
      annotations,
      ownerReferences: [controllerRef(rev)],
    },
    spec,
  };
}
