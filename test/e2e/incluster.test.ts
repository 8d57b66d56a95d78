// deploy/ against the API server, and the controller run the in-cluster way under deploy/'s RBAC: the
// ServiceAccount `controller`'s token, the cluster CA and the namespace at /var/run/secrets/kubernetes.io/
// serviceaccount (a private mount namespace, as a pod has), KUBERNETES_SERVICE_HOST/PORT, no kubeconfig. It replaces
// the stack's controller for this file (same ports, so the webhook balancer reaches it) and puts it back at the end.
import { execFile } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import type { Condition, Revision, Service } from '../../api/serving.js';
import { pushImage } from '../../dev/oci-images.js';
import { isAlive, ProcessTable } from '../../dev/processes.js';
import { startController, testPorts, type StackInfo } from '../../dev/stack.js';
import { IN_CLUSTER_SA, serviceAccountMount, startInClusterController } from '../../dev/incluster.js';
import { CONTROLLER_NODE_FLAGS } from '../../workers/node-flags.js';
import { builtController } from '../../workers/build.js';
import { apply, eventsWhen, getObject, kubectl, kubectlJson, stack } from '../harness/cluster.js';
import { eventually } from '../harness/wait.js';

const log = (s: string) => console.error(`[incluster] ${s}`);
const deployDir = fileURLToPath(new URL('../../deploy/', import.meta.url));
const SA = IN_CLUSTER_SA;
const saMount = serviceAccountMount;
const CONTROLLER = 'tidal-controller';
let procs: ProcessTable;
let info: StackInfo;
let pid = 0;
let logFile = '';
let logStart = 0;

const cond = (o: { status?: { conditions?: Condition[] } } | undefined, type: string) => o?.status?.conditions?.find((c) => c.type === type);

function ksvc(name: string, image: string, spec: Record<string, unknown> = {}): object {
  return {
    apiVersion: 'serving.knative.dev/v1',
    kind: 'Service',
    metadata: { name, namespace: 'default', labels: { 'tidal.dev/suite': 'incluster' } },
    spec: { template: { spec: { ...spec, containers: [{ image, ports: [{ containerPort: 8080 }] }] } } },
  };
}

/** `kubectl auth can-i` as the ServiceAccount: 'yes' or 'no' (it exits 1 for no). */
function canI(verb: string, resource: string, namespace: string): Promise<string> {
  const s = stack();
  return new Promise((resolve, reject) => {
    execFile(
      s.bins.KUBECTL,
      ['--kubeconfig', s.kubeconfig, 'auth', 'can-i', verb, resource, '-n', namespace, `--as=${SA}`],
      (err, stdout, stderr) => {
        const out = stdout.trim();
        if (out === 'yes' || out === 'no') resolve(out);
        else reject(new Error(`kubectl auth can-i ${verb} ${resource}: ${stderr || err?.message}`));
      },
    );
  });
}

/** The controller as a pod runs it (dev/incluster.ts), replacing the stack's: ready, with its start-up figures logged. */
async function startInCluster(): Promise<void> {
  const s = stack();
  logFile = path.join(s.dir, 'logs', `${CONTROLLER}.log`);
  logStart = existsSync(logFile) ? statSync(logFile).size : 0;
  const started = Date.now();
  const rec = await startInClusterController(info, procs, { ports: testPorts, controllerEnv: s.controllerEnv }, CONTROLLER);
  pid = rec.pid;
  await eventually(
    'the in-cluster controller ready',
    async () => {
      const res = await fetch(`http://127.0.0.1:${testPorts.controllerMetrics}/readyz`).catch(() => undefined);
      if (!isAlive(rec.pid)) throw new Error(`exited: ${readFileSync(rec.log, 'utf8').split('\n').slice(-15).join('\n')}`);
      return res?.ok;
    },
    120_000,
    100,
  );
  // Start-up figures (reported, not asserted): wall time to ready, and the CPU the process itself spent on it.
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
  const cpuMs = ((Number(stat[11]) + Number(stat[12])) * 1000) / 100; // utime + stime, in USER_HZ ticks
  const rssMiB = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]) / 1024;
  log(`in-cluster controller ready in ${Date.now() - started} ms (token and RBAC included); CPU ${cpuMs} ms; RSS ${rssMiB.toFixed(0)} MiB`);
}

