// The Configuration's Revision step when the API server refuses the Revision (failures nobody sees).
import { describe, expect, it } from 'vitest';
import { createConfigurationActivities } from '../../../activities/configuration.js';
import { Resources } from '../../../api/kinds.js';
import type { Configuration } from '../../../api/serving.js';
import { revision } from '../../fixtures/revision.js';
import { configuration } from '../../fixtures/serving.js';
import { KubeFake, refused, fakeDeps } from './kube-fake.js';
import type { MetadataCache } from '../../../activities/deps.js';
import { observing } from '../../../activities/observe.js';
import type { KubeObject } from '../../../api/meta.js';

const key = { namespace: 'default', name: 'hello' };

function setup() {
  const fake = new KubeFake();
  fake.seed(
    Resources.Configuration,
    configuration('hello', 'default', (c) => void (c.metadata.generation = 1)),
  );
  const { deps, recorded } = fakeDeps(fake);
  return { fake, recorded, acts: createConfigurationActivities(deps) };
}

describe('reconcileConfigurationRevision', () => {
  it("a refused Revision: Ready False RevisionFailed with the API server's message, one Warning Event, and retried", async () => {
    const { fake, acts, recorded } = setup();
    const denied = 'admission webhook "quota.example.com" denied the request: too many revisions';
    fake.failNext('create', Resources.Revision, refused(400, 'BadRequest', denied, 'CREATE'));
    await expect(acts.reconcileConfigurationRevision(key)).rejects.toThrow(denied);
    const ready = fake.get<Configuration>(Resources.Configuration, 'default', 'hello')!.status?.conditions?.find((c) => c.type === 'Ready');
    expect(ready).toMatchObject({ status: 'False', reason: 'RevisionFailed', message: `Revision creation failed with message: ${denied}.` });
    expect(recorded).toEqual([{ type: 'Warning', reason: 'CreationFailed', message: `Failed to create Revision: ${denied}` }]);
    // The retry succeeds once the webhook allows it.
    expect(await acts.reconcileConfigurationRevision(key)).toMatchObject({ outcome: 'created', revision: 'hello-00001' });
  });

  it('a transient failure is retried without touching the status', async () => {
    const { fake, acts, recorded } = setup();
    fake.failNext('create', Resources.Revision, refused(503, 'ServiceUnavailable', 'etcd leader changed', 'CREATE'));
    await expect(acts.reconcileConfigurationRevision(key)).rejects.toThrow('etcd');
    expect(fake.get<Configuration>(Resources.Configuration, 'default', 'hello')!.status).toBeUndefined();
    expect(recorded).toEqual([]);
  });
});

describe('updateConfigurationStatus', () => {
  it('latestReady from the Revisions: its Events once, before the status that names it is written', async () => {
    const { fake } = setup();
    const uid = fake.get<Configuration>(Resources.Configuration, 'default', 'hello')!.metadata.uid!;
    fake.seed(
      Resources.Revision,
      revision('hello-00001', 'default', (r) => {
        r.metadata.ownerReferences = [{ apiVersion: 'serving.knative.dev/v1', kind: 'Configuration', name: 'hello', uid, controller: true }];
        r.status = { observedGeneration: 1, conditions: [{ type: 'Ready', status: 'True' }] };
      }),
    );
    const latestReady = () => fake.get<Configuration>(Resources.Configuration, 'default', 'hello')!.status?.latestReadyRevisionName;
    const { deps } = fakeDeps(fake);
    const seen: { reason: string; latestReady: string | undefined }[] = [];
    deps.events = { record: async (_o, _t, reason) => void seen.push({ reason, latestReady: latestReady() }) };
    const acts = createConfigurationActivities(deps);
    expect(await acts.updateConfigurationStatus(key)).toMatchObject({ outcome: 'written', ready: 'True' });
    expect(latestReady()).toBe('hello-00001');
    expect(await acts.updateConfigurationStatus(key)).toMatchObject({ outcome: 'unchanged' });
    expect(seen).toEqual([
      { reason: 'ConfigurationReady', latestReady: undefined },
      { reason: 'LatestReadyUpdate', latestReady: undefined },
    ]);
  });
});

