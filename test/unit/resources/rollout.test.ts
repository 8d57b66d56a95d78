import { describe, expect, it } from 'vitest';
import type { Configuration, Revision, Route, TrafficTarget } from '../../../api/serving.js';
import {
  abortRollout,
  adjustPercentage,
  applyRolloutToTraffic,
  buildRollout,
  computeProperties,
  firstStepBoundSeconds,
  isConfigurationRolloutDone,
  isRolloutDone,
  nextStepAt,
  observeReady,
  observeReadyNs,
  parseRolloutAnnotation,
  parseRolloutControl,
  pauseRollout,
  planRollout,
  promoteRollout,
  rollbackRollout,
  rolloutAnnotation,
  rolloutDurationSeconds,
  rolloutsByTag,
  RolloutWakeLeadMs,
  stepWaitMs,
  stepRevisions,
  stepRollout,
  stepRolloutNs,
  validateRollout,
  type ConfigurationRollout,
  type RevisionLike,
  type Rollout,
  type RolloutControl,
  type RolloutPlan,
} from '../../../resources/rollout.js';
import { buildTrafficConfiguration } from '../../../resources/traffic.js';
import { makeIngressSpec } from '../../../resources/ingress.js';

// ---------------------------------------------------------------------------------------------------------------
// Builders

type Params = { start?: number | bigint; next?: number | bigint; dur?: number | bigint; size?: number };

/** A configuration rollout: `c('mick', 100, [['a', 95], ['b', 5]], { start: 2004 })`. */
function c(name: string, percent: number, revs: [string, number][] = [], p: Params = {}, tag?: string): ConfigurationRollout {
  const out: ConfigurationRollout = {
    configurationName: name,
    percent,
    revisions: revs.map(([revisionName, pct]) => ({ revisionName, percent: pct })),
    stepParams: {},
  };
  if (tag) out.tag = tag;
  if (p.start) out.stepParams.startTimeNs = BigInt(p.start).toString();
  if (p.next) out.stepParams.nextStepTimeNs = BigInt(p.next).toString();
  if (p.dur) out.stepParams.stepDurationNs = BigInt(p.dur).toString();
  if (p.size) out.stepParams.stepSize = p.size;
  return out;
}

const ro = (...configurations: ConfigurationRollout[]): Rollout => ({ configurations });
const percents = (r: Rollout, i = 0): number[] => r.configurations[i]!.revisions.map((x) => x.percent);

const S = 1_000_000_000n; // ns per second
const T0 = Date.UTC(2026, 10, 24, 10, 0, 0); // workflow time, ms

// ---------------------------------------------------------------------------------------------------------------
// Upstream rollout_test.go, TestStep (now = 2020 ns)

