// Steps that wait for the watcher's cache to show something — a new Revision's first pass waiting for its pods to be
// Ready (ADR 0012) — instead of ending and being poked when it does. A waiter is checked on every change of an
// object of its kind, namespace and labels, after the cache holds the change; it gives up at its deadline or when
// the watcher closes (a term ended: nothing will change here any more).
import type { ResourceType } from '../api/kinds.js';
import type { KubeObject } from '../api/meta.js';

interface Waiter {
  labels: [string, string][];
  ready: () => boolean;
  done: (met: boolean) => void;
}

const keyOf = (type: Pick<ResourceType, 'group' | 'kind'>, namespace: string) => `${type.group}/${type.kind}/${namespace}`;

export class CacheWaiters {
  private readonly waiting = new Map<string, Set<Waiter>>();

  /** Resolves true once `ready()` holds after a change of a matching object, false after `timeoutMs` or at close. */
  add(type: ResourceType, namespace: string, labels: Readonly<Record<string, string>>, ready: () => boolean, timeoutMs: number): Promise<boolean> {
    const key = keyOf(type, namespace);
    return new Promise<boolean>((resolve) => {
      const set = this.waiting.get(key) ?? new Set<Waiter>();
      this.waiting.set(key, set);
      const waiter: Waiter = {
        labels: Object.entries(labels),
        ready,
        done: (met) => {
          clearTimeout(timer);
          set.delete(waiter);
          if (set.size === 0 && this.waiting.get(key) === set) this.waiting.delete(key);
          resolve(met);
        },
      };
      const timer = setTimeout(() => waiter.done(false), timeoutMs);
      set.add(waiter);
    });
  }

  /** An object of `type` changed (added, updated or deleted); the cache already reflects it. */
  changed(type: Pick<ResourceType, 'group' | 'kind'>, obj: KubeObject): void {
    const set = this.waiting.get(keyOf(type, obj.metadata.namespace ?? ''));
    if (!set) return;
    for (const w of [...set]) {
      if (w.labels.every(([k, v]) => obj.metadata.labels?.[k] === v) && w.ready()) w.done(true);
    }
  }

  /** Number of waiters (tests). */
  get size(): number {
    let n = 0;
    for (const set of this.waiting.values()) n += set.size;
    return n;
  }

  close(): void {
    for (const set of [...this.waiting.values()]) for (const w of [...set]) w.done(false);
  }
}
