// activities/apply.ts: applying children by what Tidal last applied (removed fields never reached the
// children), and reporting the applies the API server refuses (failures nobody sees).
import pino from 'pino';
import { asStep, recordingAtStepEnd } from '../../../activities/background.js';
import { describe, expect, it } from 'vitest';
import {
  APPLIED_HASH_ANNOTATION,
  apiErrorMessage,
  appliedHash,
  applyIfChanged,
  applyReportingFailures,
  recordLater,
  isPermanentApiError,
  needsApply,
  ownedWhole,
  settleAll,
  stampAppliedHash,
} from '../../../activities/apply.js';
import type { ActivityDeps } from '../../../activities/deps.js';
import type { EventRecorder } from '../../../activities/events.js';
import { Resources } from '../../../api/kinds.js';
import { serviceConditionSet } from '../../../api/lifecycle/service.js';
import type { Configuration, Service } from '../../../api/serving.js';
import { configuration, service } from '../../fixtures/serving.js';
import { KubeFake, refused } from './kube-fake.js';

const NOW = '2025-01-01T00:00:00.000Z';

const withMemoryLimit = (c: Configuration) =>
  void (c.spec.template.spec.containers = [{ image: 'nginx', resources: { limits: { memory: '1Gi' } }, env: [{ name: 'A', value: '1' }] }]);

describe('appliedHash / stampAppliedHash', () => {
  it('does not depend on key order, nor on an applied-hash annotation already present', () => {
    const a = configuration('hello', 'default', withMemoryLimit);
    const b = JSON.parse(JSON.stringify({ spec: a.spec, metadata: a.metadata, kind: a.kind, apiVersion: a.apiVersion })) as Configuration;
    expect(appliedHash(a)).toBe(appliedHash(b));
    const stamped = stampAppliedHash(a);
    expect(stamped.metadata.annotations?.[APPLIED_HASH_ANNOTATION]).toBe(appliedHash(a));
    expect(appliedHash(stamped)).toBe(appliedHash(a));
    expect(a.metadata.annotations).toBeUndefined(); // the input is not mutated
  });

  it('changes when a field is removed', () => {
    expect(appliedHash(configuration('hello', 'default', withMemoryLimit))).not.toBe(appliedHash(configuration('hello', 'default')));
  });
});

describe('needsApply (decided by what Tidal last applied, not by a subset test)', () => {
  const desired = configuration('hello', 'default');
  // What the API server holds after Tidal applied `desired`: plus server-set metadata and another writer's label.
  const live = (): Configuration => {
    const o = stampAppliedHash(desired);
    return { ...o, metadata: { ...o.metadata, uid: 'u', resourceVersion: '7', generation: 3, labels: { team: 'a' } } };
  };

  it('a missing child is applied; one Tidal applied exactly so, and nobody changed, is not', () => {
    expect(needsApply(undefined, desired)).toBe(true);
    expect(needsApply(live(), desired)).toBe(false);
  });

  it('regression: a desired object that DROPPED a field is applied, although the live child holds every desired field', () => {
    const before = stampAppliedHash(configuration('hello', 'default', withMemoryLimit));
    // The old subset test said "nothing to do" here: nginx is there, the extra limit and env var are not looked at.
    expect(needsApply(before, desired)).toBe(true);
  });

  it('a child edited by someone else (a desired field changed or removed) is applied again, to revert the edit', () => {
    const edited = live();
    edited.spec.template.spec.containers[0]!.image = 'evil';
    expect(needsApply(edited, desired)).toBe(true);
    const lostAnnotation = live();
    delete lostAnnotation.metadata.annotations;
    expect(needsApply(lostAnnotation, desired)).toBe(true);
  });

  it('a child without the annotation (applied by an older Tidal) is applied once', () => {
    expect(needsApply({ ...desired, metadata: { ...desired.metadata } }, desired)).toBe(true);
  });

  it('inSync overrides the test', () => {
    expect(needsApply(live(), configuration('hello', 'default', withMemoryLimit), { inSync: () => true })).toBe(false);
  });
});

