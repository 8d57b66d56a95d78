// Regression: a config-defaults change must not re-default the template of an existing object (it used to
// re-render every Service's Configuration and roll a Revision for each); objects created afterwards get the new
// defaults. The reconcile chain Service → Configuration → Revision is replayed here with the pure builders, the way
// activities/service.ts, configuration.ts and revision.ts call them.
import { describe, expect, it } from 'vitest';
import { defaultDefaultsConfig } from '../../../api/config/index.js';
import type { DefaultsConfig } from '../../../api/config/index.js';
import {
  DefaultsSnapshotAnnotation,
  defaultsInForce,
  defaultsSnapshot,
  readDefaultsSnapshot,
  setConfigurationDefaults,
  setRevisionSpecDefaults,
  setServiceDefaults,
  withDefaultsSnapshot,
} from '../../../api/defaults.js';
import { defaultForAdmission, type AdmissionContext } from '../../../api/admission.js';
import type { KubeObject } from '../../../api/meta.js';
import type { Configuration, Revision, Service } from '../../../api/serving.js';
import { makeConfiguration } from '../../../resources/configuration.js';
import { makeRevision } from '../../../resources/revision.js';
import { configuration, service } from '../../fixtures/serving.js';

const before: DefaultsConfig = defaultDefaultsConfig();
/** The changed config-defaults: every field defaulting reads moves. */
const after: DefaultsConfig = {
  ...before,
  containerConcurrency: 7,
  revisionTimeoutSeconds: 120,
  revisionIdleTimeoutSeconds: 60,
  containerNameTemplate: '{{.Name}}-app',
  revisionCpuRequest: '250m',
  enableServiceLinks: true,
};

/** What the API server adds to a created object. */
function stored<T extends KubeObject>(obj: T, uid: string, creationTimestamp = '2026-01-01T00:00:00Z'): T {
  return { ...obj, metadata: { ...obj.metadata, uid, creationTimestamp, generation: obj.metadata.generation ?? 1 } };
}

/** The Service reconcile: the desired Configuration, given the live one. */
function desiredConfiguration(svc: Service, current: DefaultsConfig, live?: Configuration): Configuration {
  const defaults = defaultsInForce(current, svc, [live]);
  return withDefaultsSnapshot(makeConfiguration(setServiceDefaults(svc, defaults), live), defaults);
}

/** The Configuration reconcile: the Revision it would create for its current generation, given its Revisions. */
function desiredRevision(cfg: Configuration, current: DefaultsConfig, revisions: Revision[]): Revision {
  const defaults = defaultsInForce(current, cfg, revisions);
  return withDefaultsSnapshot(makeRevision(setConfigurationDefaults(cfg, defaults), { now: '2026-01-01T00:00:00Z' }), defaults);
}

/** The Revision reconcile's in-memory defaulting. */
const defaultedRevisionSpec = (rev: Revision, current: DefaultsConfig) =>
  setRevisionSpecDefaults(rev.spec, defaultsInForce(current, rev), rev.metadata.name);

