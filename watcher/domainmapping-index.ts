// Which DomainMappings reference which objects, and which namespaces map which names, kept from the DomainMapping
// informer's events. The watcher pokes a mapping when its target (a Knative Service or Route) changes — created late,
// deleted, its address moved — and when the ClusterDomainClaim of its name changes.
import type { DomainMapping } from '../api/domainmapping.js';
import type { KubeObject, ObjectKey } from '../api/meta.js';

/** `<group>/<Kind>/<namespace>/<name>` of a referenced object (group '' for the core group). */
export function refKey(group: string, kind: string, namespace: string, name: string): string {
  return `${group}/${kind}/${namespace}/${name}`;
}

export class DomainMappingIndex {
  /** Referenced object → mappings (`<ns>/<name>`) that name it. */
  private readonly byRef = new Map<string, Set<string>>();
  /** Mapping `<ns>/<name>` → the object it referenced, to undo on change. */
  private readonly refOf = new Map<string, string>();
  /** Mapped name (the host) → the namespaces that have a mapping of that name. */
  private readonly byName = new Map<string, Set<string>>();

  /** Records a DomainMapping (added or updated); `deleted` forgets it. */
  update(obj: KubeObject, deleted = false): void {
    const ns = obj.metadata.namespace ?? '';
    const name = obj.metadata.name ?? '';
    const key = `${ns}/${name}`;
    const old = this.refOf.get(key);
    if (old !== undefined) {
      const set = this.byRef.get(old);
      set?.delete(key);
      if (set?.size === 0) this.byRef.delete(old);
      this.refOf.delete(key);
    }
    const names = this.byName.get(name);
    if (deleted) {
      names?.delete(ns);
      if (names?.size === 0) this.byName.delete(name);
      return;
    }
    if (names) names.add(ns);
    else this.byName.set(name, new Set([ns]));
    const ref = (obj as DomainMapping).spec?.ref;
    if (!ref?.name || !ref.kind) return;
    const apiVersion = ref.apiVersion ?? '';
    const group = apiVersion.includes('/') ? apiVersion.slice(0, apiVersion.indexOf('/')) : (ref.group ?? '');
    const k = refKey(group, ref.kind, ref.namespace || ns, ref.name);
    this.refOf.set(key, k);
    let set = this.byRef.get(k);
    if (!set) this.byRef.set(k, (set = new Set()));
    set.add(key);
  }

  /** The mappings whose `spec.ref` names this object. */
  mappingsOf(group: string, kind: string, obj: KubeObject): ObjectKey[] {
    return [...(this.byRef.get(refKey(group, kind, obj.metadata.namespace ?? '', obj.metadata.name ?? '')) ?? [])].map(toKey);
  }

  /** The mappings of this name (a ClusterDomainClaim's), in every namespace. */
  mappingsNamed(name: string): ObjectKey[] {
    return [...(this.byName.get(name) ?? [])].map((namespace) => ({ namespace, name }));
  }
}

function toKey(k: string): ObjectKey {
  const i = k.indexOf('/');
  return { namespace: k.slice(0, i), name: k.slice(i + 1) };
}
