// The randomized convergence run shared by test/e2e/convergence.test.ts and bench/soak.ts.
// Writers change N Services (and their children) at random, as users and other controllers would; then every object
// is checked against what the LATEST spec implies, and the time from each Service's last change to its convergence
// is measured. The checks are written from Knative's documented behaviour, not from Tidal's builders, so that a bug
// in a builder is caught too. Not vitest-specific: the soak runs it from a plain script.
import { kwokNode } from '../../dev/stack.js';
import { Resources, type ResourceType } from '../../api/kinds.js';
import type { KubeObject } from '../../api/meta.js';
import type { Condition, Configuration, Revision, Route, Service, TrafficTarget } from '../../api/serving.js';
import { KubeClient } from '../../kube/client.js';
import { KubeApiError } from '../../kube/errors.js';

export interface ConvergenceOptions {
  kube: KubeClient;
  /** For deletes, which go through a client of their own (see {@link deleteObject}). */
  kubeconfig: string;
  namespace: string;
  services: number;
  writers: number;
  /** How long the writers run. */
  writeMs: number;
  /** Instead: the writers stop once they have made this many changes, however long that takes (a storm of one size on any control plane). */
  changes?: number;
  seed: number;
  /** Each Service (and the namespace as a whole) must converge within this long after its last change. */
  convergeTimeoutMs: number;
  /** Writes start no earlier than this (epoch ms), e.g. after the controller's start-up sweep. */
  notBefore?: number;
  /** Pause of each writer between two changes: uniform in [min, max] ms. */
  thinkMs?: [number, number];
  /** External domain selected by config-domain for the label below (set up by the caller). */
  domain: string;
  /**
   * The chaos run restarts the API server and Temporal under the writers: a write that fails for any other reason
   * than 404/409 (refused connection, a webhook with no ready replica) is retried — the model re-applied, or the
   * delete repeated — until it goes through (up to `tolerateOutagesMs`), as a user or a GitOps tool would.
   */
  tolerateOutagesMs?: number;
  /**
   * Whose control plane is checked (default Tidal's). Upstream's differs where Tidal does the networking layer's part
   * itself: its KIngresses are programmed by a networking layer (no VirtualServices are checked) and a Revision's
   * Service is its ServerlessService's (its existence is checked, not its owner).
   */
  controlPlane?: 'tidal' | 'upstream';
  /** Called as the writers start (after the Services are created): outages timed from there start here. */
  onWritesStarted?: () => void;
  /** Called once the writers are done, before the convergence checks (the chaos run stops its kills there). */
  onWritesDone?: () => Promise<void>;
  log: (s: string) => void;
}

/** Label every Service carries: the caller's config-domain selects `domain` with it. */
export const SuiteLabel = { key: 'conv.tidal.dev/suite', value: 'convergence' } as const;

export interface ConvergenceReport {
  seed: number;
  operations: Record<string, number>;
  /** ms from the last change of each Service (and of the namespace as a whole) to its first converged observation. */
  times: number[];
  p50: number;
  p99: number;
  max: number;
  /** Objects that did not converge: their name and what was still wrong when time ran out. */
  failures: { name: string; problems: string[] }[];
}

// ---- seeded randomness (mulberry32): the seed is printed, so a failing run's choices can be replayed ----

export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

class Rand {
  constructor(readonly next: () => number) {}
  int(n: number): number {
    return Math.floor(this.next() * n);
  }
  pick<T>(xs: readonly T[]): T {
    return xs[this.int(xs.length)]!;
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
  /** `n` positive integers summing to 100. */
  percents(n: number): number[] {
    const cuts = new Set<number>();
    while (cuts.size < n - 1) cuts.add(1 + this.int(99));
    const sorted = [...cuts].sort((a, b) => a - b);
    return [...sorted, 100].map((c, i) => c - (i === 0 ? 0 : sorted[i - 1]!));
  }
}

// ---- what a writer holds for one Service: the manifest it applies, whole, with server-side apply ----

const Images = ['docker.io/library/nginx:1.25', 'docker.io/library/nginx:1.26', 'docker.io/library/nginx:1.27', 'docker.io/library/nginx:1.28'];
const Tags = ['a', 'b', 'canary', 'old'];
const MinScale = 'autoscaling.knative.dev/min-scale';
const RoutingStateLabel = 'serving.knative.dev/routingState';
const Visibility = 'networking.knative.dev/visibility';
const NoteAnnotation = 'conv.tidal.dev/note';
const HijackHost = 'hijacked.invalid';

interface Model {
  name: string;
  exists: boolean;
  uid?: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  image: string;
  templateAnnotations: Record<string, string>;
  byo?: string;
  traffic?: TrafficTarget[];
}

function freshModel(name: string, r: Rand): Model {
  return { name, exists: true, labels: { [SuiteLabel.key]: SuiteLabel.value }, annotations: {}, image: r.pick(Images), templateAnnotations: {} };
}

const Creator = 'serving.knative.dev/creator';
const LastModifier = 'serving.knative.dev/lastModifier';

function manifest(m: Model, namespace: string): Service {
  const tplMeta = {
    ...(m.byo ? { name: m.byo } : {}),
    ...(Object.keys(m.templateAnnotations).length ? { annotations: { ...m.templateAnnotations } } : {}),
  };
  return {
    apiVersion: 'serving.knative.dev/v1',
    kind: 'Service',
    metadata: {
      name: m.name,
      namespace,
      labels: { ...m.labels },
      ...(Object.keys(m.annotations).length ? { annotations: { ...m.annotations } } : {}),
    },
    spec: {
      template: {
        ...(Object.keys(tplMeta).length ? { metadata: tplMeta } : {}),
        spec: { containers: [{ image: m.image, ports: [{ containerPort: 80 }] }] },
      },
      ...(m.traffic ? { traffic: m.traffic.map((t) => ({ ...t })) } : {}),
    },
  };
}

/**
 * Deletes one object through a throwaway client. KubeClient.delete sends its DeleteOptions body on a DELETE without
 * Content-Length; Node does not chunk DELETE bodies, so the body bytes reach the API server unframed and the next
 * request on that pooled connection gets a bare `400 Bad Request`. Closing the client after the delete drops that
 * connection. (Reported for kube/client.ts; the controller's own deletes hit it too.)
 */
export async function deleteObject(kubeconfig: string, type: (typeof Resources)[keyof typeof Resources], ns: string, name: string): Promise<boolean> {
  const once = new KubeClient({ kubeconfig, fieldManager: 'convergence' });
  try {
    return await once.delete(type, ns, name);
  } finally {
    once.close();
  }
}

const ignorable = (err: unknown) => err instanceof KubeApiError && (err.code === 404 || err.code === 409);

// ---- the writers ----

type Op =
  | 'create'
  | 'image'
  | 'traffic'
  | 'tag'
  | 'visibility'
  | 'annotation'
  | 'minScale'
  | 'byo'
  | 'delete'
  | 'recreate'
  | 'deploymentReplicas'
  | 'routeSpec'
  | 'placeholder';
const OpWeights: [Op, number][] = [
  ['image', 18],
  ['traffic', 16],
  ['tag', 10],
  ['visibility', 8],
  ['annotation', 8],
  ['minScale', 5],
  ['byo', 8],
  ['delete', 2],
  ['recreate', 3],
  ['deploymentReplicas', 7],
  ['routeSpec', 7],
  ['placeholder', 6],
];

class Writers {
  readonly models: Model[];
  readonly lastChange = new Map<string, number>();
  /** The last change made to each Service, for a failure's evidence. */
  readonly lastOp = new Map<string, string>();
  readonly ops: Record<string, number> = {};
  private readonly busy = new Set<number>();
  private byoCounter = 0;
  /** Per Service, the outgoing BYO name whose never-created check a failed request interrupted (templateChanging). */
  private readonly outgoingByo = new Map<string, string>();

