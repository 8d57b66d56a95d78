// The Configuration's Revision step when the API server refuses the Revision (issue 8: failures nobody sees).
import { describe, expect, it } from 'vitest';
import { createConfigurationActivities } from '../../../activities/configuration.js';
import { Resources } from '../../../api/kinds.js';
import type { Configuration } from '../../../api/serving.js';
import { revision } from '../../fixtures/revision.js';
import { configuration } from '../../fixtures/serving.js';
import { KubeFake, refused, fakeDeps } from './kube-fake.js';

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
