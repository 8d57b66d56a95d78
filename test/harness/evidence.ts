// What a failed convergence run leaves for whoever reads the test's output (CI keeps nothing else): for each object
// that did not converge, its entity workflows' runs, the state the open run reports, the last events of its history,
// and the controller's log lines about it.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { Client } from '@temporalio/client';
import proto from '@temporalio/proto';
import type { temporal } from '@temporalio/proto';
import { STATE_QUERY } from '../../api/entity.js';
import type { LoopState } from '../../workflows/entity-loop.js';
import { temporalClient } from './cluster.js';

const text = (data: Uint8Array | null | undefined): string => Buffer.from(data ?? new Uint8Array()).toString();

/** One line per history event: its id, time, type and, for a signal or a local step, what it carried. */
function eventLine(e: temporal.api.history.v1.IHistoryEvent): string {
  const at = e.eventTime?.seconds
    ? new Date(Number(e.eventTime.seconds) * 1000 + Math.floor((e.eventTime.nanos ?? 0) / 1e6)).toISOString().slice(11, 23)
    : '';
  const type = (proto.temporal.api.enums.v1.EventType[e.eventType ?? 0] ?? String(e.eventType)).replace('EVENT_TYPE_', '');
  const signal = e.workflowExecutionSignaledEventAttributes?.input?.payloads?.map((p) => text(p.data)).join(' ');
  const summary = text(e.userMetadata?.summary?.data).replace(/^"|"$/g, '');
  const failure = e.workflowTaskFailedEventAttributes?.failure?.message;
  return `${String(e.eventId)} ${at} ${type}${signal ? ` ${signal.slice(0, 300)}` : ''}${summary ? ` «${summary.slice(0, 160)}»` : ''}${failure ? ` ! ${failure.slice(0, 200)}` : ''}`;
}

/** The state an open run reports, cut to what tells why it did (not) pass. */
function stateLines(st: LoopState): string[] {
  const { phase, dirty, inPass, pendingFull, trigger, announced, echoes, observed, lastReconcile, staleReads, wake, retryPending } = st;
  return [
    `state: ${JSON.stringify({ phase, dirty, inPass, pendingFull, retryPending, trigger, staleReads, wake, lastReconcile })}`,
    `  announced: ${JSON.stringify(announced).slice(0, 600)}`,
    `  echoes: ${JSON.stringify(echoes).slice(0, 600)}`,
    `  observed: ${JSON.stringify(observed).slice(0, 600)}`,
  ];
}

/** The runs, state and last history events of one workflow. */
async function workflowEvidence(client: Client, workflowId: string, lastEvents: number): Promise<string[]> {
  const out = [`workflow ${workflowId}:`];
  const runs: { runId: string; status: string; start: string; close: string }[] = [];
  for await (const run of client.workflow.list({ query: `WorkflowId = '${workflowId}'` })) {
    runs.push({ runId: run.runId, status: run.status.name, start: run.startTime.toISOString(), close: run.closeTime?.toISOString() ?? '' });
  }
  if (runs.length === 0) return [...out, '  no run'];
  runs.sort((a, b) => a.start.localeCompare(b.start));
  for (const r of runs.slice(-3)) out.push(`  run ${r.runId} ${r.status} ${r.start} → ${r.close || 'open'}`);
  const latest = runs.at(-1)!;
  const handle = client.workflow.getHandle(workflowId, latest.runId);
  if (latest.status === 'RUNNING') {
    try {
      out.push(...stateLines(await handle.query<LoopState>(STATE_QUERY)).map((l) => `  ${l}`));
    } catch (err) {
      out.push(`  state query failed: ${(err as Error).message}`);
    }
  }
  const events = (await handle.fetchHistory()).events ?? [];
  out.push(`  last ${Math.min(lastEvents, events.length)} of ${events.length} events:`);
  for (const e of events.slice(-lastEvents)) out.push(`    ${eventLine(e)}`);
  return out;
}

