// Gradual rollouts on the real local stack: the seed's nginx Service with a test-sized
// `serving.knative.dev/rollout-duration`, driven as a user would — change the image, `kubectl annotate` the control
// annotation, a Revision that starts crash-looping, the controller SIGKILLed mid-rollout — and read back from the
// KIngress's `networking.internal.knative.dev/rollout` annotation, the Service's status, the Route's Events and the
// Service workflow's history. Only generous time bounds: the schedule's precision is bench:rollout's business.
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Resources } from '../../api/kinds.js';
import type { Ingress } from '../../api/networking.js';
import type { Condition, Route, Service } from '../../api/serving.js';
import { KubeClient } from '../../kube/client.js';
import { startController, temporalGoEnv, testPorts, type StackInfo } from '../../dev/stack.js';
import { ProcessTable } from '../../dev/processes.js';
import { parseRolloutAnnotation, type Rollout } from '../../resources/rollout.js';
import { apply, eventsWhen, getObject, kubectl, kubectlJson, stack, temporalClient, type KubeEvent } from '../harness/cluster.js';
import { eventually } from '../harness/wait.js';

const log = (s: string) => console.error(`[rollout] ${s}`);
const NAME = 'nginx';
const DURATION = '20s';

/** dev/sample/nginx.yaml with a test-sized rollout duration and the given image. */
const nginx = (image: string, duration = DURATION) => ({
  apiVersion: 'serving.knative.dev/v1',
  kind: 'Service',
  metadata: { name: NAME, namespace: 'default', annotations: { 'serving.knative.dev/rollout-duration': duration } },
  spec: { template: { spec: { containers: [{ image, ports: [{ containerPort: 80 }] }] } } },
});

const cond = (o: { status?: { conditions?: Condition[] } } | undefined, type: string) => o?.status?.conditions?.find((c) => c.type === type);

/** The Route's Events once `until` holds of their reasons (sent when the pass's work is done, ADR 0014). */
function routeEventsWhen(until: (reasons: string[]) => boolean): Promise<KubeEvent[]> {
  return eventsWhen(`involvedObject.kind=Route,involvedObject.name=${NAME}`, (events) => until(events.map((e) => e.reason)));
}

/** The rollout state on the KIngress. */
async function ingressRollout(): Promise<Rollout | undefined> {
  const out = await kubectl([
    'get',
    'ingresses.networking.internal.knative.dev',
    NAME,
    '-o',
    'jsonpath={.metadata.annotations.networking\\.internal\\.knative\\.dev/rollout}',
  ]);
  return parseRolloutAnnotation(out);
}

/** `revision percent` of the default group's rollout, oldest first. */
async function split(): Promise<string[]> {
  return ((await ingressRollout())?.configurations.find((c) => !c.tag)?.revisions ?? []).map((r) => `${r.revisionName} ${r.percent}`);
}

/** The percent the KIngress gives `revision` (0 when none). */
async function percentOf(revision: string): Promise<number> {
  const r = (await ingressRollout())?.configurations.find((c) => !c.tag)?.revisions.find((x) => x.revisionName === revision);
  return r?.percent ?? 0;
}

const serviceTraffic = async () => ((await getObject<Service>('ksvc', NAME))?.status?.traffic ?? []).map((t) => `${t.revisionName} ${t.percent}`);

const annotate = (value: string | undefined) =>
  kubectl(['annotate', 'ksvc', NAME, '--overwrite', value === undefined ? 'tidal.dev/rollout-' : `tidal.dev/rollout=${value}`]);

/** Waits until the KIngress splits as `want` (e.g. ['nginx-00002 100']). */
const splitIs = (what: string, want: string[], timeoutMs = 120_000) =>
  eventually(what, async () => (JSON.stringify(await split()) === JSON.stringify(want) ? true : undefined), timeoutMs, 250);

/** The Service's Ready condition, once it is True for its generation with all traffic on `revision`. */
const settledOn = (revision: string) =>
  eventually(
    `Service Ready on ${revision}`,
    async () => {
      const s = await getObject<Service>('ksvc', NAME);
      const traffic = (s?.status?.traffic ?? []).map((t) => `${t.revisionName} ${t.percent}`);
      return s?.status?.observedGeneration === s?.metadata.generation && cond(s, 'Ready')?.status === 'True' && traffic.join() === `${revision} 100`
        ? s
        : undefined;
    },
    120_000,
    500,
  );

