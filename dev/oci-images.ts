// Pushes tiny images to a registry through the distribution HTTP API: a config blob, a one-file gzip'd tar layer
// (written here byte by byte), and a Docker schema 2 or OCI manifest; with several platforms, one manifest each plus a
// manifest list / OCI index under the tag. Every digest the registry reports is checked against the one computed here.
import { createHash } from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import { gzipSync } from 'node:zlib';
import type { RegistryInfo } from './registry.js';

export const MediaTypes = {
  dockerManifest: 'application/vnd.docker.distribution.manifest.v2+json',
  dockerManifestList: 'application/vnd.docker.distribution.manifest.list.v2+json',
  dockerConfig: 'application/vnd.docker.container.image.v1+json',
  dockerLayer: 'application/vnd.docker.image.rootfs.diff.tar.gzip',
  ociManifest: 'application/vnd.oci.image.manifest.v1+json',
  ociIndex: 'application/vnd.oci.image.index.v1+json',
  ociConfig: 'application/vnd.oci.image.config.v1+json',
  ociLayer: 'application/vnd.oci.image.layer.v1.tar+gzip',
} as const;

/** An Accept header value for resolving a tag to whatever is stored under it (image, list or index). */
export const MANIFEST_ACCEPT = [MediaTypes.dockerManifest, MediaTypes.dockerManifestList, MediaTypes.ociManifest, MediaTypes.ociIndex].join(', ');

export interface Platform {
  os: string;
  architecture: string;
  variant?: string;
}

export interface PushOptions {
  /** Repository name in the registry, e.g. `tidal/hello`. */
  repository: string;
  tag: string;
  /** Basic auth (the registry's htpasswd users). */
  user?: string;
  password?: string;
  /** Several platforms: one manifest each, and a manifest list / OCI index under the tag. */
  platforms?: Platform[];
  /** Docker schema 2 (default) or OCI media types. */
  format?: 'docker' | 'oci';
  /**
   * Text baked into the layer's file. The default (`<repository>:<tag> <os>/<arch>`) makes pushes reproducible: the
   * same repository:tag always gets the same digest; pass something else to move a tag to a new digest.
   */
  content?: string;
}

export interface PushResult {
  /** The digest under the tag: the image manifest, or the list/index with `platforms`. */
  digest: string;
  /** With `platforms`: the per-platform manifest digests, in the order of `platforms`. */
  manifestDigests?: string[];
  /** Media type of the manifest under the tag. */
  mediaType: string;
}

export interface RegistryResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

export interface RequestOptions {
  headers?: Record<string, string>;
  body?: Buffer | string;
  user?: string;
  password?: string;
}

/** One HTTP(S) request to the registry, trusting `reg.caPem`. `target` is a path (`/v2/...`) or an absolute URL. */
export function registryRequest(
  reg: Pick<RegistryInfo, 'url' | 'caPem'>,
  method: string,
  target: string,
  opts: RequestOptions = {},
): Promise<RegistryResponse> {
  const url = new URL(target, reg.url);
  const headers: Record<string, string> = { ...opts.headers };
  if (opts.user !== undefined && opts.password !== undefined) {
    headers.Authorization = `Basic ${Buffer.from(`${opts.user}:${opts.password}`).toString('base64')}`;
  }
  const body = opts.body === undefined ? undefined : Buffer.isBuffer(opts.body) ? opts.body : Buffer.from(opts.body);
  if (body !== undefined || method === 'PUT' || method === 'POST') headers['Content-Length'] = String(body?.length ?? 0);
  const mod = url.protocol === 'https:' ? https : http;
  return new Promise((resolve, reject) => {
    const req = mod.request(url, { method, headers, agent: false, timeout: 30_000, ...(reg.caPem ? { ca: reg.caPem } : {}) }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error(`${method} ${url.href}: timed out`)));
    req.on('error', reject);
    req.end(body);
  });
}

function sha256(b: Buffer): string {
  return `sha256:${createHash('sha256').update(b).digest('hex')}`;
}

function header(res: RegistryResponse, name: string): string | undefined {
  const v = res.headers[name.toLowerCase()];
  return Array.isArray(v) ? v[0] : v;
}

