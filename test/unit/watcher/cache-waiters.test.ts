// A step waiting in the watcher's cache (ADR 0012) is woken by a change of an object of its kind, namespace and
// labels once what it waits for holds, and by nothing else; it gives up at its deadline or when the watcher closes.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { Resources } from '../../../api/kinds.js';
import type { KubeObject } from '../../../api/meta.js';
import { CacheWaiters } from '../../../watcher/cache-waiters.js';

const pod = (namespace: string, revision: string): KubeObject => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { namespace, name: `${revision}-pod`, labels: { 'serving.knative.dev/revision': revision } },
});

afterEach(() => vi.useRealTimers());

describe('CacheWaiters', () => {
  it('wakes a waiter on a matching change once its condition holds, and only then', async () => {
    const w = new CacheWaiters();
    let ready = false;
    const checked: string[] = [];
    const waited = w.add(Resources.Pod, 'ns', { 'serving.knative.dev/revision': 'web-00001' }, () => (checked.push('check'), ready), 60_000);
    w.changed(Resources.Pod, pod('other-ns', 'web-00001')); // another namespace
    w.changed(Resources.Pod, pod('ns', 'web-00002')); // another Revision's pod
    w.changed(Resources.Deployment, { ...pod('ns', 'web-00001'), kind: 'Deployment' }); // another kind
    expect(checked).toEqual([]);
    w.changed(Resources.Pod, pod('ns', 'web-00001')); // checked, not yet ready
    expect(checked).toEqual(['check']);
    expect(w.size).toBe(1);
    ready = true;
    w.changed(Resources.Pod, pod('ns', 'web-00001'));
    await expect(waited).resolves.toBe(true);
    expect(w.size).toBe(0);
  });

  it('gives up at its deadline, and at close', async () => {
    vi.useFakeTimers();
    const w = new CacheWaiters();
    const late = w.add(Resources.Pod, 'ns', {}, () => false, 1000);
    const closed = w.add(Resources.Pod, 'ns', {}, () => true, 60_000);
    vi.advanceTimersByTime(1000);
    await expect(late).resolves.toBe(false);
    w.close();
    await expect(closed).resolves.toBe(false);
    expect(w.size).toBe(0);
  });
});
