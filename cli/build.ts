// `npm run plugin:build` / `npm run plugin:install [-- <dir>]`: `kubectl tidal` as one executable file, every npm
// package inside, so it runs on bare Node (20.19 or newer) with nothing installed next to it. The release ships the
// same file (dev/release.ts); `plugin:install` copies it into a folder on the PATH (default ~/.local/bin), where kubectl
// finds it as `kubectl tidal`.
import { chmodSync, copyFileSync, mkdirSync, renameSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const builtPlugin = path.join(repoRoot, 'dist', 'kubectl-tidal');

/** Builds the plugin into `outFile` (written beside it, then renamed into place). */
export async function buildPlugin(outFile = builtPlugin): Promise<string> {
  const esbuild = await import('esbuild');
  mkdirSync(path.dirname(outFile), { recursive: true });
  const tmp = `${outFile}.${process.pid}.tmp`;
  await esbuild.build({
    entryPoints: [path.join(repoRoot, 'cli', 'kubectl-tidal.ts')],
    outfile: tmp,
    bundle: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    // The bundled CommonJS packages (the gRPC client) require Node's modules: an ES module has no `require` of its own.
    banner: {
      js: "#!/usr/bin/env node\nimport { createRequire as __tidalRequire } from 'node:module';\nconst require = __tidalRequire(import.meta.url);",
    },
    logLevel: 'warning',
    legalComments: 'none',
  });
  chmodSync(tmp, 0o755);
  renameSync(tmp, outFile);
  return outFile;
}

/** Copies the built plugin into `dir` as `kubectl-tidal`, executable. */
export function installPlugin(from: string, dir: string): string {
  mkdirSync(dir, { recursive: true });
  const to = path.join(dir, 'kubectl-tidal');
  copyFileSync(from, `${to}.tmp`);
  chmodSync(`${to}.tmp`, 0o755);
  renameSync(`${to}.tmp`, to);
  return to;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const [, , command, dirArg] = process.argv;
  buildPlugin()
    .then((built) => {
      console.error(`[plugin] built ${path.relative(repoRoot, built)}`);
      if (command !== 'install') return;
      const dir = path.resolve(dirArg ?? path.join(os.homedir(), '.local', 'bin'));
      const to = installPlugin(built, dir);
      const onPath = (process.env.PATH ?? '').split(path.delimiter).some((p) => path.resolve(p) === dir);
      console.error(`[plugin] installed ${to}: kubectl tidal --help${onPath ? '' : ` (add ${dir} to PATH first)`}`);
    })
    .catch((err: unknown) => {
      console.error(err);
      process.exit(1);
    });
}