describe("the Configuration's Revisions from the watcher cache (activities/written.ts)", () => {
  /** A cache over the fake's store (metadata only, as the watcher's) that records the versions it was asked to reflect. */
  function withCache(fake: KubeFake, vouch = true) {
    const asked: (string | undefined)[] = [];
    const { deps } = fakeDeps(fake);
    const cache: MetadataCache = {
      list: async (type, ns, opts = {}) => {
        asked.push(opts.after);
        if (!vouch) return undefined;
        const labels = Object.entries(opts.labels ?? {});
        return fake
          .list(type, ns)
          .filter((o) => labels.every(([k, v]) => o.metadata.labels?.[k] === v))
          .map((o) => ({ apiVersion: o.apiVersion, kind: o.kind, metadata: { name: o.metadata.name, namespace: o.metadata.namespace } }));
      },
    };
    return { asked, acts: createConfigurationActivities({ ...deps, cache }) };
  }

  it('names them from the cache, reads each whole (no list), and reports the Revision it created for the next step', async () => {
    const { fake } = setup();
    const { acts, asked } = withCache(fake);
    const created = await observing(() => acts.reconcileConfigurationRevision(key, { written: { Revision: '1' } }));
    expect(created).toMatchObject({ outcome: 'created', revision: 'hello-00001' });
    const rv = fake.get<KubeObject>(Resources.Revision, 'default', 'hello-00001')!.metadata.resourceVersion;
    expect(created.outcome !== 'gone' && created.written).toEqual({ Revision: rv });
    expect(asked).toEqual(['1']);
    fake.calls = [];
    const written = created.outcome !== 'gone' ? created.written : undefined;
    expect(await acts.updateConfigurationStatus(key, undefined, written ? { written } : {})).toMatchObject({ outcome: 'written' });
    expect(asked).toEqual(['1', rv]);
    expect(fake.calls.filter((c) => c.verb === 'list')).toEqual([]);
    expect(fake.calls.filter((c) => c.verb === 'get' && c.kind === 'Revision').map((c) => c.name)).toEqual(['hello-00001']);
    expect(fake.get<Configuration>(Resources.Configuration, 'default', 'hello')!.status?.latestCreatedRevisionName).toBe('hello-00001');
  });

  it('one the cache still names but that is gone is left out; a cache that cannot vouch leaves it to a list', async () => {
    const { fake } = setup();
    const phantom = { apiVersion: 'serving.knative.dev/v1', kind: 'Revision', metadata: { name: 'hello-00009', namespace: 'default' } };
    const { deps } = fakeDeps(fake);
    const names: MetadataCache = {
      list: async (type, ns) => [...fake.list(type, ns).map((o) => ({ ...o, metadata: { ...o.metadata } })), phantom],
    };
    const acts = createConfigurationActivities({ ...deps, cache: names });
    expect(await acts.reconcileConfigurationRevision(key)).toMatchObject({ outcome: 'created', revision: 'hello-00001' });
    fake.calls = [];
    expect(await acts.updateConfigurationStatus(key)).toMatchObject({ outcome: 'written' });
    expect(fake.calls.filter((c) => c.verb === 'get' && c.kind === 'Revision').map((c) => c.name)).toEqual(['hello-00001', 'hello-00009']);
    expect(fake.get<Configuration>(Resources.Configuration, 'default', 'hello')!.status?.latestCreatedRevisionName).toBe('hello-00001');
    const lagging = withCache(fake, false);
    fake.calls = [];
    await lagging.acts.updateConfigurationStatus(key, undefined, { written: { Revision: '999' } });
    expect(lagging.asked).toEqual(['999']);
    expect(fake.calls.filter((c) => c.verb === 'list').map((c) => c.kind)).toEqual(['Revision']);
  });
});
