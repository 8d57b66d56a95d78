// The entity loop every object's workflow runs (design.md §3): pokes set a dirty flag, any number of pokes
// coalesce into one reconcile pass, a durable timer resyncs, the run continues-as-new before its history grows
// long, and the workflow completes once its object is gone.
import {
  allHandlersFinished,
  condition,
  continueAsNew,
  defineQuery,
  defineSignal,
  log,
  setHandler,
  workflowInfo,
} from '@temporalio/workflow';
import { isNewerResourceVersion, POKE_SIGNAL, STATE_QUERY, type EntityKind, type Poke } from '../api/entity.js';

export const pokeSignal = defineSignal<[Poke]>(POKE_SIGNAL);
export const stateQuery = defineQuery<EntityState>(STATE_QUERY);

export interface EntityOptions {
  /** Reconcile at least this often even without pokes (drift repair). */
  resyncSeconds: number;
  /** Continue-as-new after this many reconcile passes in one run. */
  maxReconcilesPerRun: number;
  /** Continue-as-new after this many pokes in one run (the server's suggestion ignores signals). */
  maxPokesPerRun: number;
}

export const defaultEntityOptions: EntityOptions = { resyncSeconds: 600, maxReconcilesPerRun: 200, maxPokesPerRun: 1000 };

export interface EntityInput {
  kind: EntityKind;
  namespace: string;
  name: string;
  options?: Partial<EntityOptions>;
  /** State carried over continue-as-new; absent on a fresh start. */
  carried?: CarriedState;
}

/** Plain JSON only: it crosses continue-as-new. */
export interface CarriedState {
  uid?: string;
  dirty: boolean;
  trigger: string;
  seen: Record<string, string>;
  totalReconciles: number;
  totalPokes: number;
  runs: number;
  /** Small per-kind facts a workflow remembers between passes (e.g. digests resolved). */
  facts: Record<string, string>;
  lastReconcile?: { at: string; trigger: string; summary: string };
}

export interface EntityState extends CarriedState {
  kind: EntityKind;
  namespace: string;
  name: string;
  reconcilesThisRun: number;
  pokesThisRun: number;
  ignoredPokes: number;
  options: EntityOptions;
  /** Pokes that arrived while a pass ran; those caused by the pass's own writes are dropped afterwards. */
  pokesDuringPass: Poke[];
  inPass: boolean;
}

/** What one reconcile pass reports back to the loop. */
export interface PassResult {
  /** The object no longer exists: the workflow completes. */
  gone: boolean;
  /** The uid of the object reconciled; a new uid means the object was recreated. */
  uid?: string;
  summary: string;
  /** Objects this pass wrote, with the resourceVersion the write produced: their watch events are not news. */
  wrote?: { source: string; resourceVersion: string }[];
  /** Facts to remember (merged into the carried state). */
  facts?: Record<string, string>;
}

export type ReconcilePass = (state: Readonly<EntityState>) => Promise<PassResult>;

const MAX_SEEN_SOURCES = 64;

