// The Configuration's Revision step when the API server refuses the Revision (issue 8: failures nobody sees).
import { describe, expect, it } from 'vitest';
import { createConfigurationActivities } from '../../../activities/configuration.js';
import { Resources } from '../../../api/kinds.js';
import type { Configuration } from '../../../api/serving.js';
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
