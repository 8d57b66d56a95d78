// A Route whose KIngress is of another ingress class (Traefik's), on a real Temporal dev server with everything of
// Tidal's that lies between the API server and the Route's status: the watcher (over an in-memory API server whose
// writes come back as watch events), the poker, the Route workflow and its real activities. That class's controller
// writes the KIngress's status; Tidal never does, and the Route is Ready only once that status says Ready — a change
// the watcher hears of as a status-only update of the KIngress, which must wake the Route's workflow by itself (the
// resync here is an hour away).
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { Worker } from '@temporalio/worker';
import { pino } from 'pino';
import { Registry } from 'prom-client';
import { createActivities } from '../../activities/index.js';
import type { ActivityDeps, ConfigSource } from '../../activities/deps.js';
import type { KubeClient, WatchEvent } from '../../kube/client.js';
import { parseDomainConfig } from '../../api/config/domain.js';
import { defaultFeaturesConfig } from '../../api/config/features.js';
import { parseNetworkConfig } from '../../api/config/network.js';
import type { EntityKind } from '../../api/entity.js';
import { Resources, type ResourceType } from '../../api/kinds.js';
import type { KubeObject } from '../../api/meta.js';
import type { Ingress, IngressStatus } from '../../api/networking.js';
import type { Condition, Configuration, Revision, Route } from '../../api/serving.js';
import type { EntityState } from '../../workflows/entity.js';
import { Poker } from '../../watcher/poker.js';
import { Watcher } from '../../watcher/watcher.js';
import { revisionConfig } from '../fixtures/revision.js';
import { KubeFake } from '../unit/activities/kube-fake.js';
import { bundle, startWorker, testEnv, uniqueName } from '../harness/temporal.js';
import { eventually } from '../harness/wait.js';

const NS = 'default';
const TRAEFIK = 'traefik.ingress.networking.knative.dev';
const silent = pino({ level: 'silent' });

function valueOf<T>(p: { ok: true; value: T } | { ok: false; error: string }): T {
  if (!p.ok) throw new Error(p.error);
  return p.value;
}

/**
 * The in-memory API server with a watch: every write made through `client()` (Tidal's) and every `controllerWrites`
 * (another controller's) reaches the open watches of its type, as the API server's watch would deliver it.
 */
class WatchedCluster {
  readonly fake = new KubeFake();
  private readonly watches = new Map<string, ((ev: WatchEvent<KubeObject>) => void)[]>();

  private emit(type: ResourceType, ev: WatchEvent<KubeObject>['type'], obj: KubeObject | undefined): void {
    if (!obj) return;
    for (const send of this.watches.get(type.kind) ?? []) send({ type: ev, object: structuredClone(obj) });
  }

  /** Another writer's change of a stored object (`KubeFake.edit`), delivered to the watches. */
  controllerWrites<T extends KubeObject>(type: ResourceType, name: string, fn: (o: T) => void): T {
    this.fake.edit<T>(type, NS, name, fn);
    const obj = this.fake.get<T>(type, NS, name)!;
    this.emit(type, 'MODIFIED', obj);
    return obj;
  }

  client(): KubeClient {
    const base = this.fake.observingClient();
    const emitting =
      <A extends unknown[]>(ev: WatchEvent<KubeObject>['type'], call: (...args: A) => Promise<KubeObject>) =>
      async (...args: A) => {
        const out = await call(...args);
        this.emit(args[0] as ResourceType, ev, out);
        return out;
      };
    return Object.assign(Object.create(base) as KubeClient, {
      apply: emitting('MODIFIED', (type: ResourceType, obj: KubeObject, sub?: 'status') => base.apply(type, obj, sub)),
      create: emitting('ADDED', (type: ResourceType, obj: KubeObject) => base.create(type, obj)),
      mergePatch: emitting('MODIFIED', (type: ResourceType, ns: string, name: string, patch: unknown) => base.mergePatch(type, ns, name, patch)),
      watch: (type: ResourceType, opts: { signal?: AbortSignal }, onEvent: (ev: WatchEvent<KubeObject>) => void) =>
        new Promise<void>((resolve) => {
          const list = this.watches.get(type.kind) ?? [];
          list.push(onEvent);
          this.watches.set(type.kind, list);
          opts.signal?.addEventListener(
            'abort',
            () => {
              this.watches.set(
                type.kind,
                (this.watches.get(type.kind) ?? []).filter((f) => f !== onEvent),
              );
              resolve();
            },
            { once: true },
          );
        }),
    });
  }
}

