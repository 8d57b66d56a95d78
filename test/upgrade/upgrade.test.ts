// An upgrade under live traffic, and the downgrade back (ADR 0022). The previous release (dev/previous-release.ts)
// runs three replicas. Services serve real pods through the ingress; one is in a slow gradual rollout, a Revision of
// another falls due for collection in the middle of the upgrade, a DomainMapping maps a domain to a third, a writer
// keeps changing two more and a probe keeps sending requests. The replicas are rolled to this checkout's code one at a
// time; then the rollout ends on schedule, the Revision goes within a second of its time, every change converges, no
// run is behind, and the probe saw no failed request. Then back to the previous release, one replica at a time: every
// change still converges and the probe still sees no failure. Throughout, a run fails only where the previous
// release's code cannot replay it — where the current code took a patch branch it does not know (ADR 0022) — and
// starts again (ADR 0002): on the way back, or during the upgrade on a replica not replaced yet.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { ProcessTable } from '../../dev/processes.js';
import { kwokNode, repoRoot, type StackInfo } from '../../dev/stack.js';
import { setGcArgs } from '../harness/config-gc.js';
import {
  apply,
  condition,
  createNamespace,
  domainMapping,
  hostOf,
  image,
  ksvc,
  kubectl,
  kubectlJson,
  realStack,
  request,
  serviceReady,
  type KService,
} from '../harness/real.js';
import { eventually } from '../harness/wait.js';
import { Fleet, terminationGraceMs } from './fleet.js';
import { RolloutWatch, startProbe, startWriter, watchDeletions, WriteAnnotation, type ProbeTally } from './load.js';
import { behind, carriedRuns, endedRuns, list, patchesOf, runsAfter, type EndedRun } from './runs.js';

