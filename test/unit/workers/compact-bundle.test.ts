// The workflow bundle made compact at build time: ASCII only, the same behaviour, the map without source texts.
import vm from 'node:vm';
import { describe, expect, it } from 'vitest';
import { asciiOnly, compactWorkflowBundle } from '../../../workers/compact-bundle.js';

// Non-ASCII in a comment, a string, a template, a regular expression and an astral character (two UTF-16 units).
const code = [
  '// a comment — with a dash → and an arrow',
  "var out = { dash: 'a — b', template: `→ ${1 + 1}`, matches: /[—]/.test('x—y'), emoji: '😀'.length, cut: 'é'.codePointAt(0) };",
  '',
].join('\n');
const map = {
  version: 3,
  file: 'bundle.js',
  sources: ['a.ts', 'b.ts'],
  sourcesContent: ['const a = 1;', 'const b = 2;'],
  names: ['out'],
  mappings: 'AAAA;AACA',
};
const bundle = `${code}//# sourceMappingURL=data:application/json;charset=utf-8;base64,${Buffer.from(JSON.stringify(map)).toString('base64')}\n`;

const run = (js: string) => {
  const ctx: { out?: unknown } = {};
  vm.runInNewContext(js, ctx);
  return ctx.out;
};
const inlineMap = (js: string) =>
  JSON.parse(Buffer.from(js.slice(js.indexOf('base64,') + 7).trim(), 'base64').toString('utf8')) as Record<string, unknown>;

describe('compactWorkflowBundle', () => {
  it('leaves only ASCII and the same behaviour', () => {
    const compact = compactWorkflowBundle(bundle);
    expect(compact).toMatch(/^[\x20-\x7e\n]*$/);
    expect(run(compact)).toEqual(run(bundle));
    expect(run(compact)).toEqual({ dash: 'a — b', template: '→ 2', matches: true, emoji: 2, cut: 233 });
  });

  it('keeps the source map inline with its positions, sources and names, and drops the source texts', () => {
    const compact = compactWorkflowBundle(bundle);
    expect(compact.endsWith('\n')).toBe(true);
    expect(compact.split('\n').length).toBe(bundle.split('\n').length);
    const { sourcesContent, ...kept } = map;
    expect(sourcesContent).toHaveLength(2);
    expect(inlineMap(compact)).toEqual(kept);
  });

  it('refuses a bundle without an inline source map, which the worker could not load', () => {
    expect(() => compactWorkflowBundle(code)).toThrow(/no inline source map/);
  });
});

describe('asciiOnly', () => {
  it('writes each UTF-16 unit outside ASCII as an escape and leaves ASCII alone', () => {
    expect(asciiOnly('a—b😀 c')).toBe('a\\u2014b\\ud83d\\ude00 c');
    expect(asciiOnly('plain\tascii ~')).toBe('plain\tascii ~');
  });
});
