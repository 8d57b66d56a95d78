// Pluggable at the bottom, driven as a user drives Knative: plain Knative Services with the HPA autoscaler
// class and without, read back the HPA, the PodDisruptionBudget, the Deployment and the Revision's status with kubectl,
// and the Revision's Temporal history. The local stack runs the real HPA controller (kube-controller-manager) but no
// metrics server: it scales to minReplicas and says it cannot read CPU.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Condition, Revision } from '../../api/serving.js';
import { historySteps } from '../harness/history.js';
import { apply, eventsWhen, getObject, kubectl, kubectlJson, revisionReady, temporalClient, type KubeEvent } from '../harness/cluster.js';
import { eventually } from '../harness/wait.js';

interface Owned {
  metadata: { name: string; uid?: string; ownerReferences?: { kind: string; name: string; controller?: boolean }[]; labels?: Record<string, string> };
}
interface HPA extends Owned {
  spec: {
    scaleTargetRef: { apiVersion: string; kind: string; name: string };
    minReplicas?: number;
    maxReplicas: number;
    metrics?: { type: string; resource?: { name: string; target: Record<string, unknown> } }[];
  };
  status?: { currentReplicas?: number; desiredReplicas?: number; conditions?: { type: string; status: string; reason: string }[] };
}
interface PDB extends Owned {
  spec: { minAvailable: number; selector: { matchLabels: Record<string, string> } };
}
interface Deployment extends Owned {
  metadata: Owned['metadata'] & { managedFields?: { manager: string; operation: string; fieldsV1?: { 'f:spec'?: Record<string, unknown> } }[] };
  spec: { replicas: number };
}

let t: Awaited<ReturnType<typeof temporalClient>>;
beforeAll(async () => (t = await temporalClient()));
const names = ['plug-hpa', 'plug-plain', 'plug-mem', 'plug-secure', 'plug-tags', 'plug-h2c', 'plug-foreign'];
afterAll(async () => {
  await setPdbConfig(undefined);
  await kubectl(['delete', 'ksvc', ...names, '--ignore-not-found', '--wait=false']);
  await t.close();
});

const HPA_CLASS = 'hpa.autoscaling.knative.dev';
const cond = (obj: { status?: { conditions?: Condition[] } } | undefined, type: string) => obj?.status?.conditions?.find((c) => c.type === type);

function service(name: string, annotations: Record<string, string>, image = 'nginx:1.27'): object {
  return {
    apiVersion: 'serving.knative.dev/v1',
    kind: 'Service',
    metadata: { name, namespace: 'default' },
    spec: { template: { metadata: { annotations }, spec: { containers: [{ image, ports: [{ containerPort: 8080 }] }] } } },
  };
}

async function setPdbConfig(value: string | undefined): Promise<void> {
  await kubectl([
    'patch',
    'configmap',
    'config-deployment',
    '-n',
    'knative-serving',
    '--type=merge',
    '-p',
    JSON.stringify({ data: { 'pod-disruption-budget': value ?? null } }),
  ]);
}

/** kubectl hides managedFields unless asked. */
const deploymentWithFields = (name: string) => kubectlJson<Deployment>(['get', 'deployment', name, '--show-managed-fields']);

const ownedByRevision = (obj: Owned, rev: string) =>
  expect(obj.metadata.ownerReferences).toEqual([expect.objectContaining({ kind: 'Revision', name: rev, controller: true })]);

