import { describe, expect, it } from 'vitest';
import {
  beginReconcile,
  cloneJson,
  conditionSet,
  endReconcile,
  NewObservedGenFailureMessage,
  NewObservedGenFailureReason,
  statusEqual,
} from '../../../api/conditions.js';
import type { Status } from '../../../api/serving.js';

const T0 = '2025-01-01T00:00:00Z';
const T1 = '2025-01-01T00:01:00Z';
const T2 = '2025-01-01T00:02:00Z';
const T3 = '2025-01-01T00:03:00Z';

const set = conditionSet('Ready', 'A', 'B');

describe('conditionSet construction', () => {
  it('drops duplicates and the happy type from the dependents', () => {
    const s = conditionSet('Ready', 'A', 'Ready', 'B', 'A');
    expect(s.happy).toBe('Ready');
    expect(s.dependents).toEqual(['A', 'B']);
    expect(s.severity('Ready')).toBe('');
    expect(s.severity('A')).toBe('');
    expect(s.severity('Active')).toBe('Info');
  });
});

describe('initialize', () => {
  it('adds Ready and every dependent as Unknown, sorted by type, without severity for Error conditions', () => {
    const status: Status = {};
    set.initialize(status, T0);
    expect(status).toEqual({
      conditions: [
        { type: 'A', status: 'Unknown', lastTransitionTime: T0 },
        { type: 'B', status: 'Unknown', lastTransitionTime: T0 },
        { type: 'Ready', status: 'Unknown', lastTransitionTime: T0 },
      ],
    });
    expect(status.conditions?.[0]).not.toHaveProperty('severity');
    expect(status.conditions?.[0]).not.toHaveProperty('reason');
  });

  it('initializes missing dependents to True when Ready is already True, keeping existing ones', () => {
    const status: Status = {
      conditions: [
        { type: 'A', status: 'False', reason: 'X', lastTransitionTime: T0 },
        { type: 'Ready', status: 'True', lastTransitionTime: T0 },
      ],
    };
    set.initialize(status, T1);
    expect(status.conditions).toEqual([
      { type: 'A', status: 'False', reason: 'X', lastTransitionTime: T0 },
      { type: 'B', status: 'True', lastTransitionTime: T1 },
      { type: 'Ready', status: 'True', lastTransitionTime: T0 },
    ]);
  });

  it('is a no-op on an initialized status (timestamps kept)', () => {
    const status: Status = {};
    set.initialize(status, T0);
    const before = cloneJson(status);
    set.initialize(status, T1);
    expect(status).toEqual(before);
  });
});

