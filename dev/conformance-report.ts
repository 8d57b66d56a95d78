// The conformance run's results: `go test -json` events (test2json) folded into one outcome per test, and the
// Markdown table docs/conformance.md keeps, Tidal's column beside upstream's. Pure: the runner (dev/conformance.ts)
// does the I/O.

/** One line of `go tool test2json` output. */
export interface TestEvent {
  Action: 'start' | 'run' | 'pause' | 'cont' | 'pass' | 'fail' | 'skip' | 'output' | 'bench';
  Test?: string;
  Package?: string;
  Output?: string;
  Elapsed?: number;
}

export type Outcome = 'pass' | 'fail' | 'skip';

export interface TestResult {
  /** Top-level test name, e.g. `TestRevisionTimeout`. */
  test: string;
  outcome: Outcome;
  seconds: number;
  /** For a failure: the first error the test logged (`file.go:123: …`); for a skip: its reason. */
  detail?: string;
  /** Subtests that failed. */
  failedSubtests: string[];
}

export interface SuiteRun {
  suite: string;
  results: TestResult[];
  /** Set when the binary ended without a verdict for every test it started (a panic, a timeout). */
  aborted?: string;
  seconds: number;
}

/** `file_test.go:123: message` as `go test` prints a t.Log/t.Error/t.Fatal/t.Skip line (indented 4); continuation lines are indented 8. */
const LOGGED = /^ {4}(\S+\.go:\d+:)(?: (.*))?$/;
const CONTINUED = /^ {8}(.*\S.*)$/;
/** Words of a failure message, to pick it among a test's progress logs. */
const FAILURE_WORDS = /error|fail|expected|want|got|timed out|timeout|unexpected|mismatch|unable|cannot|not ready/i;

/** One logged message: `file.go:123: first line` (a message that starts on the next line takes that line). */
interface Logged {
  where: string;
  text: string;
}

function pickDetail(messages: Logged[] | undefined): string | undefined {
  if (!messages || messages.length === 0) return undefined;
  const m = [...messages].reverse().find((l) => FAILURE_WORDS.test(l.text)) ?? messages[messages.length - 1];
  return m ? `${m.where} ${m.text}`.trim() : undefined;
}

/** The test a result row stands for, given an event's test name; undefined: the event belongs to no row. */
export type UnitOf = (test: string) => string | undefined;

/** One row per top-level test (Serving's suites: one Go test per conformance test). */
export const topLevel: UnitOf = (test) => test.split('/')[0] ?? test;

/**
 * One row per subtest of `parent` (networking's suite runs every conformance test under one Go test). `names` are
 * the subtests' own names, which may hold '/' (t.Run("basics/http2")); a subtest not among them is its first element.
 */
export function subtestsOf(parent: string, names: string[]): UnitOf {
  const longestFirst = [...names].sort((a, b) => b.length - a.length);
  return (test) => {
    if (!test.startsWith(`${parent}/`)) return undefined;
    const rest = test.slice(parent.length + 1);
    const name = longestFirst.find((n) => rest === n || rest.startsWith(`${n}/`)) ?? rest.split('/')[0] ?? rest;
    return `${parent}/${name}`;
  };
}

/** test2json output lines (non-JSON lines are ignored) → one result per row (`unitOf`), in the order they started. */
export function foldEvents(lines: string[], unitOf: UnitOf = topLevel): { results: TestResult[]; unfinished: string[] } {
  const events: TestEvent[] = [];
  for (const line of lines) {
    if (!line.startsWith('{')) continue;
    try {
      events.push(JSON.parse(line) as TestEvent);
    } catch {
      // a line cut short by a killed process: nothing to fold
    }
  }
  const order: string[] = [];
  const verdict = new Map<string, { outcome: Outcome; seconds: number }>();
  const logged = new Map<string, Logged[]>();
  const failedSubtests = new Map<string, string[]>();
  for (const e of events) {
    if (!e.Test) continue;
    const top = unitOf(e.Test);
    if (top === undefined) continue;
    if (e.Action === 'run' && top === e.Test && !order.includes(top)) order.push(top);
    if (e.Action === 'output' && e.Output) {
      for (const raw of e.Output.split('\n')) {
        const msgs = logged.get(e.Test) ?? [];
        const m = LOGGED.exec(raw);
        if (m?.[1]) {
          msgs.push({ where: m[1], text: (m[2] ?? '').trim() });
          logged.set(e.Test, msgs);
          continue;
        }
        const c = CONTINUED.exec(raw);
        const last = msgs[msgs.length - 1];
        if (c?.[1] && last && last.text === '') last.text = c[1].trim();
      }
    }
    if (e.Action === 'pass' || e.Action === 'fail' || e.Action === 'skip') {
      if (e.Test === top) verdict.set(top, { outcome: e.Action, seconds: e.Elapsed ?? 0 });
      else if (e.Action === 'fail') failedSubtests.set(top, [...(failedSubtests.get(top) ?? []), e.Test.slice(top.length + 1)]);
    }
  }
  const results: TestResult[] = [];
  const unfinished: string[] = [];
  for (const test of order) {
    const v = verdict.get(test);
    if (!v) {
      unfinished.push(test);
      continue;
    }
    const subs = failedSubtests.get(test) ?? [];
    // A failed subtest's message is the failure's; else the test's own.
    const detail =
      (subs[0] !== undefined ? pickDetail(logged.get(`${test}/${subs[subs.length - 1] ?? ''}`)) : undefined) ?? pickDetail(logged.get(test));
    results.push({ test, outcome: v.outcome, seconds: v.seconds, failedSubtests: subs, ...(v.outcome !== 'pass' && detail ? { detail } : {}) });
  }
  return { results, unfinished };
}

