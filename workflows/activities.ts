// Activity stubs with Tidal's options. Every step gets a one-line summary so the Temporal UI's history reads
// like a log.
import { proxyActivities, type ActivityOptions } from '@temporalio/workflow';
import type { Activities } from '../activities/index.js';

const baseOptions: ActivityOptions = {
  // Knative's per-reconcile timeout; a worker that dies mid-step is noticed after this and the step retries.
  startToCloseTimeout: '30s',
  retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '1m' },
};

/** Activities proxied with `summary` as the label the Temporal UI shows for this step. */
export function step(summary: string, overrides: Partial<ActivityOptions> = {}): Activities {
  return proxyActivities<Activities>({ ...baseOptions, ...overrides, summary });
}
