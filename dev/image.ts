// `npm run image`: Tidal's controller image without Docker or Docker Hub — the same contents the Dockerfile builds
// (Node 20, the compiled controller and workflow bundle, production dependencies only, uid 65532, `node
// dist/controller.js` as the entrypoint), assembled by hand as an OCI image layout and pushed with the registry
// client of dev/oci-images.ts.
//
// Three layers, least changing first: the runtime (this machine's `node` binary, the shared libraries it and the
// Temporal SDK's native module load, found with `ldd`, this machine's jemalloc — preloaded by the image's environment,
// as the Dockerfile does — the CA bundle, /etc/passwd and /etc/group with the nonroot user, /tmp), the production
// node_modules (`npm ls --omit=dev`), and the app (dist/ and a package.json marking it ESM).
// Archives are reproducible (sorted, mtime 0, root-owned), so unchanged layers keep their digests across builds.
//
//   npm run image                                    → 127.0.0.1:5443/tidal/controller:<version> (`npm run up`'s registry)
//   npm run image -- --registry https://host:port --ca ca.pem --repository tidal/controller --tag dev [--user u --password p]
//   npm run image -- --no-push                        → only the OCI layout in .tidal/image
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, readlinkSync, realpathSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { findJemalloc, JEMALLOC_CONF } from './allocator.js';
import { fileEntry, IMAGE_UID, makeImage, makeLayer, nonrootEntries, pushImageLayout, writeLayout, type BuiltImage } from './oci-layout.js';
import { CONTROLLER_NODE_FLAGS } from '../workers/node-flags.js';
import { withParentDirs, type TarEntry } from './tar.js';
import { MiB, argValue } from './cli-args.js';

// The layout and push helpers live in dev/oci-layout.ts; importers of the controller image get them here too.
export { IMAGE_UID, pushImageLayout, writeLayout };
export type { Blob, BuiltImage, PushTarget } from './oci-layout.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const APP = 'app';

/** The files of the Temporal SDK's native module this platform loads; other platforms' builds and Rust sources stay out. */
const nativeTarget = { x64: 'x86_64-unknown-linux-gnu', arm64: 'aarch64-unknown-linux-gnu' }[process.arch as 'x64' | 'arm64'];

