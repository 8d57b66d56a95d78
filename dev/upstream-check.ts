// Proof that upstream Knative Serving serves on the stack (`stackUp({ controlPlane: 'upstream' })`): a Service of
// Knative's helloworld image, created with kubectl, turns Ready by upstream's controller, answers through the ingress's
// loopback entry point, scales to zero and answers again through the activator.
//
//   tsx dev/upstream-check.ts [--keep] [--no-scale-to-zero]
//   starts a registry and a stack of its own (dev/stack.ts upstreamCheckPorts, folder .tidal/upstream-check), runs the
//   check, prints its figures as JSON and takes everything down again (--keep leaves it running).
import http from 'node:http';
import { existsSync, mkdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startRealNodeRegistry } from './knative-images.js';
import { REAL_NODE_SUBNET, realNodeLeftovers } from './node.js';
import { stopRegistry } from './registry.js';
import { kubectl, repoRoot, stackDown, stackUp, upstreamCheckPorts, type StackInfo } from './stack.js';

/** What helloworld answers. */
export const HELLO_WORLD = 'Hello World! How about some tasty noodles?';

export interface UpstreamCheckOptions {
  /** `<registry>/knative/helloworld:latest` as the stack's registry has it. */
  image: string;
  namespace?: string;
  /** Wait for the Service to scale to zero and ask again through the activator (default true). */
  scaleToZero?: boolean;
  log?: (s: string) => void;
}

export interface UpstreamCheckResult {
  host: string;
  /** kubectl apply → the Service's Ready condition True. */
  readyMs: number;
  /** The first request after Ready: status and time. */
  first: { status: number; ms: number };
  /** Last request → no pod left, and the serverless Service in proxy mode with the activator's address. */
  scaledToZeroMs?: number;
  /** The request to the Service at zero: status and time (a cold start through the activator). */
  fromZero?: { status: number; ms: number };
}