describe('stepRolloutNs (upstream TestStep, now = 2020)', () => {
  const now = 2020n;
  const cases: { name: string; cur: Rollout; prev: Rollout | undefined; want: Rollout; wantNext?: bigint }[] = [
    { name: 'no prev', cur: ro(), prev: undefined, want: ro() },
    {
      name: 'prev is empty',
      cur: ro(c('mick', 100, [['let-it-bleed', 100]])),
      prev: ro(c('mick', 100)),
      want: ro(c('mick', 100, [['let-it-bleed', 100]])),
    },
    {
      name: 'simplest, same (the desired step params are dropped)',
      cur: ro(c('mick', 100, [['let-it-bleed', 100]], { next: 2009, dur: 2020, start: 2004, size: 14 })),
      prev: ro(c('mick', 100, [['let-it-bleed', 100]])),
      want: ro(c('mick', 100, [['let-it-bleed', 100]])),
    },
    {
      name: 'simplest, step',
      cur: ro(c('mick', 100, [['let-it-bleed', 100]])),
      prev: ro(
        c(
          'mick',
          100,
          [
            ['their-satanic-majesties-request', 95],
            ['let-it-bleed', 5],
          ],
          { next: 2019, dur: 5, start: 2004, size: 3 },
        ),
      ),
      want: ro(
        c(
          'mick',
          100,
          [
            ['their-satanic-majesties-request', 92],
            ['let-it-bleed', 8],
          ],
          { next: 2025, dur: 5, start: 2004, size: 3 },
        ),
      ),
      wantNext: 2025n,
    },
    {
      name: 'multiple configs step (sorted; the earliest next step)',
      cur: ro(c('mick', 42, [['let-it-bleed', 42]]), c('keith', 52, [['beggars-banquet', 52]])),
      prev: ro(
        c(
          'mick',
          42,
          [
            ['their-satanic-majesties-request', 37],
            ['let-it-bleed', 5],
          ],
          { next: 2019, dur: 43, start: 1961, size: 3 },
        ),
        c(
          'keith',
          52,
          [
            ['sticky-fingers', 36],
            ['beggars-banquet', 16],
          ],
          { next: 2018, dur: 55, start: 1971, size: 4 },
        ),
      ),
      want: ro(
        c(
          'keith',
          52,
          [
            ['sticky-fingers', 32],
            ['beggars-banquet', 20],
          ],
          { next: 2075, dur: 55, start: 1971, size: 4 },
        ),
        c(
          'mick',
          42,
          [
            ['their-satanic-majesties-request', 34],
            ['let-it-bleed', 8],
          ],
          { next: 2063, dur: 43, start: 1961, size: 3 },
        ),
      ),
      wantNext: 2063n,
    },
    {
      name: 'multiple configs step and roll',
      cur: ro(c('mick', 42, [['let-it-bleed', 42]]), c('keith', 52, [['tattoo-you', 52]])),
      prev: ro(
        c(
          'mick',
          42,
          [
            ['their-satanic-majesties-request', 37],
            ['let-it-bleed', 5],
          ],
          { next: 2019, dur: 43, start: 1961, size: 3 },
        ),
        c(
          'keith',
          52,
          [
            ['sticky-fingers', 36],
            ['beggars-banquet', 16],
          ],
          { next: 2018, dur: 55, start: 1971, size: 4 },
        ),
      ),
      want: ro(
        c(
          'keith',
          52,
          [
            ['sticky-fingers', 36],
            ['beggars-banquet', 15],
            ['tattoo-you', 1],
          ],
          { start: 2020 },
        ),
        c(
          'mick',
          42,
          [
            ['their-satanic-majesties-request', 34],
            ['let-it-bleed', 8],
          ],
          { next: 2063, dur: 43, start: 1961, size: 3 },
        ),
      ),
      wantNext: 2063n,
    },
    {
      name: 'simplest, step, when stepsize=0 (not observed ready yet)',
      cur: ro(c('mick', 100, [['let-it-bleed', 100]], { next: 2009, dur: 2020, start: 2004, size: 14 })),
      prev: ro(
        c(
          'mick',
          100,
          [
            ['their-satanic-majesties-request', 95],
            ['let-it-bleed', 5],
          ],
          { start: 2004 },
        ),
      ),
      want: ro(
        c(
          'mick',
          100,
          [
            ['their-satanic-majesties-request', 95],
            ['let-it-bleed', 5],
          ],
          { start: 2004 },
        ),
      ),
    },
    {
      name: 'when new revision becomes 0%',
      cur: ro(c('charlie', 0, [['aftermath', 0]])),
      prev: ro(c('charlie', 100, [['your-satanic-majesties-request', 100]])),
      want: ro(),
    },
    {
      name: "when new config is added but it's 0%",
      cur: ro(c('charlie', 0, [['aftermath', 0]]), c('mick', 100, [['between-the-buttons', 100]])),
      prev: ro(c('mick', 100, [['between-the-buttons', 100]])),
      want: ro(c('mick', 100, [['between-the-buttons', 100]])),
    },
    {
      name: 'simplest, roll (old step params thrown out)',
      cur: ro(c('mick', 100, [['let-it-bleed', 100]])),
      prev: ro(c('mick', 100, [['goat-head-soup', 100]], { next: 1984, start: 1981, dur: 1988, size: 11 })),
      want: ro(
        c(
          'mick',
          100,
          [
            ['goat-head-soup', 99],
            ['let-it-bleed', 1],
          ],
          { start: 2020 },
        ),
      ),
    },
    {
      name: 'roll with percentage change down',
      cur: ro(c('mick', 33, [['let-it-bleed', 33]])),
      prev: ro(
        c('mick', 42, [
          ['goat-head-soup', 11],
          ['aftermath', 31],
        ]),
      ),
      want: ro(
        c(
          'mick',
          33,
          [
            ['goat-head-soup', 2],
            ['aftermath', 30],
            ['let-it-bleed', 1],
          ],
          { start: 2020 },
        ),
      ),
    },
    {
      name: 'roll with percentage change up',
      cur: ro(c('mick', 75, [['let-it-bleed', 75]])),
      prev: ro(
        c('mick', 25, [
          ['goat-head-soup', 11],
          ['aftermath', 14],
        ]),
      ),
      want: ro(
        c(
          'mick',
          75,
          [
            ['goat-head-soup', 11],
            ['aftermath', 63],
            ['let-it-bleed', 1],
          ],
          { start: 2020 },
        ),
      ),
    },
    {
      name: 'roll, where sum < 100% (one route targets a revision, e.g.)',
      cur: ro(c('brian', 70, [['let-it-bleed', 70]])),
      prev: ro(c('brian', 70, [['exile-on-main-st', 70]])),
      want: ro(
        c(
          'brian',
          70,
          [
            ['exile-on-main-st', 69],
            ['let-it-bleed', 1],
          ],
          { start: 2020 },
        ),
      ),
    },
    {
      name: 'roll with two existing revisions, no deletes',
      cur: ro(c('mick', 100, [['sticky-fingers', 100]])),
      prev: ro(
        c(
          'mick',
          100,
          [
            ['goat-head-soup', 95],
            ['beggars-banquet', 5],
          ],
          { start: 2020 - 1982 },
        ),
      ),
      want: ro(
        c(
          'mick',
          100,
          [
            ['goat-head-soup', 95],
            ['beggars-banquet', 4],
            ['sticky-fingers', 1],
          ],
          { start: 2020 },
        ),
      ),
    },
    {
      name: 'roll with delete (two fast successive rolls)',
      cur: ro(c('mick', 100, [['between-the-buttons', 100]])),
      prev: ro(
        c(
          'mick',
          100,
          [
            ['goat-head-soup', 99],
            ['bridges-to-babylon', 1],
          ],
          { start: 2020 - 1984 },
        ),
      ),
      want: ro(
        c(
          'mick',
          100,
          [
            ['goat-head-soup', 99],
            ['between-the-buttons', 1],
          ],
          { start: 2020 },
        ),
      ),
    },
    {
      name: 'roll with delete (minimal config target): percent 1 is taken as is',
      cur: ro(c('mick', 1, [['between-the-buttons', 1]])),
      prev: ro(c('mick', 1, [['bridges-to-babylon', 1]])),
      want: ro(c('mick', 1, [['between-the-buttons', 1]])),
    },
    {
      name: 'new tag, no roll',
      cur: ro(c('mick', 100, [['black-on-blue', 100]]), c('mick', 100, [['black-on-blue', 100]], {}, 'jagger')),
      prev: ro(c('mick', 100, [['black-on-blue', 100]])),
      want: ro(c('mick', 100, [['black-on-blue', 100]]), c('mick', 100, [['black-on-blue', 100]], {}, 'jagger')),
    },
    {
      name: 'deleted config, no roll',
      cur: ro(c('mick', 100, [["it's-only-rock-n-roll", 100]])),
      prev: ro(c('keith', 50, [['black-on-blue', 50]]), c('mick', 50, [["it's-only-rock-n-roll", 50]])),
      want: ro(c('mick', 100, [["it's-only-rock-n-roll", 100]])),
    },
    {
      name: 'a/b config, roll both (the 1% one is taken as is)',
      cur: ro(c('keith', 99, [['black-on-blue', 99]]), c('mick', 1, [["it's-only-rock-n-roll", 1]])),
      prev: ro(c('keith', 99, [["can't-get-no-satisfaction", 99]]), c('mick', 1, [['get-off-my-cloud', 1]])),
      want: ro(
        c(
          'keith',
          99,
          [
            ["can't-get-no-satisfaction", 98],
            ['black-on-blue', 1],
          ],
          { start: 2020 },
        ),
        c('mick', 1, [["it's-only-rock-n-roll", 1]]),
      ),
    },
    {
      name: 'new config, no roll, newer smaller',
      cur: ro(c('keith', 50, [['black-on-blue', 50]]), c('mick', 50, [["it's-only-rock-n-roll", 50]])),
      prev: ro(c('mick', 100, [["it's-only-rock-n-roll", 100]])),
      want: ro(c('keith', 50, [['black-on-blue', 50]]), c('mick', 50, [["it's-only-rock-n-roll", 50]])),
    },
    {
      name: 'new config, no roll, newer larger',
      cur: ro(c('keith', 50, [['black-on-blue', 50]]), c('mick', 50, [["it's-only-rock-n-roll", 50]])),
      prev: ro(c('keith', 100, [['black-on-blue', 100]])),
      want: ro(c('keith', 50, [['black-on-blue', 50]]), c('mick', 50, [["it's-only-rock-n-roll", 50]])),
    },
  ];
  for (const tc of cases) {
    it(tc.name, () => {
      const prevCopy = structuredClone(tc.prev);
      const got = stepRolloutNs(tc.cur, tc.prev, now);
      expect(got.rollout).toEqual(tc.want);
      expect(validateRollout(got.rollout)).toBe(true);
      expect(got.nextStepTimeNs).toBe(tc.wantNext);
      expect(tc.prev).toEqual(prevCopy); // pure
    });
  }

  it('a percent decrease that drops old revisions keeps stepping (upstream indexes past the adjusted list and panics)', () => {
    const prev = ro(
      c(
        'mick',
        75,
        [
          ['a', 21],
          ['b', 54],
        ],
        { next: 1000, dur: 10, start: 900, size: 5 },
      ),
    );
    const got = stepRolloutNs(ro(c('mick', 42, [['b', 42]])), prev, now);
    expect(got.rollout).toEqual(ro(c('mick', 42, [['b', 42]])));
  });
});

// ---------------------------------------------------------------------------------------------------------------

