// `npm run build`: what production and the local stack run, in dist/.
//  - dist/workflow-bundle.js: the workflow code bundled once (bundleWorkflows: Tidal's modules joined into one by
//    esbuild, then bundleWorkflowCode), loaded by the worker through TIDAL_WORKFLOW_BUNDLE. Bundling inside the
//    controller costs CPU at start and leaves its RSS higher for good; the bundle is then
//    made compact (compact-bundle.ts).
//  - dist/controller.js: workers/controller.ts and everything it imports from this repository as one plain ES module
//    (npm packages stay imports), so the controller runs on bare `node` without tsx's memory.
// Outputs are written to a private folder and renamed into place, stamp last: a reader never sees a half-written
// file, and dist/build-stamp.json names the hash of the sources the files were built from (`isBuildFresh`).
// `--if-stale` builds only when that hash differs from the sources' now (dev/stack.ts runs it under a lock).
import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, readFileSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { asciiOnly, compactWorkflowBundle } from './compact-bundle.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const distDir = path.join(repoRoot, 'dist');
export const builtController = path.join(distDir, 'controller.js');
export const builtWorkflowBundle = path.join(distDir, 'workflow-bundle.js');
const stampFile = path.join(distDir, 'build-stamp.json');

// What the outputs are built from: the controller's and the workflows' folders (this script included), and what
// fixes dependency versions and compiler settings.
export const sourceDirs = ['api', 'resources', 'kube', 'registry', 'pki', 'workflows', 'activities', 'watcher', 'workers', 'webhook'];
const sourceFiles = ['package.json', 'package-lock.json', 'tsconfig.json'];

/** A hash of every source file the outputs depend on (a content hash, so a `touch` or checkout rebuilds nothing). */
export function sourcesHash(): string {
  const files: string[] = [...sourceFiles];
  const walk = (rel: string) => {
    for (const e of readdirSync(path.join(repoRoot, rel), { withFileTypes: true })) {
      const r = path.join(rel, e.name);
      if (e.isDirectory()) walk(r);
      else if (/\.(ts|js|mjs|cjs|json)$/.test(e.name)) files.push(r);
    }
  };
  for (const d of sourceDirs) walk(d);
  const h = createHash('sha256');
  for (const f of files.sort()) {
    const p = path.join(repoRoot, f);
    h.update(`${f}\0`);
    if (existsSync(p)) h.update(readFileSync(p));
    h.update('\0');
  }
  return h.digest('hex');
}

function packageVersion(): string {
  return (JSON.parse(readFileSync(path.join(repoRoot, 'package.json'), 'utf8')) as { version: string }).version;
}

/** True when dist/ holds outputs built from today's sources. */
export function isBuildFresh(): boolean {
  if (![stampFile, builtController, builtWorkflowBundle].every((f) => existsSync(f))) return false;
  try {
    return (JSON.parse(readFileSync(stampFile, 'utf8')) as { sources?: string }).sources === sourcesHash();
  } catch {
    return false;
  }
}

/** How the workflow bundle is built: the build takes the defaults; bench/run-heap.ts compares the others. */
export interface WorkflowBundleShape {
  /** Tidal's workflow modules joined into one by esbuild first (default); false leaves them one by one. */
  joined?: boolean;
  /** Modules the SDK loads once into its reusable context and shares among runs (default `sharedWorkflowModules`). */
  shared?: string[];
}

/**
 * The SDK's own workflow modules that Tidal's import and its bootstrap does not load: its index (80 re-exports, each
 * a getter) and the few modules only the index imports. They hold no state of a run — each function looks the run up
 * when called — so the SDK's reusable context loads them once and every run shares them (bundleWorkflowCode's
 * `preloadModules`) instead of instantiating them per run. Tidal's own module is not shared: workflows/activities.ts
 * keeps the pass under way in module state, which must be per run.
 */
export const sharedWorkflowModules = ['@temporalio/workflow'];

/**
 * The workflow bundle, compact (compact-bundle.ts), built in `dir` (a scratch folder). The SDK's reusable context
 * loads the modules its bootstrap imports once for every run, but gives each run its own instance of every module
 * first imported by the workflows: 47 of the bundle's 121 before this, 39 of them Tidal's. So Tidal's workflow
 * modules are joined into one scope first (esbuild hoists ES modules together) and that one module is what the SDK's
 * bundler takes, and the SDK's modules that the bootstrap does not load are shared (`sharedWorkflowModules`): each
 * run instantiates Tidal's module and two of webpack's stubs, a fraction of the heap it took before (`npm run
 * bench:run-heap`; docs/benchmarks.md). Its inline source map carries the SDK's bundler through to the .ts sources,
 * so stack traces still name them.
 */
