// Content tokens decide which pokes an entity workflow may ignore: every change a reconciler acts on must change
// the token of its view, and nothing else should.
import { describe, expect, it } from 'vitest';
import {
  newerVersion,
  contentToken,
  contentTokens,
  echoCovers,
  echoObservation,
  echoOf,
  hash64,
  mergeObservations,
  stableHash64,
  observationCovers,
  observationOf,
  sourceOf,
  statusOnlyChange,
  statusOnlyObservations,
} from '../../../api/content-token.js';
import { Resources } from '../../../api/kinds.js';
import { stableStringify } from '../../../api/stable-json.js';
import type { KubeObject } from '../../../api/meta.js';
import { podLikeOf, type PodLike } from '../../../api/lifecycle/revision.js';

type Obj = KubeObject & { spec?: unknown; status?: unknown };

const route = (
  over: Partial<Obj['metadata']> = {},
  spec: unknown = { traffic: [{ percent: 100, latestRevision: true }] },
  status: unknown = { observedGeneration: 1 },
): Obj => ({
  apiVersion: 'serving.knative.dev/v1',
  kind: 'Route',
  metadata: {
    name: 'web',
    namespace: 'ns',
    uid: 'u1',
    generation: 1,
    resourceVersion: '10',
    labels: { app: 'web' },
    annotations: { a: '1' },
    ...over,
  },
  spec,
  status,
});

