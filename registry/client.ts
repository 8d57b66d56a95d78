// A registry client for one question: which digest does this tag name? `HEAD /v2/<name>/manifests/<tag>` with
// the manifest and index media types in Accept, the digest from Docker-Content-Digest; a GET (digest = sha256 of
// the body unless the header gives it) when HEAD gives no digest or is not supported. A 401 answers with a
// challenge: Basic gets our credentials, Bearer gets a token from the realm. A multi-arch tag resolves to its index
// digest because the index types are accepted (the registry then never picks a platform manifest for us).
import { createHash } from 'node:crypto';
import { basicAuthorization, fetchBearerToken, hasBasic, parseChallenges, unauthorized, type Credential } from './auth.js';
import { RegistryError, networkReason, redact } from './errors.js';
import { isDockerHubHost, type ImageReference } from './reference.js';
import { makeTransport, type FetchLike, type HttpResponse, type Transport } from './transport.js';

export const MANIFEST_MEDIA_TYPES = [
  'application/vnd.oci.image.index.v1+json',
  'application/vnd.docker.distribution.manifest.list.v2+json',
  'application/vnd.oci.image.manifest.v1+json',
  'application/vnd.docker.distribution.manifest.v2+json',
] as const;

const DIGEST_RE = /^sha256:[0-9a-f]{64}$/;

export interface RegistryClientOptions {
  /** Registries (host[:port]) spoken to over plain HTTP. Every other registry is HTTPS. */
  insecureRegistries?: readonly string[];
  /** PEM of extra CA certificates trusted next to the system roots (node:https). */
  extraCAPem?: string;
  userAgent?: string;
  /** A fetch to use instead of node:http(s); `extraCAPem` does not apply to it. */
  fetchImpl?: FetchLike;
}

export class RegistryClient {
  private readonly transport: Transport;
  private readonly insecure: Set<string>;
  readonly userAgent: string;

  constructor(opts: RegistryClientOptions = {}) {
    this.transport = makeTransport({
      ...(opts.extraCAPem ? { extraCAPem: opts.extraCAPem } : {}),
      ...(opts.fetchImpl ? { fetchImpl: opts.fetchImpl } : {}),
    });
    this.insecure = new Set((opts.insecureRegistries ?? []).map(canonicalRegistry));
    this.userAgent = opts.userAgent ?? 'tidal (serving)';
  }

  isInsecure(registry: string): boolean {
    return this.insecure.has(canonicalRegistry(registry));
  }

  /**
   * The digest (`sha256:…`) of the manifest or index `ref` names. Credentials are tried in order until one is
   * accepted; with none the registry is asked anonymously (a Bearer realm still hands out anonymous tokens).
   */
  async manifestDigest(ref: ImageReference, credentials: readonly Credential[], signal: AbortSignal): Promise<string> {
    let denied: RegistryError | undefined;
    for (const cred of credentials.length > 0 ? credentials : [undefined]) {
      try {
        return await this.manifestDigestWith(ref, cred, signal);
      } catch (err) {
        if (!(err instanceof RegistryError && err.kind === 'unauthorized')) throw err;
        denied = err;
      }
    }
    throw denied ?? unauthorized(ref.registry);
  }

  close(): void {
    this.transport.close();
  }

  private async manifestDigestWith(ref: ImageReference, cred: Credential | undefined, signal: AbortSignal): Promise<string> {
    const insecure = this.isInsecure(ref.registry);
    const identifier = ref.digest ?? ref.tag;
    const url = new URL(`${insecure ? 'http' : 'https'}://${ref.registry}/v2/${ref.repository}/manifests/${identifier}`);
    let authorization: string | undefined;
    let challenged = false;

    const request = async (method: 'HEAD' | 'GET'): Promise<HttpResponse> => {
      const send = async () => {
        try {
          return await this.transport.send({
            method,
            url,
            headers: {
              Accept: MANIFEST_MEDIA_TYPES.join(', '),
              'User-Agent': this.userAgent,
              ...(authorization ? { Authorization: authorization } : {}),
            },
            signal,
          });
        } catch (err) {
          if (signal.aborted) throw err;
          const { reason, tls, plainHttp } = networkReason(err);
          const r = ref.registry;
          if (tls) throw new RegistryError('unreachable', `cannot verify the TLS certificate of registry ${r}: ${reason} (is its CA configured?)`);
          if (plainHttp)
            throw new RegistryError(
              'unreachable',
              `cannot reach registry ${r}: it does not speak HTTPS (${reason}); list it as an insecure registry if plain HTTP is intended`,
            );
          throw new RegistryError('unreachable', `cannot reach registry ${r}: ${reason}`);
        }
      };
      let res = await send();
      if (res.status === 401 && !challenged) {
        challenged = true;
        authorization = await this.authorize(ref, res, cred, insecure, signal);
        res = await send();
      }
      return res;
    };

    const head = await request('HEAD');
    if (head.status === 200) {
      const digest = head.headers['docker-content-digest'];
      if (digest && DIGEST_RE.test(digest)) return digest;
    } else {
      this.checkStatus(ref, head);
    }
    const get = await request('GET');
    if (get.status !== 200) {
      this.checkStatus(ref, get);
      // A registry could echo our Authorization header into its error body: keep it (and the token) out.
      const sent = [authorization ?? '', authorization?.slice(authorization.indexOf(' ') + 1) ?? '', ...credentialStrings(cred)];
      throw this.httpError(ref, get, sent);
    }
    if (!looksLikeManifest(get.body)) {
      throw new RegistryError(
        'registry',
        `registry ${ref.registry} answered something that is not an image manifest (Content-Type ${get.headers['content-type'] ?? 'none'})`,
      );
    }
    const header = get.headers['docker-content-digest'];
    return header && DIGEST_RE.test(header) ? header : `sha256:${createHash('sha256').update(get.body).digest('hex')}`;
  }