describe('markTrue and Ready recomputation', () => {
  it('one dependent True, the other Unknown → Ready Unknown copying the Unknown one', () => {
    const status: Status = {};
    set.initialize(status, T0);
    set.markUnknown(status, 'B', 'Waiting', 'still waiting', T1);
    set.markTrue(status, 'A', T2);
    expect(status.conditions).toEqual([
      { type: 'A', status: 'True', lastTransitionTime: T2 },
      { type: 'B', status: 'Unknown', reason: 'Waiting', message: 'still waiting', lastTransitionTime: T1 },
      { type: 'Ready', status: 'Unknown', reason: 'Waiting', message: 'still waiting', lastTransitionTime: T1 },
    ]);
  });

  it('all dependents True → Ready True', () => {
    const status: Status = {};
    set.initialize(status, T0);
    set.markTrue(status, 'A', T1);
    set.markTrue(status, 'B', T2);
    expect(status.conditions).toEqual([
      { type: 'A', status: 'True', lastTransitionTime: T1 },
      { type: 'B', status: 'True', lastTransitionTime: T2 },
      { type: 'Ready', status: 'True', lastTransitionTime: T2 },
    ]);
    expect(set.isHappy(status)).toBe(true);
  });

  it('fewer Error conditions than dependents → Ready Unknown without reason', () => {
    const status: Status = { conditions: [{ type: 'Ready', status: 'Unknown', reason: 'Old', lastTransitionTime: T0 }] };
    set.markTrue(status, 'A', T1);
    expect(status.conditions).toEqual([
      { type: 'A', status: 'True', lastTransitionTime: T1 },
      { type: 'Ready', status: 'Unknown', lastTransitionTime: T1 },
    ]);
  });

  it('an Error-severity False dependent wins over Unknown, the most recently transitioned False first', () => {
    const three = conditionSet('Ready', 'A', 'B', 'C');
    const base = (aTime: string, bTime: string): Status => ({
      conditions: [
        { type: 'A', status: 'False', reason: 'AFail', message: 'a failed', lastTransitionTime: aTime },
        { type: 'B', status: 'False', reason: 'BFail', message: 'b failed', lastTransitionTime: bTime },
        { type: 'C', status: 'Unknown', reason: 'CWait', lastTransitionTime: T3 },
        { type: 'Ready', status: 'Unknown', lastTransitionTime: T0 },
      ],
    });
    const bNewer = base(T1, T2);
    three.markTrue(bNewer, 'C', T3);
    expect(three.get(bNewer, 'Ready')).toEqual({ type: 'Ready', status: 'False', reason: 'BFail', message: 'b failed', lastTransitionTime: T3 });

    const aNewer = base(T2, T1);
    three.markTrue(aNewer, 'C', T3);
    expect(three.get(aNewer, 'Ready')).toEqual({ type: 'Ready', status: 'False', reason: 'AFail', message: 'a failed', lastTransitionTime: T3 });
  });

  it('compares transition times as instants, not strings', () => {
    const three = conditionSet('Ready', 'A', 'B', 'C');
    const status: Status = {
      conditions: [
        // 00:30 UTC, written with an offset: later than B.
        { type: 'A', status: 'False', reason: 'AFail', lastTransitionTime: '2025-01-01T01:30:00+01:00' },
        { type: 'B', status: 'False', reason: 'BFail', lastTransitionTime: '2025-01-01T00:20:00Z' },
        { type: 'Ready', status: 'Unknown', lastTransitionTime: T0 },
      ],
    };
    three.markTrue(status, 'C', T3);
    expect(three.get(status, 'Ready')?.reason).toBe('AFail');
  });

  it('markTrueWithReason sets True with a reason and recomputes Ready', () => {
    const status: Status = {};
    set.initialize(status, T0);
    set.markTrue(status, 'A', T1);
    set.markTrueWithReason(status, 'B', 'TLSNotEnabled', 'TLS is off', T2);
    expect(status.conditions).toEqual([
      { type: 'A', status: 'True', lastTransitionTime: T1 },
      { type: 'B', status: 'True', reason: 'TLSNotEnabled', message: 'TLS is off', lastTransitionTime: T2 },
      { type: 'Ready', status: 'True', lastTransitionTime: T2 },
    ]);
  });
});

describe('markFalse / markUnknown', () => {
  it('markFalse on a dependent sets it and Ready False with the same reason and message', () => {
    const status: Status = {};
    set.initialize(status, T0);
    set.markFalse(status, 'A', 'Broken', 'it broke', T1);
    expect(status.conditions).toEqual([
      { type: 'A', status: 'False', reason: 'Broken', message: 'it broke', lastTransitionTime: T1 },
      { type: 'B', status: 'Unknown', lastTransitionTime: T0 },
      { type: 'Ready', status: 'False', reason: 'Broken', message: 'it broke', lastTransitionTime: T1 },
    ]);
  });

  it('markUnknown keeps Ready False (reason and time untouched) when another dependent is False', () => {
    const status: Status = {};
    set.initialize(status, T0);
    set.markFalse(status, 'A', 'Broken', 'it broke', T1);
    set.markUnknown(status, 'B', 'Waiting', 'waiting', T2);
    expect(status.conditions).toEqual([
      { type: 'A', status: 'False', reason: 'Broken', message: 'it broke', lastTransitionTime: T1 },
      { type: 'B', status: 'Unknown', reason: 'Waiting', message: 'waiting', lastTransitionTime: T2 },
      { type: 'Ready', status: 'False', reason: 'Broken', message: 'it broke', lastTransitionTime: T1 },
    ]);
  });

  it('markUnknown turns a non-False Ready False, with its own reason, when another dependent is False', () => {
    const status: Status = {
      conditions: [
        { type: 'A', status: 'False', reason: 'Broken', lastTransitionTime: T0 },
        { type: 'B', status: 'True', lastTransitionTime: T0 },
        { type: 'Ready', status: 'Unknown', lastTransitionTime: T0 },
      ],
    };
    set.markUnknown(status, 'B', 'Waiting', 'waiting', T1);
    expect(set.get(status, 'Ready')).toEqual({ type: 'Ready', status: 'False', reason: 'Waiting', message: 'waiting', lastTransitionTime: T1 });
  });

  it('markUnknown on a dependent with no False dependent → Ready Unknown with its reason/message', () => {
    const status: Status = {};
    set.initialize(status, T0);
    set.markTrue(status, 'A', T1);
    set.markTrue(status, 'B', T1);
    set.markUnknown(status, 'A', 'Deploying', '', T2);
    expect(status.conditions).toEqual([
      { type: 'A', status: 'Unknown', reason: 'Deploying', lastTransitionTime: T2 },
      { type: 'B', status: 'True', lastTransitionTime: T1 },
      { type: 'Ready', status: 'Unknown', reason: 'Deploying', lastTransitionTime: T2 },
    ]);
  });
});

