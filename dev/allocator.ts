// The controller's malloc. glibc's keeps what a burst freed: after a burst and minutes at rest, much of the
// controller's anonymous memory was free chunks in its arenas (malloc_trim gave them back), freed by the Temporal
// Core and Node but never returned (docs/benchmarks.md). jemalloc returns freed pages to the system (by
// default ~10 s after they were freed, at once as set below), so the controller runs with it when the machine has
// Debian's `libjemalloc2`: preloaded, as the image does (Dockerfile, dev/image.ts). `TIDAL_CONTROLLER_MALLOC=glibc`
// keeps glibc's, whose arenas are capped at two (MALLOC_ARENA_MAX) so the Core's threads do not each keep their own.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';

/** The library's soname, as Debian's `libjemalloc2` installs it. */
export const JEMALLOC_SONAME = 'libjemalloc.so.2';

/**
 * jemalloc's settings (`MALLOC_CONF`, unless the caller sets one). Freed pages go back to the system at once
 * (`dirty_decay_ms:0`; jemalloc's default keeps them 10 s): right after a burst the controller keeps no freed pages
 * waiting to decay, for a little more of its CPU in a burst and single-Service latency unchanged (the figures are in
 * docs/benchmarks.md). The background thread that purged decayed pages while the process idled, bringing it to
 * rest sooner after a burst, has nothing left to decay now; it stays, as measured.
 */
export const JEMALLOC_CONF = 'background_thread:true,dirty_decay_ms:0';

/** Where this machine's loader finds jemalloc (its cache, then the usual folders), or undefined. */
export function findJemalloc(): string | undefined {
  try {
    const cache = execFileSync('/sbin/ldconfig', ['-p'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
    // The loader's cache lists every architecture's copy (`(libc6,x86-64)`); only this one's can be preloaded.
    const arch = { x64: 'x86-64', arm64: 'AArch64' }[process.arch as 'x64' | 'arm64'];
    for (const line of cache.split('\n')) {
      const m = /^\s*libjemalloc\.so\.2 \(([^)]*)\) => (\S+)/.exec(line);
      if (m?.[2] && (arch === undefined || m[1]?.includes(arch)) && existsSync(m[2])) return m[2];
    }
  } catch {
    // No ldconfig: look in the usual places.
  }
  const triplet = { x64: 'x86_64-linux-gnu', arm64: 'aarch64-linux-gnu' }[process.arch as 'x64' | 'arm64'];
  const candidates = [triplet && `/usr/lib/${triplet}/${JEMALLOC_SONAME}`, `/usr/lib64/${JEMALLOC_SONAME}`, `/usr/local/lib/${JEMALLOC_SONAME}`];
  return candidates.find((c): c is string => typeof c === 'string' && existsSync(c));
}

export interface ControllerMalloc {
  allocator: 'jemalloc' | 'glibc';
  /** What to add to the controller's environment. */
  env: Record<string, string>;
  /** Why glibc's, when jemalloc was wanted. */
  note?: string;
}

/**
 * The controller's allocator and the environment that selects it: jemalloc preloaded when found, unless
 * `TIDAL_CONTROLLER_MALLOC=glibc`. `TIDAL_CONTROLLER_MALLOC=jemalloc` insists: no jemalloc is then an error.
 */
export function controllerMalloc(env: NodeJS.ProcessEnv = process.env, find: () => string | undefined = findJemalloc): ControllerMalloc {
  const wanted = env.TIDAL_CONTROLLER_MALLOC ?? '';
  if (!['', 'jemalloc', 'glibc'].includes(wanted)) throw new Error(`TIDAL_CONTROLLER_MALLOC=${wanted}: expected jemalloc or glibc`);
  const glibc = { MALLOC_ARENA_MAX: env.MALLOC_ARENA_MAX ?? '2' };
  if (wanted === 'glibc') return { allocator: 'glibc', env: glibc };
  const jemalloc = find();
  if (jemalloc === undefined) {
    const note = `${JEMALLOC_SONAME} not found (Debian: apt-get install -y libjemalloc2)`;
    if (wanted === 'jemalloc') throw new Error(`TIDAL_CONTROLLER_MALLOC=jemalloc, but ${note}`);
    return { allocator: 'glibc', env: glibc, note };
  }
  // An LD_PRELOAD the caller set stays, after jemalloc.
  const preload = [jemalloc, ...(env.LD_PRELOAD ?? '').split(/[:\s]+/).filter((p) => p !== '' && p !== jemalloc)].join(':');
  return { allocator: 'jemalloc', env: { ...glibc, LD_PRELOAD: preload, MALLOC_CONF: env.MALLOC_CONF ?? JEMALLOC_CONF } };
}
