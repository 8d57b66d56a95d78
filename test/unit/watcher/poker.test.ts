// Poker against a fake Temporal client (signalWithStart only), a fresh metrics registry and fake timers.
import type { Client } from '@temporalio/client';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import type { Logger } from 'pino';
import { Registry } from 'prom-client';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { EntityKind, Poke } from '../../../api/entity.js';
import { Poker, searchAttributeKeys, type PokerOptions } from '../../../watcher/poker.js';
import type { PokeTarget } from '../../../watcher/poke-map.js';
import { OwnWrites } from '../../../watcher/own-writes.js';

interface Deferred {
  promise: Promise<unknown>;
  resolve: () => void;
  reject: (err: Error) => void;
}

function deferred(): Deferred {
  let resolve!: () => void;
  let reject!: (err: Error) => void;
  const promise = new Promise<unknown>((res, rej) => {
    resolve = () => res({});
    reject = rej;
  });
  return { promise, resolve, reject };
}

interface SignalCall {
  workflowType: string;
  // The options the Poker passed; typed loosely on purpose, the test asserts their exact shape.
  opts: Record<string, unknown> & { workflowId: string; signalArgs: Poke[][] };
  at: number;
}

/** One delivery as the tests compare them: `workflowId rv[,rv…]`. */
const delivery = (workflowId: string, pokes: Poke[] = []): string => `${workflowId} ${pokes.map((p) => p.resourceVersion ?? '-').join(',')}`;

/** What one signalWithStart call does: succeed, fail, or wait for the test to settle it. */
type Outcome = 'ok' | Error | Deferred;

class FakeTemporal {
  readonly calls: SignalCall[] = [];
  private readonly waiters: { n: number; resolve: () => void }[] = [];

  /** Outcomes in call order; once they run out every call succeeds. */
  constructor(readonly outcomes: Outcome[] = []) {}

  readonly signalWithStart = vi.fn((workflowType: string, opts: SignalCall['opts']): Promise<unknown> => {
    this.calls.push({ workflowType, opts, at: Date.now() });
    this.deliveries.push(delivery(opts.workflowId, opts.signalArgs[0]));
    for (const w of this.waiters.filter((x) => x.n <= this.calls.length)) w.resolve();
    const outcome = this.outcomes.shift() ?? 'ok';
    if (outcome === 'ok') return Promise.resolve({});
    if (outcome instanceof Error) return Promise.reject(outcome);
    return outcome.promise;
  });

  /**
   * Starts (sweep pokes, and catch-up pokes as the input of a fresh run): recorded apart. A start that refuses a run
   * that exists (`FAIL`) is refused for the ids in `running`; every other start succeeds.
   */
  readonly starts: SignalCall[] = [];
  readonly running = new Set<string>();
  readonly start = vi.fn((workflowType: string, opts: SignalCall['opts']): Promise<unknown> => {
    if (opts.workflowIdConflictPolicy === 'FAIL' && this.running.has(opts.workflowId))
      return Promise.reject(new WorkflowExecutionAlreadyStartedError('already started', opts.workflowId, workflowType));
    this.starts.push({ workflowType, opts, at: Date.now() });
    const pokes = (opts.args as { pokes?: Poke[] }[] | undefined)?.[0]?.pokes;
    if (pokes) this.deliveries.push(delivery(opts.workflowId, pokes));
    return Promise.resolve({});
  });

  /** Pokes delivered, signalled or as a fresh run's input, in order, as `workflowId rv[,rv…]`. */
  readonly deliveries: string[] = [];

  /** Sticky queues reset, as `workflowId` and what the next call was by then (`signal` or `-`); failing when `failResets`. */
  readonly resets: string[] = [];
  failResets = false;
  readonly resetStickyTaskQueue = vi.fn((req: { namespace: string; execution: { workflowId: string } }): Promise<unknown> => {
    this.resets.push(`${req.namespace} ${req.execution.workflowId} after ${this.calls.length} signals`);
    return this.failResets ? Promise.reject(new Error('5 NOT_FOUND: workflow execution already completed')) : Promise.resolve({});
  });

  get client(): Client {
    return {
      workflow: { signalWithStart: this.signalWithStart, start: this.start },
      workflowService: { resetStickyTaskQueue: this.resetStickyTaskQueue },
      options: { namespace: 'default' },
    } as unknown as Client;
  }

  /** Resolves once signalWithStart has been called n times. */
  called(n: number): Promise<void> {
    if (this.calls.length >= n) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push({ n, resolve }));
  }

  /** The pokes delivered (signalled) so far, as `workflowId rv[,rv…]` (one signal carries a batch, one per source). */
  get signalled(): string[] {
    return this.calls.map((c) => delivery(c.opts.workflowId, c.opts.signalArgs[0]));
  }
}

function stubLog() {
  const log = { warn: vi.fn(), error: vi.fn(), info: vi.fn(), debug: vi.fn(), child: vi.fn() };
  log.child.mockReturnValue(log);
  return log;
}

const target = (name: string, kind: EntityKind = 'Service', namespace = 'ns'): PokeTarget => ({ kind, key: { namespace, name } });
const poke = (resourceVersion: string | undefined, source = 'Service/ns/s', reason: Poke['reason'] = 'updated'): Poke => ({
  source,
  reason,
  ...(resourceVersion !== undefined ? { resourceVersion } : {}),
});

const open: Poker[] = [];
let registry: Registry;

function make(outcomes: Outcome[] = [], opts: Partial<PokerOptions> = {}) {
  const temporal = new FakeTemporal(outcomes);
  const log = stubLog();
  const poker = new Poker(temporal.client, { taskQueue: 'tidal', concurrency: 4, maxBackoffMs: 30_000, ...opts }, log as unknown as Logger, registry);
  open.push(poker);
  return { temporal, poker, log };
}

/** Lets every pending promise callback run without moving the fake clock. */
const settle = () => vi.advanceTimersByTimeAsync(0);

async function counter(name: string, kind: string): Promise<number> {
  const metric = (await registry.getMetricsAsJSON()).find((m) => m.name === name);
  return metric?.values.find((v) => v.labels.kind === kind)?.value ?? 0;
}

beforeEach(() => {
  vi.useFakeTimers();
  vi.setSystemTime(5_000_000);
  registry = new Registry();
});

afterEach(async () => {
  await Promise.all(open.splice(0).map((p) => p.close()));
  vi.useRealTimers();
});