describe('observeReadyNs (upstream TestObserveReady; computeProperties)', () => {
  it('computes step size, duration and next step only where the 1% step awaits observation', () => {
    const now = 200620092020n + 1982n;
    const olden = 198219841988n;
    const ancient = 14921812n;
    const before = ro(
      c('has-step', 100, [], { dur: 11 }),
      c('no-step-no-begin', 100),
      c('step-begin < 1s', 100, [], { start: 200620092020n }),
      c('step-begin > 1s', 100, [], { start: olden }),
      c('step-begin > 1s, step size round up', 75, [], { start: olden }),
      c('Percent not 100%', 50, [], { start: olden }),
      c('días antiguos', 13, [], { start: ancient }),
    );
    const got = observeReadyNs(before, now, 120);
    expect(got).toEqual(
      ro(
        c('has-step', 100, [], { dur: 11 }),
        c('no-step-no-begin', 100),
        c('step-begin < 1s', 100, [], { start: 200620092020n, dur: 1202020202, size: 1, next: now + 1202020202n }),
        c('step-begin > 1s', 100, [], { start: olden, dur: 3n * S, size: 3, next: now + 3n * S }),
        c('step-begin > 1s, step size round up', 75, [], { start: olden, dur: 3n * S, size: 2, next: now + 3n * S }),
        c('Percent not 100%', 50, [], { start: olden, dur: 3n * S, size: 1, next: now + 3n * S }),
        c('días antiguos', 13, [], { start: ancient, dur: S, size: 12, next: now + S }),
      ),
    );
  });

  it("Knative's example: 100% in 4 steps → 1, 26, 51, 76, 100", () => {
    // A 50 s rollout whose 1% step took 10 s: 40 s left, 4 steps of round(99/4) = 25% every 10 s.
    const start = 1_000n * S;
    let r = ro(
      c(
        'hello',
        100,
        [
          ['hello-00001', 99],
          ['hello-00002', 1],
        ],
        { start },
      ),
    );
    r = observeReadyNs(r, start + 10n * S, 50);
    expect(r.configurations[0]!.stepParams).toEqual({
      startTimeNs: `${start}`,
      stepDurationNs: `${10n * S}`,
      stepSize: 25,
      nextStepTimeNs: `${start + 20n * S}`,
    });
    const desired = ro(c('hello', 100, [['hello-00002', 100]]));
    const seen = [percents(r)[1]];
    for (let t = 20n; t <= 50n; t += 10n) {
      r = stepRolloutNs(desired, r, start + t * S).rollout;
      seen.push(percents(r).at(-1));
    }
    expect(seen).toEqual([1, 26, 51, 76, 100]);
    expect(r).toEqual(desired); // done: one revision, step params cleared
  });

  it("Knative's example: a 60 s rollout whose first step took 2 s → 3% every 2 s", () => {
    const got = observeReady(
      ro(
        c(
          'hello',
          100,
          [
            ['a', 99],
            ['b', 1],
          ],
          { start: BigInt(T0) * 1_000_000n },
        ),
      ),
      T0 + 2000,
      60,
    );
    expect(got.configurations[0]!.stepParams).toMatchObject({ stepSize: 3, stepDurationNs: `${2n * S}` });
    expect(nextStepAt(got)).toBe(T0 + 4000);
  });

  it('a first step slower than the whole duration → everything in one step of at least 1 s', () => {
    const got = computeProperties(c('x', 100, [], { start: 1n }), 500n * S, 200, 120);
    expect(got.stepParams).toEqual({ startTimeNs: '1', stepDurationNs: `${S}`, stepSize: 99, nextStepTimeNs: `${501n * S}` });
  });

  it('percent 1 (only a hand-edited state reaches it): NaN and ±Inf convert as Go on amd64, and the result fails Validate', () => {
    const min = '-9223372036854775808';
    const got = computeProperties(c('x', 1, [['r', 1]], { start: 1 }), 10n ** 18n, 2, 60);
    expect(got.stepParams).toEqual({ startTimeNs: '1', stepDurationNs: min, nextStepTimeNs: min, stepSize: -(2 ** 63) });
    expect(rolloutAnnotation(ro(got))).toContain(`"stepParams":{"starttime":1,"nextStepTime":${min},"stepDuration":${min},"stepSize":${min}}`);
    expect(parseRolloutAnnotation(rolloutAnnotation(ro(got)))).toBeUndefined();
  });

  it('nextStepTime is float64(now) + stepDuration truncated, exactly as Go computes it at today’s Unix ns', () => {
    const now = 1_764_025_200_123_456_789n; // beyond 2^53: float64(now) = 1764025200123456768
    const got = computeProperties(c('x', 100, [], { start: now - 5n * S }), now, 5, 600);
    // 595 s in min(119, 99) steps of 1%, 6010101010.10101 ns apart;
    // Go: int64(float64(now) + 6010101010.10101) = 1764025206133557760 (now + duration exactly would end in …799).
    expect(got.stepParams).toEqual({
      startTimeNs: `${now - 5n * S}`,
      stepDurationNs: '6010101010',
      stepSize: 1,
      nextStepTimeNs: '1764025206133557760',
    });
  });
});

// Upstream reconcile_resources_test.go TestReconcileIngressUpdateReenqueueRollout: two configurations, 52 % and 48 %;
// the 48 % one rolls; the Ingress turns ready 5 s later.
describe('the reconcile sequence of upstream TestReconcileIngressUpdateReenqueueRollout', () => {
  const fakeCurTime = 19551982n * S + 19841988n;
  for (const rd of [120, 600, 3600]) {
    it(`${rd}s`, () => {
      const initial = ro(c('odin', 48, [['wednesday', 48]]), c('thor', 52, [['thursday', 52]]));
      const desired = ro(c('odin', 48, [['miercoles', 48]]), c('thor', 52, [['thursday', 52]]));
      const started = stepRolloutNs(desired, parseRolloutAnnotation(rolloutAnnotation(initial)), fakeCurTime);
      expect(started.nextStepTimeNs).toBeUndefined();
      expect(started.rollout.configurations[0]!.stepParams).toEqual({ startTimeNs: `${fakeCurTime}` });
      const now = fakeCurTime + 5n * S;
      const observed = observeReadyNs(parseRolloutAnnotation(rolloutAnnotation(started.rollout))!, now, rd);
      const { rollout, nextStepTimeNs } = stepRolloutNs(desired, observed, now);
      const total = rd - 5;
      const steps = Math.min(total / 5, 47);
      const stepDuration = BigInt(Math.trunc((total * 1e9) / steps));
      const p = rollout.configurations[0]!.stepParams;
      expect(p.stepSize).toBe(Math.max(1, Math.round(47 / steps)));
      const dur = BigInt(p.stepDurationNs!);
      expect(dur - stepDuration <= 5n && stepDuration - dur <= 5n).toBe(true);
      const next = BigInt(p.nextStepTimeNs!);
      expect(next - (now + stepDuration) <= 5n && now + stepDuration - next <= 5n).toBe(true);
      expect(nextStepTimeNs).toBe(next);
    });
  }
});

// ---------------------------------------------------------------------------------------------------------------

describe('adjustPercentage (upstream TestAdjustPercentage)', () => {
  const revs = (...ps: number[]) => ps.map((percent) => ({ revisionName: '', percent }));
  const cases: [string, number, number, number[], number[]][] = [
    ['noop, 100%', 100, 100, [71, 29], [71, 29]],
    ['noop, 42%', 42, 42, [21, 21], [21, 21]],
    ['raise, 42% -> 75%', 75, 42, [21, 21], [21, 54]],
    ['lower, 75%->42%, lose 1', 42, 75, [21, 54], [42]],
    ['lower, 75%->42%, lose 1, update 2, keep 3', 42, 75, [21, 22, 32], [10, 32]],
    ['lower, 75%->42%, lose 2, update 3', 42, 75, [10, 5, 60], [42]],
    ['go to 0%', 0, 75, [10, 5, 60], []],
  ];
  for (const [name, goal, percent, before, after] of cases) {
    it(name, () => {
      expect(adjustPercentage(goal, { percent, revisions: revs(...before) })).toEqual(revs(...after));
    });
  }
});

describe('validateRollout (upstream TestValidateFailures) and done', () => {
  const invalid: [string, Rollout][] = [
    ['config > 100%', ro(c('keith', 101, [['black-on-blue', 101]]))],
    ['step larger than total', ro(c('keith', 71, [['black-on-blue', 71]], { size: 75 }))],
    ['step negative', ro(c('keith', 71, [['black-on-blue', 71]], { size: -1 }))],
    ['rev more than config', ro(c('keith', 42, [['black-on-blue', 43]]))],
    [
      'revs more than config',
      ro(
        c('keith', 42, [
          ['black-on-blue', 41],
          ['smith', 3],
        ]),
      ),
    ],
    ['2nd config > 100%', ro(c('rob', 10, [['roy', 10]]), c('keith', 101, [['black-on-blue', 101]], {}, 'richards'))],
  ];
  for (const [name, r] of invalid) {
    it(`invalid: ${name} (and its annotation parses to undefined)`, () => {
      expect(validateRollout(r)).toBe(false);
      expect(parseRolloutAnnotation(rolloutAnnotation(r))).toBeUndefined();
    });
  }

  it('TestConfigDone: zero or one revision is done, two or more is a rollout', () => {
    const r = ro(
      c('nil', 100),
      c('one', 100, [['roy', 100]]),
      c('no', 0),
      c('many', 100, [
        ['black-on-blue', 83],
        ['flowers', 17],
      ]),
    );
    expect(r.configurations.map(isConfigurationRolloutDone)).toEqual([true, true, true, false]);
    expect(isRolloutDone(r)).toBe(false);
    expect(isRolloutDone(ro(...r.configurations.slice(0, 3)))).toBe(true);
  });
});

