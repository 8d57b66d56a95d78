// The watcher: one informer per watched kind, each change mapped to pokes for the entity workflows it affects — the
// workflows that reconcile the objects concerned (ADR 0005), resolved through the informers' caches.
import type { Logger } from 'pino';
import type { Counter, Registry } from 'prom-client';
import { counterIn } from './metrics.js';
import { Resources, SERVING_GROUP, type ResourceType } from '../api/kinds.js';
import { entityWorkflowId, type EntityKind, type Poke, type PokeReason } from '../api/entity.js';
import { contentToken, contentTokens, type TokenView } from '../api/content-token.js';
import { Annotations, Labels } from '../api/labels.js';
import { isIstioIngress, NetworkingAnnotations } from '../api/networking.js';
import { DomainMappingLabels } from '../api/domainmapping.js';
import { deploymentName, kingressName } from '../resources/names.js';
import { ingressVirtualServiceName, meshVirtualServiceName } from '../resources/istio/names.js';
import { podLikeOf, readinessOf, type PodLike } from '../api/lifecycle/revision.js';
import { resourceVersionNumber, type KubeObject, type ObjectKey } from '../api/meta.js';
import type { KubeClient } from '../kube/client.js';
import type { MetadataCache } from '../activities/deps.js';
import { Informer, type ChangeType } from './informer.js';
import { ListGate } from './list-gate.js';
import { reconciledByOwner } from '../api/delegation.js';
import { pokeTargets, reconcilerOf, type EntityLookup, type PokeTarget, type WatchedKind } from './poke-map.js';
import { RouteIndex } from './route-index.js';
import { CacheWaiters } from './cache-waiters.js';
import { DomainMappingIndex } from './domainmapping-index.js';
import type { Poker } from './poker.js';
import { formatBookmark, writtenAfter, type WatchBookmark } from './bookmark.js';

export interface WatcherOptions {
  /** Entity workflows this build runs; pokes for other kinds are not sent. */
  enabled: ReadonlySet<EntityKind>;
  /** Kinds to follow. */
  watched: readonly WatchedKind[];
  relistMs: number;
  maxBackoffMs: number;
  /** List pages in flight at once across the informers (list-gate.ts; default 2). */
  listPagesInFlight?: number;
  /** What list pages wait for, a bounded while (list-gate.ts `yieldTo`): the steps running in this process. */
  listsYieldTo?: (maxMs: number) => Promise<void>;
  /**
   * Told of every object a watch delivers (added or updated) of `kinds`, before anyone waiting in the cache is woken:
   * the steps' memory of recent objects (kube/recent-objects.ts `delivered`).
   */
  delivered?: { kinds: readonly WatchedKind[]; to: (type: ResourceType, obj: KubeObject) => void };
  /**
   * A new leader's start-up list (epoch ms): an object some manager wrote at or after this time is poked in the
   * first lane even when its status looks settled — it may have changed during the handover, when no one watched.
   */
  recentSince?: number;
  /**
   * The watch bookmark the previous leader left on the Lease (watcher/bookmark.ts, ADR 0024): the start-up list pokes
   * only the objects written after their kind's bookmark. Absent: every object is poked.
   */
  bookmark?: WatchBookmark;
  /**
   * Stand by (a replica that does not lead): list and watch as a leader would, poke nothing, and hold each object's
   * latest change until `lead` gives the bookmark and the time above; `prune` forgets what the leader delivered
   * meanwhile. Without it the watcher leads from the start, from `bookmark` and `recentSince`.
   */
  standby?: boolean;
}

/**
 * How each kind is watched. `source` names the kind in pokes when it is not the kind's own name: both kinds of
 * Kubernetes Service are `KubeService`, as activities name what they read (api/content-token.ts `sourceOf`), so a
 * workflow compares a poke with what its pass saw and wrote of that very object.
 */
const watchedTypes: Record<WatchedKind, { type: ResourceType; labelSelector?: string; status?: (o: KubeObject) => unknown; source?: WatchedKind }> = {
  Service: { type: Resources.Service },
  Configuration: { type: Resources.Configuration },
  // Revisions keep their readiness: a Service's pass that made one waits there for it (ADR 0012, "Later").
  Revision: { type: Resources.Revision, status: (o) => readinessOf(o) },
  Route: { type: Resources.Route },
  Ingress: { type: Resources.KIngress },
  // Only the objects Tidal made for Revisions.
  Deployment: { type: Resources.Deployment, labelSelector: 'serving.knative.dev/revision' },
  HorizontalPodAutoscaler: { type: Resources.HorizontalPodAutoscaler, labelSelector: 'serving.knative.dev/revision' },
  PodDisruptionBudget: { type: Resources.PodDisruptionBudget, labelSelector: 'serving.knative.dev/revision' },
  // Pods keep what a Revision's status reads of them: its status step counts their readiness from here (ADR 0012).
  Pod: { type: Resources.Pod, labelSelector: 'serving.knative.dev/revision', status: (o) => podLikeOf(o as PodLike) },
  // Placeholder Services: an edit or deletion by hand is repaired by the Route.
  KubeService: { type: Resources.KubeService, labelSelector: 'serving.knative.dev/route' },
  // A Revision's ClusterIP Service: one deleted (by hand, or an old incarnation's by the garbage collector while a
  // Revision of the same name found it in its way) is made again by the Revision.
  RevisionService: { type: Resources.KubeService, labelSelector: 'serving.knative.dev/revision', source: 'KubeService' },
  // A KIngress's VirtualServices (class istio): one edited or deleted by hand is programmed again.
  VirtualService: { type: Resources.VirtualService, labelSelector: 'networking.internal.knative.dev/ingress' },
  DomainMapping: { type: Resources.DomainMapping },
  ClusterDomainClaim: { type: Resources.ClusterDomainClaim },
  // A Route's or DomainMapping's Certificate: its status change pokes its owner.
  Certificate: { type: Resources.Certificate },
  // cert-manager's Certificates of Knative Certificates of its class (they carry the certificate-type label).
  CertManagerCertificate: { type: Resources.CertManagerCertificate, labelSelector: 'networking.knative.dev/certificate-type' },
};

