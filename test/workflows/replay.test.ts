// Replay: histories recorded from real runs (e2e stack) must replay on the current workflow code. A change to the
// sequence of commands that would break running workflows fails here first; ship such changes behind patched()
// (ADR 0022). One folder per release still supported (`pre-v0.1.0/`: those recorded before the first release); cutting
// a release records its own with `TIDAL_RECORD_HISTORIES=<version> npm run test:e2e` (test/harness/e2e-setup.ts).
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { Worker } from '@temporalio/worker';
import { bundle } from '../harness/temporal.js';

const root = fileURLToPath(new URL('../fixtures/histories/', import.meta.url));
const releases = readdirSync(root, { withFileTypes: true })
  .filter((d) => d.isDirectory())
  .map((d) => d.name)
  .sort();
const files = releases.flatMap((r) =>
  readdirSync(path.join(root, r))
    .filter((f) => f.endsWith('.json'))
    .map((f) => `${r}/${f}`),
);

describe('replay of recorded histories', () => {
  it.each(releases)('%s has recorded histories of every entity workflow type', (release) => {
    const types = new Set(files.filter((f) => f.startsWith(`${release}/`)).map((f) => path.basename(f).split('_')[0]));
    expect([...types].sort()).toEqual(['Configuration', 'DomainMapping', 'GatewayCertificate', 'Ingress', 'Revision', 'Route', 'Service']);
  });

  it.each(files)('%s replays on the current code', async (file) => {
    const history: unknown = JSON.parse(readFileSync(path.join(root, file), 'utf8'));
    const workflowBundle = await bundle();
    await expect(Worker.runReplayHistory({ workflowBundle, replayName: file }, history)).resolves.toBeUndefined();
  });
});
