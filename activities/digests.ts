// Tag-to-digest resolution behind an interface. The registry client comes with its own issue; until then the
// resolver pins images that already carry a digest, skips the registries config-deployment lists, and leaves
// other tags unresolved (an empty imageDigest, so the Deployment keeps the tag — as Knative does for a skipped
// registry).

export interface ResolveContext {
  namespace: string;
  serviceAccountName: string | undefined;
  imagePullSecrets: string[];
  skipRegistries: readonly string[];
  timeoutSeconds: number;
}

export interface DigestResolver {
  /** `<repository>@sha256:…`, or '' when the image is not to be resolved. Throws with a readable reason on failure. */
  resolve(image: string, ctx: ResolveContext): Promise<string>;
}

/** The registry host of an image reference, with Docker Hub's implicit host made explicit. */
export function registryOf(image: string): string {
  const first = image.split('/')[0] ?? '';
  const isHost = image.includes('/') && (first.includes('.') || first.includes(':') || first === 'localhost');
  if (!isHost || first === 'docker.io' || first === 'registry-1.docker.io') return 'index.docker.io';
  return first;
}

export function isDigestReference(image: string): boolean {
  return /@sha256:[0-9a-f]{64}$/.test(image);
}

export const tagPinningDisabledResolver: DigestResolver = {
  resolve(image) {
    return Promise.resolve(isDigestReference(image) ? image : '');
  },
};
