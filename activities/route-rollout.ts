// A Route's gradual rollout within its pass (upstream's `rolloutConfig` in `reconcileIngress`): planned from
// the state the KIngress's `networking.internal.knative.dev/rollout` annotation carries, on the activity's clock; a
// pass the workflow's early timer started waits for the step's time first. The split is programmed into the KIngress
// (activities/route-ingress.ts); this pass's summary goes to the workflow, which arms its timer for the next step.
import type { NetworkConfig } from '../api/config/network.js';
import { RouteConditionIngressReady, routeConditionSet } from '../api/lifecycle/route.js';
import { isIngressReady } from '../api/lifecycle/ingress.js';
import { NetworkingAnnotations, type Ingress } from '../api/networking.js';
import type { Route } from '../api/serving.js';
import {
  buildRollout,
  parseRolloutAnnotation,
  parseRolloutControl,
  planRollout,
  rolloutDurationSeconds,
  stepWaitMs,
  type Rollout,
  type RolloutPlan,
  type RolloutPlanInput,
} from '../resources/rollout.js';
import type { TrafficConfig } from '../resources/traffic.js';
import type { ActivityDeps } from './deps.js';

/** A rollout as the Route's pass left it, for the workflow's history and its durable timer. */
export interface RolloutSummary {
  /** One line: "nginx-00002 26% → 51% (nginx-00001 49%, nginx-00002 51%)", "… paused", "… rolled back to …". */
  summary: string;
  /** The next step is due then (Unix ms); absent when no timed step is scheduled (finished, paused, held). */
  nextStepAtMs?: number;
  /** How long from the end of this step until then (ms, ≥ 0): the workflow's timer, armed right after the step. */
  nextStepInMs?: number;
}

/** The rollout's clock, Unix ms: read when each decision is taken (a step's due time is compared with it). */
export function rolloutClock(deps: Pick<ActivityDeps, 'now'>): () => number {
  return () => (deps.now?.() ?? new Date()).getTime();
}

/** The pass's rollout: the plan, what it was planned from, and the state the KIngress carried before. */
export interface RouteRollout {
  plan: RolloutPlan;
  input: RolloutPlanInput;
  previous: Rollout | undefined;
}

/**
 * How long a pass waits before it plans: a timer may wake a millisecond early by the wall clock, and the workflow arms
 * it a little early on purpose (RolloutWakeLeadMs), so when a step of the rollout `ingress` carries is due within that
 * lead, the pass waits until its time has really come, or the plan would find it not yet due and ask for another timer.
 */
export function untilStepDue(ingress: Ingress | undefined, clock: () => number): number {
  return stepWaitMs(parseRolloutAnnotation(ingress?.metadata.annotations?.[NetworkingAnnotations.rollout]), clock());
}

/** Plans the rollout from the state `ingress` carries, at the clock's time. */
export function planRouteRollout(
  route: Route,
  stored: Route,
  traffic: TrafficConfig,
  ingress: Ingress | undefined,
  net: NetworkConfig,
  clock: () => number,
): RouteRollout {
  const previousAnnotation = ingress?.metadata.annotations?.[NetworkingAnnotations.rollout];
  const input: RolloutPlanInput = {
    desired: buildRollout(traffic),
    previousAnnotation,
    ingressExists: ingress !== undefined,
    ingressReady: ingress !== undefined && isIngressReady(ingress),
    routeIngressReady: routeConditionSet.get(stored.status, RouteConditionIngressReady)?.status === 'True',
    nowMs: clock(),
    durationSeconds: rolloutDurationSeconds(route.metadata.annotations, net),
    control: parseRolloutControl(route.metadata.annotations),
    revisions: traffic.revisions,
  };
  return { plan: planRollout(input), input, previous: parseRolloutAnnotation(previousAnnotation) };
}

/**
 * The plan once the KIngress programmed in this step is Ready: its 1 % step became ready within this pass, which no
 * later event would announce. Observed here, as upstream's next pass would (`ObserveReady`: the step took under a
 * second), so the schedule starts now. Undefined when that moves nothing in the annotation.
 */
export function observeReadyStep(rollout: RouteRollout, plan: RolloutPlan, clock: () => number): RolloutPlan | undefined {
  const observed = planRollout({
    ...rollout.input,
    previousAnnotation: plan.annotation,
    ingressReady: true,
    routeIngressReady: false,
    nowMs: clock(),
  });
  if (observed.annotation === plan.annotation) return undefined;
  return { ...observed, events: [...plan.events, ...observed.events.filter((e) => e.reason !== 'RolloutControlInvalid')] };
}

/** `HH:MM:SS.mmmZ` of a Unix ms time: what a history line needs (the date is the pass's). */
function timeOfDay(ms: number): string {
  return `${new Date(ms).toISOString().slice(11, 23)}Z`;
}

/**
 * The rollout as this pass left it, compared with the KIngress's state before (`prev`): "nginx-00002 26% → 51%
 * (nginx-00001 49%, nginx-00002 51%), next step at 10:04:07.120Z"; a held configuration says why. Undefined when no
 * configuration is rolling out, held, or just finished. `nowMs`: the clock at the end of the step.
 */
export function rolloutSummary(prev: Rollout | undefined, plan: RolloutPlan, nowMs: number): RolloutSummary | undefined {
  const parts: string[] = [];
  for (const c of plan.rollout.configurations) {
    const latest = c.revisions.at(-1);
    if (latest === undefined) continue;
    const group = c.tag ? `tag ${c.tag}: ` : '';
    const hold = plan.holds.find((h) => h.configurationName === c.configurationName && (h.tag ?? '') === (c.tag ?? ''));
    if (hold) {
      parts.push(`${group}${hold.desiredRevision} ${hold.cause === 'abort' ? 'aborted' : 'rolled back'}, traffic on ${hold.servingRevision}`);
      continue;
    }
    const p = prev?.configurations.find((x) => x.configurationName === c.configurationName && (x.tag ?? '') === (c.tag ?? ''));
    const wasRolling = (p?.revisions.length ?? 0) > 1;
    if (c.revisions.length < 2 && !wasRolling) continue;
    const before = p?.revisions.find((x) => x.revisionName === latest.revisionName)?.percent ?? 0;
    const move = before === latest.percent ? `at ${latest.percent}%` : `${before}% → ${latest.percent}%`;
    const split = c.revisions.length > 1 ? ` (${c.revisions.map((x) => `${x.revisionName} ${x.percent}%`).join(', ')})` : ', rollout finished';
    parts.push(`${group}${latest.revisionName} ${move}${split}`);
  }
  if (parts.length === 0) return undefined;
  const next = plan.nextWakeAtMs;
  const summary = `${parts.join('; ')}${plan.paused ? ', paused' : ''}${next !== undefined ? `, next step at ${timeOfDay(next)}` : ''}`;
  return next === undefined ? { summary } : { summary, nextStepAtMs: next, nextStepInMs: Math.max(0, next - nowMs) };
}