export async function bundleWorkflows(dir: string, shape: WorkflowBundleShape = {}): Promise<string> {
  const { joined = true, shared = sharedWorkflowModules } = shape;
  // Imported here, not at the top: dev/stack.ts imports this module for isBuildFresh alone.
  const [{ bundleWorkflowCode, DefaultLogger }, esbuild] = await Promise.all([import('@temporalio/worker'), import('esbuild')]);
  // .js: the SDK's bundler reads the source maps of .js files only.
  const entry = joined ? path.join(dir, 'workflows.js') : path.join(repoRoot, 'workflows', 'index.ts');
  if (joined)
    await esbuild.build({
      entryPoints: [path.join(repoRoot, 'workflows', 'index.ts')],
      outfile: entry,
      bundle: true,
      packages: 'external', // @temporalio/workflow and the rest stay imports, for the SDK's bundler to resolve
      format: 'esm',
      platform: 'neutral',
      target: 'es2022',
      sourcemap: 'inline',
      logLevel: 'warning',
    });
  const bundle = await bundleWorkflowCode({ workflowsPath: entry, preloadModules: shared, logger: new DefaultLogger('WARN') });
  return compactWorkflowBundle(bundle.code);
}

/**
 * Builds dist/. `commit` is stamped into the controller with package.json's version (workers/version.ts): a release
 * passes the commit it builds from a clean tree; any other build says `dev`, since dist/ is rebuilt only when the
 * sources change and a commit stamped then would go stale. A release builds into a folder of its own (`outDir`), so
 * the checkout's dist/ keeps what the local stack runs.
 */
export async function build(log: (s: string) => void = (s) => console.error(`[build] ${s}`), commit = 'dev', outDir = distDir): Promise<void> {
  const started = Date.now();
  // Hashed first: a source edited during the build makes the next check stale instead of being stamped as built.
  const sources = sourcesHash();
  // Imported here, not at the top: dev/stack.ts imports this module for isBuildFresh alone.
  const esbuild = await import('esbuild');
  mkdirSync(distDir, { recursive: true });
  mkdirSync(outDir, { recursive: true });
  // The scratch folder is in dist/ whatever `outDir` is: the workflow bundler resolves packages from where it builds.
  const tmp = path.join(distDir, `.build-${process.pid}`);
  // Renamed into dist/ (a reader never sees a half-written file); copied to another folder, which may be elsewhere.
  const place = outDir === distDir ? renameSync : copyFileSync;
  rmSync(tmp, { recursive: true, force: true });
  mkdirSync(tmp);
  try {
    const code = await bundleWorkflows(tmp);
    writeFileSync(path.join(tmp, 'workflow-bundle.js'), code);
    log(`workflow bundle: ${(code.length / 1048576).toFixed(1)} MiB (${Date.now() - started} ms)`);

    const t = Date.now();
    await esbuild.build({
      entryPoints: [path.join(repoRoot, 'workers', 'controller.ts')],
      outfile: path.join(tmp, 'controller.js'),
      bundle: true,
      packages: 'external', // node_modules stay where they are; only our own code is compiled and joined
      format: 'esm',
      platform: 'node',
      target: 'node20',
      // A map on disk for `node --enable-source-maps` when a stack trace needs the .ts lines; not loaded by default.
      sourcemap: 'linked',
      logLevel: 'warning',
      define: { TIDAL_BUILD: JSON.stringify({ version: packageVersion(), commit }) },
    });
    // ASCII, as the bundle: esbuild keeps doc comments, and one em dash makes V8 hold the whole source as two bytes a
    // character (twice the memory). Escapes are in comments in practice; the map's columns move only on their lines.
    const controllerJs = path.join(tmp, 'controller.js');
    writeFileSync(controllerJs, asciiOnly(readFileSync(controllerJs, 'utf8')));
    log(`controller: ${path.relative(repoRoot, path.join(outDir, 'controller.js'))} (${Date.now() - t} ms)`);

    for (const f of ['workflow-bundle.js', 'controller.js', 'controller.js.map']) place(path.join(tmp, f), path.join(outDir, f));
    writeFileSync(path.join(tmp, 'build-stamp.json'), `${JSON.stringify({ sources, commit, builtAt: new Date().toISOString() })}\n`);
    place(path.join(tmp, 'build-stamp.json'), path.join(outDir, 'build-stamp.json'));
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
  log(`built in ${Date.now() - started} ms`);
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const ifStale = process.argv.includes('--if-stale');
  if (ifStale && isBuildFresh()) {
    console.error('[build] dist/ is up to date');
  } else {
    build().catch((err: unknown) => {
      console.error(err);
      process.exit(1);
    });
  }
}
