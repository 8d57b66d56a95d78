// Revision garbage collection on the real local stack, driven as a user would: `kubectl apply` image
// updates and traffic splits, `kubectl annotate` no-gc, `kubectl patch` config-gc — and read back with `kubectl get
// rev`, the Configuration's Events and the Service workflow's history. The e2e stack runs Knative's config-gc
// defaults (test/harness/e2e-setup.ts: other files read old Revisions); this file sets hakn's shipped values
// (deploy/config/config-gc.yaml) and its own, and puts the defaults back at the end.
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { temporal } from '@temporalio/proto';
import type { Configuration, Revision, TrafficTarget } from '../../api/serving.js';
import { gcKeys, setGcArgs, shippedGc } from '../harness/config-gc.js';
import { apply, eventsOf, getObject, kubectl, kubectlJson, stack, temporalClient } from '../harness/cluster.js';
import { eventually } from '../harness/wait.js';
import { runHistories } from '../harness/history.js';

const log = (s: string) => console.error(`[gc] ${s}`);
/** hakn's values, as shipped. */
const haknKeys = Object.fromEntries(gcKeys.map((k) => [k, shippedGc[k] ?? null]));

/** Sets config-gc's four keys (null: absent, Knative's default). */
const setGc = (data: Record<string, string | null>) => kubectl(setGcArgs(data));

const ksvc = (name: string, image: string, traffic?: TrafficTarget[]) => ({
  apiVersion: 'serving.knative.dev/v1',
  kind: 'Service',
  metadata: { name, namespace: 'default' },
  spec: { template: { spec: { containers: [{ image, ports: [{ containerPort: 80 }] }] } }, ...(traffic ? { traffic } : {}) },
});

/** The names of the Configuration's Revisions, sorted. */
async function revisionsOf(cfg: string): Promise<string[]> {
  const list = await kubectlJson<{ items: Revision[] }>(['get', 'revisions', '-l', `serving.knative.dev/configuration=${cfg}`]);
  return list.items.map((r) => r.metadata.name ?? '').sort();
}

const revisionsAre = (cfg: string, want: string[], timeoutMs = 60_000) =>
  eventually(
    `${cfg}'s Revisions ${want.join(', ')}`,
    async () => (JSON.stringify(await revisionsOf(cfg)) === JSON.stringify(want) ? true : undefined),
    timeoutMs,
    200,
  );

/** Waits until the Service's latest ready Revision is `rev` and its Route carries it. */
async function readyOn(name: string, rev: string): Promise<void> {
  await eventually(
    `${name} Ready on ${rev}`,
    async () => {
      const s = await getObject<{
        status?: { latestReadyRevisionName?: string; traffic?: TrafficTarget[]; conditions?: { type: string; status: string }[] };
      }>('ksvc', name);
      const ready = s?.status?.conditions?.find((c) => c.type === 'Ready')?.status === 'True';
      return ready && s?.status?.latestReadyRevisionName === rev && s.status.traffic?.some((t) => t.revisionName === rev) ? true : undefined;
    },
    90_000,
  );
}

/** The RevisionDeleted Events on the Configuration: `<revision>` named in each message. */
async function deletedEvents(cfg: string): Promise<string[]> {
  return (await eventsOf(`involvedObject.kind=Configuration,involvedObject.name=${cfg}`))
    .filter((e) => e.reason === 'RevisionDeleted')
    .map((e) => /Deleted Revision "([^"]+)"/u.exec(e.message)?.[1] ?? e.message)
    .sort();
}

type HistoryEvent = temporal.api.history.v1.IHistoryEvent;
const text = (data: Uint8Array | null | undefined) => Buffer.from(data ?? new Uint8Array()).toString();

/** The GC steps of every run of a workflow: the step's label in the Temporal UI and the Revisions it deleted. */
async function gcSteps(workflowId: string): Promise<{ summary: string; deleted: string[] }[]> {
  const { client, close } = await temporalClient();
  try {
    const out: { summary: string; deleted: string[] }[] = [];
    for (const history of await runHistories(client, workflowId)) {
      for (const e of (history.events ?? []) as HistoryEvent[]) {
        const m = e.markerRecordedEventAttributes;
        if (m?.markerName !== 'core_local_activity') continue;
        const meta = JSON.parse(text(m.details?.['data']?.payloads?.[0]?.data)) as { activity_type?: string };
        if (meta.activity_type !== 'collectRevisions') continue;
        const result = JSON.parse(text(m.details?.['result']?.payloads?.[0]?.data) || '{}') as { deleted?: { name: string }[] };
        out.push({ summary: text(e.userMetadata?.summary?.data).replace(/^"|"$/g, ''), deleted: (result.deleted ?? []).map((d) => d.name) });
      }
    }
    return out;
  } finally {
    await close();
  }
}