const log = (s: string) => console.error(`[upgrade] ${s}`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const ns = 'upgrade';
const inNamespace = `KnativeNamespace = '${ns}'`;

/** The gradual rollout's duration: longer than the upgrade, so its steps go on through every replica's replacement. */
const RolloutSeconds = 120;
const rolloutAnnotation = 'serving.knative.dev/rollout-duration';
/** The writer's pace: one change every 2 s, to each of its Services in turn. */
const WriteEveryMs = 2000;
/**
 * How long after config-gc names its time the Revision falls due: the first two replicas are replaced by then, as a
 * rule; the third waits for it, so it falls due in the middle of the upgrade.
 */
const GcDueInMs = 45_000;
/** The writer goes on this long after a roll, on the fleet as it is then. */
const WriteAfterRollMs = 10_000;

const domain = 'steady.upgrade.test';
const writerServices = ['writer-a', 'writer-b'];
/**
 * The writer's Services run on a fake (kwok) node: each change makes a Revision, a Deployment and a pod as any other,
 * without starting containers on the 2-core machine whose real node serves the probe (with a pod started every 2 s
 * there, its passes took seconds and the timings measured the machine, not the upgrade). Only they tolerate its taint.
 */
const fakeNode = 'upgrade-fake';
const fakeTaint = { key: 'upgrade.tidal.test/fake', value: 'true', effect: 'NoSchedule' };
const onFakeNode = (name: string) => {
  const svc = ksvc(name, { image: image('helloworld') }) as { spec: { template: { spec: Record<string, unknown> } } };
  svc.spec.template.spec.nodeSelector = { 'kubernetes.io/hostname': fakeNode };
  svc.spec.template.spec.tolerations = [{ key: fakeTaint.key, operator: 'Exists', effect: fakeTaint.effect }];
  return svc;
};
const services = ['steady', 'gradual', 'gc-timed', ...writerServices];
/** Each Service's generation as its last accepted change left it. */
const generations = new Map<string, number>();

let fleet: Fleet;
let connection: Connection;
let client: Client;
let hosts: string[];
let probe: ReturnType<typeof startProbe> | undefined;
const closers: (() => void)[] = [];

/** config-gc: Revisions no Route serves are collected `retain` after their creation, none kept for being recent. */
const setGc = (retain: string) =>
  kubectl(
    setGcArgs({
      'retain-since-create-time': retain,
      'retain-since-last-active-time': 'disabled',
      'min-non-active-revisions': '0',
      'max-non-active-revisions': 'disabled',
    }),
  );

const pad = (n: number) => String(n).padStart(5, '0');

/**
 * The Service reflects its last change: status of its generation, Ready, and its newest Revision (the one its
 * Configuration's generation names) created, Ready and given all the traffic.
 */
async function converged(name: string, timeoutMs = 240_000): Promise<void> {
  const generation = generations.get(name);
  await eventually(
    `ksvc ${name} at generation ${generation}, Ready on its newest Revision`,
    async () => {
      const s = await kubectlJson<KService>(['get', 'ksvc', name, '-n', ns]);
      const cfg = await kubectlJson<{ metadata: { generation: number } }>(['get', 'configuration', name, '-n', ns]);
      const newest = `${name}-${pad(cfg.metadata.generation)}`;
      const st = s.status;
      const t = st?.traffic ?? [];
      const state = `generation ${s.metadata.generation} (observed ${st?.observedGeneration}), Ready ${condition(s, 'Ready')?.status} ${condition(s, 'Ready')?.reason ?? ''}, latest created ${st?.latestCreatedRevisionName}, ready ${st?.latestReadyRevisionName}, traffic ${JSON.stringify(t)}`;
      const ok =
        s.metadata.generation === generation &&
        st?.observedGeneration === generation &&
        condition(s, 'Ready')?.status === 'True' &&
        st?.latestCreatedRevisionName === newest &&
        st?.latestReadyRevisionName === newest &&
        t.length === 1 &&
        t[0]?.revisionName === newest &&
        t[0]?.percent === 100;
      if (!ok) throw new Error(state);
      return true;
    },
    timeoutMs,
    500,
  );
}

const ready = (kind: string, name: string, timeoutMs = 120_000) =>
  eventually(
    `${kind} ${name} Ready`,
    async () => condition(await kubectlJson(['get', kind, name, '-n', ns]), 'Ready')?.status === 'True',
    timeoutMs,
    500,
  );

/** Every running run of the namespace's objects has caught up: no pass under way, no news untaken, no failing task. */
async function allCaughtUp(): Promise<number> {
  const running = await list(client, `${inNamespace} and ExecutionStatus = 'Running'`);
  for (const w of running) {
    await eventually(
      `${w.workflowId} (run ${w.runId}) caught up`,
      async () => {
        const why = await behind(client, w);
        if (why) throw new Error(why);
        return true;
      },
      90_000,
      500,
    );
  }
  return running.length;
}

/** Changes the template of `name` (a new Revision), and whatever else `extra` merges into the patch. */
async function change(name: string, value: string, extra: Record<string, unknown> = {}): Promise<void> {
  const patch = { ...extra, spec: { template: { metadata: { annotations: { [WriteAnnotation]: value } } } } };
  await kubectl(['patch', 'ksvc', name, '-n', ns, '--type=merge', '-p', JSON.stringify(patch)]);
  generations.set(name, (generations.get(name) ?? 0) + 1);
}

const exited = (t: { exitMs: number; killed: boolean }) =>
  t.killed ? `still running ${terminationGraceMs} ms after SIGTERM, killed as the kubelet kills it` : `exited ${t.exitMs} ms after SIGTERM`;
/** The patches the previous release's workflow code knows (its `patched()` calls and patch list). */
function previousPatches(): Set<string> {
  const dir = path.join(inject('previousRelease').dir, 'workflows');
  return patchesOf(
    readdirSync(dir, { recursive: true, encoding: 'utf8' })
      .filter((f) => f.endsWith('.ts'))
      .map((f) => readFileSync(path.join(dir, f), 'utf8')),
  );
}

/** Runs already accounted for by an earlier look. */
const accounted = new Set<string>();

/**
 * The runs that ended other than by completing since the last look, each one the documented policy ends: a
 * nondeterminism error (ADR 0002) of the previous release's code replaying a history in which the current code took
 * a patch branch it does not know (ADR 0022) — on the way back, or during the upgrade on a replica not replaced yet.
 * Anything else fails the test. Each starts again: its object is gone (a collected Revision), or a new run of it has
 * begun and the object is Ready.
 */
async function endedByPolicyOnly(): Promise<EndedRun[]> {
  const known = previousPatches();
  const ended = (await endedRuns(client)).filter((r) => !accounted.has(r.runId));
  for (const r of ended) accounted.add(r.runId);
  const restarted = ended.filter((r) => r.nondeterminism && r.patches.some((p) => !known.has(p)));
  expect(ended.filter((r) => !restarted.includes(r)).map(describeRun)).toEqual([]);
  for (const r of restarted) {
    const [kind, , name] = r.workflowId.split('/') as [string, string, string];
    const resource = kind === 'Service' ? 'ksvc' : kind.toLowerCase();
    const exists = async () => (await kubectl(['get', resource, name, '-n', ns, '--ignore-not-found', '-o', 'name'])).trim() !== '';
    await eventually(
      `a new run of ${r.workflowId}`,
      async () => !(await exists()) || (await runsAfter(client, r.workflowId, r.closeTime ?? new Date(0))).length > 0,
      120_000,
      1000,
    );
    if (await exists()) await ready(resource, name);
  }
  return restarted;
}

const describeRun = (r: EndedRun) =>
  `${r.workflowId} ${r.status}: ${r.failure.slice(0, 200)}${r.event ? ` [${r.event}]` : ''} (patches in its history: ${r.patches.join(', ') || 'none'})`;
const describeRuns = (rs: EndedRun[]) => `${rs.length}${rs.length ? `: ${rs.map(describeRun).join('; ')}` : ''}`;

/** The time of day, as the logs and histories print it. */
const clock = (ms = Date.now()) => new Date(ms).toISOString().slice(11, 23);
const summarize = (t: ProbeTally) => `${t.total} requests, ${t.failures.length} failed`;
const quantile = (xs: number[], q: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(q * xs.length))] ?? NaN;

