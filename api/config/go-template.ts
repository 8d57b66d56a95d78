// The one lexer for the Go text/template strings config maps carry: config-defaults' container-name templates
// (defaults.ts) and config-network's domain and tag templates (network.ts). It splits a template into literal text
// and action bodies the way Go's text/template lexer does for the subset Tidal executes; each caller then parses the
// action bodies against its own value struct. Pure.
//
// Handled as in Go: trim markers (`{{- ` drops the whitespace before the action, ` -}}` the whitespace after it;
// the dash must touch the delimiter and be followed/preceded by an ASCII space), comments `{{/* … */}}` (dropped;
// they may span lines and must end right before the closing delimiter, with an optional trim marker), and a "}}"
// inside a quoted string, raw string or character literal does not close the action.

/** A lexed piece of a template: literal text, or the trimmed body of one `{{ … }}` action (comments are dropped). */
export type GoTemplateSegment = { kind: 'text'; text: string } | { kind: 'action'; body: string };

/** Go's isSpace for trim markers: space, tab, carriage return, newline. */
const isGoSpace = (c: string | undefined): boolean => c === ' ' || c === '\t' || c === '\r' || c === '\n';

/** Splits a Go template into text and action bodies, applying trim markers. Returns an error message on bad syntax. */
export function lexGoTemplate(src: string): GoTemplateSegment[] | string {
  const out: GoTemplateSegment[] = [];
  let pos = 0;
  let trimNext = false;
  while (pos <= src.length) {
    const open = src.indexOf('{{', pos);
    let text = src.slice(pos, open === -1 ? src.length : open);
    if (trimNext) text = text.replace(/^[ \t\r\n]+/u, '');
    trimNext = false;
    if (open === -1) {
      if (text !== '') out.push({ kind: 'text', text });
      break;
    }
    let i = open + 2;
    if (src[i] === '-' && isGoSpace(src[i + 1])) {
      text = text.replace(/[ \t\r\n]+$/u, '');
      i += 2;
    }
    if (text !== '') out.push({ kind: 'text', text });
    // Find the closing delimiter outside string, raw-string and character literals (and inside comments, "*/" first).
    let j = i;
    while (isGoSpace(src[j])) j++;
    if (src.startsWith('/*', j)) {
      const end = src.indexOf('*/', j + 2);
      if (end === -1) return 'unclosed comment';
      let close = end + 2;
      if (isGoSpace(src[close]) && src[close + 1] === '-') {
        close += 2;
        trimNext = true;
      }
      if (!src.startsWith('}}', close)) return 'comment ends before closing delimiter';
      pos = close + 2;
      continue;
    }
    let close = -1;
    let quote: string | undefined;
    for (let k = i; k < src.length; k++) {
      const c = src[k];
      if (quote !== undefined) {
        if (c === '\\' && quote !== '`') k++;
        else if (c === quote) quote = undefined;
        continue;
      }
      if (c === '"' || c === '`' || c === "'") quote = c;
      else if (c === '}' && src[k + 1] === '}') {
        close = k;
        break;
      }
    }
    if (quote !== undefined) return 'unterminated quoted string';
    if (close === -1) return 'unclosed action: missing "}}"';
    let body = src.slice(i, close);
    if (body.length >= 2 && body.endsWith('-') && isGoSpace(body[body.length - 2])) {
      body = body.slice(0, -2);
      trimNext = true;
    }
    out.push({ kind: 'action', body: body.trim() });
    pos = close + 2;
  }
  return out;
}
