// The admission webhook as kubectl users meet it: defaults stored and visible in `kubectl get -o yaml`,
// invalid objects refused with field and reason, and no failed apply while the three replicas behind the loopback
// balancer are restarted one by one (SIGTERM, drained); when one is killed (SIGKILL), only the requests it was
// answering may fail.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { replicaPorts, startController, testPorts, type StackInfo } from '../../dev/stack.js';
import { ProcessTable } from '../../dev/processes.js';
import { kubectl, stack } from '../harness/cluster.js';

const log = (s: string) => console.error(`[webhook] ${s}`);
let procs: ProcessTable;
let info: StackInfo;

/** Replica i: its process name and ports (0 is the stack's own controller). */
const replicas = [0, 1, 2].map((i) => ({
  name: i === 0 ? 'tidal-controller' : `tidal-webhook-${i}`,
  ports: replicaPorts(testPorts, i),
  identity: `webhook-${i}`,
}));

async function startReplica(r: (typeof replicas)[number]): Promise<void> {
  const env = r.name === 'tidal-controller' ? stack().controllerEnv : { ...stack().controllerEnv, TIDAL_IDENTITY: r.identity };
  await startController(info, procs, { ports: r.ports, controllerEnv: env }, log, r.name);
}

beforeAll(async () => {
  const s = stack();
  procs = new ProcessTable(s.dir);
  info = { dir: s.dir, kubeconfig: s.kubeconfig, temporalAddress: s.temporalAddress, temporalUi: undefined, bins: s.bins, ports: testPorts };
  for (const r of replicas) await startReplica(r);
});

afterAll(async () => {
  // Leave the stack as the other files expect it: the main controller running, the extra replicas gone.
  await startReplica(replicas[0]!);
  for (const r of replicas.slice(1)) await procs.stop(r.name, 30_000);
  await kubectl(['delete', 'ksvc', '-l', 'tidal.dev/suite=webhook', '--ignore-not-found', '--wait=false']).catch(() => '');
});

const svc = (name: string, extra: { spec?: object; template?: object; container?: object; labels?: Record<string, string> } = {}) => ({
  apiVersion: 'serving.knative.dev/v1',
  kind: 'Service',
  metadata: { name, namespace: 'default', labels: { 'tidal.dev/suite': 'webhook', ...extra.labels } },
  spec: {
    template: { ...extra.template, spec: { containers: [{ image: 'nginx:1.27', ports: [{ containerPort: 80 }], ...extra.container }] } },
    ...extra.spec,
  },
});

const denied = 'admission webhook "validation.webhook.serving.knative.dev" denied the request: validation failed:';

/** Invalid Services, each with the field path its refusal must name. */
const invalid: { name: string; manifest: object; path: string; reason: string }[] = [
  {
    name: 'traffic',
    manifest: svc('wh-bad-traffic', {
      spec: {
        traffic: [
          { latestRevision: true, percent: 70 },
          { latestRevision: true, percent: 50 },
        ],
      },
    }),
    path: 'spec.traffic',
    reason: 'Traffic targets sum to 120, want 100',
  },
  // A valid DNS subdomain (the API server's own check) but not a DNS-1035 label (Knative's).
  { name: 'name', manifest: svc('wh.bad.name'), path: 'metadata.name', reason: 'not a DNS 1035 label' },
  {
    name: 'min-scale',
    manifest: svc('wh-bad-scale', { template: { metadata: { annotations: { 'autoscaling.knative.dev/min-scale': '-3' } } } }),
    path: 'spec.template.metadata.annotations.autoscaling.knative.dev/min-scale',
    reason: 'expected 0 <= -3 <= 2147483647',
  },
  {
    name: 'port',
    manifest: svc('wh-bad-port', { container: { ports: [{ containerPort: 99999 }] } }),
    path: 'spec.template.spec.containers[0].ports.containerPort',
    reason: 'expected 0 <= 99999 <= 65535',
  },
];