beforeAll(async () => {
  const s = stack();
  procs = new ProcessTable(s.dir);
  info = { dir: s.dir, kubeconfig: s.kubeconfig, temporalAddress: s.temporalAddress, temporalUi: undefined, bins: s.bins, ports: testPorts };
});

afterAll(async () => {
  // Leave the stack as the other files expect it: the RBAC as shipped, the usual controller running.
  await kubectl(['apply', '--server-side', '--force-conflicts', '-f', path.join(deployDir, 'rbac')]).catch(() => '');
  if (procs.running(CONTROLLER)?.pid === pid) await procs.stop(CONTROLLER, 30_000);
  await startController(info, procs, { ports: testPorts, controllerEnv: stack().controllerEnv }, log);
  await kubectl(['delete', 'ksvc', '-l', 'tidal.dev/suite=incluster', '--ignore-not-found', '--wait=false']).catch(() => '');
});

describe('deploy/ on the API server', () => {
  it('kubectl apply --dry-run=server of deploy/ accepts every object, Service-form webhooks included', async () => {
    const rendered = parseAllDocuments(await kubectl(['kustomize', deployDir])).map(
      (d) => d.toJS() as { kind: string; metadata: { name: string; namespace?: string } },
    );
    // The stack registered the webhook configurations with a loopback url; applied over them, the Service form would
    // leave both set (a union server-side apply cannot resolve). Under other names they are validated as created.
    const isWebhookConfiguration = (o: { kind: string }) => /^(Mutating|Validating)WebhookConfiguration$/.test(o.kind);
    for (const o of rendered) if (isWebhookConfiguration(o)) o.metadata.name = `dry-run.${o.metadata.name}`;
    const out = await kubectl(
      ['apply', '--server-side', '--force-conflicts', '--field-manager=tidal-dry-run', '--dry-run=server', '-f', '-'],
      rendered.map((o) => JSON.stringify(o)).join('\n---\n'),
    );
    const lines = out.trim().split('\n');
    expect(lines.length).toBe(rendered.length);
    for (const l of lines) expect(l).toMatch(/ serverside-applied \(server dry run\)$/);
    for (const o of rendered) expect(out, `${o.kind} ${o.metadata.name}`).toContain(`/${o.metadata.name} serverside-applied`);
    // Nothing was written: the Deployment does not exist, the stack's webhook configurations keep their loopback url.
    expect(await getObject('deployment', 'controller', 'knative-serving')).toBeUndefined();
    const mwc = await kubectlJson<{ webhooks: { clientConfig: { url?: string } }[] }>([
      'get',
      'mutatingwebhookconfiguration',
      'webhook.serving.knative.dev',
    ]);
    expect(mwc.webhooks[0]?.clientConfig.url).toMatch(/^https:\/\/127\.0\.0\.1:/);
  });

  it('the controller pod passes Pod Security "restricted" enforcement', async () => {
    const dep = parseAllDocuments(readFileSync(path.join(deployDir, 'controller', 'deployment.yaml'), 'utf8'))[0]?.toJS() as {
      spec: { template: { metadata: object; spec: { containers: { securityContext: Record<string, unknown> }[] } } };
    };
    await kubectl(['create', 'namespace', 'ic-restricted']).catch(() => '');
    await kubectl(['label', 'namespace', 'ic-restricted', 'pod-security.kubernetes.io/enforce=restricted', '--overwrite']);
    try {
      const pod = (spec: object) =>
        JSON.stringify({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'controller', namespace: 'ic-restricted' }, spec });
      const out = await kubectl(['create', '--dry-run=server', '-f', '-'], pod(dep.spec.template.spec));
      expect(out).toContain('pod/controller created (server dry run)');
      // Enforcement is on: the same pod allowed to escalate privileges is refused.
      const lax = structuredClone(dep.spec.template.spec);
      lax.containers[0]!.securityContext = { ...lax.containers[0]!.securityContext, allowPrivilegeEscalation: true };
      await expect(kubectl(['create', '--dry-run=server', '-f', '-'], pod(lax))).rejects.toThrow(/violates PodSecurity "restricted/);
    } finally {
      await kubectl(['delete', 'namespace', 'ic-restricted', '--wait=false']).catch(() => '');
    }
  });

  it('the ServiceAccount may do what deploy/README.md lists and nothing more (auth can-i --list)', async () => {
    await kubectl(['apply', '--server-side', '--force-conflicts', '-f', path.join(deployDir, 'rbac')]);
    const list = await kubectl(['auth', 'can-i', '--list', `--as=${SA}`, '-n', 'default']);
    // What every authenticated identity may do (system:basic-user, system:discovery, system:public-info-viewer).
    const everyone = new Set([
      'selfsubjectreviews.authentication.k8s.io',
      'selfsubjectaccessreviews.authorization.k8s.io',
      'selfsubjectrulesreviews.authorization.k8s.io',
    ]);
    const readme = readFileSync(path.join(deployDir, 'README.md'), 'utf8');
    const granted = new Map<string, Set<string>>();
    for (const line of readme.slice(readme.indexOf('## RBAC')).split('\n')) {
      const cells = line.split('|').map((c) => c.trim());
      if (cells[1] !== 'cluster' || cells[5]) continue; // cluster-wide rows without resource names
      for (const res of (cells[3] ?? '').split(', ')) {
        // kubectl prints `<resource>.<group>/<subresource>`.
        const [base, sub] = res.split('/') as [string, string | undefined];
        const key = `${base}${cells[2] === '(core)' ? '' : `.${cells[2] ?? ''}`}${sub ? `/${sub}` : ''}`;
        granted.set(key, new Set([...(granted.get(key) ?? []), ...(cells[4] ?? '').split(', ')]));
      }
    }
    let rows = 0;
    for (const row of list.split('\n').slice(1)) {
      const m = /^(\S+)\s+\[\]\s+\[(.*?)\]\s+\[(.*)\]$/.exec(row.trim());
      if (!m) continue; // non-resource URLs
      const [, resource, names, verbs] = m as unknown as [string, string, string, string];
      if (everyone.has(resource ?? '')) continue;
      rows++;
      if (names !== '') continue; // named grants: the webhook configurations (checked below)
      const want = granted.get(resource);
      expect(want, `can-i --list shows ${resource} [${verbs}], which deploy/README.md does not justify`).toBeDefined();
      for (const v of verbs.split(' ')) expect(want, `${resource} ${v}`).toContain(v);
    }
    expect(rows).toBeGreaterThan(15);
    // Narrowed grants and grants left out on purpose.
    expect(await canI('patch', 'mutatingwebhookconfigurations/webhook.serving.knative.dev', 'default')).toBe('yes');
    expect(await canI('patch', 'mutatingwebhookconfigurations/another', 'default')).toBe('no');
    // istio-system: the gateway certificate and the KIngresses' TLS Secret copies (names with the origin's uid).
    expect(await canI('patch', 'secrets/tls-cert', 'istio-system')).toBe('yes');
    expect(await canI('patch', 'secrets/hello-0f1e2d3c', 'istio-system')).toBe('yes');
    expect(await canI('patch', 'secrets/other', 'default')).toBe('no');
    expect(await canI('patch', 'secrets/webhook-certs', 'knative-serving')).toBe('yes');
    expect(await canI('list', 'secrets', 'default')).toBe('no');
    expect(await canI('delete', 'revisions.serving.knative.dev', 'default')).toBe('yes'); // revision GC
    expect(await canI('delete', 'services.serving.knative.dev', 'default')).toBe('no');
    expect(await canI('delete', 'configurations.serving.knative.dev', 'default')).toBe('no');
    expect(await canI('delete', 'deployments.apps', 'default')).toBe('no');
    expect(await canI('update', 'leases.coordination.k8s.io', 'knative-serving')).toBe('yes');
    expect(await canI('update', 'leases.coordination.k8s.io', 'default')).toBe('no');
  });
});

