// `npm run bench:gc`: how promptly Revision garbage collection deletes, on the local stack.
// BENCH_GC_SERVICES (200) Services, each updated once so its first Revision is `reserve` (stale), under a config-gc
// that keeps them (retain-since-create-time 1h, min 0, max disabled). Then two phases, each lowering
// retain-since-create-time with one `config-gc` edit:
//  - at once: to 1s — every stale Revision is collectable now; time from the edit until all are gone, and each
//    deletion's delay after the edit (the edit is when they became eligible);
//  - on timers: after a second update (a new stale Revision per Service), to a retention that makes each fall due
//    BENCH_GC_LEAD_SECONDS (30) after the edit or later, one after another in creation order; each deletion's lateness
//    is when a watch here saw it minus its eligibility (creationTimestamp + retention), served by each
//    Configuration's durable timer.
// Prints p50/p99/max per phase. It asserts nothing.
import path from 'node:path';
import { rmSync } from 'node:fs';
import { Resources } from '../api/kinds.js';
import type { Revision, Service } from '../api/serving.js';
import { KubeClient, type WatchEvent } from '../kube/client.js';
import { repoRoot, stackDown, stackUp } from '../dev/stack.js';
import { envNumber, fmtMs, percentile, sleep, table, progressLog } from './measure.js';
import { createService, service } from './services.js';
import { benchPorts } from './ports.js';

const ports = benchPorts(62);
const dir = path.join(repoRoot, '.tidal', 'bench-gc');
const count = envNumber('BENCH_GC_SERVICES', 200);
const leadSeconds = envNumber('BENCH_GC_LEAD_SECONDS', 30);
const progress = progressLog('bench');
const names = Array.from({ length: count }, (_, i) => `gc-${i}`);

async function setGc(kube: KubeClient, retain: string): Promise<void> {
  await kube.mergePatch(Resources.ConfigMap, 'knative-serving', 'config-gc', {
    data: {
      'retain-since-create-time': retain,
      'retain-since-last-active-time': 'disabled',
      'min-non-active-revisions': '0',
      'max-non-active-revisions': 'disabled',
    },
  });
}

/** Waits until every Service is Ready on its `-0000<gen>` Revision and the one before it is `reserve`. */
async function settledOn(kube: KubeClient, gen: number): Promise<void> {
  const deadline = Date.now() + 120_000 + count * 1500;
  for (;;) {
    const [svcs, revs] = await Promise.all([kube.list<Service>(Resources.Service, 'default'), kube.list<Revision>(Resources.Revision, 'default')]);
    const reserve = new Set(
      revs.items.filter((r) => r.metadata.labels?.['serving.knative.dev/routingState'] === 'reserve').map((r) => r.metadata.name),
    );
    const ok = svcs.items.filter((s) => {
      const name = s.metadata.name ?? '';
      const ready =
        s.status?.conditions?.find((c) => c.type === 'Ready')?.status === 'True' && s.status.latestReadyRevisionName === `${name}-0000${gen}`;
      const routed = s.status?.traffic?.length === 1 && s.status.traffic[0]?.revisionName === `${name}-0000${gen}`;
      return ready && routed && (gen === 1 || reserve.has(`${name}-0000${gen - 1}`));
    }).length;
    if (ok === count) return;
    if (Date.now() > deadline) throw new Error(`only ${ok} of ${count} Services settled on generation ${gen}`);
    await sleep(1000);
  }
}

/** Watches Revision deletions from now on: name → when this process saw the event. */
function watchDeletions(kube: KubeClient, resourceVersion: string, abort: AbortController): { seen: Map<string, number>; done: Promise<void> } {
  const seen = new Map<string, number>();
  const done = kube
    .watch<Revision>(
      Resources.Revision,
      { namespace: 'default', resourceVersion, timeoutSeconds: 1800, signal: abort.signal },
      (ev: WatchEvent<Revision>) => {
        if (ev.type === 'DELETED') seen.set(ev.object.metadata.name ?? '', Date.now());
      },
    )
    .catch(() => undefined);
  return { seen, done };
}

/** Waits until every one of `want` was seen deleted; returns when the last was. */
async function allDeleted(seen: Map<string, number>, want: string[], timeoutMs: number): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  while (want.some((n) => !seen.has(n))) {
    if (Date.now() > deadline) throw new Error(`${want.filter((n) => !seen.has(n)).length} of ${want.length} stale Revisions not deleted`);
    await sleep(200);
  }
  return Math.max(...want.map((n) => seen.get(n)!));
}

