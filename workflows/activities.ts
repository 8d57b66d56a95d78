// Activity stubs with Tidal's options. Every step gets a one-line summary so the Temporal UI's history reads
// like a log. Every step's result also carries what it observed (activities/observe.ts); the steps of one pass
// pool those observations here for the entity loop (workflows/entity.ts).
import { proxyActivities, proxyLocalActivities, type ActivityOptions } from '@temporalio/workflow';
import { mergeObservations } from '../api/content-token.js';
import type { Activities, Observed } from '../activities/index.js';

const baseOptions: ActivityOptions = {
  // Knative's per-reconcile timeout; a worker that dies mid-step is noticed after this and the step retries.
  startToCloseTimeout: '30s',
  retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '1m' },
};

/** Observations of the pass under way (one pass at a time per workflow; module state is per workflow run). */
let passObservations: Record<string, string> | undefined;

/** Starts pooling the observations of a pass's steps. */
export function beginPassObservations(): void {
  passObservations = {};
}

/** What the steps of this pass observed; a later step's reading of a dependency's status replaces an earlier one. */
export function endPassObservations(): Record<string, string> {
  const out = passObservations ?? {};
  passObservations = undefined;
  return out;
}

function pool(observed: Record<string, string> | undefined): void {
  if (!passObservations || !observed) return;
  for (const [source, obs] of Object.entries(observed)) {
    const before = passObservations[source];
    passObservations[source] = before === undefined ? obs : mergeObservations(before, obs, true);
  }
}

/** Activities proxied with `summary` as the label the Temporal UI shows for this step. */
export function step(summary: string, overrides: Partial<ActivityOptions> = {}): Activities {
  const proxied = proxyActivities<Activities>({ ...baseOptions, ...overrides, summary });
  return new Proxy(proxied, {
    get(target, name: string) {
      const fn = target[name as keyof Activities] as (...args: unknown[]) => Promise<Observed>;
      return async (...args: unknown[]) => {
        const result = await fn(...args);
        pool(result?.observed);
        return result;
      };
    },
  });
}

/** The worker's current entity options, read at the start of every run and at every resync (never carried). */
export const { readEntityOptions } = proxyLocalActivities<Pick<Activities, 'readEntityOptions'>>({
  startToCloseTimeout: '5s',
  summary: 'read entity options',
});
