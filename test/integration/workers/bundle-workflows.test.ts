// The built workflow bundle (workers/build.ts bundleWorkflows): Tidal's workflow modules joined into one module before
// the SDK's bundler, and the SDK's own workflow modules shared among runs, so each workflow run instantiates one module
// of Tidal's instead of ~40 and none of the SDK's; stack traces still map to the .ts sources.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadReusableContext, newRunOptions } from '../../../bench/reusable-context.js';
import { bundleWorkflows, distDir } from '../../../workers/build.js';
import * as workflows from '../../../workflows/index.js';

const repoRoot = path.resolve(distDir, '..');
let dir = '';
let code = '';

beforeAll(async () => {
  // Inside the repository: the SDK's bundler resolves @temporalio/workflow from the entry's folder upwards.
  dir = mkdtempSync(path.join(repoRoot, 'dist', '.test-bundle-'));
  code = await bundleWorkflows(dir);
}, 60_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('bundleWorkflows', () => {
  it('hands the SDK one module of Tidal’s, beside the SDK’s own', () => {
    const modules = [...code.matchAll(/\/\*\*\*\/ "([^"]+)"/g)].map((m) => m[1]!);
    // Files only: webpack's ids for the modules it stubs out (`?31ff`) name no file.
    const ours = modules.filter((m) => m.startsWith('./') && !m.includes('node_modules'));
    expect(ours).toEqual([expect.stringMatching(/workflows\.js$/)]);
    expect(modules.some((m) => m.includes('node_modules/@temporalio/workflow/'))).toBe(true);
  });

  it('exports every workflow of workflows/index.ts from that module', () => {
    const joined = readFileSync(path.join(dir, 'workflows.js'), 'utf8');
    const exported =
      /export \{([^}]*)\};/
        .exec(joined)?.[1]
        ?.split(',')
        .map((e) =>
          e
            .trim()
            .split(/\s+as\s+/)
            .pop(),
        ) ?? [];
    expect(exported.sort()).toEqual(Object.keys(workflows).sort());
  });

  it('maps through to the .ts sources, without their texts', () => {
    const map = JSON.parse(Buffer.from(code.slice(code.lastIndexOf('base64,') + 7).trim(), 'base64').toString('utf8')) as {
      sources: string[];
      sourcesContent?: unknown;
    };
    for (const f of ['workflows/entity.ts', 'workflows/service.ts', 'api/kinds.ts']) expect(map.sources).toContain(path.join(repoRoot, f));
    expect(map.sources.some((s) => s.endsWith('workflows.js'))).toBe(false);
    expect(map.sourcesContent).toBeUndefined();
  });

  it('gives each run its own instance of Tidal’s module and shares the SDK’s', async () => {
    // The SDK's reusable context, as the worker loads the bundle: modules its bootstrap or the preload imports are
    // loaded once; a run's module cache holds what that run instantiated for itself.
    const context = await loadReusableContext().create({ code, filename: 'workflow-bundle.js' }, 5000, new Set());
    const runs = [await context.createWorkflow(newRunOptions(1)), await context.createWorkflow(newRunOptions(2))];
    try {
      const [first, second] = runs.map((r) => r.activator.moduleCache);
      const files = [...first!.keys()].filter((m) => m.startsWith('./')); // webpack's stubs (`?31ff`) name no file
      expect(files).toEqual([expect.stringMatching(/workflows\.js$/)]);
      // Per run, not shared: workflows/activities.ts keeps the pass under way in module state.
      expect(second!.get(files[0]!)).toBeDefined();
      expect(second!.get(files[0]!)).not.toBe(first!.get(files[0]!));
    } finally {
      for (const r of runs) await r.dispose();
      await context.destroy();
    }
  });
});