const cluster = new WatchedCluster();
const taskQueue = uniqueName('foreign-ingress');
let env: TestWorkflowEnvironment;
let worker: Worker;
let running: Promise<void>;
let watcher: Watcher | undefined;
let poker: Poker | undefined;

beforeAll(async () => {
  env = await testEnv();
  // Tidal's default class configured, as deploy/ ships it; the Route asks for Traefik's with its annotation.
  const config = {
    revisionConfig: () => revisionConfig(),
    networkConfig: () => valueOf(parseNetworkConfig({ 'ingress-class': 'istio.ingress.networking.knative.dev' })),
    domainConfig: () => valueOf(parseDomainConfig({ 'example.com': '' })),
    featuresConfig: () => defaultFeaturesConfig(),
    systemNamespace: 'knative-serving',
  } as unknown as ConfigSource;
  const deps: ActivityDeps = {
    kube: cluster.client(),
    events: { record: async () => undefined },
    log: silent,
    config,
    digests: { resolve: async () => '' },
    entityOptions: () => ({ resyncSeconds: 3600 }),
  };
  worker = await startWorker(env, await bundle(), taskQueue, createActivities(deps));
  running = worker.run();
});

afterEach(async () => {
  await watcher?.close();
  watcher = undefined;
  await poker?.close();
  poker = undefined;
});

afterAll(async () => {
  worker?.shutdown();
  await running;
  await env?.teardown();
});

/** The watcher and poker of a controller running Route workflows (and the KIngresses they reconcile), started. */
async function startController(): Promise<void> {
  const registry = new Registry();
  poker = new Poker(env.client, { taskQueue, concurrency: 4, maxBackoffMs: 1000 }, silent, registry);
  const enabled = new Set<EntityKind>(['Route', 'Ingress']);
  watcher = new Watcher(
    cluster.client(),
    poker,
    { enabled, watched: ['Route', 'Ingress'], relistMs: 3_600_000, maxBackoffMs: 1000 },
    silent,
    registry,
  );
  watcher.start();
  await watcher.synced();
}

/** A Route at Configuration `<name>`, whose Revision is Ready, asking for Traefik's ingress class. */
function seedRoute(name: string): void {
  const ready: Condition[] = [{ type: 'Ready', status: 'True', lastTransitionTime: '2026-11-23T09:00:00Z' }];
  cluster.fake.seed<Configuration>(Resources.Configuration, {
    apiVersion: 'serving.knative.dev/v1',
    kind: 'Configuration',
    metadata: { name, namespace: NS },
    spec: { template: { spec: { containers: [{ image: 'nginx' }] } } },
    status: { observedGeneration: 1, conditions: ready, latestReadyRevisionName: `${name}-00001`, latestCreatedRevisionName: `${name}-00001` },
  });
  cluster.fake.seed<Revision>(Resources.Revision, {
    apiVersion: 'serving.knative.dev/v1',
    kind: 'Revision',
    metadata: {
      name: `${name}-00001`,
      namespace: NS,
      labels: { 'serving.knative.dev/configuration': name },
      ownerReferences: [{ apiVersion: 'serving.knative.dev/v1', kind: 'Configuration', name, uid: `uid-${name}`, controller: true }],
    },
    spec: { containers: [{ image: 'nginx' }] },
    status: { observedGeneration: 1, conditions: ready },
  });
  cluster.fake.seed<Route>(Resources.Route, {
    apiVersion: 'serving.knative.dev/v1',
    kind: 'Route',
    metadata: { name, namespace: NS, annotations: { 'networking.knative.dev/ingress.class': TRAEFIK } },
    spec: { traffic: [{ configurationName: name, percent: 100 }] },
  });
}

const routeOf = (name: string) => cluster.fake.get<Route>(Resources.Route, NS, name);
const cond = (name: string, type: string) => routeOf(name)?.status?.conditions?.find((c) => c.type === type);
const state = (name: string) => env.client.workflow.getHandle(`Route/${NS}/${name}`).query<EntityState>('state');
/** The workflow's state once it is idle after at least `passes` passes. */
async function idleAfter(name: string, passes: number): Promise<EntityState> {
  return eventually(`Route ${name}: idle after ${passes} passes`, async () => {
    const s = await state(name).catch(() => undefined);
    return s && !s.inPass && !s.dirty && s.totalReconciles >= passes ? s : undefined;
  });
}