describe('a config-defaults change reaches only objects created afterwards', () => {
  it('leaves the defaulted template of an existing Service and its Configuration unchanged, and defaults a new Service with the new values', () => {
    const svc = service('web', 'default');
    const live = stored(desiredConfiguration(svc, before), 'uid-cfg-web');
    expect(live.spec.template.spec).toMatchObject({ containerConcurrency: 100, timeoutSeconds: 300, containers: [{ name: 'user-container' }] });

    // config-defaults changes; the Service pass runs again: the Configuration it applies is the same object.
    const again = desiredConfiguration(svc, after, live);
    expect(again.spec).toEqual(live.spec);
    expect(again.metadata.annotations).toEqual(live.metadata.annotations);

    // A Service created after the change gets the new defaults (and its Configuration their snapshot).
    const fresh = desiredConfiguration(service('shop', 'default'), after);
    expect(fresh.spec.template.spec).toMatchObject({
      containerConcurrency: 7,
      timeoutSeconds: 120,
      idleTimeoutSeconds: 60,
      enableServiceLinks: true,
      containers: [{ name: 'shop-app', resources: { requests: { cpu: '250m' } } }],
    });
    expect(readDefaultsSnapshot(fresh.metadata.annotations?.[DefaultsSnapshotAnnotation], before)).toEqual(after);
  });

  it('keeps the frozen defaults across a later template change of the existing Service', () => {
    const svc = service('web', 'default');
    const live = stored(desiredConfiguration(svc, before), 'uid-cfg-web');
    const updated = { ...svc, spec: { template: { spec: { containers: [{ image: 'nginx:2' }] } } } };
    const next = desiredConfiguration(updated, after, live);
    expect(next.spec.template.spec).toEqual({
      ...live.spec.template.spec,
      containers: [{ ...live.spec.template.spec.containers[0], image: 'nginx:2' }],
    });
  });

  it('gives a removed field the frozen default, not the value the child still holds', () => {
    const svc = service('web', 'default');
    svc.spec.template.spec.containerConcurrency = 10;
    const live = stored(desiredConfiguration(svc, before), 'uid-cfg-web');
    expect(live.spec.template.spec.containerConcurrency).toBe(10);
    const dropped = service('web', 'default');
    expect(desiredConfiguration(dropped, after, live).spec.template.spec.containerConcurrency).toBe(100);
  });

  it('ignores a Configuration the Service does not control (a leftover of a deleted namesake)', () => {
    const live = stored(desiredConfiguration(service('web', 'default'), before), 'uid-cfg-web');
    const reborn = service('web', 'default', (s) => void (s.metadata.uid = 'uid-web-2'));
    expect(desiredConfiguration(reborn, after, live).spec.template.spec.containerConcurrency).toBe(7);
  });

  it('creates the next Revision of an existing Service-owned Configuration with its frozen defaults', () => {
    const live = stored(desiredConfiguration(service('web', 'default'), before), 'uid-cfg-web');
    const rev1 = stored(desiredRevision(live, after, []), 'uid-rev-1');
    expect(rev1.spec).toEqual(live.spec.template.spec);
    expect(defaultedRevisionSpec(rev1, after)).toEqual(rev1.spec);
  });

  it('freezes a standalone Configuration through the snapshot on its Revisions', () => {
    const cfg = stored(configuration('api', 'default'), 'uid-api');
    const rev1 = stored(desiredRevision(cfg, before, []), 'uid-rev-1');
    expect(rev1.spec).toMatchObject({ containerConcurrency: 100, containers: [{ name: 'user-container' }] });

    // After the change: the Configuration's defaulted template is the one Revision 1 was made from …
    expect(setConfigurationDefaults(cfg, defaultsInForce(after, cfg, [rev1])).spec.template.spec).toEqual(rev1.spec);
    // … its next generation keeps the old defaults …
    const gen2 = { ...cfg, metadata: { ...cfg.metadata, generation: 2 }, spec: { template: { spec: { containers: [{ image: 'nginx:2' }] } } } };
    const rev2 = desiredRevision(gen2, after, [rev1]);
    expect(rev2.spec).toEqual({ ...rev1.spec, containers: [{ ...rev1.spec.containers[0], image: 'nginx:2' }] });
    expect(rev2.metadata.annotations?.[DefaultsSnapshotAnnotation]).toBe(defaultsSnapshot(before));
    // … and a Configuration created now gets the new ones.
    const other = stored(configuration('other', 'default'), 'uid-other');
    expect(desiredRevision(other, after, []).spec).toMatchObject({
      containerConcurrency: 7,
      timeoutSeconds: 120,
      containers: [{ name: 'other-app' }],
    });
  });

  it("does not add a later config's resource or idle-timeout defaults to an existing Revision", () => {
    const rev = stored(desiredRevision(stored(configuration('api', 'default'), 'uid-api'), before, []), 'uid-rev');
    const spec = defaultedRevisionSpec(rev, after);
    expect(spec).toEqual(rev.spec);
    expect(spec).not.toHaveProperty('idleTimeoutSeconds');
    expect(spec.containers[0]).not.toHaveProperty('resources');
  });
});