describe('contentToken', () => {
  const base = contentToken(route(), 'self');

  it('contentTokens gives both views, each as contentToken does', () => {
    for (const obj of [route(), route({}, undefined, { observedGeneration: 2, conditions: [{ type: 'Ready', status: 'True' }] })])
      expect(contentTokens(obj)).toEqual({ self: contentToken(obj, 'self'), dependency: contentToken(obj, 'dependency') });
  });

  it('a self token ignores status, resourceVersion, managedFields, finalizers and the labeler’s bookkeeping', () => {
    expect(contentToken(route({}, undefined, { observedGeneration: 2, conditions: [] }), 'self')).toBe(
      contentToken(route({}, undefined, {}), 'self'),
    );
    expect(contentToken(route({ resourceVersion: '11' }), 'self')).toBe(base);
    expect(contentToken(route({ managedFields: [{ manager: 'x' }] } as never), 'self')).toBe(base);
    expect(contentToken(route({ finalizers: ['routes.serving.knative.dev'] }), 'self')).toBe(base);
    expect(contentToken(route({ labels: { app: 'web', 'serving.knative.dev/routingState': 'active' } }), 'self')).toBe(base);
    expect(
      contentToken(
        route({ annotations: { a: '1', 'serving.knative.dev/routes': 'web', 'serving.knative.dev/routingStateModified': 'now' } }),
        'self',
      ),
    ).toBe(base);
  });

  it('a Revision’s self token changes when it turns reserve or back (its scale does), not between active and pending', () => {
    const revision = (state: string) =>
      ({ ...route({ labels: { app: 'web', 'serving.knative.dev/routingState': state } }), kind: 'Revision' }) as KubeObject;
    const active = contentToken(revision('active'), 'self');
    expect(contentToken(revision('pending'), 'self')).toBe(active);
    expect(contentToken(revision('reserve'), 'self')).not.toBe(active);
  });

  it('a self token changes with the spec, generation, labels, annotations, uid and deletion', () => {
    const changed = [
      contentToken(
        route(
          {},
          {
            traffic: [
              { percent: 90, latestRevision: true },
              { percent: 10, revisionName: 'web-00001' },
            ],
          },
        ),
        'self',
      ),
      contentToken(route({ generation: 2 }), 'self'),
      contentToken(route({ labels: { app: 'web', 'networking.knative.dev/visibility': 'cluster-local' } }), 'self'),
      contentToken(route({ annotations: { a: '2' } }), 'self'),
      contentToken(route({ uid: 'u2' }), 'self'),
      contentToken(route({ deletionTimestamp: '2026-11-23T00:00:00Z' }), 'self'),
    ];
    for (const t of changed) expect(t).not.toBe(base);
    expect(new Set(changed).size).toBe(changed.length);
  });

  it('a dependency token also changes with the status', () => {
    const d = contentToken(route(), 'dependency');
    expect(d).toMatch(/^d\.[0-9a-f]{16}\.[0-9a-f]{16}$/);
    expect(contentToken(route({}, undefined, { observedGeneration: 2 }), 'dependency')).not.toBe(d);
    expect(contentToken(route({ resourceVersion: '99' }), 'dependency')).toBe(d);
  });

  it('a dependency token ignores condition timestamps, and a Revision’s replica counts', () => {
    const cond = (t: string) => ({ conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: t }], actualReplicas: 1 });
    expect(contentToken(route({}, undefined, cond('a')), 'dependency')).toBe(contentToken(route({}, undefined, cond('b')), 'dependency'));
    const rev = (replicas: number): KubeObject =>
      ({ ...route(), kind: 'Revision', status: { actualReplicas: replicas, conditions: [] } }) as KubeObject;
    expect(contentToken(rev(1), 'dependency')).toBe(contentToken(rev(2), 'dependency'));
    const deployment = (ready: number): KubeObject => ({ ...route(), kind: 'Deployment', status: { readyReplicas: ready } }) as KubeObject;
    // The Deployment controller's revision counter is bookkeeping: its arrival on a new Deployment is no spec change.
    const counted = route({ annotations: { a: '1', 'deployment.kubernetes.io/revision': '1' } });
    expect(contentToken({ ...counted, kind: 'Deployment' }, 'dependency')).toBe(contentToken({ ...route(), kind: 'Deployment' }, 'dependency'));
    expect(contentToken(deployment(1), 'dependency')).not.toBe(contentToken(deployment(2), 'dependency'));
    expect(contentToken(route({}, undefined, { actualReplicas: 1 }), 'dependency')).not.toBe(
      contentToken(route({}, undefined, { actualReplicas: 2 }), 'dependency'),
    );
  });

  it('a Revision’s dependency token is its readiness: what its Configuration, Routes and rollouts act on', () => {
    type Cond = { type: string; status: string; reason?: string; message?: string };
    const rev = (conditions: Cond[] | undefined, extra: Record<string, unknown> = {}, over: Partial<Obj['metadata']> = {}): KubeObject =>
      ({ ...route(over), kind: 'Revision', status: conditions ? { observedGeneration: 1, conditions, ...extra } : undefined }) as KubeObject;
    const token = (r: KubeObject) => contentToken(r, 'dependency');
    const unknown = (reason: string): Cond[] => [
      { type: 'Ready', status: 'Unknown', reason },
      { type: 'ResourcesAvailable', status: 'Unknown', reason },
    ];
    // The steps of a new Revision's way to Ready (no status yet, digests, Deploying) are not news to its readers...
    expect(token(rev(unknown('ResolvingDigests')))).toBe(
      token(rev(unknown('Deploying'), { containerStatuses: [{ name: 'user-container', imageDigest: 'x@sha256:1' }] })),
    );
    // ...nor is why its pods are not up (Active's reason)...
    expect(
      token(
        rev([
          { type: 'Ready', status: 'True' },
          { type: 'Active', status: 'False', reason: 'NoTraffic' },
        ]),
      ),
    ).toBe(
      token(
        rev([
          { type: 'Ready', status: 'True' },
          { type: 'Active', status: 'Unknown', reason: 'Queued' },
        ]),
      ),
    );
    // ...but readiness, a failure's reason and message, the generation it reports, its pods being up (a Route waits for
    // them before it sends it traffic) and `reserve` are.
    const ready = token(rev([{ type: 'Ready', status: 'True' }]));
    expect(
      token(
        rev([
          { type: 'Ready', status: 'True' },
          { type: 'Active', status: 'True' },
        ]),
      ),
    ).not.toBe(ready);
    expect(ready).not.toBe(token(rev(unknown('Deploying'))));
    expect(token(rev(undefined))).toBe(token(rev(unknown('Deploying'))));
    expect(token(rev(unknown('Deploying'), { observedGeneration: 0 }))).toBe(token(rev(unknown('Deploying'))));
    const failed = (message: string) => token(rev([{ type: 'Ready', status: 'False', reason: 'ContainerMissing', message }]));
    expect(failed('image not found')).not.toBe(failed('registry unreachable'));
    expect(failed('x')).not.toBe(token(rev(unknown('Deploying'))));
    expect(token(rev([{ type: 'Ready', status: 'True' }], { observedGeneration: 0 }))).not.toBe(ready);
    expect(token(rev([{ type: 'Ready', status: 'True' }], {}, { labels: { 'serving.knative.dev/routingState': 'reserve' } }))).not.toBe(ready);
    // Its spec is read in full, as for any dependency.
    expect(token(rev([{ type: 'Ready', status: 'True' }], {}, { annotations: { b: '2' } }))).not.toBe(ready);
  });

  it('an own write’s echo covers a poke of exactly that version and content', () => {
    const written = route({ resourceVersion: '7' });
    const echo = echoOf('7', observationOf(written));
    expect(echoObservation(echo)).toBe(observationOf(written));
    expect(echoCovers(echo, '7', contentToken(written, 'dependency'))).toBe(true);
    // The same content at another version is someone else's write; another content at that version cannot be ours.
    expect(echoCovers(echo, '8', contentToken(written, 'dependency'))).toBe(false);
    expect(echoCovers(echo, undefined, contentToken(written, 'dependency'))).toBe(false);
    expect(echoCovers(echo, '7', contentToken(route({}, { traffic: [] }), 'dependency'))).toBe(false);
  });

  it('does not depend on key order', () => {
    const a = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'ns' }, spec: { b: 1, a: 2 } } as Obj;
    const b = { spec: { a: 2, b: 1 }, metadata: { namespace: 'ns', name: 'p' }, kind: 'Pod', apiVersion: 'v1' } as Obj;
    expect(contentToken(a, 'dependency')).toBe(contentToken(b, 'dependency'));
    expect(hash64('a')).not.toBe(hash64('b'));
    expect(hash64('')).toMatch(/^[0-9a-f]{16}$/);
  });

  it('hashes the canonical text without building it: the same hash as of the text, for any JSON', () => {
    // A small deterministic generator (tokens already stored by running workflows must not change).
    let seed = 12345;
    const rnd = (n: number) => {
      seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
      return seed % n;
    };
    const strings = [
      '',
      'a',
      'é',
      '"quoted"',
      'line\nbreak',
      '\u2028',
      'zz',
      'Aa',
      'ü/ü',
      '0',
      'back\\slash',
      '\u{1f600}',
      'lone \ud800',
      '\u007f\u0001',
    ];
    const value = (depth: number): unknown => {
      const pick = rnd(depth > 3 ? 5 : 8);
      if (pick === 0) return null;
      if (pick === 1) return rnd(2) === 0;
      if (pick === 2) return rnd(1000) - 500 + (rnd(2) === 0 ? 0.25 : 0);
      if (pick === 3) return strings[rnd(strings.length)];
      if (pick === 4) return undefined;
      if (pick === 5) return Array.from({ length: rnd(4) }, () => value(depth + 1));
      return Object.fromEntries(Array.from({ length: rnd(5) }, () => [strings[rnd(strings.length)]! + String(rnd(3)), value(depth + 1)]));
    };
    for (let i = 0; i < 500; i++) {
      const v = value(0);
      expect(stableHash64(v), JSON.stringify(v)).toBe(hash64(stableStringify(v)));
    }
    expect(stableHash64({ b: [1, undefined, { d: 'x', c: undefined }], a: null })).toBe(hash64('{"a":null,"b":[1,null,{"d":"x"}]}'));
  });
});

