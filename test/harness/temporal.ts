// Helpers for the workflows layer: one bundle per test file, a worker with fake activities, unique ids.
import { fileURLToPath } from 'node:url';
import { inject } from 'vitest';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { bundleWorkflowCode, DefaultLogger, Runtime, Worker, type WorkerOptions, type WorkflowBundleWithSourceMap } from '@temporalio/worker';
import type { Activities } from '../../activities/index.js';

let runtimeInstalled = false;

export async function testEnv(): Promise<TestWorkflowEnvironment> {
  if (!runtimeInstalled) {
    Runtime.install({ logger: new DefaultLogger('WARN'), shutdownSignals: [] });
    runtimeInstalled = true;
  }
  return TestWorkflowEnvironment.createFromExistingServer({ address: inject('temporalAddress') });
}

export async function bundle(): Promise<WorkflowBundleWithSourceMap> {
  return bundleWorkflowCode({
    workflowsPath: fileURLToPath(new URL('../../workflows/index.ts', import.meta.url)),
    logger: { log() {}, trace() {}, debug() {}, info() {}, warn() {}, error() {} },
  });
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
