// The reconcile chain end to end, driven as a user drives Knative: kubectl apply a Service, read back the
// Configuration, Revision, Deployment and statuses, and the Temporal history of each entity workflow.
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { repoRoot } from '../../dev/stack.js';
import { historySteps } from '../harness/history.js';
import type { Condition, Configuration, Revision, Route, Service } from '../../api/serving.js';
import { apply, eventsWhen, getObject, kubectl, kubectlJson, revisionReady, temporalClient, type KubeEvent } from '../harness/cluster.js';
import { eventually } from '../harness/wait.js';

interface Deployment {
  metadata: {
    name: string;
    labels: Record<string, string>;
    annotations?: Record<string, string>;
    ownerReferences?: { kind: string; name: string; controller?: boolean }[];
  };
  spec: {
    replicas: number;
    progressDeadlineSeconds: number;
    revisionHistoryLimit: number;
    selector: { matchLabels: Record<string, string> };
    strategy: { rollingUpdate?: { maxUnavailable?: number | string } };
    template: {
      metadata: { labels: Record<string, string>; annotations?: Record<string, string> };
      spec: {
        terminationGracePeriodSeconds: number;
        containers: { name: string; image: string; ports?: { name: string; containerPort: number }[]; env?: { name: string; value?: string }[] }[];
      };
    };
  };
  status?: { availableReplicas?: number };
}

/** The queue-proxy image the stack runs with: the one deploy/config/config-deployment.yaml ships (the stack applies it). */
const shippedQueueImage = (parse(readFileSync(`${repoRoot}/deploy/config/config-deployment.yaml`, 'utf8')) as { data: Record<string, string> }).data[
  'queue-sidecar-image'
];

let t: Awaited<ReturnType<typeof temporalClient>>;
beforeAll(async () => (t = await temporalClient()));
afterAll(async () => t.close());

const cond = (obj: { status?: { conditions?: Condition[] } } | undefined, type: string) => obj?.status?.conditions?.find((c) => c.type === type);

function service(name: string, image: string, extra: Record<string, unknown> = {}): object {
  return {
    apiVersion: 'serving.knative.dev/v1',
    kind: 'Service',
    metadata: { name, namespace: 'default', labels: { team: 'e2e' } },
    spec: { template: { spec: { containers: [{ image, ports: [{ containerPort: 80 }], ...extra }] } } },
  };
}