describe("the seed's HPA from Knative annotations (class hpa, cpu 80 %, min-scale 3, max-scale 10)", () => {
  const rev = 'plug-hpa-00001';

  it('gets an autoscaling/v2 HPA named as the Revision, owned by it, targeting its Deployment', async () => {
    await apply(
      service('plug-hpa', {
        'autoscaling.knative.dev/class': HPA_CLASS,
        'autoscaling.knative.dev/metric': 'cpu',
        'autoscaling.knative.dev/target': '80',
        'autoscaling.knative.dev/min-scale': '3',
        'autoscaling.knative.dev/max-scale': '10',
      }),
    );
    const hpa = await eventually('HPA', () => getObject<HPA>('hpa.v2.autoscaling', rev), 120_000);
    ownedByRevision(hpa, rev);
    expect(hpa.metadata.labels?.['serving.knative.dev/revision']).toBe(rev);
    expect(hpa.spec).toEqual({
      scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: `${rev}-deployment` },
      minReplicas: 3,
      maxReplicas: 10,
      metrics: [{ type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 80 } } }],
    });
  });

  it('the HPA controller, not Tidal, sizes the Deployment; the Revision reports its counts and becomes Ready', async () => {
    const dep = await eventually(
      'Deployment at 3 replicas',
      async () => {
        const d = await deploymentWithFields(`${rev}-deployment`);
        return d?.spec.replicas === 3 ? d : undefined;
      },
      120_000,
    );
    // Tidal's server-side apply does not own spec.replicas (its manager's fields list no f:replicas).
    const tidalApply = (dep.metadata.managedFields ?? []).filter((f) => f.operation === 'Apply');
    expect(tidalApply.length).toBeGreaterThan(0);
    for (const f of tidalApply) expect(f.fieldsV1?.['f:spec']).not.toHaveProperty('f:replicas');
    const r = await eventually(
      'Revision reports the HPA counts',
      async () => {
        const x = await revisionReady<Revision>(rev);
        return x.status?.desiredReplicas === 3 && x.status.actualReplicas === 3 ? x : undefined;
      },
      120_000,
    );
    expect(cond(r, 'Ready')?.status).toBe('True');
    // Without a metrics server the HPA says so; its status is what the Revision shows.
    const hpa = await eventually(
      'HPA status',
      async () => {
        const h = await getObject<HPA>('hpa.v2.autoscaling', rev);
        return h?.status?.desiredReplicas === 3 ? h : undefined;
      },
      120_000,
    );
    expect(hpa.status?.currentReplicas).toBe(3);
    expect(hpa.status?.conditions?.find((c) => c.type === 'ScalingActive')).toMatchObject({ status: 'False', reason: 'FailedGetResourceMetric' });
  });

  it('gets a PodDisruptionBudget with minAvailable = its min-scale (3)', async () => {
    const pdb = await eventually('PDB', () => getObject<PDB>('pdb', rev), 60_000);
    ownedByRevision(pdb, rev);
    expect(pdb.spec).toEqual({ minAvailable: 3, selector: { matchLabels: { 'serving.knative.dev/revision': rev } } });
  });

  it('a PodDisruptionBudget deleted by hand is made again (the watcher pokes its Revision)', async () => {
    const before = await eventually('PDB', () => getObject<PDB>('pdb', rev), 60_000);
    await kubectl(['delete', 'pdb', rev, '--wait=false']);
    const again = await eventually(
      'PDB made again',
      async () => {
        const pdb = await getObject<PDB>('pdb', rev);
        return pdb && pdb.metadata.uid !== before.metadata.uid ? pdb : undefined;
      },
      60_000,
    );
    ownedByRevision(again, rev);
    expect(again.spec).toEqual({ minAvailable: 3, selector: { matchLabels: { 'serving.knative.dev/revision': rev } } });
  });

  it("the Revision's Temporal history shows the step, and Events say what was created", async () => {
    const history = await t.client.workflow.getHandle(`Revision/default/${rev}`).fetchHistory();
    const steps = historySteps(history).map((s) => s.summary);
    expect(steps).toContain(`apply Deployment ${rev}-deployment, Service, HPA and PodDisruptionBudget ${rev}`);
    const wanted = [`Created: Created HorizontalPodAutoscaler "${rev}"`, `Created: Created PodDisruptionBudget "${rev}"`];
    const seen = (events: KubeEvent[]) => events.map((e) => `${e.reason}: ${e.message}`);
    const events = await eventsWhen(`involvedObject.kind=Revision,involvedObject.name=${rev}`, (evs) => wanted.every((w) => seen(evs).includes(w)));
    expect(seen(events)).toEqual(expect.arrayContaining(wanted));
  });

  it('changing the class on a new Revision switches cleanly: fixed replicas again, no HPA for it', async () => {
    await apply(service('plug-hpa', { 'autoscaling.knative.dev/min-scale': '3' }));
    const next = 'plug-hpa-00002';
    await revisionReady<Revision>(next);
    await eventually('fixed 3 replicas', async () => (await getObject<Deployment>('deployment', `${next}-deployment`))?.spec.replicas === 3, 120_000);
    expect(await getObject<HPA>('hpa.v2.autoscaling', next)).toBeUndefined();
    const dep = await deploymentWithFields(`${next}-deployment`);
    const tidalApply = (dep?.metadata.managedFields ?? []).filter((f) => f.operation === 'Apply');
    expect(tidalApply.some((f) => f.fieldsV1?.['f:spec'] && 'f:replicas' in (f.fieldsV1['f:spec'] ?? {}))).toBe(true);
    // The Service is Ready on the new Revision.
    await eventually(
      'Service Ready on 00002',
      async () => {
        const s = await getObject<{ status?: { latestReadyRevisionName?: string; conditions?: Condition[] } }>('ksvc', 'plug-hpa');
        return s?.status?.latestReadyRevisionName === next && cond(s, 'Ready')?.status === 'True';
      },
      120_000,
    );
  });
});

