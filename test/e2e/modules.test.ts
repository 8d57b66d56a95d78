// Modules (ADR 0009), driven as a user drives Knative: the example module operator
// (examples/module-operator, started from source like the controller) runs next to Tidal; a plain Knative Service and
// a Service naming `tidal.dev/module: sidecar-example` are applied side by side with kubectl; the module's Revisions
// get their Deployment from the operator — its sidecar, no queue-proxy — and their readiness from it, while Tidal
// still makes their Service, routes to them, rolls out to them and splits traffic between them. The e2e stack lists
// `sidecar-example` in config-modules (test/harness/e2e-setup.ts).
import { spawn, type ChildProcess } from 'node:child_process';
import { openSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Condition, Revision } from '../../api/serving.js';
import { repoRoot } from '../../dev/stack.js';
import { historySteps } from '../harness/history.js';
import { apply, eventsWhen, getObject, kubectl, kubectlJson, revisionReady, stack, temporalClient } from '../harness/cluster.js';
import { eventually } from '../harness/wait.js';

interface Container {
  name: string;
  image: string;
  ports?: { containerPort: number }[];
  env?: { name: string; value?: string }[];
}
interface Deployment {
  metadata: {
    name: string;
    labels?: Record<string, string>;
    ownerReferences?: { kind: string; name: string; controller?: boolean }[];
    managedFields?: { manager: string; operation: string }[];
  };
  spec: { template: { metadata: { labels: Record<string, string> }; spec: { containers: Container[] } } };
}
interface KService {
  status?: { latestReadyRevisionName?: string; conditions?: Condition[]; traffic?: { revisionName: string; percent?: number }[] };
}
interface KIngress {
  spec: { rules: { http: { paths: { splits: { serviceName: string; percent: number; servicePort: number }[] }[] } }[] };
}

const MODULE = 'sidecar-example';
const SIDECAR_IMAGE = 'registry.example/sidecar-example:v1';
const names = ['mod-plain', 'mod-side', 'mod-typo'];
const cond = (obj: { status?: { conditions?: Condition[] } } | undefined, type: string) => obj?.status?.conditions?.find((c) => c.type === type);

let operator: ChildProcess;
let operatorLog: string;
let t: Awaited<ReturnType<typeof temporalClient>>;

beforeAll(async () => {
  t = await temporalClient();
  // The example operator from source, as `npx tsx examples/module-operator/operator.ts` runs it.
  operatorLog = path.join(stack().dir, 'logs', 'module-operator.log');
  const out = openSync(operatorLog, 'a');
  operator = spawn(path.join(repoRoot, 'node_modules', '.bin', 'tsx'), [path.join(repoRoot, 'examples', 'module-operator', 'operator.ts')], {
    env: { ...process.env, KUBECONFIG: stack().kubeconfig },
    stdio: ['ignore', out, out],
  });
  await eventually('operator watching', async () => readFileSync(operatorLog, 'utf8').includes(`watching Revisions of module ${MODULE}`), 60_000);
});

afterAll(async () => {
  await kubectl(['delete', 'ksvc', ...names, '--ignore-not-found', '--wait=false']);
  if (operator.exitCode === null) {
    operator.kill('SIGTERM');
    await new Promise((r) => operator.once('exit', r));
  }
  await t.close();
});

function service(
  name: string,
  annotations: Record<string, string>,
  extra: Record<string, unknown> = {},
  metaAnnotations: Record<string, string> = {},
): object {
  return {
    apiVersion: 'serving.knative.dev/v1',
    kind: 'Service',
    metadata: { name, namespace: 'default', annotations: metaAnnotations },
    spec: { template: { metadata: { annotations }, spec: { containers: [{ image: 'nginx:1.27', ports: [{ containerPort: 8080 }] }] } }, ...extra },
  };
}

const moduleAnnotations = (config: object) => ({ 'tidal.dev/module': MODULE, 'tidal.dev/module-config': JSON.stringify(config) });

async function serviceReadyOn(name: string, rev: string): Promise<KService> {
  return eventually(
    `Service ${name} Ready on ${rev}`,
    async () => {
      const s = await getObject<KService>('ksvc', name);
      return s?.status?.latestReadyRevisionName === rev && cond(s, 'Ready')?.status === 'True' ? s : undefined;
    },
    120_000,
  );
}

const deploymentWithFields = (name: string) => kubectlJson<Deployment>(['get', 'deployment', name, '--show-managed-fields']);

