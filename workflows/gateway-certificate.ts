// The gateway certificate's keeper (hakn's `GatewayCertificates` queue): one
// workflow per TLS Secret, id `GatewayCertificate/<ns>/<name>`. Each pass ensures the Secret holds a valid
// certificate; the activity answers when to look again (NotAfter − renewBeforeHours) and the workflow sleeps on a
// durable timer until then, or until a poke (the Secret was edited or deleted) asks for an early look. Rotation thus
// never depends on an informer resync. The run continues-as-new after a bounded number of passes.
// Also keeps the admission webhook's certificates (`certificate: 'webhook'`), on the same loop.
import {
  allHandlersFinished,
  ApplicationFailure,
  condition,
  continueAsNew,
  defineQuery,
  proxyActivities,
  setHandler,
  workflowInfo,
  type ActivityOptions,
} from '@temporalio/workflow';
import { STATE_QUERY } from '../api/entity.js';
import type { createCertificateActivities, EnsureGatewayCertificateResult } from '../activities/certificate.js';
import { pokeSignal } from './entity.js';

type CertificateActivities = ReturnType<typeof createCertificateActivities>;

// The options of workflows/activities.ts's steps. The activity is registered with all the others (activities/index.ts,
// `createCertificateActivities`); it is proxied here directly since this workflow, not an entity loop, has no use for
// those steps' pooling of observations.
const baseOptions: ActivityOptions = {
  startToCloseTimeout: '30s',
  retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '1m' },
};

function step(summary: string): CertificateActivities {
  return proxyActivities<CertificateActivities>({ ...baseOptions, summary });
}

export interface GatewayCertificateInput {
  namespace: string;
  name: string;
  /**
   * Which certificate this keeper keeps: hakn's gateway certificate (default) or the admission webhook's CA and
   * serving certificate (Secret `webhook-certs`). The loop, timer and pokes are the same.
   */
  certificate?: 'gateway' | 'webhook';
  /** Validity of a new certificate (hakn: 7 days). */
  validityHours?: number;
  /** Renew when less than this is left (hakn: 24 h). */
  renewBeforeHours?: number;
  /** Look again at least this often even when renewal is far (hakn relies on a 10 h informer resync). */
  maxSleepHours?: number;
  /** Continue-as-new after this many passes in one run. */
  maxChecksPerRun?: number;
  /** Carried over continue-as-new. */
  carried?: { totalChecks: number; runs: number };
}

export interface GatewayCertificateState {
  namespace: string;
  name: string;
  totalChecks: number;
  checksThisRun: number;
  pokes: number;
  runs: number;
  last?: EnsureGatewayCertificateResult & { at: string; trigger: string };
}

export const gatewayCertificateStateQuery = defineQuery<GatewayCertificateState>(STATE_QUERY);

const HOUR_MS = 3_600_000;
/** Never sleep less than this, so a certificate that is "due" right after renewal cannot spin the loop. */
const MIN_SLEEP_MS = 1_000;

export async function gatewayCertificateWorkflow(input: GatewayCertificateInput): Promise<never> {
  const validityHours = input.validityHours ?? 168;
  const renewBeforeHours = input.renewBeforeHours ?? 24;
  const maxSleepMs = (input.maxSleepHours ?? 10) * HOUR_MS;
  const maxChecksPerRun = input.maxChecksPerRun ?? 100;
  if (!(validityHours > renewBeforeHours) || !(renewBeforeHours >= 0)) {
    throw ApplicationFailure.nonRetryable(`validityHours (${validityHours}) must exceed renewBeforeHours (${renewBeforeHours}) >= 0`, 'InvalidInput');
  }

  const st: GatewayCertificateState = {
    namespace: input.namespace,
    name: input.name,
    totalChecks: input.carried?.totalChecks ?? 0,
    checksThisRun: 0,
    pokes: 0,
    runs: (input.carried?.runs ?? 0) + 1,
  };
  let poked = false;
  let trigger = input.carried ? 'continued' : 'start';
  setHandler(pokeSignal, (batch) => {
    const last = Array.isArray(batch) ? batch.at(-1) : batch;
    st.pokes += 1;
    poked = true;
    if (last) trigger = `${last.reason} ${last.source}`;
  });
  setHandler(gatewayCertificateStateQuery, () => st);

  for (;;) {
    poked = false; // a poke that lands while the activity runs wakes the next sleep at once
    const r =
      input.certificate === 'webhook'
        ? await step(`ensure webhook certificates ${input.namespace}/${input.name}`).ensureWebhookCertificate({
            namespace: input.namespace,
            validityHours,
            renewBeforeHours,
          })
        : await step(`ensure gateway certificate ${input.namespace}/${input.name}`).ensureGatewayCertificate({
            namespace: input.namespace,
            name: input.name,
            validityHours,
            renewBeforeHours,
          });
    st.totalChecks += 1;
    st.checksThisRun += 1;
    st.last = { ...r, at: new Date().toISOString(), trigger };

    const untilRenew = new Date(r.renewAt).getTime() - new Date().getTime();
    const sleepMs = Math.max(MIN_SLEEP_MS, Math.min(Number.isFinite(untilRenew) ? untilRenew : MIN_SLEEP_MS, maxSleepMs));
    const wasPoked = await condition(() => poked, sleepMs);
    trigger = wasPoked ? trigger : 'timer';

    if (st.checksThisRun >= maxChecksPerRun || workflowInfo().continueAsNewSuggested) {
      await condition(allHandlersFinished);
      // The next run checks at once, so a poke pending now is not lost.
      return continueAsNew<typeof gatewayCertificateWorkflow>({
        ...input,
        carried: { totalChecks: st.totalChecks, runs: st.runs },
      });
    }
  }
}
