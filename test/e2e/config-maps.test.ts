// The config maps users edit, at kubectl: config-observability's log URL reaches each Revision's status,
// config-istio's gateways reach the VirtualServices and the KIngress status, config-leader-election sets the Lease
// when a replica starts, config-logging changes the webhook's log level live; a bad value of each is refused by the
// config webhook with the key and the reason.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startController, testPorts, type StackInfo } from '../../dev/stack.js';
import { ProcessTable } from '../../dev/processes.js';
import type { Revision } from '../../api/serving.js';
import { apply, getObject, kubectl, kubectlJson, revisionReady, stack, patchConfigMap } from '../harness/cluster.js';
import { eventually } from '../harness/wait.js';

const log = (s: string) => console.error(`[config-maps] ${s}`);
const refusedBy = 'admission webhook "config.webhook.serving.knative.dev" denied the request: validation failed:';

const patch = patchConfigMap;

const service = (name: string) => ({
  apiVersion: 'serving.knative.dev/v1',
  kind: 'Service',
  metadata: { name, namespace: 'default' },
  spec: { template: { spec: { containers: [{ image: 'nginx:1.27', ports: [{ containerPort: 8080 }] }] } } },
});

/** The refusal of a config map edit (kubectl's error text). */
async function refusal(name: string, data: Record<string, string>): Promise<string> {
  try {
    await patch(name, data);
  } catch (e) {
    return String(e);
  }
  throw new Error(`config map ${name} accepted ${JSON.stringify(data)}`);
}

afterAll(async () => {
  await patch('config-observability', { 'logging.revision-url-template': null }).catch(() => '');
  await patch('config-istio', { 'local-gateway.knative-serving.edge-local': null }).catch(() => '');
  await patch('config-logging', { 'loglevel.webhook': null }).catch(() => '');
  await kubectl(['delete', 'ksvc', 'cm-logs', 'cm-gateways', '--ignore-not-found', '--wait=false']);
});

describe('config-observability', () => {
  it('logging.revision-url-template gives each Revision its status.logUrl, new and existing', async () => {
    await apply(service('cm-logs'));
    const first = await revisionReady<Revision>('cm-logs-00001');
    expect(first.status?.logUrl).toBeUndefined();
    await patch('config-observability', { 'logging.revision-url-template': 'http://logs.example.com/?rev=${REVISION_UID}' });
    const rev = await eventually(
      'logUrl on the existing Revision',
      async () => {
        const r = await getObject<Revision>('revision', 'cm-logs-00001');
        return r?.status?.logUrl !== undefined ? r : undefined;
      },
      60_000,
    );
    expect(rev.status?.logUrl).toBe(`http://logs.example.com/?rev=${rev.metadata.uid ?? ''}`);
  });

  it('a bad value is refused with the key and the reason', async () => {
    const err = await refusal('config-observability', { 'metrics-protocol': 'statsd' });
    expect(err).toContain(`${refusedBy} unsupported protocol "statsd": metrics-protocol`);
  });
});

describe('config-istio', () => {
  it('a local gateway named in config-istio binds the VirtualService and is the KIngress private load balancer, until removed', async () => {
    await patch('config-istio', { 'local-gateway.knative-serving.edge-local': 'edge-local.istio-system.svc.cluster.local' });
    await apply(service('cm-gateways'));
    // config-domain makes every Route cluster-local: its rules are served by the local gateways.
    const vs = await eventually(
      'VirtualService on the configured gateway',
      async () => {
        const v = await getObject<{ spec: { gateways?: string[] } }>('virtualservices.networking.istio.io', 'cm-gateways-ingress');
        return v?.spec.gateways?.includes('knative-serving/edge-local') ? v : undefined;
      },
      90_000,
    );
    expect(vs.spec.gateways).toEqual(['knative-serving/edge-local']);
    const ing = await eventually(
      'KIngress status names the configured Service',
      async () => {
        const i = await getObject<{ status?: { privateLoadBalancer?: { ingress?: { domainInternal?: string }[] } } }>(
          'ingresses.networking.internal.knative.dev',
          'cm-gateways',
        );
        return i?.status?.privateLoadBalancer?.ingress?.[0]?.domainInternal === 'edge-local.istio-system.svc.cluster.local' ? i : undefined;
      },
      60_000,
    );
    expect(ing.status?.privateLoadBalancer?.ingress).toEqual([{ domainInternal: 'edge-local.istio-system.svc.cluster.local' }]);
    // Without the key the default gateway comes back, on the existing Route's VirtualService too.
    await patch('config-istio', { 'local-gateway.knative-serving.edge-local': null });
    await eventually(
      'VirtualService back on the default local gateway',
      async () => {
        const v = await getObject<{ spec: { gateways?: string[] } }>('virtualservices.networking.istio.io', 'cm-gateways-ingress');
        return JSON.stringify(v?.spec.gateways) === JSON.stringify(['knative-serving/knative-local-gateway']);
      },
      60_000,
    );
  });

  it('a gateway without a service is refused with the key and the reason', async () => {
    const err = await refusal('config-istio', { 'gateway.knative-serving.broken': '' });
    expect(err).toContain(
      `${refusedBy} invalid configuration: invalid gateway knative-serving/broken: missing service: gateway.knative-serving.broken`,
    );
  });
});

