import { describe, expect, it } from 'vitest';
import { defaultDefaultsConfig } from '../../../api/config/index.js';
import type { DefaultsConfig } from '../../../api/config/index.js';
import { setConfigurationDefaults, setRevisionSpecDefaults, setRouteDefaults, setServiceDefaults } from '../../../api/defaults.js';
import type { Configuration, RevisionSpec, Route, Service } from '../../../api/serving.js';
import { configuration, service } from '../../fixtures/serving.js';

/** Knative's own config-defaults (container-concurrency 0), for the upstream behaviours stated against it. */
const knativeDefaults = (): DefaultsConfig => ({ ...defaultDefaultsConfig(), containerConcurrency: 0 });
const cfg = (over: Partial<DefaultsConfig> = {}): DefaultsConfig => ({ ...defaultDefaultsConfig(), ...over });

function deepFreeze<T>(o: T): T {
  if (o !== null && typeof o === 'object') {
    for (const v of Object.values(o)) deepFreeze(v);
    Object.freeze(o);
  }
  return o;
}

describe('setRevisionSpecDefaults', () => {
  it('defaults timeoutSeconds 300, containerConcurrency 0, user-container, a TCP readiness probe, successThreshold 1, enableServiceLinks false', () => {
    expect(setRevisionSpecDefaults({ containers: [{ image: 'nginx' }] }, knativeDefaults())).toEqual({
      timeoutSeconds: 300,
      containerConcurrency: 0,
      enableServiceLinks: false,
      containers: [{ name: 'user-container', image: 'nginx', readinessProbe: { tcpSocket: {}, successThreshold: 1 } }],
    });
  });

  it("Tidal's own default containerConcurrency is hakn's 100", () => {
    expect(setRevisionSpecDefaults({ containers: [{ image: 'nginx' }] }, defaultDefaultsConfig()).containerConcurrency).toBe(100);
  });

  it('responseStartTimeoutSeconds and idleTimeoutSeconds stay unset under the default config', () => {
    const out = setRevisionSpecDefaults({ containers: [{ image: 'nginx' }] }, defaultDefaultsConfig());
    expect(out).not.toHaveProperty('responseStartTimeoutSeconds');
    expect(out).not.toHaveProperty('idleTimeoutSeconds');
  });

  it('configured idle/response-start defaults apply only when non-zero and below timeoutSeconds', () => {
    const c = cfg({ revisionIdleTimeoutSeconds: 60, revisionResponseStartTimeoutSeconds: 30 });
    expect(setRevisionSpecDefaults({ containers: [{ image: 'x' }] }, c)).toMatchObject({ idleTimeoutSeconds: 60, responseStartTimeoutSeconds: 30 });
    // Not below the (user-set) request timeout: left unset.
    const short = setRevisionSpecDefaults({ containers: [{ image: 'x' }], timeoutSeconds: 30 }, c);
    expect(short.idleTimeoutSeconds).toBeUndefined();
    expect(short.responseStartTimeoutSeconds).toBeUndefined();
    // A zero default never applies; user values are kept.
    const kept = setRevisionSpecDefaults({ containers: [{ image: 'x' }], idleTimeoutSeconds: 5, responseStartTimeoutSeconds: 0 }, c);
    expect(kept).toMatchObject({ idleTimeoutSeconds: 5, responseStartTimeoutSeconds: 0 });
    expect(
      setRevisionSpecDefaults({ containers: [{ image: 'x' }] }, cfg({ revisionResponseStartTimeoutSeconds: 0 })).responseStartTimeoutSeconds,
    ).toBeUndefined();
  });

  it('replaces a 0 timeoutSeconds, keeps user timeoutSeconds and containerConcurrency (even 0)', () => {
    expect(setRevisionSpecDefaults({ containers: [{ image: 'x' }], timeoutSeconds: 0 }, cfg()).timeoutSeconds).toBe(300);
    const out = setRevisionSpecDefaults({ containers: [{ image: 'x' }], timeoutSeconds: 42, containerConcurrency: 0 }, cfg());
    expect(out.timeoutSeconds).toBe(42);
    expect(out.containerConcurrency).toBe(0);
  });

  it('numbers several containers, skipping user-supplied names', () => {
    const out = setRevisionSpecDefaults(
      {
        containers: [
          { image: 'a', ports: [{ containerPort: 8080 }] },
          { image: 'b', name: 'user-container-1' },
          { image: 'c' },
          { image: 'd', name: '' },
        ],
      },
      cfg(),
    );
    expect(out.containers.map((c) => c.name)).toEqual(['user-container-0', 'user-container-1', 'user-container-2', 'user-container-3']);
  });

  it('suffixes a single unnamed container when its default name is taken by an init container', () => {
    const spec = { containers: [{ image: 'a' }], initContainers: [{ image: 'i', name: 'user-container' }] } as RevisionSpec;
    const out = setRevisionSpecDefaults(spec, cfg()) as RevisionSpec & { initContainers: { name: string }[] };
    expect(out.containers[0]?.name).toBe('user-container-0');
    expect(out.initContainers[0]?.name).toBe('user-container');
  });

  it('names init containers init-container, init-container-0.. and leaves them without probes', () => {
    const one = setRevisionSpecDefaults({ containers: [{ image: 'a' }], initContainers: [{ image: 'i' }] }, cfg());
    expect(one.initContainers).toEqual([{ name: 'init-container', image: 'i' }]);
    const two = setRevisionSpecDefaults(
      { containers: [{ image: 'a' }], initContainers: [{ image: 'i' }, { image: 'j', name: 'init-container-0' }, { image: 'k' }] },
      cfg(),
    );
    expect((two.initContainers as { name: string }[]).map((c) => c.name)).toEqual(['init-container-1', 'init-container-0', 'init-container-2']);
  });

  it('renders the container-name template over the parent metadata ({{.Name}} and friends)', () => {
    const c = cfg({ containerNameTemplate: '{{.Name}}-app', initContainerNameTemplate: '{{.Namespace}}-init' });
    const out = setRevisionSpecDefaults({ containers: [{ image: 'a' }], initContainers: [{ image: 'i' }] }, c, { name: 'web', namespace: 'prod' });
    expect(out.containers[0]?.name).toBe('web-app');
    expect((out.initContainers as { name: string }[])[0]?.name).toBe('prod-init');
    expect(setRevisionSpecDefaults({ containers: [{ image: 'a' }] }, c, 'shop').containers[0]?.name).toBe('shop-app');
    // No parent (a standalone Revision): Go renders over an empty ObjectMeta.
    expect(setRevisionSpecDefaults({ containers: [{ image: 'a' }] }, c).containers[0]?.name).toBe('-app');
  });

  it('gives the serving container (the one with a port) the readiness probe, not the sidecars', () => {
    const out = setRevisionSpecDefaults({ containers: [{ image: 'side' }, { image: 'main', ports: [{ containerPort: 8080 }] }] }, cfg());
    expect(out.containers[0]).not.toHaveProperty('readinessProbe');
    expect(out.containers[1]?.readinessProbe).toEqual({ tcpSocket: {}, successThreshold: 1 });
  });

  it('completes a user readiness probe: handler kept, successThreshold 1, k8s thresholds when periodSeconds is set', () => {
    const out = setRevisionSpecDefaults({ containers: [{ image: 'a', readinessProbe: { httpGet: { path: '/ready' }, periodSeconds: 5 } }] }, cfg());
    expect(out.containers[0]?.readinessProbe).toEqual({
      httpGet: { path: '/ready' },
      periodSeconds: 5,
      successThreshold: 1,
      failureThreshold: 3,
      timeoutSeconds: 1,
    });
    const aggressive = setRevisionSpecDefaults(
      { containers: [{ image: 'a', readinessProbe: { exec: { command: ['true'] }, successThreshold: 2 } }] },
      cfg(),
    );
    expect(aggressive.containers[0]?.readinessProbe).toEqual({ exec: { command: ['true'] }, successThreshold: 2 });
    // A probe without a handler gets tcpSocket.
    const empty = setRevisionSpecDefaults({ containers: [{ image: 'a', readinessProbe: { periodSeconds: 0 } }] }, cfg());
    expect(empty.containers[0]?.readinessProbe).toEqual({ periodSeconds: 0, tcpSocket: {}, successThreshold: 1 });
  });

  it('defaults gRPC probe services to ""', () => {
    const out = setRevisionSpecDefaults(
      {
        containers: [
          {
            image: 'a',
            readinessProbe: { grpc: { port: 9000 } },
            livenessProbe: { grpc: { port: 9000 } },
            startupProbe: { grpc: { port: 9000, service: 'x' } },
          },
        ],
      },
      cfg(),
    );
    const c = out.containers[0] as Record<string, { grpc: { service?: string } }>;
    expect(c.readinessProbe?.grpc.service).toBe('');
    expect(c.livenessProbe?.grpc.service).toBe('');
    expect(c.startupProbe?.grpc.service).toBe('x');
  });

  it('sets enableServiceLinks from config only when unset, and not at all for a tri-state "unset" config', () => {
    expect(setRevisionSpecDefaults({ containers: [{ image: 'a' }], enableServiceLinks: true }, cfg()).enableServiceLinks).toBe(true);
    expect(setRevisionSpecDefaults({ containers: [{ image: 'a' }] }, cfg({ enableServiceLinks: true })).enableServiceLinks).toBe(true);
    expect(setRevisionSpecDefaults({ containers: [{ image: 'a' }] }, cfg({ enableServiceLinks: undefined }))).not.toHaveProperty(
      'enableServiceLinks',
    );
  });

  it('applies configured resource defaults without overriding user values, and adds nothing when none are configured', () => {
    const c = cfg({ revisionCpuRequest: '400m', revisionCpuLimit: '1', revisionMemoryLimit: '200M', revisionEphemeralStorageRequest: '500M' });
    const out = setRevisionSpecDefaults(
      {
        containers: [
          { image: 'a', resources: { requests: { cpu: '100m' } } },
          { image: 'b', ports: [{ containerPort: 80 }] },
        ],
      },
      c,
    );
    expect(out.containers[0]?.resources).toEqual({ requests: { cpu: '100m', 'ephemeral-storage': '500M' }, limits: { cpu: '1', memory: '200M' } });
    expect(out.containers[1]?.resources).toEqual({ requests: { cpu: '400m', 'ephemeral-storage': '500M' }, limits: { cpu: '1', memory: '200M' } });
    expect(setRevisionSpecDefaults({ containers: [{ image: 'a' }] }, cfg()).containers[0]).not.toHaveProperty('resources');
  });

  it('forces volumeMounts read-only except for emptyDir, PVC and ephemeral volumes', () => {
    const spec = {
      containers: [
        {
          image: 'a',
          volumeMounts: [
            { name: 'secret', mountPath: '/s' },
            { name: 'scratch', mountPath: '/tmp/x' },
            { name: 'claim', mountPath: '/data', readOnly: false },
            { name: 'eph', mountPath: '/e' },
            { name: 'cm', mountPath: '/c', readOnly: false },
          ],
        },
      ],
      volumes: [
        { name: 'secret', secret: { secretName: 's' } },
        { name: 'scratch', emptyDir: {} },
        { name: 'claim', persistentVolumeClaim: { claimName: 'c' } },
        { name: 'eph', ephemeral: {} },
        { name: 'cm', configMap: { name: 'c' } },
      ],
    } as RevisionSpec;
    const mounts = (setRevisionSpecDefaults(spec, cfg()).containers[0] as unknown as { volumeMounts: { readOnly?: boolean }[] }).volumeMounts;
    expect(mounts.map((m) => m.readOnly)).toEqual([true, undefined, false, undefined, true]);
  });

  it('returns a deep copy and never mutates its input', () => {
    const spec = deepFreeze<RevisionSpec>({
      containers: [{ image: 'a', readinessProbe: { httpGet: {} }, volumeMounts: [{ name: 'v', mountPath: '/v' }] }],
    });
    const before = JSON.stringify(spec);
    const out = setRevisionSpecDefaults(spec, cfg({ revisionCpuRequest: '1' }));
    expect(JSON.stringify(spec)).toBe(before);
    expect(out.containers[0]).not.toBe(spec.containers[0]);
  });
});

