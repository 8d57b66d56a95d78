// Knative Serving's own queue-proxy and conformance/e2e test images (helloworld, runtime, autoscale, …), built from
// source with `go build` (dev/build-knative.sh) and packaged here as ko would: one single-platform OCI image per
// binary, pushed to a registry as `<prefix>/<name>:<tag>` (queue-proxy is `<prefix>/queue`), the names the upstream
// tests use (test/conformance.go).
//
// Each image has two reproducible layers (dev/oci-layout.ts): a base shared by all of them with what distroless/static
// gives a static Go binary (root and nonroot users, /tmp, /home/nonroot, the CA bundle, nsswitch.conf), and the
// binary at /ko-app/<name> with its kodata (if any) at /var/run/ko. The config is ko's on upstream's base
// (.ko.yaml: Chainguard's static image, which runs as the nonroot user): Entrypoint /ko-app/<name>, PATH with /ko-app,
// KO_DATA_PATH=/var/run/ko, User 65532. Assembled layouts are cached beside the binaries
// (~/.cache/tidal/knative-serving-<version>/oci/<name>), so only a rebuilt binary or base is packaged again.
//
//   npm run images:knative -- --registry https://127.0.0.1:5443 --ca ca.pem [--prefix knative] [--tag latest]
//                             [--user u] (password in TIDAL_IMAGE_PASSWORD) [--no-push] [--control-plane]
//   (--control-plane: upstream's controller, webhook, activator and autoscaler images too)
//   npm run images:knative -- --networking …
//   (--networking: knative.dev/networking's test images instead, the KIngress conformance suite's backends, under
//   the prefix knative-networking unless --prefix says otherwise)
//   prints `<name> <registry>/<prefix>/<name>:<tag>@<digest>` per image
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  fileEntry,
  makeImage,
  makeLayer,
  nonrootEntries,
  pushImageLayout,
  readLayout,
  writeLayout,
  IMAGE_UID,
  type BuiltImage,
  type Layer,
} from './oci-layout.js';
import { startStackRegistry, type RegistryInfo } from './registry.js';
import { withParentDirs, type TarEntry } from './tar.js';
import { MiB, argValue } from './cli-args.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** The image name of queue-proxy (knative.dev/serving/cmd/queue). */
export const QUEUE_IMAGE = 'queue';
/** Where ko puts the binary, and its kodata. */
export const KO_APP_DIR = '/ko-app';
export const KO_DATA_PATH = '/var/run/ko';
/** Bumped when what goes into an image changes, so cached layouts are assembled again. */
const RECIPE = 1;

/**
 * What an image is for: queue-proxy, a test image, a part of upstream's own control plane, or a test image of
 * knative.dev/networking (several share a name with serving's, so they are built, cached and pushed apart).
 */
export type KnativeImageRole = 'queue' | 'test' | 'serving' | 'networking';

export interface KnativeBinaries {
  version: string;
  binDir: string;
  kodataDir: string;
  /** The compiled conformance suites (`<name>.test`). */
  testsDir: string;
  /** knative.dev/serving's module source (test/config, config/core). */
  moduleDir: string;
  /** Image name → Go import path, in build order. */
  packages: Record<string, string>;
  /** Image name → its role. */
  roles: Record<string, KnativeImageRole>;
  /** knative.dev/networking: its test images' binaries, kodata, image name → import path, and its module source. */
  networking: { binDir: string; kodataDir: string; packages: Record<string, string>; moduleDir: string };
}

/**
 * Runs dev/build-knative.sh (which builds only what is missing, under its own lock) and reads what it built.
 * `KNATIVE_SERVING_VERSION` in the environment picks another release.
 */
export function buildKnativeBinaries(onProgress: (line: string) => void = (l) => process.stderr.write(`${l}\n`)): Promise<KnativeBinaries> {
  return new Promise((resolve, reject) => {
    const child = execFile('bash', [path.join(repoRoot, 'dev', 'build-knative.sh')], { maxBuffer: 16 << 20 }, (err, stdout) => {
      if (err) return reject(new Error(`dev/build-knative.sh failed: ${err.message}`));
      const vars = Object.fromEntries(
        stdout
          .split('\n')
          .filter((l) => /^[A-Z_]+=/.test(l))
          .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]),
      );
      const {
        KNATIVE_SERVING_VERSION: version,
        KNATIVE_BIN: binDir,
        KNATIVE_KODATA: kodataDir,
        KNATIVE_TESTS: testsDir,
        KNATIVE_MODULE: moduleDir,
        KNATIVE_NETWORKING_BIN: netBinDir,
        KNATIVE_NETWORKING_KODATA: netKodataDir,
        KNATIVE_NETWORKING_MODULE: netModuleDir,
      } = vars;
      if (!version || !binDir || !kodataDir || !testsDir || !moduleDir || !netBinDir || !netKodataDir || !netModuleDir)
        return reject(new Error(`dev/build-knative.sh printed no KNATIVE_BIN: ${stdout}`));
      const tsv = readFileSync(path.join(path.dirname(binDir), 'packages.tsv'), 'utf8');
      const netTsv = readFileSync(path.join(path.dirname(binDir), 'packages-networking.tsv'), 'utf8');
      resolve({
        version,
        binDir,
        kodataDir,
        testsDir,
        moduleDir,
        packages: parsePackages(tsv),
        roles: parseRoles(tsv),
        networking: { binDir: netBinDir, kodataDir: netKodataDir, packages: parsePackages(netTsv), moduleDir: netModuleDir },
      });
    });
    let partial = '';
    child.stderr?.on('data', (chunk: Buffer) => {
      const lines = (partial + chunk.toString('utf8')).split('\n');
      partial = lines.pop() ?? '';
      for (const l of lines) if (l) onProgress(l);
    });
  });
}

