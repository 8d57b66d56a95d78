// Knative's apis.FieldError (knative/pkg apis/field_error.go) as plain data: where a validation failed (a field path
// such as `spec.template.spec.containers[0].ports`) and why, plus the constructors and the rendering the webhook
// sends back. Pure.

/** One validation failure: where (Knative's field path; several paths joined by ", ") and why. */
export interface FieldError {
  path: string;
  message: string;
  details?: string;
}

/** Joins a field onto a path the way FieldError.ViaField does: `a.b`, `a[0]`; empty parts vanish. */
export function at(path: string, field: string): string {
  if (path === '') return field;
  if (field === '') return path;
  return field.startsWith('[') ? `${path}${field}` : `${path}.${field}`;
}

/** `errs` moved under `prefix` (every path of every error, as ViaField does; a pathless error stays pathless). */
export function via(prefix: string, errs: readonly FieldError[]): FieldError[] {
  return errs.map((e) => ({
    ...e,
    path: pathsOf(e)
      .map((p) => at(prefix, p))
      .join(', '),
  }));
}

const withDetails = (e: FieldError, details: string | undefined): FieldError => (details !== undefined && details !== '' ? { ...e, details } : e);

/** apis.ErrMissingField */
export const missing = (...paths: string[]): FieldError => ({ path: paths.join(', '), message: 'missing field(s)' });
/** apis.ErrDisallowedFields */
export const disallowed = (...paths: string[]): FieldError => ({ path: paths.join(', '), message: 'must not set the field(s)' });
/** apis.ErrInvalidValue: "invalid value: <value>" (Go's fmt.Sprint of the value). */
export const invalid = (value: unknown, path: string, details?: string): FieldError =>
  withDetails({ path, message: `invalid value: ${String(value)}` }, details);
/** apis.ErrOutOfBoundsValue: "expected <lo> <= <value> <= <hi>". */
export const outOfBounds = (value: unknown, lo: unknown, hi: unknown, path: string): FieldError => ({
  path,
  message: `expected ${String(lo)} <= ${String(value)} <= ${String(hi)}`,
});
/** apis.ErrMultipleOneOf */
export const multipleOneOf = (...paths: string[]): FieldError => ({ path: paths.join(', '), message: 'expected exactly one, got both' });
/** apis.ErrMissingOneOf */
export const missingOneOf = (...paths: string[]): FieldError => ({ path: paths.join(', '), message: 'expected exactly one, got neither' });
/** apis.ErrInvalidKeyName: `invalid key name "<key>"`. */
export const invalidKeyName = (key: string, path: string, details?: string): FieldError =>
  withDetails({ path, message: `invalid key name ${JSON.stringify(key)}` }, details);
/** apis.ErrGeneric */
export const generic = (message: string, path = '', details?: string): FieldError => withDetails({ path, message }, details);

/** The paths of one error; none for a pathless one (Knative prints those as "message: "). */
export function pathsOf(e: FieldError): string[] {
  return e.path === '' ? [] : e.path.split(', ');
}

/**
 * FieldError.WrappedErrors: errors with the same message and details become one with all their paths (deduplicated,
 * sorted), and the result is sorted by message, then details — the order the webhook's answer lists them in.
 */
export function mergeFieldErrors(errs: readonly FieldError[]): FieldError[] {
  const byKey = new Map<string, { message: string; details: string | undefined; paths: string[] }>();
  for (const e of errs) {
    const key = JSON.stringify([e.message, e.details ?? '']);
    const merged = byKey.get(key) ?? { message: e.message, details: e.details, paths: [] };
    for (const p of pathsOf(e)) if (!merged.paths.includes(p)) merged.paths.push(p);
    byKey.set(key, merged);
  }
  const out = [...byKey.values()].map((m) => withDetails({ path: [...m.paths].sort(goLess).join(', '), message: m.message }, m.details));
  return out.sort((a, b) => (a.message !== b.message ? goLess(a.message, b.message) : goLess(a.details ?? '', b.details ?? '')));
}

/** Go's byte-wise string order (not the locale's). */
function goLess(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** FieldError.Error(): the merged errors, each "message: path" with its details on the next line. */
export function formatFieldErrors(errs: readonly FieldError[]): string {
  return mergeFieldErrors(errs)
    .map((e) => `${e.message}: ${e.path}${e.details !== undefined ? `\n${e.details}` : ''}`)
    .join('\n');
}
