// Helpers for the e2e layer: kubectl against the test stack (as a user drives Tidal) and a Temporal client.
import { inject } from 'vitest';
import { Client, Connection } from '@temporalio/client';
import { kubectl as runKubectl } from '../../dev/stack.js';

export function stack() {
  return inject('stack');
}

export function kubectl(args: string[], input?: string): Promise<string> {
  return runKubectl(stack(), args, input);
}

export async function kubectlJson<T = Record<string, unknown>>(args: string[]): Promise<T> {
  return JSON.parse(await kubectl([...args, '-o', 'json'])) as T;
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