/** `name<TAB>import path` lines. */
export function parsePackages(tsv: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of tsv.split('\n')) {
    const [name, pkg] = line.split('\t');
    if (name && pkg) out[name] = pkg;
  }
  return out;
}

/** `name<TAB>import path<TAB>role` lines → image name → role (test when the column is missing). */
export function parseRoles(tsv: string): Record<string, KnativeImageRole> {
  const out: Record<string, KnativeImageRole> = {};
  for (const line of tsv.split('\n')) {
    const [name, pkg, role] = line.split('\t');
    if (name && pkg) out[name] = role === 'queue' || role === 'serving' || role === 'networking' ? role : 'test';
  }
  return out;
}

/** The base layer's files: distroless/static's essentials for a static binary. */
export function baseEntries(): TarEntry[] {
  // Go's resolver reads the hosts line (files before DNS, as glibc would); distroless ships the same.
  const nsswitch = 'hosts: files dns\n';
  return withParentDirs([...nonrootEntries(), { path: 'etc/nsswitch.conf', type: 'file', mode: 0o644, data: Buffer.from(nsswitch) }]);
}

/** Every file under `dir`, relative, sorted (empty when it does not exist). */
function listTree(dir: string): { rel: string; dir: boolean }[] {
  if (!existsSync(dir)) return [];
  const out: { rel: string; dir: boolean }[] = [];
  const walk = (sub: string) => {
    for (const e of readdirSync(path.join(dir, sub), { withFileTypes: true })) {
      const rel = path.posix.join(sub, e.name);
      if (e.isDirectory()) {
        out.push({ rel, dir: true });
        walk(rel);
      } else if (e.isFile()) out.push({ rel, dir: false });
    }
  };
  walk('');
  return out.sort((a, b) => (a.rel < b.rel ? -1 : a.rel > b.rel ? 1 : 0));
}

/** The app layer's files: the binary at /ko-app/<name>, and /var/run/ko with the kodata folder's contents. */
export function appEntries(name: string, binary: string, kodata: string | undefined): TarEntry[] {
  const ko = KO_DATA_PATH.slice(1);
  const entries: TarEntry[] = [fileEntry(`${KO_APP_DIR.slice(1)}/${name}`, binary, 0o755), { path: ko, type: 'dir', mode: 0o755 }];
  if (kodata) {
    for (const f of listTree(kodata)) {
      entries.push(f.dir ? { path: `${ko}/${f.rel}`, type: 'dir', mode: 0o755 } : fileEntry(`${ko}/${f.rel}`, path.join(kodata, f.rel)));
    }
  }
  return withParentDirs(entries);
}

/** The container config ko writes on a nonroot static base. */
export function knativeImageConfig(name: string, version: string, importPath: string | undefined): Record<string, unknown> {
  return {
    User: String(IMAGE_UID),
    Env: [`PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin:${KO_APP_DIR}`, `KO_DATA_PATH=${KO_DATA_PATH}`],
    Entrypoint: [`${KO_APP_DIR}/${name}`],
    WorkingDir: '/',
    Labels: {
      'org.opencontainers.image.title': name,
      'org.opencontainers.image.version': version,
      ...(importPath ? { 'org.opencontainers.image.source': `https://${importPath}` } : {}),
    },
  };
}

/** One image: the shared base layer and the app layer of `binary`. */
export function assembleKnativeImage(
  name: string,
  base: Layer,
  binary: string,
  kodata: string | undefined,
  version: string,
  importPath: string | undefined,
): BuiltImage {
  // Level 6: the binaries are most of the bytes, and level 9 makes them <1% smaller for twice the time.
  const app = makeLayer(name, appEntries(name, binary, kodata), 6);
  return makeImage([base, app], knativeImageConfig(name, version, importPath), `tidal dev/knative-images.ts ${version}`);
}