describe('config-leader-election', () => {
  const procs = () => new ProcessTable(stack().dir);
  const info = (): StackInfo => {
    const s = stack();
    return { dir: s.dir, kubeconfig: s.kubeconfig, temporalAddress: s.temporalAddress, temporalUi: undefined, bins: s.bins, ports: testPorts };
  };
  const restartController = async () => {
    const table = procs();
    await table.stop('tidal-controller', 30_000);
    await startController(info(), table, { ports: testPorts, controllerEnv: stack().controllerEnv }, log);
  };
  const leaseSeconds = async () =>
    (await kubectlJson<{ spec: { leaseDurationSeconds?: number } }>(['get', 'lease', 'tidal-controller', '-n', 'knative-serving'])).spec
      .leaseDurationSeconds;

  afterAll(async () => {
    await patch('config-leader-election', { 'lease-duration': '3s' });
    await restartController();
  });

  it('a replica that starts takes its Lease timings from the map', async () => {
    expect(await leaseSeconds()).toBe(3);
    await patch('config-leader-election', { 'lease-duration': '4s' });
    await restartController();
    await eventually('Lease of 4 s', async () => (await leaseSeconds()) === 4, 30_000);
  });

  it('timings the elector cannot run with and a bucket count out of range are refused with the key and the reason', async () => {
    expect(await refusal('config-leader-election', { 'renew-deadline': '10s' })).toContain(
      `${refusedBy} must be positive and shorter than the lease duration (4s), got "10s": renew-deadline`,
    );
    expect(await refusal('config-leader-election', { buckets: '11' })).toContain(
      `${refusedBy} buckets: value must be between 1 <= 11 <= 10: buckets`,
    );
  });
});

describe('config-logging', () => {
  const logFile = () => path.join(stack().dir, 'logs', 'tidal-controller.log');
  const linesSince = (offset: number) => readFileSync(logFile(), 'utf8').slice(offset);
  const bad = service('cm-refused');
  const badService = JSON.stringify({
    ...bad,
    spec: { template: { ...bad.spec.template, metadata: { annotations: { 'autoscaling.knative.dev/min-scale': '-3' } } } },
  });
  const refuseOnce = () => kubectl(['apply', '--dry-run=server', '-f', '-'], badService).catch(() => '');

  it('loglevel.webhook changes the webhook log level live', async () => {
    // At error the webhook does not log its refusals (info); the config logger still reports the change.
    let offset = readFileSync(logFile(), 'utf8').length;
    await patch('config-logging', { 'loglevel.webhook': 'error' });
    await eventually('config-logging applied', async () => linesSince(offset).includes('"name":"config-logging"'), 30_000);
    offset = readFileSync(logFile(), 'utf8').length;
    await refuseOnce();
    await new Promise((r) => setTimeout(r, 1000));
    expect(linesSince(offset)).not.toContain('admission refused');
    // Back to debug: the next refusal is logged.
    offset = readFileSync(logFile(), 'utf8').length;
    await patch('config-logging', { 'loglevel.webhook': 'debug' });
    await eventually('config-logging applied', async () => linesSince(offset).includes('"name":"config-logging"'), 30_000);
    await eventually(
      'refusal logged',
      async () => {
        await refuseOnce();
        return linesSince(offset).includes('admission refused');
      },
      30_000,
    );
  });

  it('an unknown level is refused with the key and the reason', async () => {
    expect(await refusal('config-logging', { 'loglevel.controller': 'verbose' })).toContain(
      `${refusedBy} invalid logging level: verbose: loglevel.controller`,
    );
  });
});
