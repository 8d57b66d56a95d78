// Pull credentials the way the kubelet and k8schain find them: the Revision's imagePullSecrets, then those of its
// ServiceAccount (namespace = the Revision's), each a `kubernetes.io/dockerconfigjson` (`.dockerconfigjson` →
// {auths: {key: entry}}) or `kubernetes.io/dockercfg` (`.dockercfg` → {key: entry}) Secret. A key matches an image
// like the kubelet's keyring: scheme and a `/v1/` or `/v2/` path are ignored, the host must match label by label
// (`*` globs within a label), the port must be equal, and the key's path (if any) must be a prefix of the
// repository. Docker Hub's spellings (`docker.io`, `index.docker.io`, `registry-1.docker.io`,
// `https://index.docker.io/v1/`) are one host. The most specific key wins (longest path, then exact host); equally
// specific keys keep secret order, and the client tries them in that order.
import type { ResourceType } from '../api/kinds.js';
import { Resources } from '../api/kinds.js';
import type { KubeObject } from '../api/meta.js';
import type { KubeClient } from '../kube/client.js';
import { RegistryError } from './errors.js';
import type { Credential } from './auth.js';
import { DOCKER_HUB, isDockerHubHost } from './reference.js';

export const ServiceAccountType: ResourceType = { group: '', version: 'v1', kind: 'ServiceAccount', plural: 'serviceaccounts', namespaced: true };

export interface SecretObject extends KubeObject {
  type?: string;
  data?: Record<string, string>;
}

interface ServiceAccountObject extends KubeObject {
  imagePullSecrets?: { name?: string }[];
}

export interface KeychainEntry {
  /** The key as written in the secret (a registry host, possibly with scheme, port and path). */
  key: string;
  /** The Secret it came from. */
  secret: string;
  credential: Credential;
}

export interface Keychain {
  entries: KeychainEntry[];
  /** Names of the Secrets looked at, in order (Revision's first, then the ServiceAccount's). */
  secrets: string[];
  /** Plain-words notes about secrets that could not be used (missing, wrong type, unreadable JSON). */
  problems: string[];
}

export interface KeychainScope {
  namespace: string;
  serviceAccountName: string | undefined;
  imagePullSecrets: readonly string[];
}

const DOCKERCONFIGJSON = 'kubernetes.io/dockerconfigjson';
const DOCKERCFG = 'kubernetes.io/dockercfg';

/** Reads the pull secrets of a Revision (and of its ServiceAccount) and parses them. Missing objects are noted, not fatal. */
export async function loadKeychain(kube: Pick<KubeClient, 'get'>, scope: KeychainScope): Promise<Keychain> {
  const ns = scope.namespace;
  const saName = scope.serviceAccountName || 'default';
  const problems: string[] = [];
  const read = async <T extends KubeObject>(type: ResourceType, name: string, what: string): Promise<T | undefined> => {
    try {
      return await kube.get<T>(type, ns, name);
    } catch (err) {
      const reason = err instanceof Error ? err.message : String(err);
      throw new RegistryError('kube', `cannot read ${what} ${JSON.stringify(name)} in namespace ${ns}: ${reason}`);
    }
  };
  const sa = await read<ServiceAccountObject>(ServiceAccountType, saName, 'service account');
  if (!sa && saName !== 'default') problems.push(`service account ${JSON.stringify(saName)} not found`);
  const names = [...new Set([...scope.imagePullSecrets, ...(sa?.imagePullSecrets ?? []).map((r) => r.name ?? '')].filter((n) => n !== ''))];
  const secrets = await Promise.all(names.map((n) => read<SecretObject>(Resources.Secret, n, 'image pull secret')));
  const entries: KeychainEntry[] = [];
  names.forEach((name, i) => {
    const secret = secrets[i];
    if (!secret) {
      problems.push(`image pull secret ${JSON.stringify(name)} not found`);
      return;
    }
    const parsed = parsePullSecret(name, secret);
    entries.push(...parsed.entries);
    problems.push(...parsed.problems);
  });
  return { entries, secrets: names, problems };
}

