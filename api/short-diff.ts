// The details of "Immutable fields changed" and "Saw the following changes without a name change": knative/pkg's
// kmp.ShortDiff of the Go structs, one entry per changed leaf, e.g.
//   {v1.RevisionSpec}.PodSpec.Containers[0].Image:
//   	-: "busybox"
//   	+: "helloworld"
// Paths use Go's field names (JSON names capitalized, with the few irregular ones mapped, pod fields under PodSpec,
// probe handlers under ProbeHandler, map keys as ["key"]); a revision-level pointer field prints as upstream's
// reporter does (`*{v1.RevisionSpec}.ContainerConcurrency` with quoted values). Values of added or removed subtrees
// are shown as JSON, where cmp would print Go literals. Pure.

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);

/** Where a level of the object sits, to name its fields as Go does. */
type Level = 'template' | 'revisionSpec' | 'map' | 'struct';

const irregular: Readonly<Record<string, string>> = {
  tcpSocket: 'ProbeHandler.TCPSocket',
  httpGet: 'ProbeHandler.HTTPGet',
  exec: 'ProbeHandler.Exec',
  grpc: 'ProbeHandler.GRPC',
  uid: 'UID',
  hostIP: 'HostIP',
  fsGroup: 'FSGroup',
  metadata: 'ObjectMeta',
};
const revisionFields = new Set(['containerConcurrency', 'timeoutSeconds', 'responseStartTimeoutSeconds', 'idleTimeoutSeconds']);
const mapFields = new Set(['labels', 'annotations', 'limits', 'requests', 'nodeSelector']);

function goName(key: string): string {
  return irregular[key] ?? `${key.charAt(0).toUpperCase()}${key.slice(1)}`;
}

function segment(level: Level, key: string): { text: string; next: Level } {
  if (level === 'map') return { text: `[${JSON.stringify(key)}]`, next: 'struct' };
  const next: Level = mapFields.has(key) ? 'map' : level === 'template' && key === 'spec' ? 'revisionSpec' : 'struct';
  if (level === 'revisionSpec' && !revisionFields.has(key)) return { text: `.PodSpec.${goName(key)}`, next };
  return { text: `.${goName(key)}`, next };
}

function isZero(v: unknown): boolean {
  if (v === undefined || v === null || v === false || v === 0 || v === '') return true;
  if (Array.isArray(v)) return v.length === 0;
  return isObj(v) && Object.values(v).every(isZero);
}

/** A leaf as the reporter prints it: <nil>, JSON, or (a pointer's value) the JSON text quoted. */
const show = (v: unknown, quote: boolean): string => (v == null ? '<nil>' : quote ? JSON.stringify(JSON.stringify(v)) : JSON.stringify(v));

function walk(root: string, a: unknown, b: unknown, at: { path: string; level: Level; pointer: boolean }): string {
  if (isZero(a) && isZero(b)) return '';
  if (Array.isArray(a) && Array.isArray(b) && a.length === b.length) {
    return a.map((v, i) => walk(root, v, b[i], { ...at, path: `${at.path}[${i}]`, level: 'struct', pointer: false })).join('');
  }
  if (isObj(a) && isObj(b)) {
    return [...new Set([...Object.keys(a), ...Object.keys(b)])]
      .sort()
      .map((k) => {
        const s = segment(at.level, k);
        return walk(root, a[k], b[k], { path: `${at.path}${s.text}`, level: s.next, pointer: at.level === 'revisionSpec' && revisionFields.has(k) });
      })
      .join('');
  }
  if (JSON.stringify(a) === JSON.stringify(b)) return '';
  return `${at.pointer ? '*' : ''}${root}${at.path}:\n\t-: ${show(a, at.pointer)}\n\t+: ${show(b, at.pointer)}\n`;
}

/** The details for a changed Revision spec (`{v1.RevisionSpec}`); empty when the specs are equal. */
export function revisionSpecDiff(before: unknown, after: unknown): string {
  return walk('{v1.RevisionSpec}', before, after, { path: '', level: 'revisionSpec', pointer: false });
}

/** The details for a changed revision template (`{*v1.RevisionTemplateSpec}`); empty when they are equal. */
export function templateDiff(before: unknown, after: unknown): string {
  return walk('{*v1.RevisionTemplateSpec}', before, after, { path: '', level: 'template', pointer: false });
}