describe('applyIfChanged against server-side apply', () => {
  it('regression: a memory limit, an env var and a label the parent no longer sets leave the child', async () => {
    const fake = new KubeFake();
    const kube = fake.client();
    const first = configuration('hello', 'default', withMemoryLimit, (c) => void (c.metadata.labels = { tier: 'gold' }));
    const created = await applyIfChanged(kube, Resources.Configuration, undefined, first);
    expect(created.action).toBe('created');

    const second = configuration('hello', 'default');
    const updated = await applyIfChanged(kube, Resources.Configuration, fake.get<Configuration>(Resources.Configuration, 'default', 'hello'), second);
    expect(updated.action).toBe('updated');
    const stored = fake.get<Configuration>(Resources.Configuration, 'default', 'hello')!;
    expect(stored.spec.template.spec.containers).toEqual([{ image: 'nginx' }]);
    expect(stored.metadata.labels).toBeUndefined();

    fake.calls = [];
    const again = await applyIfChanged(kube, Resources.Configuration, stored, second);
    expect(again.action).toBe('unchanged');
    expect(fake.writes()).toEqual([]);
  });
});

describe("ownedWhole: the spec, labels and annotations are all the owner's (upstream's semantic-equality clobber)", () => {
  const desired = configuration('hello', 'default', (c) => void (c.metadata.labels = { 'serving.knative.dev/service': 'hello' }));
  const owned = ownedWhole<Configuration>();

  /** The child as Tidal applied it, then edited by another writer (`kubectl edit`): what the next pass reads. */
  async function appliedThenEdited(edit: (c: Configuration) => void) {
    const fake = new KubeFake();
    const kube = fake.client();
    await applyIfChanged(kube, Resources.Configuration, undefined, desired, owned);
    fake.edit<Configuration>(Resources.Configuration, 'default', 'hello', edit);
    fake.calls = [];
    return { fake, kube, live: fake.get<Configuration>(Resources.Configuration, 'default', 'hello')! };
  }

  it.each<[string, (c: Configuration) => void]>([
    ['a template field (env)', (c) => void (c.spec.template.spec.containers[0]!.env = [{ name: 'FOREIGN', value: '1' }])],
    ['a label', (c) => void (c.metadata.labels = { ...c.metadata.labels, team: 'a' })],
    ['an annotation', (c) => void (c.metadata.annotations = { ...c.metadata.annotations, note: 'x' })],
  ])('removes %s another writer added, with one PUT of the live object', async (_what, edit) => {
    const { fake, kube, live } = await appliedThenEdited(edit);
    expect(needsApply(live, desired, owned)).toBe(true);
    const result = await applyIfChanged(kube, Resources.Configuration, live, desired, owned);
    expect(result.action).toBe('updated');
    expect(fake.writes().map((w) => w.verb)).toEqual(['update']);
    const put = fake.writes()[0]!.body as Configuration;
    expect(put.metadata.resourceVersion).toBe(live.metadata.resourceVersion); // conditional on what was read
    expect(put.metadata.uid).toBe(live.metadata.uid); // the rest of the live object kept
    const stored = fake.get<Configuration>(Resources.Configuration, 'default', 'hello')!;
    expect(stored.spec).toEqual(desired.spec);
    expect(stored.metadata.labels).toEqual(desired.metadata.labels);
    expect(stored.metadata.annotations).toEqual({ [APPLIED_HASH_ANNOTATION]: appliedHash(desired) });
    expect(needsApply(stored, desired, owned)).toBe(false);
  });

  it('a value Tidal sets changed by someone is put back; a Go zero value is no edit', async () => {
    const { fake, kube, live } = await appliedThenEdited((c) => void (c.spec.template.spec.containers[0]!.image = 'evil'));
    await applyIfChanged(kube, Resources.Configuration, live, desired, owned);
    expect(fake.writes()).toHaveLength(1);
    expect(fake.get<Configuration>(Resources.Configuration, 'default', 'hello')!.spec).toEqual(desired.spec);

    const roundTripped = await appliedThenEdited((c) => void (c.spec.template.spec.containers[0]!.resources = {}));
    expect(needsApply(roundTripped.live, desired, owned)).toBe(false);
  });

  it('content the desired object also holds is written with a server-side apply (a child Tidal changed)', async () => {
    const { fake, kube, live } = await appliedThenEdited(() => undefined);
    const more = configuration('hello', 'default', (c) => void (c.metadata.labels = { ...desired.metadata.labels, tier: 'gold' }));
    await applyIfChanged(kube, Resources.Configuration, live, more, owned);
    expect(fake.writes().map((w) => w.verb)).toEqual(['apply']);
    expect(fake.get<Configuration>(Resources.Configuration, 'default', 'hello')!.metadata.labels).toEqual(more.metadata.labels);
  });

  it('normalize: the defaults the webhook stores are no edit', () => {
    const withDefault = (c: Configuration): Configuration => ({
      ...c,
      spec: { template: { ...c.spec.template, spec: { timeoutSeconds: 300, ...c.spec.template.spec } } },
    });
    const live = withDefault(stampAppliedHash(desired));
    expect(needsApply(live, desired, owned)).toBe(true);
    expect(needsApply(live, desired, ownedWhole<Configuration>(withDefault))).toBe(false);
  });
});