/** A pino line as its time, message and the fields that say what ran and how it went. */
function compact(line: string): string {
  try {
    const j = JSON.parse(line) as Record<string, unknown>;
    const fields = [
      'workflowId',
      'activityType',
      'attempt',
      'trigger',
      'summary',
      'source',
      'resourceVersion',
      'token',
      'why',
      'reason',
      'error',
      'err',
    ]
      .filter((k) => j[k] !== undefined)
      .map((k) => `${k}=${typeof j[k] === 'string' ? j[k] : JSON.stringify(j[k])}`);
    return `${String(j.time).slice(11, 23)} ${String(j.msg)} ${fields.join(' ')}`.slice(0, 400);
  } catch {
    return line.slice(0, 400);
  }
}

/**
 * The controllers' log lines that name `name` in `namespace`, the last `n` of them in time order, shortened: each line
 * starts with its time, so the lines of several replicas' logs sort by it. A replica is named by its log file.
 */
function logLines(logFiles: readonly string[], namespace: string, name: string, n: number): string[] {
  const pattern = new RegExp(`${namespace}/${name}(?![0-9a-z-])|"name":"${name}"`);
  const hits: { at: string; line: string }[] = [];
  const unreadable: string[] = [];
  for (const file of logFiles) {
    let lines: string[];
    try {
      lines = readFileSync(file, 'utf8').split('\n');
    } catch {
      unreadable.push(file);
      continue;
    }
    const replica = logFiles.length > 1 ? `${path.basename(file, '.log')} ` : '';
    for (const l of lines) {
      if (!pattern.test(l) || l.includes('"msg":"admitted"')) continue;
      hits.push({ at: /"time":"([^"]+)"/.exec(l)?.[1] ?? '', line: `${replica}${compact(l)}` });
    }
  }
  hits.sort((a, b) => a.at.localeCompare(b.at));
  return [
    ...unreadable.map((f) => `log ${f} not readable`),
    `controller log (${hits.length} lines name it; the last ${Math.min(n, hits.length)}):`,
    ...hits.slice(-n).map((h) => `  ${h.line}`),
  ];
}

/** The Revisions a failure's problems name (`cv-3-00002`, `cv-3-byoa`): their workflows are evidence too. */
function revisionsNamed(name: string, problems: readonly string[]): string[] {
  const found = new Set<string>();
  const pattern = new RegExp(`\\b${name}-(?:[0-9]{5}|byo[a-z0-9]*)\\b`, 'g');
  for (const p of problems) for (const m of p.matchAll(pattern)) found.add(m[0]);
  return [...found].slice(0, 2);
}

/**
 * The evidence for the Services that did not converge: their Service and Route workflows, the workflows of the
 * Revisions their problems name, and the log.
 */
export async function convergenceEvidence(
  client: Client,
  namespace: string,
  failures: readonly { name: string; problems: readonly string[] }[],
  logFiles: string | readonly string[],
): Promise<string> {
  const out: string[] = [];
  // The first three: CI shows the end of a run's output, and this goes into the failure's message.
  for (const { name, problems } of failures.slice(0, 3)) {
    out.push(`---- ${namespace}/${name}`);
    const ids = [
      `Service/${namespace}/${name}`,
      `Route/${namespace}/${name}`,
      ...revisionsNamed(name, problems).map((r) => `Revision/${namespace}/${r}`),
    ];
    for (const id of ids) out.push(...(await workflowEvidence(client, id, 12).catch((err: Error) => [`${id}: ${err.message}`])));
    out.push(...logLines(typeof logFiles === 'string' ? [logFiles] : logFiles, namespace, name, 12));
  }
  return out.join('\n');
}

/**
 * The message of a convergence check's assertion: the seed, each failure's problems and, when there are failures,
 * their evidence (also logged) — a CI run keeps nothing but the test's output.
 */
export async function convergenceFailureMessage(o: {
  seed: number;
  namespace: string;
  failures: readonly { name: string; problems: readonly string[] }[];
  logFiles: string | readonly string[];
  log: (s: string) => void;
}): Promise<string> {
  if (o.failures.length === 0) return `seed ${o.seed}`;
  const t = await temporalClient();
  let evidence: string;
  try {
    evidence = await convergenceEvidence(
      t.client,
      o.namespace,
      o.failures.filter((f) => f.name !== '(orphans)'),
      o.logFiles,
    );
  } finally {
    await t.close();
  }
  o.log(evidence);
  const problems = o.failures.map((f) => `${f.name}:\n  ${f.problems.join('\n  ')}`).join('\n');
  return `seed ${o.seed}\n${problems}\n${evidence}`;
}