function expectStatus(res: RegistryResponse, want: number[], what: string): void {
  if (!want.includes(res.status)) {
    throw new Error(`registry: ${what}: HTTP ${res.status} (want ${want.join('/')}): ${res.body.toString('utf8').slice(0, 500)}`);
  }
}

function expectDigest(res: RegistryResponse, want: string, what: string): void {
  const got = header(res, 'Docker-Content-Digest');
  if (got !== want) throw new Error(`registry: ${what}: Docker-Content-Digest ${got ?? '(none)'}, computed ${want}`);
}

// --- tar -------------------------------------------------------------------------------------------------------

function octal(n: number, width: number): string {
  // width - 1 digits and a NUL terminator.
  return `${n.toString(8).padStart(width - 1, '0')}\0`;
}

/** A POSIX ustar archive with one regular file: 512-byte header, data padded to 512, two zero blocks. */
export function tarOneFile(name: string, data: Buffer, mtime = 0): Buffer {
  if (Buffer.byteLength(name) > 100) throw new Error(`tar: name longer than 100 bytes: ${name}`);
  const h = Buffer.alloc(512, 0);
  h.write(name, 0, 100, 'utf8');
  h.write(octal(0o644, 8), 100, 'ascii'); // mode
  h.write(octal(0, 8), 108, 'ascii'); // uid
  h.write(octal(0, 8), 116, 'ascii'); // gid
  h.write(octal(data.length, 12), 124, 'ascii'); // size
  h.write(octal(mtime, 12), 136, 'ascii'); // mtime
  h.write('        ', 148, 'ascii'); // checksum field counts as spaces while summing
  h.write('0', 156, 'ascii'); // typeflag: regular file
  h.write('ustar\0', 257, 'ascii'); // magic
  h.write('00', 263, 'ascii'); // version
  h.write('root', 265, 'ascii'); // uname
  h.write('root', 297, 'ascii'); // gname
  let sum = 0;
  for (const b of h) sum += b;
  h.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148, 'ascii');
  const pad = Buffer.alloc((512 - (data.length % 512)) % 512, 0);
  return Buffer.concat([h, data, pad, Buffer.alloc(1024, 0)]);
}

// --- push ------------------------------------------------------------------------------------------------------

interface Descriptor {
  mediaType: string;
  digest: string;
  size: number;
  platform?: Platform;
}

type Auth = Pick<RequestOptions, 'user' | 'password'>;

export async function pushBlob(reg: Pick<RegistryInfo, 'url' | 'caPem'>, repository: string, blob: Buffer, auth: Auth): Promise<string> {
  const digest = sha256(blob);
  const head = await registryRequest(reg, 'HEAD', `/v2/${repository}/blobs/${digest}`, auth);
  if (head.status === 200) return digest;
  expectStatus(head, [404], `HEAD blob ${digest}`);
  const start = await registryRequest(reg, 'POST', `/v2/${repository}/blobs/uploads/`, auth);
  expectStatus(start, [202], `start upload in ${repository}`);
  const location = header(start, 'Location');
  if (!location) throw new Error(`registry: start upload in ${repository}: no Location header`);
  const target = new URL(location, reg.url);
  target.searchParams.set('digest', digest);
  const put = await registryRequest(reg, 'PUT', target.href, { ...auth, body: blob, headers: { 'Content-Type': 'application/octet-stream' } });
  expectStatus(put, [201], `upload blob ${digest} to ${repository}`);
  expectDigest(put, digest, `upload blob to ${repository}`);
  return digest;
}

export async function putManifest(
  reg: Pick<RegistryInfo, 'url' | 'caPem'>,
  repository: string,
  reference: string,
  manifest: object,
  mediaType: string,
  auth: Auth,
): Promise<Descriptor> {
  const body = Buffer.from(JSON.stringify(manifest, null, 2));
  const digest = sha256(body);
  const res = await registryRequest(reg, 'PUT', `/v2/${repository}/manifests/${reference}`, {
    ...auth,
    body,
    headers: { 'Content-Type': mediaType },
  });
  expectStatus(res, [201], `PUT manifest ${repository}:${reference}`);
  expectDigest(res, digest, `PUT manifest ${repository}:${reference}`);
  return { mediaType, digest, size: body.length };
}

