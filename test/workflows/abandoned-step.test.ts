// A local step's attempt that outlives its start-to-close timeout keeps running in its worker while the retry acts
// on fresher reads: it must write nothing after that (activities/observe.ts `stepLive`), and a write it had under way
// is no one's own (its echo must reach the workflow). On a real Temporal dev server, with the Kubernetes client
// talking to a local HTTP server that records what reaches it.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { bundleWorkflowCode, Worker } from '@temporalio/worker';
import { Context } from '@temporalio/activity';
import { KubeClient } from '../../kube/client.js';
import { withObservations } from '../../activities/observe.js';
import { Resources } from '../../api/kinds.js';
import { OwnWrites } from '../../watcher/own-writes.js';
import { testEnv, uniqueName } from '../harness/temporal.js';

let env: TestWorkflowEnvironment;
let server: http.Server;
const received: string[] = [];

beforeAll(async () => {
  env = await testEnv();
  server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      received.push(`${req.method} ${req.url}`);
      const obj = JSON.parse(body || '{}') as { metadata?: Record<string, unknown> };
      res.setHeader('Content-Type', 'application/json');
      res.end(JSON.stringify({ ...obj, metadata: { ...obj.metadata, uid: 'u1', resourceVersion: String(100 + received.length) } }));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
});

afterAll(async () => {
  server?.close();
  await env?.teardown();
});

const configuration = (note: string) => ({
  apiVersion: 'serving.knative.dev/v1',
  kind: 'Configuration',
  metadata: { name: 'late', namespace: 'default', annotations: { note } },
  spec: {},
});

describe('a local step abandoned at its timeout', () => {
  it('writes nothing after it, and what it wrote before stays the workflow’s own', async () => {
    const port = (server.address() as AddressInfo).port;
    const kube = new KubeClient({
      credentials: { server: new URL(`http://127.0.0.1:${port}`), source: 'test', insecureSkipTLSVerify: false, token: () => undefined },
      fieldManager: 'tidal',
    });
    const own = new OwnWrites();
    const outcome: { attempt: number; wrote: string; refused?: string }[] = [];
    const activities = withObservations(
      {
        async writeLate(): Promise<string> {
          const attempt = Context.current().info.attempt;
          if (attempt === 1) {
            // Read, then stall past the timeout (an API server restarting, a starved worker) and write what was read.
            await kube.apply(Resources.Configuration, configuration('before-the-stall'));
            await new Promise((r) => setTimeout(r, 2500));
            try {
              await kube.apply(Resources.Configuration, configuration('stale'));
              outcome.push({ attempt, wrote: 'stale' });
            } catch (err) {
              outcome.push({ attempt, wrote: 'nothing', refused: (err as Error).name });
            }
            return 'first';
          }
          await kube.apply(Resources.Configuration, configuration('fresh'));
          outcome.push({ attempt, wrote: 'fresh' });
          return 'retry';
        },
      },
      own,
    );
    const taskQueue = uniqueName('abandoned');
    const worker = await Worker.create({
      connection: env.nativeConnection,
      namespace: env.namespace ?? 'default',
      taskQueue,
      workflowBundle: await bundleWorkflowCode({
        workflowsPath: fileURLToPath(new URL('./fixtures/late-writer-workflow.ts', import.meta.url)),
        logger: { log() {}, trace() {}, debug() {}, info() {}, warn() {}, error() {} },
      }),
      activities,
    });
    const workflowId = uniqueName('late-writer');
    const result = await worker.runUntil(async () => {
      const r: string = await env.client.workflow.execute('lateWriter', { workflowId, taskQueue });
      // The abandoned attempt wakes after the retry has finished.
      for (let i = 0; i < 100 && outcome.length < 2; i++) await new Promise((d) => setTimeout(d, 50));
      return r;
    });
    kube.close();
    expect(result).toBe('retry');
    expect(outcome).toContainEqual({ attempt: 2, wrote: 'fresh' });
    expect(outcome).toContainEqual({ attempt: 1, wrote: 'nothing', refused: 'StepAbandonedError' });
    // Two applies reached the server: the first attempt's before its stall and the retry's; never the stale one.
    expect(received.filter((r) => r.startsWith('PATCH'))).toHaveLength(2);
    // Both writes that did happen are the workflow's own (the first attempt's was made while it was live).
    expect(own.wrote(workflowId, 'Configuration/default/late', '101')).toBe(true);
    expect(own.wrote(workflowId, 'Configuration/default/late', '102')).toBe(true);
  });
});
