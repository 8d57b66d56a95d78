// Kubernetes Events for creations and failures, as Knative's recorder writes them. Best effort: a failure to
// record an event is logged and never fails the reconcile step.
import { Resources } from '../api/kinds.js';
import type { KubeObject } from '../api/meta.js';
import type { KubeClient } from './kube/client.js';
import type { Logger } from 'pino';

export type EventType = 'Normal' | 'Warning';

export interface EventRecorder {
  record(obj: KubeObject, type: EventType, reason: string, message: string): Promise<void>;
}

/** `component` is Knative's agent name for the reconciler, e.g. `service-controller`. */
export function makeEventRecorder(kube: KubeClient, log: Logger, now: () => Date = () => new Date()): EventRecorder {
  return {
    async record(obj, type, reason, message) {
      const ts = now().toISOString();
      const component = `${obj.kind.toLowerCase()}-controller`;
      try {
        await kube.create(Resources.Event, {
          apiVersion: 'v1',
          kind: 'Event',
          metadata: { generateName: `${obj.metadata.name ?? 'object'}.`, namespace: obj.metadata.namespace ?? 'default' },
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
      } catch (err) {
        log.warn({ err, kind: obj.kind, namespace: obj.metadata.namespace, name: obj.metadata.name, reason }, 'could not record event');
      }
    },
  };
}
