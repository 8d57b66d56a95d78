// Kubernetes' name and reference rules as Knative's validation applies them (k8s.io/apimachinery validation,
// go-containerregistry's name.ParseReference, Go's path.Clean), with their exact messages. Pure.

const dns1035Fmt = '[a-z]([-a-z0-9]*[a-z0-9])?';
const dns1123LabelFmt = '[a-z0-9]([-a-z0-9]*[a-z0-9])?';
const dns1123SubdomainFmt = `${dns1123LabelFmt}(\\.${dns1123LabelFmt})*`;
const qualifiedNameFmt = '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]';

/** k8s IsDNS1035Label: the messages for an invalid label (empty when valid). */
export function dns1035LabelErrors(value: string): string[] {
  const errs: string[] = [];
  if (value.length > 63) errs.push('must be no more than 63 characters');
  if (!new RegExp(`^${dns1035Fmt}$`, 'u').test(value)) {
    errs.push(
      `a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '${dns1035Fmt}')`,
    );
  }
  return errs;
}

export function dns1123LabelErrors(value: string): string[] {
  const errs: string[] = [];
  if (value.length > 63) errs.push('must be no more than 63 characters');
  if (!new RegExp(`^${dns1123LabelFmt}$`, 'u').test(value)) {
    errs.push(
      `a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '${dns1123LabelFmt}')`,
    );
  }
  return errs;
}

export function dns1123SubdomainErrors(value: string): string[] {
  const errs: string[] = [];
  if (value.length > 253) errs.push('must be no more than 253 characters');
  if (!new RegExp(`^${dns1123SubdomainFmt}$`, 'u').test(value)) {
    errs.push(
      `a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '${dns1123SubdomainFmt}')`,
    );
  }
  return errs;
}

export function qualifiedNameErrors(value: string): string[] {
  const parts = value.split('/');
  let name = value;
  const errs: string[] = [];
  if (parts.length === 2) {
    const [prefix = '', n = ''] = parts;
    name = n;
    if (prefix === '') errs.push('prefix part must be non-empty');
    else errs.push(...dns1123SubdomainErrors(prefix).map((m) => `prefix part ${m}`));
  } else if (parts.length > 2) {
    return [
      `a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '${qualifiedNameFmt}') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`,
    ];
  }
  if (name === '') errs.push('name part must be non-empty');
  else {
    if (name.length > 63) errs.push('name part must be no more than 63 characters');
    if (!new RegExp(`^${qualifiedNameFmt}$`, 'u').test(name)) {
      errs.push(
        `name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '${qualifiedNameFmt}')`,
      );
    }
  }
  return errs;
}

/** Go's fmt.Sprint of a []string. */
export const goList = (msgs: string[]): string => `[${msgs.join(' ')}]`;

/** Lexical path.Clean for absolute and relative POSIX paths. */
export function cleanPath(p: string): string {
  const abs = p.startsWith('/');
  const out: string[] = [];
  for (const seg of p.split('/')) {
    if (seg === '' || seg === '.') continue;
    if (seg === '..') {
      if (out.length > 0 && out[out.length - 1] !== '..') out.pop();
      else if (!abs) out.push('..');
    } else out.push(seg);
  }
  const joined = out.join('/');
  return abs ? `/${joined}` : joined === '' ? '.' : joined;
}

// Image references as go-containerregistry's name.ParseReference(WeakValidation) accepts them.
const repoComponent = '[a-z0-9]+(?:(?:\\.|_|__|-+)[a-z0-9]+)*';
const repoPattern = new RegExp(`^${repoComponent}(?:/${repoComponent})*$`, 'u');
const registryPattern = /^(?:[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*|\[[0-9A-Fa-f:.]+\])(?::\d+)?$/u;
const tagPattern = /^[\w][\w.-]{0,127}$/u;
const digestPattern = /^[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}$/u;

/** True when `image` parses as an image reference (registry/repo[:tag][@digest]). */
export function isImageReference(image: string): boolean {
  let rest = image;
  const at_ = rest.indexOf('@');
  if (at_ !== -1) {
    if (!digestPattern.test(rest.slice(at_ + 1))) return false;
    rest = rest.slice(0, at_);
  }
  const lastSlash = rest.lastIndexOf('/');
  const colon = rest.lastIndexOf(':');
  if (colon > lastSlash) {
    if (!tagPattern.test(rest.slice(colon + 1))) return false;
    rest = rest.slice(0, colon);
  }
  const slash = rest.indexOf('/');
  if (slash !== -1) {
    const first = rest.slice(0, slash);
    if (first.includes('.') || first.includes(':') || first === 'localhost') {
      if (!registryPattern.test(first)) return false;
      rest = rest.slice(slash + 1);
    }
  }
  return rest.length > 0 && rest.length <= 255 && repoPattern.test(rest);
}

/**
 * apimachinery's NameIsDNS1035Label: a generateName prefix has its trailing dash masked first — by dropping the last
 * two characters and appending "a", exactly as upstream does.
 */
export function nameIsDNS1035Label(name: string, prefix: boolean): string[] {
  const masked = prefix && name.length > 1 && name.endsWith('-') ? `${name.slice(0, -2)}a` : name;
  return dns1035LabelErrors(masked);
}
