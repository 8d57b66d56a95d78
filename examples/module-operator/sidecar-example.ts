// The `sidecar-example` module, as pure functions: its configuration, the Deployment it makes of a Revision (the
// user's containers plus its own sidecar where queue-proxy would stand), and the Revision conditions it reads off
// that Deployment. operator.ts does the I/O. The contract with Tidal is docs/adr/0009-modules.md.
import type { KubeObject } from '../../api/meta.js';
import type { Condition, Container, Revision } from '../../api/serving.js';

export const ModuleName = 'sidecar-example';
export const FieldManager = 'sidecar-example-operator';
export const SidecarName = 'sidecar-example';
/** Tidal's revision Service of a foreign module's Revision targets queue-proxy's serving port: the sidecar takes it. */
export const SidecarPort = 8012;

/** `tidal.dev/module-config` of this module. */
export interface SidecarConfig {
  sidecarImage: string;
  /** Replicas of the Deployment (default 1); this example runs no autoscaler. */
  replicas: number;
  /** Passed to the sidecar as SIDECAR_LOG_LEVEL. */
  logLevel: string;
}

/** The module's configuration from the Revision, or why it is unusable. */
export function parseSidecarConfig(rev: Revision): { ok: true; value: SidecarConfig } | { ok: false; reason: string } {
  const raw = rev.metadata.annotations?.['tidal.dev/module-config'] ?? '{}';
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    return { ok: false, reason: 'tidal.dev/module-config is not JSON' };
  }
  const o = (parsed ?? {}) as Record<string, unknown>;
  if (typeof o.sidecarImage !== 'string' || o.sidecarImage === '') return { ok: false, reason: 'sidecarImage: a non-empty string is required' };
  const replicas = o.replicas ?? 1;
  if (typeof replicas !== 'number' || !Number.isInteger(replicas) || replicas < 0) {
    return { ok: false, reason: 'replicas: must be a non-negative integer' };
  }
  const logLevel = o.logLevel ?? 'info';
  if (typeof logLevel !== 'string') return { ok: false, reason: 'logLevel: must be a string' };
  return { ok: true, value: { sidecarImage: o.sidecarImage, replicas, logLevel } };
}

/** Tidal pinned every image to a digest (or decided not to): the operator deploys only then. */
export function digestsResolved(rev: Revision): boolean {
  return (rev.status?.containerStatuses?.length ?? 0) === rev.spec.containers.length;
}

/** A probe port 0 (Knative's defaulted TCP readiness probe) means "the user port". */
function withProbePort(probe: unknown, port: number): unknown {
  if (probe === null || typeof probe !== 'object') return probe;
  const p = structuredClone(probe) as Record<string, Record<string, unknown> | undefined>;
  for (const handler of ['tcpSocket', 'httpGet', 'grpc']) {
    const h = p[handler];
    if (h && (h.port === undefined || h.port === 0)) h.port = port;
  }
  return p;
}

/**
 * `<rev>-deployment`, controller-owned by the Revision, its pods labelled `serving.knative.dev/revisionUID` (what
 * Tidal's revision Service selects) and `serving.knative.dev/revision`: the user's containers (images pinned to
 * Tidal's digests, Knative-only fields dropped) and the sidecar on port 8012, told the user port and the raw config.
 */
export function makeSidecarDeployment(rev: Revision, cfg: SidecarConfig): KubeObject & { spec: Record<string, unknown> } {
  const name = rev.metadata.name ?? '';
  const { containers, containerConcurrency: _c, timeoutSeconds: _t, responseStartTimeoutSeconds: _r, idleTimeoutSeconds: _i, ...podSpec } = rev.spec;
  const userPort = containers.flatMap((c) => c.ports ?? [])[0]?.containerPort ?? 8080;
  const digests = rev.status?.containerStatuses ?? [];
  const user: Container[] = containers.map((c, i) => {
    const out: Container = { ...c, image: digests[i]?.imageDigest ?? c.image };
    for (const probe of ['readinessProbe', 'livenessProbe', 'startupProbe'])
      if (out[probe] !== undefined) out[probe] = withProbePort(out[probe], userPort);
    return out;
  });
  const sidecar: Container = {
    name: SidecarName,
    image: cfg.sidecarImage,
    ports: [{ name: 'http', containerPort: SidecarPort }],
    env: [
      { name: 'USER_PORT', value: String(userPort) },
      { name: 'SIDECAR_LOG_LEVEL', value: cfg.logLevel },
      { name: 'MODULE_CONFIG', value: rev.metadata.annotations?.['tidal.dev/module-config'] ?? '{}' },
    ],
  };
  const labels = {
    'serving.knative.dev/revision': name,
    'serving.knative.dev/revisionUID': rev.metadata.uid ?? '',
    ...(rev.metadata.labels?.['serving.knative.dev/configuration']
      ? { 'serving.knative.dev/configuration': rev.metadata.labels['serving.knative.dev/configuration'] }
      : {}),
    ...(rev.metadata.labels?.['serving.knative.dev/service']
      ? { 'serving.knative.dev/service': rev.metadata.labels['serving.knative.dev/service'] }
      : {}),
    'tidal.dev/module': ModuleName,
  };
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: {
      name: `${name}-deployment`,
      namespace: rev.metadata.namespace ?? '',
      labels,
      ownerReferences: [
        { apiVersion: 'serving.knative.dev/v1', kind: 'Revision', name, uid: rev.metadata.uid ?? '', controller: true, blockOwnerDeletion: true },
      ],
    },
    spec: {
      replicas: cfg.replicas,
      selector: { matchLabels: { 'serving.knative.dev/revisionUID': rev.metadata.uid ?? '' } },
      template: { metadata: { labels }, spec: { ...podSpec, containers: [...user, sidecar] } },
    },
  };
}