/** Watches one Revision and resolves with the time its deletion event arrives (Date.now()). */
function watchDeletion(name: string): { deleted: Promise<number>; stop: () => void } {
  const s = stack();
  const child = spawn(s.bins.KUBECTL, [
    '--kubeconfig',
    s.kubeconfig,
    'get',
    'revisions',
    '-w',
    '--output-watch-events',
    '-o',
    'jsonpath={.type} {.object.metadata.name}{"\\n"}',
  ]);
  const deleted = new Promise<number>((resolve) => {
    createInterface({ input: child.stdout }).on('line', (line) => {
      if (line.trim() === `DELETED ${name}`) resolve(Date.now());
    });
  });
  return { deleted, stop: () => void child.kill() };
}

const services = ['gc-five', 'gc-split', 'gc-keep', 'gc-timed', 'gc-edit'];

beforeAll(async () => {
  await setGc(haknKeys);
});

afterAll(async () => {
  // Knative's defaults again, as the other files expect (e2e-setup.ts); and none of this file's Services.
  await setGc({});
  await kubectl(['delete', 'ksvc', ...services, '--ignore-not-found', '--wait=false']);
});

describe("revision GC, hakn's config-gc", () => {
  it('five image updates: the latest Revision and the one before it are left, the others gone with their Deployments and Services', async () => {
    const name = 'gc-five';
    for (let i = 1; i <= 5; i++) {
      await apply(ksvc(name, `nginx:1.2${i}`));
      await readyOn(name, `${name}-0000${i}`);
    }
    await revisionsAre(name, [`${name}-00004`, `${name}-00005`]);
    // Their Deployments and Services follow through ownerReferences (kube-controller-manager's garbage collector).
    await eventually(
      'old Deployments gone',
      async () => {
        const deps = await kubectlJson<{ items: { metadata: { name: string } }[] }>([
          'get',
          'deployments',
          '-l',
          `serving.knative.dev/configuration=${name}`,
        ]);
        return deps.items
          .map((d) => d.metadata.name)
          .sort()
          .join() === `${name}-00004-deployment,${name}-00005-deployment`
          ? true
          : undefined;
      },
      60_000,
    );
    expect(await getObject('service', `${name}-00001`)).toBeUndefined();
    // One Event per deletion on the Configuration, and the deletions as steps in the Service workflow's history.
    await eventually('three RevisionDeleted Events', async () => ((await deletedEvents(name)).length === 3 ? true : undefined), 15_000);
    expect(await deletedEvents(name)).toEqual([1, 2, 3].map((i) => `${name}-0000${i}`));
    const steps = await gcSteps(`Service/default/${name}`);
    expect(steps.length).toBeGreaterThan(0);
    expect(steps.every((s) => s.summary === `collect Revisions of Configuration default/${name} (config-gc)`)).toBe(true);
    expect(steps.flatMap((s) => s.deleted).sort()).toEqual([1, 2, 3].map((i) => `${name}-0000${i}`));
  });

  it('a 90/10 split keeps both routed Revisions and the one that served last, and collects the rest', async () => {
    const name = 'gc-split';
    await apply(ksvc(name, 'nginx:1.21'));
    await readyOn(name, `${name}-00001`);
    const split = [
      { revisionName: `${name}-00001`, percent: 10 },
      { latestRevision: true, percent: 90 },
    ];
    await apply(ksvc(name, 'nginx:1.22', split));
    await readyOn(name, `${name}-00002`);
    await apply(ksvc(name, 'nginx:1.23', split));
    await readyOn(name, `${name}-00003`);
    await apply(ksvc(name, 'nginx:1.24', split));
    await readyOn(name, `${name}-00004`);
    // 00002 went; 00003, the last to serve beside the split, stays.
    await revisionsAre(name, [`${name}-00001`, `${name}-00003`, `${name}-00004`]);
    const traffic = (await getObject<{ status: { traffic: TrafficTarget[] } }>('ksvc', name))!.status.traffic.map(
      (t) => `${t.revisionName} ${t.percent}`,
    );
    expect(traffic.sort()).toEqual([`${name}-00001 10`, `${name}-00004 90`]);
  });

  it('serving.knative.dev/no-gc: "true" keeps a reserve Revision; removing it lets GC take it', async () => {
    const name = 'gc-keep';
    await apply(ksvc(name, 'nginx:1.21'));
    await readyOn(name, `${name}-00001`);
    await kubectl(['annotate', 'revision', `${name}-00001`, 'serving.knative.dev/no-gc=true']);
    await apply(ksvc(name, 'nginx:1.22'));
    await readyOn(name, `${name}-00002`);
    await apply(ksvc(name, 'nginx:1.23'));
    await readyOn(name, `${name}-00003`);
    await apply(ksvc(name, 'nginx:1.24'));
    await readyOn(name, `${name}-00004`);
    // 00002 went and 00003 (the last to serve) stayed, so GC ran after 00001 turned reserve: 00001, older than both,
    // stayed for its annotation alone.
    await revisionsAre(name, [`${name}-00001`, `${name}-00003`, `${name}-00004`]);
    const kept = await getObject<Revision>('revision', `${name}-00001`);
    expect(kept?.metadata.labels?.['serving.knative.dev/routingState']).toBe('reserve');
    await kubectl(['annotate', 'revision', `${name}-00001`, 'serving.knative.dev/no-gc-']);
    await revisionsAre(name, [`${name}-00003`, `${name}-00004`], 30_000);
  });
});

