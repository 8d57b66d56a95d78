// Leader election: three controller replicas on the e2e stack. Exactly one holds the Lease
// `knative-serving/tidal-controller` and pokes; the others serve as workers and webhooks only. kill -9 of the leader
// hands over to another replica, and a change made right after the kill converges; SIGTERM releases the Lease. The
// leader keeps a watch bookmark on the Lease (ADR 0024): after a kill, the next leader's start-up list pokes only
// what changed while no one led — a spec edit, a child deleted, a child edited, a config map edited all converge — and
// an object nobody touched gets no workflow task.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KubeClient } from '../../kube/client.js';
import type { Configuration, Service } from '../../api/serving.js';
import { replicaPorts, startController, testPorts, type StackInfo, type StackPorts } from '../../dev/stack.js';
import { ProcessTable } from '../../dev/processes.js';
import { apply, getObject, kubectl, stack } from '../harness/cluster.js';
import { leaderGauge, pokesDelivered, readLease, scrape } from '../harness/replicas.js';
import { eventually } from '../harness/wait.js';
import { readFileSync } from 'node:fs';
import { patchConfigMap, temporalClient } from '../harness/cluster.js';
import { deliveredInputs, runHistories } from '../harness/history.js';
import { BookmarkAnnotation, parseBookmark } from '../../watcher/bookmark.js';
import { Resources } from '../../api/kinds.js';

const log = (s: string) => console.error(`[leader] ${s}`);
let procs: ProcessTable;
let info: StackInfo;
let kube: KubeClient;

interface Replica {
  name: string;
  ports: StackPorts;
  env: Record<string, string>;
}
let replicas: Replica[];

const start = (r: Replica) => startController(info, procs, { ports: r.ports, controllerEnv: r.env }, log, r.name);

beforeAll(async () => {
  const s = stack();
  procs = new ProcessTable(s.dir);
  info = { dir: s.dir, kubeconfig: s.kubeconfig, temporalAddress: s.temporalAddress, temporalUi: undefined, bins: s.bins, ports: testPorts };
  kube = new KubeClient({ kubeconfig: s.kubeconfig, fieldManager: 'leader-test' });
  replicas = [
    { name: 'tidal-controller', ports: testPorts, env: s.controllerEnv },
    { name: 'tidal-controller-2', ports: replicaPorts(testPorts, 1), env: { ...s.controllerEnv, TIDAL_IDENTITY: 'controller-2' } },
    { name: 'tidal-controller-3', ports: replicaPorts(testPorts, 2), env: { ...s.controllerEnv, TIDAL_IDENTITY: 'controller-3' } },
  ];
  for (const r of replicas) await start(r);
});

afterAll(async () => {
  await kubectl(['delete', 'ksvc', 'leader-a', 'leader-b', 'leader-still', 'leader-spec', 'leader-gone', 'leader-edit', '--ignore-not-found']).catch(
    () => {},
  );
  await patchConfigMap('config-observability', { 'logging.revision-url-template': null }).catch(() => {});
  // Leave the stack as the other files expect it: the main controller running, the extra ones gone.
  await start(replicas[0]!);
  await procs.stop('tidal-controller-2');
  await procs.stop('tidal-controller-3');
  kube.close();
});

/** Every replica's view: its identity, whether it leads, and the pokes it delivered. */
async function views() {
  return Promise.all(
    replicas.map(async (r) => {
      const s = await scrape(r.ports.controllerMetrics);
      const g = s && leaderGauge(s);
      return { replica: r, up: s !== undefined, identity: g?.identity, leading: g?.leading === true, pokes: s ? pokesDelivered(s) : 0 };
    }),
  );
}

/**
 * The one replica that leads, once exactly one does and the Lease names it. `other` waits for a leader other than that
 * identity: right after a SIGTERM the old leader may still report leading until it has released the Lease.
 */