export interface TargetRun {
  /** `Tidal <version>` or `Knative Serving v0.51.0`. */
  label: string;
  suites: SuiteRun[];
}

export interface ConformanceDoc {
  date: string;
  commit: string;
  versions: string[];
  flags: string;
  tidal?: TargetRun;
  upstream?: TargetRun;
  ingress?: TargetRun;
  /** Tests Tidal may fail where upstream passes, because they exercise what Tidal leaves out by design. */
  byDesign: Record<string, string>;
  /** What was seen of particular results (a failure's cause), one paragraph each. */
  notes?: string[];
  /** Config map keys a target runs with that differ from what it ships, each with the reason. */
  settings?: { target: string; configMap: string; key: string; value: string; why: string }[];
}

/**
 * What Tidal leaves out by design, and the conformance tests that exercise it: hakn keeps every Revision at its
 * minimum scale (no scale to zero), so no test that needs a Revision to reach zero pods can pass.
 */
export const BY_DESIGN: Record<string, string> = {};

const escapeCell = (s: string) => s.replace(/\|/g, '\\|').replace(/\n/g, ' ');
const cut = (s: string, n = 160) => (s.length > n ? `${s.slice(0, n - 1)}…` : s);

function cell(r: TestResult | undefined): string {
  if (!r) return '—';
  const mark = r.outcome === 'pass' ? 'pass' : r.outcome === 'skip' ? 'skipped' : '**fail**';
  const time = r.outcome === 'skip' ? '' : ` (${r.seconds.toFixed(1)} s)`;
  const subs = r.outcome === 'fail' && r.failedSubtests.length > 0 ? `; subtests: ${r.failedSubtests.slice(0, 4).join(', ')}` : '';
  return `${mark}${time}${r.detail ? `: ${escapeCell(cut(r.detail))}` : ''}${escapeCell(subs)}`;
}

/** Counts of one target's results. */
export function tally(run: TargetRun | undefined): { pass: number; fail: number; skip: number; seconds: number } {
  const all = run?.suites.flatMap((s) => s.results) ?? [];
  return {
    pass: all.filter((r) => r.outcome === 'pass').length,
    fail: all.filter((r) => r.outcome === 'fail').length,
    skip: all.filter((r) => r.outcome === 'skip').length,
    seconds: run?.suites.reduce((n, s) => n + s.seconds, 0) ?? 0,
  };
}

/** A run's gate: the tests that failed (by design excepted) and suites that did not finish; empty when it passes. */
export function failures(run: TargetRun, byDesign: Record<string, string>): string[] {
  return run.suites.flatMap((s) => [
    ...s.results.filter((r) => r.outcome === 'fail' && !byDesign[r.test]).map((r) => `${s.suite} ${r.test}${r.detail ? `: ${r.detail}` : ''}`),
    ...(s.aborted ? [`${s.suite} did not finish: ${s.aborted}`] : []),
  ]);
}

/** Of the tests upstream passes, those Tidal passes too, and those it does not (by design or not). */
export function compare(doc: Pick<ConformanceDoc, 'tidal' | 'upstream' | 'byDesign'>): {
  upstreamPasses: number;
  tidalPassesOfThose: number;
  missing: string[];
  excused: string[];
} {
  const key = (suite: string, test: string) => `${suite} ${test}`;
  const tidal = new Map((doc.tidal?.suites ?? []).flatMap((s) => s.results.map((r) => [key(s.suite, r.test), r] as const)));
  const passed = (doc.upstream?.suites ?? []).flatMap((s) =>
    s.results.filter((r) => r.outcome === 'pass').map((r) => ({ suite: s.suite, test: r.test })),
  );
  const missing: string[] = [];
  const excused: string[] = [];
  let ok = 0;
  for (const { suite, test } of passed) {
    if (tidal.get(key(suite, test))?.outcome === 'pass') ok++;
    else if (doc.byDesign[test]) excused.push(test);
    else missing.push(test);
  }
  return { upstreamPasses: passed.length, tidalPassesOfThose: ok, missing, excused };
}

