// `npm run release -- v0.1.0`: a release of Tidal from a clean tree, in dist/release/v0.1.0/:
//   tidal-crds.yaml, tidal-core.yaml   deploy/ as two files, every object labelled app.kubernetes.io/version, the
//                                      controller's image named by digest (dev/release-manifests.ts)
//   image/                             the controller image as an OCI layout (dev/image.ts), pushed with --registry
//   dist/                              the controller and workflow bundle the image holds, stamped with the commit
//   kubectl-tidal                      the kubectl plugin, one file (cli/build.ts):
//                                      `install -m 0755 kubectl-tidal /usr/local/bin/` makes it `kubectl tidal`
// and the git tag `v0.1.0` on the commit it was built from. The version must be package.json's and have a section in
// CHANGELOG.md. A user installs it with `kubectl apply --server-side -f tidal-crds.yaml` then `-f tidal-core.yaml`.
//
//   --image-repository <repo>   how the manifests name the image (default ghcr.io/tidal-serving/controller)
//   --registry https://host:port [--ca ca.pem] [--user u --password p]   also push the image there (repository path
//                               taken from --image-repository without its host)
//   --snapshot                  a tree with changes, another version than package.json's, no tag: for trying a
//                               release out; the commit is stamped `<sha>-dirty` when the tree has changes
//   --out <dir>                 instead of dist/release/<version>
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { argValue } from './cli-args.js';
import { kustomizationResources, releaseManifests } from './release-manifests.js';
import { repoRoot } from './kubectl.js';

const say = (s: string) => console.error(`[release] ${s}`);
const git = (...args: string[]) => execFileSync('git', args, { cwd: repoRoot, encoding: 'utf8' }).trim();

export interface ReleaseResult {
  version: string;
  commit: string;
  image: string;
  dir: string;
}

export interface ReleaseOptions {
  imageRepository?: string;
  snapshot?: boolean;
  out?: string;
  push?: { url: string; caPem: string | undefined; user?: string; password?: string };
}

export async function release(versionArg: string, opts: ReleaseOptions = {}): Promise<ReleaseResult> {
  const version = versionArg.startsWith('v') ? versionArg : `v${versionArg}`;
  const pkg = JSON.parse(readFileSync(path.join(repoRoot, 'package.json'), 'utf8')) as { version: string };
  const dirty = git('status', '--porcelain') !== '';
  if (!opts.snapshot) {
    if (dirty) throw new Error('the tree has changes: commit them first (or --snapshot to try a release out)');
    if (`v${pkg.version}` !== version) throw new Error(`package.json says ${pkg.version}: set "version" to ${version.slice(1)} first`);
    const changelog = readFileSync(path.join(repoRoot, 'CHANGELOG.md'), 'utf8');
    if (!new RegExp(`^## ${version.replace(/\./g, '\\.')}\\b`, 'm').test(changelog)) throw new Error(`CHANGELOG.md has no "## ${version}" section`);
    const tagged = tagCommit(version);
    if (tagged !== undefined && tagged !== git('rev-parse', 'HEAD')) throw new Error(`tag ${version} already names ${tagged}`);
  }
  const commit = `${git('rev-parse', 'HEAD')}${dirty ? '-dirty' : ''}`;
  const dir = opts.out ?? path.join(repoRoot, 'dist', 'release', version);
  mkdirSync(dir, { recursive: true });

  // Built in the release's own folder: the checkout's dist/ holds a build stamped `dev` that the local stack runs.
  const { build } = await import('../workers/build.js');
  const dist = path.join(dir, 'dist');
  await build(say, commit, dist);
  const { assembleImage, pushImageLayout, writeLayout } = await import('./image.js');
  const img = assembleImage(version, dist);
  writeLayout(img, path.join(dir, 'image'), version);
  const repository = opts.imageRepository ?? 'ghcr.io/tidal-serving/controller';
  if (opts.push) {
    const pushed = await pushImageLayout(img, { ...opts.push, repository: repository.replace(/^[^/]+\//, ''), tag: version });
    say(`pushed ${new URL(opts.push.url).host}/${repository.replace(/^[^/]+\//, '')}:${version} → ${pushed}`);
  }
  const image = `${repository}@${img.manifest.digest}`;

  const { buildPlugin } = await import('../cli/build.js');
  await buildPlugin(path.join(dir, 'kubectl-tidal'));

  const deploy = path.join(repoRoot, 'deploy');
  const files = kustomizationResources(readFileSync(path.join(deploy, 'kustomization.yaml'), 'utf8')).map((p) => ({
    path: p,
    text: readFileSync(path.join(deploy, p), 'utf8'),
  }));
  const manifests = releaseManifests({ version, image, files });
  writeFileSync(path.join(dir, 'tidal-crds.yaml'), manifests.crds);
  writeFileSync(path.join(dir, 'tidal-core.yaml'), manifests.core);

  if (!opts.snapshot && tagCommit(version) === undefined) git('tag', '-a', version, '-m', `Tidal ${version}`);
  say(`${version} (${commit.slice(0, 12)}): ${image}; manifests in ${path.relative(repoRoot, dir) || dir}`);
  return { version, commit, image, dir };
}

/** The commit a tag names, or undefined. */
function tagCommit(tag: string): string | undefined {
  try {
    return git('rev-parse', '--verify', '--quiet', `refs/tags/${tag}^{commit}`);
  } catch {
    return undefined;
  }
}

async function main(args: string[]): Promise<void> {
  const version = args.find((a) => !a.startsWith('--') && !args[args.indexOf(a) - 1]?.startsWith('--'));
  if (!version) throw new Error('usage: npm run release -- <version> [--image-repository r] [--registry url] [--snapshot] [--out dir]');
  const registry = argValue(args, 'registry');
  const ca = argValue(args, 'ca');
  const user = argValue(args, 'user');
  const password = argValue(args, 'password') ?? process.env.TIDAL_IMAGE_PASSWORD;
  const out = argValue(args, 'out');
  const imageRepository = argValue(args, 'image-repository');
  const r = await release(version, {
    snapshot: args.includes('--snapshot'),
    ...(out ? { out: path.resolve(out) } : {}),
    ...(imageRepository ? { imageRepository } : {}),
    ...(registry
      ? {
          push: {
            url: registry,
            caPem: ca && existsSync(ca) ? readFileSync(ca, 'utf8') : undefined,
            ...(user && password ? { user, password } : {}),
          },
        }
      : {}),
  });
  console.log(JSON.stringify(r));
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main(process.argv.slice(2)).catch((err: unknown) => {
    say(err instanceof Error ? err.message : String(err));
    process.exit(1);
  });
}
