// The controller's start-up V8 flags (workers/node-flags.ts) in a real process: they reach V8's young generation.
import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { CONTROLLER_NODE_FLAGS, CONTROLLER_SEMI_SPACE_MB } from '../../../workers/node-flags.js';

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
});
