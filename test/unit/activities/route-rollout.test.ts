// The Route step with gradual rollouts: planRollout wired into reconcileRoute against the
// in-memory API server, on fake timers: the test moves the clock, and a pass that waits for a step's time waits on it. The algorithm's numbers are tested in
// test/unit/resources/rollout*.test.ts; here: what reaches the KIngress, the Route's status, its Events and the outcome.
import { defaultFeaturesConfig } from '../../../api/config/features.js';
import pino from 'pino';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { ActivityDeps, ConfigSource } from '../../../activities/deps.js';
import type { EventRecorder } from '../../../activities/events.js';
import { observing } from '../../../activities/observe.js';
import { createRouteActivities, RouteFinalizer, type RouteOutcome } from '../../../activities/route.js';
import { parseDomainConfig } from '../../../api/config/domain.js';
import { parseNetworkConfig } from '../../../api/config/network.js';
import { Resources } from '../../../api/kinds.js';
import type { Ingress } from '../../../api/networking.js';
import type { Condition, Configuration, Revision, Route } from '../../../api/serving.js';
import { parseRolloutAnnotation, RolloutWakeLeadMs } from '../../../resources/rollout.js';
import { KubeFake } from './kube-fake.js';

const NS = 'default';
const T0 = Date.parse('2026-11-23T10:00:00.000Z');
const OTHER_CLASS = 'contour.ingress.networking.knative.dev';
const ISTIO_CLASS = 'istio.ingress.networking.knative.dev';
const ROLLOUT = 'networking.internal.knative.dev/rollout';

const readyCond = (): Condition[] => [{ type: 'Ready', status: 'True' }];

function configuration(latestReady: string): Configuration {
  return {
    apiVersion: 'serving.knative.dev/v1',
    kind: 'Configuration',
    metadata: { name: 'cfg', namespace: NS, generation: 1 },
    spec: { template: { spec: { containers: [{ image: 'nginx' }] } } },
    status: { observedGeneration: 1, conditions: readyCond(), latestReadyRevisionName: latestReady, latestCreatedRevisionName: latestReady },
  };
}

function revision(name: string): Revision {
  return {
    apiVersion: 'serving.knative.dev/v1',
    kind: 'Revision',
    metadata: {
      name,
      namespace: NS,
      generation: 1,
      labels: { 'serving.knative.dev/configuration': 'cfg' },
      ownerReferences: [{ apiVersion: 'serving.knative.dev/v1', kind: 'Configuration', name: 'cfg', uid: 'uid-cfg', controller: true }],
    },
    spec: { containers: [{ image: 'nginx' }] },
    status: { observedGeneration: 1, conditions: readyCond() },
  };
}

/**
 * A Route `r` at Configuration `cfg` with `rollout-duration: <seconds>s`; the fake clock starts at T0. `ingressClass`: another
 * class by default, so `ingressReady` plays its controller (the test decides when the 1 % step becomes ready); with
 * istio the Route's step programs the KIngress itself.
 */