  /** Throws for the answers that end resolution whatever the method: denied, not found. */
  private checkStatus(ref: ImageReference, res: HttpResponse): void {
    if (res.status === 401 || res.status === 403) throw unauthorized(ref.registry, res.status);
    if (res.status === 404) {
      const what = ref.digest ? `digest ${ref.digest}` : `tag ${ref.tag}`;
      throw new RegistryError('not-found', `manifest unknown: ${what} not found in ${ref.registry}/${ref.repository}`);
    }
  }

  private httpError(ref: ImageReference, res: HttpResponse, secrets: string[]): RegistryError {
    if (res.status === 429)
      return new RegistryError('registry', `registry ${ref.registry} refused the request: too many requests (HTTP 429, rate limited)`);
    return new RegistryError(
      'registry',
      `registry ${ref.registry} answered HTTP ${res.status} for ${ref.repository}:${ref.tag || ref.digest}${registryErrorDetail(res, secrets)}`,
    );
  }

  private async authorize(
    ref: ImageReference,
    res: HttpResponse,
    cred: Credential | undefined,
    insecure: boolean,
    signal: AbortSignal,
  ): Promise<string> {
    const challenges = parseChallenges(res.headers['www-authenticate'] ?? '');
    const bearer = challenges.find((c) => c.scheme === 'bearer');
    if (bearer) {
      const token = await fetchBearerToken(this.transport.send, {
        registry: ref.registry,
        challenge: bearer,
        scopes: [`repository:${ref.repository}:pull`],
        credential: cred,
        insecure,
        userAgent: this.userAgent,
        signal,
      });
      return `Bearer ${token}`;
    }
    if (challenges.some((c) => c.scheme === 'basic') && hasBasic(cred)) return basicAuthorization(cred);
    throw unauthorized(ref.registry);
  }
}

/** Every secret string a credential holds (for redaction). */
export function credentialStrings(c: Credential | undefined): string[] {
  if (!c) return [];
  const out = [c.password, c.identityToken, c.registryToken].filter((x): x is string => !!x);
  if (hasBasic(c)) out.push(basicAuthorization(c).slice('Basic '.length));
  return out;
}

/** host[:port] in lower case, Docker Hub's aliases as one. */
function canonicalRegistry(registry: string): string {
  const r = registry.trim().toLowerCase();
  return isDockerHubHost(r) ? 'index.docker.io' : r;
}

function looksLikeManifest(body: Buffer): boolean {
  try {
    const doc = JSON.parse(body.toString('utf8')) as { schemaVersion?: unknown; mediaType?: unknown } | null;
    return typeof doc === 'object' && doc !== null && (typeof doc.schemaVersion === 'number' || typeof doc.mediaType === 'string');
  } catch {
    return false;
  }
}

/** ": CODE: message" from a distribution-spec error body, short and single-line; '' when there is none. */
function registryErrorDetail(res: HttpResponse, secrets: string[]): string {
  try {
    const doc = JSON.parse(res.body.toString('utf8')) as { errors?: { code?: unknown; message?: unknown }[] };
    const e = doc.errors?.[0];
    if (!e) return '';
    const text = [e.code, e.message].filter((x) => typeof x === 'string' && x !== '').join(': ');
    return text ? `: ${redact(text, secrets).replace(/\s+/g, ' ').slice(0, 200)}` : '';
  } catch {
    return '';
  }
}
