import { describe, expect, it } from 'vitest';
import { renderStory, renderWhy } from '../../../cli/render.js';
import type { ObjectStory, StoryObject, WorkflowStory } from '../../../cli/story.js';
import { dependenciesOf, passThatSet } from '../../../cli/why.js';
import { recordedRun } from './fixtures.js';

const NOW = Date.parse('2026-12-07T01:10:30Z');

const workflow = (file: string, id: string, extra: Partial<WorkflowStory> = {}): WorkflowStory => ({
  workflowId: id,
  runs: [recordedRun(file)],
  retrying: [],
  ...extra,
});

const obj = (kind: string, name: string, status: Record<string, unknown>): StoryObject => ({
  apiVersion: 'serving.knative.dev/v1',
  kind,
  metadata: { name, namespace: 'default' },
  status,
});

const missing = 'Unable to fetch image "127.0.0.1:5443/tidal/hello:v405": failed to resolve image to digest: manifest unknown';

describe('why is it not Ready', () => {
  const revision: ObjectStory = {
    kind: 'Revision',
    obj: obj('Revision', 'broken2-00001', {
      conditions: [
        { type: 'Ready', status: 'False', reason: 'ContainerMissing', message: missing },
        { type: 'ContainerHealthy', status: 'False', reason: 'ContainerMissing', message: missing },
        { type: 'ResourcesAvailable', status: 'Unknown', reason: 'ResolvingDigests' },
      ],
    }),
    workflow: workflow('Revision_default_broken2-00001', 'Revision/default/broken2-00001', {
      retrying: [
        {
          summary: 'resolve image digests of Revision default/broken2-00001',
          type: 'resolveRevisionDigests',
          attempt: 5,
          nextAttemptAtMs: NOW + 6000,
          lastFailure: missing,
        },
      ],
    }),
  };

  it('a Service waiting on its failing Revision: the condition, the pass that set it, the Revision and its next retry', () => {
    const service: ObjectStory = {
      kind: 'Service',
      obj: obj('Service', 'broken', {
        latestCreatedRevisionName: 'broken2-00001',
        conditions: [
          { type: 'Ready', status: 'False', reason: 'RevisionMissing', message: 'Configuration "broken" does not have any ready Revision.' },
        ],
      }),
      workflow: workflow('Service_default_broken-idle', 'Service/default/broken'),
    };
    expect(dependenciesOf('Service', service.obj)).toEqual([{ kind: 'Revision', name: 'broken2-00001' }]);
    const text = renderWhy(service, [{ ...revision, dependency: { kind: 'Revision', name: 'broken2-00001' } }], { nowMs: NOW }).join('\n');
    expect(text).toContain('Ready=False RevisionMissing: Configuration "broken" does not have any ready Revision.');
    expect(text).toMatch(
      /Set by the pass of:\n {2}2026-12-07 01:04:04\.\d{3}Z {2}after run started, Service\/default\/broken added \(generation 1\)/,
    );
    expect(text).toContain(`Waiting on:\n  Revision default/broken2-00001: Ready=False ContainerMissing: ${missing}`);
    expect(text).toContain('~ resolve image digests of Revision default/broken2-00001: attempt 5, next attempt 2026-12-07 01:10:36.000Z (in 6s)');
    expect(text).toContain('the run ended (completed: Service default/broken: idle for 60 s');
  });

  it('a Revision: the failed step is the pass that set Ready, and the step the server retries comes next', () => {
    expect(passThatSet(revision)?.steps[0]?.failure).toContain('tag v405 not found');
    const text = renderWhy(revision, [], { nowMs: NOW }).join('\n');
    expect(text).toContain('ContainerHealthy=False ContainerMissing');
    expect(text).toContain('— failed: Unable to fetch image "127.0.0.1:5443/tidal/hello:v405"');
    expect(text).toMatch(/Next:\n {2}~ resolve image digests of Revision default\/broken2-00001: attempt 5/);
  });

  it('a rollout in progress: its next step is what comes next', () => {
    const s: ObjectStory = {
      kind: 'Service',
      obj: obj('Service', 'nginx', {
        latestCreatedRevisionName: 'nginx-00002',
        conditions: [{ type: 'Ready', status: 'Unknown', reason: 'RolloutInProgress' }],
      }),
      workflow: workflow('Service_default_nginx-rollout', 'Service/default/nginx'),
    };
    const text = renderWhy(s, [], { nowMs: Date.parse('2026-12-07T01:04:26Z') }).join('\n');
    expect(text).toMatch(/Next:\n {2}@ 2026-12-07 01:04:31\.\d{3}Z \(in 5s\) {2}rollout of Route default\/nginx: nginx-00002 3% → 4% /);
  });
});

describe('the story', () => {
  it('passes newest last, each with its trigger and steps, the Revision due for collection next', () => {
    const s: ObjectStory = {
      kind: 'Service',
      obj: obj('Service', 'story-gc', { conditions: [{ type: 'Ready', status: 'True' }] }),
      workflow: workflow('Service_default_story-gc', 'Service/default/story-gc', {
        url: 'http://ui/namespaces/default/workflows/Service%2Fdefault%2Fstory-gc',
      }),
    };
    const lines = renderStory(s, { passes: 2, nowMs: NOW });
    expect(lines[1]).toBe('  workflow Service/default/story-gc   http://ui/namespaces/default/workflows/Service%2Fdefault%2Fstory-gc');
    expect(lines.filter((l) => /^ {2}\d{4}-/.test(l))).toHaveLength(2);
    const next = lines.slice(lines.indexOf('Next:'));
    expect(next.join('\n')).toMatch(
      /@ 2026-12-07 02:10:33\.\d{3}Z \(in 60m\) {2}revision GC of Configuration default\/story-gc: story-gc-00001 collectable at 02:10:33\.000Z/,
    );
  });
});
