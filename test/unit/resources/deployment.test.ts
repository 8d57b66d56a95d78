import { describe, expect, it } from 'vitest';
import type { Container } from '../../../api/serving.js';
import {
  activeThreshold,
  desiredReplicas,
  holdsNoPods,
  makeDeployment,
  makePodSpec,
  makeRevisionAnnotations,
  progressDeadlineSeconds,
  type Deployment,
} from '../../../resources/deployment.js';
import { deploymentHash, fnv32a, stableStringify, toBase36 } from '../../../resources/hash.js';
import { encodeProbe, makeQueueContainer, queueSideReadinessProbe } from '../../../resources/queue.js';

/** Knative v0.51's json.Marshal of its default observability config (Go's output). */
const KNATIVE_DEFAULT_OBSERVABILITY_CONFIG =
  '{"tracing":{"protocol":"none"},"metrics":{"protocol":"none"},"runtime":{"profiling":"disabled","exportInterval":15000000000},"requestMetrics":{"protocol":"none"},"requestLogTemplate":"{\\"httpRequest\\": {\\"requestMethod\\": \\"{{.Request.Method}}\\", \\"requestUrl\\": \\"{{js .Request.RequestURI}}\\", \\"requestSize\\": \\"{{.Request.ContentLength}}\\", \\"status\\": {{.Response.Code}}, \\"responseSize\\": \\"{{.Response.Size}}\\", \\"userAgent\\": \\"{{js .Request.UserAgent}}\\", \\"remoteIp\\": \\"{{js .Request.RemoteAddr}}\\", \\"serverIp\\": \\"{{.Revision.PodIP}}\\", \\"referer\\": \\"{{js .Request.Referer}}\\", \\"latency\\": \\"{{.Response.Latency}}s\\", \\"protocol\\": \\"{{.Request.Proto}}\\"}, \\"traceId\\": \\"{{.TraceID}}\\"}"}';
import {
  revision,
  revisionConfig,
  withContainerStatuses,
  withContainers,
  withRevAnnotations,
  withRevLabels,
  withScaleTargetInitialized,
  withUserContainer,
  withoutQueueProxy,
} from '../../fixtures/revision.js';

const opts = { systemNamespace: 'tidal-system' };
const hashPattern = /^[0-9a-z]{1,7}$/;

const ownerRef = {
  apiVersion: 'serving.knative.dev/v1',
  kind: 'Revision',
  name: 'hello-00001',
  uid: 'uid-hello-00001',
  controller: true,
  blockOwnerDeletion: true,
};

const revisionLabels = {
  'serving.knative.dev/configuration': 'hello',
  'serving.knative.dev/configurationGeneration': '1',
  'serving.knative.dev/configurationUID': 'uid-hello',
  'serving.knative.dev/service': 'hello',
  'serving.knative.dev/serviceUID': 'uid-svc-hello',
  'serving.knative.dev/revision': 'hello-00001',
  'serving.knative.dev/revisionUID': 'uid-hello-00001',
  app: 'hello-00001',
};

const antiAffinity = {
  podAntiAffinity: {
    preferredDuringSchedulingIgnoredDuringExecution: [
      {
        weight: 100,
        podAffinityTerm: {
          topologyKey: 'kubernetes.io/hostname',
          labelSelector: { matchLabels: { 'serving.knative.dev/revision': 'hello-00001' } },
        },
      },
    ],
  },
};

const knativeEnv = [
  { name: 'K_REVISION', value: 'hello-00001' },
  { name: 'K_CONFIGURATION', value: 'hello' },
  { name: 'K_SERVICE', value: 'hello' },
];

const preStop = { preStop: { httpGet: { port: 8022, path: '/wait-for-drain' } } };

/** The serving container of the fixture revision with queue-proxy injected. */
function servingContainer(patch: Partial<Container> = {}): Container {
  return {
    name: 'user-container',
    image: 'ghcr.io/example/hello:1',
    ports: [{ name: 'user-port', containerPort: 8080 }],
    env: [{ name: 'PORT', value: '8080' }, ...knativeEnv],
    lifecycle: preStop,
    stdin: false,
    tty: false,
    terminationMessagePolicy: 'FallbackToLogsOnError',
    ...patch,
  };
}

