// The conformance run's report (dev/conformance-report.ts): test2json events folded into one verdict per test with the
// failure's message, the comparison of Tidal with upstream, and the Markdown table.
import { describe, expect, it } from 'vitest';
import { compare, failures, foldEvents, renderConformance, tally, type TargetRun } from '../../dev/conformance-report.js';

const pkg = 'knative.dev/serving/test/conformance/api/v1';
const ev = (Action: string, Test?: string, extra: Record<string, unknown> = {}) =>
  JSON.stringify({ Action, Package: pkg, ...(Test ? { Test } : {}), ...extra });
const out = (Test: string, Output: string) => ev('output', Test, { Output });

/** A run as test2json prints it: a pass, a failure in a subtest after progress logs, a skip whose reason is on the next line, one cut short. */
const lines = [
  ev('start'),
  ev('run', 'TestBlueGreenRoute'),
  out('TestBlueGreenRoute', '=== RUN   TestBlueGreenRoute\n'),
  out('TestBlueGreenRoute', '    service.go:148: Waiting for Service to transition to Ready.\n'),
  ev('pass', 'TestBlueGreenRoute', { Elapsed: 31.5 }),
  ev('run', 'TestRevisionTimeout'),
  ev('run', 'TestRevisionTimeout/timeout_of_10'),
  out('TestRevisionTimeout/timeout_of_10', '    revision_timeout_test.go:120: Creating a new Service\n'),
  out('TestRevisionTimeout/timeout_of_10', '    revision_timeout_test.go:160: Expected status code 504, got 200\n'),
  out('TestRevisionTimeout/timeout_of_10', '    revision_timeout_test.go:170: Cleaning up\n'),
  ev('fail', 'TestRevisionTimeout/timeout_of_10', { Elapsed: 12 }),
  ev('run', 'TestRevisionTimeout/timeout_of_20'),
  ev('pass', 'TestRevisionTimeout/timeout_of_20', { Elapsed: 14 }),
  ev('fail', 'TestRevisionTimeout', { Elapsed: 26.25 }),
  ev('run', 'TestServiceCreateWithEmptyDir'),
  out('TestServiceCreateWithEmptyDir', '    service_test.go:895:\n'),
  out('TestServiceCreateWithEmptyDir', '        Skipping: emptyDir volumes need the kubernetes.podspec-emptydir flag\n'),
  ev('skip', 'TestServiceCreateWithEmptyDir', { Elapsed: 0 }),
  ev('run', 'TestSingleConcurrency'),
  out('TestSingleConcurrency', '    single_threaded_test.go:50: Creating a new Service\n'),
  '{"Action":"output","Test":"TestSingleCon', // cut short by a killed process
  'not json at all',
];

describe('foldEvents', () => {
  const { results, unfinished } = foldEvents(lines);

  it('gives one verdict per top-level test, in the order they started, with its time', () => {
    expect(results.map((r) => [r.test, r.outcome, r.seconds])).toEqual([
      ['TestBlueGreenRoute', 'pass', 31.5],
      ['TestRevisionTimeout', 'fail', 26.25],
      ['TestServiceCreateWithEmptyDir', 'skip', 0],
    ]);
    expect(results[0]?.detail).toBeUndefined();
  });

  it("takes a failure's message from its failed subtest, the error among the progress logs", () => {
    expect(results[1]?.failedSubtests).toEqual(['timeout_of_10']);
    expect(results[1]?.detail).toBe('revision_timeout_test.go:160: Expected status code 504, got 200');
  });

  it("takes a skip's reason from the line after its location when the message starts there", () => {
    expect(results[2]?.detail).toBe('service_test.go:895: Skipping: emptyDir volumes need the kubernetes.podspec-emptydir flag');
  });

  it('names the tests that started without a verdict', () => {
    expect(unfinished).toEqual(['TestSingleConcurrency']);
  });
});

const run = (label: string, outcomes: Record<string, 'pass' | 'fail' | 'skip'>): TargetRun => ({
  label,
  suites: [
    {
      suite: 'api/v1',
      seconds: 100,
      results: Object.entries(outcomes).map(([test, outcome]) => ({ test, outcome, seconds: 1, failedSubtests: [] })),
    },
  ],
});

describe('compare and renderConformance', () => {
  const upstream = run('Knative Serving v0.51.0', { TestA: 'pass', TestB: 'pass', TestC: 'pass', TestD: 'fail' });
  const tidal = run('Tidal abc1234', { TestA: 'pass', TestB: 'fail', TestC: 'fail', TestD: 'pass' });

  it('counts, of the tests upstream passes, those Tidal passes, excuses only those named by design', () => {
    expect(compare({ tidal, upstream, byDesign: { TestC: 'needs scale to zero' } })).toEqual({
      upstreamPasses: 3,
      tidalPassesOfThose: 1,
      missing: ['TestB'],
      excused: ['TestC'],
    });
    expect(tally(tidal)).toEqual({ pass: 2, fail: 2, skip: 0, seconds: 100 });
  });

  it('renders one row per test with both columns, the summary and the by-design list', () => {
    const md = renderConformance({
      date: '2026-12-06',
      commit: 'abc1234',
      versions: ['knative.dev/serving v0.51.0'],
      flags: '--resolvabledomain=false',
      tidal,
      upstream,
      byDesign: { TestC: 'needs scale to zero' },
    });
    expect(md).toContain('Run 2026-12-06 on commit abc1234. knative.dev/serving v0.51.0.');
    expect(md).toContain('| test | Tidal abc1234 | Knative Serving v0.51.0 |');
    expect(md).toContain('| TestB | **fail** (1.0 s) | pass (1.0 s) |');
    expect(md).toContain('| TestC (by design: needs scale to zero) | **fail** (1.0 s) | pass (1.0 s) |');
    expect(md).toContain('- Of the 3 tests upstream passes, Tidal passes 1; by design it does not pass TestC; it fails TestB.');
    expect(md).toContain('- `TestC`: needs scale to zero');
  });
});

describe('failures (the CI gate)', () => {
  it('names failed tests and unfinished suites, excusing only what is named by design', () => {
    const r = run('Tidal', { TestA: 'pass', TestB: 'fail', TestC: 'fail', TestD: 'skip' });
    r.suites[0]!.results[1]!.detail = 'x_test.go:1: got 200, want 503';
    expect(failures(r, { TestC: 'needs scale to zero' })).toEqual(['api/v1 TestB: x_test.go:1: got 200, want 503']);
    r.suites.push({ suite: 'runtime', seconds: 1, results: [], aborted: 'exit code 2, no test ran' });
    expect(failures(r, { TestC: 'x' })).toContain('runtime did not finish: exit code 2, no test ran');
    expect(failures(run('Tidal', { TestA: 'pass', TestD: 'skip' }), {})).toEqual([]);
  });
});
