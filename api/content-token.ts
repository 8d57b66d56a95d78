// Content tokens: short hashes of what a reconciler reads of an object, computed the same way by the watcher (on
// every watch event) and by activities (on every object they read or write). An entity workflow ignores a poke
// only when its token equals what its last pass acted on (ADR 0001, "no lost updates"). Pure: no I/O, no clocks.
import { SERVING_GROUP, type ResourceType } from './kinds.js';
import { Annotations, Labels } from './labels.js';
import type { KubeObject } from './meta.js';
import { isForeignModule } from './modules.js';
import { podLikeOf, type PodLike } from './lifecycle/revision.js';

/**
 * How a workflow looks at a source object: `self` for its own object (status is its own output and is left out),
 * `dependency` for any other object it reads (a child's or a referenced object's status is news).
 */
export type TokenView = 'self' | 'dependency';

/** The watched kinds whose changes poke workflows, by resource type: the `source` name in pokes. */
const sourceKinds: { group: string; plural: string; kind: string }[] = [
  { group: SERVING_GROUP, plural: 'services', kind: 'Service' },
  { group: SERVING_GROUP, plural: 'configurations', kind: 'Configuration' },
  { group: SERVING_GROUP, plural: 'revisions', kind: 'Revision' },
  { group: SERVING_GROUP, plural: 'routes', kind: 'Route' },
  { group: 'networking.internal.knative.dev', plural: 'ingresses', kind: 'Ingress' },
  { group: 'apps', plural: 'deployments', kind: 'Deployment' },
  { group: 'autoscaling', plural: 'horizontalpodautoscalers', kind: 'HorizontalPodAutoscaler' },
  { group: 'policy', plural: 'poddisruptionbudgets', kind: 'PodDisruptionBudget' },
  { group: '', plural: 'pods', kind: 'Pod' },
  { group: '', plural: 'services', kind: 'KubeService' },
  { group: 'networking.istio.io', plural: 'virtualservices', kind: 'VirtualService' },
  { group: SERVING_GROUP, plural: 'domainmappings', kind: 'DomainMapping' },
  { group: 'networking.internal.knative.dev', plural: 'clusterdomainclaims', kind: 'ClusterDomainClaim' },
  { group: 'networking.internal.knative.dev', plural: 'certificates', kind: 'Certificate' },
  { group: 'cert-manager.io', plural: 'certificates', kind: 'CertManagerCertificate' },
];

/** `<Kind>/<namespace>/<name>` as the watcher names the source of a poke; undefined for types it does not watch. */
export function sourceOf(type: Pick<ResourceType, 'group' | 'plural'>, obj: KubeObject): string | undefined {
  const k = sourceKinds.find((s) => s.group === type.group && s.plural === type.plural);
  return k ? `${k.kind}/${obj.metadata.namespace ?? ''}/${obj.metadata.name ?? ''}` : undefined;
}

/**
 * Bookkeeping another reconciler writes onto an object that no reader of it acts on: the Route labeler's routing
 * state on Revisions and Configurations, and the Deployment controller's revision counter on a new Deployment.
 * Leaving them out keeps those writes from waking everyone (the counter would make a Revision's next pass a full one).
 */
const bookkeepingLabels = [Labels.routingState];
const bookkeepingAnnotations = [Annotations.routes, Annotations.routingStateModified, 'deployment.kubernetes.io/revision'];

function without(map: Record<string, string> | undefined, keys: readonly string[]): Record<string, string> | undefined {
  if (!map) return map;
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(map)) if (!keys.includes(k)) out[k] = v;
  return out;
}

/** The conditions a foreign module's operator writes on its Revisions (ADR 0009), without their times. */
const moduleConditionTypes = ['ResourcesAvailable', 'ContainerHealthy'];

/**
 * A foreign module's Revision: the conditions its operator writes are input to the Revision's own workflow (which
 * computes Ready from them), so they count as spec — unlike the status Tidal writes itself, whose echo is no news.
 */
function moduleInput(obj: KubeObject & { status?: unknown }): unknown {
  if (obj.kind !== 'Revision' || !isForeignModule(obj)) return undefined;
  const conditions = (obj.status as { conditions?: { type: string; status?: string; reason?: string; message?: string }[] } | undefined)?.conditions;
  return (conditions ?? [])
    .filter((c) => moduleConditionTypes.includes(c.type))
    .map((c) => ({ type: c.type, status: c.status, reason: c.reason, message: c.message }));
}