function suiteTable(suite: string, runs: { label: string; suite?: SuiteRun }[], byDesign: Record<string, string>): string[] {
  const names: string[] = [];
  for (const r of runs) for (const t of r.suite?.results ?? []) if (!names.includes(t.test)) names.push(t.test);
  const lines = [`### ${suite}`, '', `| test | ${runs.map((r) => r.label).join(' | ')} |`, `|---|${runs.map(() => '---|').join('')}`];
  for (const name of names) {
    const note = byDesign[name] ? ` (by design: ${byDesign[name]})` : '';
    lines.push(`| ${name}${escapeCell(note)} | ${runs.map((r) => cell(r.suite?.results.find((t) => t.test === name))).join(' | ')} |`);
  }
  const aborted = runs.filter((r) => r.suite?.aborted);
  for (const r of aborted) lines.push('', `${r.label}: the suite did not finish: ${escapeCell(r.suite?.aborted ?? '')}`);
  return [...lines, ''];
}

const summary = (label: string, run: TargetRun | undefined) => {
  const t = tally(run);
  return `- ${label}: ${t.pass} passed, ${t.fail} failed, ${t.skip} skipped in ${Math.round(t.seconds)} s`;
};

/** docs/conformance.md. */
export function renderConformance(doc: ConformanceDoc): string {
  const cmp = compare(doc);
  const targets = [
    { label: doc.tidal?.label ?? 'Tidal', run: doc.tidal },
    { label: doc.upstream?.label ?? 'upstream', run: doc.upstream },
  ].filter((t) => t.run);
  const suites: string[] = [];
  for (const t of targets) for (const s of t.run?.suites ?? []) if (!suites.includes(s.suite)) suites.push(s.suite);
  const out = [
    '# Conformance',
    '',
    "Knative Serving's own conformance suite (`knative.dev/serving/test/conformance`: `api/v1` and `runtime`), compiled from",
    'the module source and run by `npm run conformance` against a real-node stack (dev/conformance.ts): once with Tidal as',
    "the control plane, once with upstream Knative Serving's controller, webhook, activator and autoscaler built from the",
    'same module, on the same node, registry and ingress (Traefik). The file is written by the run; the tables are its output.',
    '',
    `Run ${doc.date} on commit ${doc.commit}. ${doc.versions.join('; ')}.`,
    '',
    `Flags: \`${doc.flags}\``,
    '',
    '## Summary',
    '',
    ...targets.map((t) => summary(t.label, t.run)),
    ...(doc.tidal && doc.upstream
      ? [
          `- Of the ${cmp.upstreamPasses} tests upstream passes, Tidal passes ${cmp.tidalPassesOfThose}` +
            (cmp.excused.length ? `; by design it does not pass ${cmp.excused.join(', ')}` : '') +
            (cmp.missing.length ? `; it fails ${cmp.missing.join(', ')}` : '') +
            '.',
        ]
      : []),
    '',
  ];
  if (doc.settings && doc.settings.length > 0) {
    out.push('## Settings that differ from what ships', '');
    for (const c of doc.settings) out.push(`- ${c.target}: \`${c.configMap}\` \`${c.key}: "${c.value}"\` — ${c.why}`);
    out.push('');
  }
  if (Object.keys(doc.byDesign).length > 0) {
    out.push('## What Tidal leaves out by design', '');
    for (const [test, why] of Object.entries(doc.byDesign)) out.push(`- \`${test}\`: ${why}`);
    out.push('');
  }
  if (doc.notes && doc.notes.length > 0) {
    out.push('## Notes', '');
    for (const n of doc.notes) out.push(`- ${n}`);
    out.push('');
  }
  out.push('## Per test', '');
  for (const suite of suites) {
    out.push(
      ...suiteTable(
        suite,
        targets.map((t) => ({ label: t.label, suite: t.run?.suites.find((s) => s.suite === suite) })),
        doc.byDesign,
      ),
    );
  }
  if (doc.ingress) {
    out.push(
      '## KIngress conformance against Traefik',
      '',
      "knative.dev/networking's own suite against the same ingress, without a Knative control plane (`npm run conformance -- --ingress`): what fails here fails for the ingress or the stack, not the control plane. The cause of each failure: [ingress-conformance.md](ingress-conformance.md).",
      '',
      summary(doc.ingress.label, doc.ingress),
      '',
    );
    for (const s of doc.ingress.suites) out.push(...suiteTable(s.suite, [{ label: doc.ingress.label, suite: s }], {}));
  }
  return `${out
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trimEnd()}\n`;
}
