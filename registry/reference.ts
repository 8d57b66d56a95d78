// Image reference parsing and normalisation, following go-containerregistry's `name` package (weak validation):
// the first path component is a registry when it holds a '.' or ':' (or is `localhost`, as Docker and containerd
// read it); `docker.io` becomes `index.docker.io`; a one-component Docker Hub name gets `library/`; the tag
// defaults to `latest`. Pure.

import { RegistryError } from './errors.js';

export const DOCKER_HUB = 'index.docker.io';

export interface ImageReference {
  /** Registry host[:port]; Docker Hub is `index.docker.io` (also the API host, as go-containerregistry uses it). */
  registry: string;
  /** Repository path inside the registry, e.g. `library/nginx`. */
  repository: string;
  /** The tag; `latest` when none is given, '' for a digest-only reference. */
  tag: string;
  /** `sha256:<64 hex>` when the reference carries a digest. */
  digest?: string;
}

export class InvalidReferenceError extends RegistryError {
  constructor(image: string, reason: string) {
    super('invalid', `invalid image reference ${JSON.stringify(image)}: ${reason}`);
  }
}

const LABEL = '[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?';
const REGISTRY_RE = new RegExp(`^(?:${LABEL}(?:\\.${LABEL})*|\\[[0-9a-fA-F:.]+\\])(?::[0-9]{1,5})?$`);
const COMPONENT_RE = /^[a-z0-9]+(?:(?:\.|_|__|-+)[a-z0-9]+)*$/;
const TAG_RE = /^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$/;
const DIGEST_RE = /^sha256:[0-9a-f]{64}$/;

/** Aliases that all name Docker Hub, for matching (skip lists, credential keys). */
export function isDockerHubHost(host: string): boolean {
  const h = host.toLowerCase();
  return h === DOCKER_HUB || h === 'docker.io' || h === 'registry-1.docker.io';
}

export function parseReference(image: string): ImageReference {
  const bad = (reason: string) => new InvalidReferenceError(image, reason);
  if (image === '') throw bad('empty');
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(image)) throw bad('an image reference has no URL scheme (drop the http:// or https://)');
  if (/\s/.test(image)) throw bad('contains whitespace');

  let name = image;
  let digest: string | undefined;
  const at = name.indexOf('@');
  if (at >= 0) {
    digest = name.slice(at + 1);
    name = name.slice(0, at);
    if (!DIGEST_RE.test(digest)) throw bad('a digest must be sha256: followed by 64 lowercase hex digits');
  }

  let tag = '';
  const colon = name.lastIndexOf(':');
  if (colon > name.lastIndexOf('/')) {
    tag = name.slice(colon + 1);
    name = name.slice(0, colon);
    if (!TAG_RE.test(tag)) throw bad(`tag ${JSON.stringify(tag)} is not valid (letters, digits, '_', '.', '-'; at most 128)`);
  }

  let registry = DOCKER_HUB;
  let repository = name;
  const slash = name.indexOf('/');
  if (slash >= 0) {
    const first = name.slice(0, slash);
    if (first.includes('.') || first.includes(':') || first === 'localhost') {
      registry = first;
      repository = name.slice(slash + 1);
      if (!REGISTRY_RE.test(registry)) throw bad(`registry ${JSON.stringify(registry)} is not a valid host[:port]`);
    }
  }
  if (registry === 'docker.io') registry = DOCKER_HUB;
  if (registry === DOCKER_HUB && repository !== '' && !repository.includes('/')) repository = `library/${repository}`;

  if (repository === '') throw bad('no repository name');
  if (repository.length > 255) throw bad('repository name longer than 255 characters');
  if (/[A-Z]/.test(repository)) throw bad('repository name must be lowercase');
  if (!repository.split('/').every((c) => COMPONENT_RE.test(c))) {
    throw bad('repository name may only contain lowercase letters, digits and separators (., _, __, -, /) between them');
  }
  return { registry, repository, tag: tag || (digest ? '' : 'latest'), ...(digest ? { digest } : {}) };
}

/** `registry/repository[:tag][@digest]`, the fully qualified form (`index.docker.io/library/nginx:latest`). */
export function formatReference(ref: ImageReference): string {
  return `${ref.registry}/${ref.repository}${ref.tag ? `:${ref.tag}` : ''}${ref.digest ? `@${ref.digest}` : ''}`;
}