async function theLeader(other?: string) {
  return eventually(
    other ? `exactly one leader other than ${other}, named by the Lease` : 'exactly one leader, named by the Lease',
    async () => {
      const v = await views();
      const leaders = v.filter((x) => x.leading && x.identity !== other);
      const lease = await readLease(kube);
      const one = leaders.length === 1 && v.filter((x) => x.leading).length === 1;
      return one && lease && lease.spec.holderIdentity === leaders[0]!.identity ? { leader: leaders[0]!, all: v, lease } : undefined;
    },
    60_000,
    100,
  );
}

const svc = (name: string, image: string) => ({
  apiVersion: 'serving.knative.dev/v1',
  kind: 'Service',
  metadata: { name, namespace: 'default' },
  spec: { template: { spec: { containers: [{ image, ports: [{ containerPort: 80 }] }] } } },
});

/** The Service is Ready with the Revision of its latest generation running `image`. */
async function converged(name: string, image: string, timeoutMs = 120_000): Promise<void> {
  await eventually(
    `${name} Ready on ${image}`,
    async () => {
      const s = await getObject<Service>('ksvc', name);
      const c = await getObject<Configuration>('configuration', name);
      if (!s || !c || s.status?.observedGeneration !== s.metadata.generation) return false;
      if (s.status?.conditions?.find((x) => x.type === 'Ready')?.status !== 'True') return false;
      const want = `${name}-${String(c.metadata.generation).padStart(5, '0')}`;
      const rev =
        c.status?.latestReadyRevisionName === want ? await getObject<{ spec: { containers: { image: string }[] } }>('revision', want) : undefined;
      return rev?.spec.containers[0]?.image === image;
    },
    timeoutMs,
    250,
  );
}