beforeAll(async () => {
  const s = realStack();
  const info: StackInfo = {
    dir: s.dir,
    kubeconfig: s.kubeconfig,
    temporalAddress: s.temporalAddress,
    temporalUi: undefined,
    bins: s.bins,
    ports: s.ports,
  };
  fleet = new Fleet(info, new ProcessTable(s.dir), s.controllerEnv, inject('previousRelease'), (l) => log(l));
  // The previous release's Deployment, three replicas, as its install left it.
  for (const r of fleet.replicas) await fleet.start(r, 'previous');
  connection = await Connection.connect({ address: s.temporalAddress });
  client = new Client({ connection });
  await createNamespace(ns);
});

afterAll(async () => {
  await probe?.finish();
  for (const c of closers) c();
  await connection?.close();
  // The replicas go with the stack (the global setup's teardown).
});

describe('an upgrade of the controller under live traffic, and the downgrade back', () => {
  let rev1Created = 0;

  it('the previous release serves Services, a DomainMapping, and a Revision no Route serves any more', async () => {
    // Nothing is collected until the upgrade's test names the time.
    await setGc('1h');
    const annotations = { [rolloutAnnotation]: `${RolloutSeconds}s` };
    await kubectl(['apply', '-f', '-'], JSON.stringify({ ...kwokNode(fakeNode), spec: { taints: [fakeTaint] } }));
    await kubectl([
      'patch',
      'configmap',
      'config-features',
      '-n',
      'knative-serving',
      '--type=merge',
      '-p',
      JSON.stringify({ data: { 'kubernetes.podspec-nodeselector': 'enabled', 'kubernetes.podspec-tolerations': 'enabled' } }),
    ]);
    await Promise.all([
      apply(ksvc('steady', { image: image('helloworld') }), ns),
      apply(ksvc('gradual', { image: image('pizzaplanetv1') }, { annotations }), ns),
      apply(ksvc('gc-timed', { image: image('helloworld') }), ns),
      ...writerServices.map((n) => apply(onFakeNode(n), ns)),
    ]);
    for (const n of services) generations.set(n, 1);
    await Promise.all(services.map((n) => serviceReady(n, ns, 300_000)));
    await apply(domainMapping(domain, 'steady', ns), ns);
    await ready('domainmapping', domain);

    // gc-timed's first Revision no longer serves: collected once config-gc's retain-since-create-time has passed.
    await change('gc-timed', 'second');
    await converged('gc-timed');
    await eventually(
      'gc-timed-00001 reserve',
      async () =>
        (await kubectlJson<{ metadata: { labels?: Record<string, string> } }>(['get', 'revision', 'gc-timed-00001', '-n', ns])).metadata.labels?.[
          'serving.knative.dev/routingState'
        ] === 'reserve',
      60_000,
    );
    const rev1 = await kubectlJson<{ metadata: { creationTimestamp: string } }>(['get', 'revision', 'gc-timed-00001', '-n', ns]);
    rev1Created = Date.parse(rev1.metadata.creationTimestamp);

    const get = async (name: string) => (await kubectlJson<KService>(['get', 'ksvc', name, '-n', ns])).status?.url;
    hosts = [hostOf(await get('steady')), domain, hostOf(await get('gradual'))];
    for (const h of hosts) await eventually(`${h} answers`, async () => (await request(h)).status === 200, 60_000, 500);
    log(
      `previous release ${inject('previousRelease').commit.slice(0, 12)} serving ${services.length} Services and ${domain}; fleet ${fleet.describe()}`,
    );
  });

  it('rolled to the current code one replica at a time: the rollout ends on schedule, the GC on time, every change converges, no run fails but by the policy, no request fails', async () => {
    const deletions = watchDeletions(ns);
    closers.push(deletions.close);
    const rollout = new RolloutWatch(ns, 'gradual', 'gradual-00002');
    closers.push(() => rollout.end());
    probe = startProbe(hosts);
    const writer = startWriter(ns, writerServices, 'up', WriteEveryMs);

    // The Revision falls due GcDueInMs from now: config-gc's retain-since-create-time, counted from its creation.
    const retainSeconds = Math.ceil((Date.now() + GcDueInMs - rev1Created) / 1000);
    const eligibleAt = rev1Created + retainSeconds * 1000;
    await setGc(`${retainSeconds}s`);
    // The slow rollout: pizzaplanetv2 takes the traffic over RolloutSeconds, step by step, on durable timers.
    await apply(ksvc('gradual', { image: image('pizzaplanetv2') }, { annotations: { [rolloutAnnotation]: `${RolloutSeconds}s` } }), ns);
    generations.set('gradual', 2);
    const plan = await eventually('the rollout scheduled', async () => rollout.plan, 60_000, 100);
    log(
      `rollout started ${new Date(rollout.startedAt ?? 0).toISOString()}: ${plan.steps} steps of ${plan.stepSize} % every ${plan.stepMs.toFixed(0)} ms, planned end ${new Date(plan.plannedEnd).toISOString()} (start + ${RolloutSeconds} s: ${new Date((rollout.startedAt ?? 0) + RolloutSeconds * 1000).toISOString()})`,
    );

    // The release's CRDs first, as `kubectl apply` of its manifests does; then its Deployment rolls.
    await kubectl(['apply', '--server-side', '--force-conflicts', '-f', path.join(repoRoot, 'deploy', 'crds')]);
    const rollStart = Date.now();
    let fleetAtGc = '';
    let killed = 0;
    for (const r of fleet.replicas) {
      if (r.index === fleet.replicas.length - 1 && Date.now() < eligibleAt + 2000) {
        log(`waiting ${eligibleAt + 2000 - Date.now()} ms for gc-timed-00001 to fall due (fleet ${fleet.describe()})`);
        await sleep(eligibleAt + 2000 - Date.now());
      }
      if (!fleetAtGc && Date.now() >= eligibleAt) fleetAtGc = fleet.describe();
      const leader = await fleet.leader();
      const began = clock();
      const t = await fleet.replace(r, 'current');
      if (t.killed) killed++;
      log(
        `${r.name} (${leader === r ? 'the leader' : 'not leading'}) on the current code from ${began}: ${exited(t)}, ready ${t.readyMs} ms after start`,
      );
    }
    const rollEnd = Date.now();
    fleetAtGc ||= `${fleet.describe()} (after the roll)`;
    log(`rolled in ${((rollEnd - rollStart) / 1000).toFixed(1)} s; gc-timed-00001 fell due ${eligibleAt - rollStart} ms into it, fleet ${fleetAtGc}`);
    await sleep(WriteAfterRollMs);
    const writes = await writer.finish();
    for (const [name, n] of writes.writes) generations.set(name, 1 + n);
    log(`writer: ${[...writes.writes].map(([n, c]) => `${n} ${c} changes`).join(', ')}; ${writes.failures.length} refused`);
    expect(writes.failures).toEqual([]);

    // The rollout: Knative schedules the first timed step a step's interval after the 1 % step was observed ready and
    // each later one an interval after the step before was taken (`stepRevisions`: next = now + stepDuration), so a
    // late step moves every later one: the end is the plan's end plus every step's lateness. None is early: each
    // step's durable timer fires 150 ms before it is due and the Route's step waits for its time (ADR 0007). A step is
    // late by what the pass its timer starts does before the Route's step beyond those 150 ms, or by a pass already
    // under way when it falls due; on this 2-core machine, which also runs the stack, a real node and the probe, such
    // passes take up to a few hundred ms: 500 ms a step. And a replica killed at the end of its grace period may hold
    // the rollout's workflow task: another replica takes it once the task times out (Temporal's 10 s).
    const finishedAt = await eventually('the rollout finished', async () => rollout.finishedAt, plan.plannedEnd - Date.now() + 120_000, 200);
    const late = rollout.steps.map((x) => x.lateMs);
    const latest = [...rollout.steps].sort((a, b) => b.lateMs - a.lateMs).slice(0, 3);
    const toleranceMs = plan.steps * 500 + killed * 10_000;
    log(
      `rollout finished ${new Date(finishedAt).toISOString()}: ${Math.round(finishedAt - plan.plannedEnd)} ms after the plan's end (tolerance ${toleranceMs} ms), ${finishedAt - ((rollout.startedAt ?? 0) + RolloutSeconds * 1000)} ms after start + ${RolloutSeconds} s; ${late.length} timed steps, lateness p50 ${quantile(late, 0.5)} ms, p99 ${quantile(late, 0.99)} ms; the latest ${latest.map((x) => `${x.lateMs} ms (due ${clock(x.due)})`).join(', ')}`,
    );
    // The GC: deleted within a second of its eligibility, as the watch saw it (test/e2e/gc.test.ts measures it so).
    const deletedAt = await eventually('gc-timed-00001 deleted', async () => deletions.deletedAt.get('gc-timed-00001'), 60_000, 100);
    log(`gc-timed-00001 deleted ${deletedAt - eligibleAt} ms after its eligibility (creationTimestamp + ${retainSeconds} s)`);

    // One rollout, never started again, its percents 1, then one step size more each step, to 100.
    expect(rollout.starts).toHaveLength(1);
    expect(rollout.percents).toEqual(Array.from({ length: plan.steps + 1 }, (_, i) => Math.min(100, 1 + i * plan.stepSize)));
    expect(finishedAt).toBeGreaterThanOrEqual(plan.plannedEnd);
    expect(finishedAt - plan.plannedEnd).toBeLessThanOrEqual(toleranceMs);
    expect(eligibleAt).toBeGreaterThan(rollStart);
    expect(eligibleAt).toBeLessThan(rollEnd);
    expect(deletedAt - eligibleAt).toBeGreaterThanOrEqual(0);
    expect(deletedAt - eligibleAt).toBeLessThan(1000);

    // Every change converged, the DomainMapping too.
    await Promise.all(services.map((n) => converged(n)));
    await ready('domainmapping', domain);

    // No run failed, was terminated or timed out but as the policy says; every running one has caught up.
    const restarted = await endedByPolicyOnly();
    log(`runs that failed on a previous-release replica during the roll and started again: ${describeRuns(restarted)}`);
    const running = await allCaughtUp();
    const carried = await carriedRuns(client, inNamespace, 'previous', 'current');
    log(
      `runs the previous release began and the current code went on with: ${carried.length} (${carried.filter((c) => c.startsWith('Service/')).length} of Services); ${running} running runs caught up`,
    );
    expect(carried.length).toBeGreaterThan(0);

    log(`probe so far: ${summarize(probe.tally)}`);
    expect(probe.tally.failures).toEqual([]);
  });

  it('rolled back to the previous release one replica at a time: every change converges, runs that cannot replay fail and start again, no request fails', async () => {
    const downStart = Date.now();
    const probeBefore = probe!.tally.total;
    const writer = startWriter(ns, writerServices, 'down', WriteEveryMs);
    for (const r of fleet.replicas) {
      const leader = await fleet.leader();
      const began = clock();
      const t = await fleet.replace(r, 'previous');
      log(
        `${r.name} (${leader === r ? 'the leader' : 'not leading'}) back on the previous release from ${began}: ${exited(t)}, ready ${t.readyMs} ms after start`,
      );
    }
    log(`rolled back in ${((Date.now() - downStart) / 1000).toFixed(1)} s`);
    await sleep(WriteAfterRollMs);
    const writes = await writer.finish();
    for (const [name, n] of writes.writes) generations.set(name, (generations.get(name) ?? 0) + n);
    expect(writes.failures).toEqual([]);

    // One more change to every Service, on the previous release: a new Revision each (gradual's rollout now 10 s).
    for (const name of services) {
      await change(name, 'after-downgrade', name === 'gradual' ? { metadata: { annotations: { [rolloutAnnotation]: '10s' } } } : {});
    }
    await Promise.all(services.map((n) => converged(n)));
    await ready('domainmapping', domain);

    // ADR 0022: the older code replays the newer's histories where they took no patch branch it does not know; a run
    // that did fails and starts again. Nothing else ends a run.
    const restarted = await endedByPolicyOnly();
    log(`runs that failed on the previous release and started again: ${describeRuns(restarted)}`);
    const running = await allCaughtUp();
    const carried = await carriedRuns(client, inNamespace, 'current', 'previous');
    log(`runs the current code began and the previous release went on with: ${carried.length}; ${running} running runs caught up`);

    const t = await probe!.finish();
    probe = undefined;
    log(`probe: ${summarize(t)} in all, ${t.total - probeBefore} of them during and after the downgrade`);
    expect(t.failures).toEqual([]);
  });
});