const row = (label: string, values: number[], total: string): string[] => [
  label,
  String(values.length),
  total,
  fmtMs(percentile(values, 50)),
  fmtMs(percentile(values, 99)),
  fmtMs(Math.max(...values)),
  fmtMs(Math.min(...values)),
];

async function update(kube: KubeClient, image: string): Promise<void> {
  for (let i = 0; i < names.length; i += 20) {
    await Promise.all(names.slice(i, i + 20).map((n) => kube.mergePatch(Resources.Service, 'default', n, { spec: service(n, image).spec })));
  }
}

async function main(): Promise<void> {
  await stackDown(dir);
  rmSync(dir, { recursive: true, force: true });
  progress('starting the stack');
  const info = await stackUp({ dir, ports, ui: false, nodes: 2, podsPerNode: 500, unthrottled: true, controller: true, log: progress });
  const kube = new KubeClient({ kubeconfig: info.kubeconfig, fieldManager: 'bench' });
  const abort = new AbortController();
  try {
    await setGc(kube, '1h');
    progress(`creating ${count} Services`);
    for (let i = 0; i < names.length; i += 20) await Promise.all(names.slice(i, i + 20).map((n) => createService(kube, n)));
    await settledOn(kube, 1);
    progress('all Ready; updating each once');
    await update(kube, 'nginx:1.28');
    await settledOn(kube, 2);
    const rows: string[][] = [];

    // At once: every stale Revision collectable from the edit on.
    let rv = (await kube.list<Revision>(Resources.Revision, 'default')).resourceVersion;
    let watch = watchDeletions(kube, rv, abort);
    await sleep(500);
    const editedAt = Date.now();
    await setGc(kube, '1s');
    const stale1 = names.map((n) => `${n}-00001`);
    const last1 = await allDeleted(watch.seen, stale1, 300_000);
    rows.push(
      row(
        'at once (retain 1h → 1s)',
        stale1.map((n) => watch.seen.get(n)! - editedAt),
        fmtMs(last1 - editedAt),
      ),
    );
    progress(`all ${count} stale Revisions gone ${((last1 - editedAt) / 1000).toFixed(1)} s after the edit`);

    // On timers: a new stale Revision per Service, falling due one after another from `leadSeconds` after the edit.
    await setGc(kube, '1h');
    await update(kube, 'nginx:1.29');
    await settledOn(kube, 3);
    const revs = (await kube.list<Revision>(Resources.Revision, 'default')).items.filter((r) => r.metadata.name?.endsWith('-00002'));
    const created = new Map(revs.map((r) => [r.metadata.name ?? '', Date.parse(r.metadata.creationTimestamp ?? '')]));
    const oldest = Math.min(...created.values());
    const newest = Math.max(...created.values());
    const retainS = Math.ceil((Date.now() - oldest) / 1000) + leadSeconds;
    rv = (await kube.list<Revision>(Resources.Revision, 'default')).resourceVersion;
    watch = watchDeletions(kube, rv, abort);
    await sleep(500);
    const edited2 = Date.now();
    await setGc(kube, `${retainS}s`);
    progress(
      `retain-since-create-time ${retainS}s: due from ${((oldest + retainS * 1000 - edited2) / 1000).toFixed(1)} s to ${((newest + retainS * 1000 - edited2) / 1000).toFixed(1)} s after the edit`,
    );
    const stale2 = [...created.keys()];
    const last2 = await allDeleted(watch.seen, stale2, (retainS + 300) * 1000);
    const lateness = stale2.map((n) => watch.seen.get(n)! - (created.get(n)! + retainS * 1000));
    rows.push(row(`on timers (retain ${retainS}s)`, lateness, fmtMs(last2 - edited2)));
    const early = lateness.filter((l) => l < 0).length;

    console.log(`\nTidal: revision GC, ${count} Configurations with one stale Revision each (deletion seen by a watch), 2 cores`);
    console.log(table(['phase', 'deleted', 'edit → all gone', 'p50', 'p99', 'max', 'min'], rows));
    console.log('at once: delay after the config-gc edit; on timers: lateness after eligibility (creationTimestamp + retention)');
    if (early > 0) console.log(`WARNING: ${early} deleted before their eligibility`);
    progress(`done in ${progress.elapsed().toFixed(0)} s`);
  } finally {
    abort.abort();
    kube.close();
    await stackDown(dir);
  }
}

main().catch(async (err: unknown) => {
  console.error(err);
  await stackDown(dir);
  process.exit(1);
});
