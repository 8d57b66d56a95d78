// Where the API server is and how to authenticate to it, from a kubeconfig or the in-cluster service account.
// Our own loader rather than @kubernetes/client-node's KubeConfig: that package costs tens of MiB of RSS to load, and
// Tidal needs only one cluster and one user. What it does not support (exec plugins, auth providers, basic auth,
// impersonation, proxies) is refused with an error naming the field, never silently ignored.
import { readFileSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parse } from 'yaml';

/** What a client needs to reach the API server. */
export interface KubeCredentials {
  server: URL;
  /** Where this came from, for messages: `<file> (context <name>)` or `in-cluster`. */
  source: string;
  /** PEM of the CAs the server's certificate must chain to (else the system's). */
  ca?: Buffer;
  insecureSkipTLSVerify: boolean;
  /** SNI and the name the server's certificate is checked against, when not the server's host. */
  tlsServerName?: string;
  cert?: Buffer;
  key?: Buffer;
  /** The bearer token to send now, if any; a token file is re-read when it changes (projected tokens rotate). */
  token: () => string | undefined;
}

export interface LoadOptions {
  /** A kubeconfig path (or a colon-separated list, as KUBECONFIG); default: $KUBECONFIG, ~/.kube/config, in-cluster. */
  kubeconfig?: string | undefined;
  env?: NodeJS.ProcessEnv;
  home?: string;
  /** The service account's mounted secret (tests point it elsewhere). */
  serviceAccountDir?: string;
}

export const serviceAccountDir = '/var/run/secrets/kubernetes.io/serviceaccount';

/**
 * Loads credentials: the given kubeconfig, else $KUBECONFIG, else ~/.kube/config when it exists, else the in-cluster
 * service account. Of a colon-separated list only the first file that exists is read (kubectl merges them all;
 * Tidal's deployments have one file).
 */
export function loadKubeCredentials(opts: LoadOptions = {}): KubeCredentials {
  const env = opts.env ?? process.env;
  const list = opts.kubeconfig || env.KUBECONFIG;
  if (list) {
    const files = list.split(path.delimiter).filter((f) => f !== '');
    const file = files.find(exists);
    if (!file) throw new Error(`kubeconfig ${list}: no such file`);
    return fromKubeconfigFile(file);
  }
  const home = path.join(opts.home ?? os.homedir(), '.kube', 'config');
  if (exists(home)) return fromKubeconfigFile(home);
  if (env.KUBERNETES_SERVICE_HOST) return inCluster(env, opts.serviceAccountDir ?? serviceAccountDir);
  throw new Error(`no kubeconfig: set KUBECONFIG, create ${home}, or run in a pod (KUBERNETES_SERVICE_HOST is not set)`);
}

/** The in-cluster service account, as client-go's rest.InClusterConfig. */
export function inCluster(env: NodeJS.ProcessEnv, dir: string = serviceAccountDir): KubeCredentials {
  const host = env.KUBERNETES_SERVICE_HOST;
  const port = env.KUBERNETES_SERVICE_PORT;
  if (!host || !port) throw new Error('in-cluster: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must both be set');
  const tokenFile = path.join(dir, 'token');
  if (!exists(tokenFile)) throw new Error(`in-cluster: ${tokenFile} does not exist`);
  const caFile = path.join(dir, 'ca.crt');
  return {
    server: new URL(`https://${host.includes(':') ? `[${host}]` : host}:${port}`),
    source: 'in-cluster',
    ...(exists(caFile) ? { ca: readFileSync(caFile) } : {}),
    insecureSkipTLSVerify: false,
    token: fileToken(tokenFile),
  };
}

