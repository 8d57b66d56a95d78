// The controller's environment: defaults and the errors a bad value gets at start-up.
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../workers/config.js';

describe('loadConfig', () => {
  it('runs workflow code in the main thread by default, the SDK worker thread on request', () => {
    expect(loadConfig({}).workflowThread).toBe('main');
    expect(loadConfig({ TIDAL_WORKFLOW_THREAD: 'worker' }).workflowThread).toBe('worker');
  });

  it("turns the SDK's per-Promise workflow stack traces off by default, on request keeps them", () => {
    expect(loadConfig({}).workflowStackTraces).toBe(false);
    expect(loadConfig({ TIDAL_WORKFLOW_STACK_TRACES: 'true' }).workflowStackTraces).toBe(true);
  });

  it("drops the SDK's per-call watchdog on main-thread workflows by default, on request keeps it", () => {
    expect(loadConfig({}).workflowWatchdog).toBe(false);
    expect(loadConfig({ TIDAL_WORKFLOW_WATCHDOG: 'true' }).workflowWatchdog).toBe(true);
  });

  it('caps V8 heap growth at 25 % by default; 0 leaves V8 its own factor', () => {
    expect(loadConfig({}).heapGrowingPercent).toBe(25);
    expect(loadConfig({ TIDAL_HEAP_GROWING_PERCENT: '0' }).heapGrowingPercent).toBe(0);
    expect(() => loadConfig({ TIDAL_HEAP_GROWING_PERCENT: 'half' })).toThrow('TIDAL_HEAP_GROWING_PERCENT=half: expected a non-negative integer');
  });

  it('starts new objects’ workflows eagerly by default; false sends every poke as a signal', () => {
    expect(loadConfig({}).eagerStart).toBe(true);
    expect(loadConfig({ TIDAL_EAGER_START: 'false' }).eagerStart).toBe(false);
  });

  it("lets a new Revision's first pass wait up to a second for its pods by default (ADR 0012); 0 turns it off", () => {
    expect(loadConfig({}).newRevisionReadyWaitMs).toBe(1000);
    expect(loadConfig({ TIDAL_NEW_REVISION_READY_WAIT_MS: '0' }).newRevisionReadyWaitMs).toBe(0);
  });

  it('serves steps recent objects from memory by default (ADR 0010), on request always asks the API server', () => {
    expect(loadConfig({}).recentObjects).toBe(true);
    expect(loadConfig({ TIDAL_RECENT_OBJECTS: 'false' }).recentObjects).toBe(false);
  });

  it('refuses an unknown workflow thread, a negative number and a non-boolean with the variable and the value', () => {
    expect(() => loadConfig({ TIDAL_WORKFLOW_THREAD: 'both' })).toThrow('TIDAL_WORKFLOW_THREAD=both: expected one of main, worker');
    expect(() => loadConfig({ TIDAL_MAX_CACHED_WORKFLOWS: '-1' })).toThrow('TIDAL_MAX_CACHED_WORKFLOWS=-1: expected a non-negative integer');
    expect(() => loadConfig({ TIDAL_WATCHER: 'maybe' })).toThrow('TIDAL_WATCHER=maybe: expected true or false');
    expect(() => loadConfig({ TIDAL_STICKY_QUEUE_TIMEOUT_SECONDS: '0' })).toThrow(
      'TIDAL_STICKY_QUEUE_TIMEOUT_SECONDS=0: expected an integer of at least 1',
    );
    expect(() => loadConfig({ TIDAL_LIST_PAGES_IN_FLIGHT: '0' })).toThrow('TIDAL_LIST_PAGES_IN_FLIGHT=0: expected an integer of at least 1');
  });

  it("keeps upstream's 10-hour resync and a workflow cache of 150 runs", () => {
    const cfg = loadConfig({});
    expect(cfg.resyncSeconds).toBe(36_000);
    expect(cfg.maxCachedWorkflows).toBe(150);
    expect(cfg.stickyQueueTimeoutSeconds).toBe(3);
    expect(cfg.listPagesInFlight).toBe(2);
  });

  it('meters the catch-up at 10 pokes a second, twice that while no other poke is about, each settable', () => {
    expect(loadConfig({})).toMatchObject({ catchUpPokesPerSecond: 10, catchUpQuietPokesPerSecond: 20 });
    expect(loadConfig({ TIDAL_CATCHUP_POKES_PER_SECOND: '4' })).toMatchObject({ catchUpPokesPerSecond: 4, catchUpQuietPokesPerSecond: 8 });
    expect(loadConfig({ TIDAL_CATCHUP_QUIET_POKES_PER_SECOND: '50' })).toMatchObject({ catchUpPokesPerSecond: 10, catchUpQuietPokesPerSecond: 50 });
  });

  it('ends entity runs after a quiet minute and sweeps every object at the resync period (ADR 0006)', () => {
    const cfg = loadConfig({});
    expect(cfg.idleSeconds).toBe(60);
    expect(cfg.sweepSeconds).toBe(36_000);
    expect(loadConfig({ TIDAL_IDLE_SECONDS: '0' }).idleSeconds).toBe(0);
  });
});
