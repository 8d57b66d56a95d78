import { describe, expect, it } from 'vitest';

import { lexGoTemplate } from '../../../api/config/go-template.js';
import { renderNameTemplate } from '../../../api/config/defaults.js';

describe('lexGoTemplate (the one lexer of config-defaults and config-network templates)', () => {
  it('splits text and trimmed action bodies', () => {
    expect(lexGoTemplate('a{{ .Name }}b{{index .Labels "x"}}')).toEqual([
      { kind: 'text', text: 'a' },
      { kind: 'action', body: '.Name' },
      { kind: 'text', text: 'b' },
      { kind: 'action', body: 'index .Labels "x"' },
    ]);
    expect(lexGoTemplate('')).toEqual([]);
  });

  it('applies trim markers only with a space beside the dash, as Go does', () => {
    expect(lexGoTemplate('a \n{{- .Name -}}\t b')).toEqual([
      { kind: 'text', text: 'a' },
      { kind: 'action', body: '.Name' },
      { kind: 'text', text: 'b' },
    ]);
    expect(lexGoTemplate('a {{-3}} b')).toEqual([
      { kind: 'text', text: 'a ' },
      { kind: 'action', body: '-3' },
      { kind: 'text', text: ' b' },
    ]);
  });

  it('drops comments, honouring their trim markers', () => {
    expect(lexGoTemplate('x {{- /* one\ntwo */ -}} y')).toEqual([
      { kind: 'text', text: 'x' },
      { kind: 'text', text: 'y' },
    ]);
    expect(lexGoTemplate('{{/* c */ .Name}}')).toBe('comment ends before closing delimiter');
    expect(lexGoTemplate('{{/* c }}')).toBe('unclosed comment');
  });

  it('does not close an action on "}}" inside a quoted string, raw string or character literal', () => {
    expect(lexGoTemplate('{{index .Labels "a}}b"}}')).toEqual([{ kind: 'action', body: 'index .Labels "a}}b"' }]);
    expect(lexGoTemplate('{{`}}`}}')).toEqual([{ kind: 'action', body: '`}}`' }]);
    expect(lexGoTemplate('{{index .Labels "a')).toBe('unterminated quoted string');
    expect(lexGoTemplate('{{.Name')).toBe('unclosed action: missing "}}"');
  });

  it('serves the container-name templates too (a quoted "}}" key works there now)', () => {
    expect(renderNameTemplate('{{index .Labels "a}}b"}}-c', { labels: { 'a}}b': 'v' } })).toBe('v-c');
  });
});