/**
 * A pod as its one reader, its Revision's status, sees it: which Revision's it is, whether it is on its way out, and
 * `podLikeOf` of its status. Nothing else of it — spec, node, IPs, start times — is read, so a change there is no
 * news. It is also all the watcher's cache keeps of a pod, so a pod read from the cache observes as one read whole.
 */
function podSpecPart(obj: KubeObject): unknown {
  const { name, namespace, uid, labels, deletionTimestamp } = obj.metadata;
  return { kind: obj.kind, metadata: { name, namespace, uid, labels: without(labels, bookkeepingLabels), deletionTimestamp } };
}

/** Everything of `obj` but its status and the metadata no reader acts on (a foreign Revision's module conditions in). */
function specPart(obj: KubeObject & { status?: unknown }): unknown {
  if (obj.kind === 'Pod') return podSpecPart(obj);
  const {
    resourceVersion: _rv,
    managedFields: _mf,
    labels,
    annotations,
    finalizers: _f,
    ...meta
  } = obj.metadata as KubeObject['metadata'] & {
    managedFields?: unknown;
    finalizers?: string[];
  };
  // Finalizers: a reconciler adds its own and acts only on deletionTimestamp, which stays in.
  const { metadata: _m, status: _s, ...rest } = obj;
  const module = moduleInput(obj);
  // A Revision turning `reserve` (or back) changes its own scale: news to its workflow, unlike active ↔ pending.
  const reserve = obj.kind === 'Revision' && labels?.[Labels.routingState] === 'reserve' ? { routingState: 'reserve' } : {};
  return {
    ...rest,
    metadata: { ...meta, labels: without(labels, bookkeepingLabels), annotations: without(annotations, bookkeepingAnnotations) },
    ...(module !== undefined ? { moduleConditions: module } : {}),
    ...reserve,
  };
}

/** What `JSON.stringify` escapes in a string: a quote, a backslash, a control character, a surrogate left alone. */
const NEEDS_ESCAPE = /["\\\u0000-\u001f\ud800-\udfff]/;
const QUOTE = 0x22;

/**
 * 64-bit FNV-1a (two 32-bit lanes with different offsets), fed text piece by piece: fast, and collisions are
 * negligible.
 */
class Fnv64 {
  private a = 0x811c9dc5;
  private b = 0xcbf29ce4;

  text(text: string): void {
    let { a, b } = this;
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i);
      a = Math.imul(a ^ c, 0x01000193);
      b = Math.imul(b ^ c, 0x01000193) ^ (a >>> 13);
    }
    this.a = a;
    this.b = b;
  }

  /** One UTF-16 code unit, as `text` feeds it. */
  private char(c: number): void {
    this.a = Math.imul(this.a ^ c, 0x01000193);
    this.b = Math.imul(this.b ^ c, 0x01000193) ^ (this.a >>> 13);
  }

  /** `JSON.stringify(s)`'s text; built only when the string has something to escape. */
  private quoted(s: string): void {
    if (NEEDS_ESCAPE.test(s)) return this.text(JSON.stringify(s));
    this.char(QUOTE);
    this.text(s);
    this.char(QUOTE);
  }

  /**
   * Feeds `stableStringify(value)`'s text without building it: a start-up list hashes every object it holds, and the
   * text of a Deployment or a pod is kilobytes of garbage per object. Keys and strings go in as they are unless JSON
   * escapes something in them.
   */
  stable(value: unknown): void {
    if (typeof value === 'string') {
      this.quoted(value);
    } else if (value === null || typeof value !== 'object') {
      this.text(JSON.stringify(value) ?? 'null');
    } else if (Array.isArray(value)) {
      this.char(0x5b); // [
      for (let i = 0; i < value.length; i++) {
        if (i > 0) this.char(0x2c); // ,
        if (i in value) this.stable(value[i]);
      }
      this.char(0x5d); // ]
    } else {
      const obj = value as Record<string, unknown>;
      const keys = Object.keys(obj).sort();
      let first = true;
      this.char(0x7b); // {
      for (const key of keys) {
        const v = obj[key];
        if (v === undefined || typeof v === 'function') continue;
        if (!first) this.char(0x2c); // ,
        first = false;
        this.quoted(key);
        this.char(0x3a); // :
        this.stable(v);
      }
      this.char(0x7d); // }
    }
  }

  digest(): string {
    return (this.a >>> 0).toString(16).padStart(8, '0') + (this.b >>> 0).toString(16).padStart(8, '0');
  }
}