describe('the controller run the in-cluster way', () => {
  let digest = '';
  let registryHost = '';

  beforeAll(async () => {
    await kubectl(['apply', '--server-side', '--force-conflicts', '-f', path.join(deployDir, 'rbac')]);
    // The stack's controller (admin kubeconfig) goes; so do the two certificates, which the new one must create.
    await procs.stop(CONTROLLER, 30_000);
    await kubectl(['delete', 'secret', 'tls-cert', '-n', 'istio-system', '--ignore-not-found']);
    await kubectl(['delete', 'secret', 'webhook-certs', '-n', 'knative-serving', '--ignore-not-found']);
    await startInCluster();
    const priv = stack().registries.private;
    registryHost = priv.host;
    const password = priv.users.tidal ?? '';
    digest = (await pushImage(priv, { repository: 'tidal/incluster', tag: 'v1', user: 'tidal', password })).digest;
    const auth = Buffer.from(`tidal:${password}`).toString('base64');
    const config = JSON.stringify({ auths: { [priv.host]: { username: 'tidal', password, auth } } });
    await apply({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'ic-regcred', namespace: 'default' },
      type: 'kubernetes.io/dockerconfigjson',
      data: { '.dockerconfigjson': Buffer.from(config).toString('base64') },
    });
    await apply({
      apiVersion: 'v1',
      kind: 'ServiceAccount',
      metadata: { name: 'ic-puller', namespace: 'default' },
      imagePullSecrets: [{ name: 'ic-regcred' }],
    });
  });

  it('has no kubeconfig, only the ServiceAccount files at the in-cluster paths', () => {
    const environ = readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0');
    expect(environ.some((e) => e.startsWith('KUBECONFIG='))).toBe(false);
    expect(environ).toContain(`KUBERNETES_SERVICE_PORT=${testPorts.apiserver}`);
    // /var/run is a symlink to /run, which /proc/<pid>/root would resolve in this process's root: name /run itself.
    expect(readFileSync(`/proc/${pid}/root/run/secrets/kubernetes.io/serviceaccount/namespace`, 'utf8')).toBe('knative-serving');
    expect(existsSync(saMount)).toBe(false); // only that process sees them
    expect(
      readFileSync(`/proc/${pid}/cmdline`, 'utf8')
        .split('\0')
        .slice(1, 2 + CONTROLLER_NODE_FLAGS.length),
    ).toEqual([...CONTROLLER_NODE_FLAGS, builtController]);
  });

  it('creates the webhook and gateway certificates and publishes the CA', async () => {
    const tls = await eventually('Secret istio-system/tls-cert', () => getObject<{ type: string }>('secret', 'tls-cert', 'istio-system'), 60_000);
    expect(tls.type).toBe('kubernetes.io/tls');
    const certs = await eventually(
      'Secret knative-serving/webhook-certs',
      () => getObject<{ data: Record<string, string> }>('secret', 'webhook-certs', 'knative-serving'),
      60_000,
    );
    const ca = Buffer.from(certs.data['ca-cert.pem'] ?? '', 'base64').toString('utf8');
    expect(ca).toContain('BEGIN CERTIFICATE');
    await eventually(
      'the new CA in the caBundle',
      async () => {
        const mwc = await kubectlJson<{ webhooks: { clientConfig: { caBundle?: string } }[] }>([
          'get',
          'mutatingwebhookconfiguration',
          'webhook.serving.knative.dev',
        ]);
        return Buffer.from(mwc.webhooks[0]?.clientConfig.caBundle ?? '', 'base64')
          .toString('utf8')
          .includes(ca.trim());
      },
      60_000,
    );
  });

  it('takes a Service to Ready with routing and a digest resolved with a pull secret', async () => {
    await apply(ksvc('ic-private', `${registryHost}/tidal/incluster:v1`, { serviceAccountName: 'ic-puller' }));
    const svc = await eventually(
      'ksvc ic-private Ready',
      async () => {
        const s = await getObject<Service>('ksvc', 'ic-private');
        return cond(s, 'Ready')?.status === 'True' ? s : undefined;
      },
      180_000,
    );
    expect(svc.status?.url).toBe('http://ic-private.default.svc.cluster.local');
    const rev = await getObject<Revision>('revision', 'ic-private-00001');
    expect(rev?.status?.containerStatuses?.[0]?.imageDigest).toBe(`${registryHost}/tidal/incluster@${digest}`);
    const image = await kubectl(['get', 'deployment', 'ic-private-00001-deployment', '-o', 'jsonpath={.spec.template.spec.containers[0].image}']);
    expect(image).toBe(`${registryHost}/tidal/incluster@${digest}`);
    const ing = await getObject<{ status?: { conditions?: Condition[] } }>('ingresses.networking.internal.knative.dev', 'ic-private');
    expect(cond(ing, 'Ready')?.status).toBe('True');
    for (const vs of ['ic-private-ingress', 'ic-private-mesh']) expect(await getObject('virtualservice', vs), vs).toBeDefined();
    // Under deploy/'s RBAC nothing the controller did so far was refused. A refusal reads "403 Forbidden: … is
    // forbidden" (KubeApiError) or carries "code":403; a bare 403 would match a field like "durationMs":403.
    const refused = readFileSync(logFile)
      .subarray(logStart)
      .toString('utf8')
      .split('\n')
      .filter((l) => /forbidden|"code":403\b/i.test(l));
    expect(refused.slice(0, 5)).toEqual([]);
  });

  it('a permission removed from the ClusterRole fails the named step with a clear condition, no crash loop', async () => {
    const role = await kubectlJson<{ rules: { apiGroups: string[]; resources: string[]; verbs: string[] }[] }>([
      'get',
      'clusterrole',
      'knative-serving-controller',
    ]);
    const rule = role.rules.find((r) => r.apiGroups.includes('apps') && r.resources.includes('deployments'));
    expect(rule?.verbs).toContain('create');
    rule!.verbs = rule!.verbs.filter((v) => v !== 'create');
    await kubectl(['replace', '-f', '-'], JSON.stringify(role));
    await eventually('create deployments refused', async () => (await canI('create', 'deployments.apps', 'default')) === 'no', 30_000);

    await apply(ksvc('ic-denied', 'nginx:1.27'));
    // As upstream: the Revision stays Deploying (Unknown: a fix to RBAC can still make it Ready), the refusal in the
    // message and in a Warning InternalError Event.
    const rev = await eventually(
      'Revision ic-denied-00001 refused',
      async () => {
        const r = await getObject<Revision>('revision', 'ic-denied-00001');
        return cond(r, 'ResourcesAvailable')?.message?.includes('failed to create deployment') ? r : undefined;
      },
      120_000,
    );
    const c = cond(rev, 'ResourcesAvailable');
    expect(c).toMatchObject({ status: 'Unknown', reason: 'Deploying' });
    expect(c?.message).toContain('failed to create deployment "ic-denied-00001-deployment"');
    expect(c?.message).toContain(`User "${SA}" cannot create resource "deployments" in API group "apps" in the namespace "default"`);
    expect(cond(rev, 'Ready')?.status).toBe('Unknown');
    const events = await eventsWhen('involvedObject.name=ic-denied-00001,reason=InternalError', (evs) => evs.length > 0);
    expect(events[0]?.type).toBe('Warning');
    // Nothing above the Revision is called failed: its Service waits, Unknown. The Service's status is written by its
    // own pass, which may end after the Revision's refusal is reported.
    const serviceReady = await eventually(
      'ksvc ic-denied reports Ready',
      async () => cond(await getObject<Service>('ksvc', 'ic-denied'), 'Ready'),
      60_000,
    );
    expect(serviceReady.status).toBe('Unknown');
    // The process neither crashed nor restarted, and says it is alive.
    expect(procs.running(CONTROLLER)?.pid).toBe(pid);
    expect((await fetch(`http://127.0.0.1:${testPorts.controllerMetrics}/healthz`)).status).toBe(200);

    // Given back, the step's retries succeed by themselves.
    await kubectl(['apply', '--server-side', '--force-conflicts', '-f', path.join(deployDir, 'rbac', 'clusterrole.yaml')]);
    await eventually(
      'ksvc ic-denied Ready once the permission is back',
      async () => cond(await getObject<Service>('ksvc', 'ic-denied'), 'Ready')?.status === 'True',
      120_000,
    );
    expect(procs.running(CONTROLLER)?.pid).toBe(pid);
  });
});