describe('non-dependent conditions (severity Info)', () => {
  it('are written with severity Info and never change Ready', () => {
    const status: Status = {};
    set.initialize(status, T0);
    set.markTrue(status, 'A', T1);
    set.markTrue(status, 'B', T1);
    set.markFalse(status, 'Active', 'NoTraffic', 'The target is not receiving traffic.', T2);
    set.markUnknown(status, 'Other', 'Queued', 'queued', T2);
    expect(status.conditions).toEqual([
      { type: 'A', status: 'True', lastTransitionTime: T1 },
      {
        type: 'Active',
        status: 'False',
        severity: 'Info',
        reason: 'NoTraffic',
        message: 'The target is not receiving traffic.',
        lastTransitionTime: T2,
      },
      { type: 'B', status: 'True', lastTransitionTime: T1 },
      { type: 'Other', status: 'Unknown', severity: 'Info', reason: 'Queued', message: 'queued', lastTransitionTime: T2 },
      { type: 'Ready', status: 'True', lastTransitionTime: T1 },
    ]);
  });

  it('an Info False condition is ignored when Ready is recomputed', () => {
    const status: Status = {};
    set.initialize(status, T0);
    set.markFalse(status, 'Active', 'NoTraffic', '', T1);
    set.markTrue(status, 'A', T2);
    set.markTrue(status, 'B', T2);
    expect(set.get(status, 'Ready')).toEqual({ type: 'Ready', status: 'True', lastTransitionTime: T2 });
  });
});

describe('lastTransitionTime and ordering', () => {
  it('does not change when status, reason, message and severity are unchanged', () => {
    const status: Status = {};
    set.initialize(status, T0);
    set.markFalse(status, 'A', 'Broken', 'it broke', T1);
    set.markFalse(status, 'A', 'Broken', 'it broke', T2);
    expect(set.get(status, 'A')?.lastTransitionTime).toBe(T1);
    expect(set.get(status, 'Ready')?.lastTransitionTime).toBe(T1);
  });

  it('changes when only the reason or the message changes', () => {
    const status: Status = {};
    set.initialize(status, T0);
    set.markFalse(status, 'A', 'Broken', 'it broke', T1);
    set.markFalse(status, 'A', 'Broken', 'it broke again', T2);
    expect(set.get(status, 'A')).toEqual({ type: 'A', status: 'False', reason: 'Broken', message: 'it broke again', lastTransitionTime: T2 });
    set.markFalse(status, 'A', 'Smashed', 'it broke again', T3);
    expect(set.get(status, 'A')?.lastTransitionTime).toBe(T3);
  });

  it('changes when only the severity changes', () => {
    const status: Status = { conditions: [{ type: 'A', status: 'True', severity: 'Info', lastTransitionTime: T0 }] };
    set.markTrue(status, 'A', T1);
    expect(set.get(status, 'A')).toEqual({ type: 'A', status: 'True', lastTransitionTime: T1 });
  });

  it('treats an absent and an empty reason as equal', () => {
    const status: Status = { conditions: [{ type: 'A', status: 'Unknown', reason: '', message: '', lastTransitionTime: T0 }] };
    set.markUnknown(status, 'A', '', '', T1);
    expect(set.get(status, 'A')?.lastTransitionTime).toBe(T0);
  });

  it('re-sorts the conditions by type on a change', () => {
    const status: Status = {
      conditions: [
        { type: 'Ready', status: 'Unknown', lastTransitionTime: T0 },
        { type: 'B', status: 'Unknown', lastTransitionTime: T0 },
        { type: 'A', status: 'Unknown', lastTransitionTime: T0 },
      ],
    };
    set.markUnknown(status, 'Active', 'X', '', T1);
    expect(status.conditions?.map((c) => c.type)).toEqual(['A', 'Active', 'B', 'Ready']);
  });

  it('get returns a copy', () => {
    const status: Status = {};
    set.initialize(status, T0);
    const got = set.get(status, 'A');
    got!.status = 'True';
    expect(set.get(status, 'A')?.status).toBe('Unknown');
    expect(set.get(status, 'Missing')).toBeUndefined();
    expect(set.isHappy(undefined)).toBe(false);
  });
});