/** 64-bit FNV-1a of `text`, as 16 hex digits. */
export function hash64(text: string): string {
  const h = new Fnv64();
  h.text(text);
  return h.digest();
}

/** `hash64(stableStringify(value))`, computed without the text. */
export function stableHash64(value: unknown): string {
  const h = new Fnv64();
  h.stable(value);
  return h.digest();
}

const specHash = (obj: KubeObject): string => stableHash64(specPart(obj));
/**
 * A Revision's status as its readers act on it: its Configuration, its Routes and the garbage collector read only
 * its readiness — Ready's status, whether it reports the current generation (`isRevisionReady`), and why it failed
 * (reason and message when Ready is False; rollouts quote them), whether its pods are up (Active True) — and
 * whether the labeler made it `reserve`. The
 * Revision's other conditions, Ready's reason while Unknown (ResolvingDigests, Deploying), its digests and replica
 * counts are its own workflow's business: leaving them out spares its Service a pass per step of a new Revision's
 * way to Ready.
 */
function revisionReadiness(obj: KubeObject & { status?: unknown }): unknown {
  const status = (obj.status ?? {}) as { observedGeneration?: number; conditions?: unknown };
  const conditions = Array.isArray(status.conditions)
    ? (status.conditions as ({ type?: string; status?: string; reason?: string; message?: string } | null)[])
    : [];
  const ready = conditions.find((c) => c?.type === 'Ready') ?? undefined;
  const reserve = obj.metadata.labels?.[Labels.routingState] === 'reserve' ? { routingState: 'reserve' } : {};
  // Whether its pods are up (Active True): a Route waits for it before it sends the Revision traffic (traffic.ts).
  const active = conditions.find((c) => c?.type === 'Active')?.status === 'True' ? { active: true } : {};
  // No Ready condition yet (just created) reads as Unknown everywhere (`isRevisionReady`, traffic, rollouts), and while
  // Unknown nobody asks which generation it reports.
  if (ready === undefined || ready.status === 'Unknown') return { ready: 'Unknown', ...reserve, ...active };
  return {
    ready: ready.status,
    reason: ready.reason,
    message: ready.message,
    current: (status.observedGeneration ?? 0) === (obj.metadata.generation ?? 0),
    ...reserve,
    ...active,
  };
}

/**
 * The status as its readers act on it: condition timestamps are left out (no reader acts on them, and they move only
 * with a change that is in anyway); a Revision's is its readiness alone (`revisionReadiness`), a pod's what its
 * Revision reads of it (`podLikeOf`).
 */
function statusPart(obj: KubeObject & { status?: unknown }): unknown {
  if (obj.kind === 'Revision') return revisionReadiness(obj);
  if (obj.kind === 'Pod') return podLikeOf(obj as PodLike);
  const status = obj.status;
  if (status === null || typeof status !== 'object' || Array.isArray(status)) return status ?? null;
  const { conditions, ...rest } = status as Record<string, unknown>;
  const out: Record<string, unknown> = { ...rest };
  if (Array.isArray(conditions)) {
    out.conditions = conditions.map((c: unknown) => {
      if (c === null || typeof c !== 'object') return c;
      const { lastTransitionTime: _t, lastUpdateTime: _u, lastProbeTime: _p, lastHeartbeatTime: _h, ...kept } = c as Record<string, unknown>;
      return kept;
    });
  } else if (conditions !== undefined) out.conditions = conditions;
  return out;
}

const statusHash = (obj: KubeObject & { status?: unknown }): string => stableHash64(statusPart(obj));

/** A poke's token for `obj`: `s.<spec>` for the target's own object, `d.<spec>.<status>` for any other. */
export function contentToken(obj: KubeObject, view: TokenView): string {
  return view === 'self' ? `s.${specHash(obj)}` : `d.${specHash(obj)}.${statusHash(obj)}`;
}

/** Both views' tokens of `obj`, its spec hashed once: for a caller that keeps the tokens instead of the object. */
export function contentTokens(obj: KubeObject): Record<TokenView, string> {
  const spec = specHash(obj);
  return { self: `s.${spec}`, dependency: `d.${spec}.${statusHash(obj)}` };
}

/**
 * What a pass saw of one source object, as one string `<uid> <spec> <status>`; a part is `-` when the pass saw the
 * object change under it (it then covers no poke in that part). The uid tells a recreated object from the old one.
 */