describe('memory metric', () => {
  it('target 512 → averageValue 512Mi', async () => {
    await apply(
      service('plug-mem', {
        'autoscaling.knative.dev/class': HPA_CLASS,
        'autoscaling.knative.dev/metric': 'memory',
        'autoscaling.knative.dev/target': '512',
      }),
    );
    const hpa = await eventually('HPA', () => getObject<HPA>('hpa.v2.autoscaling', 'plug-mem-00001'), 120_000);
    expect(hpa.spec.metrics).toEqual([{ type: 'Resource', resource: { name: 'memory', target: { type: 'AverageValue', averageValue: '512Mi' } } }]);
    // No scale annotations: both bounds from config-autoscaler — hakn's max-scale 30 and min-scale 2 (another test may
    // hold min-scale at 3 for a while).
    expect(hpa.spec.maxReplicas).toBe(30);
    await eventually('minReplicas 2', async () => (await getObject<HPA>('hpa.v2.autoscaling', 'plug-mem-00001'))?.spec.minReplicas === 2, 120_000);
  });
});

describe("the seed's PodDisruptionBudget (minAvailable 2) from a plain Knative Service", () => {
  const rev = 'plug-plain-00001';

  it("hakn's min-scale 2 gives minAvailable 2, no HPA, two fixed replicas", async () => {
    await apply(service('plug-plain', {}));
    await revisionReady<Revision>(rev);
    // config.test.ts may hold min-scale at 3 for a while: the PDB follows config-autoscaler, so wait for 2.
    const pdb = await eventually(
      'PDB minAvailable 2',
      async () => {
        const p = await getObject<PDB>('pdb', rev);
        return p?.spec.minAvailable === 2 ? p : undefined;
      },
      120_000,
    );
    ownedByRevision(pdb, rev);
    expect(pdb.spec.selector).toEqual({ matchLabels: { 'serving.knative.dev/revision': rev } });
    expect(await getObject<HPA>('hpa.v2.autoscaling', rev)).toBeUndefined();
    await eventually('2 replicas', async () => (await getObject<Deployment>('deployment', `${rev}-deployment`))?.spec.replicas === 2, 120_000);
  });

  it('config-deployment pod-disruption-budget: disabled removes it; enabled brings it back', async () => {
    await setPdbConfig('disabled');
    await eventually('PDB gone', async () => (await getObject<PDB>('pdb', rev)) === undefined, 120_000);
    await setPdbConfig('enabled');
    await eventually('PDB back', () => getObject<PDB>('pdb', rev), 120_000);
  });

  it('a Revision annotated tidal.dev/pod-disruption-budget: "false" has none', async () => {
    await apply(service('plug-plain', { 'tidal.dev/pod-disruption-budget': 'false' }));
    await revisionReady<Revision>('plug-plain-00002');
    expect(await getObject<PDB>('pdb', 'plug-plain-00002')).toBeUndefined();
    // The older Revision keeps its own.
    expect(await getObject<PDB>('pdb', rev)).toBeDefined();
  });
});