/** The env of queue-proxy for the fixture revision; `patch` overrides values by name. */
function queueEnv(patch: Record<string, string> = {}) {
  const plain = (name: string, value: string) => ({ name, value: patch[name] ?? value });
  return [
    plain('SERVING_NAMESPACE', 'default'),
    plain('SERVING_SERVICE', 'hello'),
    plain('SERVING_CONFIGURATION', 'hello'),
    plain('SERVING_REVISION', 'hello-00001'),
    plain('QUEUE_SERVING_PORT', '8012'),
    plain('QUEUE_SERVING_TLS_PORT', '8112'),
    plain('CONTAINER_CONCURRENCY', '0'),
    plain('REVISION_TIMEOUT_SECONDS', '300'),
    plain('REVISION_RESPONSE_START_TIMEOUT_SECONDS', '0'),
    plain('REVISION_IDLE_TIMEOUT_SECONDS', '0'),
    { name: 'SERVING_POD', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
    { name: 'SERVING_POD_IP', valueFrom: { fieldRef: { fieldPath: 'status.podIP' } } },
    plain('SERVING_LOGGING_CONFIG', ''),
    plain('SERVING_LOGGING_LEVEL', ''),
    plain('USER_PORT', '8080'),
    plain('SYSTEM_NAMESPACE', 'tidal-system'),
    plain('SERVING_READINESS_PROBE', '{"tcpSocket":{"port":8080,"host":"127.0.0.1"},"successThreshold":1}'),
    { name: 'HOST_IP', valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: 'status.hostIP' } } },
    plain('ENABLE_HTTP2_AUTO_DETECTION', 'false'),
    plain('ENABLE_HTTP_FULL_DUPLEX', 'false'),
    plain('ROOT_CA', ''),
    plain('QUEUE_PROXY_TLS_MIN_VERSION', ''),
    plain('QUEUE_PROXY_TLS_MAX_VERSION', ''),
    plain('QUEUE_PROXY_TLS_CIPHER_SUITES', ''),
    plain('QUEUE_PROXY_TLS_CURVE_PREFERENCES', ''),
    plain('ENABLE_MULTI_CONTAINER_PROBES', 'false'),
    plain('OBSERVABILITY_CONFIG', KNATIVE_DEFAULT_OBSERVABILITY_CONFIG),
  ];
}

function queueContainer(patch: Partial<Container> = {}): Container {
  return {
    name: 'queue-proxy',
    image: 'ghcr.io/tidal/queue-proxy:test',
    resources: { requests: { cpu: '25m' } },
    ports: [
      { name: 'http-autometric', containerPort: 9090 },
      { name: 'http-usermetric', containerPort: 9091 },
      { name: 'queue-port', containerPort: 8012 },
      { name: 'https-port', containerPort: 8112 },
    ],
    readinessProbe: { successThreshold: 1, httpGet: { port: 8012, httpHeaders: [{ name: 'K-Network-Probe', value: 'queue' }] } },
    securityContext: {
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      runAsNonRoot: true,
      capabilities: { drop: ['ALL'] },
      seccompProfile: { type: 'RuntimeDefault' },
    },
    env: queueEnv(),
    ...patch,
  };
}

