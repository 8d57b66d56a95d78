// The controller's allocator (dev/allocator.ts): jemalloc preloaded when found, glibc's on request or when missing
// (test/integration/allocator.test.ts starts Node processes with that environment).
import { describe, expect, it } from 'vitest';
import { controllerMalloc, JEMALLOC_CONF } from '../../dev/allocator.js';

const lib = '/usr/lib/x86_64-linux-gnu/libjemalloc.so.2';

describe('controllerMalloc', () => {
  it('preloads jemalloc when found, glibc’s two arenas stay as the fallback setting', () => {
    expect(controllerMalloc({}, () => lib)).toEqual({
      allocator: 'jemalloc',
      env: { MALLOC_ARENA_MAX: '2', LD_PRELOAD: lib, MALLOC_CONF: JEMALLOC_CONF },
    });
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

  it('keeps a preload, an arena cap and jemalloc settings the caller set', () => {
    const r = controllerMalloc({ LD_PRELOAD: `/opt/trace.so ${lib}`, MALLOC_ARENA_MAX: '4', MALLOC_CONF: 'narenas:2' }, () => lib);
    expect(r.env).toEqual({ MALLOC_ARENA_MAX: '4', LD_PRELOAD: `${lib}:/opt/trace.so`, MALLOC_CONF: 'narenas:2' });
  });
});
