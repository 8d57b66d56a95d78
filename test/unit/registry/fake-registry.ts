// An in-process OCI registry for tests: manifests by repository and tag, anonymous / Basic / Bearer auth,
// content negotiation for indexes, and switches for misbehaviour. Plain HTTP or HTTPS on 127.0.0.1, port 0.
import { createHash } from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';

export const OCI_INDEX = 'application/vnd.oci.image.index.v1+json';
export const OCI_MANIFEST = 'application/vnd.oci.image.manifest.v1+json';
export const DOCKER_MANIFEST = 'application/vnd.docker.distribution.manifest.v2+json';

export interface FakeManifest {
  mediaType: string;
  body: string;
  /** For an index: the platform manifest served to clients that do not accept index types. */
  platform?: FakeManifest;
}

export interface FakeRegistryOptions {
  manifests: Record<string, FakeManifest>; // "repo:tag"
  auth?: { type: 'basic'; username: string; password: string } | { type: 'bearer'; token: string; username?: string; password?: string };
  /** Send Docker-Content-Digest (default true). */
  digestHeader?: boolean;
  /** Never answer manifest requests. */
  hang?: boolean;
  /** Answer manifest requests with this status and an error body that echoes the request's Authorization header. */
  failWith?: number;
  tls?: { cert: string; key: string };
}

export interface RecordedRequest {
  method: string;
  path: string;
  authorization?: string;
  accept?: string;
}

export interface FakeRegistry {
  host: string; // 127.0.0.1:<port>
  requests: RecordedRequest[];
  close(): Promise<void>;
}

export function digestOf(body: string): string {
  return `sha256:${createHash('sha256').update(body).digest('hex')}`;
}

export function manifest(seed: string, mediaType = OCI_MANIFEST): FakeManifest {
  return { mediaType, body: JSON.stringify({ schemaVersion: 2, mediaType, config: { digest: digestOf(seed) }, layers: [] }) };
}

export function multiArchIndex(amd64: FakeManifest, arm64: FakeManifest): FakeManifest {
  const entry = (m: FakeManifest, architecture: string) => ({
    mediaType: m.mediaType,
    digest: digestOf(m.body),
    size: m.body.length,
    platform: { os: 'linux', architecture },
  });
  const body = JSON.stringify({ schemaVersion: 2, mediaType: OCI_INDEX, manifests: [entry(amd64, 'amd64'), entry(arm64, 'arm64')] });
  return { mediaType: OCI_INDEX, body, platform: amd64 };
}

export async function startFakeRegistry(opts: FakeRegistryOptions): Promise<FakeRegistry> {
  const requests: RecordedRequest[] = [];
  let base = '';

  const handler = (req: http.IncomingMessage, res: http.ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://x');
    requests.push({
      method: req.method ?? '',
      path: url.pathname + url.search,
      ...(req.headers.authorization ? { authorization: req.headers.authorization } : {}),
      ...(req.headers.accept ? { accept: req.headers.accept } : {}),
    });
    const auth = opts.auth;

    if (url.pathname === '/token') {
      if (auth?.type !== 'bearer') return void res.writeHead(404).end();
      if (auth.username !== undefined && req.headers.authorization !== basic(auth.username, auth.password ?? '')) {
        return void res.writeHead(401, { 'Content-Type': 'application/json' }).end('{"details":"incorrect username or password"}');
      }
      return void res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify({ token: auth.token, expires_in: 300 }));
    }

    const m = /^\/v2\/(.+)\/manifests\/([^/]+)$/.exec(url.pathname);
    if (!m) return void res.writeHead(404).end();
    const [, repo, ref] = m as unknown as [string, string, string];
    if (opts.hang) return; // never answer

    if (auth?.type === 'basic' && req.headers.authorization !== basic(auth.username, auth.password)) {
      return void res
        .writeHead(401, { 'WWW-Authenticate': 'Basic realm="fake"', 'Content-Type': 'application/json' })
        .end(errors('UNAUTHORIZED', 'authentication required'));
    }
    if (auth?.type === 'bearer' && req.headers.authorization !== `Bearer ${auth.token}`) {
      return void res
        .writeHead(401, {
          'WWW-Authenticate': `Bearer realm="${base}/token",service="fake",scope="repository:${repo}:pull"`,
          'Content-Type': 'application/json',
        })
        .end(errors('UNAUTHORIZED', 'authentication required'));
    }
    if (opts.failWith) {
      return void res
        .writeHead(opts.failWith, { 'Content-Type': 'application/json' })
        .end(errors('UNKNOWN', `internal error handling ${req.headers.authorization ?? 'no auth'}`));
    }

    let found = ref.startsWith('sha256:')
      ? Object.entries(opts.manifests).find(([k, v]) => k.startsWith(`${repo}:`) && digestOf(v.body) === ref)?.[1]
      : opts.manifests[`${repo}:${ref}`];
    if (!found) {
      return void res
        .writeHead(404, { 'Content-Type': 'application/json' })
        .end(req.method === 'HEAD' ? undefined : errors('MANIFEST_UNKNOWN', 'manifest unknown'));
    }
    if (found.platform && !(req.headers.accept ?? '').includes(found.mediaType)) found = found.platform;
    res.writeHead(200, {
      'Content-Type': found.mediaType,
      'Content-Length': Buffer.byteLength(found.body),
      ...(opts.digestHeader === false ? {} : { 'Docker-Content-Digest': digestOf(found.body) }),
    });
    res.end(req.method === 'HEAD' ? undefined : found.body);
  };

  const server = opts.tls ? https.createServer({ cert: opts.tls.cert, key: opts.tls.key }, handler) : http.createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  base = `${opts.tls ? 'https' : 'http'}://127.0.0.1:${port}`;
  return {
    host: `127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A port nothing listens on (bound, then released). */
export async function closedPort(): Promise<number> {
  const s = http.createServer();
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  const port = (s.address() as AddressInfo).port;
  await new Promise<void>((resolve) => s.close(() => resolve()));
  return port;
}

function basic(username: string, password: string): string {
  return `Basic ${Buffer.from(`${username}:${password}`).toString('base64')}`;
}

function errors(code: string, message: string): string {
  return JSON.stringify({ errors: [{ code, message }] });
}