  constructor(
    private readonly o: ConvergenceOptions,
    names: string[],
    r: Rand,
  ) {
    this.models = names.map((n) => freshModel(n, r));
  }

  private get kube() {
    return this.o.kube;
  }

  /**
   * Applies the model. `templateUnchanged`: the change is elsewhere (traffic, labels, annotations). Knative's webhook
   * refuses any template change that keeps a BYO name, and the defaults it stored are part of the template (fields this
   * writer's server-side apply would drop), so such a change re-sends the stored template, as a user editing the stored
   * object does. `retrying`: the model is applied again after a write that failed during an outage; when the stored
   * template already carries the model's BYO name, that write went through (every template change renews or drops the
   * name), and the stored template is re-sent too.
   */
  async apply(m: Model, templateUnchanged = false, retrying = false): Promise<void> {
    const body = manifest(m, this.o.namespace);
    const stored = m.exists && m.uid ? await this.kube.get<Service>(Resources.Service, this.o.namespace, m.name) : undefined;
    if (stored && stored.metadata.uid === m.uid) {
      // Knative refuses a changed or dropped creator / lastModifier (webhook-written, so this applier's server-side
      // apply would drop them): re-send what is stored, as `kubectl apply` keeps them.
      const kept = Object.entries(stored.metadata.annotations ?? {}).filter(([k]) => k === Creator || k === LastModifier);
      if (kept.length) body.metadata.annotations = { ...body.metadata.annotations, ...Object.fromEntries(kept) };
      if ((templateUnchanged || retrying) && m.byo && stored.spec.template.metadata?.name === m.byo) body.spec.template = stored.spec.template;
    }
    const applied = await this.kube.apply<Service>(Resources.Service, body);
    m.uid = applied.metadata.uid;
    m.exists = true;
  }

  /** Revisions of the Service's current incarnation, by name. */
  private async revisions(m: Model): Promise<Revision[]> {
    const list = await this.kube.list<Revision>(Resources.Revision, this.o.namespace, { labelSelector: `serving.knative.dev/service=${m.name}` });
    return list.items.filter((x) => x.metadata.labels?.['serving.knative.dev/serviceUID'] === m.uid && !x.metadata.deletionTimestamp);
  }

  /**
   * Before a template change: a BYO name must not be reused for a different template, so renew or drop it; and a
   * traffic target naming the outgoing BYO Revision before it was ever created would name nothing for ever (a user
   * error Knative reports, not a convergence bug), so such a target is dropped.
   */
  private async templateChanging(m: Model, r: Rand): Promise<void> {
    const old = m.byo;
    if (m.byo || r.chance(0.2)) m.byo = r.chance(0.7) ? this.newByo(m) : undefined;
    if (!old || old === m.byo || !m.traffic?.some((t) => t.revisionName === old)) return;
    // Remembered until the check has been made: if the list below fails (an outage), the retry makes it.
    this.outgoingByo.set(m.name, old);
    await this.dropOutgoingByoIfNeverCreated(m);
  }

  private async dropOutgoingByoIfNeverCreated(m: Model): Promise<void> {
    const old = this.outgoingByo.get(m.name);
    if (old === undefined) return;
    const created = (await this.revisions(m)).some((x) => x.metadata.name === old);
    this.outgoingByo.delete(m.name);
    if (created || !m.traffic) return;
    const kept = m.traffic.filter((t) => t.revisionName !== old);
    const lost = 100 - kept.reduce((sum, t) => sum + (t.percent ?? 0), 0);
    m.traffic = kept.length ? kept.map((t, i) => (i === 0 ? { ...t, percent: (t.percent ?? 0) + lost } : t)) : undefined;
  }

  private newByo(m: Model): string {
    this.byoCounter += 1;
    return `${m.name}-byo${this.byoCounter.toString(36)}`;
  }

  private async randomTraffic(m: Model, r: Rand): Promise<TrafficTarget[] | undefined> {
    const revs = (await this.revisions(m)).map((x) => x.metadata.name ?? '');
    if (m.byo && r.chance(0.5) && !revs.includes(m.byo)) revs.push(m.byo); // the BYO name of the pending template
    if (revs.length === 0 || r.chance(0.15)) return r.chance(0.5) ? undefined : [{ latestRevision: true, percent: 100 }];
    const n = 1 + r.int(Math.min(3, revs.length + 1));
    const pool = [...revs];
    const targets: TrafficTarget[] = [];
    const percents = r.percents(n);
    const withLatest = r.chance(0.6);
    for (let i = 0; i < n; i++) {
      if (i === 0 && withLatest) targets.push({ latestRevision: true, percent: percents[i]! });
      else if (pool.length) targets.push({ revisionName: pool.splice(r.int(pool.length), 1)[0]!, latestRevision: false, percent: percents[i]! });
      else targets[0]!.percent = (targets[0]!.percent ?? 0) + percents[i]!;
    }
    this.retag(targets, r);
    return targets;
  }

