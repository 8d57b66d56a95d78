import { describe, expect, it } from 'vitest';
import { describeOutcome, readResult } from '../../../cli/history.js';
import { recordedRun } from './fixtures.js';

describe('a run read into passes', () => {
  it('a rollout in progress: each step pass starts from the timer named after it and arms the next step', () => {
    const run = recordedRun('Service_default_nginx-rollout');
    expect(run.closed).toBeUndefined();
    const [first, ...rest] = run.passes;
    expect(first?.triggers).toEqual(['run started', 'Service/default/nginx added (generation 1)']);
    // The spec change that starts the rollout, then one pass per step, each after the timer of the step before.
    const update = run.passes.find((p) => p.triggers.includes('Service/default/nginx updated (generation 2)'));
    expect(update?.timers.map((t) => t.summary)).toEqual([expect.stringMatching(/^rollout of Route default\/nginx: nginx-00002 0% → 1% /)]);
    const last = rest.at(-1);
    expect(last?.triggers).toEqual([expect.stringMatching(/^timer: rollout of Route default\/nginx: nginx-00002 2% → 3% /)]);
    expect(last?.steps.map((s) => s.summary)).toContain(
      'update Configuration default/nginx status, program Route default/nginx, update Service default/nginx status',
    );
    expect(last?.steps.at(-1)?.outcome).toContain('rollout nginx-00002 3% → 4% (nginx-00001 96%, nginx-00002 4%)');
    expect(last?.steps.at(-1)?.ready).toEqual({ status: 'Unknown', reason: 'RolloutInProgress' });
    // What comes next: the 4% step, the resync; the loop's own step is no part of any pass.
    const pending = run.pendingTimers.map((t) => [t.kind, t.summary ?? '']);
    expect(pending).toContainEqual(['wake', expect.stringMatching(/nginx-00002 3% → 4% .*next step at 01:04:31\.481Z$/)]);
    expect(pending).toContainEqual(['resync', '']);
    expect(run.passes.flatMap((p) => p.steps).some((s) => s.type === 'readEntityOptions')).toBe(false);
  });

  it('a Revision whose image is missing: the failed step with its message, then the regular step Temporal retries', () => {
    const run = recordedRun('Revision_default_broken2-00001');
    expect(run.passes).toHaveLength(1);
    const [failed, retried] = run.passes[0]?.steps ?? [];
    expect(failed?.failure).toBe(
      'Unable to fetch image "127.0.0.1:5443/tidal/hello:v405": failed to resolve image to digest: manifest unknown: tag v405 not found in 127.0.0.1:5443/tidal/hello',
    );
    expect(retried).toMatchObject({ remote: true, outcome: '', type: 'resolveRevisionDigests' });
    expect(run.pendingSteps.map((s) => s.summary)).toEqual([
      'resolve image digests of Revision default/broken2-00001 (retried until the registry answers)',
    ]);
  });

  it('a Revision falling due for collection: the GC step names it and the pass arms a timer for it', () => {
    const run = recordedRun('Service_default_story-gc');
    const gc = run.passes
      .flatMap((p) => p.steps)
      .filter((s) => s.type === 'collectRevisions')
      .at(-1);
    expect(gc?.outcome).toMatch(/^nothing: nothing collectable; next: story-gc-00001 at \d\d:\d\d:\d\d\.\d{3}Z$/);
    const due = run.pendingTimers.find((t) => t.kind === 'wake');
    expect(due?.summary).toMatch(/^revision GC of Configuration default\/story-gc: story-gc-00001 collectable at /);
    // Named after its due time: the timer fires then.
    expect(new Date(due?.dueAtMs ?? 0).toISOString().slice(11, 19)).toBe(due?.summary?.match(/collectable at (\d\d:\d\d:\d\d)/)?.[1]);
  });

  it('a run that ended idle says so and leaves nothing pending', () => {
    const run = recordedRun('Service_default_broken-idle');
    expect(run.closed?.how).toMatch(/^completed: .*idle/);
    expect(run.pendingTimers).toEqual([]);
    // Its Service settled False: the unnamed timer its first pass armed is the idle end, not a retry.
    expect(
      run.passes
        .flatMap((p) => p.steps)
        .filter((s) => s.ready)
        .at(-1)?.ready,
    ).toEqual({ status: 'False', reason: 'RevisionMissing' });
    expect(run.passes.flatMap((p) => p.timers).filter((t) => t.kind === 'retry')).toEqual([]);
  });
});

describe('step results in a few words', () => {
  it('one outcome', () => {
    expect(describeOutcome({ outcome: 'written', ready: 'False', reason: 'RevisionMissing' })).toBe('written, Ready=False (RevisionMissing)');
    expect(describeOutcome({ outcome: 'applied', action: 'created' })).toBe('applied created');
    expect(describeOutcome({ outcome: 'deleted', deleted: ['a-00001', 'a-00002'], summary: 'beyond max' })).toBe(
      'deleted, deleted a-00001, a-00002: beyond max',
    );
  });

  it('a combined step: each part by name, those that changed nothing and report nothing left out', () => {
    const r = readResult({
      configuration: { outcome: 'unchanged', observed: {} },
      route: { outcome: 'written', ready: 'Unknown', reason: 'RolloutInProgress', rollout: { summary: 'a-00002 1% → 2%' } },
      service: { outcome: 'written', ready: 'Unknown', reason: 'RolloutInProgress' },
    });
    expect(r.outcome).toBe(
      'route written, Ready=Unknown (RolloutInProgress), rollout a-00002 1% → 2%; service written, Ready=Unknown (RolloutInProgress)',
    );
    expect(r.ready).toEqual({ status: 'Unknown', reason: 'RolloutInProgress' });
  });
});