/** A child an owner has under a name made of its own (`pokeMissingChildren`); `when`: only for such owners. */
interface Child {
  kind: WatchedKind;
  name: (owner: string) => string;
  when?: (owner: KubeObject) => boolean;
}

/**
 * Which VirtualServices a KIngress of Tidal's class has (resources/istio/virtual-service.ts `makeVirtualServices`):
 * the gateways' one for any rule, which a Route's and a DomainMapping's KIngress always have; the mesh's for cluster-local
 * hosts, which only a Route's has (its `<route>.<ns>.svc.<cluster domain>` rule). A KIngress made by hand is left out.
 */
function hasIngressVirtualService(ing: KubeObject): boolean {
  const labels = ing.metadata.labels ?? {};
  return isIstioIngress(ing) && (labels[Labels.route] !== undefined || labels[DomainMappingLabels.uid] !== undefined);
}
function hasMeshVirtualService(ing: KubeObject): boolean {
  return isIstioIngress(ing) && ing.metadata.labels?.[Labels.route] !== undefined;
}

/** The cached objects of `namespace` with every one of `labels`. */
function matching(informer: Informer, namespace: string, labels: Readonly<Record<string, string>>): KubeObject[] {
  const wanted = Object.entries(labels);
  return informer.list().filter((o) => o.metadata.namespace === namespace && wanted.every(([k, v]) => o.metadata.labels?.[k] === v));
}

/** How long an activity waits for a cache to reflect its own last write before it lists from the API server. */
const cacheCatchUpMs = 2000;
/** Held start-up changes poked per turn of the event loop (a few tens of ms of content tokens). */
const RELEASE_BATCH = 500;

const reasonOf: Record<ChangeType, PokeReason> = { added: 'added', updated: 'updated', deleted: 'deleted' };

export class Watcher {
  readonly informers: Informer[];
  private readonly byKind = new Map<WatchedKind, Informer>();
  /** Each informer's label selector (`watchedTypes`: labels that must exist), if any. */
  private readonly selectors = new Map<Informer, string | undefined>();
  /**
   * The informers whose caches say which workflow reconciles an object (reconcilerOf): the kinds reconciled by an
   * owner's pass and their owners' kinds (ADR 0005). Pods, Deployments and the like resolve to their Revision by
   * their own metadata, so their lists hold nothing back.
   */
  private readonly resolvers: Informer[];
  private readonly events: Counter;
  private readonly restarts: Counter;
  private readonly routeIndex = new RouteIndex();
  /** Steps waiting for the caches to show something (`cache.until`). */
  private readonly waiters = new CacheWaiters();
  private readonly mappingIndex = new DomainMappingIndex();
  private closed = false;

  constructor(
    kube: KubeClient,
    private readonly poker: Poker,
    private readonly opts: WatcherOptions,
    log: Logger,
    registry: Registry,
  ) {
    this.events = counterIn(registry, {
      name: 'tidal_watch_events_total',
      help: 'Changes seen by the watcher',
      labelNames: ['kind', 'type'],
    });
    this.restarts = counterIn(registry, {
      name: 'tidal_watch_restarts_total',
      help: 'Watch restarts',
      labelNames: ['kind', 'reason'],
    });
    // The kinds whose caches resolve owners list first: the start-up list's changes wait for them (`held`).
    const resolving = new Set<string>(Object.entries(reconciledByOwner).flatMap(([child, owners]) => [child, ...(owners ?? [])]));
    const gate = new ListGate(opts.listPagesInFlight ?? 2, opts.listsYieldTo);
    this.informers = opts.watched.map((kind) => {
      const { type, labelSelector, status } = watchedTypes[kind];
      const informer = new Informer(
        kube,
        type,
        {
          ...(labelSelector ? { labelSelector } : {}),
          relistMs: opts.relistMs,
          maxBackoffMs: opts.maxBackoffMs,
          pages: { gate, priority: resolving.has(kind) ? 1 : 0 },
          // The watcher asks its caches only what exists (sweeps, owners gone) and whom a deletion concerns.
          // A KIngress's class says whether Tidal programs its VirtualServices (pokeMissingChildren).
          slim: { annotations: [Annotations.routes, NetworkingAnnotations.ingressClass], ...(status ? { status } : {}) },
          onChange: (change, obj, listed) => this.onChange(kind, change, obj, listed),
          onRestart: (reason) => this.restarts.inc({ kind, reason }),
        },
        log.child({ informer: kind }),
      );
      this.byKind.set(kind, informer);
      this.selectors.set(informer, labelSelector);
      return informer;
    });
    this.resolvers = opts.watched.filter((k) => resolving.has(k)).map((k) => this.byKind.get(k)!);
    this.leading = opts.standby !== true;
    this.bookmark = opts.bookmark;
    this.recentSince = opts.recentSince;
  }

