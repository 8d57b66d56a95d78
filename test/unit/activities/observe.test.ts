// What activities report as observed: the objects the Kubernetes client returned while the activity ran.
import { describe, expect, it } from 'vitest';
import { contentToken, observationCovers, observationOf } from '../../../api/content-token.js';
import { Resources } from '../../../api/kinds.js';
import type { KubeObject } from '../../../api/meta.js';
import { MockActivityEnvironment } from '@temporalio/testing';
import { MAX_OBSERVATIONS, noteAbsent, noteObject, noteWritten, observing, withObservations } from '../../../activities/observe.js';

type Obj = KubeObject & { spec?: unknown; status?: unknown };
const dep = (name: string, replicas = 2, ready = 0): Obj => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name, namespace: 'ns', uid: `u-${name}` },
  spec: { replicas },
  status: { readyReplicas: ready },
});

describe('observing', () => {
  it('returns what the activity read, keyed by source, next to its result', async () => {
    const r = await observing(async () => {
      noteObject(Resources.Deployment, dep('a'), 'read');
      noteObject(Resources.ConfigMap, dep('cm'), 'read'); // not watched: not reported
      return { outcome: 'applied' };
    });
    expect(r).toEqual({ outcome: 'applied', observed: { 'Deployment/ns/a': observationOf(dep('a')) } });
  });

  it('reports an object that changed under the activity as covering nothing in the part that changed', async () => {
    const r = await observing(async () => {
      noteObject(Resources.Deployment, dep('a', 2, 0), 'read');
      noteObject(Resources.Deployment, dep('a', 2, 1), 'read');
      noteObject(Resources.Revision, { ...dep('r'), apiVersion: 'serving.knative.dev/v1', kind: 'Revision' }, 'read');
      noteObject(Resources.Revision, { ...dep('r', 3), apiVersion: 'serving.knative.dev/v1', kind: 'Revision' }, 'read');
      return { outcome: 'x' };
    });
    const obs = r.observed as Record<string, string>;
    expect(observationCovers(obs['Deployment/ns/a'], contentToken(dep('a', 2, 1), 'self'))).toBe(true);
    expect(observationCovers(obs['Deployment/ns/a'], contentToken(dep('a', 2, 1), 'dependency'))).toBe(false);
    expect(
      observationCovers(obs['Revision/ns/r'], contentToken({ ...dep('r', 3), apiVersion: 'serving.knative.dev/v1', kind: 'Revision' }, 'self')),
    ).toBe(false);
  });

  it('records a GET that found nothing: a later find of the object in the same step covers nothing', async () => {
    const r = await observing(async () => {
      noteAbsent(Resources.Deployment, 'ns', 'a');
      noteObject(Resources.Deployment, dep('a'), 'read');
      return {};
    });
    const obs = (r.observed ?? {})['Deployment/ns/a'];
    expect(obs).toBeDefined();
    expect(observationCovers(obs, contentToken(dep('a'), 'self'))).toBe(false);
    expect(observationCovers(obs, contentToken(dep('a'), 'dependency'))).toBe(false);
    const created = await observing(async () => {
      noteAbsent(Resources.Deployment, 'ns', 'a');
      noteObject(Resources.Deployment, dep('a'), 'write');
      return {};
    });
    expect(created.observed).toEqual({ 'Deployment/ns/a': observationOf(dep('a')) });
  });

  it('lets a write (apply or create of a child) replace what was read before it', async () => {
    const r = await observing(async () => {
      noteObject(Resources.Deployment, dep('a', 1), 'read');
      noteObject(Resources.Deployment, dep('a', 2), 'write');
      return {};
    });
    expect(r.observed).toEqual({ 'Deployment/ns/a': observationOf(dep('a', 2)) });
  });

  it('a status write replaces the status part only, and both kinds of write are reported in `wrote`', async () => {
    const r = await observing(async () => {
      noteObject(Resources.Deployment, dep('a', 2, 0), 'read');
      // Tidal wrote the status; the spec came back changed by someone else meanwhile (replicas 3).
      noteObject(Resources.Deployment, dep('a', 3, 1), 'status');
      noteObject(Resources.Deployment, dep('b', 2, 0), 'read');
      noteObject(Resources.Deployment, dep('b', 2, 1), 'status');
      noteObject(Resources.Deployment, dep('c', 1), 'write');
      noteObject(Resources.Deployment, dep('d', 1), 'read');
      return {};
    });
    const obs = r.observed ?? {};
    // a: its status is Tidal's, its new spec was never acted on.
    expect(observationCovers(obs['Deployment/ns/a'], contentToken(dep('a', 3, 1), 'dependency'))).toBe(false);
    // b: the echo of Tidal's own status write is covered.
    expect(observationCovers(obs['Deployment/ns/b'], contentToken(dep('b', 2, 1), 'dependency'))).toBe(true);
    expect(r.wrote).toEqual({ 'Deployment/ns/a': 'status', 'Deployment/ns/b': 'status', 'Deployment/ns/c': 'all' });
  });

  it('lets a read after a create carry the status: nothing acted on the status the create returned', async () => {
    const r = await observing(async () => {
      // a: created, then read with the status its own workflow wrote meanwhile: the read's status counts.
      noteObject(Resources.Deployment, dep('a', 1, 0), 'create');
      noteObject(Resources.Deployment, dep('a', 1, 1), 'read');
      // b: created and read, then read again with another status: two reads that differ cover neither status.
      noteObject(Resources.Deployment, dep('b', 1, 0), 'create');
      noteObject(Resources.Deployment, dep('b', 1, 1), 'read');
      noteObject(Resources.Deployment, dep('b', 1, 2), 'read');
      // c: created and not looked at again: reported as created, for the next step's read (workflows/activities.ts).
      noteObject(Resources.Deployment, dep('c', 1, 0), 'create');
      // d: applied (not created), then read with another status: the apply's step may have acted on its status.
      noteObject(Resources.Deployment, dep('d', 1, 0), 'write');
      noteObject(Resources.Deployment, dep('d', 1, 1), 'read');
      return {};
    });
    const obs = r.observed ?? {};
    expect(obs['Deployment/ns/a']).toBe(observationOf(dep('a', 1, 1)));
    expect(observationCovers(obs['Deployment/ns/b'], contentToken(dep('b', 1, 2), 'dependency'))).toBe(false);
    expect(observationCovers(obs['Deployment/ns/b'], contentToken(dep('b', 1, 1), 'self'))).toBe(true);
    expect(observationCovers(obs['Deployment/ns/d'], contentToken(dep('d', 1, 1), 'dependency'))).toBe(false);
    expect(r.created).toEqual(['Deployment/ns/c']);
    expect(r.wrote).toEqual({ 'Deployment/ns/a': 'all', 'Deployment/ns/b': 'all', 'Deployment/ns/c': 'all', 'Deployment/ns/d': 'all' });
  });

  it('reports the echo of every apply and create, pinned to its resourceVersion; status writes and reads give none', async () => {
    const at = (o: Obj, rv: string): Obj => ({ ...o, metadata: { ...o.metadata, resourceVersion: rv } });
    const r = await observing(async () => {
      // a: created, then applied again (the placeholder pointed at the load balancer).
      noteObject(Resources.Deployment, at(dep('a', 1), '5'), 'create');
      noteObject(Resources.Deployment, at(dep('a', 2), '6'), 'write');
      // b: created, then its status written: a status write may return a spec the step never acted on.
      noteObject(Resources.Deployment, at(dep('b', 1, 0), '7'), 'create');
      noteObject(Resources.Deployment, at(dep('b', 1, 1), '8'), 'status');
      // c: only read.
      noteObject(Resources.Deployment, at(dep('c', 1), '10'), 'read');
      return {};
    });
    expect(r.echoes).toEqual({
      'Deployment/ns/a': [`5 ${observationOf(dep('a', 1))}`, `6 ${observationOf(dep('a', 2))}`],
      'Deployment/ns/b': [`7 ${observationOf(dep('b', 1, 0))}`],
    });
  });

  it('reports the oldest resourceVersion it read or wrote of each source (the oldest it may have acted on)', async () => {
    const at = (o: Obj, rv: string): Obj => ({ ...o, metadata: { ...o.metadata, resourceVersion: rv } });
    const r = await observing(async () => {
      noteObject(Resources.Deployment, at(dep('a', 1), '19'), 'read');
      noteObject(Resources.Deployment, at(dep('a', 2), '9'), 'read'); // a cache behind answered a later read
      noteObject(Resources.Deployment, at(dep('b', 1), '30'), 'write');
      noteObject(Resources.Deployment, dep('c'), 'read'); // no version: none reported
      return {};
    });
    expect(r.versions).toEqual({ 'Deployment/ns/a': '9', 'Deployment/ns/b': '30' });
  });

  it('skips long lists and caps what it reports', async () => {
    const long = await observing(async () => {
      for (let i = 0; i < 17; i++) noteObject(Resources.Deployment, dep(`l${i}`), 'read', 17);
      return {};
    });
    expect(long).toEqual({});
    const many = await observing(async () => {
      for (let i = 0; i < MAX_OBSERVATIONS + 10; i++) noteObject(Resources.Deployment, dep(`m${i}`), 'read');
      return {};
    });
    expect(Object.keys(many.observed ?? {})).toHaveLength(MAX_OBSERVATIONS);
  });

  it('tells its own-write log when a workflow’s step starts and ends and of every write it makes; nothing of a read, nor outside an activity', async () => {
    const heard: string[] = [];
    const at = (o: Obj, rv: string): Obj => ({ ...o, metadata: { ...o.metadata, resourceVersion: rv } });
    // As the Kubernetes client reports them: every write also as the process's own (kube/client.ts).
    const write = (o: Obj, how: 'write' | 'create' | 'status') => {
      noteObject(Resources.Deployment, o, how);
      noteWritten(Resources.Deployment, o, how === 'status');
    };
    const acts = withObservations(
      {
        step: async () => {
          write(at(dep('a'), '5'), 'create');
          write(at(dep('a', 3), '6'), 'write');
          write(at(dep('a', 3, 1), '7'), 'status');
          noteObject(Resources.Deployment, at(dep('b'), '8'), 'read');
          return {};
        },
      },
      {
        note: (workflowId, source, rv) => heard.push(`${workflowId} ${source} ${rv}`),
        stepStarted: (workflowId) => heard.push(`${workflowId} started`),
        stepEnded: (workflowId) => heard.push(`${workflowId} ended`),
      },
    );
    const env = new MockActivityEnvironment({ workflowExecution: { workflowId: 'Revision/ns/a-00001', runId: 'r1' } });
    await env.run(acts.step);
    expect(heard).toEqual([
      'Revision/ns/a-00001 started',
      ...[5, 6, 7].map((rv) => `Revision/ns/a-00001 Deployment/ns/a ${rv}`),
      'Revision/ns/a-00001 ended',
    ]);
    await acts.step(); // a direct call (no activity): nobody to tell
    expect(heard).toHaveLength(5);
  });

  it('a step that fails hands its writes back as it ends; one that succeeds keeps them', async () => {
    const ended: string[] = [];
    const own = {
      note: () => undefined,
      stepStarted: () => undefined,
      stepEnded: (workflowId: string, failed: readonly { source: string; resourceVersion: string }[] = []) =>
        ended.push(`${workflowId}: ${failed.map((w) => `${w.source}@${w.resourceVersion}`).join(', ')}`),
    };
    const written = (name: string, rv: string) =>
      noteWritten(Resources.Deployment, { ...dep(name), metadata: { ...dep(name).metadata, resourceVersion: rv } });
    const acts = withObservations(
      {
        fails: async () => {
          written('a', '5');
          written('b', '6');
          throw new Error('the API server went away');
        },
        succeeds: async () => {
          written('a', '7');
          return {};
        },
      },
      own,
    );
    const env = new MockActivityEnvironment({ workflowExecution: { workflowId: 'Service/ns/a', runId: 'r1' } });
    await expect(env.run(acts.fails)).rejects.toThrow('the API server went away');
    await env.run(acts.succeeds);
    expect(ended).toEqual(['Service/ns/a: Deployment/ns/a@5, Deployment/ns/b@6', 'Service/ns/a: ']);
  });

  it('does nothing outside an activity, and keeps concurrent activities apart', async () => {
    noteObject(Resources.Deployment, dep('outside'), 'read');
    const acts = withObservations({
      one: async () => {
        noteObject(Resources.Deployment, dep('one'), 'read');
        await new Promise((r) => setTimeout(r, 5));
        return { n: 1 };
      },
      two: async () => {
        noteObject(Resources.Deployment, dep('two'), 'read');
        return { n: 2 };
      },
    });
    const [a, b] = await Promise.all([acts.one(), acts.two()]);
    expect(Object.keys((a as unknown as { observed: object }).observed)).toEqual(['Deployment/ns/one']);
    expect(Object.keys((b as unknown as { observed: object }).observed)).toEqual(['Deployment/ns/two']);
  });
});
