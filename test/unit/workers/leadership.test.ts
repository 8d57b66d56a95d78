// Leadership's terms against the in-memory Lease API and fake timers: a replica stands by while another leads, a term
// starts from its standby watcher when the Lease is won, its poker may deliver only while it is the current term of a
// leader, and it is closed the moment leadership ends — or paused, when this process only missed its own renew
// deadline, and resumed if nobody else led meanwhile.
import type { Logger } from 'pino';
import { Registry } from 'prom-client';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { Poker } from '../../../watcher/poker.js';
import type { Watcher } from '../../../watcher/watcher.js';
import { BookmarkAnnotation, type WatchBookmark } from '../../../watcher/bookmark.js';
import { Leadership, type WatcherTerm } from '../../../workers/leadership.js';
import { FakeLeases } from '../../fixtures/leases.js';

const silent = { info: () => {}, warn: () => {}, debug: () => {}, error: () => {}, child: () => silent } as unknown as Logger;
const timings = { leaseDurationMs: 3000, renewDeadlineMs: 2000, renewPeriodMs: 500, retryPeriodMs: 500 };
const clock = { now: () => Date.now(), wall: () => new Date() };

interface FakeTerm {
  isCurrent: () => boolean;
  recentSince: number | undefined;
  started: boolean;
  /** Its watcher was told to lead (a term began from it); until then it stood by. */
  led: boolean;
  /** Its watcher has listed every kind. */
  listed: boolean;
  /** The bookmarks its watcher was asked to forget what it held below, while standing by. */
  pruned: (WatchBookmark | undefined)[];
  /** The term's watcher was asked, once synced, to poke the owners of children deleted while no one watched. */
  missingChildrenPoked: boolean;
  closed: { poker: boolean; watcher: boolean };
  /** Times the poker was told it may deliver again (a paused term resumed). */
  resumed: number;
  /** The watch bookmark the term started from. */
  bookmark: WatchBookmark | undefined;
  /** What its watcher reports seen (undefined: still listing), and its poker's backlog. */
  progress: Record<string, string> | undefined;
  backlog: number;
}

function setup(enabled = true, leases = new FakeLeases(), identityBase = 'pod-0', synced = () => Promise.resolve()) {
  const api = leases.apiFor();
  const terms: FakeTerm[] = [];
  const registry = new Registry();
  const makeTerm = (isCurrent: () => boolean): WatcherTerm => {
    const t: FakeTerm = {
      isCurrent,
      recentSince: undefined,
      started: false,
      led: false,
      listed: true,
      pruned: [],
      missingChildrenPoked: false,
      closed: { poker: false, watcher: false },
      resumed: 0,
      bookmark: undefined,
      progress: undefined,
      backlog: 0,
    };
    terms.push(t);
    const watcher = {
      start: () => void (t.started = true),
      synced,
      pokeMissingChildren: () => ((t.missingChildrenPoked = true), 0),
      close: async () => void (t.closed.watcher = true),
      get hasSynced() {
        return t.listed;
      },
      startUp: { poked: 0, unchanged: 0 },
      progress: () => t.progress,
      prune: (bookmark: WatchBookmark | undefined) => void t.pruned.push(bookmark),
    } as unknown as Watcher;
    const poker = {
      close: async () => void (t.closed.poker = true),
      resume: () => void (t.resumed += 1),
      get backlog() {
        return t.backlog;
      },
    } as unknown as Poker;
    const lead = (bookmark: WatchBookmark | undefined, recentSince: number | undefined) => {
      t.led = true;
      t.bookmark = bookmark;
      t.recentSince = recentSince;
    };
    return { watcher, poker, lead };
  };
  const leadership = new Leadership(
    { enabled, namespace: 'knative-serving', leaseName: 'tidal-controller', timings, identityBase },
    api,
    makeTerm,
    silent,
    registry,
    clock,
  );
  return { leases, api, terms, registry, leadership };
}

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
  vi.setSystemTime(new Date('2026-01-01T00:00:00Z'));
});
afterEach(() => vi.useRealTimers());