  /** Poking changes (after the start-up list's held ones); false while standing by, when every change is held. */
  private leading: boolean;
  /** What the start-up list is judged by (WatcherOptions), given by `lead` to a watcher that stood by. */
  private bookmark: WatchBookmark | undefined;
  private recentSince: number | undefined;
  private started = false;
  /** The changes `lead` releases go to runs the previous leader's process may have run last (`unsticking`). */
  private releasingAfterStandby = false;
  /** A `prune` under way, a batch per turn of the event loop. */
  private pruning = false;
  /** Changes held so far, and the bookmark and that count at the last prune: a standby reads the Lease twice a second. */
  private holds = 0;
  private prunedAt: { bookmark: string; holds: number } | undefined;

  start(): void {
    this.started = true;
    for (const i of this.informers) i.start();
    if (this.leading) this.resumeFromBookmark();
    void Promise.all(this.resolvers.map((i) => i.synced)).then(() => this.releaseHeld());
  }

  /**
   * A watcher that stood by starts to lead (ADR 0024, "Followers stand by"): the changes it held are judged against
   * the bookmark the previous leader left — those written after it poked, the others remembered as delivered, as a
   * start-up list's are — and from now on every change is poked. A kind still listing resumes from the bookmark.
   */
  lead(bookmark: WatchBookmark | undefined, recentSince: number | undefined): void {
    if (this.leading) return;
    this.leading = true;
    this.bookmark = bookmark;
    this.recentSince = recentSince;
    this.releasingAfterStandby = bookmark !== undefined;
    if (this.started) this.resumeFromBookmark();
    void this.releaseHeld();
  }

  /**
   * Standing by: forgets the held changes at or below the leader's bookmark — the leader saw them and delivered their
   * pokes — and remembers what their pokes would have announced, as a start-up list does for the objects unchanged
   * since the bookmark. What is left is what a takeover must poke. A batch per turn of the event loop.
   */
  prune(bookmark: WatchBookmark | undefined): void {
    // Whom a change's pokes go to is known once the owners' kinds have listed (`held`).
    if (this.leading || !bookmark || !this.held || this.pruning || !this.resolvers.every((i) => i.hasSynced)) return;
    // Nothing held since the last prune against the same bookmark: it would find nothing more.
    const at = { bookmark: formatBookmark(bookmark), holds: this.holds };
    if (this.prunedAt?.bookmark === at.bookmark && this.prunedAt.holds === at.holds) return;
    this.prunedAt = at;
    const held = this.held;
    const entries = [...held];
    let next = 0;
    this.pruning = true;
    const batch = () => {
      if (this.leading || this.closed) return void (this.pruning = false);
      for (const end = Math.min(entries.length, next + RELEASE_BATCH); next < end; next++) {
        const [key, h] = entries[next]!;
        if (held.get(key) !== h || !deliveredBelow(bookmark, h)) continue;
        held.delete(key);
        if (h.firstList) this.startUp.unchanged += 1;
        if (h.change !== 'deleted') this.pokeFor(h.kind, h.change, h.obj, false, h.listed, true, h.tokens, h.firstList);
      }
      if (next < entries.length) return void setImmediate(batch);
      this.pruning = false;
    };
    batch();
  }

  /** Every kind the bookmark names resumes from it while its list runs (informer.ts `resume`). */
  private resumeFromBookmark(): void {
    for (const [kind, informer] of this.byKind) {
      const from = this.bookmark?.[kind];
      if (from !== undefined) informer.resume({ from, onChange: (change, obj) => this.onResumed(kind, change, obj) });
    }
  }

  /**
   * Resolves once every informer has listed, after the start-up list's held changes have been poked; standing by, once
   * every informer has listed (nothing is poked until `lead`).
   */
  async synced(): Promise<void> {
    await Promise.all(this.informers.map((i) => i.synced));
    this.resumed.clear();
    await this.releaseHeld();
  }

  get hasSynced(): boolean {
    return this.informers.every((i) => i.hasSynced);
  }