describe('stepRevisions (upstream TestStepRevisions)', () => {
  const cases: [string, bigint, ConfigurationRollout, ConfigurationRollout][] = [
    [
      'noop (1): too soon',
      1982n,
      c(
        '',
        0,
        [
          ['', 10],
          ['', 5],
          ['', 60],
        ],
        { next: 1984, size: 10 },
      ),
      c(
        '',
        0,
        [
          ['', 10],
          ['', 5],
          ['', 60],
        ],
        { next: 1984, size: 10 },
      ),
    ],
    ['noop (2): done', 1982n, c('', 0, [['', 10]], { next: 1984, dur: 10, size: 10 }), c('', 0, [['', 10]], { next: 1984, dur: 10, size: 10 })],
    [
      'step last, exact time',
      1984n,
      c(
        '',
        90,
        [
          ['', 30],
          ['', 60],
        ],
        { next: 1984, size: 10, dur: 55 },
      ),
      c(
        '',
        90,
        [
          ['', 20],
          ['', 70],
        ],
        { next: 2039, size: 10, dur: 55 },
      ),
    ],
    [
      'step last, delete some',
      1988n,
      c(
        '',
        90,
        [
          ['a', 22],
          ['b', 5],
          ['c', 3],
          ['d', 60],
        ],
        { next: 1984, size: 10, dur: 55 },
      ),
      c(
        '',
        90,
        [
          ['a', 20],
          ['d', 70],
        ],
        { next: 2043, size: 10, dur: 55 },
      ),
    ],
    [
      'over target now',
      1988n,
      c(
        '',
        15,
        [
          ['a', 5],
          ['b', 1],
          ['c', 1],
          ['d', 8],
        ],
        { next: 1984, size: 10, dur: 77 },
      ),
      c('', 15, [['d', 15]]),
    ],
    [
      'the very last step',
      2006n,
      c(
        '',
        15,
        [
          ['a', 5],
          ['b', 1],
          ['c', 1],
          ['d', 8],
        ],
        { next: 1984, start: 1977, dur: 77, size: 8 },
      ),
      c('', 15, [['d', 15]]),
    ],
  ];
  for (const [name, now, before, after] of cases) {
    it(name, () => {
      expect(stepRevisions(before, now)).toEqual(after);
    });
  }
});

describe('rolloutsByTag (upstream TestGetByTag)', () => {
  it('returns each group’s configurations', () => {
    const r = ro(
      c('one', 50, [
        ['rob', 10],
        ['roy', 40],
      ]),
      c('three', 10, [
        ['forty-two', 5],
        ['flowers', 5],
      ]),
      c('two', 40, [['wish', 40]]),
      c('two', 100, [['wish', 100]], {}, 'gilberto'),
      c(
        'three',
        100,
        [
          ['forty-two', 60],
          ['flowers', 40],
        ],
        {},
        'jobim',
      ),
    );
    expect(rolloutsByTag(r, '').map((x) => x.configurationName)).toEqual(['one', 'three', 'two']);
    expect(rolloutsByTag(r, 'gilberto').map((x) => x.configurationName)).toEqual(['two']);
    expect(rolloutsByTag(r, 'jobim').map((x) => x.configurationName)).toEqual(['three']);
    expect(rolloutsByTag(r, 'nyaful')).toEqual([]);
  });
});

// ---------------------------------------------------------------------------------------------------------------

describe('stacked rollouts and tags', () => {
  it('a newer revision mid-rollout stacks: A 60 / B 40 → A 60 / B 39 / C 1, draining the newest first, timing restarted', () => {
    const prev = ro(
      c(
        'hello',
        100,
        [
          ['A', 60],
          ['B', 40],
        ],
        { start: 1000n * S, next: 1010n * S, dur: 10n * S, size: 20 },
      ),
    );
    const got = stepRolloutNs(ro(c('hello', 100, [['C', 100]])), prev, 1005n * S);
    expect(got.rollout).toEqual(
      ro(
        c(
          'hello',
          100,
          [
            ['A', 60],
            ['B', 39],
            ['C', 1],
          ],
          { start: 1005n * S },
        ),
      ),
    );
    expect(got.nextStepTimeNs).toBeUndefined();
    // Once observed ready (2 s later; 48 s left → 24 steps of round(99/24) = 4%), C takes from B first, then A.
    let r = observeReadyNs(got.rollout, 1007n * S, 50);
    expect(r.configurations[0]!.stepParams).toMatchObject({ stepSize: 4, stepDurationNs: `${2n * S}` });
    const desired = ro(c('hello', 100, [['C', 100]]));
    for (let t = 1009n; t <= 1025n; t += 2n) r = stepRolloutNs(desired, r, t * S).rollout;
    expect(percents(r)).toEqual([60, 3, 37]);
    r = stepRolloutNs(desired, r, 1027n * S).rollout;
    expect(r.configurations[0]!.revisions).toEqual([
      { revisionName: 'A', percent: 59 },
      { revisionName: 'C', percent: 41 },
    ]);
  });

  it('the drained newest-old revision is culled: A 99 / B 1 + C → A 99 / C 1', () => {
    const got = stepRolloutNs(
      ro(c('hello', 100, [['C', 100]])),
      ro(
        c(
          'hello',
          100,
          [
            ['A', 99],
            ['B', 1],
          ],
          { start: 5 },
        ),
      ),
      10n,
    );
    expect(got.rollout).toEqual(
      ro(
        c(
          'hello',
          100,
          [
            ['A', 99],
            ['C', 1],
          ],
          { start: 10 },
        ),
      ),
    );
  });

  it('tags and configurations roll independently; a tag the previous state lacks gets 100% at once', () => {
    const prev = ro(c('a', 60, [['a-1', 60]]), c('b', 40, [['b-1', 40]]), c('a', 100, [['a-1', 100]], {}, 'x'));
    const desired = ro(
      c('a', 60, [['a-2', 60]]),
      c('b', 40, [['b-1', 40]]),
      c('a', 100, [['a-2', 100]], {}, 'x'),
      c('b', 100, [['b-1', 100]], {}, 'y'),
    );
    expect(stepRolloutNs(desired, prev, 7n).rollout).toEqual(
      ro(
        c(
          'a',
          60,
          [
            ['a-1', 59],
            ['a-2', 1],
          ],
          { start: 7 },
        ),
        c('b', 40, [['b-1', 40]]),
        c(
          'a',
          100,
          [
            ['a-1', 99],
            ['a-2', 1],
          ],
          { start: 7 },
          'x',
        ),
        c('b', 100, [['b-1', 100]], {}, 'y'),
      ),
    );
  });
});

// ---------------------------------------------------------------------------------------------------------------

