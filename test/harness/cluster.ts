// Helpers for the e2e layer: kubectl against the test stack (as a user drives Tidal) and a Temporal client.
import { inject } from 'vitest';
import { eventually } from './wait.js';
import { Client, Connection } from '@temporalio/client';
import { kubectl as runKubectl } from '../../dev/stack.js';
import { apiGet, parseGet } from './api-read.js';

export function stack() {
  return inject('stack');
}

export function kubectl(args: string[], input?: string): Promise<string> {
  return runKubectl(stack(), args, input);
}

/** `kubectl patch` of a config map in knative-serving: each key set, or removed with null. */
export function patchConfigMap(name: string, data: Record<string, string | null>): Promise<string> {
  return kubectl(['patch', 'configmap', name, '-n', 'knative-serving', '--type=merge', '-p', JSON.stringify({ data })]);
}

export async function kubectlJson<T = Record<string, unknown>>(args: string[]): Promise<T> {
  const get = parseGet(args);
  if (get) return (await apiGet(stack().kubeconfig, get)) as T;
  return JSON.parse(await kubectl([...args, '-o', 'json'])) as T;
}

/** A Kubernetes Event as the e2e tests read it. */
export interface KubeEvent {
  type: string;
  reason: string;
  message: string;
  involvedObject: { kind: string; name: string };
}

/** The Events in `namespace` that `fieldSelector` selects (`involvedObject.kind=Route,involvedObject.name=web`). */
export async function eventsOf(fieldSelector: string, namespace = 'default'): Promise<KubeEvent[]> {
  return (await kubectlJson<{ items: KubeEvent[] }>(['get', 'events', '-n', namespace, '--field-selector', fieldSelector])).items;
}

/**
 * {@link eventsOf}, once `until` holds of them: a step sends its Events when its work is done, a moment after the
 * status a test waited for (ADR 0014).
 */
export async function eventsWhen(
  fieldSelector: string,
  until: (events: KubeEvent[]) => boolean,
  timeoutMs = 10_000,
  namespace = 'default',
): Promise<KubeEvent[]> {
  return eventually(
    `Events ${fieldSelector}`,
    async () => {
      const items = await eventsOf(fieldSelector, namespace);
      return until(items) && items;
    },
    timeoutMs,
  );
}

/** The object, or undefined when kubectl says it is not found. */
export async function getObject<T = Record<string, unknown>>(kind: string, name: string, namespace = 'default'): Promise<T | undefined> {
  try {
    return await kubectlJson<T>(['get', kind, name, '-n', namespace]);
  } catch (err) {
    if (String(err).includes('NotFound')) return undefined;
    throw err;
  }
}

export async function apply(manifest: object, namespace = 'default'): Promise<void> {
  await kubectl(['apply', '-n', namespace, '-f', '-'], JSON.stringify(manifest));
}

export async function temporalClient(): Promise<{ client: Client; close: () => Promise<void> }> {
  const connection = await Connection.connect({ address: stack().temporalAddress });
  return { client: new Client({ connection }), close: () => connection.close() };
}

/** Waits (up to 120 s) for the Revision `name` in `default` to be Ready, and returns it. */
export async function revisionReady<T extends { status?: { conditions?: { type: string; status?: string }[] } }>(name: string): Promise<T> {
  return eventually(
    `Revision ${name} Ready`,
    async () => {
      const r = await getObject<T>('revision', name);
      return r?.status?.conditions?.find((c) => c.type === 'Ready')?.status === 'True' ? r : undefined;
    },
    120_000,
  );
}