function harness(seconds: number, ingressClass = OTHER_CLASS) {
  const kube = new KubeFake();
  const events: string[] = [];
  const recorder: EventRecorder = { record: async (_o, type, reason, message) => void events.push(`${type} ${reason} ${message}`) };
  const net = parseNetworkConfig({ 'ingress-class': ingressClass });
  const dom = parseDomainConfig({ 'example.com': '' });
  if (!net.ok || !dom.ok) throw new Error('config');
  const config: ConfigSource = {
    revisionConfig: () => {
      throw new Error('not read by the Route');
    },
    networkConfig: () => net.value,
    domainConfig: () => dom.value,
    featuresConfig: () => defaultFeaturesConfig(),
    systemNamespace: 'knative-serving',
  };
  const deps = { kube: kube.client(), events: recorder, config, log: pino({ level: 'silent' }) } as unknown as ActivityDeps;
  const acts = createRouteActivities(deps);
  kube.seed(Resources.Configuration, configuration('cfg-00001'));
  kube.seed(Resources.Revision, revision('cfg-00001'));
  kube.seed(Resources.Route, {
    apiVersion: 'serving.knative.dev/v1',
    kind: 'Route',
    metadata: {
      name: 'r',
      namespace: NS,
      generation: 1,
      finalizers: [RouteFinalizer],
      annotations: { 'serving.knative.dev/rollout-duration': `${seconds}s` },
    },
    spec: { traffic: [{ configurationName: 'cfg', percent: 100 }] },
  });
  const h = {
    kube,
    events,
    /** Moves the clock to T0 + `s` seconds. */
    at: (s: number) => vi.setSystemTime(T0 + s * 1000),
    pass: async (): Promise<Exclude<RouteOutcome, { outcome: 'gone' }>> => {
      const o = await observing(() => acts.reconcileRoute({ namespace: NS, name: 'r' }));
      if (o.outcome === 'gone') throw new Error('gone');
      return o;
    },
    cond: (type: string) => kube.get<Route>(Resources.Route, NS, 'r')?.status?.conditions?.find((c) => c.type === type),
    traffic: () => (kube.get<Route>(Resources.Route, NS, 'r')?.status?.traffic ?? []).map((t) => `${t.revisionName} ${t.percent}`),
    annotation: () => kube.get<Ingress>(Resources.KIngress, NS, 'r')?.metadata.annotations?.[ROLLOUT],
    /** The KIngress's split of its first rule, as `revision percent`. */
    splits: () =>
      (kube.get<Ingress>(Resources.KIngress, NS, 'r')?.spec.rules?.[0]?.http?.paths?.[0]?.splits ?? []).map((s) => `${s.serviceName} ${s.percent}`),
    /** What the other class's controller does: the KIngress Ready for its generation. */
    ingressReady: () =>
      kube.edit<Ingress>(Resources.KIngress, NS, 'r', (i) => {
        i.status = {
          observedGeneration: i.metadata.generation ?? 1,
          conditions: readyCond(),
          publicLoadBalancer: { ingress: [{ domainInternal: 'gw.local' }] },
        };
      }),
    /** cfg-00002 created and Ready: the Configuration's latest ready Revision moves to it. */
    newRevision: () => {
      kube.seed(Resources.Revision, revision('cfg-00002'));
      kube.edit<Configuration>(Resources.Configuration, NS, 'cfg', (c) => (c.status = configuration('cfg-00002').status));
    },
    annotate: (value: string | undefined) =>
      kube.edit<Route>(Resources.Route, NS, 'r', (r) => {
        const a = { ...r.metadata.annotations };
        if (value === undefined) delete a['tidal.dev/rollout'];
        else a['tidal.dev/rollout'] = value;
        r.metadata.annotations = a;
      }),
  };
  return h;
}
type H = ReturnType<typeof harness>;

/** The Route Ready at cfg-00001, then cfg-00002 arrives at T0 and its rollout starts (1 %). */
async function startRollout(h: H) {
  h.at(-10);
  await h.pass();
  h.ingressReady();
  expect((await h.pass()).ready).toBe('True');
  h.events.length = 0;
  h.at(0);
  h.newRevision();
  return h.pass();
}