describe('isPermanentApiError / apiErrorMessage', () => {
  it('4xx refusals are permanent; 408, 409, 429, 5xx and network errors are transient', () => {
    for (const code of [400, 403, 404, 422]) expect(isPermanentApiError(refused(code, 'X', 'm'))).toBe(true);
    for (const code of [408, 409, 429, 500, 503]) expect(isPermanentApiError(refused(code, 'X', 'm'))).toBe(false);
    expect(isPermanentApiError(new Error('ECONNRESET'))).toBe(false);
  });

  it("gives the API server's message without Tidal's verb and path", () => {
    const msg = 'admission webhook "v.example.com" denied the request: no latest tags';
    expect(apiErrorMessage(refused(400, 'BadRequest', msg, 'APPLY', '/apis/serving.knative.dev/v1/namespaces/default/configurations/hello'))).toBe(
      msg,
    );
    expect(apiErrorMessage(new Error('socket hang up'))).toBe('socket hang up');
  });
});

describe('applyReportingFailures', () => {
  const setup = () => {
    const fake = new KubeFake();
    const recorded: { reason: string; message: string; type: string }[] = [];
    const events: EventRecorder = { record: async (_o, type, reason, message) => void recorded.push({ type, reason, message }) };
    const deps = { kube: fake.client(), events, log: pino({ level: 'silent' }) } as unknown as ActivityDeps;
    const svc = fake.seed(Resources.Service, service('hello', 'default'));
    const target = { obj: svc, type: Resources.Service, set: serviceConditionSet, condition: 'ConfigurationsReady' };
    return { fake, deps, svc, target, recorded };
  };
  const invalid = 'Configuration.serving.knative.dev "hello" is invalid: spec.template.spec.containers[0].image: Required value';

  it("a refused update: the condition False InternalError with the API server's message, one Warning Event, rethrown", async () => {
    const { fake, deps, target, recorded } = setup();
    const live = fake.seed(Resources.Configuration, stampAppliedHash(configuration('hello', 'default')));
    fake.failNext('apply', Resources.Configuration, refused(422, 'Invalid', invalid));
    await expect(
      applyReportingFailures(deps, target, Resources.Configuration, live, configuration('hello', 'default', withMemoryLimit), NOW),
    ).rejects.toThrow(invalid);
    const message = `failed to update Configuration "hello": ${invalid}`;
    const status = fake.get<Service>(Resources.Service, 'default', 'hello')!.status!;
    expect(serviceConditionSet.get(status, 'ConfigurationsReady')).toMatchObject({ status: 'False', reason: 'InternalError', message });
    expect(serviceConditionSet.get(status, 'Ready')).toMatchObject({ status: 'False', reason: 'InternalError', message });
    expect(status.observedGeneration).toBe(1);
    expect(recorded).toEqual([{ type: 'Warning', reason: 'InternalError', message }]);
  });

  it('a refused create is reported as CreationFailed', async () => {
    const { fake, deps, target, recorded } = setup();
    fake.failNext(
      'apply',
      Resources.Configuration,
      refused(403, 'Forbidden', 'configurations.serving.knative.dev is forbidden: User "tidal" cannot patch'),
    );
    await expect(applyReportingFailures(deps, target, Resources.Configuration, undefined, configuration('hello', 'default'), NOW)).rejects.toThrow(
      'forbidden',
    );
    const status = fake.get<Service>(Resources.Service, 'default', 'hello')!.status!;
    expect(serviceConditionSet.get(status, 'ConfigurationsReady')).toMatchObject({ status: 'False', reason: 'CreationFailed' });
    expect(recorded.map((e) => e.reason)).toEqual(['CreationFailed']);
  });

  it('a transient failure (409, 500, no answer) is only rethrown: no status, no Event', async () => {
    const { fake, deps, target, recorded } = setup();
    for (const err of [refused(409, 'Conflict', 'c'), refused(500, 'InternalError', 'etcd'), new Error('ECONNRESET')]) {
      fake.failNext('apply', Resources.Configuration, err);
      await expect(applyReportingFailures(deps, target, Resources.Configuration, undefined, configuration('hello', 'default'), NOW)).rejects.toBe(
        err,
      );
    }
    expect(fake.get<Service>(Resources.Service, 'default', 'hello')!.status).toBeUndefined();
    expect(recorded).toEqual([]);
  });

  it('the same failure again writes no new status', async () => {
    const { fake, deps, target } = setup();
    for (let i = 0; i < 2; i++) {
      fake.failNext('apply', Resources.Configuration, refused(422, 'Invalid', invalid));
      const svc = fake.get<Service>(Resources.Service, 'default', 'hello')!;
      await expect(
        applyReportingFailures(deps, { ...target, obj: svc }, Resources.Configuration, undefined, configuration('hello', 'default'), NOW),
      ).rejects.toThrow();
    }
    expect(fake.writes('status')).toHaveLength(1);
  });
});

