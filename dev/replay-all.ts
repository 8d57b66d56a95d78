// `tsx dev/replay-all.ts --address <host:port> [--namespace default] [--type serviceWorkflow]`: replays the history
// of every workflow run on a Temporal server on today's workflow code and names each run that does not replay. A run
// that fails here would fail its next workflow task once a worker lost its cached state (a restart, an eviction).
import { Connection, Client } from '@temporalio/client';
import { bundleWorkflowCode, Worker } from '@temporalio/worker';
import { argValue } from './cli-args.js';
import { repoRoot } from './kubectl.js';
import path from 'node:path';

async function main(argv: string[]): Promise<void> {
  const address = argValue(argv, 'address') ?? '127.0.0.1:7233';
  const namespace = argValue(argv, 'namespace') ?? 'default';
  const type = argValue(argv, 'type');
  const connection = await Connection.connect({ address });
  const client = new Client({ connection, namespace });
  const workflowBundle = await bundleWorkflowCode({ workflowsPath: path.join(repoRoot, 'workflows', 'index.ts'), logger: quiet });
  const query = type ? `WorkflowType = '${type}'` : undefined;
  let runs = 0;
  const failed: string[] = [];
  const histories = client.workflow.list(query ? { query } : {}).intoHistories();
  for await (const result of Worker.runReplayHistories({ workflowBundle, replayName: 'replay-all' }, histories)) {
    runs++;
    if (result.error) {
      failed.push(result.workflowId);
      console.log(`does not replay: ${result.workflowId} — ${String(result.error.message ?? result.error).split('\n')[0]}`);
    }
  }
  console.log(`replayed ${runs} runs: ${runs - failed.length} replay, ${failed.length} do not`);
  await connection.close();
  if (failed.length > 0) process.exitCode = 1;
}

const quiet = { log() {}, trace() {}, debug() {}, info() {}, warn() {}, error() {} };

main(process.argv.slice(2)).catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