/** Shared libraries `ldd` names for these binaries (each at the path the loader looks for it). */
function sharedLibraries(binaries: string[]): string[] {
  const libs = new Set<string>();
  for (const b of binaries) {
    for (const line of execFileSync('ldd', [b], { encoding: 'utf8' }).split('\n')) {
      const m = /=>\s+(\/\S+)/.exec(line) ?? /^\s*(\/\S+)\s+\(/.exec(line);
      if (m?.[1]) libs.add(m[1]);
    }
  }
  return [...libs].sort();
}

/** The runtime layer: node, its libraries (and jemalloc with its own, when given), CAs, users, /tmp. */
export function runtimeEntries(nativeModules: string[], jemalloc?: string): TarEntry[] {
  const node = realpathSync(process.execPath);
  const entries: TarEntry[] = [fileEntry('usr/local/bin/node', node, 0o755)];
  const libs = new Set(sharedLibraries([node, ...nativeModules, ...(jemalloc ? [jemalloc] : [])]));
  if (jemalloc) libs.add(jemalloc);
  for (const lib of [...libs].sort()) entries.push(fileEntry(lib.replace(/^\//, ''), realpathSync(lib)));
  entries.push(...nonrootEntries());
  return withParentDirs(entries);
}

/** Whether a file of an npm package is needed at run time. */
function keep(pkgRel: string, name: string): boolean {
  if (/\.(d\.ts|d\.mts|d\.cts|map|md|markdown|ts|mts|cts)$/i.test(name) && !name.endsWith('.node')) return false;
  if (/^(readme|changelog|history|authors|contributing)(\.|$)/i.test(name)) return false;
  return pkgRel !== '';
}

/** The production dependencies (npm ls --omit=dev) under app/node_modules, and the native modules among them. */
export function dependencyEntries(): { entries: TarEntry[]; nativeModules: string[] } {
  const out = execFileSync('npm', ['ls', '--omit=dev', '--all', '--parseable'], {
    cwd: repoRoot,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  const nodeModules = path.join(repoRoot, 'node_modules');
  const realNodeModules = realpathSync(nodeModules);
  const entries: TarEntry[] = [];
  const nativeModules: string[] = [];
  const dirs = out
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && path.resolve(l) !== repoRoot);
  for (const dir of dirs) {
    const real = realpathSync(dir);
    const rel = path.relative(realNodeModules, real);
    if (rel.startsWith('..')) throw new Error(`${dir}: not under node_modules`);
    const isCoreBridge = rel === path.join('@temporalio', 'core-bridge');
    const walk = (sub: string) => {
      for (const e of readdirSync(path.join(real, sub), { withFileTypes: true })) {
        const r = path.join(sub, e.name);
        if (e.isDirectory()) {
          if (sub === '' && e.name === 'node_modules') continue; // nested packages are listed on their own
          if (isCoreBridge && sub === '' && ['sdk-core', 'src', 'bridge-macros', 'scripts', 'ts'].includes(e.name)) continue;
          if (isCoreBridge && sub === 'releases' && e.name !== nativeTarget) continue;
          walk(r);
        } else if (e.isSymbolicLink()) {
          entries.push({
            path: path.posix.join(APP, 'node_modules', rel, r),
            type: 'symlink',
            mode: 0o777,
            linkTarget: readlinkSync(path.join(real, r)),
          });
        } else if (e.isFile() && keep(rel, e.name)) {
          const host = path.join(real, r);
          entries.push(fileEntry(path.posix.join(APP, 'node_modules', rel, r), host));
          if (e.name.endsWith('.node')) nativeModules.push(host);
        }
      }
    };
    walk('');
  }
  if (!nativeModules.length) throw new Error('no native module found among the production dependencies (@temporalio/core-bridge)');
  return { entries: withParentDirs(entries), nativeModules };
}

/** The app layer: the built controller and workflow bundle, and a package.json that makes dist/*.js ES modules. */
export function appEntries(dist = path.join(repoRoot, 'dist')): TarEntry[] {
  for (const f of ['controller.js', 'workflow-bundle.js'])
    if (!existsSync(path.join(dist, f))) throw new Error(`dist/${f} missing: run npm run build`);
  const pkg = JSON.parse(readFileSync(path.join(repoRoot, 'package.json'), 'utf8')) as { name: string; version: string };
  const manifest = { name: pkg.name, version: pkg.version, private: true, type: 'module' };
  return withParentDirs([
    { path: `${APP}/package.json`, type: 'file', mode: 0o644, data: Buffer.from(`${JSON.stringify(manifest, null, 2)}\n`) },
    fileEntry(`${APP}/dist/controller.js`, path.join(dist, 'controller.js'), 0o644),
    fileEntry(`${APP}/dist/workflow-bundle.js`, path.join(dist, 'workflow-bundle.js'), 0o644),
  ]);
}

/** The image's manifest, config and layers (nothing written yet). */
export function assembleImage(version: string, dist?: string): BuiltImage {
  const deps = dependencyEntries();
  // jemalloc preloaded, as the Dockerfile does (dev/allocator.ts says why); glibc's malloc when this machine lacks it.
  const jemalloc = findJemalloc();
  const layerSpecs: [string, TarEntry[]][] = [
    ['runtime', runtimeEntries(deps.nativeModules, jemalloc)],
    ['dependencies', deps.entries],
    ['app', appEntries(dist)],
  ];
  const layers = layerSpecs.map(([name, entries]) => makeLayer(name, entries));
  const nodeVersion = process.version;
  return makeImage(
    layers,
    {
      User: `${IMAGE_UID}:${IMAGE_UID}`,
      Env: [
        'PATH=/usr/local/bin:/usr/bin:/bin',
        'NODE_ENV=production',
        `NODE_VERSION=${nodeVersion.slice(1)}`,
        'HOME=/home/nonroot',
        ...(jemalloc ? [`LD_PRELOAD=${jemalloc}`, `MALLOC_CONF=${JEMALLOC_CONF}`] : []),
      ],
      // node is PID 1 and installs its own SIGTERM/SIGINT handlers (workers/controller.ts drains on them); the
      // controller starts no child processes, so there is nothing for an init to reap.
      Entrypoint: ['/usr/local/bin/node', ...CONTROLLER_NODE_FLAGS, 'dist/controller.js'],
      WorkingDir: `/${APP}`,
      ExposedPorts: { '8443/tcp': {}, '9464/tcp': {} },
      Labels: { 'org.opencontainers.image.title': 'tidal-controller', 'org.opencontainers.image.version': version },
    },
    'tidal npm run image',
  );
}

async function main(args: string[]): Promise<void> {
  const started = Date.now();
  if (!args.includes('--no-build')) {
    const { build, isBuildFresh } = await import('../workers/build.js');
    if (!isBuildFresh()) await build();
  }
  const pkg = JSON.parse(readFileSync(path.join(repoRoot, 'package.json'), 'utf8')) as { version: string };
  const repository = argValue(args, 'repository') ?? 'tidal/controller';
  const tag = argValue(args, 'tag') ?? pkg.version;
  const img = assembleImage(tag);
  const out = argValue(args, 'out') ?? path.join(repoRoot, '.tidal', 'image');
  writeLayout(img, out, tag);
  for (const l of img.layers)
    console.error(`[image] layer ${l.name}: ${MiB(l.size)} compressed, ${MiB(l.uncompressedSize)} unpacked (${l.digest.slice(0, 19)}…)`);
  const total = img.layers.reduce((n, l) => n + l.size, 0);
  const unpacked = img.layers.reduce((n, l) => n + l.uncompressedSize, 0);
  console.error(
    `[image] ${repository}:${tag} ${img.manifest.digest}: ${MiB(total)} compressed, ${MiB(unpacked)} unpacked; OCI layout in ${path.relative(repoRoot, out)}`,
  );
  if (args.includes('--no-push')) return;
  const registry = argValue(args, 'registry') ?? 'https://127.0.0.1:5443';
  const caFile = argValue(args, 'ca') ?? (registry === 'https://127.0.0.1:5443' ? path.join(repoRoot, '.tidal', 'registry-cas.pem') : undefined);
  const caPem = caFile && existsSync(caFile) ? readFileSync(caFile, 'utf8') : undefined;
  const user = argValue(args, 'user');
  const password = argValue(args, 'password') ?? process.env.TIDAL_IMAGE_PASSWORD;
  const digest = await pushImageLayout(img, { url: registry, caPem, repository, tag, ...(user && password ? { user, password } : {}) });
  console.error(`[image] pushed ${new URL(registry).host}/${repository}:${tag} → ${digest} in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  console.log(`${new URL(registry).host}/${repository}@${digest}`);
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main(process.argv.slice(2)).catch((err: unknown) => {
    console.error(`[image] ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  });
}