  /**
   * With hakn's revision GC (min and max non-active Revisions 1) a Revision no traffic names may be collected between this
   * writer's list and its write: the Service then names a Revision that is gone — Knative reports it
   * (RevisionMissing) and only the user can fix it. A user would choose again, and so does the writer (counted
   * apart). Once the write is stored the GC keeps what it names (it reads the Service's and Routes' traffic fresh
   * just before it deletes); the pause lets a GC step that read them before this write finish first.
   */
  private async namedStillThere(m: Model, r: Rand): Promise<void> {
    for (let i = 0; i < 5; i++) {
      const named = (m.traffic ?? []).flatMap((t) => (t.revisionName && t.revisionName !== m.byo ? [t.revisionName] : []));
      if (!named.length) return;
      await sleep(2000);
      const have = new Set((await this.revisions(m)).map((x) => x.metadata.name ?? ''));
      if (named.every((n) => have.has(n))) return;
      this.ops['traffic (named Revision collected meanwhile)'] = (this.ops['traffic (named Revision collected meanwhile)'] ?? 0) + 1;
      m.traffic = await this.randomTraffic(m, r);
      await this.apply(m, true);
    }
  }

  /** Random, unique tags on some targets, and sometimes an extra 0 % tagged target. */
  private retag(targets: TrafficTarget[], r: Rand): void {
    const free = [...Tags];
    for (const t of targets) {
      delete t.tag;
      if (r.chance(0.35)) t.tag = free.splice(r.int(free.length), 1)[0]!;
    }
    if (free.length && r.chance(0.3)) {
      const named = targets.find((t) => t.revisionName);
      targets.push(
        named ? { tag: r.pick(free), revisionName: named.revisionName!, percent: 0 } : { tag: r.pick(free), latestRevision: true, percent: 0 },
      );
    }
  }

  private pickOp(m: Model, r: Rand): Op {
    if (!m.exists) return 'create';
    const total = OpWeights.reduce((s, [, w]) => s + w, 0);
    let x = r.int(total);
    for (const [op, w] of OpWeights) {
      if ((x -= w) < 0) return op;
    }
    return 'image';
  }

  async step(r: Rand): Promise<void> {
    const free = this.models.map((_, i) => i).filter((i) => !this.busy.has(i));
    if (!free.length) return;
    const i = r.pick(free);
    const m = this.models[i]!;
    this.busy.add(i);
    const op = this.pickOp(m, r);
    try {
      await this.run(op, m, r);
      this.ops[op] = (this.ops[op] ?? 0) + 1;
    } catch (err) {
      if (ignorable(err)) this.ops[`${op} (404/409)`] = (this.ops[`${op} (404/409)`] ?? 0) + 1;
      else if (this.o.tolerateOutagesMs) await this.retry(op, m, err, r);
      else throw err;
    } finally {
      this.lastChange.set(m.name, Date.now());
      this.lastOp.set(m.name, op);
      this.busy.delete(i);
    }
  }

  /** The first apply of a Service; during outages (`tolerateOutagesMs`) it is retried until it goes through. */
  async create(m: Model): Promise<void> {
    const deadline = Date.now() + (this.o.tolerateOutagesMs ?? 0);
    for (;;) {
      try {
        return await this.apply(m);
      } catch (err) {
        if (!this.o.tolerateOutagesMs || Date.now() > deadline) throw err;
        this.ops['create (retried)'] = (this.ops['create (retried)'] ?? 0) + 1;
        await sleep(1000);
      }
    }
  }

  /** Makes the cluster match the model again after a write failed during an outage (see `tolerateOutagesMs`). */
  private async retry(op: Op, m: Model, first: unknown, r: Rand): Promise<void> {
    this.ops[`${op} (retried)`] = (this.ops[`${op} (retried)`] ?? 0) + 1;
    const deadline = Date.now() + (this.o.tolerateOutagesMs ?? 0);
    // A change to an owned child is a disturbance, not part of the model: if it did not go through, nothing changed.
    if (op === 'deploymentReplicas' || op === 'routeSpec' || op === 'placeholder') return;
    let err = first;
    while (Date.now() < deadline) {
      await sleep(1000);
      try {
        await this.dropOutgoingByoIfNeverCreated(m);
        if (m.exists) await this.apply(m, ['traffic', 'tag', 'visibility', 'annotation'].includes(op), true);
        else await this.deleteAndWait(m);
        // The Revisions this traffic names were listed before the outage: the GC may have collected one while the
        // write could not go through (nothing named it yet). A user would see RevisionMissing and choose again.
        if (m.exists && op === 'traffic') await this.namedStillThere(m, r);
        return;
      } catch (e) {
        if (ignorable(e)) return;
        err = e;
      }
    }
    throw err;
  }

