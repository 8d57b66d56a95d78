// Reading one's own writes from the watcher's cache (activities/written.ts), and what a workflow hands its next pass
// (workflows/written.ts): after a pass that failed, lists come from the API server.
import { describe, expect, it } from 'vitest';
import { listOwnWrites, writtenSoFar, type WrittenVersions } from '../../../activities/written.js';
import { writtenBefore } from '../../../workflows/written.js';
import type { KubeObject } from '../../../api/meta.js';
import type { EntityState } from '../../../workflows/entity-state.js';

const revision = (name: string, rv: string): KubeObject => ({
  apiVersion: 'serving.knative.dev/v1',
  kind: 'Revision',
  metadata: { name, namespace: 'ns', resourceVersion: rv },
});

/** A cache that holds `cached` and an API server that holds `live`; each records whether it was asked. */
function sources(cached: KubeObject[], live: KubeObject[]) {
  const asked = { cache: 0, api: 0 };
  const deps = {
    cache: {
      list: () => {
        asked.cache += 1;
        return Promise.resolve(cached);
      },
    },
    kube: {
      list: () => {
        asked.api += 1;
        return Promise.resolve({ items: live, resourceVersion: '10' });
      },
    },
  } as unknown as Parameters<typeof listOwnWrites>[0];
  return { deps, asked };
}

describe('listOwnWrites', () => {
  it('reads the cache on a first attempt that recorded what it wrote', async () => {
    const { deps, asked } = sources([revision('web-00001', '5')], [revision('web-00001', '7')]);
    const { items, cached } = await listOwnWrites(deps, 'Revision', 'ns', { 'serving.knative.dev/configuration': 'web' }, { Revision: '5' });
    expect(cached).toBe(true);
    expect(items.map((i) => i.metadata.resourceVersion)).toEqual(['5']);
    expect(asked).toEqual({ cache: 1, api: 0 });
  });

  it('reads the API server after a pass that failed: its writes are recorded nowhere, the cache may lack them', async () => {
    const { deps, asked } = sources([revision('web-00001', '5')], [revision('web-00001', '7')]);
    const { items, cached } = await listOwnWrites(deps, 'Revision', 'ns', {}, { Revision: '5', unrecorded: true });
    expect(cached).toBe(false);
    expect(items.map((i) => i.metadata.resourceVersion)).toEqual(['7']);
    expect(asked).toEqual({ cache: 0, api: 1 });
  });
});

describe('what a pass hands on of its writes', () => {
  const st = (failedPasses: number, facts: Record<string, string> = {}) => ({ failedPasses, facts }) as unknown as EntityState;

  it('writtenBefore carries the versions of earlier passes, and marks them unrecorded after a failed pass', () => {
    expect(writtenBefore(st(0, { wroteRevision: '12' }))).toEqual({ Revision: '12' });
    expect(writtenBefore(st(2, { wroteRevision: '12' }))).toEqual({ Revision: '12', unrecorded: true });
  });

  it('writtenSoFar keeps the mark for the steps after it in the same pass', () => {
    const prior: WrittenVersions = { Configuration: '3', unrecorded: true };
    expect(writtenSoFar(prior)).toEqual({ Configuration: '3', unrecorded: true });
    expect(writtenSoFar({ Configuration: '3' })).toEqual({ Configuration: '3' });
  });
});
