// How a pass pools its steps' observations (workflows/activities.ts): which pokes the entity loop may then ignore.
import { describe, expect, it } from 'vitest';
import { contentToken, observationCovers, observationOf } from '../../../api/content-token.js';
import type { KubeObject } from '../../../api/meta.js';
import { beginPassObservations, endPassObservations, poolStepObservations } from '../../../workflows/activities.js';

const rev = (ready?: 'Unknown' | 'True'): KubeObject & { status?: unknown } => ({
  apiVersion: 'serving.knative.dev/v1',
  kind: 'Revision',
  metadata: { name: 'web-00001', namespace: 'ns', uid: 'u1', generation: 1 },
  ...(ready ? { status: { observedGeneration: 1, conditions: [{ type: 'Ready', status: ready }] } } : {}),
});
const source = 'Revision/ns/web-00001';

describe('a pass’s observations', () => {
  it('a step’s read after another step created the object: the read’s status is what the pass acted on', () => {
    beginPassObservations();
    poolStepObservations({ [source]: observationOf(rev()) }, { wrote: { [source]: 'all' }, created: [source] });
    poolStepObservations({ [source]: observationOf(rev('Unknown')) });
    const { observed, applied } = endPassObservations();
    expect(observationCovers(observed[source], contentToken(rev('Unknown'), 'dependency'))).toBe(true);
    expect(applied.has(source)).toBe(true);
  });

  it('two steps that read different statuses cover neither, created or not', () => {
    beginPassObservations();
    poolStepObservations({ [source]: observationOf(rev()) }, { wrote: { [source]: 'all' }, created: [source] });
    poolStepObservations({ [source]: observationOf(rev('Unknown')) });
    poolStepObservations({ [source]: observationOf(rev('True')) });
    const { observed } = endPassObservations();
    expect(observationCovers(observed[source], contentToken(rev('True'), 'dependency'))).toBe(false);
    expect(observationCovers(observed[source], contentToken(rev('Unknown'), 'dependency'))).toBe(false);
  });

  it('a read after an apply (not a create) that saw another status covers neither: the apply’s step may have acted on it', () => {
    beginPassObservations();
    poolStepObservations({ [source]: observationOf(rev('Unknown')) }, { wrote: { [source]: 'all' } });
    poolStepObservations({ [source]: observationOf(rev('True')) });
    const { observed } = endPassObservations();
    expect(observationCovers(observed[source], contentToken(rev('True'), 'dependency'))).toBe(false);
  });

  it('keeps every step’s echoes its final observation does not cover, and starts each pass afresh', () => {
    // An object created by one step (its echo is the version without status), its status written by the next.
    beginPassObservations();
    const created = observationOf(rev());
    poolStepObservations({ [source]: created }, { wrote: { [source]: 'all' }, echoes: { [source]: [`5 ${created}`] }, created: [source] });
    poolStepObservations({ [source]: observationOf(rev('True')) }, { wrote: { [source]: 'status' } });
    poolStepObservations({ [source]: observationOf(rev('True')) }, { echoes: { [source]: [`7 ${observationOf(rev('True'))}`] } });
    const pass = endPassObservations();
    expect(pass.echoes).toEqual({ [source]: [`5 ${created}`] });
    expect(pass.wrote).toBe(true);
    beginPassObservations();
    expect(endPassObservations()).toEqual({ observed: {}, applied: new Set(), echoes: {}, wrote: false, versions: {} });
  });

  it('keeps the oldest resourceVersion any step read or wrote of each source (the oldest it may have acted on)', () => {
    beginPassObservations();
    poolStepObservations({ [source]: observationOf(rev('Unknown')) }, { versions: { [source]: '120' } });
    // A later step was served an older copy (a cache behind) and acted on it: the pass read 99 too.
    poolStepObservations({ [source]: observationOf(rev('Unknown')) }, { versions: { [source]: '99' } });
    poolStepObservations({ [source]: observationOf(rev('Unknown')) }, { versions: { [source]: '130' } });
    poolStepObservations({ 'Route/ns/web': 'u2 a b' }, { versions: { 'Route/ns/web': '1000' } });
    expect(endPassObservations().versions).toEqual({ [source]: '99', 'Route/ns/web': '1000' });
    beginPassObservations();
    expect(endPassObservations().versions).toEqual({});
  });

  it('says a pass wrote when any step reports a write, its status only too, and not when its steps only read', () => {
    beginPassObservations();
    poolStepObservations({ [source]: observationOf(rev()) });
    poolStepObservations({ [source]: observationOf(rev('True')) }, {});
    expect(endPassObservations().wrote).toBe(false);
    beginPassObservations();
    poolStepObservations({ [source]: observationOf(rev()) });
    poolStepObservations({ [source]: observationOf(rev('True')) }, { wrote: { [source]: 'status' } });
    expect(endPassObservations().wrote).toBe(true);
  });
});
