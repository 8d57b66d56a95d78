// The controller's start-up V8 flags (workers/node-flags.ts): they reach V8's young generation, every launcher gives
// them, and the controller reads back what it was given.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { CONTROLLER_NODE_FLAGS, CONTROLLER_SEMI_SPACE_MB, semiSpaceFlag } from '../../../workers/node-flags.js';

const MiB = 1024 * 1024;

/** The young generation's size in a child node after a burst of short-lived objects, with `flags`. */
function newSpaceAfterBurst(flags: readonly string[]): number {
  const script = `
    const v8 = require('node:v8');
    const keep = [];
    for (let i = 0; i < 3_000_000; i++) { keep.push({ i, s: 'x' + i }); if (keep.length > 200_000) keep.splice(0, 100_000); }
    console.log(v8.getHeapSpaceStatistics().find((s) => s.space_name === 'new_space').space_size);
  `;
  return Number(execFileSync(process.execPath, [...flags, '-e', script], { encoding: 'utf8', env: { ...process.env, NODE_OPTIONS: '' } }));
}

describe('CONTROLLER_NODE_FLAGS', () => {
  it("cap V8's young generation at two semi-spaces of the size given, where V8's own grows past it", () => {
    expect(newSpaceAfterBurst(CONTROLLER_NODE_FLAGS)).toBeLessThanOrEqual(2 * CONTROLLER_SEMI_SPACE_MB * MiB);
    expect(newSpaceAfterBurst([])).toBeGreaterThan(2 * CONTROLLER_SEMI_SPACE_MB * MiB);
  });

  it('are on the command line of every launcher: the Dockerfile, npm run controller (the image and the stacks import them)', () => {
    const dockerfile = readFileSync(fileURLToPath(new URL('../../../Dockerfile', import.meta.url)), 'utf8');
    expect(dockerfile).toContain(`ENTRYPOINT ${JSON.stringify(['node', ...CONTROLLER_NODE_FLAGS, 'dist/controller.js']).replaceAll(',', ', ')}`);
    const pkg = JSON.parse(readFileSync(fileURLToPath(new URL('../../../package.json', import.meta.url)), 'utf8')) as {
      scripts: Record<string, string>;
    };
    expect(pkg.scripts.controller).toBe(`node ${CONTROLLER_NODE_FLAGS.join(' ')} --import tsx workers/controller.ts`);
  });
});

describe('semiSpaceFlag', () => {
  it('reads the size from the command line and NODE_OPTIONS, the command line last as V8 takes it', () => {
    expect(semiSpaceFlag(['--max-semi-space-size=4'], undefined)).toBe(4);
    expect(semiSpaceFlag(['--max_semi_space_size=8'], '')).toBe(8);
    expect(semiSpaceFlag([], '--max-old-space-size=512 --max-semi-space-size=2')).toBe(2);
    expect(semiSpaceFlag(['--max-semi-space-size=4'], '--max-semi-space-size=16')).toBe(4);
    expect(semiSpaceFlag(['--import', 'tsx', '--max-semi-space-size=4', '--max-semi-space-size=1'], undefined)).toBe(1);
  });

  it("says undefined when none was given: V8's default", () => {
    expect(semiSpaceFlag([], undefined)).toBeUndefined();
    expect(semiSpaceFlag(['--max-old-space-size=512'], '--enable-source-maps')).toBeUndefined();
  });
});