describe('Poker: delivery', () => {
  it("unstick: resets the run's sticky queue before the signal; a reset refused (no open run) delivers all the same", async () => {
    const { temporal, poker } = make();
    poker.poke(target('a'), poke('1'), { unstick: true });
    await temporal.called(1);
    expect(temporal.resets).toEqual(['default Service/ns/a after 0 signals']);
    // A later poke of the same workflow without it: no reset.
    poker.poke(target('a'), poke('2'));
    await temporal.called(2);
    expect(temporal.resets).toHaveLength(1);
    temporal.failResets = true;
    poker.poke(target('b'), poke('3'), { unstick: true });
    await temporal.called(3);
    expect(temporal.resets).toEqual(['default Service/ns/a after 0 signals', 'default Service/ns/b after 2 signals']);
    expect(temporal.signalled).toEqual(['Service/ns/a 1', 'Service/ns/a 2', 'Service/ns/b 3']);
  });

  it('signals with start, with the entity workflow id, type, policies, search attributes and summary', async () => {
    const { temporal, poker } = make([], { workflowOptions: { resyncSeconds: 60 } });
    const p: Poke = { source: 'Configuration/ns/web', resourceVersion: '42', generation: 3, reason: 'updated' };
    poker.poke(target('web'), p);
    await temporal.called(1);
    expect(temporal.signalWithStart).toHaveBeenCalledTimes(1);
    expect(temporal.calls[0]!.workflowType).toBe('serviceWorkflow');
    expect(temporal.calls[0]!.opts).toEqual({
      workflowId: 'Service/ns/web',
      taskQueue: 'tidal',
      args: [{ kind: 'Service', namespace: 'ns', name: 'web', options: { resyncSeconds: 60 } }],
      signal: 'poke',
      signalArgs: [[p]],
      workflowIdConflictPolicy: 'USE_EXISTING',
      workflowIdReusePolicy: 'ALLOW_DUPLICATE',
      typedSearchAttributes: [
        { key: searchAttributeKeys.kind, value: 'Service' },
        { key: searchAttributeKeys.namespace, value: 'ns' },
        { key: searchAttributeKeys.name, value: 'web' },
      ],
      staticSummary: 'Service ns/web',
    });
    expect([searchAttributeKeys.kind.name, searchAttributeKeys.namespace.name, searchAttributeKeys.name.name]).toEqual([
      'KnativeKind',
      'KnativeNamespace',
      'KnativeName',
    ]);
    await settle();
    expect(poker.backlog).toBe(0);
    expect(await counter('tidal_pokes_delivered_total', 'Service')).toBe(1);
    expect(await counter('tidal_pokes_failed_total', 'Service')).toBe(0);
  });

  it('starts other kinds with their own workflow type; without workflowOptions the input has no options', async () => {
    const { temporal, poker } = make();
    poker.poke(target('r-00001', 'Revision', 'prod'), poke('9', 'Pod/prod/p'));
    await temporal.called(1);
    expect(temporal.calls[0]!.workflowType).toBe('revisionWorkflow');
    expect(temporal.calls[0]!.opts).toMatchObject({
      workflowId: 'Revision/prod/r-00001',
      args: [{ kind: 'Revision', namespace: 'prod', name: 'r-00001' }],
      staticSummary: 'Revision prod/r-00001',
    });
    expect((temporal.calls[0]!.opts.args as Record<string, unknown>[])[0]).not.toHaveProperty('options');
  });

  it('delivers pokes for different workflows independently, up to `concurrency` at a time', async () => {
    const hold = [deferred(), deferred(), deferred()];
    const { temporal, poker } = make([...hold], { concurrency: 2 });
    poker.poke(target('a'), poke('1'));
    poker.poke(target('b'), poke('1'));
    poker.poke(target('c'), poke('1'));
    await temporal.called(2);
    await settle();
    expect(temporal.signalled).toEqual(['Service/ns/a 1', 'Service/ns/b 1']);
    expect(poker.backlog).toBe(3); // two in flight, one waiting

    hold[0]!.resolve();
    await temporal.called(3);
    expect(temporal.signalled).toEqual(['Service/ns/a 1', 'Service/ns/b 1', 'Service/ns/c 1']);
    hold[1]!.resolve();
    hold[2]!.resolve();
    await settle();
    expect(poker.backlog).toBe(0);
  });

  it('pokes for one workflow that wait coalesce: only the newest is delivered', async () => {
    const first = deferred();
    const { temporal, poker } = make([first], { concurrency: 1 });
    poker.poke(target('busy'), poke('1'));
    await temporal.called(1);
    poker.poke(target('s'), poke('5'));
    poker.poke(target('s'), poke('6'));
    poker.poke(target('s'), poke('7'));
    expect(poker.backlog).toBe(2); // one in flight, one (coalesced) waiting
    first.resolve();
    await temporal.called(2);
    await settle();
    expect(temporal.signalled).toEqual(['Service/ns/busy 1', 'Service/ns/s 7']);
    expect(poker.backlog).toBe(0);
  });
});

describe('Poker: workflow history', () => {
  it('meters signals to one workflow: a burst goes at once, then the budget refills at signalsPerSecond', async () => {
    const { temporal, poker } = make([], { signalBurst: 3, signalsPerSecond: 5 });
    for (let i = 1; i <= 5; i++) {
      poker.poke(target('hot'), poke(String(i)));
      await settle();
    }
    // Three signals at once; the fourth waits 200 ms for a token, and the fifth coalesced into it meanwhile.
    expect(temporal.signalled).toEqual(['Service/ns/hot 1', 'Service/ns/hot 2', 'Service/ns/hot 3']);
    poker.poke(target('cold'), poke('1'));
    await settle();
    expect(temporal.signalled.at(-1)).toBe('Service/ns/cold 1'); // another workflow's budget is its own
    await vi.advanceTimersByTimeAsync(199);
    expect(temporal.signalled).toHaveLength(4);
    await vi.advanceTimersByTimeAsync(1);
    expect(temporal.signalled.slice(4)).toEqual(['Service/ns/hot 5']);
    expect(poker.backlog).toBe(0);
  });

  it('delivers a sweep poke as a start that leaves a running workflow alone, and a sweep with news as a signal', async () => {
    const { temporal, poker } = make();
    const sweep: Poke = { source: 'Tidal/sweep', reason: 'resync' };
    poker.poke(target('idle'), sweep, { force: true });
    await settle();
    expect(temporal.starts.map((c) => [c.workflowType, c.opts.workflowId, c.opts.workflowIdConflictPolicy])).toEqual([
      ['serviceWorkflow', 'Service/ns/idle', 'USE_EXISTING'],
    ]);
    expect(temporal.starts[0]!.opts).not.toHaveProperty('signal');
    expect(temporal.signalWithStart).not.toHaveBeenCalled();
    // Held behind a delivery in flight, a sweep and a change coalesce: the change makes it a signal.
    const hold = deferred();
    temporal.outcomes.push(hold);
    poker.poke(target('busy'), poke('1'));
    await temporal.called(1);
    poker.poke(target('busy'), sweep, { force: true });
    poker.poke(target('busy'), poke('2', 'Configuration/ns/busy'));
    hold.resolve();
    await temporal.called(2);
    expect(temporal.calls[1]!.opts.signalArgs[0]!.map((p) => p.source)).toEqual(['Tidal/sweep', 'Configuration/ns/busy']);
    expect(temporal.starts).toHaveLength(1);
  });
});

