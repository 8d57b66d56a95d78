// The DigestResolver of Knative's tag-to-digest resolution, backed by the registry client: digest references pass through; registries in
// `registries-skipping-tag-resolving` give '' (the Deployment keeps the tag); everything else becomes
// `<registry>/<repository>@sha256:…` (Docker Hub as `index.docker.io/library/nginx@sha256:…`, Knative's form)
// within the per-image timeout, with credentials from the Revision's and its ServiceAccount's pull secrets.
import type { DigestResolver, ResolveContext } from './digest-resolver.js';
import type { KubeClient } from '../kube/client.js';
import { RegistryClient, credentialStrings } from './client.js';
import { RegistryError, redact } from './errors.js';
import { loadKeychain, matchCredentials, type Keychain, type KeychainEntry } from './keychain.js';
import { isDockerHubHost, parseReference } from './reference.js';
import type { FetchLike } from './transport.js';

export interface RegistryResolverOptions {
  kube: Pick<KubeClient, 'get'>;
  /** Registries (host[:port]) reached over plain HTTP; all others over HTTPS. */
  insecureRegistries?: readonly string[];
  /** Extra CA certificates (PEM) trusted for registries, next to the system roots. */
  extraCAPem?: string;
  userAgent?: string;
  /** Replaces node:http(s) (tests, proxies); `extraCAPem` does not apply to it. */
  fetchImpl?: FetchLike;
}

export interface RegistryResolver extends DigestResolver {
  /** Closes pooled connections. */
  close(): void;
}

export function makeRegistryResolver(opts: RegistryResolverOptions): RegistryResolver {
  const client = new RegistryClient({
    ...(opts.insecureRegistries ? { insecureRegistries: opts.insecureRegistries } : {}),
    ...(opts.extraCAPem ? { extraCAPem: opts.extraCAPem } : {}),
    ...(opts.userAgent ? { userAgent: opts.userAgent } : {}),
    ...(opts.fetchImpl ? { fetchImpl: opts.fetchImpl } : {}),
  });

  return {
    async resolve(image: string, ctx: ResolveContext): Promise<string> {
      const ref = parseReference(image); // throws "invalid image reference …"
      if (ref.digest) return image;
      if (skipped(ref.registry, ctx.skipRegistries)) return '';

      const timeout = new AbortController();
      const timer = setTimeout(() => timeout.abort(), Math.max(0, ctx.timeoutSeconds * 1000));
      let keychain: Keychain | undefined;
      try {
        keychain = await untilAborted(loadKeychain(opts.kube, ctx), timeout.signal);
        const matched = matchCredentials(keychain.entries, ref.registry, ref.repository);
        try {
          const digest = await client.manifestDigest(
            ref,
            matched.map((e) => e.credential),
            timeout.signal,
          );
          return `${ref.registry}/${ref.repository}@${digest}`;
        } catch (err) {
          if (err instanceof RegistryError && err.kind === 'unauthorized' && !timeout.signal.aborted) {
            throw new RegistryError('unauthorized', `${err.message}${deniedHint(ref.registry, keychain, matched)}`);
          }
          throw err;
        }
      } catch (err) {
        if (timeout.signal.aborted) throw new RegistryError('timeout', `timed out after ${ctx.timeoutSeconds}s resolving ${image}`);
        const secrets = (keychain?.entries ?? []).flatMap((e) => credentialStrings(e.credential));
        if (err instanceof RegistryError) throw new RegistryError(err.kind, redact(err.message, secrets));
        throw new RegistryError('registry', redact(`resolving ${image}: ${err instanceof Error ? err.message : String(err)}`, secrets));
      } finally {
        clearTimeout(timer);
      }
    },
    close() {
      client.close();
    },
  };
}

function skipped(registry: string, skip: readonly string[]): boolean {
  const r = registry.toLowerCase();
  return skip.some((s) => {
    const x = s.trim().toLowerCase();
    return x === r || (isDockerHubHost(x) && isDockerHubHost(r));
  });
}

/** Why access may have been denied, in words: which secrets were tried, or why none applied. */
function deniedHint(registry: string, kc: Keychain, matched: KeychainEntry[]): string {
  const notes: string[] = [];
  if (matched.length > 0) {
    notes.push(`tried ${matched.map((e) => `${JSON.stringify(e.key)} from secret ${JSON.stringify(e.secret)}`).join(', ')}`);
  } else if (kc.secrets.length === 0) {
    notes.push('the revision and its service account have no image pull secrets');
  } else {
    notes.push(`no image pull secret (${kc.secrets.join(', ')}) has credentials for ${registry}`);
  }
  notes.push(...kc.problems);
  return `: ${notes.join('; ')}`;
}

function untilAborted<T>(p: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(new Error('aborted'));
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(new Error('aborted'));
    signal.addEventListener('abort', onAbort, { once: true });
    p.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}
