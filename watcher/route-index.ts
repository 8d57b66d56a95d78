// Which Routes name which Configurations and Revisions in their traffic, kept from the Route informer's events. The
// watcher pokes those Routes when a Configuration or Revision changes, whether or not the labeler has written the
// `serving.knative.dev/routes` annotation yet (a Route that points at a Configuration directly must hear when its
// latest ready Revision changes).
import type { KubeObject } from '../api/meta.js';
import type { Route } from '../api/serving.js';

type Ref = `${'Configuration' | 'Revision'}/${string}/${string}`;

export class RouteIndex {
  /** `<Kind>/<ns>/<name>` of a referenced object → names of the Routes (same namespace) that reference it. */
  private readonly byRef = new Map<Ref, Set<string>>();
  /** Route `<ns>/<name>` → what it referenced, to undo on change. */
  private readonly refsOf = new Map<string, Ref[]>();

  /** Records a Route (added or updated); `deleted` forgets it. */
  update(route: KubeObject, deleted = false): void {
    const ns = route.metadata.namespace ?? '';
    const name = route.metadata.name ?? '';
    const key = `${ns}/${name}`;
    for (const ref of this.refsOf.get(key) ?? []) {
      const set = this.byRef.get(ref);
      set?.delete(name);
      if (set?.size === 0) this.byRef.delete(ref);
    }
    this.refsOf.delete(key);
    if (deleted) return;
    const refs = new Set<Ref>();
    for (const t of (route as Route).spec?.traffic ?? []) {
      if (t.configurationName) refs.add(`Configuration/${ns}/${t.configurationName}`);
      if (t.revisionName) refs.add(`Revision/${ns}/${t.revisionName}`);
    }
    for (const ref of refs) {
      let set = this.byRef.get(ref);
      if (!set) this.byRef.set(ref, (set = new Set()));
      set.add(name);
    }
    this.refsOf.set(key, [...refs]);
  }

  /** Routes whose traffic names this Configuration, or this Revision or its Configuration. */
  routesFor(kind: 'Configuration' | 'Revision', obj: KubeObject, configurationLabel: string): string[] {
    const ns = obj.metadata.namespace ?? '';
    const out = new Set<string>(this.byRef.get(`${kind}/${ns}/${obj.metadata.name ?? ''}`) ?? []);
    const cfg = kind === 'Revision' ? obj.metadata.labels?.[configurationLabel] : undefined;
    if (cfg) for (const r of this.byRef.get(`Configuration/${ns}/${cfg}`) ?? []) out.add(r);
    return [...out];
  }
}