export async function runEntity(input: EntityInput, reconcile: ReconcilePass): Promise<string> {
  const options: EntityOptions = { ...defaultEntityOptions, ...input.options };
  const st: EntityState = {
    kind: input.kind,
    namespace: input.namespace,
    name: input.name,
    dirty: true, // a fresh run always reconciles once
    trigger: 'start',
    seen: {},
    totalReconciles: 0,
    totalPokes: 0,
    runs: 0,
    facts: {},
    ...input.carried,
    reconcilesThisRun: 0,
    pokesThisRun: 0,
    ignoredPokes: 0,
    options,
    pokesDuringPass: [],
    inPass: false,
  };
  st.runs += 1;

  setHandler(pokeSignal, (poke) => onPoke(st, poke));
  setHandler(stateQuery, () => st);

  for (;;) {
    const poked = await condition(() => st.dirty, options.resyncSeconds * 1000);
    const trigger = poked ? st.trigger : 'resync';
    st.dirty = false;
    st.inPass = true;
    st.pokesDuringPass = [];
    const result = await reconcile(st);
    st.inPass = false;
    forgetOwnWrites(st, result.wrote ?? []);
    if (result.facts) st.facts = { ...st.facts, ...result.facts };
    st.reconcilesThisRun += 1;
    st.totalReconciles += 1;
    st.lastReconcile = { at: new Date().toISOString(), trigger, summary: result.summary };
    log.info('reconciled', { kind: st.kind, namespace: st.namespace, name: st.name, trigger, summary: result.summary });

    if (result.gone) {
      await condition(allHandlersFinished);
      // A poke that landed meanwhile may be for a recreated object: look once more before completing.
      if (!st.dirty) return `${st.kind} ${st.namespace}/${st.name} is gone: ${result.summary}`;
      continue;
    }
    if (result.uid !== undefined && st.uid !== undefined && result.uid !== st.uid) {
      // The object was deleted and created again under the same name: forget what the old one told us.
      st.seen = {};
      st.facts = {};
    }
    if (result.uid !== undefined) st.uid = result.uid;

    if (shouldContinueAsNew(st)) {
      await condition(allHandlersFinished);
      return continueAsNew<(i: EntityInput) => Promise<string>>({
        kind: st.kind,
        namespace: st.namespace,
        name: st.name,
        options,
        carried: carry(st),
      });
    }
  }
}

function onPoke(st: EntityState, poke: Poke): void {
  st.pokesThisRun += 1;
  st.totalPokes += 1;
  // A sweep poke only exists to start a run that was gone; a running workflow resyncs on its own timer.
  if (poke.reason === 'resync' && poke.resourceVersion === undefined) {
    st.ignoredPokes += 1;
    return;
  }
  const seen = st.seen[poke.source];
  if (poke.reason !== 'deleted' && poke.resourceVersion !== undefined && !isNewerResourceVersion(poke.resourceVersion, seen)) {
    st.ignoredPokes += 1;
    return;
  }
  if (poke.resourceVersion !== undefined) {
    delete st.seen[poke.source]; // re-insert so the oldest entries are evicted first
    st.seen[poke.source] = poke.resourceVersion;
    const sources = Object.keys(st.seen);
    if (sources.length > MAX_SEEN_SOURCES) delete st.seen[sources[0] as string];
  }
  st.dirty = true;
  st.trigger = `${poke.reason} ${poke.source}`;
  if (st.inPass && st.pokesDuringPass.length < 100) st.pokesDuringPass.push(poke);
}

/**
 * Records what the pass wrote as seen, and clears the dirty flag when every poke that arrived during the pass was
 * the echo of one of those writes (a status write pokes its own workflow back).
 */
function forgetOwnWrites(st: EntityState, wrote: { source: string; resourceVersion: string }[]): void {
  for (const w of wrote) {
    if (isNewerResourceVersion(w.resourceVersion, st.seen[w.source])) st.seen[w.source] = w.resourceVersion;
  }
  if (!st.dirty || st.pokesDuringPass.length === 0 || st.pokesDuringPass.length >= 100) return;
  const echo = (p: Poke) =>
    p.reason !== 'deleted' && p.resourceVersion !== undefined && wrote.some((w) => w.source === p.source && !isNewerResourceVersion(p.resourceVersion, w.resourceVersion));
  if (st.pokesDuringPass.every(echo)) {
    st.dirty = false;
    st.ignoredPokes += st.pokesDuringPass.length;
  }
}

function shouldContinueAsNew(st: EntityState): boolean {
  return (
    workflowInfo().continueAsNewSuggested ||
    st.reconcilesThisRun >= st.options.maxReconcilesPerRun ||
    st.pokesThisRun >= st.options.maxPokesPerRun
  );
}

function carry(st: EntityState): CarriedState {
  return {
    ...(st.uid !== undefined ? { uid: st.uid } : {}),
    dirty: st.dirty,
    trigger: st.trigger,
    seen: st.seen,
    totalReconciles: st.totalReconciles,
    totalPokes: st.totalPokes,
    runs: st.runs,
    facts: st.facts,
    ...(st.lastReconcile ? { lastReconcile: st.lastReconcile } : {}),
  };
}
