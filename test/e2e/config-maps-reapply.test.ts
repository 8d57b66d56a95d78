// `npm run up` again after a user changed a shipped config map value with kubectl: the launcher's config map step
// (applyTidalConfigMaps, which every `up` runs) comes through, leaves the user's value in force and names it; with
// reset the shipped values return, the launcher's own again.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RESET_HINT } from '../../dev/config-maps.js';
import { applyTidalConfigMaps } from '../../dev/stack.js';
import { kubectlJson, patchConfigMap, stack } from '../harness/cluster.js';
import { shippedGc } from '../harness/config-gc.js';

type AllData = Record<string, Record<string, string>>;

/** Every config map's data in knative-serving. */
async function allData(): Promise<AllData> {
  const list = await kubectlJson<{ items: { metadata: { name: string }; data?: Record<string, string> }[] }>([
    'get',
    'configmaps',
    '-n',
    'knative-serving',
  ]);
  return Object.fromEntries(list.items.map((c) => [c.metadata.name, c.data ?? {}]));
}

const patch = patchConfigMap;

let before: AllData;
beforeAll(async () => (before = await allData()));

// The other files expect the config maps as the e2e setup left them (config-gc's keys removed: Knative's defaults).
afterAll(async () => {
  const now = await allData();
  for (const [name, data] of Object.entries(before)) {
    const current = now[name] ?? {};
    const keys = new Set([...Object.keys(data), ...Object.keys(current)]);
    const back = Object.fromEntries([...keys].filter((k) => data[k] !== current[k]).map((k) => [k, data[k] ?? null]));
    if (Object.keys(back).length > 0) await patch(name, back);
  }
});

describe('the launcher over config maps a user changed', () => {
  it('comes up, keeps the values set with kubectl patch in force and names them', async () => {
    // Both limits: with config-gc's keys removed (the e2e setup), a max of 5 alone is under Knative's min of 20.
    await patch('config-gc', { 'min-non-active-revisions': '2', 'max-non-active-revisions': '5' });
    const lines: string[] = [];
    const edited = await applyTidalConfigMaps(stack(), {}, { log: (s) => lines.push(s) });

    const gc = (await allData())['config-gc'] ?? {};
    expect(gc['min-non-active-revisions']).toBe('2');
    expect(gc['max-non-active-revisions']).toBe('5');
    const edits = edited.find((c) => c.name === 'config-gc')?.edits;
    expect(edits).toContainEqual({ key: 'max-non-active-revisions', value: '5', shipped: '1' });
    expect(lines[0]).toContain(RESET_HINT);
    const line = lines.find((l) => l.includes('knative-serving/config-gc:'));
    expect(line).toContain('min-non-active-revisions "2" (shipped "1"); max-non-active-revisions "5" (shipped "1")');
    // The retentions the e2e setup removed stay removed, and are named so.
    for (const key of ['retain-since-create-time', 'retain-since-last-active-time']) {
      expect(before['config-gc']?.[key], key).toBeUndefined();
      expect(gc[key], key).toBeUndefined();
      expect(line).toContain(`${key} removed (shipped "${shippedGc[key] ?? ''}")`);
    }
  });

  it('with reset applies the shipped values over the user’s, and the next apply finds nothing of the user’s there', async () => {
    const lines: string[] = [];
    await applyTidalConfigMaps(stack(), {}, { reset: true, log: (s) => lines.push(s) });
    const gc = (await allData())['config-gc'] ?? {};
    for (const [key, value] of Object.entries(shippedGc)) expect(gc[key], key).toBe(value);
    expect(lines[0]).toBe('config maps: the shipped values applied over your changes:');
    expect(lines.find((l) => l.includes('knative-serving/config-gc:'))).toContain('max-non-active-revisions "5" (shipped "1")');

    const again = await applyTidalConfigMaps(stack(), {}, { log: () => {} });
    expect(again.find((c) => c.name === 'config-gc')).toBeUndefined();
  });
});
