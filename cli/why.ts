// "Why is it not Ready?": the conditions that are not True, the pass that set Ready as it is, the objects the object
// waits on, and what comes next. Pure: it reasons over what `kubectl tidal` read.
import type { Pass } from './history.js';
import { passesOf, readyOf, type Condition, type ObjectStory, type StoryObject } from './story.js';

/** An object another one waits on, by the kind name kubectl knows and its name. */
export interface Dependency {
  kind: string;
  name: string;
}

const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);

/**
 * The objects whose state decides this one's Ready: a Service's or Configuration's newest Revision, the Revisions a
 * Route's traffic names, a DomainMapping's referenced Service. A Revision's own workflow does its work itself.
 */
export function dependenciesOf(kind: string, obj: StoryObject): Dependency[] {
  const status = obj.status ?? {};
  if (kind === 'Service' || kind === 'Configuration') {
    const rev = str(status.latestCreatedRevisionName);
    return rev ? [{ kind: 'Revision', name: rev }] : [];
  }
  if (kind === 'Route') {
    const traffic = [...((obj.spec?.traffic as unknown[]) ?? []), ...((status.traffic as unknown[]) ?? [])];
    const names = traffic.map((t) => str((t as { revisionName?: unknown }).revisionName)).filter((n): n is string => n !== undefined);
    return [...new Set(names)].map((name) => ({ kind: 'Revision', name }));
  }
  if (kind === 'DomainMapping') {
    const ref = obj.spec?.ref as { kind?: string; name?: string } | undefined;
    return ref?.kind === 'Service' && ref.name ? [{ kind: 'Service', name: ref.name }] : [];
  }
  return [];
}

/** The conditions that are not True, Ready first. */
export function unhappyConditions(obj: StoryObject): Condition[] {
  const all = obj.status?.conditions ?? [];
  return [...all.filter((c) => c.type === 'Ready'), ...all.filter((c) => c.type !== 'Ready')].filter((c) => c.status !== 'True');
}

/**
 * The pass that left Ready as it is: the newest whose status step reported that Ready (and reason); else the newest
 * with a failed step (a failed step reports its failure on the status itself); else the newest.
 */
export function passThatSet(story: ObjectStory): Pass | undefined {
  const ready = readyOf(story.obj);
  const passes = passesOf(story.workflow);
  const matches = (p: Pass) =>
    p.steps.some((s) => s.ready && s.ready.status === ready?.status && (ready.reason === undefined || s.ready.reason === ready.reason));
  const newest = (test: (p: Pass) => boolean) => [...passes].reverse().find(test);
  return newest(matches) ?? newest((p) => p.steps.some((s) => s.failure !== undefined || (s.remote && s.outcome === ''))) ?? passes.at(-1);
}

export function isReady(obj: StoryObject): boolean {
  return readyOf(obj)?.status === 'True';
}
