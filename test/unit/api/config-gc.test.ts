// config-gc: Knative's defaults, `disabled`, and its validation messages (pkg/gc/config.go and its tests).
import { describe, expect, it } from 'vitest';
import { defaultGcConfig, describeGcConfig, GcDisabled, parseGcConfig } from '../../../api/config/index.js';
import { validateConfigMap } from '../../../api/config/validate.js';

const h = 3_600_000;

describe('parseGcConfig', () => {
  it("empty data is Knative's defaults: 48h, 15h, min 20, max 1000", () => {
    expect(parseGcConfig({})).toEqual({ ok: true, value: defaultGcConfig() });
    expect(defaultGcConfig()).toEqual({
      retainSinceCreateTimeMs: 48 * h,
      retainSinceLastActiveTimeMs: 15 * h,
      minNonActiveRevisions: 20,
      maxNonActiveRevisions: 1000,
    });
  });

  it('reads every key; empty strings keep the defaults of the durations and max', () => {
    expect(
      parseGcConfig({
        'retain-since-create-time': '17h',
        'retain-since-last-active-time': '1.5s',
        'min-non-active-revisions': '5',
        'max-non-active-revisions': '500',
      }),
    ).toEqual({
      ok: true,
      value: { retainSinceCreateTimeMs: 17 * h, retainSinceLastActiveTimeMs: 1500, minNonActiveRevisions: 5, maxNonActiveRevisions: 500 },
    });
    expect(parseGcConfig({ 'retain-since-create-time': '', 'retain-since-last-active-time': '', 'max-non-active-revisions': '' })).toEqual({
      ok: true,
      value: defaultGcConfig(),
    });
  });

  it("hakn's values: everything disabled but min 0 and max 0 (inactive Revisions go at once)", () => {
    expect(
      parseGcConfig({
        'retain-since-create-time': 'disabled',
        'retain-since-last-active-time': 'Disabled',
        'min-non-active-revisions': '0',
        'max-non-active-revisions': '0',
      }),
    ).toEqual({
      ok: true,
      value: { retainSinceCreateTimeMs: GcDisabled, retainSinceLastActiveTimeMs: GcDisabled, minNonActiveRevisions: 0, maxNonActiveRevisions: 0 },
    });
  });

  it('max may be disabled (case-insensitive); then min is not bounded by it', () => {
    expect(parseGcConfig({ 'max-non-active-revisions': 'DISABLED', 'min-non-active-revisions': '5000' })).toMatchObject({
      ok: true,
      value: { maxNonActiveRevisions: GcDisabled, minNonActiveRevisions: 5000 },
    });
  });

  it.each([
    [{ 'retain-since-create-time': 'invalid' }, 'retain-since-create-time', 'time: invalid duration "invalid"'],
    [{ 'retain-since-last-active-time': '-1s' }, 'retain-since-last-active-time', 'must be non-negative'],
    [{ 'retain-since-create-time': '-5m' }, 'retain-since-create-time', 'must be non-negative'],
    [{ 'min-non-active-revisions': 'disabled' }, 'min-non-active-revisions', 'strconv.ParseInt: parsing "disabled": invalid syntax'],
    [{ 'min-non-active-revisions': '-1' }, 'min-non-active-revisions', 'min-non-active-revisions must be non-negative, was: -1'],
    [{ 'max-non-active-revisions': '-1' }, 'max-non-active-revisions', 'strconv.ParseUint: parsing "-1": invalid syntax'],
    [{ 'max-non-active-revisions': '9223372036854775808' }, 'max-non-active-revisions', 'value should be lower than 9223372036854775807'],
    [
      { 'min-non-active-revisions': '20', 'max-non-active-revisions': '10' },
      'min-non-active-revisions',
      'min-non-active-revisions(20) must be <= max-non-active-revisions(10)',
    ],
  ])('refuses %j at %s: %s', (data, key, reason) => {
    expect(parseGcConfig(data)).toEqual({ ok: false, key, reason, error: `config-gc: ${key}: ${reason}` });
  });

  it('the admission webhook validates config-gc with the same parser', () => {
    expect(validateConfigMap('config-gc', { 'min-non-active-revisions': '-1' })).toEqual([
      { path: 'min-non-active-revisions', message: 'min-non-active-revisions must be non-negative, was: -1' },
    ]);
    expect(validateConfigMap('config-gc', { 'retain-since-create-time': '20s', 'min-non-active-revisions': '0' })).toEqual([]);
  });

  it('describes the settings in one line', () => {
    expect(
      describeGcConfig({
        retainSinceCreateTimeMs: 20_000,
        retainSinceLastActiveTimeMs: GcDisabled,
        minNonActiveRevisions: 0,
        maxNonActiveRevisions: GcDisabled,
      }),
    ).toBe('retain-since-create-time 20s, retain-since-last-active-time disabled, min-non-active-revisions 0, max-non-active-revisions disabled');
  });
});
