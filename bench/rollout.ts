// `npm run bench:rollout`: how precisely a gradual rollout keeps its schedule (issue 11, item 5), on the local stack.
// BENCH_ROLLOUTS Services (default 1, then 5 at once: BENCH_ROLLOUT_GROUPS="1,5") with `rollout-duration:
// BENCH_ROLLOUT_SECONDS` (60) change image; this process watches the KIngresses and their VirtualServices. A step is a
// KIngress event whose newest revision's percent went up while the state before it named a `nextStepTime`: its error
// is when the event arrived here minus that time (the schedule the annotation announced). The VirtualService error
// is the same for the first change of the Route's `-ingress` VirtualService after the step (the split reaching the
// gateway's configuration). The KIngress Tidal programs itself is Ready within the Route's step, so Knative's formula
// gives a step every ~1 s for 60 s (not 10 steps: those would need a 1 % step that takes 6 s to become ready).
// Prints p50/p99/max per group. It asserts nothing.
import path from 'node:path';
import { rmSync } from 'node:fs';
import { Resources } from '../api/kinds.js';
import type { ResourceType } from '../api/kinds.js';
import type { KubeObject } from '../api/meta.js';
import type { Ingress } from '../api/networking.js';
import type { Service } from '../api/serving.js';
import { KubeClient, type WatchEvent } from '../activities/kube/client.js';
import { repoRoot, stackDown, stackUp, type StackPorts } from '../dev/stack.js';
import { nsToMsCeil, parseRolloutAnnotation, type Rollout } from '../resources/rollout.js';
import { envList, envNumber, fmtMs, percentile, sleep, table } from './measure.js';

const ports: StackPorts = {
  etcdClient: 61379,
  etcdPeer: 61380,
  apiserver: 61443,
  controllerManager: 61257,
  scheduler: 61259,
  temporal: 61233,
  temporalUi: 61234,
  temporalHttp: 61243,
  temporalMetrics: 61244,
  controllerMetrics: 61464,
};
const dir = path.join(repoRoot, '.tidal', 'bench-rollout');
const seconds = envNumber('BENCH_ROLLOUT_SECONDS', 60);
const groups = envList('BENCH_ROLLOUT_GROUPS', '1,5').map(Number);
const started = performance.now();
const progress = (s: string) => console.error(`[bench ${((performance.now() - started) / 1000).toFixed(0).padStart(4)}s] ${s}`);

const ROLLOUT = 'networking.internal.knative.dev/rollout';

function service(name: string, image: string): Service {
  return {
    apiVersion: 'serving.knative.dev/v1',
    kind: 'Service',
    metadata: { name, namespace: 'default', annotations: { 'serving.knative.dev/rollout-duration': `${seconds}s` } },
    spec: { template: { spec: { containers: [{ image, ports: [{ containerPort: 80 }] }] } } },
  };
}

/** The default group's rollout of a KIngress's annotation. */
function defaultGroup(r: Rollout | undefined) {
  return r?.configurations.find((c) => !c.tag);
}

/** Per Route: the state last seen, and the due time of a step whose VirtualService change is still to come. */
interface Track {
  last?: Rollout;
  vsDue?: number;
  steps: number;
  done: boolean;
}

class StepErrors {
  readonly tracks = new Map<string, Track>();
  readonly ingress: number[] = [];
  readonly virtualService: number[] = [];

  constructor(names: readonly string[]) {
    for (const n of names) this.tracks.set(n, { steps: 0, done: false });
  }

  onIngress(ev: WatchEvent<Ingress>, at: number): void {
    const t = this.tracks.get(ev.object.metadata.name ?? '');
    if (!t || ev.type !== 'MODIFIED') return;
    const now = parseRolloutAnnotation(ev.object.metadata.annotations?.[ROLLOUT]);
    const before = defaultGroup(t.last);
    const after = defaultGroup(now);
    const newest = after?.revisions.at(-1);
    const was = before?.revisions.find((r) => r.revisionName === newest?.revisionName)?.percent;
    const due = before?.stepParams.nextStepTimeNs ? nsToMsCeil(BigInt(before.stepParams.nextStepTimeNs)) : undefined;
    if (newest && was !== undefined && newest.percent > was && due !== undefined && (before?.revisions.length ?? 0) > 1) {
      this.ingress.push(at - due);
      t.vsDue = due;
      t.steps += 1;
    }
    if (newest?.revisionName.endsWith('-00002') && newest.percent === (after?.percent ?? 100) && after?.revisions.length === 1) t.done = true;
    t.last = now;
  }

