// The workflow bundle as the worker keeps it in memory for good. The SDK's bundler leaves the comments' em
// dashes and arrows in the code, which makes V8 hold the whole script, its inline source map included, as a two-byte
// string (twice its size), and it embeds every source file's text in the map (`sourcesContent`), which the worker
// only sends when `showStackTraceSources` is on (Tidal leaves it off). Escaping non-ASCII characters and dropping
// `sourcesContent` keeps the code's meaning and the map's positions (a line with an escape has its later columns
// shifted by 5 per escape, and those are comments in practice).
const mapMarker = '//# sourceMappingURL=data:';

/** `code` with every character outside ASCII written as a `\uXXXX` escape (one per UTF-16 unit). */
export function asciiOnly(code: string): string {
  return code.replace(/[\u0080-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** A bundle with an inline source map (what `bundleWorkflowCode` returns), made ASCII and without `sourcesContent`. */
export function compactWorkflowBundle(bundle: string): string {
  const at = bundle.lastIndexOf(mapMarker);
  const base64At = at < 0 ? -1 : bundle.indexOf('base64,', at);
  // The worker refuses a bundle without an inline map, so this would fail later anyway; say so at build time.
  if (base64At < 0) throw new Error('the workflow bundle has no inline source map');
  const map = JSON.parse(Buffer.from(bundle.slice(base64At + 'base64,'.length).trim(), 'base64').toString('utf8')) as Record<string, unknown>;
  delete map.sourcesContent;
  const encoded = Buffer.from(JSON.stringify(map), 'utf8').toString('base64');
  return `${asciiOnly(bundle.slice(0, at))}${mapMarker}application/json;charset=utf-8;base64,${encoded}\n`;
}
