// Registry authentication: WWW-Authenticate challenges, Basic credentials, and the token flow of the distribution
// spec (Bearer realm/service/scope; Basic credentials sent to the realm when we have them; an identity token goes
// through the OAuth2 refresh-token POST, falling back to GET when the token server has no OAuth2 endpoint).
import { RegistryError, networkReason } from './errors.js';
import type { HttpSend } from './transport.js';

/** What a pull secret holds for one registry. None of these fields may reach a message or a log. */
export interface Credential {
  username?: string;
  password?: string;
  identityToken?: string;
  registryToken?: string;
}

export interface Challenge {
  scheme: string; // lower-case: 'basic', 'bearer', …
  params: Record<string, string>; // lower-case keys
}

/** Parses a WWW-Authenticate value (several challenges may be joined with commas; values may be quoted). */
export function parseChallenges(header: string): Challenge[] {
  const out: Challenge[] = [];
  let cur: Challenge | undefined;
  let i = 0;
  const skip = (chars: string) => {
    while (i < header.length && chars.includes(header[i]!)) i++;
  };
  while (i < header.length) {
    skip(' \t,');
    const start = i;
    while (i < header.length && !' \t,='.includes(header[i]!)) i++;
    const token = header.slice(start, i);
    if (token === '') {
      i++;
      continue;
    }
    skip(' \t');
    if (header[i] === '=' && cur) {
      i++;
      skip(' \t');
      let value = '';
      if (header[i] === '"') {
        i++;
        while (i < header.length && header[i] !== '"') {
          if (header[i] === '\\' && i + 1 < header.length) i++;
          value += header[i];
          i++;
        }
        i++;
      } else {
        const vs = i;
        while (i < header.length && !' \t,'.includes(header[i]!)) i++;
        value = header.slice(vs, i);
      }
      cur.params[token.toLowerCase()] = value;
    } else if (header[i] === '=') {
      while (i < header.length && header[i] !== ',') i++; // a parameter before any scheme: ignore it
    } else {
      cur = { scheme: token.toLowerCase(), params: {} };
      out.push(cur);
    }
  }
  return out;
}

export function hasBasic(cred: Credential | undefined): cred is Credential {
  return !!cred && (!!cred.username || !!cred.password);
}

export function basicAuthorization(cred: Credential): string {
  return `Basic ${Buffer.from(`${cred.username ?? ''}:${cred.password ?? ''}`).toString('base64')}`;
}

export function unauthorized(registry: string, status = 401): RegistryError {
  const what = status === 403 ? 'forbidden' : 'unauthorized';
  return new RegistryError('unauthorized', `registry ${registry} denied access: ${what} (check the image pull secret)`);
}

export interface TokenRequest {
  registry: string;
  challenge: Challenge;
  /** Scopes we need, e.g. `repository:library/nginx:pull`; the challenge's own scope is asked for first. */
  scopes: string[];
  credential: Credential | undefined;
  /** Plain-HTTP token realms are accepted only for registries configured as insecure. */
  insecure: boolean;
  userAgent: string;
  signal: AbortSignal;
}

/** Exchanges a Bearer challenge (and our credentials, if any) for a registry token. */
export async function fetchBearerToken(send: HttpSend, r: TokenRequest): Promise<string> {
  if (r.credential?.registryToken) return r.credential.registryToken;
  const realmText = r.challenge.params['realm'];
  if (!realmText) throw new RegistryError('registry', `registry ${r.registry} sent a Bearer challenge without a realm`);
  let realm: URL;
  try {
    realm = new URL(realmText);
  } catch {
    throw new RegistryError('registry', `registry ${r.registry} sent an invalid token realm`);
  }
  if (realm.protocol !== 'https:' && !(realm.protocol === 'http:' && r.insecure)) {
    throw new RegistryError(
      'registry',
      `registry ${r.registry} asks for a token over ${realm.protocol.replace(':', '')} (${realm.host}); only https is used unless the registry is configured as insecure`,
    );
  }
  const service = r.challenge.params['service'];
  const scopes = [...new Set([...(r.challenge.params['scope'] ? [r.challenge.params['scope']] : []), ...r.scopes])];
  const server = realm.host;
  const common = { 'User-Agent': r.userAgent, Accept: 'application/json' };

  const call = async (method: 'GET' | 'POST', url: URL, headers: Record<string, string>, body?: string) => {
    try {
      return await send({ method, url, headers, signal: r.signal, ...(body !== undefined ? { body } : {}) });
    } catch (err) {
      if (r.signal.aborted) throw err;
      throw new RegistryError('unreachable', `cannot reach token server ${server} of registry ${r.registry}: ${networkReason(err).reason}`);
    }
  };
  const getToken = () => {
    const url = new URL(realm);
    if (service) url.searchParams.set('service', service);
    for (const s of scopes) url.searchParams.append('scope', s);
    return call('GET', url, { ...common, ...(hasBasic(r.credential) ? { Authorization: basicAuthorization(r.credential) } : {}) });
  };

  let res;
  if (r.credential?.identityToken) {
    const form = new URLSearchParams({
      grant_type: 'refresh_token',
      refresh_token: r.credential.identityToken,
      client_id: 'tidal',
      scope: scopes.join(' '),
    });
    if (service) form.set('service', service);
    res = await call('POST', realm, { ...common, 'Content-Type': 'application/x-www-form-urlencoded' }, form.toString());
    if (res.status === 404 || res.status === 405) res = await getToken();
  } else {
    res = await getToken();
  }
  if (res.status === 401 || res.status === 403) throw unauthorized(r.registry, res.status);
  if (res.status < 200 || res.status >= 300)
    throw new RegistryError('registry', `token server ${server} of registry ${r.registry} answered HTTP ${res.status}`);
  let parsed: unknown;
  try {
    parsed = JSON.parse(res.body.toString('utf8'));
  } catch {
    // The body may hold a token: never quote it.
    throw new RegistryError('registry', `token server ${server} of registry ${r.registry} answered something that is not JSON`);
  }
  const t = parsed as { token?: unknown; access_token?: unknown } | null;
  const token = typeof t?.token === 'string' && t.token ? t.token : typeof t?.access_token === 'string' ? t.access_token : '';
  if (!token) throw new RegistryError('registry', `token server ${server} of registry ${r.registry} answered without a token`);
  return token;
}