  private async run(op: Op, m: Model, r: Rand): Promise<void> {
    const ns = this.o.namespace;
    switch (op) {
      case 'create':
      case 'recreate': {
        if (op === 'recreate') await this.deleteAndWait(m);
        const fresh = freshModel(m.name, r);
        Object.assign(m, fresh, { uid: undefined, byo: r.chance(0.3) ? this.newByo(m) : undefined, traffic: undefined });
        return this.apply(m);
      }
      case 'delete':
        return this.deleteAndWait(m);
      case 'image':
        m.image = r.pick(Images.filter((x) => x !== m.image));
        await this.templateChanging(m, r);
        return this.apply(m);
      case 'minScale': {
        const v = r.pick([undefined, '1', '3']);
        if (v === m.templateAnnotations[MinScale]) return;
        if (v) m.templateAnnotations[MinScale] = v;
        else delete m.templateAnnotations[MinScale];
        await this.templateChanging(m, r);
        return this.apply(m);
      }
      case 'byo':
        // A new name is a new template (metadata.name is part of it): a new generation, a Revision of that name.
        await this.templateChanging(m, r);
        if (!m.byo && r.chance(0.8)) m.byo = this.newByo(m);
        return this.apply(m);
      case 'traffic':
        m.traffic = await this.randomTraffic(m, r);
        await this.apply(m, true);
        return this.namedStillThere(m, r);
      case 'tag': {
        if (!m.traffic?.length) m.traffic = [{ latestRevision: true, percent: 100 }];
        const targets = m.traffic.filter((t) => (t.percent ?? 0) > 0 || !t.tag);
        this.retag(targets, r);
        m.traffic = targets;
        return this.apply(m, true);
      }
      case 'visibility':
        if (m.labels[Visibility]) delete m.labels[Visibility];
        else m.labels[Visibility] = 'cluster-local';
        return this.apply(m, true);
      case 'annotation':
        if (m.annotations[NoteAnnotation] && r.chance(0.4)) delete m.annotations[NoteAnnotation];
        else m.annotations[NoteAnnotation] = `n${r.int(1000)}`;
        return this.apply(m, true);
      case 'deploymentReplicas': {
        const revs = await this.revisions(m);
        if (!revs.length) return;
        const rev = r.pick(revs).metadata.name ?? '';
        await this.kube.mergePatch(Resources.Deployment, ns, `${rev}-deployment`, { spec: { replicas: r.pick([0, 1, 5]) } });
        return;
      }
      case 'routeSpec': {
        const revs = await this.revisions(m);
        const traffic = revs.length
          ? [{ revisionName: r.pick(revs).metadata.name, percent: 100, tag: 'hijack' }]
          : [
              { configurationName: m.name, latestRevision: true, percent: 50 },
              { configurationName: m.name, latestRevision: true, percent: 50, tag: 'hijack' },
            ];
        await this.kube.mergePatch(Resources.Route, ns, m.name, { spec: { traffic } });
        return;
      }
      case 'placeholder':
        await this.kube.mergePatch(Resources.KubeService, ns, m.name, { spec: { externalName: HijackHost } });
        return;
    }
  }

