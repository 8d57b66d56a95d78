// The in-cluster manifests (deploy/) through kustomize: `kubectl kustomize` renders exactly the objects of the files
// the kustomization lists (test/unit/deploy.test.ts checks their content).
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { all, deployDir, type Obj } from '../fixtures/deploy-manifests.js';

const kubectlBin = path.join(os.homedir(), '.cache', 'tidal', 'kubernetes-v1.35.4', 'bin', 'kubectl');

describe('deploy/ manifests', () => {
  it.skipIf(!existsSync(kubectlBin))('kubectl kustomize renders exactly those objects', () => {
    const out = execFileSync(kubectlBin, ['kustomize', deployDir], { encoding: 'utf8' });
    const rendered = parseAllDocuments(out).map((d) => d.toJS() as Obj);
    const ids = (xs: Obj[]) => xs.map((o) => `${o.kind}/${o.metadata.namespace ?? ''}/${o.metadata.name}`).sort();
    expect(ids(rendered)).toEqual(ids(all));
  });
});