export function fromKubeconfigFile(file: string): KubeCredentials {
  let doc: unknown;
  try {
    doc = parse(readFileSync(file, 'utf8'));
  } catch (err) {
    throw new Error(`kubeconfig ${file}: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
  }
  return fromKubeconfig(doc, file);
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);

/** Credentials of the current context of a parsed kubeconfig; relative paths in it are relative to `file`'s folder. */
export function fromKubeconfig(doc: unknown, file: string): KubeCredentials {
  const fail = (msg: string): never => {
    throw new Error(`kubeconfig ${file}: ${msg}`);
  };
  if (!isObj(doc)) return fail('not a kubeconfig (expected a mapping)');
  const contextName = str(doc, 'current-context', 'current-context', fail);
  if (!contextName) return fail('current-context is not set');
  const context = named(doc, 'contexts', 'context', contextName, fail);
  const clusterName = str(context, 'cluster', `contexts[${contextName}].context.cluster`, fail);
  if (!clusterName) return fail(`contexts[${contextName}].context.cluster is not set`);
  const cluster = named(doc, 'clusters', 'cluster', clusterName, fail);
  const userName = str(context, 'user', `contexts[${contextName}].context.user`, fail);
  const user = userName ? named(doc, 'users', 'user', userName, fail) : {};

  const c = (f: string) => `clusters[${clusterName}].cluster.${f}`;
  const u = (f: string) => `users[${userName ?? ''}].user.${f}`;
  const dir = path.dirname(path.resolve(file));
  const rel = (p: string) => path.resolve(dir, p);

  for (const field of ['proxy-url']) if (cluster[field] !== undefined) fail(`${c(field)} is not supported`);
  const unsupportedUser: Record<string, string> = {
    exec: 'exec credential plugins are not supported; use a token, token file or client certificate',
    'auth-provider': 'auth providers are not supported; use a token, token file or client certificate',
    username: 'basic auth is not supported (the API server dropped it in 1.19)',
    password: 'basic auth is not supported (the API server dropped it in 1.19)',
    as: 'impersonation is not supported',
    'as-uid': 'impersonation is not supported',
    'as-groups': 'impersonation is not supported',
    'as-user-extra': 'impersonation is not supported',
  };
  for (const [field, why] of Object.entries(unsupportedUser)) if (user[field] !== undefined && user[field] !== null) fail(`${u(field)}: ${why}`);

  const serverRaw = str(cluster, 'server', c('server'), fail);
  if (!serverRaw) return fail(`${c('server')} is not set`);
  let server: URL;
  try {
    server = new URL(serverRaw);
  } catch {
    return fail(`${c('server')}: ${serverRaw} is not a URL`);
  }
  if (server.protocol !== 'https:' && server.protocol !== 'http:') fail(`${c('server')}: ${serverRaw} is neither https nor http`);

  // The -data forms win over files, as in client-go.
  const material = (scope: Obj, field: string, name: string): Buffer | undefined => {
    const data = str(scope, `${field}-data`, `${name}-data`, fail);
    if (data) return Buffer.from(data, 'base64');
    const f = str(scope, field, name, fail);
    if (!f) return undefined;
    try {
      return readFileSync(rel(f));
    } catch (err) {
      return fail(`${name}: cannot read ${rel(f)}: ${err instanceof Error ? err.message : String(err)}`);
    }
  };
  const ca = material(cluster, 'certificate-authority', c('certificate-authority'));
  const insecure = cluster['insecure-skip-tls-verify'];
  if (insecure !== undefined && typeof insecure !== 'boolean') fail(`${c('insecure-skip-tls-verify')}: expected true or false`);
  if (insecure === true && ca) fail(`${c('insecure-skip-tls-verify')}: cannot be combined with a certificate authority (as kubectl)`);
  const tlsServerName = str(cluster, 'tls-server-name', c('tls-server-name'), fail);

  const cert = material(user, 'client-certificate', u('client-certificate'));
  const key = material(user, 'client-key', u('client-key'));
  if (!cert !== !key) fail(`${u(cert ? 'client-key' : 'client-certificate')} is missing: a client certificate needs its key`);

  const token = str(user, 'token', u('token'), fail);
  const tokenFile = str(user, 'tokenFile', u('tokenFile'), fail);
  if (!token && tokenFile && !exists(rel(tokenFile))) fail(`${u('tokenFile')}: ${rel(tokenFile)} does not exist`);
  return {
    server,
    source: `${file} (context ${contextName})`,
    ...(ca ? { ca } : {}),
    insecureSkipTLSVerify: insecure === true,
    ...(tlsServerName ? { tlsServerName } : {}),
    ...(cert && key ? { cert, key } : {}),
    // A literal token wins over tokenFile, as in clientcmd.
    token: token ? () => token : tokenFile ? fileToken(rel(tokenFile)) : () => undefined,
  };
}

/**
 * The token in `file`, read again whenever the file changes (kubelet swaps projected tokens in atomically, so the
 * stat of the path tells). A read error keeps the last good token: the API server's 401 then says what is wrong.
 */
export function fileToken(file: string): () => string | undefined {
  let stamp = '';
  let token: string | undefined;
  return () => {
    try {
      const st = statSync(file);
      const now = `${st.ino}:${st.mtimeMs}:${st.size}`;
      if (now !== stamp) {
        token = readFileSync(file, 'utf8').trim();
        stamp = now;
      }
    } catch {
      /* keep the last token */
    }
    return token || undefined;
  };
}

function exists(f: string): boolean {
  try {
    return statSync(f).isFile();
  } catch {
    return false;
  }
}

function str(o: Obj, field: string, name: string, fail: (msg: string) => never): string | undefined {
  const v = o[field];
  if (v === undefined || v === null || v === '') return undefined;
  if (typeof v !== 'string') return fail(`${name}: expected a string`);
  return v;
}

/** The `inner` mapping of the entry called `name` in the list `list` (`clusters`, `users`, `contexts`). */
function named(doc: Obj, list: string, inner: string, name: string, fail: (msg: string) => never): Obj {
  const entries = doc[list];
  if (entries !== undefined && entries !== null && !Array.isArray(entries)) fail(`${list}: expected a list`);
  const entry = ((entries as unknown[] | undefined) ?? []).find((e) => isObj(e) && e['name'] === name);
  if (!isObj(entry)) return fail(`${list}: no entry named ${name}`);
  const v = entry[inner];
  if (v === undefined || v === null) return {};
  if (!isObj(v)) return fail(`${list}[${name}].${inner}: expected a mapping`);
  return v;
}
