// The KIngress conformance run's pure parts (dev/conformance-ingress.ts, dev/conformance-report.ts): the test names read
// from the suite's run.go, one result row per conformance test although the suite runs them all as subtests of one Go
// test, the flags, and the patch that lets the suite dial Traefik's public Service on the stack's ingress port.
import { describe, expect, it } from 'vitest';
import { foldEvents, subtestsOf, topLevel } from '../../dev/conformance-report.js';
import { ingressSuiteFlags, publicServiceNodePort, suiteTestNames, withoutParent } from '../../dev/conformance-ingress.js';

const RUN_GO = `
var stableTests = map[string]func(t *testing.T){
	"basics":                       TestBasics,
	"basics/http2":                 TestBasicsHTTP2,
	"dispatch/path_and_percentage": TestPathAndPercentageSplit,
}

var betaTests = map[string]func(t *testing.T){
	// Add your conformance test for beta features
	"host-rewrite": TestRewriteHost,
}
`;

const ev = (Action: string, Test: string, extra: Record<string, unknown> = {}) => JSON.stringify({ Action, Test, ...extra });

describe('suiteTestNames', () => {
  it('reads the names of every map of run.go, slashes included', () => {
    expect(suiteTestNames(RUN_GO)).toEqual(['basics', 'basics/http2', 'dispatch/path_and_percentage', 'host-rewrite']);
  });
});

describe('subtestsOf', () => {
  const unit = subtestsOf('TestIngressConformance', suiteTestNames(RUN_GO));

  it('maps a test named with a slash to itself, not to the test its first element names', () => {
    expect(unit('TestIngressConformance/basics/http2')).toBe('TestIngressConformance/basics/http2');
    expect(unit('TestIngressConformance/basics')).toBe('TestIngressConformance/basics');
  });

  it("folds a conformance test's own subtests into it, and an unknown one into its first element", () => {
    expect(unit('TestIngressConformance/dispatch/path_and_percentage/split-1')).toBe('TestIngressConformance/dispatch/path_and_percentage');
    expect(unit('TestIngressConformance/basics/other')).toBe('TestIngressConformance/basics');
    expect(unit('TestIngressConformance/new/thing')).toBe('TestIngressConformance/new');
  });

  it('gives the parent itself and other tests no row', () => {
    expect(unit('TestIngressConformance')).toBeUndefined();
    expect(unit('TestOther/basics')).toBeUndefined();
  });
});

describe('foldEvents with subtestsOf', () => {
  it('makes one row per conformance test, with the failed subtests and first logged line of each', () => {
    const p = 'TestIngressConformance';
    const lines = [
      ev('run', p),
      ev('run', `${p}/basics`),
      ev('run', `${p}/basics/http2`),
      ev('run', `${p}/dispatch/path_and_percentage`),
      ev('run', `${p}/dispatch/path_and_percentage/split-1`),
      ev('output', `${p}/dispatch/path_and_percentage/split-1`, { Output: '    util.go:12: got 503\n' }),
      ev('fail', `${p}/dispatch/path_and_percentage/split-1`, { Elapsed: 1 }),
      ev('fail', `${p}/dispatch/path_and_percentage`, { Elapsed: 2 }),
      ev('pass', `${p}/basics/http2`, { Elapsed: 3 }),
      ev('pass', `${p}/basics`, { Elapsed: 4 }),
      ev('fail', p, { Elapsed: 9 }),
    ];
    const { results, unfinished } = foldEvents(lines, subtestsOf(p, suiteTestNames(RUN_GO)));
    expect(unfinished).toEqual([]);
    expect(results).toEqual([
      { test: `${p}/basics`, outcome: 'pass', seconds: 4, failedSubtests: [] },
      { test: `${p}/basics/http2`, outcome: 'pass', seconds: 3, failedSubtests: [] },
      { test: `${p}/dispatch/path_and_percentage`, outcome: 'fail', seconds: 2, failedSubtests: ['split-1'], detail: 'util.go:12: got 503' },
    ]);
    const run = withoutParent({ suite: 'ingress', results, seconds: 9 }, p);
    expect(run.results.map((r) => r.test)).toEqual(['basics', 'basics/http2', 'dispatch/path_and_percentage']);
  });

  it('still makes one row per top-level test by default', () => {
    expect(topLevel('TestA/sub')).toBe('TestA');
    const { results } = foldEvents([ev('run', 'TestA'), ev('run', 'TestA/sub'), ev('pass', 'TestA/sub'), ev('pass', 'TestA', { Elapsed: 1 })]);
    expect(results.map((r) => r.test)).toEqual(['TestA']);
  });
});

describe('ingressSuiteFlags', () => {
  it("names Traefik's class, the loopback endpoint, networking's image prefix, and beta and alpha tests", () => {
    expect(ingressSuiteFlags({ kubeconfig: '/k', registryHost: '127.0.0.1:1' })).toEqual([
      '--kubeconfig=/k',
      '--ingressClass=traefik.ingress.networking.knative.dev',
      '--ingressendpoint=127.0.0.1',
      '--dockerrepo=127.0.0.1:1/knative-networking',
      '--enable-beta',
      '--enable-alpha',
    ]);
  });
});

describe('publicServiceNodePort', () => {
  it("maps port 80 to the ingress port as nodePort, and to Traefik's public entry point", () => {
    expect(publicServiceNodePort(31280)).toEqual({
      spec: { type: 'NodePort', ports: [{ name: 'http', port: 80, targetPort: 8180, nodePort: 31280 }] },
    });
  });
});

describe('foldEvents details', () => {
  it("prefers a failure's own failure-like line, then its failed subtest's, to progress lines", () => {
    const out = (Test: string, line: string) => ev('output', Test, { Output: `    ${line}\n` });
    const lines = [
      ev('run', 'TestA'),
      out('TestA', 'a.go:1: Using port 85'),
      out('TestA', 'a.go:2: Error meeting response expectations: got 502'),
      ev('fail', 'TestA', { Elapsed: 1 }),
      ev('run', 'TestB'),
      out('TestB', 'b.go:1: Using port 64'),
      ev('run', 'TestB/sub'),
      out('TestB/sub', 'b.go:9: Header["K-Network-Hash"] = "override", wanted "e2ca"'),
      ev('fail', 'TestB/sub'),
      ev('fail', 'TestB', { Elapsed: 1 }),
    ];
    expect(foldEvents(lines).results.map((r) => r.detail)).toEqual([
      'a.go:2: Error meeting response expectations: got 502',
      'b.go:9: Header["K-Network-Hash"] = "override", wanted "e2ca"',
    ]);
  });
});