/** The KIngress status Traefik's Knative provider writes, for the generation it has seen. */
function traefikReports(name: string, conditions: Condition[], withBalancer: boolean): IngressStatus | undefined {
  const lb = { ingress: [{ domainInternal: 'traefik.traefik.svc.cluster.local' }] };
  return cluster.controllerWrites<Ingress>(Resources.KIngress, name, (i) => {
    i.status = {
      observedGeneration: i.metadata.generation ?? 1,
      conditions,
      ...(withBalancer ? { publicLoadBalancer: lb, privateLoadBalancer: lb } : {}),
    };
  }).status;
}

const at = '2026-11-23T10:00:00Z';

describe('a Route whose KIngress is of another class (Traefik)', () => {
  it('is not Ready while the KIngress is Unknown, and turns Ready when its controller reports it Ready: a status-only change pokes the Route', async () => {
    const name = uniqueName('traefik');
    seedRoute(name);
    await startController();

    // The watcher's first list starts the Route's workflow; its pass creates the KIngress, which nobody reports yet.
    const first = await idleAfter(name, 1);
    const ing = cluster.fake.get<Ingress>(Resources.KIngress, NS, name)!;
    expect(ing.metadata.annotations?.['networking.knative.dev/ingress.class']).toBe(TRAEFIK);
    expect(ing.status).toBeUndefined();
    expect(cluster.fake.list(Resources.VirtualService, NS).filter((v) => v.metadata.name?.startsWith(name))).toEqual([]);
    expect(cond(name, 'IngressReady')).toMatchObject({ status: 'Unknown', reason: 'IngressNotConfigured' });
    expect(cond(name, 'Ready')?.status).toBe('Unknown');
    expect(routeOf(name)?.status?.url).toBe(`http://${name}.${NS}.example.com`);

    // Its controller has configured it and waits for its load balancer: the Route says so, still not Ready.
    traefikReports(
      name,
      [
        { type: 'NetworkConfigured', status: 'True', lastTransitionTime: at },
        { type: 'Ready', status: 'Unknown', reason: 'Uninitialized', message: 'Waiting for load balancer to be ready', lastTransitionTime: at },
      ],
      false,
    );
    const waiting = await eventually('IngressReady Uninitialized', async () => {
      const s = await state(name);
      return cond(name, 'IngressReady')?.reason === 'Uninitialized' && !s.inPass ? s : undefined;
    });
    expect(waiting.totalReconciles).toBeGreaterThan(first.totalReconciles);
    expect(waiting.lastReconcile?.trigger).toBe(`updated Ingress/${NS}/${name}`);
    expect(cond(name, 'IngressReady')).toMatchObject({ status: 'Unknown', message: 'Waiting for load balancer to be ready' });
    expect(cond(name, 'Ready')?.status).toBe('Unknown');

    // Ready, with its load balancer: the Route is Ready and its placeholder points at that load balancer.
    const reported = traefikReports(
      name,
      [
        { type: 'LoadBalancerReady', status: 'True', lastTransitionTime: at },
        { type: 'NetworkConfigured', status: 'True', lastTransitionTime: at },
        { type: 'Ready', status: 'True', lastTransitionTime: at },
      ],
      true,
    );
    await eventually('Route Ready', async () => (cond(name, 'Ready')?.status === 'True' ? true : undefined));
    expect(cond(name, 'IngressReady')?.status).toBe('True');
    const placeholder = cluster.fake.get<KubeObject & { spec: { type: string; externalName?: string } }>(Resources.KubeService, NS, name);
    expect(placeholder?.spec).toMatchObject({ type: 'ExternalName', externalName: 'traefik.traefik.svc.cluster.local' });
    const settled = await idleAfter(name, waiting.totalReconciles + 1);
    expect(settled.lastReconcile?.summary).toContain('Ready=True');

    // The KIngress's status is still exactly its controller's: Tidal wrote none of it, and programmed no VirtualService.
    expect(cluster.fake.get<Ingress>(Resources.KIngress, NS, name)?.status).toEqual(reported);
    expect(cluster.fake.calls.filter((c) => c.verb === 'status' && c.kind === 'Ingress')).toEqual([]);
    expect(cluster.fake.calls.filter((c) => c.kind === 'VirtualService' && c.verb !== 'get' && c.verb !== 'list')).toEqual([]);
  });
});
