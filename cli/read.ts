// What `kubectl tidal` reads: the object through kubectl (honouring --kubeconfig, --context, -n and KUBECONFIG as
// kubectl itself does), and its workflow's recent runs from Temporal over the controller's own connection settings
// (workers/temporal.ts). Nothing it reads goes out but the summaries, outcomes and failure messages the workflow
// recorded: no payload, key or certificate.
import { execFile } from 'node:child_process';
import { Client, Connection } from '@temporalio/client';
import { loadTemporalSettings, temporalConnectOptions, type TemporalSettings } from '../workers/temporal.js';
import { storyLinkOf, storyWorkflowOf } from '../api/story-link.js';
import { msOf, readRun, type RunStory } from './history.js';
import type { StoryArgs } from './args.js';
import type { StoryKind } from './kinds.js';
import type { RetryingStep, StoryObject, WorkflowStory } from './story.js';

/** The object, or undefined when kubectl says it is not there. */
export function getObject(args: StoryArgs, kind: StoryKind, name: string): Promise<StoryObject | undefined> {
  const argv = [
    'get',
    kind.resource,
    name,
    '-o',
    'json',
    ...(args.namespace ? ['-n', args.namespace] : []),
    ...(args.kubeconfig ? ['--kubeconfig', args.kubeconfig] : []),
    ...(args.context ? ['--context', args.context] : []),
  ];
  return new Promise((resolve, reject) => {
    execFile(process.env.KUBECTL || 'kubectl', argv, { maxBuffer: 64 << 20 }, (err, stdout, stderr) => {
      if (!err) return resolve(JSON.parse(stdout) as StoryObject);
      if (/NotFound|not found/.test(stderr)) return resolve(undefined);
      reject(new Error(`kubectl ${argv.join(' ')}: ${stderr.trim() || err.message}`));
    });
  });
}

/** The controller's Temporal settings from the environment, with the command line's overrides. */
export function temporalSettings(args: StoryArgs, env: NodeJS.ProcessEnv = process.env): TemporalSettings {
  const t = args.temporal;
  return loadTemporalSettings({
    ...env,
    ...(t.address ? { TEMPORAL_ADDRESS: t.address } : {}),
    ...(t.namespace ? { TEMPORAL_NAMESPACE: t.namespace } : {}),
    ...(t.tlsDir ? { TEMPORAL_TLS_DIR: t.tlsDir } : {}),
  });
}

export interface TemporalReader {
  read(obj: StoryObject, passes: number): Promise<WorkflowStory | undefined>;
  close(): Promise<void>;
}

/** At most this many runs are listed; histories are read newest first until enough passes are in. */
const MAX_RUNS = 20;

export async function connectTemporal(settings: TemporalSettings): Promise<TemporalReader> {
  const connection = await Connection.connect({ ...temporalConnectOptions(settings), connectTimeout: '10s' });
  const client = new Client({ connection, namespace: settings.namespace });
  return {
    read: (obj, passes) => readWorkflow(client, obj, passes),
    close: () => connection.close(),
  };
}

async function readWorkflow(client: Client, obj: StoryObject, passes: number): Promise<WorkflowStory | undefined> {
  const workflowId = storyWorkflowOf(obj);
  if (!workflowId) return undefined;
  const url = storyLinkOf(obj).url;
  const base = { workflowId, ...(url ? { url } : {}) };
  try {
    const listed: { runId: string; startMs: number }[] = [];
    for await (const run of client.workflow.list({ query: `WorkflowId = '${workflowId.replace(/'/g, "\\'")}'`, pageSize: MAX_RUNS })) {
      listed.push({ runId: run.runId, startMs: run.startTime.getTime() });
      if (listed.length >= MAX_RUNS) break;
    }
    listed.sort((a, b) => b.startMs - a.startMs);
    const runs: RunStory[] = [];
    let found = 0;
    for (const { runId } of listed) {
      const run = readRun(runId, await client.workflow.getHandle(workflowId, runId).fetchHistory());
      runs.unshift(run);
      found += run.passes.length;
      if (found >= passes) break;
    }
    const latest = runs.at(-1);
    const retrying = latest && !latest.closed ? await retryingSteps(client, workflowId, latest) : [];
    return { ...base, runs, retrying };
  } catch (err) {
    return { ...base, runs: [], retrying: [], unreadable: err instanceof Error ? err.message : String(err) };
  }
}

/** The regular steps the server is retrying for the running run, from `describe`, named by their summaries. */
async function retryingSteps(client: Client, workflowId: string, run: RunStory): Promise<RetryingStep[]> {
  const described = await client.workflow.getHandle(workflowId, run.runId).describe();
  return (described.raw.pendingActivities ?? []).map((a) => {
    const step = run.pendingSteps.find((s) => s.activityId === a.activityId);
    const next = a.nextAttemptScheduleTime ?? a.scheduledTime;
    return {
      summary: step?.summary ?? '',
      type: a.activityType?.name ?? '',
      attempt: a.attempt ?? 1,
      ...(next ? { nextAttemptAtMs: msOf(next) } : {}),
      ...(a.lastFailure?.message ? { lastFailure: a.lastFailure.message } : {}),
    };
  });
}