describe('annotation JSON (Go json.Marshal / json.Unmarshal + Validate)', () => {
  it('round-trips upstream ingress_test.go’s annotation byte for byte', () => {
    const upstream =
      '{"configurations":[{"configurationName":"valhalla","percent":100,"revisions":[{"revisionName":"valhalla-01982","percent":100}],"stepParams":{}},' +
      '{"configurationName":"thor","tag":"tagged","percent":100,"revisions":[{"revisionName":"thor-02020","percent":100}],"stepParams":{}}]}';
    const r = parseRolloutAnnotation(upstream)!;
    expect(r).toEqual(ro(c('valhalla', 100, [['valhalla-01982', 100]]), c('thor', 100, [['thor-02020', 100]], {}, 'tagged')));
    expect(rolloutAnnotation(r)).toBe(upstream);
  });

  it('keeps int64 nanoseconds beyond 2^53 exactly', () => {
    const text =
      '{"configurations":[{"configurationName":"hello","percent":100,"revisions":[{"revisionName":"hello-00001","percent":74},{"revisionName":"hello-00002","percent":26}],' +
      '"stepParams":{"starttime":1764025200123456789,"nextStepTime":1764025212123456789,"stepDuration":2000000001,"stepSize":25}}]}';
    const r = parseRolloutAnnotation(text)!;
    expect(r.configurations[0]!.stepParams).toEqual({
      startTimeNs: '1764025200123456789',
      nextStepTimeNs: '1764025212123456789',
      stepDurationNs: '2000000001',
      stepSize: 25,
    });
    expect(rolloutAnnotation(r)).toBe(text);
    expect(nextStepAt(r)).toBe(1764025212124);
  });

  it('stepWaitMs: the pass of the early timer waits out the lead until the step is due, and no longer', () => {
    const text =
      '{"configurations":[{"configurationName":"hello","percent":100,"revisions":[{"revisionName":"hello-00001","percent":74},{"revisionName":"hello-00002","percent":26}],' +
      '"stepParams":{"starttime":1764025200123456789,"nextStepTime":1764025212123456789,"stepDuration":2000000001,"stepSize":25}}]}';
    const r = parseRolloutAnnotation(text)!;
    const due = 1764025212124;
    expect(stepWaitMs(r, due - RolloutWakeLeadMs)).toBe(RolloutWakeLeadMs); // the timer fired on time: wait the lead
    expect(stepWaitMs(r, due - 20)).toBe(20);
    expect(stepWaitMs(r, due)).toBe(0); // due: step now
    expect(stepWaitMs(r, due + 300)).toBe(0); // a late timer steps at once
    expect(stepWaitMs(r, due - 1500)).toBe(0); // a pass for something else, long before the step: no wait
    expect(stepWaitMs(undefined, due)).toBe(0);
  });

  it('upstream TestJSONRoundtrip (empty revisions and zero fields omitted)', () => {
    const orig = ro(
      c('one', 100, [['roy', 100]], { start: 1955, next: 1988, dur: 1984 }),
      c('no', 0),
      c('many', 100, [
        ['black-on-blue', 83],
        ['flowers', 17],
      ]),
    );
    const text = rolloutAnnotation(orig);
    expect(text).toBe(
      '{"configurations":[{"configurationName":"one","percent":100,"revisions":[{"revisionName":"roy","percent":100}],"stepParams":{"starttime":1955,"nextStepTime":1988,"stepDuration":1984}},' +
        '{"configurationName":"no","percent":0,"stepParams":{}},' +
        '{"configurationName":"many","percent":100,"revisions":[{"revisionName":"black-on-blue","percent":83},{"revisionName":"flowers","percent":17}],"stepParams":{}}]}',
    );
    expect(parseRolloutAnnotation(text)).toEqual(orig);
  });

  it('empty → {}; absent or empty annotation → undefined; null → an empty rollout', () => {
    expect(rolloutAnnotation(ro())).toBe('{}');
    expect(parseRolloutAnnotation('{}')).toEqual(ro());
    expect(parseRolloutAnnotation('null')).toEqual(ro());
    expect(parseRolloutAnnotation(undefined)).toBeUndefined();
    expect(parseRolloutAnnotation('')).toBeUndefined();
  });

  it('rejects what Go rejects (upstream TestReconcileIngressRolloutDeserializeFail and more)', () => {
    for (const bad of [
      '<?xml version="1.0" encoding="utf-8"?><rollout name="from-the-wrong-universe"/>',
      '{"configurations":[{"configurationName":"configuration","percent":202,"stepParams":{}}]}',
      '{"configurations":[{"configurationName":"c","percent":"100"}]}',
      '{"configurations":[{"configurationName":"c","percent":100.0,"revisions":[{"revisionName":"r","percent":100}]}]}',
      '{"configurations":[{"configurationName":"c","percent":1e2,"revisions":[{"revisionName":"r","percent":100}]}]}',
      '{"configurations":[{"configurationName":"c","percent":0,"stepParams":{"starttime":9223372036854775808}}]}',
      '{"configurations":{}}',
      '{"configurations":[null]}',
      '{"configurations":[]} x',
      '[]',
      '{"configurations":[{"configurationName":1,"percent":0}]}',
    ]) {
      expect(parseRolloutAnnotation(bad), bad).toBeUndefined();
    }
  });

  it('accepts what Go accepts: case-insensitive keys, unknown keys, nulls, duplicate keys merged as Go decodes them', () => {
    const ok = parseRolloutAnnotation(
      '{"Configurations":[{"CONFIGURATIONNAME":"c","percent":100,"extra":[1,2],"revisions":[{"revisionName":"r","percent":99},null,{"revisionName":"s","percent":1}],"stepParams":null,"tag":null}],"other":{}}',
    );
    expect(ok).toEqual(
      ro(
        c('c', 100, [
          ['r', 99],
          ['', 0],
          ['s', 1],
        ]),
      ),
    );
    const merged = parseRolloutAnnotation(
      '{"configurations":[{"configurationName":"c","percent":100,"revisions":[{"revisionName":"r","percent":100}],"stepParams":{"stepSize":5},"stepParams":{"ſtarttime":7}}]}',
    );
    expect(merged).toEqual(ro(c('c', 100, [['r', 100]], { start: 7, size: 5 })));
    const reused = parseRolloutAnnotation(
      '{"configurations":[{"configurationName":"c","percent":100,"revisions":[{"revisionName":"r","percent":1}],"revisions":[{"percent":100}]}]}',
    );
    expect(reused).toEqual(ro(c('c', 100, [['r', 100]])));
  });

  it('writes strings as Go does (HTML-safe escaping)', () => {
    expect(rolloutAnnotation(ro(c('a<b>&', 0)))).toBe(
      '{"configurations":[{"configurationName":"a\\u003cb\\u003e\\u0026","percent":0,"stepParams":{}}]}',
    );
  });
});

// ---------------------------------------------------------------------------------------------------------------

const NS = 'default';

function rev(name: string, config = 'hello', ready: 'True' | 'False' | 'Unknown' = 'True', message?: string): Revision {
  return {
    apiVersion: 'serving.knative.dev/v1',
    kind: 'Revision',
    metadata: { name, namespace: NS, labels: { 'serving.knative.dev/configuration': config, 'serving.knative.dev/service': 'hello' } },
    spec: { containers: [{ image: 'nginx' }] },
    status: { conditions: [{ type: 'Ready', status: ready, ...(message ? { reason: 'ExitCode1', message } : {}) }] },
  };
}

function cfg(name: string, latestReady: string): Configuration {
  return {
    apiVersion: 'serving.knative.dev/v1',
    kind: 'Configuration',
    metadata: { name, namespace: NS },
    spec: { template: { spec: { containers: [{ image: 'nginx' }] } } },
    status: { latestReadyRevisionName: latestReady, conditions: [{ type: 'Ready', status: 'True' }] },
  };
}

function route(traffic: TrafficTarget[], annotations: Record<string, string> = {}): Route {
  return { apiVersion: 'serving.knative.dev/v1', kind: 'Route', metadata: { name: 'hello', namespace: NS, annotations }, spec: { traffic } };
}

const byName = <T extends { metadata: { name?: string } }>(...objs: T[]): Record<string, T> =>
  Object.fromEntries(objs.map((o) => [o.metadata.name!, o]));

