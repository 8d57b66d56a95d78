// `npm run bench:rollout`: how precisely a gradual rollout keeps its schedule, on the local stack.
// Services with `rollout-duration: BENCH_ROLLOUT_SECONDS` (60) change image at once; this process watches the
// KIngresses and their VirtualServices. A step is a KIngress event whose newest revision's percent went up while the
// state before it named a `nextStepTime`: its error is when the event arrived here minus that time (the schedule the
// annotation announced). The VirtualService error is the same for the first change of the Route's `-ingress`
// VirtualService after the step (the split reaching the gateway's configuration). Two scenarios:
// - istio (BENCH_ROLLOUT_GROUPS, default "1,3" Services at once): the KIngress Tidal programs itself is Ready within
//   the Route's step, so Knative's formula gives a step every ~1 s for 60 s;
// - slow ingress (BENCH_ROLLOUT_SLOW_GROUPS, default "1,3"): the Services name a KIngress class Tidal leaves to its
//   own controller (`networking.knative.dev/ingress.class`), which this process plays: it marks each KIngress
//   generation Ready at once, except the 1 % step, which takes about a tenth of the duration (6 s) — so Knative's
//   formula gives the 10-step, 60-second rollout (1 → 12 → 23 → … → 89 → 100, one step every 6 s).
// Prints p50/p99/max per group. It asserts nothing.
import path from 'node:path';
import { rmSync } from 'node:fs';
import { Resources } from '../api/kinds.js';
import type { ResourceType } from '../api/kinds.js';
import type { KubeObject } from '../api/meta.js';
import type { Ingress } from '../api/networking.js';
import type { Service } from '../api/serving.js';
import { KubeClient, type WatchEvent } from '../kube/client.js';
import { repoRoot, stackDown, stackUp } from '../dev/stack.js';
import { nsToMsCeil, parseRolloutAnnotation, type Rollout } from '../resources/rollout.js';
import { envList, envNumber, fmtMs, percentile, sleep, table, progressLog } from './measure.js';
import { benchPorts } from './ports.js';

const ports = benchPorts(61);
const dir = path.join(repoRoot, '.tidal', 'bench-rollout');
const seconds = envNumber('BENCH_ROLLOUT_SECONDS', 60);
const groups = envList('BENCH_ROLLOUT_GROUPS', '1,3').map(Number);
const slowGroups = envList('BENCH_ROLLOUT_SLOW_GROUPS', '1,3').map(Number);
/**
 * The KIngress class this process plays, and how long it holds the 1 % step. Knative takes the step interval as the
 * 1 % step's time in whole seconds rounded up (6 s of a 60 s rollout: 9 more steps of 11 %), counted from when the
 * Route programmed it, so the hold leaves ~0.8 s for the Route to program it and to observe the Ready.
 */
const SLOW_CLASS = 'slow.ingress.bench.tidal.dev';
const firstStepHoldMs = Math.max(0, (seconds * 1000) / 10 - 800);
const progress = progressLog('bench');

const ROLLOUT = 'networking.internal.knative.dev/rollout';