  /**
   * The start-up list's objects: poked, and left alone as unchanged since the bookmark; and the changes since the
   * bookmark poked before their kind had listed (`resumed`).
   */
  readonly startUp = { poked: 0, unchanged: 0, resumed: 0 };

  /** The changes held while standing by that were written after the bookmark: poked when this watcher began to lead. */
  heldWhileStandingBy = 0;

  /**
   * Each kind's newest version this watcher has seen and handed to the poker, once every kind has listed and the
   * held changes went out; undefined before. With an empty poker, the watch bookmark may move up to it.
   */
  progress(): Record<string, string> | undefined {
    if (!this.leading || !this.hasSynced || this.held !== undefined) return undefined;
    return Object.fromEntries([...this.byKind].map(([kind, informer]) => [kind, informer.newestVersion]));
  }

  async close(): Promise<void> {
    this.closed = true;
    this.waiters.close();
    await Promise.all(this.informers.map((i) => i.close()));
  }

  /**
   * Pokes every known object of `kinds` (a config map they read changed: Knative's global resync). `force` skips
   * the sender-side de-duplication: the sweep uses it so that a workflow that is gone gets started again.
   */
  pokeAll(kinds: readonly EntityKind[], poke: Poke, opts: { force?: boolean; catchUp?: boolean } = {}): number {
    const objects = kinds.flatMap((kind) => (this.opts.enabled.has(kind) ? (this.byKind.get(kind)?.list() ?? []).map((obj) => ({ kind, obj })) : []));
    return this.pokeReconcilers(objects, poke, opts);
  }

  /**
   * Pokes the reconcilers of the Configurations with more than one Revision (config-gc changed): the garbage collector
   * never takes a Configuration's latest Revision, so with one Revision or none no setting of config-gc changes what it
   * does, and a pass would find nothing to do. Every Configuration when Revisions are not watched here.
   */
  pokeRevisionCollectors(poke: Poke): number {
    const revisions = this.byKind.get('Revision');
    if (!revisions?.hasSynced) return this.pokeAll(['Service', 'Configuration'], poke);
    const counts = new Map<string, number>();
    for (const r of revisions.list()) {
      const key = `${r.metadata.namespace ?? ''}/${r.metadata.labels?.[Labels.configuration] ?? ''}`;
      counts.set(key, (counts.get(key) ?? 0) + 1);
    }
    const configurations = (this.opts.enabled.has('Configuration') ? (this.byKind.get('Configuration')?.list() ?? []) : []).filter(
      (c) => (counts.get(`${c.metadata.namespace ?? ''}/${c.metadata.name ?? ''}`) ?? 0) > 1,
    );
    return this.pokeReconcilers(
      configurations.map((obj) => ({ kind: 'Configuration' as const, obj })),
      poke,
      {},
    );
  }

  /**
   * Pokes the workflows that reconcile the given objects, those this watcher knows (an object gone needs no run):
   * the runs that failed (watcher/failed-runs.ts). Returns how many workflows were poked.
   */
  pokeObjects(targets: readonly { kind: EntityKind; key: ObjectKey }[], poke: Poke, opts: { force?: boolean; catchUp?: boolean } = {}): number {
    const objects = targets.flatMap(({ kind, key }) => {
      const obj = this.opts.enabled.has(kind) ? this.byKind.get(kind)?.get(key.namespace, key.name) : undefined;
      return obj ? [{ kind, obj }] : [];
    });
    return this.pokeReconcilers(objects, poke, opts);
  }

  /** Each object's reconciling workflow once: a Service's Configuration and Route are the Service's (ADR 0005). */
  private pokeReconcilers(
    objects: readonly { kind: EntityKind; obj: KubeObject }[],
    poke: Poke,
    opts: { force?: boolean; catchUp?: boolean },
  ): number {
    const seen = new Set<string>();
    for (const { kind, obj } of objects) {
      const own = { kind, key: { namespace: obj.metadata.namespace ?? '', name: obj.metadata.name ?? '' } };
      const target = reconcilerOf(own, obj, this.lookup, this.opts.enabled);
      const id = entityWorkflowId(target.kind, target.key);
      if (seen.has(id)) continue;
      seen.add(id);
      this.poker.poke(target, poke, opts);
    }
    return seen.size;
  }