  private async deleteAndWait(m: Model): Promise<void> {
    m.exists = false;
    m.traffic = undefined;
    await deleteObject(this.o.kubeconfig, Resources.Service, this.o.namespace, m.name);
    // As `kubectl delete` does: return once the object is gone (a Service has no finalizer; its children go by GC).
    for (let i = 0; i < 100; i++) {
      const s = await this.kube.get<Service>(Resources.Service, this.o.namespace, m.name);
      if (!s || (m.uid && s.metadata.uid !== m.uid)) return;
      await sleep(100);
    }
  }
}

// ---- the checker: one snapshot of the namespace, every object against the latest spec ----

interface Deployment extends KubeObject {
  spec?: { replicas?: number; template?: { spec?: { containers?: { name: string; image: string }[] } } };
}
interface KService extends KubeObject {
  spec?: { type?: string; externalName?: string };
}
interface LB {
  ingress?: { domainInternal?: string; domain?: string; ip?: string }[];
}
interface KIngress extends KubeObject {
  spec?: {
    rules?: {
      hosts?: string[];
      visibility?: string;
      http?: { paths?: { headers?: unknown; splits?: { serviceName: string; percent?: number }[] }[] };
    }[];
  };
  status?: { conditions?: Condition[]; publicLoadBalancer?: LB; privateLoadBalancer?: LB };
}
interface VirtualService extends KubeObject {
  spec?: {
    hosts?: string[];
    http?: {
      match?: { authority?: { prefix?: string }; gateways?: string[]; headers?: Record<string, unknown> }[];
      route?: { destination: { host: string }; weight?: number }[];
    }[];
  };
}

interface Snapshot {
  at: number;
  services: Service[];
  configurations: Configuration[];
  routes: Route[];
  revisions: Revision[];
  deployments: Deployment[];
  kservices: KService[];
  ingresses: KIngress[];
  virtualServices: VirtualService[];
}

async function snapshot(kube: KubeClient, ns: string, controlPlane: ConvergenceOptions['controlPlane']): Promise<Snapshot> {
  const at = Date.now();
  const list = async <T extends KubeObject>(t: (typeof Resources)[keyof typeof Resources]) =>
    // Upstream's stack has no Istio CRDs: no VirtualServices to list.
    t === Resources.VirtualService && controlPlane === 'upstream' ? [] : (await kube.list<T>(t, ns)).items;
  const [services, configurations, routes, revisions, deployments, kservices, ingresses, virtualServices] = await Promise.all([
    list<Service>(Resources.Service),
    list<Configuration>(Resources.Configuration),
    list<Route>(Resources.Route),
    list<Revision>(Resources.Revision),
    list<Deployment>(Resources.Deployment),
    list<KService>(Resources.KubeService),
    list<KIngress>(Resources.KIngress),
    list<VirtualService>(Resources.VirtualService),
  ]);
  return { at, services, configurations, routes, revisions, deployments, kservices, ingresses, virtualServices };
}

const cond = (o: { status?: { conditions?: Condition[] } } | undefined, t: string) => o?.status?.conditions?.find((c) => c.type === t);
const controllerOf = (o: KubeObject) => o.metadata.ownerReferences?.find((x) => x.controller);
const ownedBy = (o: KubeObject, owner: KubeObject | undefined) => owner !== undefined && controllerOf(o)?.uid === owner.metadata.uid;
const byName = <T extends KubeObject>(xs: T[], name: string) => xs.find((x) => x.metadata.name === name);
/** JSON with object keys sorted, so that comparisons do not depend on the order the API server returns fields in. */
const j = (v: unknown): string =>
  JSON.stringify(v, (_k, x: unknown) =>
    x && typeof x === 'object' && !Array.isArray(x) ? Object.fromEntries(Object.entries(x).sort(([a], [b]) => (a < b ? -1 : 1))) : x,
  );
const sortKeys = (m: Map<string, number>) => j([...m.entries()].sort(([a], [b]) => (a < b ? -1 : 1)));

/** Where `want` (the user's object) sets a field that `have` does not hold with the same value; undefined when none. */
function firstMismatch(want: unknown, have: unknown, at: string): string | undefined {
  if (Array.isArray(want)) {
    if (!Array.isArray(have) || have.length !== want.length) return `${at}: ${j(have)} != ${j(want)}`;
    for (let i = 0; i < want.length; i++) {
      const m = firstMismatch(want[i], have[i], `${at}[${i}]`);
      if (m) return m;
    }
    return undefined;
  }
  if (want && typeof want === 'object') {
    if (!have || typeof have !== 'object') return `${at}: ${j(have)} != ${j(want)}`;
    for (const [k, v] of Object.entries(want)) {
      const m = firstMismatch(v, (have as Record<string, unknown>)[k], `${at}.${k}`);
      if (m) return m;
    }
    return undefined;
  }
  return want === have ? undefined : `${at}: ${j(have)} != ${j(want)}`;
}

/**
 * The traffic a Route must carry for a Service (Knative: an empty list is 100 % to the latest Revision), in the
 * defaulted form (latestRevision is true exactly for targets without a revisionName), with configurationName set on
 * targets that name no Revision.
 */
function routeTrafficFor(svc: Service): TrafficTarget[] {
  const name = svc.metadata.name ?? '';
  return (svc.spec.traffic?.length ? svc.spec.traffic : [{ latestRevision: true, percent: 100 }])
    .map(normalTarget)
    .map((t) => (t.revisionName ? t : { ...t, configurationName: name }));
}

function normalTarget(t: TrafficTarget): TrafficTarget {
  return { ...t, latestRevision: t.latestRevision ?? !t.revisionName };
}

/**
 * What is wrong with a Revision's routing state: one a Route target names is `active`; one none names is not (it
 * is `reserve` once a Route let it go, or still `pending` if none ever named it, as upstream's labeler leaves it).
 */
function routingStateProblem(rev: Revision, routed: ReadonlySet<string>): string | undefined {
  const state = rev.metadata.labels?.[RoutingStateLabel];
  const name = rev.metadata.name ?? '';
  if (routed.has(name) && state !== 'active') return `Revision ${name} routed but routingState ${state}`;
  if (!routed.has(name) && state === 'active') return `Revision ${name} not routed but routingState active`;
  return undefined;
}

function expectedReplicas(rev: Revision): number {
  // A reserve Revision holds no pods (ADR 0018); a pending one keeps its count, as upstream's PodAutoscaler does.
  if (rev.metadata.labels?.[RoutingStateLabel] === 'reserve') return 0;
  // hakn: no autoscaler; max(initial-scale 1, min-scale) with config-autoscaler's min-scale 2, capped by max-scale 30.
  const min = rev.metadata.annotations?.[MinScale];
  return Math.min(30, Math.max(1, min === undefined ? 2 : Number(min)));
}

/** What is still wrong for Service `name` (empty: converged). */
export function checkService(s: Snapshot, name: string, opts: { namespace: string; domain: string; controlPlane?: 'tidal' | 'upstream' }): string[] {
  const upstream = opts.controlPlane === 'upstream';
  const p: string[] = [];
  const ns = opts.namespace;
  const svc = byName(s.services, name);
  if (!svc) {
    // Deleted for good: nothing of it may remain.
    for (const [kind, xs] of [
      ['Configuration', s.configurations],
      ['Route', s.routes],
      ['Ingress', s.ingresses],
    ] as const) {
      if (byName(xs as KubeObject[], name)) p.push(`${kind} ${name} still exists after its Service was deleted`);
    }
    return p;
  }
  const gen = svc.metadata.generation;
  if (svc.status?.observedGeneration !== gen) p.push(`Service observedGeneration ${svc.status?.observedGeneration} != generation ${gen}`);
  if (cond(svc, 'Ready')?.status !== 'True')
    p.push(`Service Ready=${cond(svc, 'Ready')?.status} ${cond(svc, 'Ready')?.reason ?? ''}: ${cond(svc, 'Ready')?.message ?? ''}`);

  // Configuration: owned, template verbatim, metadata from the Service, latest generation reconciled.
  const cfg = byName(s.configurations, name);
  if (!cfg) return [...p, 'no Configuration'];
  if (!ownedBy(cfg, svc)) p.push('Configuration not controlled by the current Service');
  if (cfg.status?.observedGeneration !== cfg.metadata.generation)
    p.push(`Configuration observedGeneration ${cfg.status?.observedGeneration} != generation ${cfg.metadata.generation}`);
  // The template is the Service's, verbatim apart from Knative's defaults (Tidal has no webhook, so the Configuration
  // may carry defaults the Service does not): every field the Service sets is there with its value, and the fields the
  // writers vary (name, annotations, image) are exactly the Service's, so a removed one must be gone.
  const subset = firstMismatch(svc.spec.template, cfg.spec.template, 'template');
  if (subset) p.push(`Configuration ${subset}`);
  const tplKey = (t: Configuration['spec']['template']) =>
    j({ name: t.metadata?.name, annotations: t.metadata?.annotations ?? {}, image: t.spec.containers[0]?.image });
  if (tplKey(cfg.spec.template) !== tplKey(svc.spec.template))
    p.push(`Configuration template name/annotations/image ${tplKey(cfg.spec.template)} != Service's ${tplKey(svc.spec.template)}`);
  const svcAnn = { ...svc.metadata.annotations };
  delete svcAnn['kubectl.kubernetes.io/last-applied-configuration'];
  for (const [k, v] of Object.entries(svc.metadata.labels ?? {}))
    if (cfg.metadata.labels?.[k] !== v) p.push(`Configuration label ${k}=${cfg.metadata.labels?.[k]} != ${v}`);
  for (const [k, v] of Object.entries(svcAnn))
    if (cfg.metadata.annotations?.[k] !== v) p.push(`Configuration annotation ${k}=${cfg.metadata.annotations?.[k]} != ${v}`);
  for (const k of [NoteAnnotation])
    if (cfg.metadata.annotations?.[k] !== undefined && svcAnn[k] === undefined) p.push(`Configuration keeps removed annotation ${k}`);
  for (const k of [Visibility])
    if (cfg.metadata.labels?.[k] !== undefined && svc.metadata.labels?.[k] === undefined) p.push(`Configuration keeps removed label ${k}`);

  // Revisions: at most one per generation; the latest generation's exists, named and built from the template.
  const revs = s.revisions.filter((r) => r.metadata.labels?.['serving.knative.dev/configuration'] === name && ownedBy(r, cfg));
  const perGen = new Map<string, string[]>();
  for (const r of revs) {
    const g = r.metadata.labels?.['serving.knative.dev/configurationGeneration'] ?? '?';
    perGen.set(g, [...(perGen.get(g) ?? []), r.metadata.name ?? '']);
  }
  for (const [g, names] of perGen) if (names.length > 1) p.push(`generation ${g} has ${names.length} Revisions: ${names.join(', ')}`);
  const want = svc.spec.template.metadata?.name ?? `${name}-${String(cfg.metadata.generation).padStart(5, '0')}`;
  const latest = revs.find((r) => r.metadata.labels?.['serving.knative.dev/configurationGeneration'] === String(cfg.metadata.generation));
  if (!latest)
    p.push(`no Revision for Configuration generation ${cfg.metadata.generation} (want ${want}; have ${revs.map((r) => r.metadata.name).join(', ')})`);
  else {
    if (latest.metadata.name !== want) p.push(`latest Revision is ${latest.metadata.name}, want ${want}`);
    if (latest.spec.containers[0]?.image !== svc.spec.template.spec.containers[0]?.image)
      p.push(`latest Revision image ${latest.spec.containers[0]?.image} != ${svc.spec.template.spec.containers[0]?.image}`);
    if (cond(latest, 'Ready')?.status !== 'True')
      p.push(`latest Revision ${latest.metadata.name} Ready=${cond(latest, 'Ready')?.status} ${cond(latest, 'Ready')?.reason ?? ''}`);
    if (cfg.status?.latestCreatedRevisionName !== want || cfg.status?.latestReadyRevisionName !== want) {
      p.push(`Configuration latestCreated/latestReady ${cfg.status?.latestCreatedRevisionName}/${cfg.status?.latestReadyRevisionName}, want ${want}`);
    }
  }
  // Every Revision has its routing state (active exactly when the Service's traffic names it, or it is the latest
  // ready one for a latestRevision target), its Deployment (image, replicas: 0 when reserve) and its ClusterIP Service.
  const routed = new Set(routeTrafficFor(svc).map((t) => t.revisionName ?? want));
  for (const r of revs) {
    const rn = r.metadata.name ?? '';
    const routing = routingStateProblem(r, routed);
    if (routing) p.push(routing);
    const dep = byName(s.deployments, `${rn}-deployment`);
    if (!dep || !ownedBy(dep, r)) p.push(`Revision ${rn}: no Deployment owned by it`);
    else {
      const img = dep.spec?.template?.spec?.containers?.find((c) => c.name === 'user-container')?.image;
      if (img !== r.spec.containers[0]?.image) p.push(`Deployment ${rn}-deployment image ${img} != ${r.spec.containers[0]?.image}`);
      const replicas = expectedReplicas(r);
      if (dep.spec?.replicas !== replicas) p.push(`Deployment ${rn}-deployment replicas ${dep.spec?.replicas} != ${replicas}`);
    }
    const rsvc = byName(s.kservices, rn);
    if (upstream ? !rsvc : !rsvc || !ownedBy(rsvc, r)) p.push(`Revision ${rn}: no Service owned by it`);
  }

  // Route: owned, spec = the Service's traffic, status resolved against the latest ready Revision.
  const route = byName(s.routes, name);
  if (!route) return [...p, 'no Route'];
  if (!ownedBy(route, svc)) p.push('Route not controlled by the current Service');
  if (route.status?.observedGeneration !== route.metadata.generation)
    p.push(`Route observedGeneration ${route.status?.observedGeneration} != generation ${route.metadata.generation}`);
  if (cond(route, 'Ready')?.status !== 'True')
    p.push(`Route Ready=${cond(route, 'Ready')?.status} ${cond(route, 'Ready')?.reason ?? ''}: ${cond(route, 'Ready')?.message ?? ''}`);
  const spec = routeTrafficFor(svc);
  if (j((route.spec.traffic ?? []).map(normalTarget)) !== j(spec)) p.push(`Route spec.traffic ${j(route.spec.traffic)} != ${j(spec)}`);
  for (const [k, v] of Object.entries(svc.metadata.labels ?? {}))
    if (route.metadata.labels?.[k] !== v) p.push(`Route label ${k}=${route.metadata.labels?.[k]} != ${v}`);
  if (route.metadata.labels?.[Visibility] !== undefined && svc.metadata.labels?.[Visibility] === undefined)
    p.push(`Route keeps removed label ${Visibility}`);
  if (route.metadata.annotations?.[NoteAnnotation] !== svcAnn[NoteAnnotation])
    p.push(`Route annotation ${NoteAnnotation}=${route.metadata.annotations?.[NoteAnnotation]} != ${svcAnn[NoteAnnotation]}`);

  const clusterLocal = svc.metadata.labels?.[Visibility] === 'cluster-local';
  const domain = clusterLocal ? 'svc.cluster.local' : opts.domain;
  const latestReady = cfg.status?.latestReadyRevisionName;
  const resolved = spec.map((t) => ({
    ...(t.tag ? { tag: t.tag } : {}),
    revisionName: t.revisionName ?? latestReady,
    latestRevision: t.revisionName ? false : true,
    percent: t.percent ?? 0,
    ...(t.tag ? { url: `http://${t.tag}-${name}.${ns}.${domain}` } : {}),
  }));
  const statusTraffic = (route.status?.traffic ?? []).map((t) => ({
    ...(t.tag ? { tag: t.tag } : {}),
    revisionName: t.revisionName,
    latestRevision: t.latestRevision ?? false,
    percent: t.percent ?? 0,
    ...(t.url ? { url: t.url } : {}),
  }));
  if (j(statusTraffic) !== j(resolved)) p.push(`Route status.traffic ${j(statusTraffic)} != ${j(resolved)}`);
  if (j(svc.status?.traffic ?? []) !== j(route.status?.traffic ?? [])) p.push('Service status.traffic != Route status.traffic');
  if (route.status?.url !== `http://${name}.${ns}.${domain}`) p.push(`Route url ${route.status?.url} != http://${name}.${ns}.${domain}`);
  // Revisions the Route carries are active.
  for (const t of resolved) {
    const r = revs.find((x) => x.metadata.name === t.revisionName);
    if (r && r.metadata.labels?.['serving.knative.dev/routingState'] !== 'active')
      p.push(`Revision ${t.revisionName} routingState ${r.metadata.labels?.['serving.knative.dev/routingState']}, want active`);
  }

  // Traffic groups: '' splits over every target; a tag sends 100 % to its target.
  const tags = [...new Set(resolved.flatMap((t) => (t.tag ? [t.tag] : [])))].sort();
  const groups = new Map<string, Map<string, number>>();
  const def = new Map<string, number>();
  for (const t of resolved) if (t.percent > 0) def.set(t.revisionName ?? '', (def.get(t.revisionName ?? '') ?? 0) + t.percent);
  groups.set('', def);
  for (const tag of tags) groups.set(tag, new Map([[resolved.find((t) => t.tag === tag)?.revisionName ?? '', 100]]));
  const hostOf = (tag: string) => (tag ? `${tag}-${name}` : name);

  // KIngress: per group, one ClusterLocal rule (expanded cluster-local hosts) and, unless cluster-local, one ExternalIP rule.
  const ing = byName(s.ingresses, name);
  if (!ing || !ownedBy(ing, route)) return [...p, 'no KIngress owned by the Route'];
  if (cond(ing, 'Ready')?.status !== 'True') p.push(`KIngress Ready=${cond(ing, 'Ready')?.status}`);
  const wantRules = new Set<string>();
  for (const [tag, split] of groups) {
    const h = `${hostOf(tag)}.${ns}`;
    wantRules.add(j(['ClusterLocal', [h, `${h}.svc`, `${h}.svc.cluster.local`], sortKeys(split)]));
    if (!clusterLocal) wantRules.add(j(['ExternalIP', [`${h}.${opts.domain}`], sortKeys(split)]));
  }
  const haveRules = new Set<string>();
  for (const rule of ing.spec?.rules ?? []) {
    const paths = (rule.http?.paths ?? []).filter((x) => !x.headers);
    const split = new Map<string, number>();
    for (const x of paths.flatMap((q) => q.splits ?? [])) split.set(x.serviceName, (split.get(x.serviceName) ?? 0) + (x.percent ?? 0));
    haveRules.add(j([rule.visibility, [...(rule.hosts ?? [])].sort(), sortKeys(split)]));
  }
  const missing = [...wantRules].filter((x) => !haveRules.has(x));
  const extra = [...haveRules].filter((x) => !wantRules.has(x));
  if (missing.length || extra.length) p.push(`KIngress rules: missing ${missing.join(' ')}; unexpected ${extra.join(' ')}`);

  // VirtualServices: the same groups as authority prefixes with weighted destinations, on the right gateways.
  const checkVs = (vsName: string, visibilities: [string, string][]) => {
    const vs = byName(s.virtualServices, vsName);
    if (!vs || !ownedBy(vs, ing)) return void p.push(`no VirtualService ${vsName} owned by the KIngress`);
    const want = new Set<string>();
    const wantHosts = new Set<string>();
    for (const [tag, split] of groups) {
      const h = `${hostOf(tag)}.${ns}`;
      const dest = new Map([...split].map(([rev, pct]) => [`${rev}.${ns}.svc.cluster.local`, pct]));
      for (const [vis, gw] of visibilities) {
        if (vis === 'ExternalIP' && clusterLocal) continue;
        const prefix = vis === 'ExternalIP' ? `${h}.${opts.domain}` : h;
        want.add(j([prefix, gw, sortKeys(dest)]));
        for (const x of vis === 'ExternalIP' ? [prefix] : [h, `${h}.svc`, `${h}.svc.cluster.local`]) wantHosts.add(x);
      }
    }
    const have = new Set<string>();
    for (const http of vs.spec?.http ?? []) {
      if (http.match?.some((m) => m.headers)) continue; // readiness-probe routes
      const dest = new Map<string, number>();
      for (const d of http.route ?? []) if (d.weight) dest.set(d.destination.host, (dest.get(d.destination.host) ?? 0) + d.weight);
      for (const m of http.match ?? []) for (const gw of m.gateways ?? []) have.add(j([m.authority?.prefix, gw, sortKeys(dest)]));
    }
    const miss = [...want].filter((x) => !have.has(x));
    const ext = [...have].filter((x) => !want.has(x));
    if (miss.length || ext.length) p.push(`VirtualService ${vsName}: missing ${miss.join(' ')}; unexpected ${ext.join(' ')}`);
    const hosts = [...(vs.spec?.hosts ?? [])].sort();
    if (j(hosts) !== j([...wantHosts].sort())) p.push(`VirtualService ${vsName} hosts ${j(hosts)} != ${j([...wantHosts].sort())}`);
  };
  if (!upstream) {
    checkVs(`${name}-ingress`, [
      ['ExternalIP', 'knative-serving/knative-ingress-gateway'],
      ['ClusterLocal', 'knative-serving/knative-local-gateway'],
    ]);
    checkVs(`${name}-mesh`, [['ClusterLocal', 'mesh']]);
  }

  // Placeholder Services: exactly one per traffic group, pointing at the Ingress's load balancer.
  const placeholders = s.kservices
    .filter((x) => ownedBy(x, route))
    .map((x) => x.metadata.name ?? '')
    .sort();
  const wantPlaceholders = [...groups.keys()].map(hostOf).sort();
  if (j(placeholders) !== j(wantPlaceholders)) p.push(`placeholder Services ${j(placeholders)} != ${j(wantPlaceholders)}`);
  const priv = ing.status?.privateLoadBalancer?.ingress ?? [];
  const lb = (priv.length ? priv : (ing.status?.publicLoadBalancer?.ingress ?? []))[0];
  const wantExternal = lb?.domainInternal ?? lb?.domain;
  for (const ph of wantPlaceholders) {
    const x = byName(s.kservices, ph);
    if (x && wantExternal && x.spec?.externalName !== wantExternal)
      p.push(`placeholder ${ph} externalName ${x.spec?.externalName} != ${wantExternal}`);
  }
  return p;
}

/** Children whose controlling owner is gone (or is a newer object of the same name). */
export function checkOrphans(s: Snapshot): string[] {
  const live = new Set<string>();
  for (const xs of [s.services, s.configurations, s.routes, s.revisions, s.ingresses] as KubeObject[][])
    for (const x of xs) if (x.metadata.uid) live.add(x.metadata.uid);
  const p: string[] = [];
  const kinds: [string, KubeObject[]][] = [
    ['Configuration', s.configurations],
    ['Route', s.routes],
    ['Revision', s.revisions],
    ['Deployment', s.deployments],
    ['Service', s.kservices],
    ['Ingress', s.ingresses],
    ['VirtualService', s.virtualServices],
  ];
  const servingOwners = new Set(['Service', 'Configuration', 'Revision', 'Route', 'Ingress']);
  for (const [kind, xs] of kinds) {
    for (const x of xs) {
      const ref = controllerOf(x);
      if (!ref || !servingOwners.has(ref.kind)) continue;
      if (!live.has(ref.uid)) p.push(`orphan ${kind} ${x.metadata.name} (owner ${ref.kind} ${ref.name} ${ref.uid} is gone)`);
    }
  }
  return p;
}

function pct(sorted: number[], q: number): number {
  return sorted.length ? sorted[Math.min(sorted.length - 1, Math.ceil((q / 100) * sorted.length) - 1)]! : NaN;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Creates the Services, runs the writers, then waits for every object to converge and reports. */
export async function runConvergence(o: ConvergenceOptions): Promise<ConvergenceReport> {
  const names = Array.from({ length: o.services }, (_, i) => `cv-${i}`);
  const master = new Rand(rng(o.seed));
  const w = new Writers(o, names, master);
  const [thinkMin, thinkMax] = o.thinkMs ?? [200, 900];
  o.log(
    `seed ${o.seed} (replay with TIDAL_CONVERGENCE_SEED=${o.seed}); ${o.services} Services, ${o.writers} writers, ` +
      (o.changes !== undefined ? `${o.changes} changes` : `${o.writeMs / 1000}s of changes`),
  );

  // Create all Services, a few at a time.
  for (let i = 0; i < w.models.length; i += 10) {
    await Promise.all(
      w.models.slice(i, i + 10).map(async (m) => {
        await w.create(m);
        w.lastChange.set(m.name, Date.now());
      }),
    );
  }
  if (o.notBefore && Date.now() < o.notBefore) await sleep(o.notBefore - Date.now());

  // Concurrent writers, each with its own stream of choices derived from the seed.
  const writeEnd = Date.now() + o.writeMs;
  let started = 0;
  const more = () => (o.changes !== undefined ? started < o.changes : Date.now() < writeEnd);
  o.onWritesStarted?.();
  await Promise.all(
    Array.from({ length: o.writers }, async (_, k) => {
      const r = new Rand(rng(o.seed * 31 + k + 1));
      while (more()) {
        started += 1;
        await w.step(r);
        await sleep(thinkMin + r.int(thinkMax - thinkMin + 1));
      }
    }),
  );
  const lastOverall = Math.max(...w.lastChange.values());
  o.log(`writes done: ${j(w.ops)}`);
  await o.onWritesDone?.();

  // Poll until everything converged or the bound passed. A Service counts as converged at the first snapshot
  // (taken after its last change) in which all its checks pass; the final snapshot must pass for all at once.
  const convergedAt = new Map<string, number>();
  const lastProblems = new Map<string, string[]>();
  const all = [...names, '(orphans)'];
  const check = (s: Snapshot, n: string) => (n === '(orphans)' ? checkOrphans(s) : checkService(s, n, o));
  const deadline = lastOverall + o.convergeTimeoutMs;
  for (;;) {
    const s = await snapshot(o.kube, o.namespace, o.controlPlane);
    for (const n of all) {
      if (convergedAt.has(n)) continue;
      const problems = check(s, n);
      if (problems.length === 0) convergedAt.set(n, s.at);
      else lastProblems.set(n, problems);
    }
    if (convergedAt.size === all.length || Date.now() > deadline) break;
    await sleep(250);
  }
  // Stability: everything still holds in a fresh snapshot (no flapping back to a stale state).
  const final = await snapshot(o.kube, o.namespace, o.controlPlane);
  const failures: ConvergenceReport['failures'] = [];
  for (const n of all) {
    const problems = convergedAt.has(n) ? check(final, n) : (lastProblems.get(n) ?? ['never checked']);
    const last = `last change: ${w.lastOp.get(n) ?? 'create'} at ${new Date(w.lastChange.get(n) ?? lastOverall).toISOString()}`;
    if (problems.length)
      failures.push({ name: n, problems: [last, ...(convergedAt.has(n) ? ['regressed after converging:', ...problems] : problems)] });
  }
  const times = all
    .filter((n) => convergedAt.has(n))
    .map((n) => Math.max(0, convergedAt.get(n)! - (w.lastChange.get(n) ?? lastOverall)))
    .sort((a, b) => a - b);
  const report: ConvergenceReport = {
    seed: o.seed,
    operations: w.ops,
    times,
    p50: pct(times, 50),
    p99: pct(times, 99),
    max: times.at(-1) ?? NaN,
    failures,
  };
  o.log(
    `seed ${o.seed}: ${convergedAt.size}/${all.length} converged; last change → converged p50 ${report.p50} ms, p99 ${report.p99} ms, max ${report.max} ms`,
  );
  const slowest = names
    .filter((n) => convergedAt.has(n))
    .map((n) => ({ n, ms: convergedAt.get(n)! - (w.lastChange.get(n) ?? lastOverall) }))
    .sort((a, b) => b.ms - a.ms)
    .slice(0, 3);
  o.log(
    `slowest: ${slowest.map(({ n, ms }) => `${n} ${ms} ms after ${w.lastOp.get(n) ?? 'create'} at ${new Date(w.lastChange.get(n) ?? 0).toISOString()}`).join('; ')}`,
  );
  for (const f of failures) o.log(`NOT CONVERGED ${f.name}:\n    ${f.problems.join('\n    ')}`);
  return report;
}

export const NodeResource: ResourceType = { group: '', version: 'v1', kind: 'Node', plural: 'nodes', namespaced: false };

/**
 * More kwok nodes (110 pods each, as dev/stack.ts makes them): hakn keeps every Revision's Deployment at its
 * min-scale, so the pods grow with the Revisions the writers cause, beyond the stack's two nodes. Returns their names.
 */
export async function addKwokNodes(kube: KubeClient, count: number, prefix = 'kwok-conv'): Promise<string[]> {
  const names = Array.from({ length: count }, (_, i) => `${prefix}-${i}`);
  for (const name of names) {
    await kube.apply(NodeResource, kwokNode(name));
  }
  return names;
}

/** Deletes every Service of the run and waits until their children are gone (the Route finalizer needs the controller). */
export async function cleanUp(kube: KubeClient, kubeconfig: string, ns: string, timeoutMs = 120_000): Promise<void> {
  for (const s of (await kube.list<Service>(Resources.Service, ns)).items)
    await deleteObject(kubeconfig, Resources.Service, ns, s.metadata.name ?? '').catch(() => false);
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const left = (await kube.list(Resources.Route, ns)).items.length + (await kube.list(Resources.Revision, ns)).items.length;
    if (left === 0) return;
    await sleep(500);
  }
}