describe('buildRollout (upstream BuildRollout)', () => {
  it('one configuration rollout per latestRevision target with traffic, per group; sorted by tag then name; 0% skipped', () => {
    const { config } = buildTrafficConfiguration(
      route([
        { configurationName: 'valhalla', latestRevision: true, percent: 100 },
        { configurationName: 'thor', latestRevision: true, percent: 0, tag: 'tagged' },
        { revisionName: 'valhalla-00001', latestRevision: false, percent: 0, tag: 'pinned' },
      ]),
      byName(cfg('valhalla', 'valhalla-00002'), cfg('thor', 'thor-00001')),
      byName(rev('valhalla-00001', 'valhalla'), rev('valhalla-00002', 'valhalla'), rev('thor-00001', 'thor')),
    );
    const r = buildRollout(config);
    expect(r).toEqual(ro(c('valhalla', 100, [['valhalla-00002', 100]]), c('thor', 100, [['thor-00001', 100]], {}, 'tagged')));
    expect(rolloutAnnotation(r)).toBe(
      '{"configurations":[{"configurationName":"valhalla","percent":100,"revisions":[{"revisionName":"valhalla-00002","percent":100}],"stepParams":{}},' +
        '{"configurationName":"thor","tag":"tagged","percent":100,"revisions":[{"revisionName":"thor-00001","percent":100}],"stepParams":{}}]}',
    );
    expect(buildRollout({ targets: {} })).toEqual(ro());
  });
});

describe('rolloutDurationSeconds', () => {
  const net = (s: number) => ({ rolloutDurationSeconds: s });
  it('the annotation (Go duration, truncated to seconds) wins; the legacy key is read when the new one is absent', () => {
    expect(rolloutDurationSeconds({ 'serving.knative.dev/rollout-duration': '2m1982s' }, net(311))).toBe(2102);
    expect(rolloutDurationSeconds({ 'serving.knative.dev/rolloutDuration': '120s' }, net(311))).toBe(120);
    expect(rolloutDurationSeconds({ 'serving.knative.dev/rollout-duration': '1.9s' }, net(0))).toBe(1);
  });
  it('absent, empty, 0 or unparseable → config-network rollout-duration; the first present key wins even when empty', () => {
    expect(rolloutDurationSeconds(undefined, net(311))).toBe(311);
    expect(rolloutDurationSeconds({ 'serving.knative.dev/rollout-duration': '0s' }, net(311))).toBe(311);
    expect(rolloutDurationSeconds({ 'serving.knative.dev/rollout-duration': 'not-a-duration' }, net(311))).toBe(311);
    expect(rolloutDurationSeconds({ 'serving.knative.dev/rollout-duration': '', 'serving.knative.dev/rolloutDuration': '60s' }, net(7))).toBe(7);
    expect(rolloutDurationSeconds({}, net(0))).toBe(0);
  });
  it('a negative annotation disables the rollout (0), without falling back', () => {
    expect(rolloutDurationSeconds({ 'serving.knative.dev/rollout-duration': '-5s' }, net(311))).toBe(0);
  });
});

describe('traffic with the rollout (status.traffic and the KIngress splits)', () => {
  const r = route([
    { configurationName: 'hello', latestRevision: true, percent: 100 },
    { configurationName: 'hello', latestRevision: true, percent: 0, tag: 'latest' },
    { revisionName: 'hello-00001', latestRevision: false, percent: 0, tag: 'v1' },
  ]);
  const { config } = buildTrafficConfiguration(r, byName(cfg('hello', 'hello-00002')), byName(rev('hello-00001'), rev('hello-00002')));
  const urls = { latest: 'http://latest-hello.default.example.com', v1: 'http://v1-hello.default.example.com' };
  const rolling = ro(
    c(
      'hello',
      100,
      [
        ['hello-00001', 74],
        ['hello-00002', 26],
      ],
      { start: 1 },
    ),
    c(
      'hello',
      100,
      [
        ['hello-00001', 99],
        ['hello-00002', 1],
      ],
      { start: 1 },
      'latest',
    ),
  );

  it('during a rollout a latestRevision entry shows one entry per rollout revision (its group’s rollout)', () => {
    expect(applyRolloutToTraffic(config, rolling, urls)).toEqual([
      { revisionName: 'hello-00001', latestRevision: true, percent: 74 },
      { revisionName: 'hello-00002', latestRevision: true, percent: 26 },
      { tag: 'latest', revisionName: 'hello-00001', latestRevision: true, percent: 99, url: urls.latest },
      { tag: 'latest', revisionName: 'hello-00002', latestRevision: true, percent: 1, url: urls.latest },
      { tag: 'v1', revisionName: 'hello-00001', latestRevision: false, percent: 0, url: urls.v1 },
    ]);
  });

  it('when the rollout is done, the plain status', () => {
    expect(applyRolloutToTraffic(config, buildRollout(config), urls)).toEqual([
      { revisionName: 'hello-00002', latestRevision: true, percent: 100 },
      { tag: 'latest', revisionName: 'hello-00002', latestRevision: true, percent: 0, url: urls.latest },
      { tag: 'v1', revisionName: 'hello-00001', latestRevision: false, percent: 0, url: urls.v1 },
    ]);
  });

  it('the KIngress splits follow the rollout, also when it holds traffic on an older revision', () => {
    const hosts = {
      '': { clusterLocal: 'hello.default.svc.cluster.local', external: [] },
      latest: { clusterLocal: 'latest-hello.default.svc.cluster.local', external: [] },
      v1: { clusterLocal: 'v1-hello.default.svc.cluster.local', external: [] },
    };
    const splitsOf = (rollout: Rollout) =>
      makeIngressSpec(r, config, hosts, { rollout }).rules!.map((rule) => rule.http!.paths[0]!.splits.map((s) => `${s.serviceName} ${s.percent}`));
    expect(splitsOf(rolling)).toEqual([['hello-00001 74', 'hello-00002 26'], ['hello-00001 99', 'hello-00002 1'], ['hello-00001 100']]);
    const held = ro(c('hello', 100, [['hello-00001', 100]]), c('hello', 100, [['hello-00001', 100]], {}, 'latest'));
    expect(splitsOf(held)).toEqual([['hello-00001 100'], ['hello-00001 100'], ['hello-00001 100']]);
    expect(applyRolloutToTraffic(config, held, urls).map((t) => `${t.tag ?? ''} ${t.revisionName} ${t.percent}`)).toEqual([
      ' hello-00001 100',
      'latest hello-00001 100',
      'v1 hello-00001 0',
    ]);
  });
});

// ---------------------------------------------------------------------------------------------------------------
// Tidal's rules

