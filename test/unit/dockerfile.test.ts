// The Dockerfile, read as text (these machines have no Docker daemon; `npm run image` is the tested way to build
// here): it copies every folder `npm run build` compiles, keeps production dependencies only, and runs the built
// controller with node as PID 1 as uid 65532.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { JEMALLOC_CONF } from '../../dev/allocator.js';
import { sourceDirs } from '../../workers/build.js';

const text = readFileSync(fileURLToPath(new URL('../../Dockerfile', import.meta.url)), 'utf8');
const lines = text.split('\n').filter((l) => l.trim() !== '' && !l.startsWith('#'));
const stages = text.split(/^FROM /m).slice(1);

describe('Dockerfile', () => {
  it('is multi-stage on node:20: build with dev dependencies, ship production ones', () => {
    expect(stages.length).toBe(2);
    expect(stages[0]).toMatch(/^node:20\S* AS build/);
    expect(stages[1]).toMatch(/^node:20/);
    expect(stages[0]).toContain('npm ci');
    expect(stages[0]).toContain('npm run build');
    expect(stages[0]).toContain('npm prune --omit=dev');
  });

  it('copies every folder npm run build compiles', () => {
    const copied = lines.filter((l) => l.startsWith('COPY ') && !l.includes('--from')).map((l) => l.split(/\s+/)[1]);
    for (const dir of sourceDirs) expect(copied, dir).toContain(dir);
  });

  it('runs the built controller as uid 65532 with node as PID 1 (exec form, no shell, no init)', () => {
    const final = stages[1] ?? '';
    expect(final).toMatch(/^USER 65532:65532$/m);
    expect(final).toMatch(/^ENTRYPOINT \["node", ("--[a-z-]+=\d+", )*"dist\/controller.js"\]$/m);
    expect(final).toContain('COPY --from=build /src/dist/controller.js /src/dist/workflow-bundle.js ./dist/');
    expect(final).toContain('"type":"module"');
    expect(final).not.toMatch(/tini|dumb-init|tsx/);
  });

  it('runs the controller on jemalloc, preloaded by its soname (dev/allocator.ts says why)', () => {
    const final = stages[1] ?? '';
    expect(final).toMatch(/apt-get install -y --no-install-recommends libjemalloc2/);
    expect(final).toMatch(/^ENV .*\bLD_PRELOAD=libjemalloc\.so\.2\b/m);
    expect(final).toMatch(new RegExp(`^ENV .*\\bMALLOC_CONF=${JEMALLOC_CONF}(\\s|$)`, 'm'));
  });
});