  /**
   * After a term's start-up list: a child deleted while no one watched (during a hand-over) is simply absent from a
   * fresh list, so no event tells its owner. Every owner whose same-named child is missing gets a `dependency` poke
   * from that child's source (no token: its workflow passes unless it, too, saw the child absent). Returns the count.
   */
  pokeMissingChildren(): number {
    const has = (kind: WatchedKind, ns: string, name: string) => this.byKind.get(kind)?.get(ns, name) !== undefined;
    const watched = (kind: WatchedKind) => this.byKind.get(kind)?.hasSynced === true;
    const children: Partial<Record<WatchedKind, Child[]>> = {
      Service: [
        { kind: 'Configuration', name: (n) => n },
        { kind: 'Route', name: (n) => n },
      ],
      Route: [
        { kind: 'Ingress', name: kingressName },
        { kind: 'KubeService', name: (n) => n },
      ],
      Revision: [
        { kind: 'Deployment', name: deploymentName },
        { kind: 'RevisionService', name: (n) => n },
      ],
      DomainMapping: [{ kind: 'Ingress', name: kingressName }],
      // The VirtualServices Tidal programs for a KIngress of its class that a Route or a DomainMapping made.
      Ingress: [
        { kind: 'VirtualService', name: meshVirtualServiceName, when: hasMeshVirtualService },
        { kind: 'VirtualService', name: ingressVirtualServiceName, when: hasIngressVirtualService },
      ],
    };
    let n = 0;
    for (const [ownerKind, kids] of Object.entries(children) as [WatchedKind, Child[]][]) {
      const informer = this.byKind.get(ownerKind);
      if (!informer?.hasSynced || !this.opts.enabled.has(ownerKind as EntityKind)) continue;
      for (const owner of informer.list()) {
        if (owner.metadata.deletionTimestamp) continue;
        const ns = owner.metadata.namespace ?? '';
        const name = owner.metadata.name ?? '';
        for (const kid of kids) {
          if (!watched(kid.kind) || has(kid.kind, ns, kid.name(name)) || (kid.when && !kid.when(owner))) continue;
          const own = { kind: ownerKind as EntityKind, key: { namespace: ns, name } };
          this.poker.poke(reconcilerOf(own, owner, this.lookup, this.opts.enabled), {
            source: sourceName(kid.kind, ns, kid.name(name)),
            reason: 'dependency',
          });
          n += 1;
        }
      }
    }
    return n;
  }

  /** The caches as activities read them (Knative's listers), for the kinds this watcher follows. */
  readonly cache: MetadataCache = {
    list: async (type, namespace, opts = {}) => {
      const informer = this.syncedInformerOf(type, opts.labels ?? {});
      if (!informer) return undefined;
      if (opts.after !== undefined && !(await informer.caughtUp(opts.after, cacheCatchUpMs))) return undefined;
      return matching(informer, namespace, opts.labels ?? {});
    },
    until: (type, namespace, labels, test, timeoutMs) => {
      const informer = this.syncedInformerOf(type, labels);
      if (!informer) return Promise.resolve(false);
      const ready = () => test(matching(informer, namespace, labels));
      return ready() ? Promise.resolve(true) : this.waiters.add(type, namespace, labels, ready, timeoutMs);
    },
    versionOf: (type, namespace, name) => {
      const informers = this.informersOf(type);
      if (informers.length === 0 || !informers.every((i) => i.hasSynced)) return undefined;
      // Of a type watched under two selectors (Kubernetes Services): the version of whichever holds the object, and
      // for one neither holds the newest any has seen — absent, it counts as gone once any cache has gone past it.
      const holder = informers.find((i) => i.get(namespace, name) !== undefined);
      const newest = informers
        .map((i) => i.newestVersion)
        .reduce((a, b) => ((resourceVersionNumber(b) ?? 0n) > (resourceVersionNumber(a) ?? 0n) ? b : a));
      return { resourceVersion: holder?.get(namespace, name)?.metadata.resourceVersion, newest };
    },
  };

  private informersOf(type: ResourceType): Informer[] {
    return this.informers.filter((i) => i.type.group === type.group && i.type.kind === type.kind);
  }

  /**
   * This watcher's informer of `type` whose selection holds every object with `labels`, once it has listed: of a type
   * watched under two label selectors, the one whose label `labels` names.
   */
  private syncedInformerOf(type: ResourceType, labels: Readonly<Record<string, string>>): Informer | undefined {
    const informers = this.informersOf(type);
    const informer =
      informers.length === 1
        ? informers[0]
        : informers.find((i) =>
            this.selectors
              .get(i)
              ?.split(',')
              .every((l) => l in labels),
          );
    return informer?.hasSynced ? informer : undefined;
  }

  /** The DomainMappings a change of `obj` concerns: those referencing a Knative Service or Route, or mapping a claim's name. */
  private mappingsOf(kind: WatchedKind, obj: KubeObject): ObjectKey[] {
    if (kind === 'Service' || kind === 'Route') return this.mappingIndex.mappingsOf(SERVING_GROUP, kind, obj);
    if (kind === 'ClusterDomainClaim') return this.mappingIndex.mappingsNamed(obj.metadata.name ?? '');
    return [];
  }

  /**
   * The informers' caches by entity kind (metadata and owners only), for resolving who reconciles what; before a
   * kind has listed, the objects of it that changed since the bookmark (`onResumed`).
   */
  private readonly lookup: EntityLookup = (kind, key) => {
    const informer = this.byKind.get(kind);
    if (informer?.hasSynced !== false) return informer?.get(key.namespace, key.name);
    return this.resumed.get(`${kind}/${key.namespace}/${key.name}`);
  };

  /** The objects of kinds not listed yet that changed since the bookmark, by `<kind>/<namespace>/<name>` (gone: absent). */
  private readonly resumed = new Map<string, KubeObject>();

