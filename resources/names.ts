// Knative child naming (kmeta.ChildName) and the names Tidal derives from it.
import { md5Hex } from './md5.js';

/** Longest Kubernetes object name the child-naming rule aims for (a DNS-1123 label). */
export const MAX_NAME_LENGTH = 63;
const MD5_HEX_LENGTH = 32;
/** Room left for the parent prefix once the hash is in: 63 − 32. */
const HEAD = MAX_NAME_LENGTH - MD5_HEX_LENGTH;

const alphanumeric = /[a-zA-Z0-9]/;

/**
 * The name of a child of `parent`, bit-exact with knative.dev/pkg `kmeta.ChildName`:
 *
 * - `parent + suffix` when that fits in 63 characters;
 * - otherwise, for a suffix shorter than 31 characters, `parent[:31 - len(suffix)] + md5hex(parent) + suffix`
 *   (exactly 63 characters, the suffix kept whole);
 * - otherwise (suffix of 31 characters or more), `parent[:31] + md5hex(parent + suffix)`, padded with the start of
 *   the suffix up to 63 characters, with trailing non-alphanumerics trimmed so the name stays DNS-valid.
 *
 * Go measures and slices bytes; Kubernetes names are ASCII (DNS-1123), where bytes and UTF-16 code units agree, so
 * this works on the JS string directly. The hash is over the UTF-8 bytes either way.
 */
export function childName(parent: string, suffix: string): string {
  if (parent.length + suffix.length <= MAX_NAME_LENGTH) return parent + suffix;
  if (HEAD - suffix.length <= 0) {
    const hash = md5Hex(parent + suffix);
    let name = parent.slice(0, HEAD) + hash;
    const room = MAX_NAME_LENGTH - name.length;
    if (room > 0) name += suffix.slice(0, room);
    return trimTrailingNonAlphanumeric(name);
  }
  return parent.slice(0, HEAD - suffix.length) + md5Hex(parent) + suffix;
}

function trimTrailingNonAlphanumeric(name: string): string {
  let end = name.length;
  while (end > 0 && !alphanumeric.test(name[end - 1]!)) end--;
  return name.slice(0, end);
}

/**
 * The generated Revision name for a Configuration generation: `<config>-%05d`, e.g. `hello-00001`, `hello-123456`
 * (Go's `%05d` pads to at least five digits and never truncates), ChildName-shortened beyond 63 characters.
 */
export function revisionName(configName: string, generation: number): string {
  return childName(configName, `-${formatGeneration(generation)}`);
}

/** Go's `fmt.Sprintf("%05d", n)`: zero-padded to five digits, the sign before the zeros. */
function formatGeneration(n: number): string {
  const digits = Math.abs(Math.trunc(n)).toString();
  return n < 0 ? `-${digits.padStart(4, '0')}` : digits.padStart(5, '0');
}

/** The KIngress of a Route or a DomainMapping: `ChildName(owner, "")` (a mapping's name, a domain, may pass 63). */
export function kingressName(ownerName: string): string {
  return childName(ownerName, '');
}

/** The Deployment of a Revision: `ChildName(rev, "-deployment")`. */
export function deploymentName(revName: string): string {
  return childName(revName, '-deployment');
}
