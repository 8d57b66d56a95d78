// Admission latency of Tidal's webhook under load, on loopback: the webhook server runs in a child process (as in the
// controller, alone on its event loop) and this process sends it AdmissionReviews over HTTPS — one HTTP/2 connection
// with many streams, as the API server's webhook client does, and HTTP/1.1 with keep-alive — at a fixed concurrency.
// The mix is what a `kubectl apply` of a Service costs the webhook: a defaulting review (Service CREATE, JSON patch
// back), a validating review of the defaulted object, and every fourth a review that is refused.
//   BENCH_WEBHOOK_REQUESTS (5000 per transport), BENCH_WEBHOOK_CONCURRENCY (8), BENCH_WEBHOOK_PORT (38443)
import { fork } from 'node:child_process';
import http2 from 'node:http2';
import https from 'node:https';
import { fileURLToPath } from 'node:url';
import pino from 'pino';
import { defaultAutoscalerConfig, defaultDefaultsConfig } from '../api/config/index.js';
import { makeWebhookCertificates, type WebhookCertificates } from '../pki/webhook-certificates.js';
import { WebhookServer } from '../webhook/server.js';

const requests = Number(process.env.BENCH_WEBHOOK_REQUESTS ?? 5000);
const concurrency = Number(process.env.BENCH_WEBHOOK_CONCURRENCY ?? 8);
const port = Number(process.env.BENCH_WEBHOOK_PORT ?? 38443);

function service(name: string, traffic?: unknown) {
  return {
    apiVersion: 'serving.knative.dev/v1',
    kind: 'Service',
    metadata: { name, namespace: 'default' },
    spec: {
      template: {
        metadata: { annotations: { 'autoscaling.knative.dev/min-scale': '2' } },
        spec: { containers: [{ image: 'ghcr.io/example/app:v1', ports: [{ containerPort: 8080 }], env: [{ name: 'A', value: 'b' }] }] },
      },
      ...(traffic ? { traffic } : {}),
    },
  };
}

/** The i-th request of the mix: [path, AdmissionReview body]. */
function reviewFor(i: number): [string, string] {
  const bad = i % 4 === 3;
  const path = i % 2 === 0 ? '/defaulting' : '/resource-validation';
  const object = bad ? service(`bench-${i}`, [{ latestRevision: true, percent: 120 }]) : service(`bench-${i}`);
  const body = {
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid: `uid-${i}`,
      kind: { group: 'serving.knative.dev', version: 'v1', kind: 'Service' },
      resource: { group: 'serving.knative.dev', version: 'v1', resource: 'services' },
      operation: 'CREATE',
      userInfo: { username: 'bench', groups: ['system:authenticated'] },
      namespace: 'default',
      name: object.metadata.name,
      object,
    },
  };
  return [path, JSON.stringify(body)];
}

function pct(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] ?? NaN;
}

async function runLoad(send: (i: number) => Promise<void>): Promise<{ ms: number[]; seconds: number }> {
  const ms: number[] = [];
  let next = 0;
  const started = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < requests) {
        const i = next++;
        const t = process.hrtime.bigint();
        await send(i);
        ms.push(Number(process.hrtime.bigint() - t) / 1e6);
      }
    }),
  );
  return { ms: ms.sort((a, b) => a - b), seconds: Number(process.hrtime.bigint() - started) / 1e9 };
}

function check(status: number, text: string, i: number): void {
  const allowed = (JSON.parse(text) as { response?: { allowed?: boolean } }).response?.allowed;
  const want = !(i % 4 === 3 && i % 2 === 1);
  if (status !== 200 || allowed !== want) throw new Error(`request ${i}: status ${status}, allowed ${String(allowed)}, want ${String(want)}`);
}

async function http2Load(ca: string) {
  const session = http2.connect(`https://127.0.0.1:${port}`, { ca });
  await new Promise<void>((resolve, reject) => session.once('connect', () => resolve()).once('error', reject));
  const send = (i: number) =>
    new Promise<void>((resolve, reject) => {
      const [path, body] = reviewFor(i);
      const req = session.request({ ':method': 'POST', ':path': path, 'content-type': 'application/json' });
      let status = 0;
      let text = '';
      req.on('response', (h) => (status = Number(h[':status'])));
      req.setEncoding('utf8');
      req.on('data', (c: string) => (text += c));
      req.on('end', () => {
        try {
          check(status, text, i);
          resolve();
        } catch (err) {
          reject(err instanceof Error ? err : new Error(String(err)));
        }
      });
      req.on('error', reject);
      req.end(body);
    });
  for (let i = 0; i < 200; i++) await send(i); // warm-up: JIT and TLS
  const r = await runLoad(send);
  session.close();
  return r;
}

