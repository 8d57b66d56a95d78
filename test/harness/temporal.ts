// What the workflows layer's files share: the bundle of today's workflow code (made once per run, by
// harness/temporal-setup.ts), a worker with fake activities, unique ids.
import { inject } from 'vitest';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { DefaultLogger, Runtime, Worker, type WorkerOptions, type WorkflowBundleWithSourceMap } from '@temporalio/worker';
import type { Activities } from '../../activities/index.js';

let runtimeInstalled = false;

export async function testEnv(): Promise<TestWorkflowEnvironment> {
  if (!runtimeInstalled) {
    Runtime.install({ logger: new DefaultLogger('WARN'), shutdownSignals: [] });
    runtimeInstalled = true;
  }
  return TestWorkflowEnvironment.createFromExistingServer({ address: inject('temporalAddress') });
}

export function bundle(): Promise<WorkflowBundleWithSourceMap> {
  return Promise.resolve(inject('workflowBundle'));
}

export async function startWorker(
  env: TestWorkflowEnvironment,
  wfBundle: WorkflowBundleWithSourceMap,
  taskQueue: string,
  activities: Partial<Activities>,
  options: Pick<WorkerOptions, 'maxCachedWorkflows' | 'maxConcurrentWorkflowTaskExecutions'> = {},
): Promise<Worker> {
  return Worker.create({
    connection: env.nativeConnection,
    namespace: env.namespace ?? 'default',
    taskQueue,
    workflowBundle: wfBundle,
    activities,
    ...options,
  });
}

let counter = 0;
export function uniqueName(prefix: string): string {
  counter += 1;
  return `${prefix}-${process.pid}-${Date.now().toString(36)}-${counter}`;
}
