// Single-platform OCI images assembled by hand, as `npm run image` (dev/image.ts) and dev/knative-images.ts build
// them: reproducible gzip'd tar layers (dev/tar.ts), a config and a manifest, written as an OCI image layout (which
// skopeo, crane or podman read) and pushed with dev/oci-images.ts's blob and manifest uploads.
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { MediaTypes, pushBlob, putManifest } from './oci-images.js';
import { tarArchive, type TarEntry } from './tar.js';

/** The nonroot user of distroless and Chainguard's static images, which Knative's images and Tidal's run as. */
export const IMAGE_UID = 65532;

/** Every timestamp in the images: a fixed one, so equal contents give equal digests. */
const EPOCH = '1970-01-01T00:00:00Z';

export interface Blob {
  mediaType: string;
  digest: string;
  size: number;
  data: Buffer;
}

export type Layer = Blob & { uncompressedSize: number; diffId: string; name: string };

export interface BuiltImage {
  manifest: Blob;
  config: Blob;
  layers: Layer[];
}

export function sha256(b: Buffer): string {
  return `sha256:${createHash('sha256').update(b).digest('hex')}`;
}

/** A file of this machine at `inImage`; executable files keep being executable. */
export function fileEntry(inImage: string, hostPath: string, mode?: number): TarEntry {
  const st = statSync(hostPath);
  return { path: inImage, type: 'file', mode: mode ?? (st.mode & 0o111 ? 0o755 : 0o644), data: readFileSync(hostPath) };
}

/** The OCI architecture of this machine. */
export function ociArchitecture(): string {
  return { x64: 'amd64', arm64: 'arm64' }[process.arch as 'x64' | 'arm64'] ?? process.arch;
}

/**
 * What a Go or Node program needs of distroless/static besides itself: root and the nonroot user (and groups), its
 * home, a world-writable sticky /tmp, and this machine's CA bundle at the path Go and OpenSSL read.
 */
export function nonrootEntries(): TarEntry[] {
  const entries: TarEntry[] = [];
  const caBundle = '/etc/ssl/certs/ca-certificates.crt';
  if (existsSync(caBundle)) entries.push(fileEntry('etc/ssl/certs/ca-certificates.crt', caBundle, 0o644));
  const passwd = `root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:${IMAGE_UID}:${IMAGE_UID}:nonroot:/home/nonroot:/sbin/nologin\n`;
  const group = `root:x:0:\nnonroot:x:${IMAGE_UID}:\n`;
  entries.push({ path: 'etc/passwd', type: 'file', mode: 0o644, data: Buffer.from(passwd) });
  entries.push({ path: 'etc/group', type: 'file', mode: 0o644, data: Buffer.from(group) });
  entries.push({ path: 'tmp', type: 'dir', mode: 0o1777 });
  entries.push({ path: 'home/nonroot', type: 'dir', mode: 0o755 });
  return entries;
}

/** A gzip'd layer of `entries` (already sorted, with their parent directories). */
export function makeLayer(name: string, entries: readonly TarEntry[], level = 9): Layer {
  const tar = tarArchive(entries);
  // node:zlib writes mtime 0 and no file name in the gzip header, so equal input gives an equal digest.
  const data = gzipSync(tar, { level });
  return { name, mediaType: MediaTypes.ociLayer, digest: sha256(data), size: data.length, data, uncompressedSize: tar.length, diffId: sha256(tar) };
}

/**
 * The image of `layers` (base first) with the container config `config` (Entrypoint, Env, User, …): its config blob
 * (linux on this machine's architecture, every date the epoch, one history entry per layer saying `createdBy: <layer
 * name>`) and its OCI manifest.
 */
export function makeImage(layers: Layer[], config: Record<string, unknown>, createdBy: string): BuiltImage {
  const configJson = {
    created: EPOCH,
    architecture: ociArchitecture(),
    os: 'linux',
    config,
    rootfs: { type: 'layers', diff_ids: layers.map((l) => l.diffId) },
    history: layers.map((l) => ({ created: EPOCH, created_by: `${createdBy}: ${l.name}` })),
  };
  const configData = Buffer.from(JSON.stringify(configJson));
  const configBlob: Blob = { mediaType: MediaTypes.ociConfig, digest: sha256(configData), size: configData.length, data: configData };
  const manifestJson = {
    schemaVersion: 2,
    mediaType: MediaTypes.ociManifest,
    config: { mediaType: configBlob.mediaType, digest: configBlob.digest, size: configBlob.size },
    layers: layers.map((l) => ({ mediaType: l.mediaType, digest: l.digest, size: l.size })),
  };
  // Indented as putManifest re-serialises it, so the digest computed here is the one the registry reports.
  const manifestData = Buffer.from(JSON.stringify(manifestJson, null, 2));
  return {
    manifest: { mediaType: MediaTypes.ociManifest, digest: sha256(manifestData), size: manifestData.length, data: manifestData },
    config: configBlob,
    layers,
  };
}