/** What the operator reads of its Deployment. */
export interface DeploymentState {
  spec?: { replicas?: number };
  status?: { readyReplicas?: number; availableReplicas?: number; conditions?: { type: string; status: string; reason?: string; message?: string }[] };
}

/** The two conditions this module owns on a Revision, and its replica counts (ADR 0009). */
export interface ModuleStatus {
  conditions: { type: 'ResourcesAvailable' | 'ContainerHealthy'; status: 'True' | 'False' | 'Unknown'; reason?: string; message?: string }[];
  actualReplicas?: number;
  desiredReplicas?: number;
}

/** The module's conditions: from the Deployment, or False `InvalidModuleConfig` when its config is unusable. */
export function moduleStatus(deployment: DeploymentState | undefined, configProblem?: string): ModuleStatus {
  if (configProblem !== undefined) {
    const message = `module sidecar-example: ${configProblem}`;
    return {
      conditions: [
        { type: 'ResourcesAvailable', status: 'False', reason: 'InvalidModuleConfig', message },
        { type: 'ContainerHealthy', status: 'Unknown', reason: 'InvalidModuleConfig', message },
      ],
    };
  }
  if (!deployment) {
    const unknown = { status: 'Unknown', reason: 'Deploying', message: 'sidecar-example is creating the Deployment' } as const;
    return {
      conditions: [
        { type: 'ResourcesAvailable', ...unknown },
        { type: 'ContainerHealthy', ...unknown },
      ],
    };
  }
  const desired = deployment.spec?.replicas ?? 1;
  const available = deployment.status?.availableReplicas ?? 0;
  const progressing = deployment.status?.conditions?.find((c) => c.type === 'Progressing');
  const counts = { actualReplicas: deployment.status?.readyReplicas ?? 0, desiredReplicas: desired };
  if (progressing?.status === 'False') {
    const failed = { status: 'False', reason: progressing.reason ?? 'ProgressDeadlineExceeded', message: progressing.message ?? '' } as const;
    return {
      conditions: [
        { type: 'ResourcesAvailable', ...failed },
        { type: 'ContainerHealthy', ...failed },
      ],
      ...counts,
    };
  }
  if (available >= Math.min(desired, 1)) {
    return {
      conditions: [
        { type: 'ResourcesAvailable', status: 'True' },
        { type: 'ContainerHealthy', status: 'True' },
      ],
      ...counts,
    };
  }
  const waiting = { status: 'Unknown', reason: 'Deploying', message: `${available} of ${desired} replicas available` } as const;
  return {
    conditions: [
      { type: 'ResourcesAvailable', ...waiting },
      { type: 'ContainerHealthy', ...waiting },
    ],
    ...counts,
  };
}

/**
 * The Revision's conditions with this module's laid over them: every other condition (Tidal's Ready, Active) is kept
 * as read, and a condition that did not change keeps its lastTransitionTime. Undefined when nothing changes.
 */
export function mergeConditions(current: readonly Condition[] | undefined, mine: ModuleStatus['conditions'], now: string): Condition[] | undefined {
  let changed = false;
  const out = [...(current ?? [])].map((c) => ({ ...c }));
  for (const m of mine) {
    const i = out.findIndex((c) => c.type === m.type);
    const old = i >= 0 ? out[i] : undefined;
    const same = old !== undefined && old.status === m.status && (old.reason ?? '') === (m.reason ?? '') && (old.message ?? '') === (m.message ?? '');
    if (same) continue;
    changed = true;
    const next: Condition = {
      type: m.type,
      status: m.status,
      lastTransitionTime: now,
      ...(m.reason ? { reason: m.reason } : {}),
      ...(m.message ? { message: m.message } : {}),
    };
    if (i >= 0) out[i] = next;
    else out.push(next);
  }
  return changed ? out : undefined;
}