/**
 * Every version of the KIngress's rollout state, from a watch (`kubectl get -w`), so no step is missed however busy
 * the machine is. `stop` ends the watch.
 */
function watchRollout(): { states: (Rollout | undefined)[]; stop: () => void } {
  const s = stack();
  const jsonpath = 'jsonpath={.metadata.annotations.networking\\.internal\\.knative\\.dev/rollout}{"\\n"}';
  const child = spawn(s.bins.KUBECTL, ['--kubeconfig', s.kubeconfig, 'get', 'ingresses.networking.internal.knative.dev', NAME, '-w', '-o', jsonpath]);
  const states: (Rollout | undefined)[] = [];
  createInterface({ input: child.stdout }).on('line', (line) => states.push(parseRolloutAnnotation(line)));
  return { states, stop: () => void child.kill() };
}

/**
 * Every version of the KIngress's rollout state across API server restarts: a watch that resumes from the last
 * resourceVersion it saw (bookmarks included). A restarted API server's watch cache starts at etcd's current revision
 * and answers an older one with 410 Gone: the watch then re-lists (`gaps` counts it), which shows the state as it is
 * then — several steps taken meanwhile would still show as one jump, so "never jumps" stays provable.
 */
function resumingWatch(): { states: (Rollout | undefined)[]; gaps: () => number; stop: () => Promise<void> } {
  const kube = new KubeClient({ kubeconfig: stack().kubeconfig, fieldManager: 'rollout-test', timeoutMs: 5000 });
  const abort = new AbortController();
  const states: (Rollout | undefined)[] = [];
  let rv: string | undefined;
  let gaps = 0;
  const fieldSelector = `metadata.name=${NAME}`;
  const done = (async () => {
    while (!abort.signal.aborted) {
      try {
        if (rv === undefined) {
          const list = await kube.list<Ingress>(Resources.KIngress, 'default', { fieldSelector });
          for (const i of list.items) states.push(parseRolloutAnnotation(i.metadata.annotations?.['networking.internal.knative.dev/rollout']));
          rv = list.resourceVersion;
        }
        await kube.watch<Ingress>(
          Resources.KIngress,
          { namespace: 'default', fieldSelector, resourceVersion: rv, timeoutSeconds: 60, signal: abort.signal },
          (ev) => {
            rv = ev.object.metadata.resourceVersion ?? rv;
            if (ev.type === 'BOOKMARK') return;
            states.push(parseRolloutAnnotation(ev.object.metadata.annotations?.['networking.internal.knative.dev/rollout']));
          },
        );
      } catch (err) {
        if ((err as { code?: number }).code === 410) {
          gaps += 1;
          rv = undefined;
        }
        await new Promise((r) => setTimeout(r, 200));
      }
    }
  })();
  return {
    states,
    gaps: () => gaps,
    stop: async () => {
      abort.abort();
      await done;
      kube.close();
    },
  };
}

/** The newest Revision's percents in `states`, each change once, and the largest step size announced. */
function percentsOf(states: (Rollout | undefined)[], revision: string): { seen: number[]; stepSize: number } {
  const seen: number[] = [];
  let stepSize = 0;
  for (const state of states) {
    const ro = state?.configurations.find((c) => !c.tag);
    const p = ro?.revisions.find((r) => r.revisionName === revision)?.percent;
    if (p !== undefined && seen.at(-1) !== p) seen.push(p);
    if (ro?.stepParams.stepSize) stepSize = Math.max(stepSize, ro.stepParams.stepSize);
  }
  return { seen, stepSize };
}

let procs: ProcessTable;
let info: StackInfo;

beforeAll(async () => {
  const s = stack();
  procs = new ProcessTable(s.dir);
  info = { dir: s.dir, kubeconfig: s.kubeconfig, temporalAddress: s.temporalAddress, temporalUi: undefined, bins: s.bins, ports: testPorts };
  await apply(nginx('nginx:1.27'));
  await settledOn('nginx-00001');
});