  /**
   * A change since the watch bookmark, reported before its kind has listed (informer.ts `resume`): poked at once,
   * resolved through what has listed and what changed. A change the caches cannot resolve yet may poke a child's own
   * workflow instead of its owner's, which looks once and ends; the list pokes the owner again, as it does every
   * object changed since the bookmark, and the poker drops what its targets were already told.
   */
  private onResumed(kind: WatchedKind, change: ChangeType, obj: KubeObject): void {
    if (this.byKind.get(kind)?.hasSynced !== false) return;
    this.events.inc({ kind, type: change });
    const key = `${kind}/${obj.metadata.namespace ?? ''}/${obj.metadata.name ?? ''}`;
    if (change === 'deleted') this.resumed.delete(key);
    else this.resumed.set(key, obj);
    this.startUp.resumed += 1;
    this.pokeFor(kind, change, obj, false, false);
    // What Tidal makes for a Service names it in a label. Before the Services and Routes have listed, the owner of a
    // changed child (a KIngress deleted) cannot be resolved through the caches, and the child's own workflow would only
    // look and end: the Service's workflow hears of it now, as it would from the list (pokeMissingChildren), not after.
    const service = obj.metadata.labels?.[Labels.service];
    const owner = { namespace: obj.metadata.namespace ?? '', name: service ?? '' };
    const servicesListed = this.byKind.get('Service')?.hasSynced !== false;
    if (service && kind !== 'Service' && this.opts.enabled.has('Service') && !servicesListed && !this.lookup('Service', owner))
      this.poker.poke(
        { kind: 'Service', key: owner },
        { source: sourceName(kind, owner.namespace, obj.metadata.name ?? ''), reason: 'dependency' },
        { unstick: true },
      );
  }

  /**
   * True when the target's own kind is watched, fully listed, and the target is not there: a child's event (say the
   * garbage collector deleting a Configuration) must not start a fresh workflow for an owner that is already gone.
   */
  private knownGone(target: PokeTarget): boolean {
    const informer = this.byKind.get(target.kind);
    return informer !== undefined && informer.hasSynced && informer.get(target.key.namespace, target.key.name) === undefined;
  }

  /**
   * The start-up list's changes, held until the caches that resolve owners have listed (then `undefined`) — and, while
   * standing by, every change until `lead` (one per object). Who
   * reconciles an object is resolved through them (reconcilerOf): a Revision listed before its Configuration and
   * Service would poke the Configuration's own workflow, which finds the object is its Service's and ends, and the
   * Service would never hear that its Revision turned Ready while no one watched (the 10-minute chaos run lost 12
   * so, across a leader's hand-overs). Controllers wait for their caches to sync before they work for the same
   * reason; a kind that cannot be listed (a permission missing) holds back nothing but the owners' kinds' pokes.
   */
  private held: Map<string, Held> | undefined = new Map();

  /** The release of the held changes under way, a batch per turn of the event loop. */
  private releasing: Promise<void> | undefined;

  /**
   * Pokes the held changes once the resolvers have listed and this watcher leads: `RELEASE_BATCH` at a time, yielding
   * between batches. Tens of thousands are held at scale (every Revision, Deployment and Pod listed before the
   * Services), and poking them in one go held the event loop for seconds: the Lease's renewals missed their deadline.
   * Changes that arrive meanwhile join the end of the queue, so none overtakes an older one of the same object.
   */
  private releaseHeld(): Promise<void> {
    if (!this.leading || !this.held || !this.resolvers.every((i) => i.hasSynced)) return this.releasing ?? Promise.resolve();
    return (this.releasing ??= new Promise<void>((resolve) => {
      const batch = () => {
        const held = this.held ?? new Map<string, Held>();
        let n = 0;
        // Deleted as they go: a change held meanwhile joins the end, behind the older ones.
        for (const [key, h] of held) {
          if (n++ >= RELEASE_BATCH) break;
          held.delete(key);
          this.release(h);
        }
        if (held.size > 0 && !this.closed) return void setImmediate(batch);
        this.held = undefined;
        this.releasingAfterStandby = false;
        resolve();
      };
      batch();
    }));
  }

  /** Pokes a held change; one held while standing by is judged now, by the bookmark and the time `lead` gave. */
  private release(h: Held): void {
    if (!h.standingBy) return this.pokeFor(h.kind, h.change, h.obj, h.catchUp, h.listed, h.remember, h.tokens, h.firstList);
    const unchanged = deliveredBelow(this.bookmark, h);
    if (h.firstList) this.startUp[unchanged ? 'unchanged' : 'poked'] += 1;
    if (unchanged) {
      if (h.change !== 'deleted') this.pokeFor(h.kind, h.change, h.obj, false, h.listed, true, h.tokens, h.firstList);
      return;
    }
    this.heldWhileStandingBy += 1;
    const recent = this.recentSince !== undefined && h.writtenAt !== undefined && h.writtenAt >= Math.floor(this.recentSince / 1000) * 1000;
    this.pokeFor(h.kind, h.change, h.obj, h.firstList && h.settled === true && !recent, h.listed, false, h.tokens, h.firstList);
  }

