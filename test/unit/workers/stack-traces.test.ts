// The switch for the SDK's per-Promise workflow stack traces: it reaches the SDK's hook and turns it off.
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { stopWorkflowStackTraces } from '../../../workers/stack-traces.js';

const require = createRequire(import.meta.url);

describe('stopWorkflowStackTraces', () => {
  it('stops the promise hook the SDK installed for main-thread workflows, and new workflows see stack traces off', () => {
    const { globalHandlers } = require('@temporalio/worker/lib/workflow/vm-shared.js') as {
      globalHandlers: { install(): void; promiseHookInstalled: boolean; stopPromiseHook(): void };
    };
    globalHandlers.install(); // what creating a main-thread worker does
    expect(globalHandlers.promiseHookInstalled).toBe(true);
    let stopped = 0;
    const stop = globalHandlers.stopPromiseHook.bind(globalHandlers);
    globalHandlers.stopPromiseHook = () => {
      stopped += 1;
      stop();
    };
    expect(stopWorkflowStackTraces()).toBe(true);
    expect(stopped).toBe(1);
    expect(globalHandlers.promiseHookInstalled).toBe(false);
  });
});