/**
 * Writes an OCI image layout (oci-layout, index.json, blobs/sha256/…) that skopeo, crane or podman can read. It is
 * written beside `dir` and renamed into place, so a reader never sees half of one.
 */
export function writeLayout(img: BuiltImage, dir: string, ref: string): void {
  const tmp = `${dir}.tmp-${process.pid}`;
  rmSync(tmp, { recursive: true, force: true });
  mkdirSync(path.join(tmp, 'blobs', 'sha256'), { recursive: true });
  for (const b of [img.manifest, img.config, ...img.layers])
    writeFileSync(path.join(tmp, 'blobs', 'sha256', b.digest.slice('sha256:'.length)), b.data);
  writeFileSync(path.join(tmp, 'oci-layout'), JSON.stringify({ imageLayoutVersion: '1.0.0' }));
  const index = {
    schemaVersion: 2,
    mediaType: MediaTypes.ociIndex,
    manifests: [
      {
        mediaType: img.manifest.mediaType,
        digest: img.manifest.digest,
        size: img.manifest.size,
        annotations: { 'org.opencontainers.image.ref.name': ref },
      },
    ],
  };
  writeFileSync(path.join(tmp, 'index.json'), JSON.stringify(index, null, 2));
  rmSync(dir, { recursive: true, force: true });
  try {
    renameSync(tmp, dir);
  } catch (err) {
    // Another writer of the same layout renamed first; layouts are reproducible, so theirs is this one.
    rmSync(tmp, { recursive: true, force: true });
    if (!existsSync(path.join(dir, 'index.json'))) throw err;
  }
}

interface Descriptor {
  mediaType: string;
  digest: string;
  size: number;
}

/**
 * The single image of a layout {@link writeLayout} wrote, every blob checked against its digest. Layers are named by
 * their history entries.
 */
export function readLayout(dir: string): BuiltImage {
  const blob = (d: Descriptor): Blob => {
    const data = readFileSync(path.join(dir, 'blobs', 'sha256', d.digest.slice('sha256:'.length)));
    if (data.length !== d.size || sha256(data) !== d.digest) throw new Error(`${dir}: blob ${d.digest} does not match its digest`);
    return { mediaType: d.mediaType, digest: d.digest, size: d.size, data };
  };
  const index = JSON.parse(readFileSync(path.join(dir, 'index.json'), 'utf8')) as { manifests: Descriptor[] };
  if (index.manifests.length !== 1 || !index.manifests[0]) throw new Error(`${dir}: expected one image in index.json`);
  const manifest = blob(index.manifests[0]);
  const m = JSON.parse(manifest.data.toString('utf8')) as { config: Descriptor; layers: Descriptor[] };
  const config = blob(m.config);
  const c = JSON.parse(config.data.toString('utf8')) as { rootfs: { diff_ids: string[] }; history?: { created_by?: string }[] };
  const layers = m.layers.map((d, i): Layer => {
    const b = blob(d);
    // gzip's trailer ends with the input's size (mod 2^32; layers are smaller).
    const uncompressedSize = b.data.length >= 4 ? b.data.readUInt32LE(b.data.length - 4) : 0;
    return { ...b, name: c.history?.[i]?.created_by ?? `layer ${i}`, diffId: c.rootfs.diff_ids[i] ?? '', uncompressedSize };
  });
  return { manifest, config, layers };
}

export interface PushTarget {
  /** `https://host:port` (or http://). */
  url: string;
  caPem: string | undefined;
  repository: string;
  tag: string;
  user?: string;
  password?: string;
}

/** Pushes every blob (skipping those the registry has) and the manifest under the tag; returns the manifest digest. */
export async function pushImageLayout(img: BuiltImage, to: PushTarget): Promise<string> {
  const reg = { url: to.url, caPem: to.caPem };
  const auth = to.user !== undefined && to.password !== undefined ? { user: to.user, password: to.password } : {};
  for (const b of [...img.layers, img.config]) await pushBlob(reg, to.repository, b.data, auth);
  const put = await putManifest(reg, to.repository, to.tag, JSON.parse(img.manifest.data.toString('utf8')) as object, img.manifest.mediaType, auth);
  // putManifest re-serialises with the same indentation: the digest must be the one computed here.
  if (put.digest !== img.manifest.digest) throw new Error(`registry stored manifest ${put.digest}, built ${img.manifest.digest}`);
  return put.digest;
}
