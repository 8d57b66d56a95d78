import { describe, expect, it } from 'vitest';
import { applyJsonPatch, diffJson, escapePointerToken } from '../../../webhook/json-patch.js';

describe('escapePointerToken', () => {
  it('escapes ~ before /, as RFC 6901 requires', () => {
    expect(escapePointerToken('serving.knative.dev/creator')).toBe('serving.knative.dev~1creator');
    expect(escapePointerToken('a~b')).toBe('a~0b');
    expect(escapePointerToken('~/')).toBe('~0~1');
    expect(escapePointerToken('plain')).toBe('plain');
  });
});

describe('diffJson', () => {
  it('is empty for equal documents, ignoring undefined members', () => {
    expect(diffJson({ a: 1, b: [1, { c: 'x' }] }, { a: 1, b: [1, { c: 'x' }], d: undefined })).toEqual([]);
  });

  it('adds, replaces and removes object members at escaped paths', () => {
    const from = { metadata: { name: 'n', annotations: { old: 'x' } }, spec: { a: 1 } };
    const to = { metadata: { name: 'n', annotations: { 'serving.knative.dev/creator': 'alice' } }, spec: { a: 2, b: { c: true } } };
    expect(diffJson(from, to)).toEqual([
      { op: 'remove', path: '/metadata/annotations/old' },
      { op: 'add', path: '/metadata/annotations/serving.knative.dev~1creator', value: 'alice' },
      { op: 'replace', path: '/spec/a', value: 2 },
      { op: 'add', path: '/spec/b', value: { c: true } },
    ]);
  });

  it('diffs arrays of equal length element by element and replaces arrays whose length changed', () => {
    expect(diffJson({ c: [{ name: '' }, { name: 'x' }] }, { c: [{ name: 'user-container' }, { name: 'x' }] })).toEqual([
      { op: 'replace', path: '/c/0/name', value: 'user-container' },
    ]);
    expect(diffJson({ t: [] }, { t: [{ percent: 100, latestRevision: true }] })).toEqual([
      { op: 'replace', path: '/t', value: [{ percent: 100, latestRevision: true }] },
    ]);
  });

  it('replaces a value whose type changed, and the root when it is not an object', () => {
    expect(diffJson({ a: { b: 1 } }, { a: [1] })).toEqual([{ op: 'replace', path: '/a', value: [1] }]);
    expect(diffJson(1, 2)).toEqual([{ op: 'replace', path: '', value: 2 }]);
  });

  it('produces patches that turn the source into the target', () => {
    const cases: [unknown, unknown][] = [
      [{}, { a: { 'x/y': { '~': [1, 2, { z: null }] } } }],
      [
        { a: [1, 2, 3], b: 'keep', c: { d: 1 } },
        { a: [1, 5, 3], b: 'keep' },
      ],
      [
        { spec: { template: { spec: { containers: [{ image: 'i' }] } } } },
        {
          spec: {
            template: {
              spec: { containers: [{ image: 'i', name: 'user-container', readinessProbe: { tcpSocket: { port: 0 } } }], timeoutSeconds: 300 },
            },
            traffic: [{ latestRevision: true, percent: 100 }],
          },
        },
      ],
    ];
    for (const [from, to] of cases) expect(applyJsonPatch(from, diffJson(from, to))).toEqual(to);
  });

  it('does not modify its inputs', () => {
    const from = { a: { b: 1 } };
    const to = { a: { b: 2, c: [1] } };
    applyJsonPatch(from, diffJson(from, to));
    expect(from).toEqual({ a: { b: 1 } });
    expect(to).toEqual({ a: { b: 2, c: [1] } });
  });
});
