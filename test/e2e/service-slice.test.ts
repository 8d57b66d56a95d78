// The thin slice end to end: kubectl apply a Service → its entity workflow applies the Configuration →
// delete the Service → the kube garbage collector removes the Configuration and the workflow completes.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { historySteps } from '../harness/history.js';
import type { Configuration, Service } from '../../api/serving.js';
import { apply, getObject, kubectl, temporalClient } from '../harness/cluster.js';
import { eventually } from '../harness/wait.js';

const name = 'slice';
let t: Awaited<ReturnType<typeof temporalClient>>;

beforeAll(async () => (t = await temporalClient()));
afterAll(async () => t.close());

const svcManifest = (image: string) => ({
  apiVersion: 'serving.knative.dev/v1',
  kind: 'Service',
  metadata: { name, namespace: 'default', labels: { app: 'slice' }, annotations: { 'example.com/owner': 'e2e' } },
  spec: { template: { spec: { containers: [{ image, ports: [{ containerPort: 80 }] }] } } },
});

describe('Service → Configuration slice', () => {
  it('a Service applied with kubectl gets a Configuration of the same name, controlled by it', async () => {
    await apply(svcManifest('nginx:1.27'));
    const svc = (await getObject<Service>('ksvc', name))!;
    const cfg = await eventually('Configuration', () => getObject<Configuration>('configuration', name), 60_000);
    expect(cfg.metadata.ownerReferences).toEqual([
      { apiVersion: 'serving.knative.dev/v1', kind: 'Service', name, uid: svc.metadata.uid, controller: true, blockOwnerDeletion: true },
    ]);
    expect(cfg.metadata.labels).toMatchObject({
      app: 'slice',
      'serving.knative.dev/service': name,
      'serving.knative.dev/serviceUID': svc.metadata.uid,
    });
    expect(cfg.metadata.annotations).toMatchObject({ 'example.com/owner': 'e2e', 'serving.knative.dev/routes': name });
    expect(cfg.metadata.annotations).not.toHaveProperty(['kubectl.kubernetes.io/last-applied-configuration']);
    expect(cfg.spec.template.spec.containers[0]?.image).toBe('nginx:1.27');
  });

  it('writes the Configuration with server-side apply under the tidal field manager', async () => {
    const cfg = await kubectl([
      'get',
      'configuration',
      name,
      '--show-managed-fields',
      '-o',
      'jsonpath={.metadata.managedFields[*].manager}/{.metadata.managedFields[*].operation}',
    ]);
    expect(cfg).toContain('tidal');
    expect(cfg).toContain('Apply');
  });

  it('follows an image change of the Service', async () => {
    await apply(svcManifest('nginx:1.28'));
    await eventually(
      'new image on the Configuration',
      async () => (await getObject<Configuration>('configuration', name))?.spec.template.spec.containers[0]?.image === 'nginx:1.28',
      60_000,
    );
  });

  it('shows the Knative printer columns in kubectl get ksvc', async () => {
    const header = (await kubectl(['get', 'ksvc', name])).split('\n')[0] ?? '';
    expect(header.split(/\s+/)).toEqual(['NAME', 'URL', 'LATESTCREATED', 'LATESTREADY', 'READY', 'REASON']);
  });

  it('records the reconcile as readable activity steps in the history of Service/default/slice', async () => {
    const handle = t.client.workflow.getHandle(`Service/default/${name}`);
    const desc = await handle.describe();
    expect(desc.type).toBe('serviceWorkflow');
    // Running, or ended after a quiet minute (ADR 0006): either way its history holds the passes.
    expect(['RUNNING', 'COMPLETED']).toContain(desc.status.name);
    expect(desc.searchAttributes).toMatchObject({ KnativeKind: ['Service'], KnativeNamespace: ['default'], KnativeName: [name] });
    const history = await handle.fetchHistory();
    const steps = historySteps(history).filter((st) => st.type !== 'readEntityOptions');
    // The Service's pass reconciles its Configuration and Route too (ADR 0005), in one local activity named part by
    // part (ADR 0011), then collects old Revisions.
    expect(steps.slice(0, 2).map((st) => [st.type, st.local])).toEqual([
      ['reconcileServiceFull', true],
      ['collectRevisions', true],
    ]);
    expect(steps[0]?.summary).toContain(
      `apply Configuration default/${name}, ensure its Revision, update its status, apply Route default/${name}, program it, update Service default/${name} status`,
    );
  });

  it('is found by the Temporal UI filter on the Knative search attributes', async () => {
    const ids = await eventually(
      'visibility',
      async () => {
        const found: string[] = [];
        for await (const wf of t.client.workflow.list({ query: `KnativeKind = 'Service' AND KnativeName = '${name}'` })) found.push(wf.workflowId);
        return found.length > 0 ? found : undefined;
      },
      30_000,
    );
    expect(ids).toEqual([`Service/default/${name}`]);
  });

  it('recreates the Configuration when it is deleted by hand', async () => {
    const before = (await getObject<Configuration>('configuration', name))!.metadata.uid;
    await kubectl(['delete', 'configuration', name]);
    const after = await eventually(
      'recreated Configuration',
      async () => {
        const c = await getObject<Configuration>('configuration', name);
        return c && c.metadata.uid !== before ? c : undefined;
      },
      60_000,
    );
    expect(after.metadata.ownerReferences?.[0]?.name).toBe(name);
  });

  it('deleting the Service garbage-collects the Configuration and completes the workflow', async () => {
    await kubectl(['delete', 'ksvc', name]);
    await eventually('Configuration gone', async () => (await getObject('configuration', name)) === undefined, 90_000);
    const handle = t.client.workflow.getHandle(`Service/default/${name}`);
    const result = await eventually(
      'workflow completed',
      async () => {
        const d = await handle.describe();
        return d.status.name === 'COMPLETED' ? ((await handle.result()) as unknown) : undefined;
      },
      60_000,
    );
    expect(String(result)).toContain('is gone');
  });
});