function service(name: string, image: string, ingressClass?: string): Service {
  return {
    apiVersion: 'serving.knative.dev/v1',
    kind: 'Service',
    metadata: {
      name,
      namespace: 'default',
      annotations: {
        'serving.knative.dev/rollout-duration': `${seconds}s`,
        ...(ingressClass ? { 'networking.knative.dev/ingress.class': ingressClass } : {}),
      },
    },
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

/**
 * The controller of SLOW_CLASS KIngresses, played by this process until `signal` aborts: every generation is marked
 * Ready at once, except one whose rollout awaits its 1 % step's readiness (two revisions, no `nextStepTime` yet),
 * which is marked Ready `firstStepHoldMs` later.
 */
async function playSlowIngress(kube: KubeClient, signal: AbortSignal): Promise<void> {
  const marked = new Map<string, number>(); // name → generation marked (or being marked)
  const markReady = async (ing: Ingress): Promise<void> => {
    const name = ing.metadata.name ?? '';
    const generation = ing.metadata.generation ?? 0;
    if (ing.metadata.annotations?.['networking.knative.dev/ingress.class'] !== SLOW_CLASS) return;
    if ((ing.status?.observedGeneration ?? 0) === generation || marked.get(name) === generation) return;
    marked.set(name, generation);
    const group = defaultGroup(parseRolloutAnnotation(ing.metadata.annotations?.[ROLLOUT]));
    if ((group?.revisions.length ?? 0) > 1 && !group?.stepParams.nextStepTimeNs) await sleep(firstStepHoldMs);
    const now = new Date().toISOString();
    const lb = { ingress: [{ domainInternal: 'slow-gateway.bench.svc.cluster.local' }] };
    const conditions = ['LoadBalancerReady', 'NetworkConfigured', 'Ready'].map((type) => ({ type, status: 'True', lastTransitionTime: now }));
    await kube
      .apply<Ingress>(
        Resources.KIngress,
        {
          apiVersion: 'networking.internal.knative.dev/v1alpha1',
          kind: 'Ingress',
          metadata: { name, namespace: 'default' },
          status: { observedGeneration: generation, conditions, publicLoadBalancer: lb, privateLoadBalancer: lb },
        } as Ingress,
        'status',
      )
      .catch(() => marked.delete(name));
  };
  while (!signal.aborted) {
    const { resourceVersion, items } = await kube.list<Ingress>(Resources.KIngress, 'default');
    for (const i of items) void markReady(i);
    await kube
      .watch<Ingress>(Resources.KIngress, { namespace: 'default', resourceVersion, timeoutSeconds: 60, signal }, (ev) => {
        if (ev.type === 'ADDED' || ev.type === 'MODIFIED') void markReady(ev.object);
      })
      .catch(() => undefined);
  }
}

/** One group: `n` Services created, then all change image at once; the step errors of their rollouts. */
async function group(kube: KubeClient, n: number, ingressClass?: string): Promise<StepErrors> {
  const prefix = ingressClass ? `slow${n}` : `ro${n}`;
  const names = Array.from({ length: n }, (_, i) => `${prefix}-${i}`);
  const abort = new AbortController();
  const player = ingressClass ? playSlowIngress(kube, abort.signal) : undefined;
  await Promise.all(names.map((name) => kube.create(Resources.Service, service(name, 'nginx:1.27', ingressClass))));
  await waitReady(kube, names, (name) => `${name}-00001`);
  const errors = new StepErrors(names);
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
  await Promise.all(
    names.map((name) => kube.mergePatch(Resources.Service, 'default', name, { spec: service(name, 'nginx:1.28', ingressClass).spec })),
  );
  const deadline = Date.now() + seconds * 3000;
  while (!errors.allDone && Date.now() < deadline) await sleep(250);
  await sleep(1000); // the last VirtualService events
  abort.abort();
  await Promise.all([...watches, player]);
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
      rows.push(
        row(`istio, ${n} at once: KIngress (${steps.join('/')} steps)`, e.ingress),
        row(`istio, ${n} at once: VirtualService`, e.virtualService),
      );
    }
    for (const n of slowGroups) {
      const e = await group(kube, n, SLOW_CLASS);
      const steps = [...e.tracks.values()].map((t) => t.steps);
      rows.push(row(`slow ingress, ${n} at once: KIngress (${steps.join('/')} steps)`, e.ingress));
    }
    console.log(`\nTidal: gradual rollout step error (event seen by a watch − scheduled nextStepTime), rollout-duration ${seconds} s, 2 cores`);
    console.log(table(['rollouts', 'steps', 'p50', 'p99', 'max', 'min'], rows));
    progress(`done in ${progress.elapsed().toFixed(0)} s`);
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