type Stack = Pick<StackInfo, 'kubeconfig' | 'bins' | 'ports'>;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until<T>(what: string, timeoutMs: number, probe: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe().catch(() => undefined);
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs / 1000}s`);
    await sleep(200);
  }
}

/** GET / through the ingress's public loopback entry point with `host` as the Host header. */
function get(port: number, host: string, timeoutMs = 60_000): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.get({ host: '127.0.0.1', port, path: '/', headers: { Host: host }, timeout: timeoutMs }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.on('timeout', () => req.destroy(new Error(`no answer from ${host} in ${timeoutMs} ms`)));
  });
}

async function timedGet(port: number, host: string): Promise<{ status: number; ms: number }> {
  const started = Date.now();
  const res = await get(port, host);
  const ms = Date.now() - started;
  if (res.status !== 200 || res.body.trim() !== HELLO_WORLD) throw new Error(`${host} answered ${res.status}: ${res.body.slice(0, 200)}`);
  return { status: res.status, ms };
}

interface Conditioned {
  spec?: { mode?: string };
  status?: { url?: string; conditions?: { type: string; status?: string; message?: string }[] };
}

const isTrue = (o: Conditioned, type: string) => o.status?.conditions?.find((c) => c.type === type)?.status === 'True';

/**
 * Creates Service `hello` in `namespace` (made fresh, deleted after) and checks that upstream serves it; throws with
 * the reason when it does not. The Revision's stable window is Knative's minimum (6 s), so it scales to zero after
 * that and config-autoscaler's grace period (30 s by default).
 */
export async function checkUpstreamServes(stack: Stack, o: UpstreamCheckOptions): Promise<UpstreamCheckResult> {
  const log = o.log ?? ((s: string) => console.error(`[upstream-check] ${s}`));
  const ns = o.namespace ?? 'upstream-check';
  const port = stack.ports.ingress;
  if (port === undefined) throw new Error('the stack has no ingress port');
  const k = (args: string[], input?: string) => kubectl(stack, args, input);
  const json = async <T>(args: string[]) => JSON.parse(await k([...args, '-o', 'json'])) as T;
  await k(['delete', 'namespace', ns, '--ignore-not-found', '--wait=true', '--timeout=120s']);
  await k(['create', 'namespace', ns]);
  try {
    const ksvc = {
      apiVersion: 'serving.knative.dev/v1',
      kind: 'Service',
      metadata: { name: 'hello', namespace: ns },
      spec: {
        template: {
          metadata: { annotations: { 'autoscaling.knative.dev/window': '6s' } },
          spec: { containers: [{ image: o.image }] },
        },
      },
    };
    const created = Date.now();
    await k(['apply', '-f', '-'], JSON.stringify(ksvc));
    const ready = await until('ksvc hello Ready', 180_000, async () => {
      const s = await json<Conditioned>(['get', 'ksvc', 'hello', '-n', ns]);
      return isTrue(s, 'Ready') ? s : undefined;
    });
    const readyMs = Date.now() - created;
    const host = new URL(ready.status?.url ?? '').host;
    log(`ksvc hello Ready in ${readyMs} ms at ${host}`);
    const first = await timedGet(port, host);
    log(`first answer ${first.status} in ${first.ms} ms`);
    const result: UpstreamCheckResult = { host, readyMs, first };
    if (o.scaleToZero === false) return result;

    const idleSince = Date.now();
    await until('scaled to zero with the activator in the path', 240_000, async () => {
      const pods = await json<{ items: unknown[] }>(['get', 'pods', '-n', ns, '-l', 'serving.knative.dev/service=hello']);
      if (pods.items.length > 0) return undefined;
      const sks = await json<{ items: Conditioned[] }>(['get', 'serverlessservices.networking.internal.knative.dev', '-n', ns]);
      const eps = await k([
        'get',
        'endpoints',
        '-n',
        ns,
        '-l',
        'serving.knative.dev/service=hello',
        '-o',
        'jsonpath={.items[*].subsets[*].addresses[*].ip}',
      ]);
      // The public Service's endpoints are then the activator's (the node IP).
      return sks.items.every((s) => s.spec?.mode === 'Proxy') && eps.split(' ').includes(REAL_NODE_SUBNET.gateway) ? true : undefined;
    });
    result.scaledToZeroMs = Date.now() - idleSince;
    log(`scaled to zero ${result.scaledToZeroMs} ms after the last request`);
    result.fromZero = await timedGet(port, host);
    log(`answer from zero ${result.fromZero.status} in ${result.fromZero.ms} ms`);
    return result;
  } finally {
    await k(['delete', 'namespace', ns, '--ignore-not-found', '--wait=false']).catch(() => undefined);
  }
}

const REGISTRY_PORT = 23543;

async function main(): Promise<void> {
  const keep = process.argv.includes('--keep');
  const log = (s: string) => console.error(`[upstream-check] ${s}`);
  const dir = path.join(repoRoot, '.tidal', 'upstream-check');
  await stackDown(dir, { log });
  await stopRegistry(path.join(dir, 'registry'));
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const started = Date.now();
  let failed = false;
  try {
    const { registry, realNode } = await startRealNodeRegistry(dir, REGISTRY_PORT);
    const info = await stackUp({
      dir,
      ports: upstreamCheckPorts,
      ui: false,
      nodes: 0,
      realNode,
      controller: true,
      controlPlane: 'upstream',
      log,
    });
    const upMs = Date.now() - started;
    log(`stack with upstream Knative up in ${Math.round(upMs / 1000)}s`);
    const result = await checkUpstreamServes(info, {
      image: `${registry.host}/knative/helloworld:latest`,
      scaleToZero: !process.argv.includes('--no-scale-to-zero'),
      log,
    });
    console.log(JSON.stringify({ stackUpMs: upMs, ...result }, null, 2));
  } catch (err) {
    failed = true;
    console.error(err);
  } finally {
    if (keep) log(`kept running in ${dir}`);
    else {
      await stackDown(dir, { log });
      await stopRegistry(path.join(dir, 'registry'));
      const left = realNodeLeftovers(dir, upstreamCheckPorts.apiserver);
      if (left.length > 0 || existsSync(path.join(dir, 'node'))) {
        failed = true;
        console.error(`left behind: ${left.join(', ')}`);
      }
    }
  }
  process.exitCode = failed ? 1 : 0;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await main();
