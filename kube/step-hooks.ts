// What the running reconcile step learns from the client's requests. The client knows nothing of Temporal or of the
// entity loop: activities/observe.ts installs these hooks when it loads, and until then (benches, tools, tests of the
// client alone) every hook is a no-op and every request counts as a first attempt.
import type { ResourceType } from '../api/kinds.js';
import type { KubeObject } from '../api/meta.js';

export interface StepHooks {
  /** An object read or written by the running step. */
  object(type: ResourceType, obj: KubeObject, how: 'read' | 'write' | 'create' | 'status', listSize?: number): void;
  /** An object a write returned (after `object`). */
  written(type: ResourceType, obj: KubeObject, status: boolean): void;
  /** A GET that found nothing. */
  absent(type: ResourceType, namespace: string, name: string): void;
  /** Called before every write; throws when the running step may write nothing more. */
  live(): void;
  /** Aborts when the running step is abandoned, if there is a running step. */
  signal(): AbortSignal | undefined;
  /** Whether the running step is on its first attempt: only then may a cache answer it. */
  firstAttempt(): boolean;
}

const noHooks: StepHooks = {
  object: () => undefined,
  written: () => undefined,
  absent: () => undefined,
  live: () => undefined,
  signal: () => undefined,
  firstAttempt: () => true,
};

let hooks: StepHooks = noHooks;

export function installStepHooks(h: StepHooks): void {
  hooks = h;
}

export function stepHooks(): StepHooks {
  return hooks;
}
