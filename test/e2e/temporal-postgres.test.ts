// The stack's PostgreSQL option (dev/temporal-postgres.ts) on its own: PostgreSQL and the Temporal server in their own
// folder and on their own ports (24233–24244, clear of every other stack), a small workflow run to completion on them,
// its history read back, the state found in PostgreSQL across several history shards, and a clean stop.
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client, Connection } from '@temporalio/client';
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';
import { bundleWorkflowCode, DefaultLogger, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import { ProcessTable } from '../../dev/processes.js';
import { ensureToolchain, repoRoot, SearchAttributes, stackDown } from '../../dev/stack.js';
import { defaultHistoryShards, findPostgres, startTemporalPostgres, type TemporalPostgres } from '../../dev/temporal-postgres.js';

const dir = path.join(repoRoot, '.tidal', 'test-temporal-postgres');
const port = 24233;
const log = (s: string) => console.error(`[temporal-postgres] ${s}`);
// As root the module installs Debian's postgresql itself (CI runs as root); elsewhere it must already be there.
const skip = !findPostgres() && process.getuid?.() !== 0 ? "Debian's postgresql is not installed and this is not root to install it" : '';
if (skip) console.error(`[temporal-postgres] SKIPPED: ${skip} (sudo apt-get install -y postgresql)`);

// A workflow module the worker bundles: a timer, then one activity.
const workflowSource = `
import { proxyActivities, sleep } from '@temporalio/workflow';
const { greet } = proxyActivities({ startToCloseTimeout: '30s' });
export async function greeting(name) {
  await sleep('50 milliseconds');
  return await greet(name);
}
`;

describe.skipIf(skip)('Temporal server on PostgreSQL', () => {
  let tp: TemporalPostgres;
  let client: Client;
  let connection: Connection;
  let worker: Worker;
  let workerDone: Promise<void>;
  const taskQueue = 'temporal-postgres-test';

  beforeAll(async () => {
    await stackDown(dir, { log });
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    const bins = await ensureToolchain(log, 'temporal');
    const started = Date.now();
    tp = await startTemporalPostgres({
      dir,
      procs: new ProcessTable(dir),
      port,
      httpPort: port + 10,
      metricsPort: port + 11,
      cli: bins.TEMPORAL,
      searchAttributes: SearchAttributes,
      log,
    });
    log(`PostgreSQL + Temporal server up in ${Math.round((Date.now() - started) / 1000)}s`);

    Runtime.install({ logger: new DefaultLogger('WARN'), shutdownSignals: [] });
    const workflowsPath = path.join(dir, 'workflows.js');
    writeFileSync(workflowsPath, workflowSource);
    worker = await Worker.create({
      connection: await NativeConnection.connect({ address: tp.address }),
      namespace: 'default',
      taskQueue,
      workflowBundle: await bundleWorkflowCode({ workflowsPath, logger: { log() {}, trace() {}, debug() {}, info() {}, warn() {}, error() {} } }),
      activities: { greet: async (name: string) => `hello, ${name}` },
    });
    workerDone = worker.run();
    connection = await Connection.connect({ address: tp.address });
    client = new Client({ connection, namespace: 'default' });
  });

  afterAll(async () => {
    if (worker?.getState() === 'RUNNING') worker.shutdown();
    await workerDone;
    await connection?.close();
    if (!process.env.TIDAL_KEEP_TEST_STACK) await stackDown(dir, { log });
  });

  it('runs a workflow to completion, with the history a timer and an activity make', async () => {
    const kind = defineSearchAttributeKey('KnativeKind', SearchAttributeType.KEYWORD);
    const handle = await client.workflow.start('greeting', {
      taskQueue,
      workflowId: `greeting-${Date.now()}`,
      args: ['postgres'],
      // Tidal's search attributes were registered by the module: a start that sets one is accepted.
      typedSearchAttributes: [{ key: kind, value: 'Test' }],
    });
    expect(await handle.result()).toBe('hello, postgres');

    // Each event carries one `<type>EventAttributes` field: that names its type.
    const history = await handle.fetchHistory();
    const types = (history.events ?? []).map((e) =>
      Object.entries(e)
        .find(([k, v]) => k.endsWith('EventAttributes') && v)?.[0]
        .replace(/EventAttributes$/, ''),
    );
    const expected = [
      'workflowExecutionStarted',
      'timerStarted',
      'timerFired',
      'activityTaskScheduled',
      'activityTaskStarted',
      'activityTaskCompleted',
      'workflowExecutionCompleted',
    ];
    expect(types.filter((t) => !t?.startsWith('workflowTask'))).toEqual(expected);
    expect(types.filter((t) => t === 'workflowTaskCompleted').length).toBe(3);
  });

  it('keeps its state in PostgreSQL, spread over the history shards', async () => {
    expect(tp.historyShards).toBe(defaultHistoryShards);
    expect(Number(await tp.sql('temporal', 'SELECT count(*) FROM shards'))).toBe(defaultHistoryShards);
    const ids = Array.from({ length: 20 }, (_, i) => `spread-${Date.now()}-${i}`);
    await Promise.all(ids.map((workflowId) => client.workflow.execute('greeting', { taskQueue, workflowId, args: [workflowId] })));
    const list = ids.map((id) => `'${id}'`).join(',');
    const shards = Number(await tp.sql('temporal', `SELECT count(DISTINCT shard_id) FROM executions WHERE workflow_id IN (${list})`));
    expect(shards).toBeGreaterThan(1);
    // Visibility is PostgreSQL too (temporal_visibility), and the search attribute is queryable there.
    await expect
      .poll(async () => (await client.workflow.count(`KnativeKind = 'Test'`)).count, { timeout: 30_000, interval: 500 })
      .toBeGreaterThanOrEqual(1);
  });

  it('stops cleanly: the server first, then a fast PostgreSQL shutdown', async () => {
    if (worker.getState() === 'RUNNING') worker.shutdown();
    await workerDone;
    const procs = new ProcessTable(dir);
    const pgLog = procs.running('postgres')!.log;
    await stackDown(dir, { log });
    expect(procs.running('temporal')).toBeUndefined();
    expect(procs.running('postgres')).toBeUndefined();
    expect(readFileSync(pgLog, 'utf8')).toMatch(/database system is shut down/);
  });
});
