import { describe, expect, it } from 'vitest';
import { defaultAutoscalerConfig, defaultDefaultsConfig } from '../../../api/config/index.js';
import type { DefaultsConfig } from '../../../api/config/index.js';
import { setServiceDefaults } from '../../../api/defaults.js';
import type { Configuration, RevisionSpec, Route, Service, TrafficTarget } from '../../../api/serving.js';
import {
  formatFieldErrors,
  isImageReference,
  validateConfiguration,
  validateRevisionSpec,
  validateRoute,
  validateService,
} from '../../../api/validation.js';
import type { FieldError } from '../../../api/validation.js';
import { configuration, service } from '../../fixtures/serving.js';
import { shippedPodSpecFeatures } from '../../fixtures/shipped-config.js';

const cfg = (over: Partial<DefaultsConfig> = {}): DefaultsConfig => ({ ...defaultDefaultsConfig(), ...over });

/** A defaulted, valid Service named web whose template spec and traffic the test then edits. */
function svc(edit: (s: Service) => void = () => undefined): Service {
  const s = setServiceDefaults(service('web', 'default'), cfg());
  edit(s);
  return s;
}

function route(traffic: TrafficTarget[], edit: (r: Route) => void = () => undefined): Route {
  const r: Route = { apiVersion: 'serving.knative.dev/v1', kind: 'Route', metadata: { name: 'r', namespace: 'default' }, spec: { traffic } };
  edit(r);
  return r;
}

/** Validates a (defaulted) revision spec at "spec". */
/** A Revision spec validated as the shipped config-features (hakn's pod-spec features) has it. */
function spec(s: RevisionSpec, c: DefaultsConfig = cfg()): FieldError[] {
  return validateRevisionSpec(s, 'spec', c, { features: shippedPodSpecFeatures() });
}

const messages = (errs: FieldError[]): string[] => errs.map((e) => `${e.path}: ${e.message}`);

describe('valid objects', () => {
  it('a defaulted Service, Configuration and Route have no errors', () => {
    expect(validateService(svc(), cfg())).toEqual([]);
    const c = configuration('api', 'default');
    c.spec.template.spec = {
      containers: [{ image: 'gcr.io/x/api:v1', ports: [{ containerPort: 8080, name: 'h2c' }] }],
      timeoutSeconds: 600,
      containerConcurrency: 1000,
    };
    expect(validateConfiguration(c, cfg())).toEqual([]);
    expect(
      validateRoute(
        route([
          { configurationName: 'api', percent: 90, latestRevision: true },
          { revisionName: 'api-00001', percent: 10, tag: 'old', latestRevision: false },
        ]),
      ),
    ).toEqual([]);
  });

  it('formats errors like Knative ("message: path" and details)', () => {
    expect(
      formatFieldErrors([
        { path: 'spec.traffic', message: 'Traffic targets sum to 90, want 100' },
        { path: 'a', message: 'b', details: 'c' },
      ]),
    ).toBe('Traffic targets sum to 90, want 100: spec.traffic\nb: a\nc');
  });
});

