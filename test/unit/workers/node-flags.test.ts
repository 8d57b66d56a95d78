// The controller's start-up V8 flags (workers/node-flags.ts): every launcher gives them, and the controller reads back
// what it was given (test/integration/workers/node-flags.test.ts: they reach V8's young generation).
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { CONTROLLER_NODE_FLAGS, semiSpaceFlag } from '../../../workers/node-flags.js';

describe('CONTROLLER_NODE_FLAGS', () => {
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
