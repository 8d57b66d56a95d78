// When things happened to each benchmark Service, as the benchmark's own watches saw them arrive (performance.now();
// Kubernetes timestamps have 1 s resolution): its Deployment first seen, each of its pods turning Ready, its
// Revision Ready, the Service Ready on a given Revision.
import type { Logger } from 'pino';
import { Resources, type ResourceType } from '../api/kinds.js';
import type { KubeObject } from '../api/meta.js';
import type { Service } from '../api/serving.js';
import type { KubeClient } from '../kube/client.js';
import { Informer } from '../watcher/informer.js';
import { sleep } from './measure.js';

const SERVICE_LABEL = 'serving.knative.dev/service';
const REVISION_LABEL = 'serving.knative.dev/revision';

interface Conditioned {
  metadata: KubeObject['metadata'];
  status?: { conditions?: { type: string; status: string }[] };
}

const isReady = (o: KubeObject) => (o as Conditioned).status?.conditions?.find((c) => c.type === 'Ready')?.status === 'True';

export interface TimelineOptions {
  /** Follow Deployments and Pods too (head and tail); scale.ts leaves them out to keep the bench process light. */
  workloads: boolean;
}

export class ServiceTimeline {
  /** Service name → when its create request was sent. */
  readonly created = new Map<string, number>();
  /** Revision name → first watch event of its Deployment `<revision>-deployment`. */
  readonly deploymentSeen = new Map<string, number>();
  /** Revision name → first watch event of its Deployment with all its replicas available (Kubernetes' part of the tail). */
  readonly deploymentAvailable = new Map<string, number>();
  /** Revision name → pod name → when that pod was first seen Ready. */
  readonly podsReady = new Map<string, Map<string, number>>();
  /** Revision name → first seen Ready. */
  readonly revisionReady = new Map<string, number>();
  /** `<service>@<revision>` → first seen Ready with that Revision as its latest ready one, status up to date. */
  readonly serviceReadyOn = new Map<string, number>();
  /** Service name → observedGeneration → first seen Ready having observed that generation (of its spec as a whole). */
  readonly serviceReadyAt = new Map<string, Map<number, number>>();
  private readonly informers: Informer[] = [];

  constructor(
    private readonly kube: KubeClient,
    private readonly log: Logger,
    private readonly opts: TimelineOptions,
  ) {}

  async start(): Promise<void> {
    this.follow(Resources.Service, undefined, (obj, at) => {
      const svc = obj as Service;
      const latest = svc.status?.latestReadyRevisionName;
      const current = (svc.status?.observedGeneration ?? 0) >= (svc.metadata.generation ?? 0);
      const key = `${svc.metadata.name ?? ''}@${latest ?? ''}`;
      if (latest && current && isReady(obj) && !this.serviceReadyOn.has(key)) this.serviceReadyOn.set(key, at);
      if (current && isReady(obj)) {
        const name = svc.metadata.name ?? '';
        const byGeneration = this.serviceReadyAt.get(name) ?? new Map<number, number>();
        this.serviceReadyAt.set(name, byGeneration);
        const observed = svc.status?.observedGeneration ?? 0;
        if (!byGeneration.has(observed)) byGeneration.set(observed, at);
      }
    });
    this.follow(Resources.Revision, undefined, (obj, at) => {
      const name = obj.metadata.name ?? '';
      if (isReady(obj) && !this.revisionReady.has(name)) this.revisionReady.set(name, at);
    });
    if (this.opts.workloads) {
      this.follow(Resources.Deployment, SERVICE_LABEL, (obj, at) => {
        const revision = obj.metadata.labels?.[REVISION_LABEL];
        if (revision && !this.deploymentSeen.has(revision)) this.deploymentSeen.set(revision, at);
        const d = obj as KubeObject & { spec?: { replicas?: number }; status?: { availableReplicas?: number } };
        const available = (d.status?.availableReplicas ?? 0) >= Math.max(1, d.spec?.replicas ?? 1);
        if (revision && available && !this.deploymentAvailable.has(revision)) this.deploymentAvailable.set(revision, at);
      });
      this.follow(Resources.Pod, SERVICE_LABEL, (obj, at) => {
        const revision = obj.metadata.labels?.[REVISION_LABEL];
        if (!revision || !isReady(obj)) return;
        const pods = this.podsReady.get(revision) ?? new Map<string, number>();
        this.podsReady.set(revision, pods);
        if (!pods.has(obj.metadata.name ?? '')) pods.set(obj.metadata.name ?? '', at);
      });
    }
    for (const i of this.informers) i.start();
    await Promise.all(this.informers.map((i) => i.synced));
  }