describe('observations', () => {
  it('name the source as the watcher does, for watched types only', () => {
    expect(sourceOf(Resources.Route, route())).toBe('Route/ns/web');
    expect(sourceOf(Resources.KIngress, route())).toBe('Ingress/ns/web');
    expect(sourceOf(Resources.Deployment, route())).toBe('Deployment/ns/web');
    expect(sourceOf(Resources.KubeService, route())).toBe('KubeService/ns/web'); // placeholder Services
    expect(sourceOf(Resources.VirtualService, route())).toBe('VirtualService/ns/web');
    expect(sourceOf(Resources.ConfigMap, route())).toBeUndefined();
  });

  it('cover the self and dependency tokens of exactly the content observed', () => {
    const obs = observationOf(route());
    expect(observationCovers(obs, contentToken(route(), 'self'))).toBe(true);
    expect(observationCovers(obs, contentToken(route({ resourceVersion: '12' }, undefined, { observedGeneration: 5 }), 'self'))).toBe(true);
    expect(observationCovers(obs, contentToken(route(), 'dependency'))).toBe(true);
    expect(observationCovers(obs, contentToken(route({}, undefined, { observedGeneration: 5 }), 'dependency'))).toBe(false);
    expect(observationCovers(obs, contentToken(route({ generation: 2 }), 'self'))).toBe(false);
    expect(observationCovers(undefined, contentToken(route(), 'self'))).toBe(false);
    expect(observationCovers(obs, undefined)).toBe(false);
  });

  it('merge: a part seen with two contents covers nothing; a later status wins only when asked', () => {
    const a = observationOf(route());
    const newSpec = observationOf(route({ generation: 2 }, { traffic: [] }));
    const newStatus = observationOf(route({}, undefined, { observedGeneration: 7 }));
    const specConflict = mergeObservations(a, newSpec, true);
    expect(observationCovers(specConflict, contentToken(route(), 'self'))).toBe(false);
    expect(observationCovers(specConflict, contentToken(route({ generation: 2 }, { traffic: [] }), 'self'))).toBe(false);
    const statusConflict = mergeObservations(a, newStatus, false);
    expect(observationCovers(statusConflict, contentToken(route(), 'self'))).toBe(true);
    expect(observationCovers(statusConflict, contentToken(route({}, undefined, { observedGeneration: 7 }), 'dependency'))).toBe(false);
    const laterWins = mergeObservations(a, newStatus, true);
    expect(observationCovers(laterWins, contentToken(route({}, undefined, { observedGeneration: 7 }), 'dependency'))).toBe(true);
    // A different uid is a different object: nothing of the earlier one carries over.
    const recreated = mergeObservations(a, observationOf(route({ uid: 'u2' })), true);
    expect(recreated.startsWith('u2 - -')).toBe(true);
  });

  it('tell a dependency’s status-only change from any other: same spec seen, dependency view, something observed', () => {
    const obs = observationOf(route());
    expect(statusOnlyChange(obs, contentToken(route({}, undefined, { observedGeneration: 5 }), 'dependency'))).toBe(true);
    expect(statusOnlyChange(obs, contentToken(route(), 'dependency'))).toBe(true); // nothing changed at all
    expect(statusOnlyChange(obs, contentToken(route({ generation: 2 }, { traffic: [] }), 'dependency'))).toBe(false);
    expect(statusOnlyChange(obs, contentToken(route({}, undefined, { observedGeneration: 5 }), 'self'))).toBe(false); // own object
    expect(statusOnlyChange(undefined, contentToken(route(), 'dependency'))).toBe(false); // never read
    expect(statusOnlyChange(obs, undefined)).toBe(false); // no token (config maps)
    // A spec that changed under the last pass (`-`) is no baseline.
    const conflicted = mergeObservations(obs, observationOf(route({ generation: 2 }, { traffic: [] })), true);
    expect(statusOnlyChange(conflicted, contentToken(route(), 'dependency'))).toBe(false);
  });

  it('keep what a status-only pass saw only where the spec is the one seen before', () => {
    const before = { 'Route/ns/a': 'u1 s1 t1', 'Route/ns/b': 'u2 s2 t2', 'Route/ns/c': 'u3 s3 t3' };
    const seen = { 'Route/ns/a': 'u1 s1 t9', 'Route/ns/b': 'u2 s7 t2', 'Route/ns/c': 'u4 s3 t3', 'Route/ns/d': 'u5 s5 t5' };
    expect(statusOnlyObservations(before, seen)).toEqual({
      'Route/ns/a': 'u1 s1 t9', // same spec: the new status counts
      'Route/ns/b': 'u2 - t2', // spec moved on: not acted on, covers no spec
      'Route/ns/c': 'u4 - t3', // another object under the same name
      'Route/ns/d': 'u5 - t5', // never seen before
    });
  });

  it('keep what a status-only pass applied itself: the new spec of a child it programs is its own (ADR 0005)', () => {
    const before = { 'Ingress/ns/a': 'u1 s1 t1', 'KubeService/ns/a': 'u2 s2 t2' };
    const seen = { 'Ingress/ns/a': 'u1 s8 t8', 'KubeService/ns/a': 'u2 s9 t2' };
    expect(statusOnlyObservations(before, seen, new Set(['Ingress/ns/a']))).toEqual({
      'Ingress/ns/a': 'u1 s8 t8', // applied by the pass: covered
      'KubeService/ns/a': 'u2 - t2', // only read: its new spec is news
    });
  });
});