export interface KnativeImage {
  name: string;
  image: BuiltImage;
  /** Its OCI image layout (`skopeo copy oci:<layout> …`). */
  layout: string;
}

/** What a cached layout was made from: when any of it changes, the image is assembled again. */
function sourceKey(base: Layer, binary: string, kodata: string | undefined, version: string, importPath: string | undefined): string {
  const st = statSync(binary);
  const kodataFiles = kodata
    ? listTree(kodata).map((f) =>
        f.dir ? `${f.rel}/` : `${f.rel} ${statSync(path.join(kodata, f.rel)).size} ${statSync(path.join(kodata, f.rel)).mtimeMs}`,
      )
    : [];
  return JSON.stringify({ recipe: RECIPE, base: base.digest, version, importPath, binary: [st.size, st.mtimeMs], kodata: kodataFiles });
}

/** Where networking's test images are pushed by default: `--dockerrepo=<registry>/knative-networking`. */
export const NETWORKING_PREFIX = 'knative-networking';

/** The images a stack with a real node needs: queue-proxy and the test images (upstream's control plane only on request). */
export const DEFAULT_ROLES: KnativeImageRole[] = ['queue', 'test'];

/** One image to package: where its binary and kodata are, and where its layout is cached. */
interface ImageSource {
  name: string;
  importPath: string;
  binary: string;
  kodataDir: string;
  layout: string;
}

/**
 * The images of `roles`, serving's from bin/ (layouts in oci/), networking's from bin-networking/ (layouts in
 * oci-networking/). Serving's test images and networking's cannot be asked for together: they share names.
 */
export function imageSources(bins: KnativeBinaries, roles: KnativeImageRole[]): ImageSource[] {
  const root = path.dirname(bins.binDir);
  if (roles.includes('networking') && roles.includes('test'))
    throw new Error("serving's and networking's test images share names (runtime, grpc-ping, …): build them apart");
  const out: ImageSource[] = [];
  for (const [name, importPath] of Object.entries(bins.packages)) {
    if (!roles.includes(bins.roles[name] ?? 'test')) continue;
    out.push({
      name,
      importPath,
      binary: path.join(bins.binDir, name),
      kodataDir: path.join(bins.kodataDir, name),
      layout: path.join(root, 'oci', name),
    });
  }
  if (roles.includes('networking')) {
    const net = bins.networking;
    for (const [name, importPath] of Object.entries(net.packages)) {
      if (out.some((s) => s.name === name)) throw new Error(`networking's image ${name} has the name of one of serving's`);
      out.push({
        name,
        importPath,
        binary: path.join(net.binDir, name),
        kodataDir: path.join(net.kodataDir, name),
        layout: path.join(root, 'oci-networking', name),
      });
    }
  }
  return out;
}

/**
 * Builds the binaries (dev/build-knative.sh) and returns the images of `roles` (default {@link DEFAULT_ROLES}), image name → image, assembling only those whose
 * binary, kodata or base changed since their layout was cached.
 */