describe('traffic', () => {
  it('the percents must sum to exactly 100', () => {
    expect(validateRoute(route([{ configurationName: 'c', percent: 90 }]))).toEqual([
      { path: 'spec.traffic', message: 'Traffic targets sum to 90, want 100' },
    ]);
    expect(messages(validateRoute(route([])))).toEqual(['spec.traffic: Traffic targets sum to 0, want 100']);
    expect(
      messages(
        validateService(
          svc(
            (s) =>
              void (s.spec.traffic = [
                { latestRevision: true, percent: 60 },
                { revisionName: 'web-1', latestRevision: false, percent: 60 },
              ]),
          ),
          cfg(),
        ),
      ),
    ).toEqual(['spec.traffic: Traffic targets sum to 120, want 100']);
  });

  it('each percent is within 0..100', () => {
    expect(
      messages(
        validateRoute(
          route([
            { configurationName: 'c', percent: 150 },
            { revisionName: 'r-1', percent: -50 },
          ]),
        ),
      ),
    ).toEqual(['spec.traffic[0].percent: expected 0 <= 150 <= 100', 'spec.traffic[1].percent: expected 0 <= -50 <= 100']);
  });

  it('tags are DNS-1035 labels and unique', () => {
    const errs = validateRoute(
      route([
        { configurationName: 'c', percent: 50, tag: 'Bad_Tag' },
        { revisionName: 'r-1', percent: 25, tag: 'canary' },
        { revisionName: 'r-2', percent: 25, tag: 'canary' },
      ]),
    );
    expect(errs).toHaveLength(2);
    expect(errs[0]?.path).toBe('spec.traffic.tag[0]'); // upstream's ErrInvalidArrayValue path
    expect(errs[0]?.message).toMatch(/^invalid value: not a DNS 1035 label: \[a DNS-1035 label must consist of lower case/u);
    expect(errs[1]).toEqual({ path: 'spec.traffic[2].tag, spec.traffic[1].tag', message: 'Multiple definitions for "canary"' });
  });

  it('latestRevision must agree with revisionName', () => {
    expect(
      messages(
        validateRoute(
          route([
            { revisionName: 'r-1', latestRevision: true, percent: 50 },
            { configurationName: 'c', latestRevision: false, percent: 50 },
          ]),
        ),
      ),
    ).toEqual([
      'spec.traffic[0].latestRevision: may not set revisionName "r-1" when latestRevision is true',
      'spec.traffic[1].latestRevision: may not set revisionName "" when latestRevision is false',
    ]);
  });

  it('no url in spec', () => {
    expect(messages(validateRoute(route([{ configurationName: 'c', percent: 100, tag: 't', url: 'http://t-r.default' }])))).toEqual([
      'spec.traffic[0].url: must not set the field(s)',
    ]);
  });

  it('no configurationName in Service traffic', () => {
    expect(
      messages(
        validateService(
          svc((s) => void (s.spec.traffic = [{ configurationName: 'web', percent: 100 }])),
          cfg(),
        ),
      ),
    ).toEqual(['spec.traffic[0].configurationName: must not set the field(s)']);
  });

  it('a Route target needs exactly one of revisionName and configurationName, each a qualified name', () => {
    expect(
      messages(
        validateRoute(
          route([{ percent: 40 }, { revisionName: 'a', configurationName: 'b', percent: 40 }, { revisionName: 'not a name!', percent: 20 }]),
        ),
      ),
    ).toEqual([
      'spec.traffic[0].revisionName, spec.traffic[0].configurationName: expected exactly one, got neither',
      'spec.traffic[1].revisionName, spec.traffic[1].configurationName: expected exactly one, got both',
      'spec.traffic[2].revisionName: invalid key name "not a name!"',
    ]);
  });

  it('an empty Service traffic list sums to 0 (the webhook validates after defaulting, which fills it)', () => {
    expect(
      validateService(
        svc((s) => void (s.spec.traffic = [])),
        cfg(),
      ),
    ).toEqual([{ path: 'spec.traffic', message: 'Traffic targets sum to 0, want 100' }]);
  });
});

describe('template name', () => {
  it('a BYO template name must start with "<parent>-"', () => {
    expect(
      validateService(
        svc((s) => void (s.spec.template.metadata = { name: 'web-v2' })),
        cfg(),
      ),
    ).toEqual([]);
    expect(
      validateService(
        svc((s) => void (s.spec.template.metadata = { name: 'other-v2' })),
        cfg(),
      ),
    ).toEqual([{ path: 'spec.template.metadata.name', message: 'invalid value: "other-v2" must have prefix "web-"' }]);
  });

  it('a BYO template name must be a DNS-1035 label', () => {
    const errs = validateService(
      svc((s) => void (s.spec.template.metadata = { name: 'web-V2' })),
      cfg(),
    );
    expect(errs).toHaveLength(1);
    expect(errs[0]?.path).toBe('spec.template.metadata.name');
    expect(errs[0]?.message).toMatch(/^invalid value: not a DNS 1035 label: \[/u);
    expect(
      messages(
        validateService(
          svc((s) => void (s.spec.template.metadata = { generateName: '9web-' })),
          cfg(),
        ),
      )[0],
    ).toMatch(/^spec\.template\.metadata\.generateName: invalid value: not a DNS 1035 label prefix/u);
  });

  it('a BYO name is not allowed when the parent only has generateName', () => {
    const c: Configuration = configuration('', 'default');
    c.metadata = { generateName: 'api-', namespace: 'default' };
    c.spec.template.metadata = { name: 'api-x' };
    expect(messages(validateConfiguration(c, cfg()))).toEqual(['spec.template.metadata.name: must not set the field(s)']);
  });

  it('changing the template without changing an explicit name is rejected', () => {
    const prev = svc((s) => void (s.spec.template.metadata = { name: 'web-v1' }));
    const same = svc((s) => void (s.spec.template.metadata = { name: 'web-v1' }));
    expect(validateService(same, cfg(), { previous: prev })).toEqual([]);
    const changed = svc((s) => {
      s.spec.template.metadata = { name: 'web-v1' };
      s.spec.template.spec.containers = [{ name: 'user-container', image: 'nginx:2', readinessProbe: { tcpSocket: {}, successThreshold: 1 } }];
    });
    expect(validateService(changed, cfg(), { previous: prev })).toEqual([
      {
        path: 'spec.template.metadata.name',
        message: 'Saw the following changes without a name change (-old +new)',
        details: '{*v1.RevisionTemplateSpec}.Spec.PodSpec.Containers[0].Image:\n\t-: "nginx"\n\t+: "nginx:2"\n', // upstream's own test's form
      },
    ]);
    const renamed = svc((s) => {
      s.spec.template.metadata = { name: 'web-v2' };
      s.spec.template.spec.containers = [{ name: 'user-container', image: 'nginx:2', readinessProbe: { tcpSocket: {}, successThreshold: 1 } }];
    });
    expect(validateService(renamed, cfg(), { previous: prev })).toEqual([]);
    const cPrev = configuration('api', 'default');
    cPrev.spec.template.metadata = { name: 'api-1', annotations: { a: 'b' } };
    const cNext: Configuration = JSON.parse(JSON.stringify(cPrev)) as Configuration;
    cNext.spec.template.metadata = { name: 'api-1', annotations: { a: 'c' } };
    expect(messages(validateConfiguration(cNext, cfg(), { previous: cPrev }))).toEqual([
      'spec.template.metadata.name: Saw the following changes without a name change (-old +new)',
    ]);
  });
});

describe('revision spec bounds', () => {
  const one = (over: Partial<RevisionSpec>): RevisionSpec => ({ containers: [{ image: 'nginx' }], ...over });

  it('timeoutSeconds <= 600 by default, configurable', () => {
    expect(spec(one({ timeoutSeconds: 600 }))).toEqual([]);
    expect(spec(one({ timeoutSeconds: 601 }))).toEqual([{ path: 'spec.timeoutSeconds', message: 'expected 0 <= 601 <= 600' }]);
    expect(spec(one({ timeoutSeconds: -1 }))).toEqual([{ path: 'spec.timeoutSeconds', message: 'expected 0 <= -1 <= 600' }]);
    expect(spec(one({ timeoutSeconds: 900 }), cfg({ maxRevisionTimeoutSeconds: 900 }))).toEqual([]);
  });

  it('containerConcurrency <= 1000 by default, configurable; 0 only when allowed', () => {
    expect(spec(one({ containerConcurrency: 1000 }))).toEqual([]);
    expect(spec(one({ containerConcurrency: 1001 }))).toEqual([{ path: 'spec.containerConcurrency', message: 'expected 0 <= 1001 <= 1000' }]);
    expect(spec(one({ containerConcurrency: 50 }), cfg({ containerConcurrencyMaxLimit: 10 }))).toEqual([
      { path: 'spec.containerConcurrency', message: 'expected 0 <= 50 <= 10' },
    ]);
    expect(spec(one({ containerConcurrency: 0 }), cfg({ allowContainerConcurrencyZero: false }))).toEqual([
      { path: 'spec.containerConcurrency', message: 'expected 1 <= 0 <= 1000' },
    ]);
  });

  it('leaves responseStartTimeoutSeconds and idleTimeoutSeconds unbounded, as upstream', () => {
    expect(messages(spec(one({ timeoutSeconds: 100, responseStartTimeoutSeconds: 101, idleTimeoutSeconds: 700 })))).toEqual([]);
  });

  it('uses the template path inside a Service', () => {
    expect(
      messages(
        validateService(
          svc((s) => void (s.spec.template.spec.timeoutSeconds = 1000)),
          cfg(),
        ),
      ),
    ).toEqual(['spec.template.spec.timeoutSeconds: expected 0 <= 1000 <= 600']);
  });
});

describe('reserved names', () => {
  it('reserved env vars PORT, K_SERVICE, K_CONFIGURATION, K_REVISION are rejected in the serving container', () => {
    const errs = spec({
      containers: [
        {
          image: 'a',
          env: [{ name: 'PORT', value: '1' }, { name: 'K_SERVICE' }, { name: 'K_CONFIGURATION' }, { name: 'K_REVISION' }, { name: 'OK' }],
        },
      ],
    });
    expect(messages(errs)).toEqual([
      'spec.containers[0].env[0].name: "PORT" is a reserved environment variable',
      'spec.containers[0].env[1].name: "K_SERVICE" is a reserved environment variable',
      'spec.containers[0].env[2].name: "K_CONFIGURATION" is a reserved environment variable',
      'spec.containers[0].env[3].name: "K_REVISION" is a reserved environment variable',
    ]);
  });

  it('PORT is allowed in sidecars and init containers, the K_* variables are not', () => {
    const errs = spec({
      containers: [
        { name: 'main', image: 'main', ports: [{ containerPort: 8080 }] },
        { name: 'side', image: 'side', env: [{ name: 'PORT', value: '9' }, { name: 'K_REVISION' }] },
      ],
      initContainers: [{ name: 'init', image: 'init', env: [{ name: 'PORT' }, { name: 'K_SERVICE' }] }],
    });
    // Upstream reports init containers under containers[i].
    expect(messages(errs)).toEqual([
      'spec.containers[0].env[1].name: "K_SERVICE" is a reserved environment variable',
      'spec.containers[1].env[1].name: "K_REVISION" is a reserved environment variable',
    ]);
  });

  it.each([8012, 8013, 8022, 9090, 9091, 8008])('port %i is reserved', (port) => {
    expect(spec({ containers: [{ image: 'a', ports: [{ containerPort: port }] }] })).toEqual([
      {
        path: 'spec.containers[0].ports.containerPort',
        message: `invalid value: ${port} is a reserved port`,
        details: `${port} is a reserved port, please use a different value`,
      },
    ]);
  });

  it('the container name queue-proxy is reserved', () => {
    expect(messages(spec({ containers: [{ image: 'a', name: 'queue-proxy' }] }))).toEqual([
      'spec.containers[0].name: "queue-proxy" is a reserved container name',
    ]);
  });

  it('container names are unique across init and regular containers', () => {
    expect(
      messages(
        spec({
          containers: [
            { image: 'a', name: 'x', ports: [{ containerPort: 80 }] },
            { image: 'b', name: 'x' },
          ],
          initContainers: [{ image: 'i', name: 'x' }],
        }),
      ),
    ).toEqual(['spec.containers[0].name: duplicate container name "x"', 'spec.containers[1].name: duplicate container name "x"']);
  });
});

describe('ports', () => {
  it('only one container port is allowed', () => {
    expect(spec({ containers: [{ image: 'a', ports: [{ containerPort: 8080 }, { containerPort: 8081 }] }] })).toEqual([
      {
        path: 'spec.containers[*].ports',
        message: 'more than one container port is set',
        details: 'Only a single port is allowed across all containers',
      },
    ]);
  });

  it('the port name is "", h2c or http1; protocol TCP; 0..65535', () => {
    expect(spec({ containers: [{ image: 'a', ports: [{ containerPort: 8080, name: 'h2c', protocol: 'TCP' }] }] })).toEqual([]);
    expect(spec({ containers: [{ image: 'a', ports: [{ containerPort: 8080, name: 'http1' }] }] })).toEqual([]);
    expect(spec({ containers: [{ image: 'a', ports: [{ containerPort: 8080, name: 'grpc' }] }] })).toEqual([
      { path: 'spec.containers[0].ports', message: 'Port name grpc is not allowed', details: "Name must be empty, or one of: 'h2c', 'http1'" },
    ]);
    expect(messages(spec({ containers: [{ image: 'a', ports: [{ containerPort: 70000, protocol: 'UDP' }] }] }))).toEqual([
      'spec.containers[0].ports.containerPort: expected 0 <= 70000 <= 65535',
      'spec.containers[0].ports.protocol: invalid value: UDP',
    ]);
  });

  it('multi-container requires exactly one container with a port', () => {
    expect(
      spec({
        containers: [
          { name: 'a', image: 'a' },
          { name: 'b', image: 'b' },
        ],
      }),
    ).toEqual([{ path: 'spec.containers[*].ports', message: 'missing field(s)' }]);
    expect(
      spec({
        containers: [
          { name: 'a', image: 'a', ports: [{ containerPort: 80 }] },
          { name: 'b', image: 'b', ports: [{ containerPort: 81 }] },
        ],
      }),
    ).toEqual([
      {
        path: 'spec.containers[*].ports',
        message: 'more than one container port is set',
        details: 'Only a single port is allowed across all containers',
      },
    ]);
    expect(
      spec({
        containers: [
          { name: 'a', image: 'a', ports: [{ containerPort: 80 }] },
          { name: 'b', image: 'b' },
        ],
      }),
    ).toEqual([]);
  });

  it('multi-container can be switched off', () => {
    expect(
      validateRevisionSpec({ containers: [{ image: 'a', ports: [{ containerPort: 80 }] }, { image: 'b' }] }, 'spec', cfg(), {
        features: { multiContainer: false },
      }),
    ).toEqual([{ path: '', message: 'multi-container is off, but found 2 containers' }]); // upstream gives it no path
  });
});

describe('containers: image, probes, misc', () => {
  it('requires a parseable image', () => {
    expect(messages(spec({ containers: [{ image: '' }] }))).toEqual(['spec.containers[0].image: missing field(s)']);
    expect(spec({ containers: [{ image: 'foo:bar:baz' }] })).toEqual([
      {
        path: 'spec.containers[0].image',
        message: 'Failed to parse image reference',
        details: 'image: "foo:bar:baz", error: could not parse reference: foo:bar:baz',
      },
    ]);
    expect(spec({ containers: [] })).toEqual([{ path: 'spec.containers', message: 'missing field(s)' }]);
  });

  it.each([
    'nginx',
    'nginx:1.27',
    'library/nginx',
    'gcr.io/p/img:v1',
    'localhost:5000/img',
    'kind.local/x',
    `ghcr.io/a/b@sha256:${'a'.repeat(64)}`,
    `ghcr.io/a/b:v1@sha256:${'0'.repeat(64)}`,
    'reg.io:443/a/b-c_d.e:1.0-rc.1',
  ])('accepts the image %s', (image) => {
    expect(isImageReference(image)).toBe(true);
  });
  it.each(['foo:bar:baz', 'UPPER/case', 'a@sha256:xyz', 'a:', 'a//b', ':tag', 'ko://knative.dev/serving/cmd/queue'])(
    'rejects the image %s',
    (image) => {
      expect(isImageReference(image)).toBe(false);
    },
  );

  it('validates the serving container readiness probe like Knative', () => {
    const probe = (p: Record<string, unknown>): string[] => messages(spec({ containers: [{ image: 'a', readinessProbe: p }] }));
    expect(probe({ tcpSocket: {}, successThreshold: 1 })).toEqual([]);
    expect(probe({ httpGet: {}, successThreshold: 1, periodSeconds: 5, timeoutSeconds: 1, failureThreshold: 3 })).toEqual([]);
    expect(probe({ successThreshold: 1 })).toEqual([
      'spec.containers[0].readinessProbe.httpGet, spec.containers[0].readinessProbe.tcpSocket, spec.containers[0].readinessProbe.exec, spec.containers[0].readinessProbe.grpc: expected exactly one, got neither',
    ]);
    expect(probe({ tcpSocket: {}, exec: {}, successThreshold: 1 })).toEqual([
      'spec.containers[0].readinessProbe.tcpSocket, spec.containers[0].readinessProbe.exec: expected exactly one, got both',
    ]);
    expect(probe({ tcpSocket: {}, successThreshold: 1, failureThreshold: 2, timeoutSeconds: 2 })).toEqual([
      'spec.containers[0].readinessProbe.failureThreshold: failureThreshold is disallowed when periodSeconds is zero',
      'spec.containers[0].readinessProbe.timeoutSeconds: timeoutSeconds is disallowed when periodSeconds is zero',
    ]);
    expect(probe({ httpGet: {}, periodSeconds: -1, initialDelaySeconds: -1 })).toEqual([
      'spec.containers[0].readinessProbe.periodSeconds: expected 0 <= -1 <= 2147483647',
      'spec.containers[0].readinessProbe.initialDelaySeconds: expected 0 <= -1 <= 2147483647',
      'spec.containers[0].readinessProbe.successThreshold: expected 1 <= 0 <= 2147483647',
      'spec.containers[0].readinessProbe.timeoutSeconds: expected 1 <= 0 <= 2147483647',
      'spec.containers[0].readinessProbe.failureThreshold: expected 1 <= 0 <= 2147483647',
    ]);
  });

  it('rejects probes on sidecars and probes or lifecycle on init containers', () => {
    expect(
      messages(
        spec({
          containers: [
            { name: 'a', image: 'a', ports: [{ containerPort: 80 }] },
            { name: 'b', image: 'b', readinessProbe: { tcpSocket: {}, successThreshold: 1 } },
          ],
          initContainers: [{ name: 'i', image: 'i', livenessProbe: { exec: {} }, lifecycle: { preStop: {} } }],
        }),
      ),
    ).toEqual([
      // Upstream reports init containers under containers[i]; lifecycle is masked for every container.
      'spec.containers[0].livenessProbe: field not allowed in an init container',
      'spec.containers[0].lifecycle: field not allowed in an init container',
      'spec.containers[0].lifecycle: must not set the field(s)',
      'spec.containers[1].readinessProbe, spec.containers[1].readinessProbe.successThreshold: must not set the field(s)',
    ]);
    expect(
      messages(
        validateRevisionSpec({ containers: [{ image: 'a' }], initContainers: [{ image: 'i' }] }, 'spec', cfg(), {
          features: { initContainers: false },
        }),
      ),
    ).toEqual(['spec.initContainers: must not set the field(s)', ': pod spec support for init-containers is off, but found 1 init containers']);
  });

  it('checks serviceAccountName and user/group ids', () => {
    expect(
      messages(
        spec({
          containers: [{ image: 'a', securityContext: { runAsUser: -1, runAsGroup: 2 ** 31 } }],
          serviceAccountName: 'Bad_SA',
          securityContext: { fsGroup: -5 },
        }),
      ),
    ).toEqual([
      'spec.securityContext.fsGroup: expected 0 <= -5 <= 2147483647',
      'spec.containers[0].securityContext.runAsUser: expected 0 <= -1 <= 2147483647',
      'spec.containers[0].securityContext.runAsGroup: expected 0 <= 2147483648 <= 2147483647',
      'spec.serviceAccountName: invalid value: Bad_SA',
    ]);
  });
});

describe('volumes', () => {
  const withVolumes = (volumes: unknown[], mounts: unknown[], extra: Record<string, unknown> = {}): RevisionSpec => ({
    containers: [{ image: 'a', volumeMounts: mounts }],
    volumes,
    ...extra,
  });

  it('accepts mounted secret/configMap/projected (read-only) and emptyDir (writable) volumes', () => {
    expect(
      spec(
        withVolumes(
          [
            { name: 's', secret: { secretName: 's' } },
            { name: 'c', configMap: { name: 'c' } },
            { name: 'p', projected: { sources: [] } },
            { name: 'e', emptyDir: { medium: 'Memory' } },
          ],
          [
            { name: 's', mountPath: '/s', readOnly: true },
            { name: 'c', mountPath: '/c', readOnly: true },
            { name: 'p', mountPath: '/p', readOnly: true },
            { name: 'e', mountPath: '/e' },
          ],
        ),
      ),
    ).toEqual([]);
  });

  it('volumes must be mounted, mounts must resolve', () => {
    expect(
      messages(spec(withVolumes([{ name: 'unused', secret: { secretName: 's' } }], [{ name: 'ghost', mountPath: '/g', readOnly: true }]))),
    ).toEqual([
      'spec.volumes[0].name: volume with name "unused" not mounted',
      'spec.containers[0].volumeMounts[0].name: volumeMount has no matching volume',
    ]);
  });

  it('mounts of non-writable volumes must be readOnly', () => {
    expect(messages(spec(withVolumes([{ name: 's', secret: { secretName: 's' } }], [{ name: 's', mountPath: '/s' }])))).toEqual([
      'spec.containers[0].volumeMounts[0].readOnly: volume mount should be readOnly for this type of volume',
    ]);
  });

  it('reserved, relative and duplicate mount paths are rejected', () => {
    expect(
      messages(
        spec(
          withVolumes(
            [
              { name: 'a', secret: {} },
              { name: 'b', secret: {} },
              { name: 'c', secret: {} },
              { name: 'd', secret: {} },
            ],
            [
              { name: 'a', mountPath: '//dev//', readOnly: true },
              { name: 'b', mountPath: 'rel/path', readOnly: true },
              { name: 'c', mountPath: '/x', readOnly: true },
              { name: 'd', mountPath: '/x/', readOnly: true },
            ],
          ),
        ),
      ),
    ).toEqual([
      'spec.containers[0].volumeMounts[0].mountPath: mountPath "/dev" is a reserved path',
      'spec.containers[0].volumeMounts[1].mountPath: invalid value: rel/path',
      'spec.containers[0].volumeMounts[3].mountPath: invalid value: "/x/" must be unique',
    ]);
    expect(messages(spec(withVolumes([{ name: 'a', secret: {} }], [{ name: 'a', readOnly: true }])))).toEqual([
      'spec.containers[0].volumeMounts[0].mountPath: missing field(s)',
    ]);
  });

  it('gated volume types are rejected unless their feature is enabled', () => {
    const pvc = withVolumes([{ name: 'd', persistentVolumeClaim: { claimName: 'claim' } }], [{ name: 'd', mountPath: '/d' }]);
    // Upstream's feature messages carry no path; a PVC mount needs no readOnly.
    expect(messages(spec(pvc))).toEqual([
      ': Persistent volume claim support is disabled, but found persistent volume claim claim',
      ': Persistent volume write support is disabled, but found persistent volume claim claim that is not read-only',
      'spec.volumes[0].persistentVolumeClaim: must not set the field(s)',
    ]);
    const on = (f: Record<string, boolean>): string[] => messages(validateRevisionSpec(pvc, 'spec', cfg(), { features: f }));
    expect(on({ persistentVolumeClaim: true })).toEqual([
      ': Persistent volume write support is disabled, but found persistent volume claim claim that is not read-only',
    ]);
    expect(on({ persistentVolumeClaim: true, persistentVolumeWrite: true })).toEqual([]);
    const roClaim = withVolumes([{ name: 'd', persistentVolumeClaim: { claimName: 'c', readOnly: true } }], [{ name: 'd', mountPath: '/d' }]);
    expect(messages(validateRevisionSpec(roClaim, 'spec', cfg(), { features: { persistentVolumeClaim: true } }))).toEqual([
      'spec.containers[0].volumeMounts[0].readOnly: volume is readOnly but volume mount is not',
    ]);
    expect(messages(spec(withVolumes([{ name: 'h', hostPath: { path: '/' } }], [{ name: 'h', mountPath: '/h', readOnly: true }])))).toEqual([
      ': HostPath volume support is disabled, but found HostPath volume h',
      'spec.volumes[0].hostPath: must not set the field(s)',
    ]);
    expect(
      messages(
        validateRevisionSpec(withVolumes([{ name: 'e', emptyDir: {} }], [{ name: 'e', mountPath: '/e' }]), 'spec', cfg(), {
          features: { emptyDir: false },
        }),
      ),
    ).toEqual([': EmptyDir volume support is disabled, but found EmptyDir volume e', 'spec.volumes[0].emptyDir: must not set the field(s)']);
  });

  it('each volume has exactly one source, a unique DNS-1123 name, and a valid emptyDir medium', () => {
    expect(
      messages(
        spec(
          withVolumes(
            [{ name: 'a' }, { name: 'b', secret: {}, configMap: {} }, { name: 'b', secret: {} }, { name: 'Bad', emptyDir: { medium: 'HugePages' } }],
            [
              { name: 'a', mountPath: '/a', readOnly: true },
              { name: 'b', mountPath: '/b', readOnly: true },
              { name: 'Bad', mountPath: '/c', readOnly: true },
            ],
          ),
        ),
      ),
    ).toEqual([
      'spec.volumes[0].secret, spec.volumes[0].configMap, spec.volumes[0].projected, spec.volumes[0].emptyDir: expected exactly one, got neither',
      'spec.volumes[1].secret, spec.volumes[1].configMap: expected exactly one, got both',
      'spec.volumes[2].name: duplicate volume name "b"',
      'spec.volumes[3].name: invalid value: Bad',
      'spec.volumes[3].emptyDir.medium: invalid value: HugePages',
    ]);
  });
});

describe('metadata annotations', () => {
  it('autoscaling.knative.dev annotations are rejected on Service, Configuration and Route metadata', () => {
    const want: FieldError = {
      path: 'metadata.annotations',
      message: 'invalid key name "autoscaling.knative.dev/min-scale"',
      details: 'autoscaling annotations must be put under "spec.template.metadata.annotations" to work',
    };
    expect(
      validateService(
        svc((s) => void (s.metadata.annotations = { 'autoscaling.knative.dev/min-scale': '3' })),
        cfg(),
      ),
    ).toEqual([want]);
    const c = configuration('api', 'default');
    c.metadata.annotations = { 'autoscaling.knative.dev/min-scale': '3' };
    expect(validateConfiguration(c, cfg())).toEqual([want]);
    expect(
      validateRoute(
        route([{ configurationName: 'c', percent: 100 }], (r) => void (r.metadata.annotations = { 'autoscaling.knative.dev/min-scale': '3' })),
      ),
    ).toEqual([want]);
  });

  it('rollout-duration must be a non-negative whole-second Go duration (Service and Route, both spellings)', () => {
    const onSvc = (v: string, key = 'serving.knative.dev/rollout-duration'): string[] =>
      messages(
        validateService(
          svc((s) => void (s.metadata.annotations = { [key]: v })),
          cfg(),
        ),
      );
    expect(onSvc('120s')).toEqual([]);
    expect(onSvc('0')).toEqual([]);
    expect(onSvc('1.5s')).toEqual(['metadata.annotations.serving.knative.dev/rollout-duration: rollout-duration=1.5s is not at second precision']);
    expect(onSvc('-5s')).toEqual(['metadata.annotations.serving.knative.dev/rollout-duration: rollout-duration=-5s must be positive']);
    expect(onSvc('soon', 'serving.knative.dev/rolloutDuration')).toEqual([
      'metadata.annotations.serving.knative.dev/rolloutDuration: invalid value: soon',
    ]);
    expect(
      messages(
        validateRoute(
          route(
            [{ configurationName: 'c', percent: 100 }],
            (r) => void (r.metadata.annotations = { 'serving.knative.dev/rollout-duration': '2m500ms' }),
          ),
        ),
      ),
    ).toEqual(['metadata.annotations.serving.knative.dev/rollout-duration: rollout-duration=2m500ms is not at second precision']);
  });

  it('the template progress-deadline must be a non-negative whole-second Go duration', () => {
    const onTmpl = (v: string): string[] =>
      messages(
        validateService(
          svc((s) => void (s.spec.template.metadata = { annotations: { 'serving.knative.dev/progress-deadline': v } })),
          cfg(),
        ),
      );
    expect(onTmpl('300s')).toEqual([]);
    expect(onTmpl('10')).toEqual(['spec.template.metadata.annotations.serving.knative.dev/progress-deadline: invalid value: 10']);
    expect(onTmpl('1.5s')).toEqual([
      'spec.template.metadata.annotations.serving.knative.dev/progress-deadline: progress-deadline=1.5s is not at second precision',
    ]);
    expect(onTmpl('-1m')).toEqual([
      'spec.template.metadata.annotations.serving.knative.dev/progress-deadline: progress-deadline=-1m must be positive',
    ]);
  });

  it('validates template autoscaling annotations: min/max-scale >= 0, max >= min, initial-scale, class, metric, target', () => {
    const onTmpl = (anns: Record<string, string>, opts = {}): string[] =>
      messages(
        validateService(
          svc((s) => void (s.spec.template.metadata = { annotations: anns })),
          cfg(),
          opts,
        ),
      );
    const p = 'spec.template.metadata.annotations.autoscaling.knative.dev/';
    expect(
      onTmpl({ 'autoscaling.knative.dev/min-scale': '2', 'autoscaling.knative.dev/max-scale': '30', 'autoscaling.knative.dev/initial-scale': '3' }),
    ).toEqual([]);
    expect(onTmpl({ 'autoscaling.knative.dev/min-scale': '-1', 'autoscaling.knative.dev/maxScale': 'many' })).toEqual([
      `${p}min-scale: expected 0 <= -1 <= 2147483647`,
      `${p}maxScale: invalid value: many`,
    ]);
    expect(onTmpl({ 'autoscaling.knative.dev/minScale': '5', 'autoscaling.knative.dev/max-scale': '3' })).toEqual([
      `${p}max-scale, ${p}min-scale: max-scale=3 is less than min-scale=5`,
    ]);
    expect(onTmpl({ 'autoscaling.knative.dev/max-scale': '0' }, { autoscaler: { ...defaultAutoscalerConfig(), maxScaleLimit: 10 } })).toEqual([
      `${p}max-scale: max-scale=0 (unlimited), must be less than 10`,
    ]);
    expect(onTmpl({ 'autoscaling.knative.dev/initial-scale': '0' })).toEqual([`${p}initial-scale=0 not allowed by cluster: invalid value: 0`]);
    expect(
      onTmpl({ 'autoscaling.knative.dev/initial-scale': '0' }, { autoscaler: { ...defaultAutoscalerConfig(), allowZeroInitialScale: true } }),
    ).toEqual([]);
    expect(onTmpl({ 'autoscaling.knative.dev/class': 'xpa.autoscaling.knative.dev', 'autoscaling.knative.dev/target': '0' })).toEqual([
      `${p}class: invalid value: xpa.autoscaling.knative.dev`,
      `${p}target: target 0 should be at least 0.01`,
    ]);
    expect(onTmpl({ 'autoscaling.knative.dev/metric': 'cpu' })).toEqual([`${p}metric: invalid value: cpu`]);
    expect(onTmpl({ 'autoscaling.knative.dev/class': 'hpa.autoscaling.knative.dev', 'autoscaling.knative.dev/metric': 'cpu' })).toEqual([]);
    expect(
      onTmpl({
        'autoscaling.knative.dev/window': '5s',
        'autoscaling.knative.dev/target-burst-capacity': '-2',
        'autoscaling.knative.dev/target-utilization-percentage': '150',
      }),
    ).toEqual([
      `${p}target-utilization-percentage: expected 1 <= 150 <= 100`,
      `${p}target-burst-capacity: invalid value: -2`,
      `${p}window: expected 6s <= 5s <= 1h0m0s`,
    ]);
  });
});

describe('labels and ownership', () => {
  it('leaves Service labels alone (current upstream no longer checks serving.knative.dev keys or the visibility value)', () => {
    expect(
      messages(
        validateService(
          svc((s) => void (s.metadata.labels = { 'serving.knative.dev/route': 'x', 'networking.knative.dev/visibility': 'public' })),
          cfg(),
        ),
      ),
    ).toEqual([]);
  });

  it('requires an owner reference behind the serving.knative.dev/service label', () => {
    const c = configuration('web', 'default');
    c.spec.template.spec = { containers: [{ image: 'nginx' }] };
    c.metadata.labels = { 'serving.knative.dev/service': 'web' };
    expect(messages(validateConfiguration(c, cfg()))).toEqual(['metadata.labels.serving.knative.dev/service: missing field(s)']);
    c.metadata.ownerReferences = [{ apiVersion: 'serving.knative.dev/v1', kind: 'Service', name: 'web', uid: 'u', controller: true }];
    expect(validateConfiguration(c, cfg())).toEqual([]);
  });

  it('requires DNS-1035 object names', () => {
    expect(messages(validateRoute(route([{ configurationName: 'c', percent: 100 }], (r) => void (r.metadata.name = '1route'))))[0]).toMatch(
      /^metadata\.name: not a DNS 1035 label: \[/u,
    );
  });
});