  private onChange(kind: WatchedKind, change: ChangeType, obj: KubeObject, listed = false): void {
    this.events.inc({ kind, type: change });
    if (kind === 'Route') this.routeIndex.update(obj, change === 'deleted');
    if (kind === 'DomainMapping') this.mappingIndex.update(obj, change === 'deleted');
    // The start-up list: an object no one changed since the previous leader delivered its kind's pokes is only
    // cached (ADR 0024). Its workflow acted on it, or holds the poke durably.
    const firstList = change === 'added' && this.byKind.get(kind)?.hasSynced === false;
    if (!this.leading) {
      // Standing by: whether a change is news to the workflows is known at `lead`, from the bookmark then.
      const settled = change !== 'deleted' && reportsItsGeneration(kind, obj);
      const writtenAt = lastWritten(obj);
      this.hold({
        kind,
        change,
        obj,
        catchUp: false,
        listed,
        firstList,
        standingBy: true,
        settled,
        ...(writtenAt !== undefined ? { writtenAt } : {}),
      });
      return;
    }
    if (firstList && this.bookmark !== undefined && !writtenAfter(this.bookmark, kind, obj)) {
      this.startUp.unchanged += 1;
      // What its pokes would announce is what its targets were told: the same content again is no news to them.
      if (this.held) this.hold({ kind, change, obj, catchUp: false, listed, firstList, remember: true });
      else this.pokeFor(kind, change, obj, false, listed, true, undefined, firstList);
      return;
    }
    // Steps woken by this change read it without a round trip. An object left alone above wakes none: its kind has
    // not listed yet, so no step waits in its cache.
    if (change !== 'deleted' && this.opts.delivered?.kinds.includes(kind)) this.opts.delivered.to(watchedTypes[kind].type, obj);
    this.waiters.changed(watchedTypes[kind].type, obj);
    if (firstList) this.startUp.poked += 1;
    // The start-up list: an object whose status already reports its generation is caught up after the ones that do
    // not (a Service changed while the controller was down goes first), in the poker's metered second lane.
    const catchUp =
      change === 'added' && this.byKind.get(kind)?.hasSynced === false && reportsItsGeneration(kind, obj) && !writtenSince(obj, this.recentSince);
    if (this.held) {
      this.hold({ kind, change, obj, catchUp, listed, firstList });
      void this.releaseHeld();
      return;
    }
    this.pokeFor(kind, change, obj, catchUp, listed, false, undefined, firstList);
  }

  /**
   * Holds a start-up change as its kind's cache keeps the object, with the tokens its pokes will carry: not the whole
   * object. At scale every Revision, Deployment and Pod is held until the owners' kinds have listed; whole, they took
   * hundreds of MiB and the collector's time of a heap growing with every page. Whom to poke is decided by metadata.
   */
  private hold(h: Held): void {
    const held = this.held;
    if (!held) return;
    this.holds += 1;
    const namespace = h.obj.metadata.namespace ?? '';
    const name = h.obj.metadata.name ?? '';
    const kept = h.change === 'deleted' ? undefined : this.byKind.get(h.kind)?.get(namespace, name);
    let next = kept ? { ...h, obj: kept, tokens: contentTokens(h.obj) } : h;
    // One change per object: pokes say that something changed, and a pass reads the object as it is then.
    const key = `${h.kind}/${namespace}/${name}`;
    const before = held.get(key);
    if (before) {
      held.delete(key);
      next = laterHeld(before, next);
    }
    held.set(key, next);
  }

  /**
   * `listed`: a list found the change (informer.ts), so versions in between went by unseen — among them, maybe, the
   * target's own write that moved the object away from what was last delivered: such a poke is sent even when its
   * content equals the last one delivered from that source (`fresh`). Whatever list found it (`firstList` too), it
   * is never taken for the echo of the target's own write: that write may have returned changes of others it
   * collapsed with (poker.ts `listed`).
   */
  private pokeFor(
    kind: WatchedKind,
    change: ChangeType,
    obj: KubeObject,
    catchUp: boolean,
    listed: boolean,
    rememberOnly = false,
    tokens?: Record<TokenView, string>,
    firstList = false,
  ): void {
    const source = sourceName(kind, obj.metadata.namespace ?? '', obj.metadata.name ?? '');
    const base: Poke = {
      source,
      reason: reasonOf[change],
      ...(obj.metadata.resourceVersion ? { resourceVersion: obj.metadata.resourceVersion } : {}),
      ...(obj.metadata.generation !== undefined ? { generation: obj.metadata.generation } : {}),
    };
    // Tokens are computed at most once per view and event: the object's own workflow ignores its status.
    let selfToken: string | undefined;
    let depToken: string | undefined;
    const routes = kind === 'Configuration' || kind === 'Revision' ? this.routeIndex.routesFor(kind, obj, Labels.configuration) : [];
    const targets = pokeTargets(kind, obj, this.opts.enabled, this.lookup, routes, this.mappingsOf(kind, obj));
    const opts = {
      ...(catchUp ? { catchUp } : {}),
      ...(listed ? { fresh: true } : {}),
      ...(listed || firstList ? { listed: true } : {}),
      ...(this.unsticking ? { unstick: true } : {}),
    };
    const how = Object.keys(opts).length > 0 ? opts : undefined;
    for (const target of targets) {
      const isSelf = entityWorkflowId(target.kind, target.key) === source;
      // A child's event must not start a fresh workflow for an owner that is already gone.
      if (!isSelf && this.knownGone(target)) continue;
      const token = isSelf
        ? (selfToken ??= tokens?.self ?? contentToken(obj, 'self'))
        : (depToken ??= tokens?.dependency ?? contentToken(obj, 'dependency'));
      // A child's deletion is a dependency change for its owner.
      const reason: PokeReason = !isSelf && change === 'deleted' ? 'dependency' : base.reason;
      const p: Poke = { ...base, reason, ...(change === 'deleted' ? {} : { token }) };
      if (rememberOnly) this.poker.remember(target, p);
      else if (how) this.poker.poke(target, p, how);
      else this.poker.poke(target, p);
    }
  }

