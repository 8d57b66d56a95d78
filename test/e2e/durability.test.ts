// Durability: two controllers share the work; one is killed with SIGKILL while Services are created and updated.
// Every Service must converge on the survivor, with exactly one Revision per reconciled generation.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Configuration, Revision } from '../../api/serving.js';
import { replicaPorts, startController, testPorts, type StackInfo } from '../../dev/stack.js';
import { ProcessTable } from '../../dev/processes.js';
import { apply, getObject, kubectl, kubectlJson, stack } from '../harness/cluster.js';
import { eventually } from '../harness/wait.js';

const log = (s: string) => console.error(`[durability] ${s}`);
let procs: ProcessTable;
let info: StackInfo;
const secondPorts = replicaPorts(testPorts, 1);

beforeAll(async () => {
  const s = stack();
  procs = new ProcessTable(s.dir);
  info = { dir: s.dir, kubeconfig: s.kubeconfig, temporalAddress: s.temporalAddress, temporalUi: undefined, bins: s.bins, ports: testPorts };
  await startController(
    info,
    procs,
    { ports: secondPorts, controllerEnv: { ...s.controllerEnv, TIDAL_IDENTITY: 'controller-2' } },
    log,
    'tidal-controller-2',
  );
});

afterAll(async () => {
  // Leave the stack as the other files expect it: the main controller running, the second one gone.
  await startController(info, procs, { ports: testPorts, controllerEnv: stack().controllerEnv }, log);
  await procs.stop('tidal-controller-2');
});

const svc = (name: string, image: string) => ({
  apiVersion: 'serving.knative.dev/v1',
  kind: 'Service',
  metadata: { name, namespace: 'default' },
  spec: { template: { spec: { containers: [{ image, ports: [{ containerPort: 80 }] }] } } },
});

describe('a controller killed mid-flight', () => {
  const names = Array.from({ length: 6 }, (_, i) => `dur-${i}`);
  const updated = new Set(names.slice(0, 3));

  it('loses nothing: every Service converges, one Revision per generation', async () => {
    await Promise.all(names.map((n) => apply(svc(n, 'nginx:1.27'))));
    // Let both controllers pick up work, then update half the Services and kill the first controller meanwhile.
    await eventually('first Revisions being created', async () => (await kubectl(['get', 'revisions', '-o', 'name'])).includes('dur-'), 30_000, 100);
    const victim = procs.running('tidal-controller');
    expect(victim).toBeDefined();
    const updates = Promise.all([...updated].map((n) => apply(svc(n, 'nginx:1.28'))));
    process.kill(victim!.pid, 'SIGKILL');
    log(`killed tidal-controller (pid ${victim!.pid})`);
    await updates;

    for (const n of names) {
      const want = updated.has(n) ? 'nginx:1.28' : 'nginx:1.27';
      const cfg = await eventually(
        `${n} converged`,
        async () => {
          const c = await getObject<Configuration>('configuration', n);
          if (!c || c.status?.observedGeneration !== c.metadata.generation) return undefined;
          const ready = c.status?.conditions?.find((x) => x.type === 'Ready')?.status === 'True';
          const latest = c.status?.latestReadyRevisionName;
          if (!ready || !latest || latest !== c.status?.latestCreatedRevisionName) return undefined;
          const rev = await getObject<Revision>('revision', latest);
          return rev?.spec.containers[0]?.image === want ? c : undefined;
        },
        180_000,
        500,
      ).catch(async (err: unknown) => {
        // Say what was stuck, so a failure here can be diagnosed from the CI log alone.
        const dump = await kubectl(['get', 'ksvc,configurations,revisions,deployments,pods,nodes', '-o', 'wide']).catch(String);
        const cfgYaml = await kubectl(['get', 'configuration', n, '-o', 'yaml']).catch(String);
        throw new Error(`${String(err)}\n${dump}\n${cfgYaml}`);
      });
      const revs = await kubectlJson<{ items: Revision[] }>(['get', 'revisions', '-l', `serving.knative.dev/configuration=${n}`]);
      const generations = revs.items.map((r) => r.metadata.labels?.['serving.knative.dev/configurationGeneration']);
      // Never two Revisions for one generation, none for a generation that does not exist.
      expect(new Set(generations).size).toBe(generations.length);
      expect(generations.every((g) => Number(g) >= 1 && Number(g) <= (cfg.metadata.generation ?? 0))).toBe(true);
      // Names follow the generation they were made for.
      for (const r of revs.items)
        expect(r.metadata.name).toBe(`${n}-${String(r.metadata.labels?.['serving.knative.dev/configurationGeneration']).padStart(5, '0')}`);
      // The newest generation has its Revision, Ready, with its Deployment available.
      expect(cfg.status?.latestReadyRevisionName).toBe(`${n}-${String(cfg.metadata.generation).padStart(5, '0')}`);
      // Ready counts the Revision's Ready pods (ADR 0012); the deployment controller reports them available after.
      await eventually(
        `${n}'s Deployment available with 2 replicas`,
        async () =>
          (await getObject<{ status?: { availableReplicas?: number } }>('deployment', `${cfg.status?.latestReadyRevisionName}-deployment`))?.status
            ?.availableReplicas === 2,
        30_000,
        200,
      );
      if (!updated.has(n)) expect(revs.items.map((r) => r.metadata.name)).toEqual([`${n}-00001`]);
    }
  });

  it('cleans up after itself', async () => {
    await kubectl(['delete', 'ksvc', ...names]);
    await eventually('revisions gone', async () => !(await kubectl(['get', 'revisions', '-o', 'name'])).includes('dur-'), 120_000);
  });
});