describe('Leadership', () => {
  it('starts a term when it wins the Lease and reports it in tidal_leader', async () => {
    const { leadership, terms, registry, leases } = setup();
    expect(leadership.identity).toMatch(/^pod-0_\d+_[0-9a-f]{6}$/);
    leadership.start();
    await vi.advanceTimersByTimeAsync(10);
    // The watcher it stood by with from the start leads.
    expect(terms).toHaveLength(1);
    expect(terms[0]!.started).toBe(true);
    expect(terms[0]!.led).toBe(true);
    expect(terms[0]!.missingChildrenPoked).toBe(true); // once its list is in
    expect(terms[0]!.isCurrent()).toBe(true);
    // A new leader pokes objects written shortly before it took over in the first lane.
    expect(terms[0]!.recentSince).toBe(Date.parse('2026-01-01T00:00:00Z') - 2 * 3000 - 2000);
    expect(leases.lease!.spec.holderIdentity).toBe(leadership.identity);
    expect(await registry.getSingleMetricAsString('tidal_leader')).toContain(`tidal_leader{identity="${leadership.identity}"} 1`);
    await leadership.stop();
  });

  it('pauses the term the moment renewals stop working (no delivery after the deadline) and resumes it when the Lease still names it', async () => {
    const { leadership, terms, api, registry } = setup();
    leadership.start();
    await vi.advanceTimersByTimeAsync(10);
    const term = terms[0]!;
    api.down = true;
    await vi.advanceTimersByTimeAsync(1900);
    expect(term.isCurrent()).toBe(true);
    await vi.advanceTimersByTimeAsync(200);
    expect(term.isCurrent()).toBe(false);
    // Paused, not closed: its informers keep watching and its poker keeps what they announce.
    expect(term.closed).toEqual({ poker: false, watcher: false });
    expect(leadership.watcher).toBeUndefined();
    expect(leadership.isLeader).toBe(false);
    expect(await registry.getSingleMetricAsString('tidal_leader')).toContain(`tidal_leader{identity="${leadership.identity}"} 0`);
    expect(await registry.getSingleMetricAsString('tidal_leader_transitions_total')).toContain('change="deadline"} 1');
    // Back, and nobody else took the Lease meanwhile: the same term goes on, no re-list.
    api.down = false;
    await vi.advanceTimersByTimeAsync(1000);
    expect(terms).toHaveLength(1);
    expect(term.isCurrent()).toBe(true);
    expect(term.resumed).toBe(1);
    expect(leadership.watcher).toBeDefined();
    expect(await registry.getSingleMetricAsString('tidal_leader_transitions_total')).toContain('change="resumed"} 1');
    await leadership.stop();
    expect(term.closed).toEqual({ poker: true, watcher: true });
  });

  it('a term whose lists come in while it is paused still pokes the owners of missing children (its poker holds them)', async () => {
    let listed!: () => void;
    const synced = new Promise<void>((resolve) => (listed = resolve));
    const { leadership, terms, api } = setup(true, new FakeLeases(), 'pod-0', () => synced);
    leadership.start();
    await vi.advanceTimersByTimeAsync(10);
    const term = terms[0]!;
    expect(term.missingChildrenPoked).toBe(false);
    // The start-up list of thousands keeps the process from renewing: the term is paused when its lists come in.
    api.down = true;
    await vi.advanceTimersByTimeAsync(2100);
    expect(term.isCurrent()).toBe(false);
    listed();
    await vi.advanceTimersByTimeAsync(0);
    expect(term.missingChildrenPoked).toBe(true);
    api.down = false;
    await vi.advanceTimersByTimeAsync(1000);
    expect(term.isCurrent()).toBe(true);
    expect(term.resumed).toBe(1);
    await leadership.stop();
  });

  it('closes a paused term the moment the Lease names another holder; taking it back later starts a fresh term', async () => {
    const leases = new FakeLeases();
    const a = setup(true, leases, 'pod-a');
    a.leadership.start();
    await vi.advanceTimersByTimeAsync(10);
    const first = a.terms[0]!;
    const b = setup(true, leases, 'pod-b');
    b.leadership.start();
    a.api.down = true;
    await vi.advanceTimersByTimeAsync(2100);
    expect(first.isCurrent()).toBe(false);
    expect(first.closed).toEqual({ poker: false, watcher: false });
    // The Lease expires for b (3 s unchanged), b leads; a, back, reads b's name and drops its paused view.
    await vi.advanceTimersByTimeAsync(1500);
    expect(b.terms).toHaveLength(1);
    expect(b.terms[0]!.isCurrent()).toBe(true);
    a.api.down = false;
    await vi.advanceTimersByTimeAsync(600);
    expect(first.closed).toEqual({ poker: true, watcher: true });
    expect(first.resumed).toBe(0);
    // b hands over; a's next term lists afresh (another leader ran in between).
    await b.leadership.stop();
    await vi.advanceTimersByTimeAsync(600);
    expect(a.terms).toHaveLength(2);
    expect(a.terms[1]!.isCurrent()).toBe(true);
    expect(first.isCurrent()).toBe(false);
    await a.leadership.stop();
  });

  it('a stalled process asks before it delivers and learns it has lost, before any timer runs', async () => {
    const { leadership, terms } = setup();
    leadership.start();
    await vi.advanceTimersByTimeAsync(10);
    vi.setSystemTime(Date.now() + 2500);
    expect(terms[0]!.isCurrent()).toBe(false);
    await leadership.stop();
  });

  it('stop() ends the term, then clears holderIdentity', async () => {
    const { leadership, terms, leases } = setup();
    leadership.start();
    await vi.advanceTimersByTimeAsync(10);
    await leadership.stop();
    expect(terms[0]!.isCurrent()).toBe(false);
    expect(terms[0]!.closed).toEqual({ poker: true, watcher: true });
    expect(leases.lease!.spec.holderIdentity).toBe('');
  });

  it('keeps a watch bookmark on the Lease, moved up only while the poker is empty, and hands it to the next leader', async () => {
    const leases = new FakeLeases();
    const a = setup(true, leases, 'pod-a');
    a.leadership.start();
    await vi.advanceTimersByTimeAsync(10);
    const bookmark = () => leases.lease!.metadata.annotations?.[BookmarkAnnotation];
    // Still listing: nothing to vouch for.
    expect(a.terms[0]!.bookmark).toBeUndefined();
    await vi.advanceTimersByTimeAsync(500);
    expect(bookmark()).toBeUndefined();
    // Listed, but pokes still waiting: not yet.
    a.terms[0]!.progress = { Service: '50', Revision: '40' };
    a.terms[0]!.backlog = 3;
    await vi.advanceTimersByTimeAsync(500);
    expect(bookmark()).toBeUndefined();
    a.terms[0]!.backlog = 0;
    await vi.advanceTimersByTimeAsync(500);
    expect(bookmark()).toBe('{"Revision":"40","Service":"50"}');
    // Seen further, with pokes waiting again: the Lease keeps what was delivered.
    a.terms[0]!.progress = { Service: '90', Revision: '40' };
    a.terms[0]!.backlog = 1;
    await vi.advanceTimersByTimeAsync(500);
    expect(bookmark()).toBe('{"Revision":"40","Service":"50"}');
    // Cut off from the API server (as good as dead): the next leader starts its term from that bookmark.
    a.api.down = true;
    const b = setup(true, leases, 'pod-b');
    b.leadership.start();
    await vi.advanceTimersByTimeAsync(3500);
    expect(leases.lease!.spec.holderIdentity).toBe(b.leadership.identity);
    expect(b.terms[0]!.bookmark).toEqual({ Revision: '40', Service: '50' });
    // While its own list comes in, its renewals keep the bookmark it found; then it moves it up.
    expect(bookmark()).toBe('{"Revision":"40","Service":"50"}');
    b.terms[0]!.progress = { Service: '120', Revision: '110' };
    await vi.advanceTimersByTimeAsync(500);
    expect(bookmark()).toBe('{"Revision":"110","Service":"120"}');
    // The first replica comes back and takes the Lease once the second is cut off: it starts from the second's
    // bookmark, and never writes back the older one it kept from its own term.
    b.api.down = true;
    a.api.down = false;
    const written: (string | undefined)[] = [];
    for (let i = 0; i < 100; i++) {
      await vi.advanceTimersByTimeAsync(50);
      written.push(bookmark());
    }
    expect(leases.lease!.spec.holderIdentity).toBe(a.leadership.identity);
    expect(a.terms.at(-1)!.bookmark).toEqual({ Revision: '110', Service: '120' });
    expect(new Set(written)).toEqual(new Set(['{"Revision":"110","Service":"120"}']));
    await b.leadership.stop();
    await a.leadership.stop();
  });

  it('a replica that does not lead stands by, forgetting what the bookmark passed; taking the Lease, its term is that watcher', async () => {
    const leases = new FakeLeases();
    const a = setup(true, leases, 'pod-a');
    a.leadership.start();
    await vi.advanceTimersByTimeAsync(10);
    a.terms[0]!.progress = { Service: '50' };
    const b = setup(true, leases, 'pod-b');
    b.leadership.start();
    await vi.advanceTimersByTimeAsync(1000);
    // Listing and watching from the start, delivering nothing, told what the leader's bookmark has passed.
    const standby = b.terms[0]!;
    expect(b.terms).toHaveLength(1);
    expect(standby).toMatchObject({ started: true, led: false });
    expect(standby.isCurrent()).toBe(false);
    expect(b.leadership.watcher).toBeUndefined();
    expect(standby.pruned.at(-1)).toEqual({ Service: '50' });
    // Ready only once its caches are listed: a rolling update waits for them before it stops the leader.
    standby.listed = false;
    expect(b.leadership.listed).toBe(false);
    standby.listed = true;
    expect(b.leadership.listed).toBe(true);
    // a hands over: b's term is the watcher that stood by, led from the bookmark a left, no second list.
    await a.leadership.stop();
    await vi.advanceTimersByTimeAsync(600);
    expect(b.terms).toHaveLength(1);
    expect(standby).toMatchObject({ led: true, bookmark: { Service: '50' } });
    expect(standby.isCurrent()).toBe(true);
    expect(b.leadership.watcher).toBeDefined();
    expect(standby.missingChildrenPoked).toBe(true);
    await b.leadership.stop();
    expect(standby.closed).toEqual({ poker: true, watcher: true });
  });

  it('a term that ends leaves its replica standing by from a fresh list; a stopping one keeps no watcher', async () => {
    const leases = new FakeLeases();
    const a = setup(true, leases, 'pod-a');
    a.leadership.start();
    await vi.advanceTimersByTimeAsync(10);
    const b = setup(true, leases, 'pod-b');
    b.leadership.start();
    // a is cut off: paused at its deadline, b leads once the Lease expires, and a, back, reads b's name.
    a.api.down = true;
    await vi.advanceTimersByTimeAsync(3600);
    expect(b.terms[0]!.isCurrent()).toBe(true);
    a.api.down = false;
    await vi.advanceTimersByTimeAsync(600);
    expect(a.terms[0]!.closed).toEqual({ poker: true, watcher: true });
    expect(a.terms).toHaveLength(2);
    expect(a.terms[1]).toMatchObject({ started: true, led: false });
    expect(a.terms[1]!.isCurrent()).toBe(false);
    await a.leadership.stop();
    expect(a.terms[1]!.closed).toEqual({ poker: true, watcher: true });
    expect(a.terms).toHaveLength(2);
    await b.leadership.stop();
    expect(b.terms).toHaveLength(1);
  });

  it('with leader election off, one term runs for the life of the process and no Lease is written', async () => {
    const { leadership, terms, leases } = setup(false);
    leadership.start();
    expect(terms).toHaveLength(1);
    expect(terms[0]!.isCurrent()).toBe(true);
    expect(leadership.isLeader).toBe(true);
    await leadership.stop();
    expect(terms[0]!.isCurrent()).toBe(false);
    expect(leases.lease).toBeUndefined();
  });
});