describe('Poker: failures', () => {
  it('retries a failed delivery with doubling backoff capped at maxBackoffMs until it succeeds; nothing is dropped', async () => {
    const down = () => new Error('temporal unreachable');
    const { temporal, poker, log } = make([down(), down(), down(), down()], { maxBackoffMs: 1_500 });
    poker.poke(target('s'), poke('3'));
    await temporal.called(1);
    await settle();
    expect(poker.backlog).toBe(1);
    await vi.advanceTimersByTimeAsync(499);
    expect(temporal.signalWithStart).toHaveBeenCalledTimes(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(temporal.signalWithStart).toHaveBeenCalledTimes(2);

    await vi.advanceTimersByTimeAsync(60_000);
    const at = temporal.calls.map((c) => c.at);
    expect(at.slice(1).map((t, i) => t - at[i]!)).toEqual([500, 1_000, 1_500, 1_500]);
    expect(temporal.signalled).toEqual(Array<string>(5).fill('Service/ns/s 3'));
    expect(poker.backlog).toBe(0);
    expect(await counter('tidal_pokes_failed_total', 'Service')).toBe(4);
    expect(await counter('tidal_pokes_delivered_total', 'Service')).toBe(1);
    expect(log.warn.mock.calls.map((c) => (c[0] as { attempts: number; backoffMs: number }).attempts)).toEqual([1, 2, 3, 4]);
    expect(log.warn).toHaveBeenCalledWith(
      { err: expect.any(Error), kind: 'Service', namespace: 'ns', name: 's', attempts: 1, backoffMs: 500 },
      'poke failed; will retry',
    );
  });

  it('while deliveries to one workflow fail, a newer poke replaces the pending one and keeps its backoff', async () => {
    const { temporal, poker } = make([new Error('down'), new Error('down')]);
    poker.poke(target('s'), poke('1'));
    await temporal.called(1);
    await settle();
    poker.poke(target('s'), poke('2'));
    poker.poke(target('s'), poke('3'));
    await settle();
    expect(temporal.signalWithStart).toHaveBeenCalledTimes(1); // still backing off: the new poke waits
    expect(poker.backlog).toBe(1);

    await vi.advanceTimersByTimeAsync(500); // first retry, fails again
    poker.poke(target('s'), poke('4'));
    await vi.advanceTimersByTimeAsync(999);
    expect(temporal.signalWithStart).toHaveBeenCalledTimes(2);
    await vi.advanceTimersByTimeAsync(1); // second retry succeeds
    await settle();
    expect(temporal.signalled).toEqual(['Service/ns/s 1', 'Service/ns/s 3', 'Service/ns/s 4']);
    expect(poker.backlog).toBe(0);
    await vi.advanceTimersByTimeAsync(60_000);
    expect(temporal.signalWithStart).toHaveBeenCalledTimes(3); // the superseded pokes never go out
  });

  it('a failing workflow does not hold up pokes for others', async () => {
    const { temporal, poker } = make([new Error('down')]);
    poker.poke(target('bad'), poke('1'));
    await temporal.called(1);
    await settle();
    poker.poke(target('good'), poke('1'));
    await temporal.called(2);
    expect(temporal.signalled).toEqual(['Service/ns/bad 1', 'Service/ns/good 1']);
    expect(temporal.calls[1]!.at).toBe(temporal.calls[0]!.at);
  });

  it('a poke to a workflow whose backoff is over is not delayed again after success', async () => {
    const { temporal, poker } = make([new Error('down')]);
    poker.poke(target('s'), poke('1'));
    await vi.advanceTimersByTimeAsync(500);
    expect(temporal.signalWithStart).toHaveBeenCalledTimes(2);
    poker.poke(target('s'), poke('2'));
    await temporal.called(3);
    expect(temporal.calls[2]!.at).toBe(temporal.calls[1]!.at); // attempts reset after the success
  });

  // Regression: a poke for a workflow whose delivery was in flight used to start a second, concurrent delivery;
  // when both failed the older poke won. Deliveries to one workflow are serialised, so the newest is retried.
  it('when two deliveries to one workflow fail, the newest poke is the one retried', async () => {
    const a = deferred();
    const b = deferred();
    const { temporal, poker } = make([a, b], { concurrency: 2 });
    poker.poke(target('s'), poke('1'));
    await temporal.called(1);
    poker.poke(target('s'), poke('2'));
    await settle();
    // One delivery per workflow at a time: rv 2 waits for rv 1 instead of racing it.
    expect(temporal.calls).toHaveLength(1);
    a.reject(new Error('down'));
    await settle();
    await vi.advanceTimersByTimeAsync(60_000);
    await temporal.called(2);
    expect(temporal.calls[1]!.opts.signalArgs[0]![0]!.resourceVersion).toBe('2');
    b.reject(new Error('down'));
    await settle();
    await vi.advanceTimersByTimeAsync(60_000);
    expect(temporal.calls.at(-1)!.opts.signalArgs[0]![0]!.resourceVersion).toBe('2');
    expect(temporal.calls.map((c) => c.opts.signalArgs[0]![0]!.resourceVersion)).not.toContain(undefined);
  });
});

describe('Poker: de-duplication', () => {
  it('skips a poke identical (same source and resourceVersion) to the last delivered one; force sends it anyway', async () => {
    const { temporal, poker } = make();
    poker.poke(target('s'), poke('5'));
    await temporal.called(1);
    await settle();

    poker.poke(target('s'), poke('5'));
    expect(poker.backlog).toBe(0);
    await settle();
    expect(temporal.signalWithStart).toHaveBeenCalledTimes(1);

    poker.poke(target('s'), poke('5'), { force: true });
    await temporal.called(2);
    poker.poke(target('s'), poke('5', 'Configuration/ns/s')); // another source
    await temporal.called(3);
    poker.poke(target('s'), poke('6')); // another resourceVersion
    await temporal.called(4);
    poker.poke(target('other'), poke('6')); // another workflow
    await temporal.called(5);
    expect(temporal.signalled).toEqual(['Service/ns/s 5', 'Service/ns/s 5', 'Service/ns/s 5', 'Service/ns/s 6', 'Service/ns/other 6']);
  });

  it('never skips deletions nor pokes without a resourceVersion', async () => {
    const { temporal, poker } = make();
    poker.poke(target('s'), poke('5'));
    await temporal.called(1);
    await settle();
    poker.poke(target('s'), poke('5', 'Service/ns/s', 'deleted'));
    await temporal.called(2);
    await settle();
    poker.poke(target('s'), poke(undefined, 'ConfigMap/knative-serving/config-network'));
    await temporal.called(3);
    await settle();
    poker.poke(target('s'), poke(undefined, 'ConfigMap/knative-serving/config-network'));
    await temporal.called(4);
    expect(temporal.calls.map((c) => c.opts.signalArgs[0]![0]!.reason)).toEqual(['updated', 'deleted', 'updated', 'updated']);
  });

  it('a failed delivery is not remembered as sent: the same poke may be queued again', async () => {
    const { temporal, poker } = make([new Error('down')], { maxBackoffMs: 100 });
    poker.poke(target('s'), poke('5'));
    await temporal.called(1);
    await settle();
    poker.poke(target('s'), poke('5')); // replaces the pending retry, not de-duplicated
    expect(poker.backlog).toBe(1);
    await vi.advanceTimersByTimeAsync(100);
    expect(temporal.signalled).toEqual(['Service/ns/s 5', 'Service/ns/s 5']);
    await settle();
    poker.poke(target('s'), poke('5'));
    expect(poker.backlog).toBe(0); // delivered now, so skipped
  });
});

describe('Poker: close', () => {
  it('close() resolves while a delivery is backing off, and nothing is sent afterwards', async () => {
    const { temporal, poker } = make([new Error('down')]);
    poker.poke(target('s'), poke('1'));
    await temporal.called(1);
    await settle();
    expect(poker.backlog).toBe(1);
    let closed = false;
    const done = poker.close().then(() => (closed = true));
    await settle();
    expect(closed).toBe(true);
    await done;
    poker.poke(target('t'), poke('1'));
    await vi.advanceTimersByTimeAsync(60_000);
    expect(temporal.signalWithStart).toHaveBeenCalledTimes(1);
  });

  it('close() on an idle poker resolves', async () => {
    const { poker } = make();
    await expect(poker.close()).resolves.toBeUndefined();
  });
});

describe('Poker: one signal per workflow, one poke per source', () => {
  it('keeps the newest poke of every source waiting for a workflow, so one source never hides another', async () => {
    const hold = deferred();
    const { temporal, poker } = make([hold]);
    poker.poke(target('busy'), poke('1'));
    await temporal.called(1);
    // While the first delivery is in flight, three sources poke; the Route's own poke is replaced by its newer one.
    poker.poke(target('busy'), { ...poke('2', 'Service/ns/busy'), token: 's.a' });
    poker.poke(target('busy'), { ...poke('3', 'Ingress/ns/busy'), token: 'd.b.c' });
    poker.poke(target('busy'), { ...poke('4', 'Service/ns/busy'), token: 's.d' });
    hold.resolve();
    await temporal.called(2);
    expect(temporal.calls[1]!.opts.signalArgs[0]!.map((p) => `${p.source} ${p.resourceVersion}`)).toEqual(['Service/ns/busy 4', 'Ingress/ns/busy 3']);
  });

  it('a deletion waiting for delivery stays a deletion when a newer event of the same source arrives', async () => {
    const hold = deferred();
    const { temporal, poker } = make([hold]);
    poker.poke(target('gone'), poke('1'));
    await temporal.called(1);
    poker.poke(target('gone'), poke('2', 'Service/ns/s', 'deleted'));
    poker.poke(target('gone'), { ...poke('3', 'Service/ns/s', 'added'), token: 's.new' });
    hold.resolve();
    await temporal.called(2);
    expect(temporal.calls[1]!.opts.signalArgs[0]).toEqual([{ source: 'Service/ns/s', reason: 'deleted', resourceVersion: '3', token: 's.new' }]);
  });

  it('skips a poke whose token equals the last one delivered from that source, whatever its resourceVersion', async () => {
    const { temporal, poker } = make();
    poker.poke(target('t'), { ...poke('1'), token: 's.same' });
    await temporal.called(1);
    await settle();
    // A status-only change: new resourceVersion, same token for the object's own workflow.
    poker.poke(target('t'), { ...poke('2'), token: 's.same' });
    await settle();
    expect(temporal.calls).toHaveLength(1);
    poker.poke(target('t'), { ...poke('3'), token: 's.other' });
    await temporal.called(2);
    expect(temporal.signalled).toEqual(['Service/ns/t 1', 'Service/ns/t 3']);
  });
});

describe('Poker: content a previous leader delivered (remember)', () => {
  it('is not sent again; other content from that source, or the same content found by a list, is', async () => {
    const { temporal, poker } = make();
    poker.remember(target('r'), { ...poke('5', 'Revision/ns/r-00001'), token: 'd.ready' });
    poker.poke(target('r'), { ...poke('6', 'Revision/ns/r-00001'), token: 'd.ready' });
    await settle();
    expect(temporal.signalled).toEqual([]);
    poker.poke(target('r'), { ...poke('7', 'Revision/ns/r-00001'), token: 'd.ready' }, { fresh: true });
    await temporal.called(1);
    poker.poke(target('r'), { ...poke('8', 'Revision/ns/r-00001'), token: 'd.failed' });
    await temporal.called(2);
    expect(temporal.signalled).toEqual(['Service/ns/r 7', 'Service/ns/r 8']);
  });
});

describe('Poker: a change a list found', () => {
  it('is sent even when its content equals the last one delivered: the versions in between went by unseen', async () => {
    const { temporal, poker } = make();
    // The Configuration as the watch delivered it: content A.
    poker.poke(target('s'), { ...poke('10', 'Configuration/ns/s'), token: 'd.A.x' });
    await temporal.called(1);
    await settle();
    // The Service's pass applies B (the watch event of that write is lost with a broken watch), then a stale writer
    // puts A back. A re-list after 410 Gone finds A: skipping it as "already delivered" would leave the workflow on B.
    poker.poke(target('s'), { ...poke('12', 'Configuration/ns/s'), token: 'd.A.x' }, { fresh: true });
    await temporal.called(2);
    expect(temporal.signalled).toEqual(['Service/ns/s 10', 'Service/ns/s 12']);
    // A watch event of the same content is still skipped.
    poker.poke(target('s'), { ...poke('13', 'Configuration/ns/s'), token: 'd.A.x' });
    await settle();
    expect(temporal.calls).toHaveLength(2);
  });
});

describe('Poker: the catch-up lane (a start without a bookmark, a sweep)', () => {
  it('catch-up pokes go after every ordinary poke, metered to catchUpPerSecond', async () => {
    const { temporal, poker } = make([], { concurrency: 100, catchUpPerSecond: 2 });
    for (let i = 0; i < 6; i++) poker.poke(target(`settled-${i}`), poke(String(10 + i), `Service/ns/settled-${i}`), { catchUp: true });
    poker.poke(target('changed'), poke('99', 'Service/ns/changed'));
    await settle();
    // The ordinary poke first although it came last; then the lane's burst (2).
    expect(temporal.deliveries).toEqual(['Service/ns/changed 99', 'Service/ns/settled-0 10', 'Service/ns/settled-1 11']);
    await vi.advanceTimersByTimeAsync(499);
    expect(temporal.deliveries).toHaveLength(3);
    await vi.advanceTimersByTimeAsync(1);
    expect(temporal.deliveries.at(-1)).toBe('Service/ns/settled-2 12');
    // An ordinary poke arriving mid-catch-up is not metered and goes before the rest of the lane.
    poker.poke(target('new'), poke('100', 'Service/ns/new'));
    await settle();
    expect(temporal.deliveries.at(-1)).toBe('Service/ns/new 100');
    await vi.advanceTimersByTimeAsync(1500);
    expect(temporal.deliveries.slice(-3)).toEqual(['Service/ns/settled-3 13', 'Service/ns/settled-4 14', 'Service/ns/settled-5 15']);
    expect(poker.backlog).toBe(0);
  });

  it('goes at catchUpQuietPerSecond once no other poke has waited, been under way or delivered for 2 s, and drops back when one comes', async () => {
    const { temporal, poker } = make([], { concurrency: 100, catchUpPerSecond: 2, catchUpQuietPerSecond: 10 });
    for (let i = 0; i < 60; i++) poker.poke(target(`settled-${i}`), poke(String(100 + i), `Service/ns/settled-${i}`), { catchUp: true });
    poker.poke(target('changed'), poke('99', 'Service/ns/changed'));
    await settle();
    const lane = () => temporal.deliveries.filter((d) => d.startsWith('Service/ns/settled-')).length;
    // The changed Service, then the lane's burst of a second at 2 a second.
    expect(temporal.deliveries[0]).toBe('Service/ns/changed 99');
    expect(lane()).toBe(2);
    // Within 2 s of that delivery the lane keeps to 2 a second (at 0.5, 1 and 1.5 s)…
    await vi.advanceTimersByTimeAsync(1_999);
    expect(lane()).toBe(5);
    // …then, the first lane quiet, to 10 a second.
    await vi.advanceTimersByTimeAsync(1_000);
    const quiet = lane() - 5;
    expect(quiet).toBeGreaterThanOrEqual(9);
    expect(quiet).toBeLessThanOrEqual(11);
    // A change comes: it goes first, and the lane drops back to 2 a second for the 2 s after its delivery.
    poker.poke(target('new'), poke('200', 'Service/ns/new'));
    await settle();
    expect(temporal.deliveries.at(-1)).toBe('Service/ns/new 200');
    const before = lane();
    await vi.advanceTimersByTimeAsync(1_990);
    expect(lane() - before).toBeGreaterThanOrEqual(3);
    expect(lane() - before).toBeLessThanOrEqual(5);
    // Quiet again: 10 a second.
    const after = lane();
    await vi.advanceTimersByTimeAsync(2_000);
    expect(lane() - after).toBeGreaterThanOrEqual(18);
  });

  it('an ordinary poke for a workflow waiting in the lane takes it out, with both pokes', async () => {
    const { temporal, poker } = make([], { concurrency: 100, catchUpPerSecond: 1 });
    poker.poke(target('a'), poke('1', 'Service/ns/a'), { catchUp: true });
    poker.poke(target('b'), poke('2', 'Service/ns/b'), { catchUp: true });
    await settle();
    expect(temporal.deliveries).toEqual(['Service/ns/a 1']);
    poker.poke(target('b'), poke('3', 'Configuration/ns/b'));
    await settle();
    expect(temporal.deliveries).toEqual(['Service/ns/a 1', 'Service/ns/b 2,3']);
  });
  it('starts a run that is gone with its catch-up pokes as input, marked catch-up; a run that is there is signalled', async () => {
    const { temporal, poker } = make([], { concurrency: 100, workflowOptions: { resyncSeconds: 60 } });
    temporal.running.add('Service/ns/busy');
    const settled = poke('5', 'Service/ns/settled', 'added');
    poker.poke(target('settled'), settled, { catchUp: true });
    poker.poke(target('busy'), poke('6', 'Service/ns/busy', 'added'), { catchUp: true });
    await settle();
    expect(temporal.starts).toHaveLength(1);
    expect(temporal.starts[0]!.opts).toMatchObject({
      workflowId: 'Service/ns/settled',
      taskQueue: 'tidal',
      args: [{ kind: 'Service', namespace: 'ns', name: 'settled', options: { resyncSeconds: 60 }, pokes: [settled], catchUp: true }],
      workflowIdConflictPolicy: 'FAIL',
      workflowIdReusePolicy: 'ALLOW_DUPLICATE',
    });
    expect(temporal.starts[0]!.opts).not.toHaveProperty('signal');
    // The run that is there gets the pokes as a signal; should it end meanwhile, the run the signal starts is a
    // catch-up run too.
    expect(temporal.signalled).toEqual(['Service/ns/busy 6']);
    expect(temporal.calls[0]!.opts.args).toEqual([{ kind: 'Service', namespace: 'ns', name: 'busy', options: { resyncSeconds: 60 }, catchUp: true }]);
    expect(temporal.deliveries).toEqual(['Service/ns/settled 5', 'Service/ns/busy 6']);
    // Delivered: the same pokes again are not sent.
    poker.poke(target('settled'), settled, { catchUp: true });
    await settle();
    expect(temporal.starts).toHaveLength(1);
  });

  it('a sweep leaves out a run the catch-up started in the last minutes (it passed on this code), not one after that', async () => {
    const { temporal, poker } = make([], { concurrency: 100 });
    const sweep: Poke = { source: 'Tidal/sweep', reason: 'resync' };
    poker.poke(target('fresh'), poke('1', 'Service/ns/fresh', 'added'), { catchUp: true });
    temporal.running.add('Service/ns/signalled');
    poker.poke(target('signalled'), poke('2', 'Service/ns/signalled', 'added'), { catchUp: true });
    await settle();
    expect(temporal.deliveries).toEqual(['Service/ns/fresh 1', 'Service/ns/signalled 2']);
    // The start-up sweep, 30 s later: the run the catch-up signalled may have failed to replay (ADR 0002), the fresh
    // one has not.
    await vi.advanceTimersByTimeAsync(30_000);
    poker.poke(target('fresh'), sweep, { force: true, catchUp: true });
    poker.poke(target('signalled'), sweep, { force: true, catchUp: true });
    await settle();
    expect(temporal.starts.map((c) => [c.opts.workflowId, c.opts.workflowIdConflictPolicy])).toEqual([
      ['Service/ns/fresh', 'FAIL'],
      ['Service/ns/signalled', 'USE_EXISTING'],
    ]);
    expect(temporal.starts[1]!.opts.args).toEqual([{ kind: 'Service', namespace: 'ns', name: 'signalled', catchUp: true }]);
    expect(poker.backlog).toBe(0);
    // A later sweep starts the fresh one's again (its run has ended by then): Knative's global resync.
    await vi.advanceTimersByTimeAsync(10 * 60_000);
    poker.poke(target('fresh'), sweep, { force: true, catchUp: true });
    await settle();
    expect(temporal.starts.map((c) => c.opts.workflowId)).toEqual(['Service/ns/fresh', 'Service/ns/signalled', 'Service/ns/fresh']);
  });
});

describe('Poker: a new object’s workflow started eagerly', () => {
  /** A client on the worker's connection: its starts succeed (eagerly), find the run there, or fail. */
  function eagerClient(outcomes: ('eager' | 'queued' | 'exists' | Error)[]) {
    const starts: { workflowType: string; opts: Record<string, unknown> }[] = [];
    const start = vi.fn((workflowType: string, opts: Record<string, unknown>) => {
      starts.push({ workflowType, opts });
      const outcome = outcomes.shift() ?? 'eager';
      if (outcome === 'exists')
        return Promise.reject(new WorkflowExecutionAlreadyStartedError('already started', String(opts.workflowId), workflowType));
      if (outcome instanceof Error) return Promise.reject(outcome);
      return Promise.resolve({ eagerlyStarted: outcome === 'eager' });
    });
    return { starts, client: { workflow: { start } } as unknown as Client };
  }
  const started = async (eager: string) =>
    (await registry.getMetricsAsJSON()).find((m) => m.name === 'tidal_pokes_started_total')?.values.find((v) => v.labels.eager === eager)?.value ?? 0;

  it('starts the workflow of an object its own poke says was added, with the pokes as input, refusing a run that exists', async () => {
    const eager = eagerClient(['eager']);
    const { temporal, poker } = make([], { workflowOptions: { resyncSeconds: 60 }, eagerClient: () => eager.client });
    const added = poke('7', 'Revision/ns/r-00001', 'added');
    const owner = poke('7', 'Revision/ns/r-00001', 'added');
    poker.poke(target('r-00001', 'Revision'), added);
    poker.poke(target('r', 'Configuration'), owner); // the owner's poke is a dependency's: signalled as ever
    await settle();
    expect(eager.starts).toHaveLength(1);
    expect(eager.starts[0]?.workflowType).toBe('revisionWorkflow');
    expect(eager.starts[0]?.opts).toMatchObject({
      workflowId: 'Revision/ns/r-00001',
      taskQueue: 'tidal',
      args: [{ kind: 'Revision', namespace: 'ns', name: 'r-00001', options: { resyncSeconds: 60 }, pokes: [added] }],
      workflowIdConflictPolicy: 'FAIL',
      workflowIdReusePolicy: 'ALLOW_DUPLICATE',
      requestEagerStart: true,
      staticSummary: 'Revision ns/r-00001',
    });
    expect(temporal.signalled).toEqual(['Configuration/ns/r 7']);
    expect(await started('true')).toBe(1);
    // Delivered: the same poke again is not sent.
    poker.poke(target('r-00001', 'Revision'), added);
    await settle();
    expect(eager.starts).toHaveLength(1);
    expect(temporal.calls).toHaveLength(1);
  });

  it('signals instead when the run exists, and counts a start whose first task went through the queue', async () => {
    const eager = eagerClient(['exists', 'queued']);
    const { temporal, poker } = make([], { eagerClient: () => eager.client });
    poker.poke(target('a'), poke('1', 'Service/ns/a', 'added'));
    await settle();
    expect(eager.starts).toHaveLength(1);
    expect(temporal.signalled).toEqual(['Service/ns/a 1']);
    poker.poke(target('b'), poke('2', 'Service/ns/b', 'added'));
    await settle();
    expect(eager.starts).toHaveLength(2);
    expect(temporal.calls).toHaveLength(1);
    expect([await started('true'), await started('false')]).toEqual([0, 1]);
  });

  it('a failed start is retried like any failed delivery, and nothing is dropped', async () => {
    const eager = eagerClient([new Error('unavailable')]);
    const { temporal, poker } = make([], { eagerClient: () => eager.client });
    poker.poke(target('a'), poke('1', 'Service/ns/a', 'added'));
    await settle();
    expect(eager.starts).toHaveLength(1);
    expect(await counter('tidal_pokes_failed_total', 'Service')).toBe(1);
    await vi.advanceTimersByTimeAsync(500);
    expect(eager.starts).toHaveLength(2);
    expect(temporal.calls).toHaveLength(0);
    expect(await started('true')).toBe(1);
  });

  it('updates and a poker without a running worker signal as ever; the start-up catch-up starts through the task queue', async () => {
    const eager = eagerClient([]);
    const { temporal, poker } = make([], { concurrency: 100, eagerClient: () => eager.client });
    poker.poke(target('a'), poke('1', 'Service/ns/a', 'updated'));
    poker.poke(target('b'), poke('2', 'Service/ns/b', 'added'), { catchUp: true });
    await settle();
    expect(temporal.signalled).toEqual(['Service/ns/a 1']);
    expect(temporal.deliveries).toEqual(['Service/ns/a 1', 'Service/ns/b 2']);
    expect(temporal.starts[0]!.opts).not.toHaveProperty('requestEagerStart');
    const { temporal: other, poker: noWorker } = make([], { eagerClient: () => undefined });
    noWorker.poke(target('c'), poke('3', 'Service/ns/c', 'added'));
    await settle();
    expect(other.signalled).toEqual(['Service/ns/c 3']);
    expect(eager.starts).toHaveLength(0);
  });
});

describe('Poker: own writes', () => {
  it('sends no workflow the echo of a version its own step wrote; anyone else, a deletion and a later version are sent', async () => {
    const ownWrites = new OwnWrites();
    const { temporal, poker } = make([], { ownWrites });
    ownWrites.note('Service/ns/web', 'Route/ns/web', '7');
    // The Service's own Route write: not sent to the Service…
    poker.poke(target('web'), poke('7', 'Route/ns/web', 'added'));
    // …but to the Route's own workflow, which did not write it (this is what starts a child's workflow).
    poker.poke(target('web', 'Route'), poke('7', 'Route/ns/web', 'added'));
    await temporal.called(1);
    await settle();
    expect(temporal.signalled).toEqual(['Route/ns/web 7']);
    expect(await counter('tidal_pokes_own_echoes_total', 'Service')).toBe(1);
    // A later version (someone else's write), and a deletion of the written version, are news.
    poker.poke(target('web'), poke('8', 'Route/ns/web'));
    await temporal.called(2);
    poker.poke(target('web'), poke('7', 'Route/ns/web', 'deleted'));
    await temporal.called(3);
    expect(temporal.signalled.slice(1)).toEqual(['Service/ns/web 8', 'Service/ns/web 7']);
  });

  it('sends a version its own step wrote when a list found it: the versions before it, someone else’s among them, went by unseen', async () => {
    const ownWrites = new OwnWrites();
    const { temporal, poker } = make([], { ownWrites });
    // The Revision's own status write (rv 9) returned the label the Route's labeler had put on at rv 8, which the watch
    // missed while the API server restarted; the list after it finds rv 9 alone.
    ownWrites.note('Revision/ns/web-00002', 'Revision/ns/web-00002', '9');
    poker.poke(target('web-00002', 'Revision'), poke('9', 'Revision/ns/web-00002'), { fresh: true, listed: true });
    await temporal.called(1);
    expect(temporal.signalled).toEqual(['Revision/ns/web-00002 9']);
    // Waiting, it is not dropped at delivery either; the watch's own echo of a later write still is.
    ownWrites.note('Revision/ns/web-00002', 'Revision/ns/web-00002', '11');
    poker.poke(target('web-00002', 'Revision'), poke('11', 'Revision/ns/web-00002'));
    ownWrites.note('Revision/ns/web-00002', 'Revision/ns/web-00002', '12');
    poker.poke(target('web-00002', 'Revision'), poke('12', 'Revision/ns/web-00002'), { listed: true });
    await temporal.called(2);
    await settle();
    expect(temporal.signalled).toEqual(['Revision/ns/web-00002 9', 'Revision/ns/web-00002 12']);
    expect(await counter('tidal_pokes_own_echoes_total', 'Revision')).toBe(1);
  });

  it('drops a waiting poke whose write the step heard of only after the watch event, unless it replaced another', async () => {
    const ownWrites = new OwnWrites();
    const { temporal, poker } = make([], { ownWrites, signalBurst: 1, signalsPerSecond: 1 });
    poker.poke(target('web'), poke('1', 'Service/ns/web'));
    await temporal.called(1);
    // The watch event of the Service's own Ingress write (rv 3) comes first; the step hears its response after.
    poker.poke(target('web'), poke('3', 'Ingress/ns/web', 'added'));
    poker.poke(target('web'), poke('4', 'Route/ns/web'));
    poker.poke(target('web'), poke('5', 'Route/ns/web')); // replaces rv 4 (someone else's): not dropped
    ownWrites.note('Service/ns/web', 'Ingress/ns/web', '3');
    ownWrites.note('Service/ns/web', 'Route/ns/web', '5');
    await vi.advanceTimersByTimeAsync(1_000);
    await temporal.called(2);
    expect(temporal.signalled).toEqual(['Service/ns/web 1', 'Service/ns/web 5']);
    // A batch of own echoes only is not sent at all.
    poker.poke(target('web'), poke('6', 'Ingress/ns/web'));
    ownWrites.note('Service/ns/web', 'Ingress/ns/web', '6');
    await vi.advanceTimersByTimeAsync(2_000);
    expect(temporal.signalled).toHaveLength(2);
    expect(await counter('tidal_pokes_own_echoes_total', 'Service')).toBe(2);
  });

  it('holds a workflow’s pokes while one of its steps runs here, then drops the echoes of what the step wrote', async () => {
    const ownWrites = new OwnWrites();
    const { temporal, poker } = make([], { ownWrites });
    ownWrites.stepStarted('Service/ns/web');
    poker.poke(target('web'), poke('3', 'Ingress/ns/web', 'added')); // its own write, heard of before the response
    poker.poke(target('web'), poke('4', 'Revision/ns/web-00001')); // news: the Revision's own workflow wrote it
    poker.poke(target('other'), poke('9', 'Service/ns/other'));
    await temporal.called(1);
    await settle();
    expect(temporal.signalled).toEqual(['Service/ns/other 9']);
    ownWrites.note('Service/ns/web', 'Ingress/ns/web', '3');
    ownWrites.stepEnded('Service/ns/web');
    await temporal.called(2);
    expect(temporal.signalled).toEqual(['Service/ns/other 9', 'Service/ns/web 4']);
    // The content of its own write is known to it: the same content again from that source is not sent.
    poker.poke(target('web'), { ...poke('7', 'Ingress/ns/web'), token: 'd.a.b' });
    ownWrites.note('Service/ns/web', 'Ingress/ns/web', '7');
    await settle();
    poker.poke(target('web'), { ...poke('8', 'Ingress/ns/web'), token: 'd.a.b' });
    await settle();
    expect(temporal.signalled).toHaveLength(2);
    // A step that does not end holds its workflow's pokes for 2 s at the most.
    ownWrites.stepStarted('Service/ns/web');
    poker.poke(target('web'), poke('5', 'Revision/ns/web-00001'));
    await vi.advanceTimersByTimeAsync(1_900);
    expect(temporal.signalled).toHaveLength(2);
    await vi.advanceTimersByTimeAsync(200);
    await temporal.called(3);
    expect(temporal.signalled[2]).toBe('Service/ns/web 5');
  });

  it('sends the echoes of a step that failed after all: the workflow never learned of its writes', async () => {
    const ownWrites = new OwnWrites();
    const { temporal, poker } = make([], { ownWrites });
    // A step writes the Revision (rv 3) and the Ingress (rv 4); the Revision's watch event comes while it runs.
    ownWrites.stepStarted('Service/ns/web');
    ownWrites.note('Service/ns/web', 'Revision/ns/web-00001', '3');
    ownWrites.note('Service/ns/web', 'Ingress/ns/web', '4');
    poker.poke(target('web'), poke('3', 'Revision/ns/web-00001'));
    await settle();
    expect(await counter('tidal_pokes_own_echoes_total', 'Service')).toBe(1);
    // Then the step fails: the dropped echo goes out, and the Ingress's echo, arriving later, is news as well.
    ownWrites.stepEnded('Service/ns/web', [
      { source: 'Revision/ns/web-00001', resourceVersion: '3' },
      { source: 'Ingress/ns/web', resourceVersion: '4' },
    ]);
    await temporal.called(1);
    expect(temporal.signalled).toEqual(['Service/ns/web 3']);
    poker.poke(target('web'), poke('4', 'Ingress/ns/web'));
    await temporal.called(2);
    expect(temporal.signalled[1]).toBe('Service/ns/web 4');
    // A step that succeeds keeps its writes: their echoes stay dropped.
    ownWrites.stepStarted('Service/ns/web');
    ownWrites.note('Service/ns/web', 'Revision/ns/web-00001', '5');
    poker.poke(target('web'), poke('5', 'Revision/ns/web-00001'));
    ownWrites.stepEnded('Service/ns/web');
    poker.poke(target('web'), poke('5', 'Revision/ns/web-00001'));
    await settle();
    expect(temporal.signalled).toHaveLength(2);
  });

  it('an echo does not replace another poke of the same source still waiting', async () => {
    const ownWrites = new OwnWrites();
    const { temporal, poker } = make([], { ownWrites, signalBurst: 1, signalsPerSecond: 1 });
    poker.poke(target('web'), poke('1', 'Service/ns/web'));
    await temporal.called(1);
    // Someone changes the Route (rv 5) while the workflow's budget is spent; then its own step writes rv 6.
    poker.poke(target('web'), poke('5', 'Route/ns/web'));
    ownWrites.note('Service/ns/web', 'Route/ns/web', '6');
    poker.poke(target('web'), poke('6', 'Route/ns/web'));
    await vi.advanceTimersByTimeAsync(1_000);
    await temporal.called(2);
    expect(temporal.signalled).toEqual(['Service/ns/web 1', 'Service/ns/web 5']);
  });
});

describe('OwnWrites', () => {
  it('remembers a version for its time and within its bound, per workflow and source', () => {
    let now = 0;
    const w = new OwnWrites(1_000, 3, () => now);
    w.note('Service/ns/a', 'Route/ns/a', '1');
    expect(w.wrote('Service/ns/a', 'Route/ns/a', '1')).toBe(true);
    expect(w.wrote('Service/ns/b', 'Route/ns/a', '1')).toBe(false);
    expect(w.wrote('Service/ns/a', 'Route/ns/a', '2')).toBe(false);
    expect(w.wrote('Service/ns/a', 'Route/ns/a', undefined)).toBe(false);
    now = 1_001;
    expect(w.wrote('Service/ns/a', 'Route/ns/a', '1')).toBe(false);
    for (const rv of ['2', '3', '4', '5']) w.note('Service/ns/a', 'Route/ns/a', rv);
    expect(w.size).toBe(3);
    expect(w.wrote('Service/ns/a', 'Route/ns/a', '2')).toBe(false);
    expect(w.wrote('Service/ns/a', 'Route/ns/a', '5')).toBe(true);
  });

  it('forgets the writes of a step that failed and tells its listeners which', () => {
    const w = new OwnWrites();
    const heard: string[] = [];
    w.onStepEnded((id, forgotten) => heard.push(`${id} ${forgotten.map((f) => f.resourceVersion).join(',')}`));
    w.stepStarted('Service/ns/a');
    w.note('Service/ns/a', 'Route/ns/a', '1');
    w.note('Service/ns/a', 'Route/ns/a', '2');
    w.stepEnded('Service/ns/a', [{ source: 'Route/ns/a', resourceVersion: '2' }]);
    expect(w.wrote('Service/ns/a', 'Route/ns/a', '1')).toBe(true);
    expect(w.wrote('Service/ns/a', 'Route/ns/a', '2')).toBe(false);
    expect(heard).toEqual(['Service/ns/a 2']);
  });

  it('knows which workflows have a step running, and tells its listeners when one ends', () => {
    const w = new OwnWrites();
    let ended = 0;
    const stop = w.onStepEnded(() => (ended += 1));
    w.stepStarted('Service/ns/a');
    w.stepStarted('Service/ns/a');
    w.stepEnded('Service/ns/a');
    expect(w.inStep('Service/ns/a')).toBe(true);
    w.stepEnded('Service/ns/a');
    expect(w.inStep('Service/ns/a')).toBe(false);
    expect(w.inStep('Service/ns/b')).toBe(false);
    stop();
    w.stepStarted('Service/ns/a');
    w.stepEnded('Service/ns/a');
    expect(ended).toBe(2);
  });
});