describe('the Route step with a gradual rollout', () => {
  beforeEach(() => vi.useFakeTimers({ now: T0, toFake: ['Date', 'setTimeout', 'clearTimeout'] }));
  afterEach(() => vi.useRealTimers());

  it('the first revision takes 100 % at once: no rollout, Knative’s annotation with the plain state', async () => {
    const h = harness(20);
    const first = await h.pass();
    expect(first.rollout).toBeUndefined();
    expect(h.annotation()).toBe(
      '{"configurations":[{"configurationName":"cfg","percent":100,"revisions":[{"revisionName":"cfg-00001","percent":100}],"stepParams":{}}]}',
    );
    expect(h.traffic()).toEqual(['cfg-00001 100']);
    h.ingressReady();
    expect((await h.pass()).ready).toBe('True');
    expect(h.events.filter((e) => e.includes('Rollout'))).toEqual([]);
  });

  it('a new revision starts at 1 %, then moves on the schedule computed from the 1 % step’s readiness, to 100 %', async () => {
    const h = harness(20);
    const started = await startRollout(h);
    expect(h.splits()).toEqual(['cfg-00001 99', 'cfg-00002 1']);
    expect(h.traffic()).toEqual(['cfg-00001 99', 'cfg-00002 1']);
    const ann = parseRolloutAnnotation(h.annotation());
    expect(ann?.configurations[0]).toMatchObject({ percent: 100, stepParams: { startTimeNs: `${T0}000000` } });
    expect(h.cond('IngressReady')).toMatchObject({ status: 'Unknown', reason: 'RolloutInProgress' });
    expect(h.cond('Ready')).toMatchObject({ status: 'Unknown', reason: 'RolloutInProgress' });
    expect(started.ready).toBe('Unknown');
    expect(h.events).toContainEqual(expect.stringMatching(/^Normal RolloutStarted .*cfg-00002/u));
    // Not observed ready yet: the only wake is the readiness bound (max(10 s, duration / 10)).
    expect(started.rollout?.nextStepAtMs).toBe(T0 + 10_000);

    // The 1 % step is ready after 5 s: 99 % in 15 s at 5 s a step → 33 % every 5 s (computeProperties).
    h.at(5);
    h.ingressReady();
    const scheduled = await h.pass();
    expect(scheduled.rollout).toMatchObject({ nextStepAtMs: T0 + 10_000, nextStepInMs: 5_000 });
    expect(scheduled.rollout?.summary).toBe('cfg-00002 at 1% (cfg-00001 99%, cfg-00002 1%), next step at 10:00:10.000Z');
    expect(h.events).toContainEqual(expect.stringMatching(/^Normal RolloutScheduled .*cfg-00002 moves 33% every 5s/u));

    // A pass for something else, well before the step: nothing moves, and the pass does not wait.
    h.at(9.5);
    expect((await h.pass()).rollout?.nextStepAtMs).toBe(T0 + 10_000);
    expect(h.splits()).toEqual(['cfg-00001 99', 'cfg-00002 1']);

    // The workflow's timer fires RolloutWakeLeadMs early: the pass waits for the step's time, then takes it.
    h.at(10 - RolloutWakeLeadMs / 1000);
    let answered = false;
    const early = h.pass().finally(() => (answered = true));
    await vi.advanceTimersByTimeAsync(RolloutWakeLeadMs - 1);
    expect(answered).toBe(false);
    expect(h.splits()).toEqual(['cfg-00001 99', 'cfg-00002 1']);
    await vi.advanceTimersByTimeAsync(1);
    const step = await early;
    expect(Date.now()).toBe(T0 + 10_000);
    expect(step.rollout?.summary).toBe('cfg-00002 1% → 34% (cfg-00001 66%, cfg-00002 34%), next step at 10:00:15.000Z');
    expect(h.traffic()).toEqual(['cfg-00001 66', 'cfg-00002 34']);
    expect(h.events).toContainEqual(expect.stringMatching(/^Normal RolloutStep .*cfg-00002 1% → 34%/u));
    h.at(15);
    await h.pass();
    expect(h.splits()).toEqual(['cfg-00001 33', 'cfg-00002 67']);
    h.at(20);
    const done = await h.pass();
    expect(done.rollout).toEqual({ summary: 'cfg-00002 67% → 100%, rollout finished' });
    expect(h.splits()).toEqual(['cfg-00002 100']);
    expect(h.traffic()).toEqual(['cfg-00002 100']);
    expect(h.events).toContainEqual(expect.stringMatching(/^Normal RolloutFinished /u));
    h.ingressReady();
    const settled = await h.pass();
    expect(settled.ready).toBe('True');
    expect(settled.rollout).toBeUndefined();
  });

  it('a step that fell due long ago is taken once, never a jump to 100 %', async () => {
    const h = harness(20);
    await startRollout(h);
    h.at(5);
    h.ingressReady();
    await h.pass();
    h.at(300); // an outage
    await h.pass();
    expect(h.splits()).toEqual(['cfg-00001 66', 'cfg-00002 34']);
  });

  it('istio: the KIngress programmed in the step is Ready within it, so the schedule starts in the same pass', async () => {
    const h = harness(20, ISTIO_CLASS);
    h.at(-10);
    expect((await h.pass()).ready).toBe('True');
    h.at(0);
    h.newRevision();
    const o = await h.pass();
    // Ready in under a second → minStepSec 1: 99 % over 19 s → 19 steps of 5 % every 1 s.
    expect(o.rollout?.nextStepAtMs).toBe(T0 + 1_000);
    expect(h.events).toContainEqual(expect.stringMatching(/RolloutScheduled .*cfg-00002 moves 5% every 1s/u));
    expect(h.splits()).toEqual(['cfg-00001 99', 'cfg-00002 1']);
    expect(h.cond('IngressReady')?.reason).toBe('RolloutInProgress');
    const ing = h.kube.get<Ingress>(Resources.KIngress, NS, 'r')!;
    expect(ing.status?.observedGeneration).toBe(ing.metadata.generation);
  });

  it('pause holds the split with no timer (RolloutPaused); resume takes the step that fell due at once', async () => {
    const h = harness(20);
    await startRollout(h);
    h.at(5);
    h.ingressReady();
    await h.pass();
    h.annotate('pause');
    h.at(12);
    const paused = await h.pass();
    expect(h.splits()).toEqual(['cfg-00001 99', 'cfg-00002 1']);
    expect(paused.rollout).toEqual({ summary: 'cfg-00002 at 1% (cfg-00001 99%, cfg-00002 1%), paused' });
    expect(h.cond('IngressReady')).toMatchObject({ status: 'Unknown', reason: 'RolloutPaused' });
    expect(h.cond('Ready')?.reason).toBe('RolloutPaused');
    h.annotate(undefined);
    h.at(30);
    const resumed = await h.pass();
    expect(h.splits()).toEqual(['cfg-00001 66', 'cfg-00002 34']);
    expect(resumed.rollout?.nextStepAtMs).toBe(T0 + 35_000);
  });

  it('promote finishes now: the newest revision gets it all (RolloutPromoted)', async () => {
    const h = harness(20);
    await startRollout(h);
    h.annotate('promote:cfg-00002');
    h.at(1);
    const o = await h.pass();
    expect(h.splits()).toEqual(['cfg-00002 100']);
    expect(o.rollout?.summary).toBe('cfg-00002 1% → 100%, rollout finished');
    expect(h.events).toContainEqual(expect.stringMatching(/^Normal RolloutPromoted /u));
    h.ingressReady();
    expect((await h.pass()).ready).toBe('True');
  });

  it('abort sends all traffic back and holds it there (AllTrafficAssigned False RolloutAborted); removing it starts afresh', async () => {
    const h = harness(20);
    await startRollout(h);
    h.at(5);
    h.ingressReady();
    await h.pass();
    h.at(10);
    await h.pass(); // 34 %
    h.annotate('abort');
    h.at(11);
    const aborted = await h.pass();
    expect(h.splits()).toEqual(['cfg-00001 100']);
    expect(h.traffic()).toEqual(['cfg-00001 100']);
    expect(aborted.rollout).toEqual({ summary: 'cfg-00002 aborted, traffic on cfg-00001' });
    expect(h.cond('AllTrafficAssigned')).toMatchObject({ status: 'False', reason: 'RolloutAborted' });
    expect(h.events).toContainEqual(expect.stringMatching(/^Warning RolloutAborted /u));
    // The Revision still serving stays routed (the labeler keeps what status.traffic names).
    h.ingressReady();
    expect((await h.pass()).ready).toBe('False');
    expect(h.kube.get<Revision>(Resources.Revision, NS, 'cfg-00001')?.metadata.labels?.['serving.knative.dev/routingState']).toBe('active');
    // Held on later passes without any stored flag.
    h.at(60);
    await h.pass();
    expect(h.splits()).toEqual(['cfg-00001 100']);
    h.annotate(undefined);
    h.at(61);
    await h.pass();
    expect(h.splits()).toEqual(['cfg-00001 99', 'cfg-00002 1']);
    expect(h.cond('AllTrafficAssigned')?.status).toBe('True');
  });

  it('rollback: the newest revision turning Ready False sends traffic back and the Route says why', async () => {
    const h = harness(20);
    await startRollout(h);
    h.at(5);
    h.ingressReady();
    await h.pass();
    h.at(10);
    await h.pass(); // 34 %
    h.kube.edit<Revision>(Resources.Revision, NS, 'cfg-00002', (r) => {
      r.status = { observedGeneration: 1, conditions: [{ type: 'Ready', status: 'False', reason: 'ExitCode1', message: 'Container failed' }] };
    });
    h.at(12);
    const o = await h.pass();
    expect(h.splits()).toEqual(['cfg-00001 100']);
    expect(o.rollout?.summary).toBe('cfg-00002 rolled back, traffic on cfg-00001');
    expect(o.rollout?.nextStepAtMs).toBeUndefined();
    expect(h.cond('AllTrafficAssigned')).toMatchObject({ status: 'False', reason: 'RolloutRolledBack' });
    expect(h.cond('AllTrafficAssigned')?.message).toContain('ExitCode1: Container failed');
    expect(h.events).toContainEqual(expect.stringMatching(/^Warning RolloutRolledBack /u));
  });

  it('duration 0: a new revision takes 100 % at once', async () => {
    const h = harness(0);
    await startRollout(h);
    expect(h.splits()).toEqual(['cfg-00002 100']);
    expect(h.cond('IngressReady')?.reason).not.toBe('RolloutInProgress');
  });
});
