// LeaderElector against an in-memory Lease API (resourceVersion preconditions as the API server checks them) and
// fake timers: who leads, when a leader must have stopped, and that two candidates never lead at once.
import type { Logger } from 'pino';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { LeaderElector, microTime, type Clock, type LeaderElectionTimings } from '../../../watcher/leader-election.js';
import { FakeLeases } from '../../fixtures/leases.js';

const silent = { info: () => {}, warn: () => {}, debug: () => {}, error: () => {} } as unknown as Logger;
const timings: LeaderElectionTimings = { leaseDurationMs: 3000, renewDeadlineMs: 2000, renewPeriodMs: 500, retryPeriodMs: 500 };
const where = { namespace: 'knative-serving', name: 'tidal-controller' };
const clock: Clock = { now: () => Date.now(), wall: () => new Date() };

interface Candidate {
  elector: LeaderElector;
  api: ReturnType<FakeLeases['apiFor']>;
  events: { at: number; what: string }[];
}

function candidate(leases: FakeLeases, identity: string, log: { at: number; who: string; what: string }[] = []): Candidate {
  const api = leases.apiFor();
  const events: Candidate['events'] = [];
  const note = (what: string) => {
    events.push({ at: Date.now(), what });
    log.push({ at: Date.now(), who: identity, what });
  };
  const elector = new LeaderElector(
    api,
    where,
    identity,
    timings,
    {
      onStartedLeading: (continued) => note(continued ? 'started:continued' : 'started'),
      onStoppedLeading: (r) => note(`stopped:${r}`),
      onOtherHolder: (h) => note(`other:${h}`),
    },
    silent,
    clock,
  );
  return { elector, api, events };
}

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
  vi.setSystemTime(new Date('2026-01-01T00:00:00Z'));
});
afterEach(() => vi.useRealTimers());

describe("LeaderElector: the holder's annotations (the watch bookmark)", () => {
  it('are written with every acquire, renew and release, and the next holder is handed the Lease as it found it', async () => {
    const leases = new FakeLeases();
    let mark = '1';
    const annotate = () => ({ 'tidal.dev/watch-bookmark': mark });
    const handed: (string | undefined)[] = [];
    const cb = (identity: string) => ({
      onStartedLeading: (_c: boolean, before?: { metadata: { annotations?: Record<string, string> } }) =>
        handed.push(`${identity}:${before?.metadata.annotations?.['tidal.dev/watch-bookmark'] ?? 'none'}`),
      onStoppedLeading: () => {},
    });
    const a = new LeaderElector(leases.apiFor(), where, 'a', timings, cb('a'), silent, clock, undefined, annotate);
    await a.tryAcquireOrRenew();
    expect(leases.lease!.metadata.annotations).toEqual({ 'tidal.dev/watch-bookmark': '1' });
    mark = '2';
    await vi.advanceTimersByTimeAsync(500);
    await a.tryAcquireOrRenew();
    expect(leases.lease!.metadata.annotations).toEqual({ 'tidal.dev/watch-bookmark': '2' });
    mark = '3';
    await a.stop();
    expect(leases.lease!.spec.holderIdentity).toBe('');
    expect(leases.lease!.metadata.annotations).toEqual({ 'tidal.dev/watch-bookmark': '3' });
    // The next holder writes none of its own yet: the bookmark it was handed stays on the Lease.
    const b = new LeaderElector(leases.apiFor(), where, 'b', timings, cb('b'), silent, clock, undefined, () => ({}));
    await b.tryAcquireOrRenew();
    expect(handed).toEqual(['a:none', 'b:3']);
    expect(leases.lease!.metadata.annotations).toEqual({ 'tidal.dev/watch-bookmark': '3' });
  });
});