describe('admission webhook', () => {
  it('stores the defaults upstream stores, with the creator from the request', async () => {
    const whoami = (await kubectl(['auth', 'whoami', '-o', 'jsonpath={.status.userInfo.username}'])).trim();
    expect(whoami).not.toBe('');
    await kubectl(['apply', '-f', '-'], JSON.stringify(svc('wh-defaults')));
    const stored = parse(await kubectl(['get', 'ksvc', 'wh-defaults', '-o', 'yaml'])) as {
      metadata: { annotations: Record<string, string> };
      spec: { template: { spec: { containerConcurrency: number; timeoutSeconds: number; containers: { name: string }[] } }; traffic: unknown };
    };
    expect(stored.spec.template.spec.containerConcurrency).toBe(100); // hakn's config-defaults
    expect(stored.spec.template.spec.timeoutSeconds).toBe(300);
    expect(stored.spec.template.spec.containers[0]?.name).toBe('user-container');
    expect(stored.spec.traffic).toEqual([{ latestRevision: true, percent: 100 }]);
    expect(stored.metadata.annotations['serving.knative.dev/creator']).toBe(whoami);
    expect(stored.metadata.annotations['serving.knative.dev/lastModifier']).toBe(whoami);
  });

  it('refuses invalid Services at apply with the field and the reason', async () => {
    for (const bad of invalid) {
      const err = await kubectl(['apply', '-f', '-'], JSON.stringify(bad.manifest)).then(
        () => undefined,
        (e: unknown) => String(e),
      );
      expect(err, bad.name).toContain(denied);
      expect(err, bad.name).toContain(`${bad.reason}`);
      expect(err, bad.name).toContain(`: ${bad.path}`);
    }
    expect(await kubectl(['get', 'ksvc', '-o', 'name'])).not.toContain('wh-bad');
  });

  it('fails no apply while every replica is restarted in turn (SIGTERM), and only what was in flight when one is killed (SIGKILL)', async () => {
    // A few real Services the load keeps updating (labels only: cheap to reconcile), and fresh ones checked with a
    // server-side dry run (both webhooks run, nothing is stored, so 200 applies do not bury two cores in work).
    const updated = ['wh-load-0', 'wh-load-1', 'wh-load-2'];
    for (const n of updated) await kubectl(['apply', '-f', '-'], JSON.stringify(svc(n)));

    const results = { valid: 0, invalid: 0, unexpected: [] as string[], lostToKill: [] as string[] };
    let n = 0;
    let restartsDone = false;
    let killedAt: number | undefined;
    // A SIGKILL cannot answer what the killed replica was answering: the API server does not retry a request whose
    // connection ended mid-way (EOF, reset). Those — started before the kill, failed with such an error — are
    // counted apart; any other failure, and any failure in the SIGTERM phase, is a defect.
    const failed = (what: string, started: number, e: unknown) => {
      const err = String(e);
      if (killedAt !== undefined && started <= killedAt && /EOF|connection reset|broken pipe/u.test(err)) results.lostToKill.push(`${what}: ${err}`);
      else results.unexpected.push(`${what}: ${err}`);
    };
    const one = async (i: number) => {
      const started = Date.now();
      const kind = i % 4;
      if (kind === 3) {
        const bad = invalid[Math.floor(i / 4) % invalid.length]!;
        const err = await kubectl(['apply', '--dry-run=server', '-f', '-'], JSON.stringify(bad.manifest)).then(
          () => 'accepted',
          (e: unknown) => String(e),
        );
        if (err.includes(denied) && err.includes(`: ${bad.path}`)) results.invalid += 1;
        else failed(`invalid ${bad.name} #${i}`, started, err);
        return;
      }
      const manifest = kind === 0 ? svc(updated[i % updated.length]!, { labels: { 'tidal.dev/round': String(i) } }) : svc(`wh-dry-${i}`);
      const args = kind === 0 ? ['apply', '-f', '-'] : ['apply', '--dry-run=server', '-f', '-'];
      await kubectl(args, JSON.stringify(manifest)).then(
        () => (results.valid += 1),
        (e: unknown) => failed(`valid #${i}`, started, e),
      );
    };
    // Four writers until at least 220 applies are done and the restarts are over.
    const writers = Array.from({ length: 4 }, async () => {
      while (n < 220 || !restartsDone) await one(n++);
    });

    const restarts = (async () => {
      await new Promise((r) => setTimeout(r, 2000));
      for (const r of replicas) {
        const before = n;
        log(`SIGTERM ${r.name} after ${before} applies`);
        await procs.stop(r.name, 30_000);
        await startReplica(r);
        log(`${r.name} back after ${n - before} applies meanwhile`);
      }
      const victim = replicas[1]!;
      const rec = procs.running(victim.name);
      expect(rec).toBeDefined();
      log(`SIGKILL ${victim.name} after ${n} applies`);
      killedAt = Date.now();
      process.kill(rec!.pid, 'SIGKILL');
      await new Promise((r) => setTimeout(r, 1000));
      await startReplica(victim);
      await new Promise((r) => setTimeout(r, 2000));
      restartsDone = true;
    })();
    await Promise.all([restarts, ...writers]);

    log(
      `applies: ${n}, valid accepted ${results.valid}, invalid refused ${results.invalid}, in flight at the SIGKILL ${results.lostToKill.length}, unexpected ${results.unexpected.length}`,
    );
    for (const u of [...results.lostToKill, ...results.unexpected]) log(`failed: ${u}`);
    expect(results.unexpected).toEqual([]);
    expect(results.lostToKill.length).toBeLessThanOrEqual(4); // at most one per writer
    expect(results.valid + results.invalid + results.lostToKill.length).toBe(n);
    expect(n).toBeGreaterThanOrEqual(220);
    expect(results.invalid).toBeGreaterThanOrEqual(50);
  }, 600_000);
});
