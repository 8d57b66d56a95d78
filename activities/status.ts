// Status writes: server-side apply of the /status subresource, skipped when nothing changed.
import { statusEqual } from '../api/conditions.js';
import type { ResourceType } from '../api/kinds.js';
import type { KubeObject } from '../api/meta.js';
import type { KubeClient } from './kube/client.js';

/** Writes `status` for `obj` unless it equals what is stored; returns the new resourceVersion, if it wrote. */
export async function writeStatus(kube: KubeClient, type: ResourceType, obj: KubeObject & { status?: unknown }, status: unknown): Promise<string | undefined> {
  if (statusEqual(obj.status, status)) return undefined;
  const written = await kube.apply(
    type,
    { apiVersion: obj.apiVersion, kind: obj.kind, metadata: { name: obj.metadata.name, namespace: obj.metadata.namespace }, status } as KubeObject,
    'status',
  );
  return written.metadata.resourceVersion ?? '';
}

/** True when every field of `desired` is present with the same value in `actual` (an apply would change nothing). */
export function containsAll(actual: unknown, desired: unknown): boolean {
  if (desired === undefined) return true;
  if (desired === null || typeof desired !== 'object') return actual === desired;
  if (Array.isArray(desired)) {
    return Array.isArray(actual) && actual.length === desired.length && desired.every((d, i) => containsAll(actual[i], d));
  }
  if (actual === null || typeof actual !== 'object' || Array.isArray(actual)) return false;
  return Object.entries(desired).every(([k, v]) => containsAll((actual as Record<string, unknown>)[k], v));
}

export interface StatusOutcome {
  outcome: 'gone' | 'written' | 'unchanged';
  ready?: string;
  reason?: string;
  /** The object's resourceVersion after the write. */
  resourceVersion?: string;
}

/** The outcome of a status write, for the workflow. */
export function statusOutcome(written: string | undefined, status: Parameters<typeof readyOf>[0]): StatusOutcome {
  return { outcome: written !== undefined ? 'written' : 'unchanged', ...readyOf(status), ...(written ? { resourceVersion: written } : {}) };
}

export function readyOf(status: { conditions?: { type: string; status: string; reason?: string }[] } | undefined): { ready?: string; reason?: string } {
  const c = status?.conditions?.find((x) => x.type === 'Ready');
  return { ...(c ? { ready: c.status } : {}), ...(c?.reason ? { reason: c.reason } : {}) };
}