describe('pods: what their Revision reads of them', () => {
  // A pod as kwok leaves it Ready, with everything a real one carries that no reader acts on.
  const pod = (over: { ready?: boolean; scheduled?: 'True' | 'False'; waiting?: string; restarted?: boolean; deleting?: boolean } = {}): Obj => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: 'hello-00001-deployment-7d9f-abcde',
      namespace: 'ns',
      uid: 'pod-1',
      resourceVersion: '40',
      labels: { 'serving.knative.dev/revision': 'hello-00001', 'serving.knative.dev/revisionUID': 'rev-1' },
      annotations: { 'kwok.x-k8s.io/node': 'fake' },
      ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'hello-00001-deployment-7d9f', uid: 'rs-1', controller: true }],
      ...(over.deleting ? { deletionTimestamp: '2026-11-27T10:00:00Z' } : {}),
    },
    spec: { nodeName: 'kwok-node-0', containers: [{ name: 'user-container', image: 'nginx' }] },
    status: {
      phase: 'Running',
      podIP: '10.0.0.7',
      hostIP: '10.0.0.1',
      startTime: '2026-11-27T09:00:00Z',
      conditions: [
        { type: 'Initialized', status: 'True', lastTransitionTime: '2026-11-27T09:00:00Z' },
        { type: 'Ready', status: over.ready === false ? 'False' : 'True', lastTransitionTime: '2026-11-27T09:00:01Z' },
        {
          type: 'PodScheduled',
          status: over.scheduled ?? 'True',
          ...(over.scheduled === 'False' ? { reason: 'Unschedulable', message: '0/2 nodes are available' } : {}),
        },
      ],
      containerStatuses: [
        {
          name: 'user-container',
          ready: true,
          restartCount: over.restarted ? 1 : 0,
          state: over.waiting ? { waiting: { reason: over.waiting } } : { running: { startedAt: '2026-11-27T09:00:01Z' } },
          ...(over.restarted ? { lastState: { terminated: { exitCode: 1, message: 'boom', finishedAt: '2026-11-27T09:00:00Z' } } } : {}),
        },
      ],
    },
  });
  const token = (o: Obj) => contentToken(o, 'dependency');
  const edit = (o: Obj, f: (o: Obj & { spec: Record<string, unknown>; status: Record<string, unknown> }) => void): Obj => {
    const copy = JSON.parse(JSON.stringify(o)) as Obj & { spec: Record<string, unknown>; status: Record<string, unknown> };
    f(copy);
    return copy;
  };

  it('a change the Revision does not read is no news: IPs, node, phase, start times, a container started, PodScheduled True', () => {
    const base = token(pod());
    expect(token(edit(pod(), (p) => (p.status.podIP = '10.0.0.8')))).toBe(base);
    expect(token(edit(pod(), (p) => (p.spec.nodeName = 'kwok-node-1')))).toBe(base);
    expect(token(edit(pod(), (p) => (p.status.phase = 'Pending')))).toBe(base);
    expect(token(edit(pod(), (p) => (p.status.startTime = '2026-11-27T09:30:00Z')))).toBe(base);
    expect(token(edit(pod(), (p) => (p.metadata.resourceVersion = '41')))).toBe(base);
    expect(token(edit(pod(), (p) => ((p.status.conditions as unknown[]).splice(2, 1), undefined)))).toBe(base); // PodScheduled True gone
    expect(token(edit(pod(), (p) => (p.status.containerStatuses = [{ name: 'user-container', ready: false, state: { running: {} } }])))).toBe(base);
  });

  it('a change the Revision reads is news: Ready, PodScheduled False, a waiting reason, a restart, a deletion, its labels', () => {
    const base = token(pod());
    for (const changed of [
      pod({ ready: false }),
      pod({ scheduled: 'False' }),
      pod({ waiting: 'ImagePullBackOff' }),
      pod({ restarted: true }),
      pod({ deleting: true }),
      edit(pod(), (p) => (p.metadata.labels = { 'serving.knative.dev/revision': 'hello-00002' })),
      edit(pod(), (p) => (p.metadata.uid = 'pod-2')),
    ])
      expect(token(changed)).not.toBe(base);
    expect(token(pod({ waiting: 'ImagePullBackOff' }))).not.toBe(token(pod({ waiting: 'ErrImagePull' })));
  });

  it("a pod as the watcher's cache keeps it (identity, labels, owners, `podLikeOf` of its status) observes as the whole pod", () => {
    for (const whole of [pod(), pod({ ready: false, scheduled: 'False', restarted: true }), pod({ waiting: 'ErrImagePull', deleting: true })]) {
      const { name, namespace, uid, resourceVersion, labels, ownerReferences, deletionTimestamp } = whole.metadata;
      const slim = {
        apiVersion: whole.apiVersion,
        kind: whole.kind,
        metadata: { name, namespace, uid, resourceVersion, labels, ownerReferences, ...(deletionTimestamp ? { deletionTimestamp } : {}) },
        status: podLikeOf(whole as PodLike),
      } as Obj;
      expect(observationOf(slim)).toBe(observationOf(whole));
      expect(observationCovers(observationOf(slim), token(whole))).toBe(true);
    }
  });
});

describe('newerVersion', () => {
  it('compares resourceVersions as the numbers they are, an absent one older than any', () => {
    expect(newerVersion('10', '9')).toBe(true);
    expect(newerVersion('9', '10')).toBe(false);
    expect(newerVersion('10', '10')).toBe(false);
    expect(newerVersion('123456789012345678901', '99')).toBe(true);
    expect(newerVersion('1', undefined)).toBe(true);
    expect(newerVersion(undefined, '1')).toBe(false);
    // Not a number (another storage): never newer, so nothing is judged stale by it.
    expect(newerVersion('abc', '1')).toBe(false);
    expect(newerVersion('2', 'abc')).toBe(true);
  });
});