// ---- config-features and the revision Service's appProtocol ----

async function setFeatures(data: Record<string, string | null>): Promise<void> {
  await kubectl(['patch', 'configmap', 'config-features', '-n', 'knative-serving', '--type=merge', '-p', JSON.stringify({ data })]);
}

interface Container {
  securityContext?: Record<string, unknown>;
}

describe('config-features secure-pod-defaults: enabled', () => {
  afterAll(async () => setFeatures({ 'secure-pod-defaults': null }));

  it("yields the seed's securityContext plus Knative's RuntimeDefault seccomp and runAsNonRoot, on the Service and its pods", async () => {
    await setFeatures({ 'secure-pod-defaults': 'enabled' });
    const want = {
      allowPrivilegeEscalation: false,
      capabilities: { drop: ['ALL'] },
      runAsNonRoot: true,
      seccompProfile: { type: 'RuntimeDefault' },
    };
    // The webhook reads config-features through its informer: a server-side dry run shows when it is in force.
    const manifest = JSON.stringify(service('plug-secure', {}));
    await eventually(
      'defaulting with secure-pod-defaults',
      async () => {
        const out = JSON.parse(await kubectl(['apply', '--dry-run=server', '-o', 'json', '-f', '-'], manifest)) as {
          spec: { template: { spec: { containers: Container[] } } };
        };
        return JSON.stringify(out.spec.template.spec.containers[0]?.securityContext) === JSON.stringify(want);
      },
      60_000,
    );
    await kubectl(['apply', '-f', '-'], manifest);
    const ksvc = await getObject<{ spec: { template: { spec: { containers: Container[] } } } }>('ksvc', 'plug-secure');
    expect(ksvc?.spec.template.spec.containers[0]?.securityContext).toEqual(want);
    await revisionReady<Revision>('plug-secure-00001');
    const dep = await getObject<{ spec: { template: { spec: { containers: Container[] } } } }>('deployment', 'plug-secure-00001-deployment');
    expect(dep?.spec.template.spec.containers[0]?.securityContext).toEqual(want);
  });
});

describe('config-features tag-header-based-routing: enabled', () => {
  afterAll(async () => setFeatures({ 'tag-header-based-routing': null }));

  it('the VirtualService routes Knative-Serving-Tag: <tag> on the main host to the tag', async () => {
    await setFeatures({ 'tag-header-based-routing': 'enabled' });
    await apply({
      apiVersion: 'serving.knative.dev/v1',
      kind: 'Service',
      metadata: { name: 'plug-tags', namespace: 'default' },
      spec: {
        template: { metadata: { name: 'plug-tags-one' }, spec: { containers: [{ image: 'nginx:1.27', ports: [{ containerPort: 8080 }] }] } },
        traffic: [
          { latestRevision: true, percent: 100 },
          { revisionName: 'plug-tags-one', percent: 0, tag: 'cand' },
        ],
      },
    });
    const vs = await eventually(
      'VirtualService with the tag header match',
      async () => {
        const v = await getObject<{ spec: { http: { match?: { headers?: Record<string, unknown> }[] }[] } }>(
          'virtualservices.networking.istio.io',
          'plug-tags-mesh',
        );
        return v && JSON.stringify(v.spec.http).includes('"Knative-Serving-Tag":{"exact":"cand"}') ? v : undefined;
      },
      120_000,
    );
    expect(JSON.stringify(vs.spec)).toContain('Knative-Serving-Default-Route');
    const ing = await getObject<{ spec: { rules: { http: { paths: { headers?: unknown }[] } }[] } }>(
      'ingresses.networking.internal.knative.dev',
      'plug-tags',
    );
    expect(ing?.spec.rules[0]?.http.paths[0]?.headers).toEqual({ 'Knative-Serving-Tag': { exact: 'cand' } });
  });
});

