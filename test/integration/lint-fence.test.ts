// The lint fence is what keeps workflow code replayable: prove it rejects I/O imports in workflows/ and pure code.
import { describe, expect, it } from 'vitest';
import { ESLint } from 'eslint';

const eslint = new ESLint();

async function ruleIds(file: string, code: string): Promise<string[]> {
  const [res] = await eslint.lintText(code, { filePath: file });
  return (res?.messages ?? []).map((m) => m.ruleId ?? m.message);
}

describe('lint fence around deterministic code', () => {
  it('rejects Node built-ins, the Kubernetes client and activity values in workflows/', async () => {
    const ids = await ruleIds(
      'workflows/service.ts',
      [
        "import fs from 'node:fs';",
        "import { KubeConfig } from '@kubernetes/client-node';",
        "import { createActivities } from '../activities/index.js';",
        'export const x = [fs, KubeConfig, createActivities];',
      ].join('\n'),
    );
    expect(ids.filter((i) => i === 'no-restricted-imports')).toHaveLength(3);
  }, 60_000);

  it('allows type-only imports of activities and the Kubernetes client in workflows/', async () => {
    const ids = await ruleIds(
      'workflows/service.ts',
      [
        "import type { Activities } from '../activities/index.js';",
        "import type { V1Pod } from '@kubernetes/client-node';",
        'export type X = [Activities, V1Pod];',
      ].join('\n'),
    );
    expect(ids).not.toContain('no-restricted-imports');
  }, 60_000);

  it('rejects Temporal and clocks in the entity loop’s rules, a pure module of workflows/', async () => {
    const ids = await ruleIds(
      'workflows/entity-loop.ts',
      ["import { sleep } from '@temporalio/workflow';", 'export const t = [Date.now(), sleep];'].join('\n'),
    );
    expect(ids).toContain('no-restricted-imports');
    expect(ids).toContain('no-restricted-properties');
  }, 60_000);

  it('rejects clocks, randomness and Temporal in pure resources/', async () => {
    const ids = await ruleIds(
      'resources/configuration.ts',
      ["import { sleep } from '@temporalio/workflow';", 'export const t = [Date.now(), Math.random(), sleep];'].join('\n'),
    );
    expect(ids).toContain('no-restricted-imports');
    expect(ids.filter((i) => i === 'no-restricted-properties')).toHaveLength(2);
  }, 60_000);
});

describe('floors of the house', () => {
  it('rejects an import from a folder above the importing one, type-only or not', async () => {
    const kube = await ruleIds('kube/client.ts', "import { noteObject } from '../activities/observe.js';\nexport const x = noteObject;");
    const webhook = await ruleIds('webhook/settings.ts', "import type { TidalConfig } from '../workers/config.js';\nexport type X = TidalConfig;");
    const api = await ruleIds('api/config/gc.ts', "import { makeRevision } from '../../resources/revision.js';\nexport const x = makeRevision;");
    expect([kube, webhook, api].map((ids) => ids.filter((i) => i === 'no-restricted-imports').length)).toEqual([1, 1, 1]);
  }, 60_000);

  it('allows an import from a floor below', async () => {
    const ids = await ruleIds('activities/route.ts', "import { KubeClient } from '../kube/client.js';\nexport const x = KubeClient;");
    expect(ids).not.toContain('no-restricted-imports');
  }, 60_000);

  it('rejects a circle of value imports, and lets a type-only import close one', async () => {
    // kube/client.ts imports kube/errors.ts: errors.ts importing client.ts back would close a circle.
    const value = await ruleIds('kube/errors.ts', "import { KubeClient } from './client.js';\nexport const x = KubeClient;");
    const typeOnly = await ruleIds('kube/errors.ts', "import type { KubeClient } from './client.js';\nexport type X = KubeClient;");
    expect(value).toContain('import-x/no-cycle');
    expect(typeOnly).not.toContain('import-x/no-cycle');
  }, 60_000);
});