describe('makeDeployment', () => {
  it('the Deployment of a webhook-defaulted Revision with queue-proxy (golden)', () => {
    const rev = revision('hello-00001', 'default', withRevLabels({ 'serving.knative.dev/route': 'hello' }));
    const want: Deployment = {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: {
        name: 'hello-00001-deployment',
        namespace: 'default',
        labels: { ...revisionLabels, 'serving.knative.dev/deployment-hash': expect.stringMatching(hashPattern) as string },
        annotations: { 'serving.knative.dev/creator': 'alice' },
        ownerReferences: [ownerRef],
      },
      spec: {
        replicas: 1,
        selector: { matchLabels: { 'serving.knative.dev/revisionUID': 'uid-hello-00001' } },
        progressDeadlineSeconds: 600,
        revisionHistoryLimit: 0,
        strategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 0 } },
        template: {
          metadata: {
            labels: revisionLabels,
            annotations: { 'serving.knative.dev/creator': 'alice', 'kubectl.kubernetes.io/default-container': 'user-container' },
          },
          spec: {
            containers: [servingContainer(), queueContainer()],
            enableServiceLinks: false,
            terminationGracePeriodSeconds: 300,
            affinity: antiAffinity,
          },
        },
      },
    };
    expect(makeDeployment(rev, revisionConfig(), opts)).toEqual(want);
  });

  it('the hash label is FNV-32a/base36 of the desired spec + annotations + labels', () => {
    const d = makeDeployment(revision('hello-00001', 'default'), revisionConfig(), opts);
    const { 'serving.knative.dev/deployment-hash': hash, ...labels } = d.metadata.labels;
    expect(hash).toBe(deploymentHash({ spec: d.spec, annotations: d.metadata.annotations, labels }));
    // Same input, same hash; any change of spec or metadata, another hash.
    expect(makeDeployment(revision('hello-00001', 'default'), revisionConfig(), opts).metadata.labels).toEqual(d.metadata.labels);
    const changedImage = makeDeployment(revision('hello-00001', 'default', withUserContainer({ image: 'other' })), revisionConfig(), opts);
    const changedAnn = makeDeployment(revision('hello-00001', 'default', withRevAnnotations({ a: 'b' })), revisionConfig(), opts);
    const changedLabel = makeDeployment(revision('hello-00001', 'default', withRevLabels({ a: 'b' })), revisionConfig(), opts);
    for (const other of [changedImage, changedAnn, changedLabel]) {
      expect(other.metadata.labels['serving.knative.dev/deployment-hash']).not.toBe(hash);
    }
  });

  it('routing bookkeeping on the Revision does not change the Deployment hash', () => {
    const base = makeDeployment(revision('hello-00001', 'default'), revisionConfig(), opts);
    const rerouted = makeDeployment(
      revision(
        'hello-00001',
        'default',
        withRevLabels({ 'serving.knative.dev/routingState': 'active', 'serving.knative.dev/route': 'x' }),
        withRevAnnotations({
          'serving.knative.dev/routes': 'a,b',
          'serving.knative.dev/routingStateModified': '2030-01-01T00:00:00Z',
          'serving.knative.dev/lastPinned': '123',
          'serving.knative.dev/no-gc': 'true',
          'autoscaling.knative.dev/target': '50',
        }),
      ),
      revisionConfig(),
      opts,
    );
    expect(rerouted).toEqual(base);
  });

  it('a user-set app label is kept', () => {
    const d = makeDeployment(revision('hello-00001', 'default', withRevLabels({ app: 'mine' })), revisionConfig(), opts);
    expect(d.metadata.labels.app).toBe('mine');
    expect(d.spec.template.metadata.labels.app).toBe('mine');
    expect(d.spec.template.metadata.labels).not.toHaveProperty(['serving.knative.dev/deployment-hash']);
  });

  it('Deployment/pod annotations drop routing, GC and autoscaling keys; the pod names its default container', () => {
    const rev = revision(
      'hello-00001',
      'default',
      withRevAnnotations({
        'serving.knative.dev/lastPinned': '1',
        'serving.knative.dev/no-gc': 'true',
        'autoscaling.knative.dev/min-scale': '3',
        'autoscaling.knative.dev/class': 'kpa.autoscaling.knative.dev',
        'serving.knative.dev/progress-deadline': '42s',
        'sidecar.istio.io/inject': 'true',
      }),
    );
    expect(makeRevisionAnnotations(rev)).toEqual({
      'serving.knative.dev/creator': 'alice',
      'serving.knative.dev/progress-deadline': '42s',
      'sidecar.istio.io/inject': 'true',
    });
    const d = makeDeployment(rev, revisionConfig(), opts);
    expect(d.metadata.annotations).toEqual(makeRevisionAnnotations(rev));
    expect(d.spec.template.metadata.annotations).toEqual({
      ...makeRevisionAnnotations(rev),
      'kubectl.kubernetes.io/default-container': 'user-container',
    });
  });

  it('progressDeadlineSeconds from the annotation (Go duration) else config', () => {
    const cfg = revisionConfig((c) => void (c.deployment.progressDeadlineSeconds = 503));
    const withAnn = (v: string) => revision('r', 'ns', withRevAnnotations({ 'serving.knative.dev/progress-deadline': v }));
    expect(progressDeadlineSeconds(revision('r', 'ns'), cfg)).toBe(503);
    expect(progressDeadlineSeconds(withAnn('42s'), cfg)).toBe(42);
    expect(progressDeadlineSeconds(withAnn('1m30s'), cfg)).toBe(90);
    expect(progressDeadlineSeconds(withAnn('1.5h'), cfg)).toBe(5400);
    expect(progressDeadlineSeconds(withAnn('2500ms'), cfg)).toBe(2); // truncated like int32(d.Seconds())
    expect(progressDeadlineSeconds(withAnn('42'), cfg)).toBe(503); // no unit: not a Go duration
    expect(progressDeadlineSeconds(withAnn('0s'), cfg)).toBe(503); // Kubernetes rejects 0
  });

  it('a reserve Revision (no Route references it) runs 0 replicas whatever its min-scale, HPA class included', () => {
    const reserve = (annotations: Record<string, string> = {}) =>
      revision(
        'hello-00001',
        'default',
        withRevLabels({ 'serving.knative.dev/routingState': 'reserve' }),
        withRevAnnotations({ 'autoscaling.knative.dev/min-scale': '3', ...annotations }),
        withScaleTargetInitialized,
      );
    expect(desiredReplicas(reserve(), revisionConfig())).toBe(0);
    expect(makeDeployment(reserve(), revisionConfig(), opts).spec.replicas).toBe(0);
    expect(makeDeployment(reserve({ 'autoscaling.knative.dev/class': 'hpa.autoscaling.knative.dev' }), revisionConfig(), opts).spec.replicas).toBe(0);
    // Active again: min-scale, or (HPA class) no count of Tidal's at all.
    const active = (annotations: Record<string, string> = {}) =>
      revision(
        'hello-00001',
        'default',
        withRevLabels({ 'serving.knative.dev/routingState': 'active' }),
        withRevAnnotations({ 'autoscaling.knative.dev/min-scale': '3', ...annotations }),
      );
    expect(makeDeployment(active(), revisionConfig(), opts).spec.replicas).toBe(3);
    expect(
      makeDeployment(active({ 'autoscaling.knative.dev/class': 'hpa.autoscaling.knative.dev' }), revisionConfig(), opts).spec,
    ).not.toHaveProperty('replicas');
  });

  it('a reserve Revision whose pods never reached their threshold first runs its serving count, so it can turn Ready', () => {
    const never = revision(
      'hello-00002',
      'default',
      withRevLabels({ 'serving.knative.dev/routingState': 'reserve' }),
      withRevAnnotations({ 'autoscaling.knative.dev/min-scale': '3' }),
    );
    expect(holdsNoPods(never)).toBe(false);
    expect(desiredReplicas(never, revisionConfig())).toBe(3);
    expect(activeThreshold(never, revisionConfig(), false)).toBe(3);
    const hpaNever = revision(
      'hello-00002',
      'default',
      withRevLabels({ 'serving.knative.dev/routingState': 'reserve' }),
      withRevAnnotations({ 'autoscaling.knative.dev/class': 'hpa.autoscaling.knative.dev' }),
    );
    expect(makeDeployment(hpaNever, revisionConfig(), opts).spec).not.toHaveProperty('replicas');
  });

  it('activeThreshold (upstream): max(min-scale, initial-scale) until first initialized, max(min-scale, 1) after; no min-scale when reserve', () => {
    const cfg = (initialScale: number, minScale: number, maxScale: number) =>
      revisionConfig((c) => void (c.autoscaler = { ...c.autoscaler, initialScale, minScale, maxScale }));
    const rev = (state = 'active', a: Record<string, string> = {}) =>
      revision('r', 'ns', withRevLabels({ 'serving.knative.dev/routingState': state }), withRevAnnotations(a));
    expect(activeThreshold(rev(), cfg(5, 2, 0), false)).toBe(5);
    expect(activeThreshold(rev(), cfg(5, 2, 0), true)).toBe(2);
    expect(activeThreshold(rev(), cfg(1, 0, 0), true)).toBe(1);
    expect(activeThreshold(rev(), cfg(5, 2, 3), false)).toBe(3);
    expect(activeThreshold(rev('active', { 'autoscaling.knative.dev/min-scale': '4' }), cfg(1, 2, 0), true)).toBe(4);
    const initializedReserve = revision(
      'r',
      'ns',
      withRevLabels({ 'serving.knative.dev/routingState': 'reserve' }),
      withRevAnnotations({ 'autoscaling.knative.dev/min-scale': '4' }),
      withScaleTargetInitialized,
    );
    expect(activeThreshold(initializedReserve, cfg(1, 2, 0), true)).toBe(1);
  });

  it('replicas (hakn) = max(initial-scale, min-scale) capped by max-scale, annotations over config', () => {
    const cfg = (initialScale: number, minScale: number, maxScale: number) =>
      revisionConfig((c) => void (c.autoscaler = { ...c.autoscaler, initialScale, minScale, maxScale }));
    const rev = (a: Record<string, string> = {}) => revision('r', 'ns', withRevAnnotations(a));
    expect(desiredReplicas(rev(), cfg(1, 0, 0))).toBe(1); // Knative default
    expect(desiredReplicas(rev(), cfg(1, 2, 0))).toBe(2); // hakn's min-scale 2
    expect(desiredReplicas(rev(), cfg(10, 2, 0))).toBe(10);
    expect(desiredReplicas(rev(), cfg(10, 2, 4))).toBe(4);
    expect(desiredReplicas(rev({ 'autoscaling.knative.dev/initial-scale': '20' }), cfg(10, 0, 0))).toBe(20);
    expect(desiredReplicas(rev({ 'autoscaling.knative.dev/min-scale': '5' }), cfg(1, 2, 0))).toBe(5);
    expect(desiredReplicas(rev({ 'autoscaling.knative.dev/min-scale': '5', 'autoscaling.knative.dev/max-scale': '3' }), cfg(1, 2, 0))).toBe(3);
    expect(desiredReplicas(rev({ 'autoscaling.knative.dev/initialScale': '7' }), cfg(1, 0, 0))).toBe(7); // legacy key
    expect(desiredReplicas(rev({ 'autoscaling.knative.dev/initial-scale': '0' }), cfg(1, 0, 0))).toBe(0);
    expect(desiredReplicas(rev({ 'autoscaling.knative.dev/initial-scale': 'lots' }), cfg(3, 0, 0))).toBe(3); // bad → config
    expect(desiredReplicas(rev({ 'autoscaling.knative.dev/max-scale': '0' }), cfg(3, 0, 2))).toBe(3); // 0 = unbounded
    const d = makeDeployment(rev({ 'autoscaling.knative.dev/min-scale': '3' }), cfg(1, 2, 0), opts);
    expect(d.spec.replicas).toBe(3);
    expect(d.metadata.annotations).not.toHaveProperty(['autoscaling.knative.dev/min-scale']);
  });

  it('resolved digests replace the images of containers and init containers', () => {
    const rev = revision(
      'hello-00001',
      'default',
      withContainers(
        { name: 'user-container', image: 'ghcr.io/example/hello:1', ports: [{ containerPort: 8888 }] },
        { name: 'sidecar', image: 'ghcr.io/example/side:1' },
      ),
      (r) =>
        void (r.spec.initContainers = [
          { name: 'init', image: 'busybox:1' },
          { name: 'init2', image: 'kind.local/x' },
        ]),
      withContainerStatuses(
        [
          { name: 'user-container', imageDigest: 'ghcr.io/example/hello@sha256:aaa' },
          { name: 'sidecar', imageDigest: 'ghcr.io/example/side@sha256:bbb' },
        ],
        [
          { name: 'init', imageDigest: 'busybox@sha256:ccc' },
          { name: 'init2', imageDigest: '' },
        ],
      ),
    );
    const pod = makePodSpec(rev, revisionConfig(), opts);
    expect(pod.containers.map((c) => c.image)).toEqual([
      'ghcr.io/example/hello@sha256:aaa',
      'ghcr.io/example/side@sha256:bbb',
      'ghcr.io/tidal/queue-proxy:test',
    ]);
    expect(pod.initContainers).toEqual([
      { name: 'init', image: 'busybox@sha256:ccc' },
      { name: 'init2', image: 'kind.local/x' },
    ]);
    // Only the container with ports serves; the sidecar gets the K_* env, no port, no PORT.
    expect(pod.containers[0]).toEqual(
      servingContainer({
        image: 'ghcr.io/example/hello@sha256:aaa',
        ports: [{ name: 'user-port', containerPort: 8888 }],
        env: [{ name: 'PORT', value: '8888' }, ...knativeEnv],
      }),
    );
    expect(pod.containers[1]).toEqual({
      name: 'sidecar',
      image: 'ghcr.io/example/side@sha256:bbb',
      env: knativeEnv,
      lifecycle: preStop,
      stdin: false,
      tty: false,
      terminationMessagePolicy: 'FallbackToLogsOnError',
    });
    expect(makeDeployment(rev, revisionConfig(), opts).spec.template.metadata.annotations['kubectl.kubernetes.io/default-container']).toBe(
      'user-container',
    );
  });

  it('user env and settings are kept, Knative-only spec fields are dropped, user affinity wins', () => {
    const rev = revision(
      'hello-00001',
      'default',
      withUserContainer({ env: [{ name: 'FOO', value: 'bar' }], terminationMessagePolicy: 'File', stdin: true }),
      (r) => {
        r.spec.containerConcurrency = 10;
        r.spec.responseStartTimeoutSeconds = 30;
        r.spec.idleTimeoutSeconds = 60;
        r.spec.serviceAccountName = 'sa';
        r.spec.enableServiceLinks = true;
        r.spec.affinity = { nodeAffinity: {} };
      },
    );
    const pod = makePodSpec(rev, revisionConfig(withoutQueueProxy), opts);
    expect(pod).toEqual({
      containers: [
        {
          name: 'user-container',
          image: 'ghcr.io/example/hello:1',
          ports: [{ name: 'user-port', containerPort: 8080 }],
          env: [{ name: 'FOO', value: 'bar' }, { name: 'PORT', value: '8080' }, ...knativeEnv],
          readinessProbe: { tcpSocket: { port: 8080 }, successThreshold: 1 },
          stdin: false,
          tty: false,
          terminationMessagePolicy: 'File',
        },
      ],
      serviceAccountName: 'sa',
      enableServiceLinks: true,
      affinity: { nodeAffinity: {} },
      terminationGracePeriodSeconds: 300,
    });
  });

  it('enableServiceLinks and affinity follow config when the user set none', () => {
    const rev = revision('r', 'ns', (r) => void delete r.spec.enableServiceLinks);
    const unsetDefault = revisionConfig((c) => {
      c.defaults.enableServiceLinks = undefined;
      c.deployment.defaultAffinityType = 'none';
    });
    const pod = makePodSpec(rev, unsetDefault, opts);
    expect(pod).not.toHaveProperty('enableServiceLinks');
    expect(pod).not.toHaveProperty('affinity');
    expect(
      makePodSpec(
        rev,
        revisionConfig((c) => void (c.defaults.enableServiceLinks = true)),
        opts,
      ).enableServiceLinks,
    ).toBe(true);
  });
});