describe('a module Service next to a plain one', () => {
  it('the module Revision gets its Deployment from the operator: its sidecar, no queue-proxy; Tidal keeps the Service', async () => {
    await apply(service('mod-plain', {}));
    await apply(
      service(
        'mod-side',
        moduleAnnotations({ sidecarImage: SIDECAR_IMAGE, logLevel: 'debug' }),
        {},
        { 'serving.knative.dev/rollout-duration': '20s' },
      ),
    );
    const rev = await revisionReady<Revision>('mod-side-00001');
    // The module annotations reached the Revision unchanged.
    expect(rev.metadata.annotations?.['tidal.dev/module']).toBe(MODULE);
    expect(JSON.parse(rev.metadata.annotations?.['tidal.dev/module-config'] ?? '')).toEqual({ sidecarImage: SIDECAR_IMAGE, logLevel: 'debug' });
    // Readiness came from the operator's conditions; Tidal computed Ready from them.
    expect(cond(rev, 'ResourcesAvailable')?.status).toBe('True');
    expect(cond(rev, 'ContainerHealthy')?.status).toBe('True');
    await serviceReadyOn('mod-side', 'mod-side-00001');

    const dep = await deploymentWithFields('mod-side-00001-deployment');
    const containers = dep.spec.template.spec.containers;
    expect(containers.map((c) => c.name)).toContain(MODULE);
    expect(containers.map((c) => c.name)).not.toContain('queue-proxy');
    expect(containers.find((c) => c.name === MODULE)).toMatchObject({ image: SIDECAR_IMAGE, ports: [{ name: 'http', containerPort: 8012 }] });
    expect(dep.metadata.ownerReferences).toEqual([expect.objectContaining({ kind: 'Revision', name: 'mod-side-00001', controller: true })]);
    // Created by the operator's server-side apply; Tidal (field manager `tidal`) never wrote it.
    const managers = (dep.metadata.managedFields ?? []).map((f) => `${f.manager}/${f.operation}`);
    expect(managers).toContain('sidecar-example-operator/Apply');
    expect(managers.filter((m) => m.startsWith('tidal/'))).toEqual([]);
    // No HPA or PodDisruptionBudget from Tidal for it; the plain Revision has its PDB (hakn's default).
    expect(await getObject('pdb', 'mod-side-00001')).toBeUndefined();
    await revisionReady<Revision>('mod-plain-00001');
    await eventually('PDB of the plain Revision', () => getObject('pdb', 'mod-plain-00001'), 60_000);

    // The revision Service is Tidal's and selects the operator's pods; its port is queue-proxy's, the sidecar's.
    const svc = await getObject<{ spec: { selector: Record<string, string>; ports: { port: number; targetPort: number }[] } }>(
      'service',
      'mod-side-00001',
    );
    expect(svc?.spec.selector).toEqual({ 'serving.knative.dev/revisionUID': rev.metadata.uid });
    expect(svc?.spec.ports).toEqual([expect.objectContaining({ port: 80, targetPort: 8012 })]);
    expect(dep.spec.template.metadata.labels['serving.knative.dev/revisionUID']).toBe(rev.metadata.uid);

    // The plain Service is untouched by the module: Tidal's Deployment, no sidecar.
    const plain = await deploymentWithFields('mod-plain-00001-deployment');
    expect(plain.spec.template.spec.containers.map((c) => c.name)).not.toContain(MODULE);
    expect((plain.metadata.managedFields ?? []).map((f) => f.manager)).toContain('tidal');
  });

  it("the Revision's Temporal history says the Deployment is left to the module", async () => {
    const history = await t.client.workflow.getHandle('Revision/default/mod-side-00001').fetchHistory();
    const summaries = historySteps(history).map((s) => s.summary);
    expect(summaries.join('\n')).toContain('update Revision default/mod-side-00001 status');
    // The resources step's result (the local activity's marker): only the Service, the Deployment left to the module.
    const results = (history.events ?? []).flatMap((e) =>
      Object.values(e.markerRecordedEventAttributes?.details ?? {}).flatMap((p) =>
        (p.payloads ?? []).map((x) => Buffer.from(x.data ?? new Uint8Array()).toString()),
      ),
    );
    expect(results.find((r) => r.includes('"outcome":"module"'))).toMatch(/"module":"sidecar-example","service":"(created|unchanged|updated)"/);
  });

  it('a module-config change makes a new Revision, rolled out gradually, with the new config in its sidecar', async () => {
    const config = { sidecarImage: SIDECAR_IMAGE, logLevel: 'warn' };
    await apply(service('mod-side', moduleAnnotations(config), {}, { 'serving.knative.dev/rollout-duration': '20s' }));
    const rev = await revisionReady<Revision>('mod-side-00002');
    expect(JSON.parse(rev.metadata.annotations?.['tidal.dev/module-config'] ?? '')).toEqual(config);
    // The rollout: a moment when both module Revisions share the traffic, then all of it on the new one.
    await eventually(
      'a split mid-rollout',
      async () => {
        const traffic = (await getObject<KService>('ksvc', 'mod-side'))?.status?.traffic ?? [];
        const next = traffic.find((x) => x.revisionName === 'mod-side-00002')?.percent ?? 0;
        return next > 0 && next < 100;
      },
      60_000,
      100,
    );
    await eventually(
      'rollout finished',
      async () => {
        const traffic = (await getObject<KService>('ksvc', 'mod-side'))?.status?.traffic ?? [];
        return traffic.length === 1 && traffic[0]?.revisionName === 'mod-side-00002' && traffic[0].percent === 100;
      },
      90_000,
    );
    const dep = await getObject<Deployment>('deployment', 'mod-side-00002-deployment');
    const env = dep?.spec.template.spec.containers.find((c) => c.name === MODULE)?.env ?? [];
    expect(env).toEqual(
      expect.arrayContaining([
        { name: 'SIDECAR_LOG_LEVEL', value: 'warn' },
        { name: 'MODULE_CONFIG', value: JSON.stringify(config) },
      ]),
    );
  });

  it('a traffic split between the two module Revisions lands in the KIngress', async () => {
    await apply(
      service('mod-side', moduleAnnotations({ sidecarImage: SIDECAR_IMAGE, logLevel: 'warn' }), {
        traffic: [
          { revisionName: 'mod-side-00001', percent: 30 },
          { revisionName: 'mod-side-00002', percent: 70 },
        ],
      }),
    );
    const ing = await eventually(
      'KIngress 30/70',
      async () => {
        const i = await getObject<KIngress>('ingresses.networking.internal.knative.dev', 'mod-side');
        const splits = i?.spec.rules[0]?.http.paths[0]?.splits ?? [];
        return splits.length === 2 ? i : undefined;
      },
      60_000,
    );
    const splits = ing.spec.rules[0]?.http.paths[0]?.splits ?? [];
    expect(splits.map((s) => [s.serviceName, s.percent, s.servicePort]).sort()).toEqual([
      ['mod-side-00001', 30, 80],
      ['mod-side-00002', 70, 80],
    ]);
    await eventually(
      'Service Ready with the split',
      async () => cond(await getObject<KService>('ksvc', 'mod-side'), 'Ready')?.status === 'True',
      60_000,
    );
  });
});