export function observationOf(obj: KubeObject): string {
  return `${obj.metadata.uid ?? ''} ${specHash(obj)} ${statusHash(obj)}`;
}

/** The observation of an object that was not there: it covers no poke, and conflicts with any object that was. */
export const ABSENT = '- - -';

/**
 * Two observations of one object within a pass. Each part that differs becomes `-`, except the status part when
 * `laterStatusWins`: a later step that reads a newer status acted on it (status is read by the last step of a pass).
 */
export function mergeObservations(earlier: string, later: string, laterStatusWins: boolean): string {
  const [u1 = '', s1 = '-', t1 = '-'] = earlier.split(' ');
  const [u2 = '', s2 = '-', t2 = '-'] = later.split(' ');
  if (u1 !== u2) return `${u2} - -`;
  return `${u2} ${s1 === s2 ? s2 : '-'} ${laterStatusWins || t1 === t2 ? t2 : '-'}`;
}

/**
 * An own write's echo (ADR 0001): `<resourceVersion> <observation>` of exactly the version an apply or create returned.
 * A poke is that echo when it names the same resourceVersion and the observation covers its token.
 */
export function echoOf(resourceVersion: string, observation: string): string {
  return `${resourceVersion} ${observation}`;
}

/** The observation part of an echo. */
export function echoObservation(echo: string): string {
  return echo.slice(echo.indexOf(' ') + 1);
}

/** True when a poke (its resourceVersion and token) announces exactly the version of `echo`. */
export function echoCovers(echo: string, resourceVersion: string | undefined, token: string | undefined): boolean {
  return resourceVersion !== undefined && echo.slice(0, echo.indexOf(' ')) === resourceVersion && observationCovers(echoObservation(echo), token);
}

/** The uid in an observation; '' for an absent object. */
export function uidOfObservation(observation: string): string {
  const uid = observation.split(' ')[0] ?? '';
  return uid === '-' ? '' : uid;
}

/** True when a poke's token names content the observation covers. */
export function observationCovers(observation: string | undefined, token: string | undefined): boolean {
  if (observation === undefined || token === undefined) return false;
  const [, spec = '-', status = '-'] = observation.split(' ');
  const [view, tSpec, tStatus] = token.split('.');
  if (spec === '-' || spec !== tSpec) return false;
  if (view === 's') return true;
  return view === 'd' && status !== '-' && status === tStatus;
}

/**
 * True when a dependency's poke announces a change of its status alone: the last pass saw the same spec. An owner
 * whose children only changed status need not apply them again, only recompute its own status.
 */
export function statusOnlyChange(observation: string | undefined, token: string | undefined): boolean {
  if (observation === undefined || token === undefined) return false;
  const [, spec = '-'] = observation.split(' ');
  const [view, tSpec] = token.split('.');
  return view === 'd' && spec !== '-' && spec === tSpec;
}

/**
 * The observations of a status-only pass, as the entity loop keeps them: such a pass acted on statuses only, so a
 * source whose spec (or uid) it saw differ from what the pass before saw keeps no spec part — a poke announcing that
 * spec is news, and a full pass follows. Sources the pass itself applied (`applied`: a Route's step programming the
 * KIngress and placeholders it owns, ADR 0005) keep what it wrote: their new spec is Tidal's own, and its echo is not news.
 */
export function statusOnlyObservations(
  before: Readonly<Record<string, string>>,
  seen: Readonly<Record<string, string>>,
  applied: ReadonlySet<string> = new Set(),
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [source, obs] of Object.entries(seen)) {
    const [uid = '-', spec = '-', status = '-'] = obs.split(' ');
    const [bUid, bSpec] = (before[source] ?? '- -').split(' ');
    out[source] = applied.has(source) || (uid === bUid && spec === bSpec) ? obs : `${uid} - ${status}`;
  }
  return out;
}

/** The spec part of an observation (`-` when unknown). */
export function specOfObservation(observation: string | undefined): string {
  return observation?.split(' ')[1] ?? '-';
}

/**
 * True when resourceVersion `a` is newer than `b` (absent: older than any). Kubernetes resourceVersions are etcd
 * revisions, numbers that grow with every write in the cluster; one that is not a number is never newer.
 */
export function newerVersion(a: string | undefined, b: string | undefined): boolean {
  if (a === undefined || !/^[0-9]{1,30}$/.test(a)) return false;
  if (b === undefined || !/^[0-9]{1,30}$/.test(b)) return true;
  return a.length !== b.length ? a.length > b.length : a > b;
}
