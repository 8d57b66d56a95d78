// The controller's allocator (dev/allocator.ts): jemalloc preloaded when found, glibc's on request or when missing,
// and a Node process started with that environment really runs on jemalloc.
import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { controllerMalloc, findJemalloc } from '../../dev/allocator.js';

const lib = '/usr/lib/x86_64-linux-gnu/libjemalloc.so.2';

describe('controllerMalloc', () => {
  it('preloads jemalloc when found, glibc’s two arenas stay as the fallback setting', () => {
    expect(controllerMalloc({}, () => lib)).toEqual({ allocator: 'jemalloc', env: { MALLOC_ARENA_MAX: '2', LD_PRELOAD: lib } });
  });

  it('keeps glibc’s when asked, and says why when jemalloc is missing', () => {
    expect(controllerMalloc({ TIDAL_CONTROLLER_MALLOC: 'glibc' }, () => lib)).toEqual({ allocator: 'glibc', env: { MALLOC_ARENA_MAX: '2' } });
    const missing = controllerMalloc({}, () => undefined);
    expect(missing.allocator).toBe('glibc');
    expect(missing.env).toEqual({ MALLOC_ARENA_MAX: '2' });
    expect(missing.note).toContain('apt-get install -y libjemalloc2');
  });

  it('refuses jemalloc demanded but missing, and an unknown allocator, naming the variable', () => {
    expect(() => controllerMalloc({ TIDAL_CONTROLLER_MALLOC: 'jemalloc' }, () => undefined)).toThrow(
      /TIDAL_CONTROLLER_MALLOC=jemalloc, but libjemalloc\.so\.2 not found/,
    );
    expect(() => controllerMalloc({ TIDAL_CONTROLLER_MALLOC: 'tcmalloc' }, () => lib)).toThrow(
      'TIDAL_CONTROLLER_MALLOC=tcmalloc: expected jemalloc or glibc',
    );
  });

  it('keeps a preload and an arena cap the caller set', () => {
    const r = controllerMalloc({ LD_PRELOAD: `/opt/trace.so ${lib}`, MALLOC_ARENA_MAX: '4' }, () => lib);
    expect(r.env).toEqual({ MALLOC_ARENA_MAX: '4', LD_PRELOAD: `${lib}:/opt/trace.so` });
  });

  it.skipIf(findJemalloc() === undefined)('starts node on jemalloc with that environment (libjemalloc2 installed)', () => {
    const { env } = controllerMalloc({});
    const loaded = (extra: Record<string, string>) =>
      execFileSync(process.execPath, ['-e', 'console.log(process.report.getReport().sharedObjects.join("\\n"))'], {
        env: { PATH: process.env.PATH, ...extra },
        encoding: 'utf8',
      });
    expect(loaded(env)).toContain('libjemalloc.so.2');
    expect(loaded(controllerMalloc({ TIDAL_CONTROLLER_MALLOC: 'glibc' }).env)).not.toContain('libjemalloc');
  });
});
