// The entity workflow of every object (ADR 0001): the loop's rules are a pure state machine
// (workflows/entity-loop.ts); this shell feeds it signals, timers, options and passes, and does what it asks with
// Temporal's APIs. Each phase is one await (or one `patched`) made where the loop has always made it, with no other
// await between, so runs recorded before replay as they ran.
import {
  allHandlersFinished,
  condition,
  continueAsNew,
  defineQuery,
  defineSignal,
  log,
  patched,
  setHandler,
  sleep,
  workflowInfo,
} from '@temporalio/workflow';
import { POKE_SIGNAL, STATE_QUERY, type PokeBatch } from '../api/entity.js';
import type { EntityOptionsRead } from '../activities/options.js';
import { beginPassObservations, endPassObservations, readEntityOptions, StepFailed } from './activities.js';
import { decide, startLoop, wantsToAct, type LoopEffect, type LoopEvent, type LoopState, type Resumed } from './entity-loop.js';
import type { EntityInput, EntityState, EntityTraits, PassResult } from './entity-state.js';

export type { CarriedState, EntityInput, EntityOptions, EntityState, EntityTraits, PassResult } from './entity-state.js';

export const pokeSignal = defineSignal<[PokeBatch]>(POKE_SIGNAL);
export const stateQuery = defineQuery<EntityState>(STATE_QUERY);

export type ReconcilePass = (state: Readonly<EntityState>) => Promise<PassResult>;

/** The worker's options; nothing to read when the input fixes them (tests). */
async function readOptions(input: EntityInput): Promise<EntityOptionsRead | undefined> {
  if (input.options) return undefined;
  return await readEntityOptions();
}

/** Workflow time (the SDK's deterministic clock, the start of the current workflow task) and the server's suggestion. */
function resumed(): Resumed {
  return { nowMs: new Date().getTime(), continueAsNewSuggested: workflowInfo().continueAsNewSuggested };
}

export async function runEntity(input: EntityInput, reconcile: ReconcilePass, traits: EntityTraits = {}): Promise<string> {
  let loop: LoopState = startLoop(input, traits, new Date().getTime());
  const feed = (event: LoopEvent): void => {
    const { state, effects } = decide(loop, event);
    loop = state;
    for (const effect of effects) perform(effect);
  };
  const perform = (effect: LoopEffect): void => {
    if (effect.type === 'log') return log.info(effect.message, effect.fields);
    const { timer, ms } = effect;
    // Named in the Temporal UI: what a scheduled pass waits for, and why a failed pass is retried.
    const summary = timer.kind === 'wake' ? timer.summary : timer.kind === 'retry' && timer.afterFailures !== undefined ? timer.trigger : undefined;
    const fired = summary !== undefined ? sleep(ms, { summary }) : sleep(ms);
    void fired.then(() => feed({ type: 'timerFired', timer, nowMs: new Date().getTime(), lateWakePassesNow: () => patched('late-wake-passes-now') }));
  };

  setHandler(pokeSignal, (batch) => {
    for (const poke of Array.isArray(batch) ? batch : [batch]) feed({ type: 'poke', poke });
  });
  setHandler(stateQuery, () => loop);
  for (const poke of input.pokes ?? []) feed({ type: 'poke', poke });

  for (;;) {
    const phase = loop.phase;
    switch (phase.kind) {
      case 'patch':
        feed({ type: 'patched', inForce: patched(phase.patch), ...resumed() });
        break;
      case 'options': {
        const read = await readOptions(input);
        feed({ type: 'optionsRead', read, ...resumed() });
        break;
      }
      case 'wait':
        await condition(() => wantsToAct(loop));
        feed({ type: 'woken', ...resumed() });
        break;
      case 'pass': {
        beginPassObservations();
        let result: PassResult;
        try {
          result = await reconcile(loop);
        } catch (err) {
          endPassObservations();
          // A step that still failed after its attempts fails the pass, which the loop retries after a backoff or at
          // the next news. Anything else is a bug in the workflow's code: its task fails and is retried.
          if (!(err instanceof StepFailed) || !patched('failed-pass-retried-by-the-loop')) throw err;
          feed({ type: 'passFailed', message: err.message, ...resumed() });
          break;
        }
        feed({ type: 'passed', result, observations: endPassObservations(), ...resumed() });
        break;
      }
      case 'drain':
        await condition(allHandlersFinished);
        feed({ type: 'handlersFinished', ...resumed() });
        break;
      case 'end':
        return phase.result;
      case 'continueAsNew':
        return continueAsNew<(i: EntityInput) => Promise<string>>(phase.input);
    }
  }
}
