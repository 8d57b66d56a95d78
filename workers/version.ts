// What this controller is: its release version and commit, stamped into dist/controller.js by workers/build.ts. Run
// from source (tsx), it reads package.json and says `dev` for the commit. Served at /version, as the metric
// `tidal_build_info` and in the Temporal worker's identity, so `npm run version` finds every running controller.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export interface BuildInfo {
  version: string;
  commit: string;
}

// Replaced by esbuild's `define` in the built controller.
declare const TIDAL_BUILD: BuildInfo | undefined;

function fromSource(): BuildInfo {
  const pkg = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', 'package.json');
  try {
    return { version: (JSON.parse(readFileSync(pkg, 'utf8')) as { version: string }).version, commit: 'dev' };
  } catch {
    return { version: 'unknown', commit: 'dev' };
  }
}

export const buildInfo: BuildInfo = typeof TIDAL_BUILD === 'undefined' ? fromSource() : TIDAL_BUILD;

/** The Temporal worker identity's suffix that names the version (`npm run version` parses it). */
export const identityVersionMark = 'tidal/';

/** `<base> tidal/<version>+<commit>`: a worker identity that says what code polls the task queue. */
export function versionedIdentity(base: string, info: BuildInfo = buildInfo): string {
  return `${base} ${identityVersionMark}${info.version}+${info.commit.slice(0, 12)}`;
}

/** The version and commit named by a worker identity, if it carries them. */
export function versionOfIdentity(identity: string): BuildInfo | undefined {
  const m = / tidal\/([^+\s]+)\+(\S+)$/.exec(identity);
  return m ? { version: m[1]!, commit: m[2]! } : undefined;
}