export async function buildKnativeImages(
  opts: { onProgress?: (line: string) => void; roles?: KnativeImageRole[] } = {},
): Promise<Record<string, KnativeImage>> {
  const log = opts.onProgress ?? ((l: string) => process.stderr.write(`${l}\n`));
  const bins = await buildKnativeBinaries(log);
  const sources = imageSources(bins, opts.roles ?? DEFAULT_ROLES);
  const base = makeLayer('base', baseEntries());
  const out: Record<string, KnativeImage> = {};
  const started = Date.now();
  let assembled = 0;
  for (const { name, importPath, binary, kodataDir, layout } of sources) {
    mkdirSync(path.dirname(layout), { recursive: true });
    const kodata = existsSync(kodataDir) ? kodataDir : undefined;
    const keyFile = `${layout}.source.json`;
    const key = sourceKey(base, binary, kodata, bins.version, importPath);
    let image: BuiltImage | undefined;
    if (existsSync(keyFile) && readFileSync(keyFile, 'utf8') === key && existsSync(path.join(layout, 'index.json'))) {
      try {
        image = readLayout(layout);
      } catch {
        image = undefined; // damaged: assembled again below
      }
    }
    if (!image) {
      image = assembleKnativeImage(name, base, binary, kodata, bins.version, importPath);
      writeLayout(image, layout, `${name}:${bins.version}`);
      writeFileSync(keyFile, key);
      assembled++;
    }
    out[name] = { name, image, layout };
  }
  if (assembled > 0) log(`[knative-images] assembled ${assembled} image(s) in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  return out;
}

export interface PushedImage {
  /** `<registry host>/<prefix>/<name>:<tag>`. */
  ref: string;
  digest: string;
}

/**
 * Builds (as {@link buildKnativeImages}) and pushes every image to `reg` as `<prefix>/<name>:<tag>` — queue-proxy as
 * `<prefix>/queue:<tag>` — uploading only the blobs the registry lacks, with the registry's first user when it has
 * any (or `opts.user`/`opts.password`). Returns image name → its tag and the digest under it.
 */
export async function pushKnativeImages(
  reg: Pick<RegistryInfo, 'url' | 'host' | 'caPem'> & Partial<Pick<RegistryInfo, 'users'>>,
  opts: { prefix?: string; tag?: string; user?: string; password?: string; images?: Record<string, KnativeImage> } = {},
): Promise<Record<string, PushedImage>> {
  const prefix = opts.prefix ?? 'knative';
  const tag = opts.tag ?? 'latest';
  const images = opts.images ?? (await buildKnativeImages());
  const [regUser, regPassword] = Object.entries(reg.users ?? {})[0] ?? [];
  const user = opts.user ?? regUser;
  const password = opts.password ?? regPassword;
  const out: Record<string, PushedImage> = {};
  for (const { name, image } of Object.values(images)) {
    const repository = `${prefix}/${name}`;
    const digest = await pushImageLayout(image, {
      url: reg.url,
      caPem: reg.caPem,
      repository,
      tag,
      ...(user !== undefined && password !== undefined ? { user, password } : {}),
    });
    out[name] = { ref: `${reg.host}/${repository}:${tag}`, digest };
  }
  return out;
}

/** The queue-proxy image among `pushed`, by digest: what config-deployment's queue-sidecar-image names. */
export function queueImageRef(registryHost: string, pushed: Record<string, PushedImage>, prefix = 'knative'): string {
  const queue = pushed[QUEUE_IMAGE];
  if (!queue) throw new Error('no queue-proxy image was built');
  return `${registryHost}/${prefix}/${QUEUE_IMAGE}@${queue.digest}`;
}

/** A real node's registry with Knative's images in it, and the stack option that names them. */
export interface RealNodeRegistry {
  registry: RegistryInfo;
  caFile: string;
  images: Record<string, PushedImage>;
  realNode: { registryPort: number; registryCaFile: string; queueImage: string };
}

/** Starts the stack's registry ({@link startStackRegistry}) and pushes queue-proxy and the test images to it. */
export async function startRealNodeRegistry(stackDir: string, port: number): Promise<RealNodeRegistry> {
  const { registry, caFile } = await startStackRegistry(stackDir, port);
  const images = await pushKnativeImages(registry);
  return { registry, caFile, images, realNode: { registryPort: port, registryCaFile: caFile, queueImage: queueImageRef(registry.host, images) } };
}

async function main(args: string[]): Promise<void> {
  const started = Date.now();
  const roles: KnativeImageRole[] = args.includes('--networking')
    ? ['networking']
    : args.includes('--control-plane')
      ? [...DEFAULT_ROLES, 'serving']
      : DEFAULT_ROLES;
  const images = await buildKnativeImages({ roles });
  for (const { name, image } of Object.values(images)) {
    const size = image.layers.reduce((n, l) => n + l.size, 0);
    const unpacked = image.layers.reduce((n, l) => n + l.uncompressedSize, 0);
    console.error(`[knative-images] ${name} ${image.manifest.digest}: ${MiB(size)} compressed, ${MiB(unpacked)} unpacked`);
  }
  if (args.includes('--no-push')) {
    for (const { name, layout } of Object.values(images)) console.log(`${name} oci:${layout}`);
    return;
  }
  const registry = argValue(args, 'registry') ?? 'https://127.0.0.1:5443';
  const caFile = argValue(args, 'ca') ?? (registry === 'https://127.0.0.1:5443' ? path.join(repoRoot, '.tidal', 'registry-cas.pem') : undefined);
  const caPem = caFile && existsSync(caFile) ? readFileSync(caFile, 'utf8') : undefined;
  const user = argValue(args, 'user');
  const password = argValue(args, 'password') ?? process.env.TIDAL_IMAGE_PASSWORD;
  const prefix = argValue(args, 'prefix') ?? (roles.includes('networking') ? NETWORKING_PREFIX : undefined);
  const tag = argValue(args, 'tag');
  const pushed = await pushKnativeImages(
    { url: registry, host: new URL(registry).host, caPem },
    { images, ...(prefix ? { prefix } : {}), ...(tag ? { tag } : {}), ...(user && password ? { user, password } : {}) },
  );
  for (const [name, p] of Object.entries(pushed)) console.log(`${name} ${p.ref}@${p.digest}`);
  console.error(`[knative-images] pushed ${Object.keys(pushed).length} images in ${((Date.now() - started) / 1000).toFixed(1)} s`);
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main(process.argv.slice(2)).catch((err: unknown) => {
    console.error(`[knative-images] ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  });
}