  onVirtualService(ev: WatchEvent<KubeObject>, at: number): void {
    const name = ev.object.metadata.name ?? '';
    if (ev.type !== 'MODIFIED' || !name.endsWith('-ingress')) return;
    const t = this.tracks.get(name.slice(0, -'-ingress'.length));
    if (t?.vsDue === undefined) return;
    this.virtualService.push(at - t.vsDue);
    t.vsDue = undefined;
  }

  get allDone(): boolean {
    return [...this.tracks.values()].every((t) => t.done);
  }
}

async function waitReady(kube: KubeClient, names: readonly string[], revision: (name: string) => string): Promise<void> {
  for (;;) {
    const ready = await Promise.all(
      names.map(async (n) => {
        const s = await kube.get<Service>(Resources.Service, 'default', n);
        const traffic = s?.status?.traffic ?? [];
        return (
          s?.status?.conditions?.find((c) => c.type === 'Ready')?.status === 'True' &&
          traffic.length === 1 &&
          traffic[0]?.revisionName === revision(n)
        );
      }),
    );
    if (ready.every(Boolean)) return;
    await sleep(500);
  }
}

/** One group: `n` Services created, then all change image at once; the step errors of their rollouts. */
async function group(kube: KubeClient, n: number): Promise<StepErrors> {
  const names = Array.from({ length: n }, (_, i) => `ro${n}-${i}`);
  await Promise.all(names.map((name) => kube.create(Resources.Service, service(name, 'nginx:1.27'))));
  await waitReady(kube, names, (name) => `${name}-00001`);
  const errors = new StepErrors(names);
  const abort = new AbortController();
  const watch = async <T extends KubeObject>(type: ResourceType, on: (ev: WatchEvent<T>, at: number) => void) => {
    const { resourceVersion, items } = await kube.list<T>(type, 'default');
    if (type === Resources.KIngress) for (const i of items) on({ type: 'MODIFIED', object: i }, Date.now());
    await kube
      .watch<T>(type, { namespace: 'default', resourceVersion, timeoutSeconds: seconds * 4, signal: abort.signal }, (ev) => on(ev, Date.now()))
      .catch(() => undefined);
  };
  const watches = [
    watch<Ingress>(Resources.KIngress, (ev, at) => errors.onIngress(ev, at)),
    watch<KubeObject>(Resources.VirtualService, (ev, at) => errors.onVirtualService(ev, at)),
  ];
  await sleep(500); // the watches are open
  progress(`${n} rollout(s) of ${seconds} s start`);
  await Promise.all(names.map((name) => kube.mergePatch(Resources.Service, 'default', name, { spec: service(name, 'nginx:1.28').spec })));
  const deadline = Date.now() + seconds * 3000;
  while (!errors.allDone && Date.now() < deadline) await sleep(250);
  await sleep(1000); // the last VirtualService events
  abort.abort();
  await Promise.all(watches);
  if (!errors.allDone) progress(`not every rollout finished within ${seconds * 3} s`);
  await Promise.all(names.map((name) => kube.delete(Resources.Service, 'default', name)));
  return errors;
}

const row = (label: string, values: number[]): string[] =>
  values.length === 0
    ? [label, '0', '—', '—', '—', '—']
    : [
        label,
        String(values.length),
        fmtMs(percentile(values, 50)),
        fmtMs(percentile(values, 99)),
        fmtMs(Math.max(...values)),
        fmtMs(Math.min(...values)),
      ];

async function main(): Promise<void> {
  await stackDown(dir);
  rmSync(dir, { recursive: true, force: true });
  progress('starting the stack');
  const info = await stackUp({ dir, ports, ui: false, nodes: 1, podsPerNode: 500, unthrottled: true, controller: true, log: progress });
  const kube = new KubeClient({ kubeconfig: info.kubeconfig, fieldManager: 'bench' });
  try {
    const rows: string[][] = [];
    for (const n of groups) {
      const e = await group(kube, n);
      const steps = [...e.tracks.values()].map((t) => t.steps);
      rows.push(row(`${n} at once: KIngress (${steps.join('/')} steps)`, e.ingress), row(`${n} at once: VirtualService`, e.virtualService));
    }
    console.log(`\nTidal: gradual rollout step error (event seen by a watch − scheduled nextStepTime), rollout-duration ${seconds} s, 2 cores`);
    console.log(table(['rollouts', 'steps', 'p50', 'p99', 'max', 'min'], rows));
    progress(`done in ${((performance.now() - started) / 1000).toFixed(0)} s`);
  } finally {
    kube.close();
    await stackDown(dir);
  }
}

main().catch(async (err: unknown) => {
  console.error(err);
  await stackDown(dir);
  process.exit(1);
});