describe('settleAll / recordLater (writes and Events side by side)', () => {
  const later = <T>(ms: number, value: T, fail = false) =>
    new Promise<T>((resolve, reject) => setTimeout(() => (fail ? reject(new Error(String(value))) : resolve(value)), ms));

  it('gives the values in order, whatever order they settle in; undefined entries stay undefined', async () => {
    expect(await settleAll([later(15, 'a'), undefined, later(1, 'b')])).toEqual(['a', undefined, 'b']);
  });

  it('throws the first failure only once every promise has settled', async () => {
    const done: string[] = [];
    const track = <T>(p: Promise<T>, name: string) => p.finally(() => done.push(name));
    await expect(
      settleAll([track(later(1, 'early', true), 'early'), track(later(20, 'slow'), 'slow'), track(later(10, 'late', true), 'late')]),
    ).rejects.toThrow('early');
    expect(done.sort()).toEqual(['early', 'late', 'slow']);
  });

  it('records at once without waiting; the step waits for every Event (activities/background.ts)', async () => {
    const recorded: string[] = [];
    const events: EventRecorder = { record: (_o, _t, reason) => later(10, undefined).then(() => void recorded.push(reason)) };
    await asStep(async () => {
      const record = recordLater(recordingAtStepEnd(events));
      record(service('hello', 'default'), 'Normal', 'Created', 'a');
      record(service('hello', 'default'), 'Normal', 'Updated', 'b');
      expect(recorded).toEqual([]);
    });
    expect(recorded.sort()).toEqual(['Created', 'Updated']);
  });
});