describe('with the webhook storing the defaults', () => {
  const admit = (svc: Service, defaults: DefaultsConfig, old?: Service): Service => {
    const ctx: AdmissionContext = {
      operation: old === undefined ? 'CREATE' : 'UPDATE',
      user: { username: 'alice' },
      defaults,
      validation: {},
      ...(old !== undefined ? { old } : {}),
    };
    return defaultForAdmission('Service', svc, ctx) as Service;
  };

  it('is a no-op on an admitted Service, whatever config-defaults says when it is first reconciled and afterwards', () => {
    const svc = stored(admit(service('web', 'default'), before), 'uid-web');
    // The controller first sees it after config-defaults changed (it was down): nothing is added or changed.
    const live = stored(desiredConfiguration(svc, after), 'uid-cfg-web');
    expect(live.spec.template).toEqual(svc.spec.template);
    expect(live.spec.template.spec.containers[0]).not.toHaveProperty('resources.requests');
    // … nor on later passes.
    expect(desiredConfiguration(svc, after, live).spec).toEqual(live.spec);
    // Its Revision is its template.
    expect(desiredRevision(live, after, []).spec).toEqual(svc.spec.template.spec);
  });

  it('gives an update admitted after the change the new defaults for what it lacks, and keeps the rest', () => {
    const svc = stored(admit(service('web', 'default'), before), 'uid-web');
    const live = stored(desiredConfiguration(svc, before), 'uid-cfg-web');
    // kubectl apply of a new image replaces the container list: the webhook defaults the new container now.
    const sent = {
      ...svc,
      spec: { ...svc.spec, template: { ...svc.spec.template, spec: { ...svc.spec.template.spec, containers: [{ image: 'nginx:2' }] } } },
    };
    const updated = admit(sent, after, svc);
    expect(updated.spec.template.spec).toMatchObject({
      containerConcurrency: 100,
      timeoutSeconds: 300,
      containers: [{ image: 'nginx:2', name: 'web-app', resources: { requests: { cpu: '250m' } } }],
    });
    expect(desiredConfiguration(updated, after, live).spec.template).toEqual(updated.spec.template);
  });

  it('still freezes a Service that bypassed the webhook at first sight', () => {
    const bypassed = stored(service('web', 'default'), 'uid-web');
    const live = stored(desiredConfiguration(bypassed, before), 'uid-cfg-web');
    expect(live.spec.template.spec).toMatchObject({ containerConcurrency: 100, timeoutSeconds: 300 });
    expect(desiredConfiguration(bypassed, after, live).spec).toEqual(live.spec);
  });
});

describe('defaultsInForce and the snapshot annotation', () => {
  it('round-trips every field defaulting reads, unset optional ones included', () => {
    expect(readDefaultsSnapshot(defaultsSnapshot(before), after)).toEqual(before);
    expect(readDefaultsSnapshot(defaultsSnapshot(after), before)).toEqual(after);
    expect(JSON.parse(defaultsSnapshot(before))).toMatchObject({ revisionCpuRequest: null, containerConcurrency: 100 });
  });

  it('keeps the current value of a key the snapshot lacks and ignores a malformed snapshot', () => {
    expect(readDefaultsSnapshot('{"containerConcurrency":5}', before)).toEqual({ ...before, containerConcurrency: 5 });
    for (const bad of ['', 'x', '[]', 'null', '{"containerConcurrency":"5"}', '{"revisionCpuRequest":1}', '{"enableServiceLinks":"yes"}']) {
      expect(readDefaultsSnapshot(bad, before)).toBeUndefined();
    }
  });

  it("prefers the object's own snapshot, then the newest controlled child's, then the current values", () => {
    const owner = stored(configuration('api', 'default'), 'uid-api');
    const child = (name: string, ts: string, d: DefaultsConfig, uid = 'uid-api'): KubeObject => ({
      apiVersion: 'v1',
      kind: 'Revision',
      metadata: {
        name,
        creationTimestamp: ts,
        ownerReferences: [{ apiVersion: 'v1', kind: 'Configuration', name: 'api', uid, controller: true }],
        annotations: { [DefaultsSnapshotAnnotation]: defaultsSnapshot(d) },
      },
    });
    const older = child('api-00001', '2026-01-01T00:00:00Z', { ...before, containerConcurrency: 1 });
    const newer = child('api-00002', '2026-01-02T00:00:00Z', { ...before, containerConcurrency: 2 });
    const foreign = child('api-00003', '2026-01-03T00:00:00Z', { ...before, containerConcurrency: 3 }, 'uid-other');
    expect(defaultsInForce(after, owner, [older, newer, foreign, undefined]).containerConcurrency).toBe(2);
    expect(defaultsInForce(after, owner, [foreign]).containerConcurrency).toBe(7);
    expect(defaultsInForce(after, withDefaultsSnapshot(owner, { ...before, containerConcurrency: 9 }), [newer]).containerConcurrency).toBe(9);
  });
});