describe('revision GC on time', () => {
  it('retain-since-create-time 20s, min-non-active-revisions 0: a reserve Revision is deleted 20 s after its creation', async () => {
    await setGc({
      'retain-since-create-time': '20s',
      'retain-since-last-active-time': 'disabled',
      'min-non-active-revisions': '0',
      'max-non-active-revisions': 'disabled',
    });
    const name = 'gc-timed';
    const watch = watchDeletion(`${name}-00001`);
    try {
      await apply(ksvc(name, 'nginx:1.21'));
      await readyOn(name, `${name}-00001`);
      const first = (await getObject<Revision>('revision', `${name}-00001`))!;
      await apply(ksvc(name, 'nginx:1.22'));
      await readyOn(name, `${name}-00002`);
      // Reserve well before it falls due: the deletion waits for the timer, not for this change.
      await eventually(
        'reserve',
        async () =>
          (await getObject<Revision>('revision', `${name}-00001`))?.metadata.labels?.['serving.knative.dev/routingState'] === 'reserve' || undefined,
        30_000,
      );
      const reserveAt = Date.now();
      const eligibleAt = Date.parse(first.metadata.creationTimestamp ?? '') + 20_000;
      expect(reserveAt).toBeLessThan(eligibleAt - 2_000);
      const deletedAt = await Promise.race([
        watch.deleted,
        new Promise<number>((_, reject) => setTimeout(() => reject(new Error('not deleted within 60 s')), 60_000)),
      ]);
      const lateMs = deletedAt - eligibleAt;
      log(
        `deleted ${lateMs} ms after its eligibility (creationTimestamp ${first.metadata.creationTimestamp} + 20 s); reserve since ${eligibleAt - reserveAt} ms before`,
      );
      // The watch event follows the delete: never before the time; a few seconds of slack on a loaded 2-core machine.
      expect(lateMs).toBeGreaterThanOrEqual(0);
      expect(lateMs).toBeLessThan(3_000);
      expect(await revisionsOf(name)).toEqual([`${name}-00002`]);
    } finally {
      watch.stop();
    }
  });

  it('a config-gc edit takes effect on existing Configurations at once', async () => {
    await setGc({
      'retain-since-create-time': '1h',
      'retain-since-last-active-time': 'disabled',
      'min-non-active-revisions': '0',
      'max-non-active-revisions': 'disabled',
    });
    const name = 'gc-edit';
    await apply(ksvc(name, 'nginx:1.21'));
    await readyOn(name, `${name}-00001`);
    await apply(ksvc(name, 'nginx:1.22'));
    await readyOn(name, `${name}-00002`);
    await eventually(
      'reserve',
      async () =>
        (await getObject<Revision>('revision', `${name}-00001`))?.metadata.labels?.['serving.knative.dev/routingState'] === 'reserve' || undefined,
      30_000,
    );
    // Kept for its hour: the workflow holds a timer for it.
    await new Promise((r) => setTimeout(r, 3_000));
    expect(await revisionsOf(name)).toEqual([`${name}-00001`, `${name}-00002`]);
    const cfg = await getObject<Configuration>('configuration', name);
    expect(cfg?.status?.latestReadyRevisionName).toBe(`${name}-00002`);
    const editedAt = Date.now();
    await setGc({
      'retain-since-create-time': '5s',
      'retain-since-last-active-time': 'disabled',
      'min-non-active-revisions': '0',
      'max-non-active-revisions': 'disabled',
    });
    await revisionsAre(name, [`${name}-00002`], 30_000);
    log(`after the config-gc edit the Revision went in ${Date.now() - editedAt} ms`);
  });
});
