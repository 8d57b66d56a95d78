// Kubernetes Events for creations and failures, as Knative's recorder writes them. Best effort: a failure to
// record an event is logged and never fails the reconcile step.
//
// Repeats are aggregated as client-go's recorder does: one Event per involved object (uid), type, reason and
// message, whose `count` goes up and `lastTimestamp` moves on every repeat, instead of a new Event per retry.
// - The Event's name is derived from that key (`<object>.<hash>`), so any worker, and a restarted one, finds the
//   Event of a repeat by name: create it, and on AlreadyExists read it and raise its count.
// - An in-process cache (key → name and last count) saves that read on the common path: a repeat is one merge
//   patch. The cache is bounded and may be lost on restart (then the first repeat reads the Event once); a cached
//   Event that expired meanwhile (the API server's event TTL, 1 h by default) is created again.
// Two workers recording the same repeat at the same instant may each raise the count from the same value: the
// count is then one short, as client-go's is across processes.
import { createHash } from 'node:crypto';
import { Resources } from '../api/kinds.js';
import type { KubeObject } from '../api/meta.js';
import type { KubeClient } from '../kube/client.js';
import { isConflict, isNotFound } from '../kube/errors.js';
import type { Logger } from 'pino';

export type EventType = 'Normal' | 'Warning';

export interface EventRecorder {
  /** `at`: when it happened (default: now). */
  record(obj: KubeObject, type: EventType, reason: string, message: string, at?: Date): Promise<void>;
}

interface EventObject extends KubeObject {
  count?: number;
  firstTimestamp?: string;
  lastTimestamp?: string;
}

/** How many aggregation keys the in-process cache keeps (oldest dropped first). */
const CACHE_SIZE = 4096;

/** The aggregation key of an Event: involved object, type, reason, message (client-go's, minus source fields). */
export function eventKey(obj: KubeObject, type: EventType, reason: string, message: string): string {
  const m = obj.metadata;
  return JSON.stringify([m.uid ?? '', obj.kind, m.namespace ?? '', m.name ?? '', type, reason, message]);
}

/** The Event's name for a key: `<object name>.<16 hex digits>` (a valid name: object names are DNS subdomains). */
export function eventName(obj: KubeObject, key: string): string {
  const hash = createHash('sha256').update(key).digest('hex').slice(0, 16);
  return `${(obj.metadata.name ?? 'object').slice(0, 253 - 17)}.${hash}`;
}

/** `component` is Knative's agent name for the reconciler, e.g. `service-controller`. */
export function makeEventRecorder(kube: KubeClient, log: Logger, now: () => Date = () => new Date()): EventRecorder {
  const cache = new Map<string, { name: string; count: number }>();
  const remember = (key: string, name: string, count: number) => {
    cache.delete(key);
    cache.set(key, { name, count });
    if (cache.size > CACHE_SIZE) cache.delete(cache.keys().next().value as string);
  };

  async function raise(namespace: string, name: string, count: number, ts: string): Promise<void> {
    await kube.mergePatch(Resources.Event, namespace, name, { count, lastTimestamp: ts });
  }

  return {
    async record(obj, type, reason, message, at) {
      const ts = (at ?? now()).toISOString();
      const component = `${obj.kind.toLowerCase()}-controller`;
      const namespace = obj.metadata.namespace ?? 'default';
      const key = eventKey(obj, type, reason, message);
      const name = eventName(obj, key);
      try {
        const cached = cache.get(key);
        if (cached) {
          try {
            await raise(namespace, cached.name, cached.count + 1, ts);
            remember(key, cached.name, cached.count + 1);
            return;
          } catch (err) {
            if (!isNotFound(err)) throw err;
            cache.delete(key); // expired: create it again below
          }
        }
        try {
          await kube.create(Resources.Event, {
            apiVersion: 'v1',
            kind: 'Event',
            metadata: { name, namespace },
            involvedObject: {
              apiVersion: obj.apiVersion,
              kind: obj.kind,
              name: obj.metadata.name,
              namespace: obj.metadata.namespace,
              uid: obj.metadata.uid,
              resourceVersion: obj.metadata.resourceVersion,
            },
            type,
            reason,
            message,
            source: { component },
            reportingComponent: component,
            firstTimestamp: ts,
            lastTimestamp: ts,
            count: 1,
          } as KubeObject);
          remember(key, name, 1);
        } catch (err) {
          if (!isConflict(err)) throw err;
          // Made by another worker or before a restart: raise its count.
          const existing = await kube.get<EventObject>(Resources.Event, namespace, name);
          const count = (existing?.count ?? 1) + 1;
          await raise(namespace, name, count, ts);
          remember(key, name, count);
        }
      } catch (err) {
        log.warn({ err, kind: obj.kind, namespace: obj.metadata.namespace, name: obj.metadata.name, reason }, 'could not record event');
      }
    },
  };
}