async function http1Load(ca: string) {
  const agent = new https.Agent({ keepAlive: true, maxSockets: concurrency, ca });
  const send = (i: number) =>
    new Promise<void>((resolve, reject) => {
      const [path, body] = reviewFor(i);
      const req = https.request({ host: '127.0.0.1', port, path, method: 'POST', agent, headers: { 'content-type': 'application/json' } }, (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => {
          try {
            check(res.statusCode ?? 0, text, i);
            resolve();
          } catch (err) {
            reject(err instanceof Error ? err : new Error(String(err)));
          }
        });
      });
      req.on('error', reject);
      req.end(body);
    });
  for (let i = 0; i < 200; i++) await send(i);
  const r = await runLoad(send);
  agent.destroy();
  return r;
}

/** The child: the webhook server alone in its process, with the shipped defaults (hakn's container-concurrency). */
async function serve(): Promise<void> {
  const certs = JSON.parse(process.env.BENCH_WEBHOOK_CERTS ?? '{}') as WebhookCertificates;
  const defaults = { ...defaultDefaultsConfig(), containerConcurrency: 100 };
  const server = new WebhookServer({
    port,
    host: '127.0.0.1',
    log: pino({ level: 'warn' }),
    config: () => ({ defaults, validation: { autoscaler: defaultAutoscalerConfig() }, systemNamespace: 'knative-serving' }),
  });
  await server.listen(certs, '1');
  process.send?.('listening');
}

async function main(): Promise<void> {
  const certs = await makeWebhookCertificates({ systemNamespace: 'knative-serving', validityHours: 24, now: new Date() });
  const child = fork(fileURLToPath(import.meta.url), ['--serve'], {
    env: { ...process.env, BENCH_WEBHOOK_CERTS: JSON.stringify(certs) },
    execArgv: ['--import', 'tsx'],
  });
  try {
    await new Promise<void>((resolve, reject) => {
      child.once('message', () => resolve());
      child.once('exit', (code) => reject(new Error(`webhook server exited (${String(code)})`)));
    });
    const cpuBefore = await childCpuSeconds(child.pid ?? 0);
    console.log(`\nTidal admission webhook: ${requests} AdmissionReviews per transport, concurrency ${concurrency}, loopback TLS`);
    console.log('(mix: Service CREATE defaulting with a JSON patch back / validation of it; every 4th validation refused)');
    console.log('transport\tp50 ms\tp90 ms\tp99 ms\tmax ms\treviews/s');
    for (const [name, load] of [
      ['HTTP/2, 1 connection', http2Load],
      ['HTTP/1.1 keep-alive', http1Load],
    ] as const) {
      const { ms, seconds } = await load(certs.caCertPem);
      console.log(
        `${name}\t${pct(ms, 50).toFixed(2)}\t${pct(ms, 90).toFixed(2)}\t${pct(ms, 99).toFixed(2)}\t${(ms.at(-1) ?? NaN).toFixed(2)}\t${Math.round(ms.length / seconds)}`,
      );
    }
    const cpu = (await childCpuSeconds(child.pid ?? 0)) - cpuBefore;
    console.log(`webhook server CPU: ${((cpu / (2 * requests)) * 1e3).toFixed(3)} ms per review (goal: p99 ≤ 10 ms)`);
  } finally {
    child.kill('SIGTERM');
  }
}

async function childCpuSeconds(pid: number): Promise<number> {
  const { readFile } = await import('node:fs/promises');
  const stat = (await readFile(`/proc/${pid}/stat`, 'utf8')).split(') ')[1]?.split(' ') ?? [];
  return (Number(stat[11]) + Number(stat[12])) / 100;
}

if (process.argv.includes('--serve')) void serve();
else
  main().catch((err: unknown) => {
    console.error(err);
    process.exit(1);
  });
