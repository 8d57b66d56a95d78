// What runs while the controller is rolled: a probe sending requests through the ingress, a writer changing Services,
// and kubectl watches that time a rollout's steps and a Revision's deletion as they arrive.
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { parseRolloutAnnotation } from '../../resources/rollout-json.js';
import type { ConfigurationRollout } from '../../resources/rollout.js';
import { kubectl, realStack, request } from '../harness/real.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export interface ProbeTally {
  total: number;
  failures: { at: number; host: string; status: number; detail: string }[];
}

/**
 * Requests to `hosts` in turn through the ingress's public entry point, `workers` at a time with a short pause after
 * each (the machine also runs the stack and the controller), until `finish`.
 */
export function startProbe(hosts: string[], workers = 2, pauseMs = 100): { tally: ProbeTally; finish: () => Promise<ProbeTally> } {
  const tally: ProbeTally = { total: 0, failures: [] };
  let done = false;
  let next = 0;
  const worker = async () => {
    while (!done) {
      const host = hosts[next++ % hosts.length]!;
      const r = await request(host, { timeoutMs: 15_000 });
      tally.total++;
      if (r.status !== 200) tally.failures.push({ at: Date.now(), host, status: r.status, detail: r.error ?? r.body.slice(0, 200) });
      await sleep(pauseMs);
    }
  };
  const running = Promise.all(Array.from({ length: workers }, worker));
  return handle(tally, () => (done = true), running);
}

/** The template annotation the writer changes: each change is a new generation and a new Revision. */
export const WriteAnnotation = 'upgrade.tidal.test/write';

export interface WriterTally {
  /** Changes accepted, per Service. */
  writes: Map<string, number>;
  failures: string[];
}

/** Changes `services` in turn, one every `everyMs`, until `finish`; `label` tells this writer's values apart. */
export function startWriter(
  namespace: string,
  services: string[],
  label: string,
  everyMs: number,
): { tally: WriterTally; finish: () => Promise<WriterTally> } {
  const tally: WriterTally = { writes: new Map(), failures: [] };
  let done = false;
  const running = (async () => {
    for (let i = 0; !done; i++) {
      const name = services[i % services.length]!;
      const n = (tally.writes.get(name) ?? 0) + 1;
      const patch = { spec: { template: { metadata: { annotations: { [WriteAnnotation]: `${label}-${n}` } } } } };
      const started = Date.now();
      try {
        await kubectl(['patch', 'ksvc', name, '-n', namespace, '--type=merge', '-p', JSON.stringify(patch)]);
        tally.writes.set(name, n);
      } catch (err) {
        tally.failures.push(`${new Date().toISOString()} ${name}: ${String(err).slice(0, 300)}`);
      }
      await sleep(Math.max(0, everyMs - (Date.now() - started)));
    }
  })();
  return handle(tally, () => (done = true), running);
}

/** A `kubectl get -w` of one kind in `namespace`, one line per event, each handed over with the time it arrived. */
function watchLines(args: string[], onLine: (line: string, at: number) => void): () => void {
  const s = realStack();
  const child = spawn(s.bins.KUBECTL, ['--kubeconfig', s.kubeconfig, 'get', ...args, '-w']);
  createInterface({ input: child.stdout }).on('line', (line) => onLine(line, Date.now()));
  return () => void child.kill();
}

/** The times Revisions' deletions arrive in a watch of `namespace`. */
export function watchDeletions(namespace: string): { deletedAt: Map<string, number>; close: () => void } {
  const deletedAt = new Map<string, number>();
  const close = watchLines(
    ['revisions', '-n', namespace, '--output-watch-events', '-o', 'jsonpath={.type} {.object.metadata.name}{"\\n"}'],
    (line, at) => {
      const [type, name] = line.trim().split(' ');
      if (type === 'DELETED' && name && !deletedAt.has(name)) deletedAt.set(name, at);
    },
  );
  return { deletedAt, close };
}

/** A gradual rollout as the KIngress's annotation told it, each state with the time it arrived. */
export class RolloutWatch {
  readonly states: { at: number; c: ConfigurationRollout }[] = [];
  private readonly closeWatch: () => void;

