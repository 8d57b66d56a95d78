// The watch bookmark: parsed from and written to the Lease annotation, compared with objects' versions, moved up.
import { describe, expect, it } from 'vitest';
import { advanceBookmark, BookmarkAnnotation, formatBookmark, parseBookmark, writtenAfter } from '../../../watcher/bookmark.js';

const at = (resourceVersion: string | undefined) => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name: 'x', ...(resourceVersion !== undefined ? { resourceVersion } : {}) },
});

describe('watch bookmark', () => {
  it('round-trips through its annotation, kinds in a fixed order; a bad or absent one is none', () => {
    const text = formatBookmark({ Service: '20', ConfigMap: '5', Revision: '19' });
    expect(text).toBe('{"ConfigMap":"5","Revision":"19","Service":"20"}');
    expect(parseBookmark({ [BookmarkAnnotation]: text })).toEqual({ ConfigMap: '5', Revision: '19', Service: '20' });
    expect(parseBookmark(undefined)).toBeUndefined();
    expect(parseBookmark({ [BookmarkAnnotation]: 'not json' })).toBeUndefined();
    expect(parseBookmark({ [BookmarkAnnotation]: '[1]' })).toBeUndefined();
    // A version that is not a number is dropped: its kind is then listed whole.
    expect(parseBookmark({ [BookmarkAnnotation]: '{"Service":"abc","Route":"7","Pod":3}' })).toEqual({ Route: '7' });
  });

  it("an object is written after the bookmark when its version is above its kind's, or either is missing or not a number", () => {
    const mark = { Service: '100' };
    expect(writtenAfter(mark, 'Service', at('99'))).toBe(false);
    expect(writtenAfter(mark, 'Service', at('100'))).toBe(false);
    expect(writtenAfter(mark, 'Service', at('101'))).toBe(true);
    // Compared as numbers, not as text.
    expect(writtenAfter(mark, 'Service', at('1000'))).toBe(true);
    expect(writtenAfter(mark, 'Route', at('5'))).toBe(true);
    expect(writtenAfter(undefined, 'Service', at('5'))).toBe(true);
    expect(writtenAfter(mark, 'Service', at(undefined))).toBe(true);
    expect(writtenAfter(mark, 'Service', at('x1'))).toBe(true);
  });

  it('moves each kind up to what was seen, never down, and ignores versions that are not numbers or 0', () => {
    const before = { Service: '100', Route: '50' };
    expect(advanceBookmark(before, { Service: '120', Route: '40', Pod: '90', Revision: '0', Ingress: undefined, Certificate: 'x' })).toEqual({
      Service: '120',
      Route: '50',
      Pod: '90',
    });
    expect(advanceBookmark(undefined, { Service: '7' })).toEqual({ Service: '7' });
  });
});