describe('a set with no dependents (Configuration)', () => {
  const ready = conditionSet('Ready');
  it('markTrue(Ready) → True; markUnknown(Ready, "", "") → Unknown without reason', () => {
    const status: Status = {};
    ready.initialize(status, T0);
    expect(status.conditions).toEqual([{ type: 'Ready', status: 'Unknown', lastTransitionTime: T0 }]);
    ready.markTrue(status, 'Ready', T1);
    expect(status.conditions).toEqual([{ type: 'Ready', status: 'True', lastTransitionTime: T1 }]);
    ready.markUnknown(status, 'Ready', '', '', T2);
    expect(status.conditions).toEqual([{ type: 'Ready', status: 'Unknown', lastTransitionTime: T2 }]);
    ready.markFalse(status, 'Ready', 'RevisionFailed', 'boom', T3);
    expect(status.conditions).toEqual([{ type: 'Ready', status: 'False', reason: 'RevisionFailed', message: 'boom', lastTransitionTime: T3 }]);
  });
});

describe('beginReconcile / endReconcile', () => {
  it('a new object: initializes and marks Ready Unknown NewObservedGenFailure; no previous status', () => {
    const obj: { metadata: { generation?: number }; status?: Status } = { metadata: { generation: 1 } };
    const before = beginReconcile(obj, set, T0);
    expect(before).toBeUndefined();
    expect(obj.status).toEqual({
      conditions: [
        { type: 'A', status: 'Unknown', lastTransitionTime: T0 },
        { type: 'B', status: 'Unknown', lastTransitionTime: T0 },
        {
          type: 'Ready',
          status: 'Unknown',
          reason: NewObservedGenFailureReason,
          message: NewObservedGenFailureMessage,
          lastTransitionTime: T0,
        },
      ],
    });
    expect(NewObservedGenFailureReason).toBe('NewObservedGenFailure');
    expect(NewObservedGenFailureMessage).toBe('unsuccessfully observed a new generation');
  });

  it('an observed generation: only initializes, and returns a deep copy of the status as read', () => {
    const status: Status = {
      observedGeneration: 2,
      conditions: [
        { type: 'A', status: 'True', lastTransitionTime: T0 },
        { type: 'Ready', status: 'True', lastTransitionTime: T0 },
      ],
    };
    const obj = { metadata: { generation: 2 }, status };
    const before = beginReconcile(obj, set, T1);
    expect(before).toEqual({
      observedGeneration: 2,
      conditions: [
        { type: 'A', status: 'True', lastTransitionTime: T0 },
        { type: 'Ready', status: 'True', lastTransitionTime: T0 },
      ],
    });
    expect(before).not.toBe(status);
    expect(obj.status.conditions).toEqual([
      { type: 'A', status: 'True', lastTransitionTime: T0 },
      { type: 'B', status: 'True', lastTransitionTime: T1 },
      { type: 'Ready', status: 'True', lastTransitionTime: T0 },
    ]);
  });

  it('a new generation while a dependent is False → Ready False NewObservedGenFailure (markUnknown semantics)', () => {
    const obj = {
      metadata: { generation: 3 },
      status: {
        observedGeneration: 2,
        conditions: [
          { type: 'A', status: 'False', reason: 'Broken', lastTransitionTime: T0 },
          { type: 'B', status: 'True', lastTransitionTime: T0 },
          { type: 'Ready', status: 'False', reason: 'Broken', lastTransitionTime: T0 },
        ],
      } as Status,
    };
    beginReconcile(obj, set, T1);
    expect(set.get(obj.status, 'Ready')).toEqual({
      type: 'Ready',
      status: 'False',
      reason: 'NewObservedGenFailure',
      message: 'unsuccessfully observed a new generation',
      lastTransitionTime: T1,
    });
  });

  it('endReconcile sets observedGeneration and keeps the old timestamp of conditions that ended unchanged', () => {
    const obj = {
      metadata: { generation: 4 },
      status: {
        observedGeneration: 3,
        conditions: [
          { type: 'A', status: 'True', lastTransitionTime: T0 },
          { type: 'B', status: 'True', lastTransitionTime: T0 },
          { type: 'Ready', status: 'True', lastTransitionTime: T0 },
        ],
      } as Status,
    };
    const before = beginReconcile(obj, set, T1);
    // Ready flipped to Unknown NewObservedGenFailure and back; B changed for real.
    set.markTrue(obj.status, 'A', T1);
    set.markUnknown(obj.status, 'B', 'Deploying', '', T1);
    set.markTrue(obj.status, 'B', T1);
    set.markFalse(obj.status, 'B', 'Broken', 'x', T1);
    endReconcile(obj, before, T2);
    expect(obj.status).toEqual({
      observedGeneration: 4,
      conditions: [
        { type: 'A', status: 'True', lastTransitionTime: T0 },
        { type: 'B', status: 'False', reason: 'Broken', message: 'x', lastTransitionTime: T2 },
        { type: 'Ready', status: 'False', reason: 'Broken', message: 'x', lastTransitionTime: T2 },
      ],
    });
  });

  it('a full no-op reconcile leaves the status semantically equal to what was read', () => {
    const obj = {
      metadata: { generation: 1 },
      status: {
        observedGeneration: 1,
        conditions: [
          { type: 'A', status: 'True', lastTransitionTime: T0 },
          { type: 'B', status: 'True', lastTransitionTime: T0 },
          { type: 'Ready', status: 'True', lastTransitionTime: T0 },
        ],
      } as Status,
    };
    const before = beginReconcile(obj, set, T1);
    set.markUnknown(obj.status, 'A', 'Deploying', '', T1);
    set.markTrue(obj.status, 'A', T1);
    endReconcile(obj, before, T2);
    expect(statusEqual(before, obj.status)).toBe(true);
  });

  it('endReconcile on an object without generation leaves observedGeneration absent (omitempty)', () => {
    const obj: { metadata: { generation?: number }; status?: Status } = { metadata: {} };
    const before = beginReconcile(obj, set, T0);
    endReconcile(obj, before, T1);
    expect(obj.status).not.toHaveProperty('observedGeneration');
    // Brand-new conditions get the groomed `now`.
    expect(obj.status?.conditions?.every((c) => c.lastTransitionTime === T1)).toBe(true);
  });
});