describe('control annotation tidal.dev/rollout', () => {
  const ann = (v: string) => ({ 'tidal.dev/rollout': v });
  it('parses pause | resume | promote | abort, optionally :<revision>; absent → resume; anything else → resume + invalid', () => {
    expect(parseRolloutControl(undefined)).toEqual({ action: 'resume' });
    expect(parseRolloutControl(ann(''))).toEqual({ action: 'resume' });
    expect(parseRolloutControl(ann(' Pause '))).toEqual({ action: 'pause' });
    expect(parseRolloutControl(ann('promote:hello-00002'))).toEqual({ action: 'promote', revisionName: 'hello-00002' });
    expect(parseRolloutControl(ann('abort'))).toEqual({ action: 'abort' });
    expect(parseRolloutControl(ann('stop'))).toEqual({ action: 'resume', invalid: 'stop' });
    expect(parseRolloutControl(ann('abort:Hello'))).toEqual({ action: 'resume', invalid: 'abort:Hello' });
  });

  it('promoteRollout: the newest revision gets everything now; abortRollout: the oldest does; both clear the schedule', () => {
    const r = ro(
      c(
        'hello',
        100,
        [
          ['A', 60],
          ['B', 39],
          ['C', 1],
        ],
        { start: 5, next: 9, dur: 4, size: 10 },
      ),
      c('other', 0),
    );
    expect(promoteRollout(r)).toEqual(ro(c('hello', 100, [['C', 100]]), c('other', 0)));
    expect(abortRollout(r)).toEqual(ro(c('hello', 100, [['A', 100]]), c('other', 0)));
    expect(abortRollout(r, () => false)).toEqual(r);
  });

  it('pauseRollout: structural changes apply, timed steps do not', () => {
    const prev = ro(
      c(
        'hello',
        100,
        [
          ['A', 80],
          ['B', 20],
        ],
        { start: 1, next: 10, dur: 5, size: 10 },
      ),
    );
    expect(pauseRollout(ro(c('hello', 100, [['B', 100]])), prev, 1)).toEqual(prev);
    expect(stepRollout(ro(c('hello', 100, [['B', 100]])), prev, 1)).toEqual(
      ro(
        c(
          'hello',
          100,
          [
            ['A', 70],
            ['B', 30],
          ],
          { start: 1, next: 1_000_005, dur: 5, size: 10 },
        ),
      ),
    );
  });

  it('rollbackRollout: a rollout whose newest revision is Ready=False goes back to its oldest, saying why', () => {
    const r = ro(
      c(
        'hello',
        100,
        [
          ['A', 60],
          ['B', 39],
          ['C', 1],
        ],
        { start: 5 },
        'x',
      ),
    );
    const got = rollbackRollout(r, byName(rev('C', 'hello', 'False', 'Container failed with: boom')));
    expect(got.rollout).toEqual(ro(c('hello', 100, [['A', 100]], {}, 'x')));
    expect(got.holds).toEqual([
      {
        configurationName: 'hello',
        tag: 'x',
        desiredRevision: 'C',
        servingRevision: 'A',
        cause: 'rollback',
        reason: 'RolloutRolledBack',
        message: 'Revision "C" (hello (tag x)) is not ready: ExitCode1: Container failed with: boom; its rollout was rolled back to revision "A".',
      },
    ]);
    expect(rollbackRollout(r, byName(rev('C', 'hello', 'Unknown'))).rollout).toEqual(r);
    expect(rollbackRollout(r, {}).rollout).toEqual(r);
  });

  it('the 1% step bound: max(10 s, duration / 10)', () => {
    expect([10, 60, 100, 120, 3600].map(firstStepBoundSeconds)).toEqual([10, 10, 10, 12, 360]);
  });
});

// A Route through planRollout, pass by pass, as the Route workflow will drive it.
class Sim {
  annotation: string | undefined;
  routeIngressReady = true;
  plans: RolloutPlan[] = [];
  constructor(
    public desired: Rollout,
    public secs: number,
    public revisions: Record<string, RevisionLike> = {},
  ) {
    this.annotation = rolloutAnnotation(desired);
  }
  pass(nowMs: number, opts: { ingressReady?: boolean; control?: RolloutControl } = {}): RolloutPlan {
    const plan = planRollout({
      desired: this.desired,
      previousAnnotation: this.annotation,
      ingressExists: true,
      ingressReady: opts.ingressReady ?? true,
      routeIngressReady: this.routeIngressReady,
      nowMs,
      durationSeconds: this.secs,
      ...(opts.control ? { control: opts.control } : {}),
      revisions: this.revisions,
    });
    this.annotation = plan.annotation;
    // The Route's IngressReady: Unknown while a rollout is in progress, else the Ingress's.
    this.routeIngressReady = !plan.inProgress && (opts.ingressReady ?? true);
    this.plans.push(plan);
    return plan;
  }
}

const A = ro(c('hello', 100, [['hello-00001', 100]]));
const B = ro(c('hello', 100, [['hello-00002', 100]]));
const C = ro(c('hello', 100, [['hello-00003', 100]]));

