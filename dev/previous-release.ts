// The previous release of Tidal, built from source for the upgrade test (test/upgrade/): its tree taken out of this
// repository's history with `git archive`, its dependencies, and its own workers/build.ts run in it, so its
// dist/controller.js and dist/workflow-bundle.js are what that release shipped. Built once into
// ~/.cache/tidal/releases/<full commit>/ (a marker written last says the build is complete) and reused after.
// Nothing is downloaded but npm packages, and those only when the release's lock file names versions this checkout's
// node_modules does not have.
//
//   npx tsx dev/previous-release.ts     builds it (under a lock) when missing and prints the controller's and bundle's paths
import { execFile, execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { repoRoot } from './kubectl.js';

const run = promisify(execFile);

/**
 * The release an upgrade starts from: the tag of the release before this checkout's (ADR 0022: an upgrade goes one
 * release at a time), and the commit it names, for a clone that did not fetch tags.
 */
export const PreviousRelease = { tag: 'v0.1.0', commit: '1deca5307261d1caeb01332ae23b30f45cd80a94' };

/** A build of the controller: what `startController` runs (dev/stack.ts `ControllerBuild`). */
export interface ReleaseBuild {
  /** The full commit it was built from. */
  commit: string;
  /** The release's tree, with its dist/. */
  dir: string;
  controller: string;
  workflowBundle: string;
}

const releasesDir = path.join(homedir(), '.cache', 'tidal', 'releases');
const MARKER = '.tidal-release.json';

interface Marker {
  commit: string;
  /** How the tree got its node_modules: a link to this checkout's (same versions) or an install of its own. */
  modules: 'link' | 'install';
}

/** The full commit `ref` names in this repository. */
export function resolveCommit(ref: string): string {
  return execFileSync('git', ['rev-parse', '--verify', `${ref}^{commit}`], { cwd: repoRoot, encoding: 'utf8' }).trim();
}

/**
 * The previous release's commit: its tag when this clone has it, which must name the recorded commit; else that
 * commit; else both fetched from the clone's origin (a shallow or tag-less clone).
 */
export function previousReleaseCommit(): string {
  const { tag, commit } = PreviousRelease;
  const local = (): string | undefined => {
    for (const ref of [tag, commit]) {
      try {
        return resolveCommit(ref);
      } catch {
        // not in this clone
      }
    }
    return undefined;
  };
  let found = local();
  if (found === undefined) {
    execFileSync('git', ['fetch', '--quiet', 'origin', 'tag', tag], { cwd: repoRoot, stdio: ['ignore', 'ignore', 'inherit'] });
    found = local();
  }
  if (found !== commit) throw new Error(`the previous release ${tag} names ${found ?? 'nothing'} here, not ${commit}`);
  return found;
}

function buildOf(commit: string): ReleaseBuild {
  const dir = path.join(releasesDir, commit);
  return { commit, dir, controller: path.join(dir, 'dist', 'controller.js'), workflowBundle: path.join(dir, 'dist', 'workflow-bundle.js') };
}

type LockPackages = Record<string, { version?: string }>;
const lockPackages = (file: string): LockPackages => (JSON.parse(readFileSync(file, 'utf8')) as { packages?: LockPackages }).packages ?? {};

/**
 * True when every package the release's lock file installs is in this checkout's lock file at the same version and
 * path: this checkout's node_modules then serves the release as its own would.
 */
export function modulesMatch(releaseLock: LockPackages, ownLock: LockPackages): boolean {
  return Object.entries(releaseLock).every(([where, p]) => where === '' || p.version === undefined || ownLock[where]?.version === p.version);
}

/** The marker of a complete build, if there is one and it still holds (a linked node_modules must still match). */
function completeBuild(b: ReleaseBuild): Marker | undefined {
  const file = path.join(b.dir, MARKER);
  if (!existsSync(file) || !existsSync(b.controller) || !existsSync(b.workflowBundle)) return undefined;
  const marker = JSON.parse(readFileSync(file, 'utf8')) as Marker;
  if (marker.commit !== b.commit) return undefined;
  if (
    marker.modules === 'link' &&
    !modulesMatch(lockPackages(path.join(b.dir, 'package-lock.json')), lockPackages(path.join(repoRoot, 'package-lock.json')))
  )
    return undefined;
  return marker;
}

/** Builds the release in its folder (the caller holds the lock), unless a complete build is there. */
async function buildRelease(b: ReleaseBuild, log: (s: string) => void): Promise<void> {
  if (completeBuild(b)) return;
  const started = Date.now();
  log(`building the previous release ${b.commit.slice(0, 12)} in ${b.dir}`);
  rmSync(b.dir, { recursive: true, force: true });
  mkdirSync(b.dir, { recursive: true });
  await run('bash', ['-o', 'pipefail', '-c', 'git archive "$1" | tar -x -C "$2"', 'archive', b.commit, b.dir], { cwd: repoRoot });
  const link = modulesMatch(lockPackages(path.join(b.dir, 'package-lock.json')), lockPackages(path.join(repoRoot, 'package-lock.json')));
  if (link) symlinkSync(realpathSync(path.join(repoRoot, 'node_modules')), path.join(b.dir, 'node_modules'));
  else {
    log("its dependencies differ from this checkout's: npm install in its tree");
    // `install`, not `ci`, as dev/ensure-deps.mjs says why; it honours the release's lock file all the same.
    await run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund'], { cwd: b.dir, maxBuffer: 64 * 1024 * 1024 });
  }
  // The release's own build script, in its own tree: its esbuild settings and its workflow bundler's.
  const built = await run(process.execPath, ['--import', 'tsx', path.join('workers', 'build.ts')], { cwd: b.dir, maxBuffer: 64 * 1024 * 1024 }).catch(
    (err: Error & { stderr?: string }) => {
      throw new Error(`the previous release's build failed: ${err.stderr || err.message}`);
    },
  );
  for (const line of built.stderr.split('\n')) if (line.trim() !== '') log(line);
  if (!existsSync(b.controller) || !existsSync(b.workflowBundle))
    throw new Error(`the previous release's build left no ${b.controller} or ${b.workflowBundle}`);
  const marker: Marker = { commit: b.commit, modules: link ? 'link' : 'install' };
  writeFileSync(path.join(b.dir, MARKER), `${JSON.stringify(marker)}\n`);
  log(`previous release built in ${Math.round((Date.now() - started) / 1000)} s`);
}

/**
 * The previous release's build, made first when missing. The build runs in a child process under a lock, so
 * concurrent callers build it once.
 */
export async function ensurePreviousRelease(log: (s: string) => void = (s) => console.error(`[previous-release] ${s}`)): Promise<ReleaseBuild> {
  const b = buildOf(previousReleaseCommit());
  if (completeBuild(b)) return b;
  mkdirSync(releasesDir, { recursive: true });
  const lock = path.join(releasesDir, `.${b.commit}.lock`);
  const built = await run('flock', [lock, process.execPath, '--import', 'tsx', fileURLToPath(import.meta.url), '--locked'], {
    cwd: repoRoot,
    maxBuffer: 64 * 1024 * 1024,
  }).catch((err: Error & { stderr?: string }) => {
    throw new Error(`building the previous release failed: ${err.stderr || err.message}`);
  });
  for (const line of built.stderr.split('\n')) if (line.trim() !== '') log(line.replace(/^\[previous-release\] /, ''));
  if (!completeBuild(b)) throw new Error(`the previous release's build in ${b.dir} is not complete`);
  return b;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const say = (s: string) => console.error(`[previous-release] ${s}`);
  // --locked: the child ensurePreviousRelease starts under the lock, which builds in this process.
  const building = process.argv.includes('--locked')
    ? (async () => {
        const b = buildOf(previousReleaseCommit());
        await buildRelease(b, say);
        return b;
      })()
    : ensurePreviousRelease(say);
  building
    .then((b) => console.log(`${b.controller}\n${b.workflowBundle}`))
    .catch((err: unknown) => {
      console.error(err instanceof Error ? err.message : err);
      process.exit(1);
    });
}