describe('setServiceDefaults / setConfigurationDefaults / setRouteDefaults', () => {
  it('defaults the Service template and traffic [{percent:100, latestRevision:true}]', () => {
    const svc = service('web', 'default');
    const out = setServiceDefaults(svc, knativeDefaults());
    expect(out.spec).toEqual({
      template: {
        spec: {
          timeoutSeconds: 300,
          containerConcurrency: 0,
          enableServiceLinks: false,
          containers: [{ name: 'user-container', image: 'nginx', readinessProbe: { tcpSocket: {}, successThreshold: 1 } }],
        },
      },
      traffic: [{ percent: 100, latestRevision: true }],
    });
    expect(svc.spec.traffic).toBeUndefined();
  });

  it('defaults each target: latestRevision = (revisionName === ""), an absent percent to 0', () => {
    const svc = service('web', 'default');
    svc.spec.traffic = [
      { revisionName: 'web-00001', percent: 50 },
      { percent: 50 },
      { tag: 'canary', revisionName: 'web-00002' },
      { latestRevision: false, revisionName: 'x' },
    ];
    expect(setServiceDefaults(svc, cfg()).spec.traffic).toEqual([
      { revisionName: 'web-00001', percent: 50, latestRevision: false },
      { percent: 50, latestRevision: true },
      { tag: 'canary', revisionName: 'web-00002', latestRevision: false, percent: 0 },
      { latestRevision: false, revisionName: 'x', percent: 0 },
    ]);
  });

  it('uses the Service metadata for the container-name template', () => {
    const out = setServiceDefaults(service('shop', 'default'), cfg({ containerNameTemplate: '{{.Name}}' }));
    expect(out.spec.template.spec.containers[0]?.name).toBe('shop');
  });

  it('skips template defaulting when a BYO template name is unchanged from the previous object', () => {
    const prev = service('web', 'default');
    prev.spec.template.metadata = { name: 'web-v1' };
    const next = deepFreeze(JSON.parse(JSON.stringify(prev)) as Service);
    expect(setServiceDefaults(next, cfg(), prev).spec.template.spec).toEqual({ containers: [{ image: 'nginx' }] });
    // A new name (or no previous object) is defaulted.
    expect(setServiceDefaults(next, cfg()).spec.template.spec.timeoutSeconds).toBe(300);
  });

  it('does not mutate the Service', () => {
    const svc = deepFreeze(service('web', 'default'));
    expect(() => setServiceDefaults(svc, cfg())).not.toThrow();
  });

  it('defaults a Configuration template with the Configuration as parent', () => {
    const c: Configuration = configuration('api', 'default');
    const out = setConfigurationDefaults(c, cfg({ containerNameTemplate: '{{.Name}}-c' }));
    expect(out.spec.template.spec).toMatchObject({ timeoutSeconds: 300, containerConcurrency: 100, containers: [{ name: 'api-c' }] });
    expect(c.spec.template.spec.timeoutSeconds).toBeUndefined();
    const prev = configuration('api', 'default');
    prev.spec.template.metadata = { name: 'api-x' };
    expect(setConfigurationDefaults(prev, cfg(), prev).spec.template.spec.timeoutSeconds).toBeUndefined();
  });

  it('defaults Route targets but never invents traffic for a Route', () => {
    const route: Route = {
      apiVersion: 'serving.knative.dev/v1',
      kind: 'Route',
      metadata: { name: 'r' },
      spec: { traffic: [{ configurationName: 'c', percent: 100 }] },
    };
    expect(setRouteDefaults(route).spec.traffic).toEqual([{ configurationName: 'c', percent: 100, latestRevision: true }]);
    expect(setRouteDefaults({ ...route, spec: {} }).spec.traffic).toBeUndefined();
    expect(setRouteDefaults({ ...route, spec: { traffic: [] } }).spec.traffic).toEqual([]);
  });
});