describe('Service → Configuration → Revision → Deployment', () => {
  const name = 'chain';

  it('the Configuration creates Revision chain-00001 with Knative labels, annotations and owner', async () => {
    await apply(service(name, 'nginx:1.27'));
    const cfg = await eventually('Configuration', () => getObject<Configuration>('configuration', name), 60_000);
    const rev = await eventually('Revision chain-00001', () => getObject<Revision>('revision', `${name}-00001`), 60_000);
    const svc = (await getObject<Service>('ksvc', name))!;
    expect(rev.metadata.labels).toMatchObject({
      'serving.knative.dev/configuration': name,
      'serving.knative.dev/configurationGeneration': '1',
      'serving.knative.dev/configurationUID': cfg.metadata.uid,
      'serving.knative.dev/service': name,
      'serving.knative.dev/serviceUID': svc.metadata.uid,
      'serving.knative.dev/routingState': 'active',
    });
    expect(rev.metadata.annotations?.['serving.knative.dev/routes']).toBe(name);
    expect(rev.metadata.annotations?.['serving.knative.dev/routingStateModified']).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    expect(rev.metadata.ownerReferences).toEqual([
      { apiVersion: 'serving.knative.dev/v1', kind: 'Configuration', name, uid: cfg.metadata.uid, controller: true, blockOwnerDeletion: true },
    ]);
    // Template labels are not the Configuration's: team=e2e lives on the Service and Configuration only.
    expect(rev.metadata.labels?.team).toBeUndefined();
    expect(rev.spec.containers[0]).toMatchObject({ name: 'user-container', image: 'nginx:1.27' });
    expect(rev.spec.timeoutSeconds).toBe(300);
  });

  it('the Service also owns a Route of the same name with its traffic', async () => {
    const route = await eventually('Route', () => getObject<Route>('route', name), 60_000);
    expect(route.spec.traffic).toEqual([{ configurationName: name, latestRevision: true, percent: 100 }]);
    expect(route.metadata.ownerReferences?.[0]).toMatchObject({ kind: 'Service', name, controller: true });
    expect(route.metadata.labels).toMatchObject({ team: 'e2e', 'serving.knative.dev/service': name });
  });

  it('chain-00001-deployment has Knative labels, hakn replicas, the serving container wiring and the shipped queue-proxy, and reaches 2/2', async () => {
    const rev = (await getObject<Revision>('revision', `${name}-00001`))!;
    const d = await eventually(
      'Deployment available',
      async () => {
        const dep = await getObject<Deployment>('deployment', `${name}-00001-deployment`);
        return dep?.status?.availableReplicas === 2 ? dep : undefined;
      },
      120_000,
    );
    expect(d.metadata.ownerReferences).toEqual([expect.objectContaining({ kind: 'Revision', name: `${name}-00001`, controller: true })]);
    expect(d.metadata.labels).toMatchObject({
      'serving.knative.dev/revision': `${name}-00001`,
      'serving.knative.dev/revisionUID': rev.metadata.uid,
      app: `${name}-00001`,
    });
    expect(d.metadata.labels['serving.knative.dev/deployment-hash']).toMatch(/^[0-9a-z]+$/);
    expect(d.metadata.labels).not.toHaveProperty(['serving.knative.dev/routingState']);
    expect(d.spec.selector.matchLabels).toEqual({ 'serving.knative.dev/revisionUID': rev.metadata.uid });
    expect(d.spec.replicas).toBe(2); // hakn: min-scale 2
    expect(d.spec.progressDeadlineSeconds).toBe(600);
    expect(d.spec.revisionHistoryLimit).toBe(0);
    expect(d.spec.strategy.rollingUpdate?.maxUnavailable).toBe(0);
    expect(d.spec.template.metadata.annotations?.['kubectl.kubernetes.io/default-container']).toBe('user-container');
    expect(d.spec.template.metadata.annotations).not.toHaveProperty(['serving.knative.dev/routes']);
    expect(d.spec.template.spec.terminationGracePeriodSeconds).toBe(300);
    const c = d.spec.template.spec.containers[0]!;
    expect(c.ports).toEqual([{ name: 'user-port', containerPort: 80, protocol: 'TCP' }]);
    expect(c.env).toEqual(
      expect.arrayContaining([
        { name: 'PORT', value: '80' },
        { name: 'K_REVISION', value: `${name}-00001` },
        { name: 'K_CONFIGURATION', value: name },
        { name: 'K_SERVICE', value: name },
      ]),
    );
    // The sidecar comes from the shipped config-deployment, its image as given there (never resolved to a digest).
    expect(shippedQueueImage).toMatch(/^gcr\.io\/knative-releases\/knative\.dev\/serving\/cmd\/queue@sha256:[0-9a-f]{64}$/);
    expect(d.spec.template.spec.containers.map((x) => x.name)).toEqual(['user-container', 'queue-proxy']);
    const q = d.spec.template.spec.containers[1]!;
    expect(q.image).toBe(shippedQueueImage);
    expect(q.ports?.map((p) => [p.name, p.containerPort])).toEqual([
      ['http-autometric', 9090],
      ['http-usermetric', 9091],
      ['queue-port', 8012],
      ['https-port', 8112],
    ]);
    expect(q.env).toEqual(
      expect.arrayContaining([
        { name: 'USER_PORT', value: '80' },
        { name: 'SERVING_REVISION', value: `${name}-00001` },
      ]),
    );
  });

  it("creates the ClusterIP Service chain-00001 selecting the revision pods, at queue-proxy's ports", async () => {
    const rev = (await getObject<Revision>('revision', `${name}-00001`))!;
    const s = await eventually(
      'revision Service',
      () =>
        getObject<{ spec: { type: string; selector: Record<string, string>; ports: { name: string; port: number; targetPort: number }[] } }>(
          'service',
          `${name}-00001`,
        ),
      60_000,
    );
    expect(s.spec.type).toBe('ClusterIP');
    expect(s.spec.selector).toEqual({ 'serving.knative.dev/revisionUID': rev.metadata.uid });
    // With queue-proxy the traffic goes through it: plaintext to its serving port, https to its TLS port.
    expect(s.spec.ports).toEqual([
      expect.objectContaining({ name: 'http', port: 80, targetPort: 8012 }),
      expect.objectContaining({ name: 'https', port: 443, targetPort: 8112 }),
    ]);
  });

  it('the Revision and Configuration become Ready with latestReady chain-00001', async () => {
    const rev = await revisionReady<Revision>(`${name}-00001`);
    expect(cond(rev, 'ResourcesAvailable')?.status).toBe('True');
    expect(cond(rev, 'ContainerHealthy')?.status).toBe('True');
    expect(rev.status?.actualReplicas).toBe(2);
    expect(rev.status?.desiredReplicas).toBe(2);
    expect(rev.status?.observedGeneration).toBe(1);
    const cfg = await eventually(
      'Configuration Ready',
      async () => {
        const c = await getObject<Configuration>('configuration', name);
        return cond(c, 'Ready')?.status === 'True' ? c : undefined;
      },
      60_000,
    );
    expect(cfg.status).toMatchObject({ latestCreatedRevisionName: `${name}-00001`, latestReadyRevisionName: `${name}-00001`, observedGeneration: 1 });
  });

  it('the Service mirrors its Configuration and Route and becomes Ready with its URL', async () => {
    const svc = await eventually(
      'Service Ready',
      async () => {
        const s = await getObject<Service>('ksvc', name);
        return cond(s, 'Ready')?.status === 'True' ? s : undefined;
      },
      60_000,
    );
    expect(svc.status).toMatchObject({
      latestCreatedRevisionName: `${name}-00001`,
      latestReadyRevisionName: `${name}-00001`,
      observedGeneration: 1,
      url: `http://${name}.default.svc.cluster.local`,
      address: { url: `http://${name}.default.svc.cluster.local` },
      traffic: [{ revisionName: `${name}-00001`, latestRevision: true, percent: 100 }],
    });
    expect(cond(svc, 'ConfigurationsReady')?.status).toBe('True');
    expect(cond(svc, 'RoutesReady')?.status).toBe('True');
    const row = (await kubectl(['get', 'ksvc', name, '--no-headers'])).trim().split(/\s+/);
    expect(row).toEqual([name, `http://${name}.default.svc.cluster.local`, `${name}-00001`, `${name}-00001`, 'True']);
  });

  it('records Kubernetes Events with Knative reasons', async () => {
    const wanted = [
      `Service/Created: Created Configuration "${name}"`,
      `Service/Created: Created Route "${name}"`,
      `Configuration/Created: Created Revision "${name}-00001"`,
      'Configuration/ConfigurationReady: Configuration becomes ready',
    ];
    const seen = (events: KubeEvent[]) => events.map((e) => `${e.involvedObject.kind}/${e.reason}: ${e.message}`);
    const events = await eventsWhen(`involvedObject.name=${name}`, (evs) => wanted.every((w) => seen(evs).includes(w)));
    expect(seen(events)).toEqual(expect.arrayContaining(wanted));
  });

  it('the Temporal history of Revision/default/chain-00001 reads as a log of steps', async () => {
    const history = await t.client.workflow.getHandle(`Revision/default/${name}-00001`).fetchHistory();
    const steps = historySteps(history).flatMap((st) => (st.type === 'readEntityOptions' ? [] : [st.summary]));
    // The first pass is one combined step (ADR 0011); the passes after it, on its pods' readiness, are status steps.
    expect(steps.slice(0, 2)).toEqual([
      `resolve image digests of Revision default/${name}-00001, apply its Deployment, Service, HPA and PodDisruptionBudget, update its status`,
      `update Revision default/${name}-00001 status`,
    ]);
  });

  it('changing the image creates chain-00002 and leaves chain-00001 in place', async () => {
    await apply(service(name, 'nginx:1.28'));
    await revisionReady<Revision>(`${name}-00002`);
    const revs = await kubectlJson<{ items: Revision[] }>(['get', 'revisions', '-l', `serving.knative.dev/configuration=${name}`]);
    expect(revs.items.map((r) => r.metadata.name).sort()).toEqual([`${name}-00001`, `${name}-00002`]);
    const cfg = await eventually(
      'latestReady chain-00002',
      async () => {
        const c = await getObject<Configuration>('configuration', name);
        return c?.status?.latestReadyRevisionName === `${name}-00002` ? c : undefined;
      },
      60_000,
    );
    expect(cond(cfg, 'Ready')?.status).toBe('True');
  });

  it('a manual edit of the Configuration spec is reverted', async () => {
    await kubectl([
      'patch',
      'configuration',
      name,
      '--type=json',
      '-p',
      JSON.stringify([{ op: 'replace', path: '/spec/template/spec/containers/0/image', value: 'hacked:1' }]),
    ]);
    await eventually(
      'image restored',
      async () => (await getObject<Configuration>('configuration', name))?.spec.template.spec.containers[0]?.image === 'nginx:1.28',
      60_000,
    );
  });

  it('an unschedulable spec fails the Revision, Configuration and Service with Knative reasons; traffic stays on the last ready', async () => {
    // The manual edit above made a generation of its own, so the last ready Revision is whatever the Configuration says.
    const lastReady = await eventually(
      'Configuration Ready again',
      async () => {
        const c = await getObject<Configuration>('configuration', name);
        const settled = c?.status?.observedGeneration === c?.metadata.generation && cond(c, 'Ready')?.status === 'True';
        return settled && c?.status?.latestReadyRevisionName === c?.status?.latestCreatedRevisionName
          ? c?.status?.latestReadyRevisionName
          : undefined;
      },
      60_000,
    );
    await apply(service(name, 'nginx:1.28', { resources: { requests: { cpu: '1000' } } }));
    const rev = await eventually(
      'chain-00004 or 00003 failed',
      async () => {
        const c = await getObject<Configuration>('configuration', name);
        const latest = c?.status?.latestCreatedRevisionName;
        if (!latest || latest === lastReady) return undefined;
        const r = await getObject<Revision>('revision', latest);
        return cond(r, 'Ready')?.status === 'False' ? r : undefined;
      },
      120_000,
    );
    expect(cond(rev, 'ResourcesAvailable')).toMatchObject({ status: 'False', reason: 'Unschedulable' });
    const revName = rev.metadata.name ?? '';
    const cfg = await eventually(
      'Configuration failed',
      async () => {
        const c = await getObject<Configuration>('configuration', name);
        return cond(c, 'Ready')?.status === 'False' ? c : undefined;
      },
      60_000,
    );
    expect(cond(cfg, 'Ready')).toMatchObject({
      reason: 'RevisionFailed',
      message: expect.stringContaining(`Revision "${revName}" failed with message: `),
    });
    expect(cfg.status?.latestReadyRevisionName).toBe(lastReady);
    const svc = await eventually(
      'Service ConfigurationsReady False',
      async () => {
        const s = await getObject<Service>('ksvc', name);
        return cond(s, 'ConfigurationsReady')?.status === 'False' ? s : undefined;
      },
      60_000,
    );
    expect(cond(svc, 'ConfigurationsReady')?.reason).toBe('RevisionFailed');
    expect(cond(svc, 'Ready')).toMatchObject({ status: 'False', reason: 'RevisionFailed' });
  });

  it('a crashing container fails the Revision with ExitCode<N>', async () => {
    // kwok plays the kubelet: pods labelled kwok.tidal.dev/crash=true report CrashLoopBackOff after exit code 1.
    await apply({
      apiVersion: 'serving.knative.dev/v1',
      kind: 'Service',
      metadata: { name: 'crash', namespace: 'default' },
      spec: {
        template: {
          metadata: { labels: { 'kwok.tidal.dev/crash': 'true' }, annotations: { 'kwok.tidal.dev/message': 'nginx: [emerg] bad config' } },
          spec: { containers: [{ image: 'nginx', ports: [{ containerPort: 80 }] }] },
        },
      },
    });
    const rev = await eventually(
      'ExitCode1',
      async () => {
        const r = await getObject<Revision>('revision', 'crash-00001');
        return cond(r, 'ContainerHealthy')?.status === 'False' ? r : undefined;
      },
      120_000,
    );
    expect(cond(rev, 'ContainerHealthy')).toMatchObject({ reason: 'ExitCode1', message: 'Container failed with: nginx: [emerg] bad config' });
    expect(cond(rev, 'Ready')).toMatchObject({ status: 'False', reason: 'ExitCode1' });
    const svc = await eventually(
      'Service reports it',
      async () => {
        const s = await getObject<Service>('ksvc', 'crash');
        return cond(s, 'ConfigurationsReady')?.status === 'False' ? s : undefined;
      },
      60_000,
    );
    expect(cond(svc, 'ConfigurationsReady')).toMatchObject({
      reason: 'RevisionFailed',
      message: expect.stringContaining('Container failed with: nginx: [emerg] bad config'),
    });
    await kubectl(['delete', 'ksvc', 'crash']);
  });

  it('a Configuration that exists and is not owned makes the Service report NotOwned', async () => {
    await apply({
      apiVersion: 'serving.knative.dev/v1',
      kind: 'Configuration',
      metadata: { name: 'taken', namespace: 'default' },
      spec: { template: { spec: { containers: [{ image: 'nginx' }] } } },
    });
    await apply(service('taken', 'nginx'));
    const svc = await eventually(
      'NotOwned',
      async () => {
        const s = await getObject<Service>('ksvc', 'taken');
        return cond(s, 'ConfigurationsReady')?.status === 'False' ? s : undefined;
      },
      60_000,
    );
    expect(cond(svc, 'ConfigurationsReady')).toMatchObject({
      reason: 'NotOwned',
      message: 'There is an existing Configuration "taken" that we do not own.',
    });
    await kubectl(['delete', 'ksvc', 'taken']);
    await kubectl(['delete', 'configuration', 'taken']);
  });

  it('deleting the Service removes the Configuration, Revisions, Deployments and Services', async () => {
    await kubectl(['delete', 'ksvc', name]);
    await eventually(
      'everything gone',
      async () => {
        const left = await kubectl([
          'get',
          'configurations,revisions,deployments,services',
          '-l',
          `serving.knative.dev/service=${name}`,
          '-o',
          'name',
        ]);
        const revs = await kubectl(['get', 'revisions,deployments', '-o', 'name']);
        return left.trim() === '' && !revs.includes(`${name}-0000`) ? true : undefined;
      },
      120_000,
    );
  });
});