describe('revision GC collects a module Revision', () => {
  // The e2e stack runs Knative's config-gc (keep 20 for 48 h); hakn's shipped values delete a `reserve` Revision at once.
  const gcKeys = ['min-non-active-revisions', 'max-non-active-revisions', 'retain-since-create-time', 'retain-since-last-active-time'];
  const setGc = (data: Record<string, string | null>) =>
    kubectl(['patch', 'configmap', 'config-gc', '-n', 'knative-serving', '--type=merge', '-p', JSON.stringify({ data })]);
  afterAll(async () => {
    await setGc(Object.fromEntries(gcKeys.map((k) => [k, null])));
  });

  it('the Revision no longer routed goes, and its operator-made Deployment with it (ownerReferences)', async () => {
    await apply(service('mod-side', moduleAnnotations({ sidecarImage: SIDECAR_IMAGE, logLevel: 'warn' })));
    await eventually(
      'all traffic on mod-side-00002',
      async () => {
        const traffic = (await getObject<KService>('ksvc', 'mod-side'))?.status?.traffic ?? [];
        return traffic.length === 1 && traffic[0]?.revisionName === 'mod-side-00002';
      },
      60_000,
    );
    await setGc({
      'min-non-active-revisions': '0',
      'max-non-active-revisions': '0',
      'retain-since-create-time': 'disabled',
      'retain-since-last-active-time': 'disabled',
    });
    await eventually('mod-side-00001 collected', async () => (await getObject('revision', 'mod-side-00001')) === undefined, 60_000);
    await eventually('its Deployment gone', async () => (await getObject('deployment', 'mod-side-00001-deployment')) === undefined, 60_000);
    const deleted = 'Deleted Revision "mod-side-00001"';
    const events = await eventsWhen('involvedObject.kind=Configuration,involvedObject.name=mod-side,reason=RevisionDeleted', (evs) =>
      evs.some((e) => e.message.includes(deleted)),
    );
    expect(events.map((e) => e.message).join('\n')).toContain(deleted);
    // The latest module Revision stays, Ready.
    expect(cond(await getObject<Revision>('revision', 'mod-side-00002'), 'Ready')?.status).toBe('True');
  });
});

describe('a module name must be known', () => {
  it('a typo is refused by the API with a message that names it and the known modules', async () => {
    const err = await apply(service('mod-typo', { 'tidal.dev/module': 'sidecar-exmaple' })).then(
      () => '',
      (e: unknown) => String(e),
    );
    expect(err).toContain('unknown module "sidecar-exmaple"; known modules: sidecar-example');
    expect(err).toContain('spec.template.metadata.annotations.tidal.dev/module');
    expect(await getObject('ksvc', 'mod-typo')).toBeUndefined();
  });

  it('a module configuration that is not a JSON object is refused with the field', async () => {
    const err = await apply(service('mod-typo', { 'tidal.dev/module': MODULE, 'tidal.dev/module-config': '["sidecarImage"]' })).then(
      () => '',
      (e: unknown) => String(e),
    );
    expect(err).toContain('invalid module configuration: must be a JSON object, not an array');
    expect(err).toContain('spec.template.metadata.annotations.tidal.dev/module-config');
  });

  it('config-modules itself is validated: a bad module name is refused', async () => {
    const err = await kubectl([
      'patch',
      'configmap',
      'config-modules',
      '-n',
      'knative-serving',
      '--type=merge',
      '-p',
      '{"data":{"Sidecar_Example":"x"}}',
    ]).then(
      () => '',
      (e: unknown) => String(e),
    );
    expect(err).toContain('module name must be a DNS-1123 label');
  });
});