/** The credentials of one pull secret. Never quotes secret content in a problem. */
export function parsePullSecret(name: string, secret: Pick<SecretObject, 'type' | 'data'>): { entries: KeychainEntry[]; problems: string[] } {
  const q = JSON.stringify(name);
  const field = secret.type === DOCKERCONFIGJSON ? '.dockerconfigjson' : secret.type === DOCKERCFG ? '.dockercfg' : undefined;
  if (!field)
    return { entries: [], problems: [`image pull secret ${q} has type ${secret.type ?? 'Opaque'}, not ${DOCKERCONFIGJSON} or ${DOCKERCFG}`] };
  const raw = secret.data?.[field];
  if (!raw) return { entries: [], problems: [`image pull secret ${q} has no ${field}`] };
  let doc: unknown;
  try {
    doc = JSON.parse(Buffer.from(raw, 'base64').toString('utf8'));
  } catch {
    return { entries: [], problems: [`image pull secret ${q} has a ${field} that is not valid JSON`] };
  }
  const auths = field === '.dockerconfigjson' ? lowerKeys(doc)['auths'] : doc;
  if (!isObject(auths)) return { entries: [], problems: [`image pull secret ${q} has no auths in ${field}`] };
  const entries: KeychainEntry[] = [];
  const problems: string[] = [];
  for (const [key, value] of Object.entries(auths)) {
    const e = lowerKeys(value);
    const str = (k: string) => (typeof e[k] === 'string' ? e[k] : '');
    const cred: Credential = {};
    if (str('auth')) {
      const decoded = Buffer.from(str('auth'), 'base64').toString('utf8');
      const colon = decoded.indexOf(':');
      if (colon < 0) {
        problems.push(`image pull secret ${q}: the auth for ${JSON.stringify(key)} is not base64 of username:password`);
        continue;
      }
      cred.username = decoded.slice(0, colon);
      cred.password = decoded.slice(colon + 1);
    } else {
      if (str('username')) cred.username = str('username');
      if (str('password')) cred.password = str('password');
    }
    if (str('identitytoken')) cred.identityToken = str('identitytoken');
    if (str('registrytoken')) cred.registryToken = str('registrytoken');
    if (Object.keys(cred).length > 0) entries.push({ key, secret: name, credential: cred });
  }
  return { entries, problems };
}

interface KeyPattern {
  labels: string[];
  port: string;
  path: string[];
  glob: boolean;
}

/** A credential key as host labels, port and path, with scheme, `/v1/`, `/v2/` and Docker Hub aliases normalised. */
export function parseCredentialKey(key: string): KeyPattern | undefined {
  const rest = key.trim().replace(/^[a-z][a-z0-9+.-]*:\/\//i, '');
  const slash = rest.indexOf('/');
  const path =
    slash >= 0
      ? rest
          .slice(slash + 1)
          .split('/')
          .filter((s) => s !== '')
      : [];
  const host = parseHost(slash >= 0 ? rest.slice(0, slash) : rest);
  if (!host) return undefined;
  return { ...host, path: path[0] === 'v1' || path[0] === 'v2' ? path.slice(1) : path };
}

function parseHost(hostPort: string): Omit<KeyPattern, 'path'> | undefined {
  const m = /^(\[[^\]]+\]|[^:]*)(?::(\d*))?$/.exec(hostPort);
  if (!m || !m[1]) return undefined;
  let host = m[1].toLowerCase();
  const port = m[2] ?? '';
  if (isDockerHubHost(host) && port === '') host = DOCKER_HUB;
  return { labels: host.startsWith('[') ? [host] : host.split('.'), port, glob: /[*?]/.test(host) };
}

function labelMatches(glob: string, label: string): boolean {
  if (!/[*?]/.test(glob)) return glob === label;
  const re = new RegExp(
    `^${glob
      .replace(/[.+^${}()|[\]\\]/g, '\\$&')
      .replace(/\*/g, '.*')
      .replace(/\?/g, '.')}$`,
  );
  return re.test(label);
}

/** True when the credential key applies to `registry/repository`. */
export function keyMatches(key: string, registry: string, repository: string): boolean {
  const k = parseCredentialKey(key);
  const t = parseHost(registry);
  if (!k || !t) return false;
  const repo = repository.split('/');
  if (k.port !== t.port || k.labels.length !== t.labels.length) return false;
  if (!k.labels.every((l, i) => labelMatches(l, t.labels[i]!))) return false;
  return k.path.length <= repo.length && k.path.every((seg, i) => seg === repo[i]);
}

/** The credentials for an image, most specific key first, duplicates removed. */
export function matchCredentials(entries: readonly KeychainEntry[], registry: string, repository: string): KeychainEntry[] {
  const hits = entries
    .map((e, order) => ({ e, order, k: parseCredentialKey(e.key) }))
    .filter((h) => h.k && keyMatches(h.e.key, registry, repository))
    .sort((a, b) => b.k!.path.length - a.k!.path.length || Number(a.k!.glob) - Number(b.k!.glob) || a.order - b.order);
  const seen = new Set<string>();
  return hits
    .map((h) => h.e)
    .filter((e) => {
      const id = JSON.stringify(e.credential);
      if (seen.has(id)) return false;
      seen.add(id);
      return true;
    });
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function lowerKeys(v: unknown): Record<string, unknown> {
  if (!isObject(v)) return {};
  return Object.fromEntries(Object.entries(v).map(([k, x]) => [k.toLowerCase(), x]));
}