describe('leader election', () => {
  it('one replica holds the Lease and is the only one that pokes', async () => {
    const { leader, all, lease } = await theLeader();
    log(`leader ${leader.identity} (${leader.replica.name}); Lease transitions ${lease.spec.leaseTransitions}`);
    expect(lease.spec.leaseDurationSeconds).toBe(3);
    expect(lease.spec.renewTime).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
    expect(lease.spec.acquireTime).toMatch(/\.\d{6}Z$/);
    // Identities are per process: host or TIDAL_IDENTITY, pid, a random suffix.
    expect(new Set(all.map((x) => x.identity)).size).toBe(3);
    expect(all.find((x) => x.replica.name === 'tidal-controller-2')?.identity).toMatch(/^controller-2_\d+_[0-9a-f]{6}$/);

    const before = new Map(all.map((x) => [x.replica.name, x.pokes]));
    await apply(svc('leader-a', 'nginx:1.27'));
    await converged('leader-a', 'nginx:1.27');
    const after = await views();
    for (const x of after) {
      const delta = x.pokes - (before.get(x.replica.name) ?? 0);
      if (x.replica.name === leader.replica.name) expect(delta).toBeGreaterThan(0);
      else expect(delta, `${x.replica.name} poked while not leading`).toBe(0);
    }
  });

  it('kill -9 of the leader: another replica takes over and a change made right after the kill converges', async () => {
    const { leader: old, lease: oldLease } = await theLeader();
    const victim = procs.running(old.replica.name);
    expect(victim).toBeDefined();
    const killedAt = Date.now();
    process.kill(victim!.pid, 'SIGKILL');
    log(`killed ${old.replica.name} (pid ${victim!.pid}, ${old.identity})`);
    // Made while no one leads: the new leader's start-up list must find them.
    await apply(svc('leader-a', 'nginx:1.28'));
    await apply(svc('leader-b', 'nginx:1.27'));
    const { leader: next, lease } = await theLeader(old.identity);
    log(`new leader ${next.identity} (${next.replica.name}) after ${Date.now() - killedAt} ms (observed by polling)`);
    expect(lease.spec.leaseTransitions).toBe((oldLease.spec.leaseTransitions ?? 0) + 1);
    expect(lease.spec.acquireTime).not.toBe(oldLease.spec.acquireTime);
    await converged('leader-a', 'nginx:1.28');
    await converged('leader-b', 'nginx:1.27');
    log(`both changes converged ${Date.now() - killedAt} ms after the kill`);
    // One Revision per generation: the handover made none twice.
    const revs = (await kubectl(['get', 'revisions', '-o', 'name'])).split('\n').filter((l) => l.includes('leader-'));
    expect(revs.sort()).toEqual([
      'revision.serving.knative.dev/leader-a-00001',
      'revision.serving.knative.dev/leader-a-00002',
      'revision.serving.knative.dev/leader-b-00001',
    ]);
    expect((await views()).find((x) => x.replica.name === next.replica.name)!.pokes).toBeGreaterThan(0);

    // The killed replica comes back as a follower: the Lease stays where it is.
    await start(old.replica);
    const again = await theLeader();
    expect(again.leader.identity).toBe(next.identity);
  });

  it('kill -9 with a watch bookmark on the Lease: only what changed while no one led is poked, and it all converges', async () => {
    const names = ['leader-still', 'leader-spec', 'leader-gone', 'leader-edit'];
    for (const n of names) await apply(svc(n, 'nginx:1.27'));
    for (const n of names) await converged(n, 'nginx:1.27');
    // The leader has delivered every poke of what it saw: the bookmark on the Lease covers the Services as they are.
    const newest = async () => {
      const list = await kube.list<Service>(Resources.Service, 'default');
      return BigInt(list.resourceVersion ?? '0');
    };
    const settledAt = await newest();
    await eventually(
      'the Lease bookmark past every Service',
      async () => BigInt(parseBookmark((await readLease(kube))?.metadata.annotations)?.Service ?? '0') >= settledAt,
      60_000,
      200,
    );
    const { leader: old } = await theLeader();
    const t = await temporalClient();
    const stillId = 'Service/default/leader-still';
    // What the workflow was told: each run's starts and signals (an idle run's own end adds none).
    const told = async () => (await runHistories(t.client, stillId)).map((h) => deliveredInputs(h).length);
    const before = await told();
    expect(before.length).toBeGreaterThan(0);

    const victim = procs.running(old.replica.name)!;
    process.kill(victim.pid, 'SIGKILL');
    log(`killed ${old.replica.name}; changing objects while no one leads`);
    await apply(svc('leader-spec', 'nginx:1.28'));
    const gone = await kubectl(['get', 'ingresses.networking.internal.knative.dev', 'leader-gone', '-o', 'jsonpath={.metadata.uid}']);
    await kubectl(['delete', 'ingresses.networking.internal.knative.dev', 'leader-gone', '--wait=false']);
    await kubectl(['scale', 'deployment', 'leader-edit-00001-deployment', '--replicas=0']);
    await patchConfigMap('config-observability', { 'logging.revision-url-template': 'http://logs.example.com/?rev=${REVISION_UID}' });

    const { leader: next } = await theLeader(old.identity);
    log(`new leader ${next.identity}`);
    await converged('leader-spec', 'nginx:1.28');
    await eventually(
      'leader-gone has a new KIngress',
      async () => {
        const uid = await kubectl([
          'get',
          'ingresses.networking.internal.knative.dev',
          'leader-gone',
          '-o',
          'jsonpath={.metadata.uid}',
          '--ignore-not-found',
        ]);
        return uid !== '' && uid !== gone ? true : undefined;
      },
      60_000,
      250,
    );
    await eventually(
      'leader-edit-00001-deployment back to its replicas',
      async () => ((await getObject<{ spec: { replicas?: number } }>('deployment', 'leader-edit-00001-deployment'))?.spec.replicas ?? 0) > 0,
      60_000,
      250,
    );
    await eventually(
      "leader-still's Revision has the new log URL",
      async () =>
        ((await getObject<{ status?: { logUrl?: string } }>('revision', 'leader-still-00001'))?.status?.logUrl ?? '').startsWith(
          'http://logs.example.com/',
        ),
      60_000,
      250,
    );
    // The replica had stood by, its caches listed and watching: those changes are the ones it held since the
    // bookmark, poked when it took the Lease; it listed nothing again.
    const lines = () =>
      readFileSync(procs.running(next.replica.name)!.log, 'utf8')
        .split('\n')
        .filter((l) => l.includes(`"${next.identity!}"`));
    const synced = await eventually(
      `${next.identity} logs its start-up`,
      async () =>
        lines()
          .filter((l) => l.includes('"watcher synced"'))
          .map((l) => JSON.parse(l) as { changesHeldWhileStandingBy?: number; changesResumedFromBookmark?: number })[0],
      30_000,
      250,
    );
    log(`start-up of ${next.identity}: ${JSON.stringify(synced)}`);
    expect(
      lines()
        .filter((l) => l.includes('"watcher leads from its standby caches'))
        .map((l) => (JSON.parse(l) as { listed?: boolean }).listed),
    ).toEqual([true]);
    expect(synced.changesHeldWhileStandingBy).toBeGreaterThanOrEqual(3);
    expect(synced.changesResumedFromBookmark).toBe(0);
    // Nobody changed leader-still's Service, nor anything its workflow reads: no run started, no poke delivered.
    expect(await told()).toEqual(before);
    const lease = await readLease(kube);
    expect(lease?.metadata.annotations?.[BookmarkAnnotation]).toBeDefined();
    await t.close();
    await start(old.replica);
  });

  it('a run terminated by hand gets a fresh run from the leader, which finds it in Temporal visibility', async () => {
    await theLeader();
    await apply(svc('leader-a', 'nginx:1.29'));
    await converged('leader-a', 'nginx:1.29');
    const t = await temporalClient();
    const id = 'Service/default/leader-a';
    // Its run waits out its idle minute after the pass: end it the way an operator's `temporal workflow terminate` does.
    const run = await t.client.workflow.getHandle(id).describe();
    expect(run.status.name).toBe('RUNNING');
    const terminatedAt = new Date();
    await t.client.workflow.getHandle(id, run.runId).terminate('an operator ended it');
    const fresh = await eventually(
      `a run of ${id} started after its termination`,
      async () => {
        for await (const r of t.client.workflow.list({ query: `WorkflowId = '${id}'` })) if (r.startTime > terminatedAt) return r;
        return undefined;
      },
      90_000,
      1000,
    );
    log(`a fresh run ${fresh.runId} ${fresh.startTime.getTime() - terminatedAt.getTime()} ms after the termination`);
    expect((await t.client.workflow.getHandle(id, run.runId).describe()).status.name).toBe('TERMINATED');
    // Started by the leader's restart of ended runs (a start with no poke in it), not by news about the Service.
    const started = deliveredInputs(await t.client.workflow.getHandle(id, fresh.runId).fetchHistory())[0] ?? '';
    expect(started).not.toContain('"source"');
    await t.close();
  });

  it('SIGTERM of the leader releases the Lease: it stops poking first, the next replica takes over at its next try', async () => {
    const { leader: old, lease: oldLease } = await theLeader();
    const rec = procs.running(old.replica.name)!;
    const stoppedAt = Date.now();
    const stopping = procs.stop(old.replica.name);
    const { leader: next, lease } = await theLeader(old.identity);
    log(`after SIGTERM of ${old.replica.name}: ${next.identity} leads after ${Date.now() - stoppedAt} ms`);
    await stopping;
    expect(lease.spec.leaseTransitions).toBe((oldLease.spec.leaseTransitions ?? 0) + 1);
    const lines = readFileSync(rec.log, 'utf8').split('\n');
    const mine = lines.filter((l) => l.includes(`"${old.identity!}"`));
    const stoppedLine = mine.findIndex((l) => l.includes('"stopped leading"') && l.includes('"released"'));
    const releasedLine = mine.findIndex((l) => l.includes('released the leader lease'));
    expect(stoppedLine, 'the leader logs that it stopped leading').toBeGreaterThanOrEqual(0);
    expect(releasedLine, 'then that it released the Lease').toBeGreaterThan(stoppedLine);
    await start(old.replica);
  });
});