describe('LeaderElector', () => {
  it('writes MicroTime as client-go does', () => {
    expect(microTime(new Date('2026-01-01T10:20:30.456Z'))).toBe('2026-01-01T10:20:30.456000Z');
  });

  it('the first candidate creates the Lease and leads at once', async () => {
    const leases = new FakeLeases();
    const a = candidate(leases, 'a');
    expect(await a.elector.tryAcquireOrRenew()).toBe(true);
    expect(a.elector.isLeader()).toBe(true);
    expect(a.events.map((e) => e.what)).toEqual(['started']);
    const spec = leases.lease!.spec;
    expect(leases.lease!.metadata).toMatchObject(where);
    expect(spec).toEqual({
      holderIdentity: 'a',
      leaseDurationSeconds: 3,
      acquireTime: '2026-01-01T00:00:00.000000Z',
      renewTime: '2026-01-01T00:00:00.000000Z',
      leaseTransitions: 0,
    });
  });

  it('a renewal moves renewTime only; a takeover after expiry counts a transition', async () => {
    const leases = new FakeLeases();
    const a = candidate(leases, 'a');
    const b = candidate(leases, 'b');
    await a.elector.tryAcquireOrRenew();
    await vi.advanceTimersByTimeAsync(500);
    expect(await a.elector.tryAcquireOrRenew()).toBe(true);
    expect(leases.lease!.spec).toMatchObject({
      acquireTime: '2026-01-01T00:00:00.000000Z',
      renewTime: '2026-01-01T00:00:00.500000Z',
      leaseTransitions: 0,
    });

    // b sees the record, then nothing changes for the lease duration (a died): only then may b take it.
    expect(await b.elector.tryAcquireOrRenew()).toBe(false);
    await vi.advanceTimersByTimeAsync(2999);
    expect(await b.elector.tryAcquireOrRenew()).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(await b.elector.tryAcquireOrRenew()).toBe(true);
    expect(leases.lease!.spec).toMatchObject({ holderIdentity: 'b', leaseTransitions: 1, acquireTime: '2026-01-01T00:00:03.500000Z' });
  });

  it('a candidate judges expiry from when it saw the record change, not from renewTime', async () => {
    const leases = new FakeLeases();
    const a = candidate(leases, 'a');
    await a.elector.tryAcquireOrRenew();
    // b's clock starts when b first sees the record, however old its renewTime looks (clocks may disagree).
    await vi.advanceTimersByTimeAsync(10_000);
    const b = candidate(leases, 'b');
    expect(await b.elector.tryAcquireOrRenew()).toBe(false);
    await vi.advanceTimersByTimeAsync(2900);
    expect(await b.elector.tryAcquireOrRenew()).toBe(false);
    await vi.advanceTimersByTimeAsync(100);
    expect(await b.elector.tryAcquireOrRenew()).toBe(true);
  });

  it('of two candidates racing on the same record, only one wins (resourceVersion precondition)', async () => {
    const leases = new FakeLeases();
    const a = candidate(leases, 'a');
    await a.elector.tryAcquireOrRenew();
    const b = candidate(leases, 'b');
    const c = candidate(leases, 'c');
    await b.elector.tryAcquireOrRenew();
    await c.elector.tryAcquireOrRenew();
    await vi.advanceTimersByTimeAsync(3000);
    const won = await Promise.all([b.elector.tryAcquireOrRenew(), c.elector.tryAcquireOrRenew()]);
    expect(won.filter(Boolean)).toHaveLength(1);
    expect([b.elector.isLeader(), c.elector.isLeader()].filter(Boolean)).toHaveLength(1);
    expect(leases.lease!.spec.leaseTransitions).toBe(1);
  });

  it('a leader cut off from the API server stops at the renew deadline, before anyone else may lead', async () => {
    const leases = new FakeLeases();
    const log: { at: number; who: string; what: string }[] = [];
    const a = candidate(leases, 'a', log);
    const b = candidate(leases, 'b', log);
    a.elector.start();
    await vi.advanceTimersByTimeAsync(10);
    b.elector.start();
    await vi.advanceTimersByTimeAsync(5000);
    expect(a.elector.isLeader()).toBe(true);
    expect(b.elector.isLeader()).toBe(false);
    const cut = Date.now();
    a.api.down = true;
    await vi.advanceTimersByTimeAsync(6000);
    const stoppedA = log.find((e) => e.who === 'a' && e.what.startsWith('stopped'));
    const startedB = log.find((e) => e.who === 'b' && e.what === 'started');
    expect(stoppedA?.what).toBe('stopped:deadline');
    // a stopped within the renew deadline of its last successful renewal (at most one renew period before the cut).
    expect(stoppedA!.at - cut).toBeLessThanOrEqual(timings.renewDeadlineMs);
    // b took over only after the lease ran out, at least the safety margin after a stopped.
    expect(startedB!.at - stoppedA!.at).toBeGreaterThanOrEqual(timings.leaseDurationMs - timings.renewDeadlineMs);
    // b took over promptly: lease duration plus a retry period of the last renewal it saw.
    expect(startedB!.at - cut).toBeLessThanOrEqual(timings.leaseDurationMs + timings.retryPeriodMs + timings.renewPeriodMs);
    // a comes back and must not lead again while b holds the Lease.
    a.api.down = false;
    await vi.advanceTimersByTimeAsync(5000);
    expect(a.elector.isLeader()).toBe(false);
    expect(b.elector.isLeader()).toBe(true);
    expect(leases.lease!.spec.holderIdentity).toBe('b');
    await a.elector.stop();
    await b.elector.stop();
  });

  it('a leader that missed its own deadline and takes the Lease back still naming it is told it continues; after another holder it is not', async () => {
    const leases = new FakeLeases();
    const a = candidate(leases, 'a');
    a.elector.start();
    await vi.advanceTimersByTimeAsync(10);
    a.api.down = true;
    await vi.advanceTimersByTimeAsync(2100);
    a.api.down = false;
    await vi.advanceTimersByTimeAsync(600);
    expect(a.events.map((e) => e.what)).toEqual(['started', 'stopped:deadline', 'started:continued']);
    expect(leases.lease!.spec.leaseTransitions).toBe(0);
    // Now someone else holds it for a while: a sees the other name, and its next takeover is a fresh one.
    const b = candidate(leases, 'b');
    b.elector.start();
    a.api.down = true;
    await vi.advanceTimersByTimeAsync(4000);
    expect(b.elector.isLeader()).toBe(true);
    await b.elector.stop();
    a.api.down = false;
    await vi.advanceTimersByTimeAsync(600);
    expect(a.events.map((e) => e.what).slice(3)).toEqual(['stopped:deadline', 'other:', 'started']);
    expect(a.elector.isLeader()).toBe(true);
    await a.elector.stop();
  });

  it('a stalled leader sees it has lost when it next asks, before its deadline timer runs', async () => {
    const leases = new FakeLeases();
    const a = candidate(leases, 'a');
    await a.elector.tryAcquireOrRenew();
    // The clock moves past the deadline without any timer running (a long pause of the event loop).
    vi.setSystemTime(Date.now() + timings.renewDeadlineMs);
    expect(a.elector.isLeader()).toBe(false);
    expect(a.events.map((e) => e.what)).toEqual(['started', 'stopped:deadline']);
  });

  it('a renewal that comes back after the deadline does not count', async () => {
    const leases = new FakeLeases();
    const a = candidate(leases, 'a');
    await a.elector.tryAcquireOrRenew();
    const slowReplace = a.api.replace.bind(a.api);
    a.api.replace = async (l) => {
      await new Promise((r) => setTimeout(r, timings.renewDeadlineMs + 100));
      return slowReplace(l);
    };
    const renewal = a.elector.tryAcquireOrRenew();
    await vi.advanceTimersByTimeAsync(timings.renewDeadlineMs + 200);
    await renewal;
    expect(a.elector.isLeader()).toBe(false);
    expect(a.events.map((e) => e.what)).toEqual(['started', 'stopped:deadline']);
  });

  it('stop() stops leading first, then releases the Lease so the next candidate takes it at its next try', async () => {
    const leases = new FakeLeases();
    const log: { at: number; who: string; what: string }[] = [];
    const a = candidate(leases, 'a', log);
    const b = candidate(leases, 'b', log);
    a.elector.start();
    await vi.advanceTimersByTimeAsync(10);
    b.elector.start();
    await vi.advanceTimersByTimeAsync(2000);
    const released = Date.now();
    await a.elector.stop();
    expect(log.filter((e) => e.who === 'a').map((e) => e.what)).toEqual(['started', 'stopped:released']);
    expect(leases.lease!.spec.holderIdentity).toBe('');
    await vi.advanceTimersByTimeAsync(timings.retryPeriodMs + 10);
    const startedB = log.find((e) => e.who === 'b' && e.what === 'started');
    expect(startedB!.at - released).toBeLessThanOrEqual(timings.retryPeriodMs);
    expect(leases.lease!.spec).toMatchObject({ holderIdentity: 'b', leaseTransitions: 1, leaseDurationSeconds: 3 });
    await b.elector.stop();
  });

  it('a leader whose renewal conflicts with another holder stops at once', async () => {
    const leases = new FakeLeases();
    const a = candidate(leases, 'a');
    await a.elector.tryAcquireOrRenew();
    // Someone takes the Lease behind a's back (an operator's edit, say).
    const other = leases.apiFor();
    const current = (await other.get())!;
    await other.replace({ ...current, spec: { ...current.spec, holderIdentity: 'z' } });
    await vi.advanceTimersByTimeAsync(500);
    expect(await a.elector.tryAcquireOrRenew()).toBe(false);
    expect(a.elector.isLeader()).toBe(false);
    expect(a.events.map((e) => e.what)).toEqual(['started', 'stopped:lost', 'other:z']);
  });

  it('refuses timings that are unsafe or not representable', () => {
    const api = new FakeLeases().apiFor();
    const cb = { onStartedLeading: () => {}, onStoppedLeading: () => {} };
    expect(() => new LeaderElector(api, where, 'a', { ...timings, renewDeadlineMs: 3000 }, cb, silent, clock)).toThrow(/renew deadline/);
    expect(() => new LeaderElector(api, where, 'a', { ...timings, leaseDurationMs: 2500 }, cb, silent, clock)).toThrow(/whole seconds/);
  });
});
