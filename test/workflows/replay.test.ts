// Replay: histories recorded from real runs (e2e stack) must replay on the current workflow code. A change to the
// sequence of commands that would break running workflows fails here first; ship such changes behind patched().
// Refresh with: temporal workflow show -w <id> --output json > test/fixtures/histories/<id with _>.json
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { Worker } from '@temporalio/worker';
import { bundle } from '../harness/temporal.js';

const dir = fileURLToPath(new URL('../fixtures/histories/', import.meta.url));
const files = readdirSync(dir).filter((f) => f.endsWith('.json'));

describe('replay of recorded histories', () => {
  it('has recorded histories of every entity workflow type', () => {
    const types = new Set(files.map((f) => f.split('_')[0]));
    expect([...types].sort()).toEqual(['Configuration', 'DomainMapping', 'GatewayCertificate', 'Ingress', 'Revision', 'Route', 'Service']);
  });

  it.each(files)('%s replays on the current code', async (file) => {
    const history: unknown = JSON.parse(readFileSync(path.join(dir, file), 'utf8'));
    const workflowBundle = await bundle();
    await expect(Worker.runReplayHistory({ workflowBundle, replayName: file }, history)).resolves.toBeUndefined();
  });
});