describe('statusEqual', () => {
  it('ignores key order, nothing else', () => {
    expect(statusEqual({ a: 1, b: { c: [1, 2] } }, { b: { c: [1, 2] }, a: 1 })).toBe(true);
    expect(statusEqual({ a: [1, 2] }, { a: [2, 1] })).toBe(false);
    expect(statusEqual({ a: 1 }, { a: 1, b: 2 })).toBe(false);
    expect(statusEqual({ a: '1' }, { a: 1 })).toBe(false);
    expect(statusEqual({ a: [] }, {})).toBe(false);
    expect(statusEqual({ a: null }, {})).toBe(false);
  });

  it('treats a property set to undefined as absent', () => {
    expect(statusEqual({ a: 1, b: undefined }, { a: 1 })).toBe(true);
    expect(statusEqual(undefined, undefined)).toBe(true);
    expect(statusEqual(undefined, {})).toBe(false);
  });

  it('compares conditions field by field', () => {
    const a: Status = { observedGeneration: 1, conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: T0 }] };
    const b: Status = { conditions: [{ lastTransitionTime: T0, status: 'True', type: 'Ready' }], observedGeneration: 1 };
    expect(statusEqual(a, b)).toBe(true);
    expect(statusEqual(a, { ...b, conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: T1 }] })).toBe(false);
  });
});