describe('the revision Service of an h2c Revision', () => {
  it('names its port http2 and says appProtocol kubernetes.io/h2c', async () => {
    await apply({
      apiVersion: 'serving.knative.dev/v1',
      kind: 'Service',
      metadata: { name: 'plug-h2c', namespace: 'default' },
      spec: { template: { spec: { containers: [{ image: 'nginx:1.27', ports: [{ name: 'h2c', containerPort: 8080 }] }] } } },
    });
    const svc = await eventually(
      'revision Service',
      () => getObject<{ spec: { ports: Record<string, unknown>[] } }>('service', 'plug-h2c-00001'),
      120_000,
    );
    expect(svc.spec.ports[0]).toMatchObject({ name: 'http2', port: 81, appProtocol: 'kubernetes.io/h2c' });
  });
});

// ---- ingress class per object ----

describe('networking.knative.dev/ingress.class on a Service', () => {
  const foreign = 'contour.ingress.networking.knative.dev';

  it('gives its KIngress that class; Tidal leaves it alone and the Route waits for its status', async () => {
    await apply({
      apiVersion: 'serving.knative.dev/v1',
      kind: 'Service',
      metadata: { name: 'plug-foreign', namespace: 'default', annotations: { 'networking.knative.dev/ingress.class': foreign } },
      spec: { template: { spec: { containers: [{ image: 'nginx:1.27', ports: [{ containerPort: 8080 }] }] } } },
    });
    const ing = await eventually(
      'KIngress',
      () =>
        getObject<{ metadata: { annotations?: Record<string, string>; generation: number }; status?: unknown }>(
          'ingresses.networking.internal.knative.dev',
          'plug-foreign',
        ),
      120_000,
    );
    expect(ing.metadata.annotations?.['networking.knative.dev/ingress.class']).toBe(foreign);
    await revisionReady<Revision>('plug-foreign-00001');
    // Nobody programs it: no VirtualServices, no status, the Route not Ready.
    expect(await getObject('virtualservices.networking.istio.io', 'plug-foreign-ingress')).toBeUndefined();
    expect(await getObject('virtualservices.networking.istio.io', 'plug-foreign-mesh')).toBeUndefined();
    const route = await getObject<{ status?: { conditions?: Condition[] } }>('route', 'plug-foreign');
    expect(cond(route, 'Ready')?.status).not.toBe('True');
    expect((await getObject<{ status?: unknown }>('ingresses.networking.internal.knative.dev', 'plug-foreign'))?.status ?? {}).toEqual({});
  });

  it("becomes Ready once that class's controller (here: kubectl) reports the KIngress Ready", async () => {
    const ing = await getObject<{ metadata: { generation: number } }>('ingresses.networking.internal.knative.dev', 'plug-foreign');
    const ready = (type: string) => ({ type, status: 'True', lastTransitionTime: new Date().toISOString() });
    const lb = { ingress: [{ domainInternal: 'envoy.contour-internal.svc.cluster.local' }] };
    await kubectl([
      'patch',
      'ingresses.networking.internal.knative.dev',
      'plug-foreign',
      '--subresource=status',
      '--type=merge',
      '-p',
      JSON.stringify({
        status: {
          observedGeneration: ing?.metadata.generation,
          conditions: [ready('LoadBalancerReady'), ready('NetworkConfigured'), ready('Ready')],
          publicLoadBalancer: lb,
          privateLoadBalancer: lb,
        },
      }),
    ]);
    await eventually(
      'Service Ready',
      async () => {
        const s = await getObject<{ status?: { conditions?: Condition[] } }>('ksvc', 'plug-foreign');
        return cond(s, 'Ready')?.status === 'True';
      },
      120_000,
    );
    const route = await getObject<{ status?: { conditions?: Condition[] } }>('route', 'plug-foreign');
    expect(cond(route, 'IngressReady')?.status).toBe('True');
    // Still nothing of Tidal's class programmed for it.
    expect(await getObject('virtualservices.networking.istio.io', 'plug-foreign-ingress')).toBeUndefined();
  });
});
