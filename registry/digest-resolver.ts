// Tag-to-digest resolution behind an interface, so activities and tests choose the implementation; the real one is
// `makeRegistryResolver` in resolver.ts (reference parsing, skipping and credentials live there).

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