describe('queue-proxy on/off (hakn: only when config-deployment names an image)', () => {
  it('without queue-proxy: no sidecar, no preStop, the readiness probe stays with its port filled in (golden pod)', () => {
    const rev = revision('hello-00001', 'default');
    const d = makeDeployment(rev, revisionConfig(withoutQueueProxy), opts);
    expect(d.spec.template.spec).toEqual({
      containers: [
        {
          name: 'user-container',
          image: 'ghcr.io/example/hello:1',
          ports: [{ name: 'user-port', containerPort: 8080 }],
          env: [{ name: 'PORT', value: '8080' }, ...knativeEnv],
          readinessProbe: { tcpSocket: { port: 8080 }, successThreshold: 1 },
          stdin: false,
          tty: false,
          terminationMessagePolicy: 'FallbackToLogsOnError',
        },
      ],
      enableServiceLinks: false,
      terminationGracePeriodSeconds: 300,
      affinity: antiAffinity,
    });
    expect(d.metadata.labels['serving.knative.dev/deployment-hash']).not.toBe(
      makeDeployment(rev, revisionConfig(), opts).metadata.labels['serving.knative.dev/deployment-hash'],
    );
  });

  it('without queue-proxy: HTTP and gRPC probes get the user port only when unset; an explicit port is kept', () => {
    const rev = (probe: unknown) => revision('r', 'ns', withUserContainer({ readinessProbe: probe, ports: [{ containerPort: 9000 }] }));
    const probeOf = (p: unknown) => makePodSpec(rev(p), revisionConfig(withoutQueueProxy), opts).containers[0]!.readinessProbe;
    expect(probeOf({ httpGet: { path: '/healthz' } })).toEqual({ httpGet: { path: '/healthz', port: 9000 } });
    expect(probeOf({ httpGet: { path: '/healthz', port: 9001 } })).toEqual({ httpGet: { path: '/healthz', port: 9001 } });
    expect(probeOf({ grpc: { port: 0 } })).toEqual({ grpc: { port: 9000 } });
    expect(probeOf({ exec: { command: ['true'] } })).toEqual({ exec: { command: ['true'] } });
  });

  it('resources from config and per-revision annotations', () => {
    const cfg = revisionConfig((c) => {
      c.deployment.queueSidecarCpuRequest = '50m';
      c.deployment.queueSidecarMemoryLimit = '200Mi';
      c.deployment.queueSidecarEphemeralStorageRequest = '1Gi';
    });
    expect(makeQueueContainer(revision('r', 'ns'), cfg, opts).resources).toEqual({
      requests: { cpu: '50m', 'ephemeral-storage': '1Gi' },
      limits: { memory: '200Mi' },
    });
    const annotated = revision(
      'r',
      'ns',
      withRevAnnotations({
        'queue.sidecar.serving.knative.dev/cpu-resource-request': '100m',
        'queue.sidecar.serving.knative.dev/memory-resource-request': '64Mi',
        'queue.sidecar.serving.knative.dev/cpu-resource-limit': 'not-a-quantity',
      }),
    );
    expect(makeQueueContainer(annotated, cfg, opts).resources).toEqual({
      requests: { cpu: '100m', memory: '64Mi', 'ephemeral-storage': '1Gi' },
      limits: { memory: '200Mi' },
    });
  });

  it('env values come from the revision and the options', () => {
    const rev = revision('hello-00001', 'default', withRevAnnotations({ 'features.knative.dev/http-full-duplex': 'enabled' }), (r) => {
      r.spec.containerConcurrency = 5;
      r.spec.timeoutSeconds = 120;
      r.spec.responseStartTimeoutSeconds = 30;
      r.spec.idleTimeoutSeconds = 60;
      r.metadata.ownerReferences = [];
      delete r.metadata.labels!['serving.knative.dev/service'];
    });
    const c = makeQueueContainer(rev, revisionConfig(), {
      systemNamespace: 'knative-serving',
      loggingLevel: 'debug',
      rootCA: 'PEM',
      enableHTTP2AutoDetection: true,
      tlsMinVersion: '1.3',
    });
    expect(c.env).toEqual(
      queueEnv({
        SERVING_SERVICE: '',
        SERVING_CONFIGURATION: '',
        CONTAINER_CONCURRENCY: '5',
        REVISION_TIMEOUT_SECONDS: '120',
        REVISION_RESPONSE_START_TIMEOUT_SECONDS: '30',
        REVISION_IDLE_TIMEOUT_SECONDS: '60',
        SERVING_LOGGING_LEVEL: 'debug',
        SYSTEM_NAMESPACE: 'knative-serving',
        ENABLE_HTTP2_AUTO_DETECTION: 'true',
        ENABLE_HTTP_FULL_DUPLEX: 'true',
        ROOT_CA: 'PEM',
        QUEUE_PROXY_TLS_MIN_VERSION: '1.3',
      }),
    );
  });

  it('h2c: queue-proxy serves on 8013 and the user port keeps its number but is renamed user-port', () => {
    const rev = revision('hello-00001', 'default', withUserContainer({ ports: [{ name: 'h2c', containerPort: 9000 }] }));
    const pod = makePodSpec(rev, revisionConfig(), opts);
    expect(pod.containers[0]!.ports).toEqual([{ name: 'user-port', containerPort: 9000 }]);
    expect(pod.containers[1]).toEqual(
      queueContainer({
        ports: [
          { name: 'http-autometric', containerPort: 9090 },
          { name: 'http-usermetric', containerPort: 9091 },
          { name: 'queue-port', containerPort: 8013 },
          { name: 'https-port', containerPort: 8112 },
        ],
        readinessProbe: { successThreshold: 1, httpGet: { port: 8013, httpHeaders: [{ name: 'K-Network-Probe', value: 'queue' }] } },
        env: queueEnv({
          QUEUE_SERVING_PORT: '8013',
          USER_PORT: '9000',
          SERVING_READINESS_PROBE: '{"tcpSocket":{"port":9000,"host":"127.0.0.1"},"successThreshold":1}',
        }),
      }),
    );
  });
});

