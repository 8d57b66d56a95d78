// A release's two manifests from deploy/: `tidal-crds.yaml` (the CustomResourceDefinitions) and `tidal-core.yaml`
// (everything else in the kustomization's order), every object labelled with the version and the controller's image
// named by digest. Pure: the caller reads deploy/ and writes the files.
import { parseAllDocuments, stringify } from 'yaml';

export const VERSION_LABEL = 'app.kubernetes.io/version';

export interface ReleaseManifestInput {
  /** `v0.1.0` */
  version: string;
  /** `<repository>@sha256:<hex>` */
  image: string;
  /** The kustomization's resources in order: path (relative to deploy/) and file text. */
  files: { path: string; text: string }[];
}

export interface ReleaseManifests {
  crds: string;
  core: string;
}

type Obj = { kind?: string; metadata?: { labels?: Record<string, string> }; spec?: Record<string, unknown> } & Record<string, unknown>;

const SEMVER = /^v\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$/;
const DIGEST_REF = /^[^@\s]+@sha256:[0-9a-f]{64}$/;

export function releaseManifests(input: ReleaseManifestInput): ReleaseManifests {
  if (!SEMVER.test(input.version)) throw new Error(`version ${input.version}: expected v<major>.<minor>.<patch>[-<pre>]`);
  if (!DIGEST_REF.test(input.image)) throw new Error(`image ${input.image}: expected <repository>@sha256:<64 hex>`);
  const crds: Obj[] = [];
  const core: Obj[] = [];
  let images = 0;
  for (const f of input.files) {
    for (const doc of parseAllDocuments(f.text)) {
      const obj = doc.toJSON() as Obj | null;
      if (obj === null) continue;
      obj.metadata = { ...obj.metadata, labels: { ...obj.metadata?.labels, [VERSION_LABEL]: input.version } };
      if (obj.kind === 'Deployment') images += stampDeployment(obj, input);
      (obj.kind === 'CustomResourceDefinition' ? crds : core).push(obj);
    }
  }
  if (images === 0) throw new Error('no controller container found in deploy/: the release would name no image');
  const render = (objs: Obj[]) => `${objs.map((o) => stringify(o, { lineWidth: 0 })).join('---\n')}`;
  return { crds: render(crds), core: render(core) };
}

/** The controller's image by digest and the version on its pods; returns how many containers it stamped. */
function stampDeployment(obj: Obj, input: ReleaseManifestInput): number {
  const template = obj.spec?.template as
    { metadata?: { labels?: Record<string, string> }; spec?: { containers?: { name: string; image?: string }[] } } | undefined;
  if (!template) return 0;
  template.metadata = { ...template.metadata, labels: { ...template.metadata?.labels, [VERSION_LABEL]: input.version } };
  let n = 0;
  for (const c of template.spec?.containers ?? []) {
    if (c.name !== 'controller') continue;
    c.image = input.image;
    n++;
  }
  return n;
}

/** The kustomization's resources, in order. */
export function kustomizationResources(text: string): string[] {
  const k = parseAllDocuments(text)[0]?.toJSON() as { resources?: string[] } | undefined;
  return k?.resources ?? [];
}
