// The declared patches (workflows/patches.ts) are exactly those the workflow code calls, each with a release version.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { Patches } from '../../../workflows/patches.js';

const workflowsDir = fileURLToPath(new URL('../../../workflows/', import.meta.url));

function calledPatches(): Set<string> {
  const ids = new Set<string>();
  for (const f of readdirSync(workflowsDir).filter((n) => n.endsWith('.ts'))) {
    const src = readFileSync(path.join(workflowsDir, f), 'utf8');
    // Called directly, or named as the entity loop's next question (`{ kind: 'patch', patch: '<id>' }`).
    for (const m of src.matchAll(/\b(?:patched|deprecatePatch)\(\s*'([^']+)'|\bpatch: '([^']+)'/g)) ids.add((m[1] ?? m[2])!);
  }
  return ids;
}

describe('workflow patches', () => {
  it('are declared exactly as the workflow code calls them', () => {
    expect([...calledPatches()].sort()).toEqual(Object.keys(Patches).sort());
  });

  it('name the release that introduced them, and a deprecation only in a later release', () => {
    const semver = /^v(\d+)\.(\d+)\.(\d+)$/;
    const order = (v: string) => semver.exec(v)!.slice(1).map(Number);
    for (const [id, p] of Object.entries(Patches)) {
      expect(p.introduced, id).toMatch(semver);
      if (p.deprecated === undefined) continue;
      expect(p.deprecated, id).toMatch(semver);
      const [a, b] = [order(p.introduced), order(p.deprecated)];
      expect(a[0]! * 1e6 + a[1]! * 1e3 + a[2]! < b[0]! * 1e6 + b[1]! * 1e3 + b[2]!, id).toBe(true);
    }
  });
});