describe('readiness probes move to queue-proxy', () => {
  const podFor = (readinessProbe: unknown, extra: Partial<Container> = {}) =>
    makePodSpec(revision('hello-00001', 'default', withUserContainer({ readinessProbe, ...extra })), revisionConfig(), opts);

  it('an HTTP probe leaves the user container; its timings go to queue-proxy, the probe to the env', () => {
    const pod = podFor({ httpGet: { path: '/ready', httpHeaders: [{ name: 'X', value: 'y' }] }, periodSeconds: 5, failureThreshold: 3 });
    expect(pod.containers[0]).toEqual(servingContainer());
    expect(pod.containers[1]).toEqual(
      queueContainer({
        readinessProbe: {
          periodSeconds: 5,
          failureThreshold: 3,
          httpGet: { port: 8012, httpHeaders: [{ name: 'K-Network-Probe', value: 'queue' }] },
        },
        env: queueEnv({
          SERVING_READINESS_PROBE:
            '{"httpGet":{"path":"/ready","port":8080,"host":"127.0.0.1","scheme":"HTTP","httpHeaders":[{"name":"X","value":"y"}]},"timeoutSeconds":1,"periodSeconds":5,"failureThreshold":3}',
        }),
      }),
    );
  });

  it('a TCP probe with its own port keeps that port in SERVING_READINESS_PROBE', () => {
    const pod = podFor({ tcpSocket: { port: 12345 } });
    expect(pod.containers[0]).not.toHaveProperty('readinessProbe');
    expect(pod.containers[1]!.env).toContainEqual({ name: 'SERVING_READINESS_PROBE', value: '{"tcpSocket":{"port":12345,"host":"127.0.0.1"}}' });
    expect(pod.containers[1]!.readinessProbe).toEqual({ httpGet: { port: 8012, httpHeaders: [{ name: 'K-Network-Probe', value: 'queue' }] } });
  });

  it('a gRPC probe is removed from the user container and encoded as is', () => {
    const pod = podFor({ grpc: { port: 8080 } });
    expect(pod.containers[0]).not.toHaveProperty('readinessProbe');
    expect(pod.containers[1]!.env).toContainEqual({ name: 'SERVING_READINESS_PROBE', value: '{"grpc":{"port":8080,"service":null}}' });
  });

  it('an exec probe stays on the user container; queue-proxy TCP-probes the user port', () => {
    const exec = { exec: { command: ['cat', '/tmp/ready'] }, initialDelaySeconds: 2 };
    const pod = podFor(exec);
    expect(pod.containers[0]).toEqual(servingContainer({ readinessProbe: exec }));
    expect(pod.containers[1]!.env).toContainEqual({
      name: 'SERVING_READINESS_PROBE',
      value: '{"tcpSocket":{"port":8080,"host":"127.0.0.1"},"initialDelaySeconds":2}',
    });
    expect(pod.containers[1]!.readinessProbe).toEqual({
      initialDelaySeconds: 2,
      httpGet: { port: 8012, httpHeaders: [{ name: 'K-Network-Probe', value: 'queue' }] },
    });
  });

  it('no user readiness probe → empty SERVING_READINESS_PROBE and no queue-proxy readiness probe', () => {
    const pod = podFor(undefined);
    expect(pod.containers[1]).not.toHaveProperty('readinessProbe');
    expect(pod.containers[1]!.env).toContainEqual({ name: 'SERVING_READINESS_PROBE', value: '' });
  });

  it('the liveness probe always targets the user port; startup probes are untouched', () => {
    const pod = podFor(undefined, {
      ports: [{ containerPort: 9000 }],
      livenessProbe: { httpGet: { path: '/live', port: 1234 } },
      startupProbe: { tcpSocket: {} },
    });
    expect(pod.containers[0]!.livenessProbe).toEqual({ httpGet: { path: '/live', port: 9000 } });
    expect(pod.containers[0]!.startupProbe).toEqual({ tcpSocket: {} });
  });

  it('queueSideReadinessProbe/encodeProbe follow Knative: named ports fall back to the user port, Go field order', () => {
    expect(encodeProbe(queueSideReadinessProbe({ httpGet: { port: 'http', scheme: 'HTTPS' }, timeoutSeconds: 0 }, 8080))).toBe(
      '{"httpGet":{"port":8080,"host":"127.0.0.1","scheme":"HTTPS"}}',
    );
    expect(encodeProbe({ tcpSocket: { port: 1 }, successThreshold: 1, failureThreshold: 0, custom: true })).toBe(
      '{"tcpSocket":{"port":1},"successThreshold":1,"custom":true}',
    );
  });
});

describe('hash.ts', () => {
  it('FNV-32a matches the reference vectors', () => {
    expect(fnv32a('')).toBe(0x811c9dc5);
    expect(fnv32a('a')).toBe(0xe40c292c);
    expect(fnv32a('foobar')).toBe(0xbf9cf968);
    expect(toBase36(0xbf9cf968)).toBe('1h5yxyg'); // Go: strconv.FormatUint(0xbf9cf968, 36)
  });

  it('stableStringify sorts keys at every depth and keeps array order', () => {
    expect(stableStringify({ b: 1, a: { d: [2, 1], c: undefined, e: 'x' } })).toBe('{"a":{"d":[2,1],"e":"x"},"b":1}');
    expect(deploymentHash({ spec: { x: 1, y: 2 }, annotations: { b: '1', a: '2' }, labels: undefined })).toBe(
      deploymentHash({ spec: { y: 2, x: 1 }, annotations: { a: '2', b: '1' }, labels: {} }),
    );
  });
});