  /**
   * A new term's pokes before its lists are done go to runs the previous leader's process may have run last: their
   * sticky queues are reset (poker.ts `unstick`), or a dead leader's runs would wait out the sticky timeout first.
   */
  private get unsticking(): boolean {
    return this.bookmark !== undefined && (!this.hasSynced || this.releasingAfterStandby);
  }
}

/**
 * A change held until the owners' kinds have listed, or while standing by (`Watcher.held`); `tokens`: of the whole
 * object, when `obj` is the cache's copy. `standingBy`: judged at `lead` — `settled` and `writtenAt` are what the
 * first lane needs to know of the whole object then.
 */
interface Held {
  kind: WatchedKind;
  change: ChangeType;
  obj: KubeObject;
  catchUp: boolean;
  listed: boolean;
  firstList: boolean;
  remember?: boolean;
  tokens?: Record<TokenView, string>;
  standingBy?: boolean;
  settled?: boolean;
  writtenAt?: number;
}

/**
 * True when the leader that kept `bookmark` saw the held change and delivered its pokes: its version is at or below
 * its kind's bookmark. Not a deletion a list found: the informer reports it with the version it last saw, not the
 * deletion's, which may be above the bookmark.
 */
function deliveredBelow(bookmark: WatchBookmark | undefined, h: Held): boolean {
  return !(h.change === 'deleted' && h.listed) && !writtenAfter(bookmark, h.kind, h.obj);
}

/**
 * An object's held change and a later one, as one: the later one's object and judgement, an addition still an
 * addition, and found by a list (versions went by unseen) if either was. Left alone only if both were.
 */
function laterHeld(before: Held, after: Held): Held {
  return {
    ...after,
    change: after.change !== 'deleted' && before.change === 'added' ? 'added' : after.change,
    listed: before.listed || after.listed,
    firstList: before.firstList || after.firstList,
    catchUp: before.catchUp && after.catchUp,
    remember: before.remember === true && after.remember === true,
  };
}

/** Knative's kinds carry a Ready condition and observedGeneration; the children Tidal makes are judged by their owners. */
const withKnativeStatus: ReadonlySet<WatchedKind> = new Set(['Service', 'Configuration', 'Revision', 'Route', 'Ingress', 'DomainMapping']);

/**
 * True when the object's status reports its current generation as settled (Ready True or False), or for a child
 * kind without Knative's status: nothing on it asks for work before the objects whose status lags.
 */
function reportsItsGeneration(kind: WatchedKind, obj: KubeObject): boolean {
  if (obj.metadata.deletionTimestamp) return false;
  if (!withKnativeStatus.has(kind)) return true;
  const status = (obj as { status?: { observedGeneration?: number; conditions?: { type: string; status: string }[] } }).status;
  const ready = status?.conditions?.find((c) => c.type === 'Ready')?.status;
  return status?.observedGeneration === obj.metadata.generation && (ready === 'True' || ready === 'False');
}

/** True when a field manager wrote the object at or after `since` (epoch ms; managedFields times have second precision). */
export function writtenSince(obj: KubeObject, since: number | undefined): boolean {
  const at = lastWritten(obj);
  return since !== undefined && at !== undefined && at >= Math.floor(since / 1000) * 1000;
}

/** When a field manager last wrote the object (epoch ms), by its managedFields. */
function lastWritten(obj: KubeObject): number | undefined {
  const times = ((obj.metadata as { managedFields?: { time?: string }[] }).managedFields ?? []).flatMap((f) => (f.time ? [Date.parse(f.time)] : []));
  return times.length > 0 ? Math.max(...times) : undefined;
}

/** `<Kind>/<namespace>/<name>`: the source of a poke about that object. */
function sourceName(kind: WatchedKind, namespace: string, name: string): string {
  return `${watchedTypes[kind].source ?? kind}/${namespace}/${name}`;
}