async function pushPlatformImage(
  reg: RegistryInfo,
  opts: PushOptions,
  platform: Platform,
  reference: string | undefined,
  auth: Auth,
): Promise<Descriptor> {
  const oci = opts.format === 'oci';
  const text =
    opts.content ?? `${opts.repository}:${opts.tag} ${platform.os}/${platform.architecture}${platform.variant ? `/${platform.variant}` : ''}`;
  const tar = tarOneFile('hello.txt', Buffer.from(`${text}\n`));
  // node:zlib writes mtime 0 and no file name in the gzip header, so equal input gives an equal digest.
  const layer = gzipSync(tar, { level: 9 });
  const config = Buffer.from(
    JSON.stringify({
      architecture: platform.architecture,
      os: platform.os,
      ...(platform.variant ? { variant: platform.variant } : {}),
      created: '1970-01-01T00:00:00Z',
      config: { Cmd: ['/hello.txt'], Env: ['PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin'] },
      rootfs: { type: 'layers', diff_ids: [sha256(tar)] },
      history: [{ created: '1970-01-01T00:00:00Z', created_by: 'tidal dev/oci-images.ts' }],
    }),
  );
  const layerDigest = await pushBlob(reg, opts.repository, layer, auth);
  const configDigest = await pushBlob(reg, opts.repository, config, auth);
  const mediaType = oci ? MediaTypes.ociManifest : MediaTypes.dockerManifest;
  const manifest = {
    schemaVersion: 2,
    mediaType,
    config: { mediaType: oci ? MediaTypes.ociConfig : MediaTypes.dockerConfig, digest: configDigest, size: config.length },
    layers: [{ mediaType: oci ? MediaTypes.ociLayer : MediaTypes.dockerLayer, digest: layerDigest, size: layer.length }],
  };
  const body = Buffer.from(JSON.stringify(manifest, null, 2));
  const desc = await putManifest(reg, opts.repository, reference ?? sha256(body), manifest, mediaType, auth);
  return { ...desc, platform };
}

/**
 * Pushes a tiny image to `reg` under `repository:tag` and returns the digest the registry reports for the tag. With
 * `platforms`, pushes one image manifest per platform (by digest) and a manifest list (OCI index with `format: 'oci'`)
 * under the tag.
 */
export async function pushImage(reg: RegistryInfo, opts: PushOptions): Promise<PushResult> {
  const auth: Auth = opts.user !== undefined && opts.password !== undefined ? { user: opts.user, password: opts.password } : {};
  if (!opts.platforms || opts.platforms.length === 0) {
    const desc = await pushPlatformImage(reg, opts, { os: 'linux', architecture: 'amd64' }, opts.tag, auth);
    return { digest: desc.digest, mediaType: desc.mediaType };
  }
  const manifests: Descriptor[] = [];
  for (const p of opts.platforms) manifests.push(await pushPlatformImage(reg, opts, p, undefined, auth));
  const mediaType = opts.format === 'oci' ? MediaTypes.ociIndex : MediaTypes.dockerManifestList;
  const index = { schemaVersion: 2, mediaType, manifests };
  const desc = await putManifest(reg, opts.repository, opts.tag, index, mediaType, auth);
  return { digest: desc.digest, manifestDigests: manifests.map((m) => m.digest), mediaType };
}

/** The digest stored under `repository:reference` (HEAD with every manifest type accepted), or undefined on 404. */
export async function resolveDigest(reg: RegistryInfo, repository: string, reference: string, auth: Auth = {}): Promise<string | undefined> {
  const res = await registryRequest(reg, 'HEAD', `/v2/${repository}/manifests/${reference}`, { ...auth, headers: { Accept: MANIFEST_ACCEPT } });
  if (res.status === 404) return undefined;
  expectStatus(res, [200], `HEAD manifest ${repository}:${reference}`);
  return header(res, 'Docker-Content-Digest');
}
