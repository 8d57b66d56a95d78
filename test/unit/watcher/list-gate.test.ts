// The list gate: pages in flight at once, and whose go first.
import { describe, expect, it } from 'vitest';
import { ListGate } from '../../../watcher/list-gate.js';

/** A fetch the test finishes by hand. */
function deferred<T>() {
  let resolve!: (v: T) => void;
  let reject!: (e: Error) => void;
  const promise = new Promise<T>((res, rej) => ([resolve, reject] = [res, rej]));
  return { promise, resolve, reject };
}

const tick = () => new Promise((r) => setImmediate(r));

describe('ListGate', () => {
  it('keeps at most its limit in flight; of those waiting, the higher priority first, then the older', async () => {
    const gate = new ListGate(2);
    const started: string[] = [];
    const fetches = new Map<string, ReturnType<typeof deferred<string>>>();
    const run = (name: string, priority: number) =>
      gate.run(priority, () => {
        started.push(name);
        const d = deferred<string>();
        fetches.set(name, d);
        return d.promise;
      });
    const results = [run('a', 0), run('b', 0), run('c', 0), run('d', 1), run('e', 0), run('f', 1)];
    await tick();
    expect(started).toEqual(['a', 'b']);
    expect(gate.queued).toBe(4);
    fetches.get('a')!.resolve('A');
    await tick();
    expect(started).toEqual(['a', 'b', 'd']);
    fetches.get('b')!.resolve('B');
    await tick();
    expect(started).toEqual(['a', 'b', 'd', 'f']);
    for (const name of ['d', 'f']) fetches.get(name)!.resolve(name.toUpperCase());
    await tick();
    expect(started).toEqual(['a', 'b', 'd', 'f', 'c', 'e']);
    for (const name of ['c', 'e']) fetches.get(name)!.resolve(name.toUpperCase());
    expect(await Promise.all(results)).toEqual(['A', 'B', 'C', 'D', 'E', 'F']);
    expect(gate.queued).toBe(0);
  });

  it('a failed fetch gives its slot on and fails its caller only', async () => {
    const gate = new ListGate(1);
    const first = deferred<string>();
    const failing = gate.run(0, () => first.promise);
    const next = gate.run(0, async () => 'next');
    first.reject(new Error('410 Gone'));
    await expect(failing).rejects.toThrow('410 Gone');
    await expect(next).resolves.toBe('next');
    // The slot is free again: a new fetch starts at once.
    let ran = false;
    await gate.run(0, async () => (ran = true));
    expect(ran).toBe(true);
  });

  it('with yieldTo, a page waits for it before its fetch, at most twice the last page took and never over a second', async () => {
    const asked: number[] = [];
    let letGo!: () => void;
    const gate = new ListGate(1, (maxMs) => {
      asked.push(maxMs);
      return new Promise<void>((r) => (letGo = r));
    });
    let fetched = 0;
    const page = gate.run(0, async () => {
      fetched += 1;
      await new Promise((r) => setTimeout(r, 20));
      return 'page';
    });
    await tick();
    // The first page has no last page to go by: it waits for nothing (0), yet only once yieldTo says so.
    expect(asked).toEqual([0]);
    expect(fetched).toBe(0);
    letGo();
    await expect(page).resolves.toBe('page');
    const second = gate.run(0, async () => 'second');
    await tick();
    expect(asked).toHaveLength(2);
    expect(asked[1]).toBeGreaterThan(0);
    expect(asked[1]).toBeLessThanOrEqual(1000);
    letGo();
    await expect(second).resolves.toBe('second');
  });
});
