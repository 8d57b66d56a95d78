// The controller's allocator (dev/allocator.ts) in a real process: a Node process started with the environment
// controllerMalloc gives really runs on jemalloc, with the settings meant.
import { execFileSync, spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { controllerMalloc, findJemalloc } from '../../dev/allocator.js';

describe('controllerMalloc', () => {
  it.skipIf(findJemalloc() === undefined)('starts node on jemalloc, with its purging thread, from that environment (libjemalloc2 installed)', () => {
    const { env } = controllerMalloc({});
    // The shared objects the process loaded, then its threads' names (after some allocation, which starts jemalloc's).
    const script = `const fs = require('fs');
      console.log(process.report.getReport().sharedObjects.join('\\n'));
      const kept = Array.from({ length: 20000 }, () => Buffer.alloc(256));
      setTimeout(() => { for (const t of fs.readdirSync('/proc/self/task')) console.log('thread ' + fs.readFileSync('/proc/self/task/' + t + '/comm', 'utf8').trim()); }, 200, kept);`;
    const run = (extra: Record<string, string>) =>
      execFileSync(process.execPath, ['-e', script], { env: { PATH: process.env.PATH, ...extra }, encoding: 'utf8' });
    const onJemalloc = run(env);
    expect(onJemalloc).toContain('libjemalloc.so.2');
    expect(onJemalloc).toContain('thread jemalloc_bg_thd');
    const onGlibc = run(controllerMalloc({ TIDAL_CONTROLLER_MALLOC: 'glibc' }).env);
    expect(onGlibc).not.toContain('libjemalloc');
    expect(onGlibc).toContain('thread node');
  });

  it.skipIf(findJemalloc() === undefined)('gives jemalloc settings it reads as meant: purging thread on, freed pages given back at once', () => {
    const { env } = controllerMalloc({});
    // stats_print: jemalloc prints the options it runs with at exit (to stderr); a key it does not know it names as
    // invalid there too.
    const run = spawnSync(process.execPath, ['-e', ''], {
      env: { PATH: process.env.PATH, ...env, MALLOC_CONF: `${env.MALLOC_CONF},stats_print:true` },
      encoding: 'utf8',
    });
    expect(run.status).toBe(0);
    const out = run.stdout + run.stderr;
    expect(out).toMatch(/opt\.background_thread: true/);
    expect(out).toMatch(/opt\.dirty_decay_ms: 0\b/);
    expect(out).not.toContain('Invalid conf');
  });
});