  constructor(
    namespace: string,
    route: string,
    private readonly revision: string,
  ) {
    const key = 'networking\\.internal\\.knative\\.dev/rollout';
    this.closeWatch = watchLines(['kingress', route, '-n', namespace, '-o', `jsonpath={.metadata.annotations.${key}}{"\\n"}`], (line, at) => {
      const c = parseRolloutAnnotation(line.trim())?.configurations.find((x) => x.configurationName === route && x.tag === undefined);
      if (c) this.states.push({ at, c });
    });
  }

  end(): void {
    this.closeWatch();
  }

  private percentOf(c: ConfigurationRollout): number {
    return c.revisions.find((r) => r.revisionName === this.revision)?.percent ?? 0;
  }

  /** When the new Revision got its 1 % (the rollout's start time, Unix ms). */
  get startedAt(): number | undefined {
    const s = this.states.find((x) => this.percentOf(x.c) > 0 && x.c.stepParams.startTimeNs);
    return s ? Number(BigInt(s.c.stepParams.startTimeNs!) / 1_000_000n) : undefined;
  }

  /**
   * Knative's schedule, once the 1 % step was observed ready: the step size and interval, when the first timed step
   * falls due and how many steps take the new Revision from 1 % to the configuration's whole percent.
   */
  get plan(): { readyAt: number; stepMs: number; stepSize: number; steps: number; plannedEnd: number } | undefined {
    const s = this.states.find((x) => x.c.stepParams.stepDurationNs && x.c.stepParams.nextStepTimeNs && this.percentOf(x.c) > 0);
    if (!s) return undefined;
    const stepMs = Number(BigInt(s.c.stepParams.stepDurationNs!)) / 1e6;
    const firstDue = Number(BigInt(s.c.stepParams.nextStepTimeNs!)) / 1e6;
    const stepSize = s.c.stepParams.stepSize ?? 1;
    const steps = Math.ceil((s.c.percent - this.percentOf(s.c)) / stepSize);
    return { readyAt: firstDue - stepMs, stepMs, stepSize, steps, plannedEnd: firstDue + (steps - 1) * stepMs };
  }

  /** When the new Revision had all of the configuration's traffic. */
  get finishedAt(): number | undefined {
    return this.states.find((x) => x.c.revisions.length === 1 && x.c.revisions[0]!.revisionName === this.revision)?.at;
  }

  /** The start times the new Revision's rollout had: one, unless it started again from 1 %. */
  get starts(): string[] {
    return [...new Set(this.states.filter((x) => this.percentOf(x.c) > 0 && x.c.stepParams.startTimeNs).map((x) => x.c.stepParams.startTimeNs!))];
  }

  /** The new Revision's percents in order, each change once: 1, then one step size more each time, to 100. */
  get percents(): number[] {
    const out: number[] = [];
    for (const x of this.states) {
      const p = x.c.revisions.length === 1 && x.c.revisions[0]!.revisionName === this.revision ? x.c.percent : this.percentOf(x.c);
      if (p > 0 && out[out.length - 1] !== p) out.push(p);
    }
    return out;
  }

  /** Each timed step: when it fell due (the `nextStepTime` the state before announced) and how late its state arrived (ms). */
  get steps(): { due: number; lateMs: number }[] {
    const out: { due: number; lateMs: number }[] = [];
    for (let i = 1; i < this.states.length; i++) {
      const [prev, cur] = [this.states[i - 1]!, this.states[i]!];
      const due = prev.c.stepParams.nextStepTimeNs;
      if (due && this.percentOf(cur.c) > this.percentOf(prev.c) && this.percentOf(prev.c) > 0) {
        const dueMs = Number(BigInt(due)) / 1e6;
        out.push({ due: dueMs, lateMs: Math.round(cur.at - dueMs) });
      }
    }
    return out;
  }
}

/** A loop's handle: its tally, and `finish`, which stops it and waits for its last round. */
function handle<T>(tally: T, stop: () => void, running: Promise<unknown>): { tally: T; finish: () => Promise<T> } {
  return {
    tally,
    finish: async () => {
      stop();
      await running;
      return tally;
    },
  };
}