describe('planRollout (Knative’s rollout and Tidal’s rules)', () => {
  it('no KIngress yet, or duration 0 → the desired state at once', () => {
    expect(
      planRollout({
        desired: B,
        previousAnnotation: undefined,
        ingressExists: false,
        ingressReady: false,
        routeIngressReady: false,
        nowMs: T0,
        durationSeconds: 60,
      }).rollout,
    ).toEqual(B);
    const p = planRollout({
      desired: B,
      previousAnnotation: rolloutAnnotation(A),
      ingressExists: true,
      ingressReady: true,
      routeIngressReady: true,
      nowMs: T0,
      durationSeconds: 0,
    });
    expect(p).toMatchObject({ rollout: B, inProgress: false, holds: [] });
    expect(p.nextWakeAtMs).toBeUndefined();
  });

  it('a corrupt previous annotation → the desired state (no gradual shift)', () => {
    const p = planRollout({
      desired: B,
      previousAnnotation: '{"configurations":[{"percent":202}]}',
      ingressExists: true,
      ingressReady: true,
      routeIngressReady: true,
      nowMs: T0,
      durationSeconds: 60,
    });
    expect(p.rollout).toEqual(B);
  });

  it('1% first, then the computeProperties schedule on workflow time, one step per due time, events', () => {
    const sim = new Sim(A, 60);
    sim.desired = B;
    const p1 = sim.pass(T0, { ingressReady: false });
    expect(percents(p1.rollout)).toEqual([99, 1]);
    expect(p1).toMatchObject({ inProgress: true, paused: false, holds: [], nextWakeAtMs: T0 + 10_000 }); // the readiness bound
    expect(p1.events).toEqual([
      { type: 'Normal', reason: 'RolloutStarted', message: 'hello: rollout of hello-00002 started: hello-00001 99%, hello-00002 1%.' },
    ]);
    const p2 = sim.pass(T0 + 2000); // Ingress Ready 2 s later → 3% every 2 s
    expect(p2.rollout.configurations[0]!.stepParams).toMatchObject({ stepSize: 3, stepDurationNs: '2000000000' });
    expect(p2.nextWakeAtMs).toBe(T0 + 4000);
    expect(p2.events.map((e) => e.reason)).toEqual(['RolloutScheduled']);
    const p3 = sim.pass(T0 + 4000);
    expect(percents(p3.rollout)).toEqual([96, 4]);
    expect(p3.events[0]!.message).toBe('hello: hello-00002 1% → 4% (hello-00001 96%, hello-00002 4%), next step at 2026-11-24T10:00:06.000Z.');
    // An outage: the next pass comes 30 s late: one step only, and the schedule continues from there.
    const p4 = sim.pass(T0 + 34_000);
    expect(percents(p4.rollout)).toEqual([93, 7]);
    expect(p4.nextWakeAtMs).toBe(T0 + 36_000);
    let t = T0 + 36_000;
    let last = p4;
    while (last.inProgress) {
      last = sim.pass(t);
      t = last.nextWakeAtMs ?? t;
    }
    expect(last.rollout).toEqual(B);
    expect(last.events.at(-1)).toMatchObject({ reason: 'RolloutFinished' });
    expect(last.nextWakeAtMs).toBeUndefined();
    const pcts = sim.plans.slice(3).map((p) => percents(p.rollout).at(-1));
    expect(pcts.slice(0, 3)).toEqual([7, 10, 13]);
    expect(pcts.at(-1)).toBe(100);
  });

  it('never stuck at 1%: past the bound without a Ready Ingress, the schedule is computed as if ready at the bound', () => {
    const sim = new Sim(A, 120);
    sim.desired = B;
    sim.pass(T0, { ingressReady: false });
    const p = sim.pass(T0 + 12_000, { ingressReady: false }); // bound max(10, 12) = 12 s
    expect(p.events.map((e) => e.reason)).toEqual(['RolloutReadinessNotObserved', 'RolloutScheduled']);
    expect(p.events[0]!.message).toBe('hello: the 1% step of hello-00002 was not observed ready within 12s; continuing as if it took that long.');
    // 108 s left, 9 steps of 11% every 12 s.
    expect(p.rollout.configurations[0]!.stepParams).toMatchObject({ stepSize: 11, stepDurationNs: '12000000000' });
    expect(p.nextWakeAtMs).toBe(T0 + 24_000);
  });

  it('stacked rollout through planRollout: A 60 / B 39 / C 1', () => {
    const sim = new Sim(A, 60);
    sim.desired = B;
    sim.pass(T0);
    sim.annotation = rolloutAnnotation(
      ro(
        c(
          'hello',
          100,
          [
            ['hello-00001', 60],
            ['hello-00002', 40],
          ],
          { start: BigInt(T0) * 1_000_000n, next: BigInt(T0 + 1e6) * 1_000_000n, dur: 2n * S, size: 3 },
        ),
      ),
    );
    sim.desired = C;
    const p = sim.pass(T0 + 10_000);
    expect(p.rollout.configurations[0]!.revisions).toEqual([
      { revisionName: 'hello-00001', percent: 60 },
      { revisionName: 'hello-00002', percent: 39 },
      { revisionName: 'hello-00003', percent: 1 },
    ]);
  });

  it('pause holds the split and needs no timer; resume takes the overdue step at once, then every stepDuration', () => {
    const sim = new Sim(A, 60);
    sim.desired = B;
    sim.pass(T0);
    sim.pass(T0 + 2000);
    const paused = sim.pass(T0 + 4000, { control: { action: 'pause' } });
    expect(percents(paused.rollout)).toEqual([99, 1]);
    expect(paused).toMatchObject({ paused: true, inProgress: true });
    expect(paused.nextWakeAtMs).toBeUndefined();
    expect(percents(sim.pass(T0 + 60_000, { control: { action: 'pause' } }).rollout)).toEqual([99, 1]);
    const resumed = sim.pass(T0 + 90_000, { control: { action: 'resume' } });
    expect(percents(resumed.rollout)).toEqual([96, 4]);
    expect(resumed.nextWakeAtMs).toBe(T0 + 92_000);
    // pause:<other revision> does not apply.
    expect(sim.pass(T0 + 92_000, { control: { action: 'pause', revisionName: 'hello-00009' } }).paused).toBe(false);
  });

  it('a new revision while paused gets its 1% and holds there', () => {
    const sim = new Sim(A, 60);
    sim.desired = B;
    const p = sim.pass(T0, { control: { action: 'pause' } });
    expect(percents(p.rollout)).toEqual([99, 1]);
    expect(sim.pass(T0 + 2000, { control: { action: 'pause' } }).nextWakeAtMs).toBeUndefined();
  });

  it('promote finishes now; left on, later rollouts are immediate too; promote:<rev> applies to that revision only', () => {
    const sim = new Sim(A, 60);
    sim.desired = B;
    sim.pass(T0);
    const p = sim.pass(T0 + 1000, { control: { action: 'promote', revisionName: 'hello-00002' } });
    expect(p.rollout).toEqual(B);
    expect(p.events.map((e) => e.reason)).toEqual(['RolloutPromoted']);
    expect(p.inProgress).toBe(false);
    sim.desired = C;
    expect(percents(sim.pass(T0 + 2000, { control: { action: 'promote', revisionName: 'hello-00002' } }).rollout)).toEqual([99, 1]);
    expect(sim.pass(T0 + 3000, { control: { action: 'promote' } }).rollout).toEqual(C);
  });

  it('abort: all traffic back to the previous revision, held there with a reason while the annotation says so; removing it restarts', () => {
    const sim = new Sim(A, 60);
    sim.desired = B;
    sim.pass(T0);
    sim.pass(T0 + 2000);
    sim.pass(T0 + 4000);
    const abort: RolloutControl = { action: 'abort' };
    const p = sim.pass(T0 + 5000, { control: abort });
    expect(p.rollout).toEqual(A);
    expect(p.inProgress).toBe(false);
    expect(p.nextWakeAtMs).toBeUndefined();
    expect(p.events).toEqual([
      { type: 'Warning', reason: 'RolloutAborted', message: 'hello: rollout of hello-00002 aborted; traffic back on hello-00001.' },
    ]);
    expect(p.holds).toEqual([
      {
        configurationName: 'hello',
        desiredRevision: 'hello-00002',
        servingRevision: 'hello-00001',
        cause: 'abort',
        reason: 'RolloutAborted',
        message: 'The rollout of revision "hello-00002" (hello) was aborted by tidal.dev/rollout; its traffic stays on revision "hello-00001".',
      },
    ]);
    const again = sim.pass(T0 + 60_000, { control: abort });
    expect(again.rollout).toEqual(A);
    expect(again.events).toEqual([]);
    expect(again.holds).toHaveLength(1);
    // abort:hello-00002 does not hold hello-00003: a fresh rollout.
    sim.desired = C;
    const fresh = sim.pass(T0 + 61_000, { control: { action: 'abort', revisionName: 'hello-00002' } });
    expect(fresh.rollout.configurations[0]!.revisions).toEqual([
      { revisionName: 'hello-00001', percent: 99 },
      { revisionName: 'hello-00003', percent: 1 },
    ]);
    expect(fresh.holds).toEqual([]);
  });

  it('automatic rollback: the new revision stops being Ready → back to the previous one; a fixed revision rolls out afresh', () => {
    const sim = new Sim(A, 60, byName(rev('hello-00001'), rev('hello-00002')));
    sim.desired = B;
    sim.pass(T0);
    sim.pass(T0 + 2000);
    sim.pass(T0 + 4000);
    sim.revisions = byName(rev('hello-00001'), rev('hello-00002', 'hello', 'False', 'Back-off restarting failed container'));
    const p = sim.pass(T0 + 5000);
    expect(p.rollout).toEqual(A);
    expect(p.events.map((e) => e.reason)).toEqual(['RolloutRolledBack']);
    expect(p.holds[0]).toMatchObject({
      cause: 'rollback',
      reason: 'RolloutRolledBack',
      desiredRevision: 'hello-00002',
      servingRevision: 'hello-00001',
    });
    expect(p.holds[0]!.message).toContain('Back-off restarting failed container');
    // Later passes keep it there, silently.
    const again = sim.pass(T0 + 6000);
    expect(again.rollout).toEqual(A);
    expect(again.events).toEqual([]);
    expect(again.holds).toHaveLength(1);
    // The fixed revision starts a fresh rollout from 1%.
    sim.revisions['hello-00003'] = rev('hello-00003');
    sim.desired = C;
    expect(percents(sim.pass(T0 + 7000).rollout)).toEqual([99, 1]);
  });

  it('a newest revision whose readiness is Unknown holds the timed steps (no timer) until it is known', () => {
    const sim = new Sim(A, 60, byName(rev('hello-00002', 'hello', 'Unknown')));
    sim.desired = B;
    sim.pass(T0);
    const p = sim.pass(T0 + 2000);
    expect(p.nextWakeAtMs).toBeUndefined();
    expect(percents(sim.pass(T0 + 10_000).rollout)).toEqual([99, 1]);
    sim.revisions = byName(rev('hello-00002'));
    expect(percents(sim.pass(T0 + 11_000).rollout)).toEqual([96, 4]);
  });

  it('an invalid control value is ignored with a warning event', () => {
    const sim = new Sim(A, 60);
    const p = sim.pass(T0, { control: parseRolloutControl({ 'tidal.dev/rollout': 'halt' }) });
    expect(p.events).toEqual([
      {
        type: 'Warning',
        reason: 'RolloutControlInvalid',
        message: 'Ignoring tidal.dev/rollout="halt": expected pause, resume, promote or abort, optionally followed by :<revision>.',
      },
    ]);
  });
});