  async close(): Promise<void> {
    await Promise.all(this.informers.map((i) => i.close()));
  }

  private follow(type: ResourceType, labelSelector: string | undefined, seen: (obj: KubeObject, at: number) => void): void {
    this.informers.push(
      new Informer(
        this.kube,
        type,
        {
          ...(labelSelector ? { labelSelector } : {}),
          relistMs: 3_600_000,
          maxBackoffMs: 1000,
          onChange: (change, obj) => {
            if (change !== 'deleted') seen(obj, performance.now());
          },
        },
        this.log,
      ),
    );
  }

  /**
   * When the Service was first Ready having observed `generation` or a later one, or undefined. A Service's generation
   * is not its Revisions' number: edits that follow each other quickly reach its Configuration as one.
   */
  serviceReadySince(name: string, generation: number): number | undefined {
    let first: number | undefined;
    for (const [observed, at] of this.serviceReadyAt.get(name) ?? []) if (observed >= generation && (first === undefined || at < first)) first = at;
    return first;
  }

  /** When the Service was first Ready on `revision` (default its first), or undefined. */
  serviceReady(name: string, revision = `${name}-00001`): number | undefined {
    return this.serviceReadyOn.get(`${name}@${revision}`);
  }

  /** Waits until `done()` or the deadline; true when done. */
  async waitUntil(done: () => boolean, timeoutMs: number): Promise<boolean> {
    const deadline = performance.now() + timeoutMs;
    while (!done()) {
      if (performance.now() > deadline) return false;
      await sleep(50);
    }
    return true;
  }

  /** The per-Service intervals of a Service's first Revision, in ms (NaN where a step was never seen). */
  intervals(name: string): ServiceIntervals {
    const revision = `${name}-00001`;
    const created = this.created.get(name) ?? NaN;
    const ready = this.serviceReady(name) ?? NaN;
    const deployment = this.deploymentSeen.get(revision) ?? NaN;
    // The pod whose Ready came last before the Service turned Ready: what the Service waited for.
    const podTimes = [...(this.podsReady.get(revision)?.values() ?? [])].filter((t) => Number.isNaN(ready) || t <= ready);
    const lastPod = podTimes.length ? Math.max(...podTimes) : NaN;
    const available = this.deploymentAvailable.get(revision) ?? NaN;
    const revisionReady = this.revisionReady.get(revision) ?? NaN;
    return {
      head: deployment - created,
      podsReady: lastPod - deployment,
      tail: ready - lastPod,
      tailKubernetes: available - lastPod,
      tailRevision: revisionReady - lastPod,
      tailService: ready - revisionReady,
      revisionReady: revisionReady - created,
      serviceReady: ready - created,
    };
  }
}

export interface ServiceIntervals {
  /** create → its Deployment first seen (pure control plane). */
  head: number;
  /** Deployment first seen → its last pod Ready (Kubernetes and kwok). */
  podsReady: number;
  /** last pod Ready → Service Ready (pure control plane). */
  tail: number;
  /**
   * Last pod Ready → Deployment all available (Kubernetes' controllers, not Tidal): off the path since the Revision
   * counts its Ready pods itself, shown for comparison.
   */
  tailKubernetes: number;
  /** The tail's parts: last pod Ready → Revision Ready (the Revision's pass), */
  tailRevision: number;
  /** → Service Ready (the Service's pass). */
  tailService: number;
  /** create → Revision Ready. */
  revisionReady: number;
  /** create → Service Ready. */
  serviceReady: number;
}