afterAll(async () => {
  // Leave the stack as the other files expect it: the controller running, no nginx.
  await startController(info, procs, { ports: testPorts, controllerEnv: stack().controllerEnv }, log);
  await kubectl(['delete', 'ksvc', NAME, '--ignore-not-found']);
});

describe('gradual rollouts', () => {
  it('the first Revision took 100 % at once', async () => {
    expect(await split()).toEqual(['nginx-00001 100']);
  });

  it('a new image moves 1 % → … → 100 % on durable timers, through a SIGKILL of the controller, never jumping', async () => {
    // Every state the KIngress goes through, and what the Service says meanwhile.
    const watch = watchRollout();
    const reasons = new Set<string>();
    let polling = true;
    const poller = (async () => {
      while (polling) {
        const reason = cond(await getObject<Service>('ksvc', NAME), 'Ready')?.reason;
        if (reason) reasons.add(reason);
        await new Promise((r) => setTimeout(r, 250));
      }
    })();

    await apply(nginx('nginx:1.28'));
    await eventually('1 % step', async () => ((await percentOf('nginx-00002')) >= 1 ? true : undefined), 120_000, 250);
    // Mid-rollout: kill the controller, leave it down across a few due steps, start it again.
    await eventually('a third of the way', async () => ((await percentOf('nginx-00002')) >= 30 ? true : undefined), 120_000, 250);
    const victim = procs.running('tidal-controller');
    expect(victim).toBeDefined();
    process.kill(victim!.pid, 'SIGKILL');
    const atKill = await percentOf('nginx-00002');
    log(`killed tidal-controller (pid ${victim!.pid}) at ${atKill} %`);
    await new Promise((r) => setTimeout(r, 4000));
    expect(await percentOf('nginx-00002')).toBe(atKill); // nobody steps while Tidal is down
    await startController(info, procs, { ports: testPorts, controllerEnv: stack().controllerEnv }, log);

    await splitIs('rollout finished', ['nginx-00002 100']);
    const svc = await settledOn('nginx-00002');
    polling = false;
    await poller;
    await new Promise((r) => setTimeout(r, 500)); // the watch's last lines
    watch.stop();
    const { seen, stepSize } = percentsOf(watch.states, 'nginx-00002');
    expect(svc.status?.traffic?.map((t) => `${t.revisionName} ${t.percent}`)).toEqual(['nginx-00002 100']);
    log(`steps seen: ${seen.join(' → ')} (step size ${stepSize})`);
    expect(seen[0]).toBe(1);
    expect(seen.at(-1)).toBe(100);
    expect(stepSize).toBeGreaterThan(0);
    // Monotonic, and never more than one step at a time — including on recovery from the outage.
    for (let i = 1; i < seen.length; i += 1) {
      expect(seen[i]! - seen[i - 1]!).toBeGreaterThan(0);
      expect(seen[i]! - seen[i - 1]!).toBeLessThanOrEqual(stepSize);
    }
    expect(reasons).toContain('RolloutInProgress');

    // The Service workflow's history reads as the rollout: one durable timer per step, named after it.
    const { client, close } = await temporalClient();
    try {
      const { events } = await client.workflow.getHandle(`Service/default/${NAME}`).fetchHistory();
      const timers = (events ?? [])
        .filter((e) => e.timerStartedEventAttributes && e.userMetadata?.summary?.data)
        .map((e) => JSON.parse(Buffer.from(e.userMetadata!.summary!.data!).toString('utf8')) as string)
        .filter((t) => t.startsWith(`rollout of Route default/${NAME}: nginx-00002 `));
      log(`timers: ${timers.length}, e.g. ${timers[1] ?? ''}`);
      expect(timers.length).toBeGreaterThanOrEqual(5);
      expect(
        timers.some((t) => /nginx-00002 \d+% → \d+% \(nginx-00001 \d+%, nginx-00002 \d+%\), next step at \d\d:\d\d:\d\d\.\d{3}Z$/u.test(t)),
      ).toBe(true);
    } finally {
      await close();
    }
    const wanted = ['RolloutStarted', 'RolloutScheduled', 'RolloutStep', 'RolloutFinished'];
    const eventReasons = (await routeEventsWhen((r) => wanted.every((w) => r.includes(w)))).map((e) => e.reason);
    for (const reason of wanted) expect(eventReasons).toContain(reason);
  });

  it('kubectl annotate: pause holds the split, resume goes on, promote finishes now', async () => {
    await apply(nginx('nginx:1.29'));
    await eventually('stepping', async () => ((await percentOf('nginx-00003')) > 1 ? true : undefined), 120_000, 250);
    await annotate('pause');
    const route = await eventually(
      'RolloutPaused',
      async () => {
        const r = await getObject<Route>('route', NAME);
        return cond(r, 'IngressReady')?.reason === 'RolloutPaused' ? r : undefined;
      },
      60_000,
      250,
    );
    expect(cond(route, 'Ready')?.status).toBe('Unknown');
    const held = await percentOf('nginx-00003');
    await new Promise((r) => setTimeout(r, 4000)); // several step durations
    expect(await percentOf('nginx-00003')).toBe(held);
    expect(held).toBeLessThan(100);

    await annotate('resume');
    await eventually('resumed', async () => ((await percentOf('nginx-00003')) > held ? true : undefined), 60_000, 250);

    await annotate('promote');
    await splitIs('promoted', ['nginx-00003 100'], 60_000);
    await settledOn('nginx-00003');
    await annotate(undefined);
  });

  it('kubectl annotate: abort sends all traffic back and says so; removing it starts the rollout afresh', async () => {
    await apply(nginx('nginx:1.30'));
    await eventually('stepping', async () => ((await percentOf('nginx-00004')) > 1 ? true : undefined), 120_000, 250);
    await annotate('abort');
    await splitIs('aborted', ['nginx-00003 100'], 60_000);
    const svc = await eventually(
      'Service says aborted',
      async () => {
        const s = await getObject<Service>('ksvc', NAME);
        return cond(s, 'Ready')?.reason === 'RolloutAborted' ? s : undefined;
      },
      60_000,
      250,
    );
    expect(cond(svc, 'Ready')?.status).toBe('False');
    expect(await serviceTraffic()).toEqual(['nginx-00003 100']);
    const route = await getObject<Route>('route', NAME);
    expect(cond(route, 'AllTrafficAssigned')).toMatchObject({ status: 'False', reason: 'RolloutAborted' });
    // Held while the annotation says so.
    await new Promise((r) => setTimeout(r, 3000));
    expect(await split()).toEqual(['nginx-00003 100']);

    await annotate(undefined);
    // A fresh rollout: from 1 %, stepping again (not 100 % at once).
    const fresh = await eventually(
      'fresh rollout',
      async () => {
        const p = await percentOf('nginx-00004');
        return p > 0 ? p : undefined;
      },
      60_000,
      100,
    );
    expect(fresh).toBeLessThan(50);
    await annotate('promote:nginx-00004');
    await settledOn('nginx-00004');
    await annotate(undefined);
  });

  it('automatic rollback: a new Revision that starts crash-looping mid-rollout loses its traffic, and the Route says why', async () => {
    await apply(nginx('nginx:1.31'));
    await eventually('stepping', async () => ((await percentOf('nginx-00005')) > 1 ? true : undefined), 120_000, 250);
    // kwok plays the kubelet and marks pods at start only (dev/kwok-stages.yaml), so the running pod's status is
    // written as kwok's crash-loop stage writes it.
    const pods = await kubectlJson<{ items: { metadata: { name: string } }[] }>(['get', 'pods', '-l', 'serving.knative.dev/revision=nginx-00005']);
    const now = new Date().toISOString();
    for (const pod of pods.items) {
      await kubectl([
        'patch',
        'pod',
        pod.metadata.name,
        '--subresource=status',
        '-p',
        JSON.stringify({
          status: {
            conditions: [
              { type: 'Ready', status: 'False', reason: 'ContainersNotReady', lastTransitionTime: now },
              { type: 'ContainersReady', status: 'False', reason: 'ContainersNotReady', lastTransitionTime: now },
            ],
            containerStatuses: [
              {
                name: 'user-container',
                image: 'nginx:1.31',
                imageID: '',
                ready: false,
                started: false,
                restartCount: 5,
                state: { waiting: { reason: 'CrashLoopBackOff', message: 'back-off restarting failed container user-container' } },
                lastState: { terminated: { exitCode: 1, reason: 'Error', message: 'crashed mid-rollout', startedAt: now, finishedAt: now } },
              },
            ],
          },
        }),
      ]);
    }
    await splitIs('rolled back', ['nginx-00004 100'], 120_000);
    const route = await eventually(
      'Route says why',
      async () => {
        const r = await getObject<Route>('route', NAME);
        return cond(r, 'AllTrafficAssigned')?.reason === 'RolloutRolledBack' ? r : undefined;
      },
      60_000,
      250,
    );
    expect(cond(route, 'AllTrafficAssigned')?.status).toBe('False');
    expect(cond(route, 'AllTrafficAssigned')?.message).toContain('nginx-00005');
    expect(await serviceTraffic()).toEqual(['nginx-00004 100']);
    const reasons = (await routeEventsWhen((r) => r.includes('RolloutRolledBack'))).map((e) => e.reason);
    expect(reasons).toContain('RolloutRolledBack');

    // A later fixed Revision starts a fresh rollout.
    await apply(nginx('nginx:1.32'));
    const fix = await eventually(
      'fresh rollout of the fix',
      async () => {
        const p = await percentOf('nginx-00006');
        return p > 0 ? p : undefined;
      },
      120_000,
      100,
    );
    expect(fix).toBeLessThan(50);
    expect((await split()).some((s) => s.startsWith('nginx-00005'))).toBe(false);
  });
  it('survives a restart of the Temporal server and of the API server mid-rollout: resumes, never jumps', async () => {
    // Settle the previous test's rollout first.
    await annotate('promote');
    await settledOn('nginx-00006');
    await annotate(undefined);
    const watch = resumingWatch();
    await apply(nginx('nginx:1.33', '60s'));
    await eventually('stepping', async () => ((await percentOf('nginx-00007')) >= 5 ? true : undefined), 120_000, 250);

    // The Temporal server crashes (SIGKILL) and comes back on its SQLite file 3 s later.
    const atTemporal = await percentOf('nginx-00007');
    await procs.crash('temporal', { downMs: 3000, env: temporalGoEnv() });
    log(`Temporal server killed and restarted at ${atTemporal} %`);
    await eventually(
      'stepping after the Temporal restart',
      async () => ((await percentOf('nginx-00007')) > atTemporal + 1 ? true : undefined),
      120_000,
      250,
    );

    // Then the API server (etcd keeps the data); the controller, kwok and the rest reconnect by themselves.
    const atApi = await percentOf('nginx-00007');
    expect(atApi).toBeLessThan(90); // still mid-rollout
    await procs.crash('kube-apiserver', { downMs: 3000 });
    log(`API server killed and restarted at ${atApi} %`);
    await eventually(
      'API server serving',
      async () => ((await kubectl(['get', '--raw', '/readyz']).catch(() => '')) === 'ok' ? true : undefined),
      120_000,
      500,
    );
    await eventually(
      'stepping after the API server restart',
      async () => ((await percentOf('nginx-00007')) > atApi ? true : undefined),
      120_000,
      250,
    );

    await splitIs('rollout finished', ['nginx-00007 100'], 180_000);
    await settledOn('nginx-00007');
    await new Promise((r) => setTimeout(r, 500)); // the watch's last events
    await watch.stop();
    const { seen, stepSize } = percentsOf(watch.states, 'nginx-00007');
    log(`steps seen: ${seen.join(' → ')} (step size ${stepSize}, re-lists ${watch.gaps()})`);
    expect(seen[0]).toBe(1);
    expect(seen.at(-1)).toBe(100);
    expect(seen.length).toBeGreaterThan(5);
    // Monotonic, one step at a time, also across both outages: a step due meanwhile is taken on recovery, no jump.
    for (let i = 1; i < seen.length; i += 1) {
      expect(seen[i]! - seen[i - 1]!).toBeGreaterThan(0);
      expect(seen[i]! - seen[i - 1]!).toBeLessThanOrEqual(stepSize);
    }
  });
});
