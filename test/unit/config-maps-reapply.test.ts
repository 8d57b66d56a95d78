// dev/config-maps.ts: which shipped config map keys `up` applies over a stack that holds them already, and what it
// says about the keys a user changed or removed since.
import { describe, expect, it } from 'vitest';
import { applyConfigMaps, describeEdits, INSTALLER, planConfigMaps, RESET_HINT, SHIPPED_KEYS, type LiveConfigMap } from '../../dev/config-maps.js';

const shippedGc = {
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name: 'config-gc', namespace: 'knative-serving', labels: { 'app.kubernetes.io/name': 'knative-serving' } },
  data: { 'min-non-active-revisions': '1', 'max-non-active-revisions': '1', _example: 'docs' },
};
const allKeys = '_example,max-non-active-revisions,min-non-active-revisions';

/** The fieldsV1 of a manager that owns `keys` of data. */
const owns = (manager: string, keys: string[], operation = 'Update') => ({
  manager,
  operation,
  fieldsType: 'FieldsV1',
  fieldsV1: { 'f:data': Object.fromEntries(keys.map((k) => [`f:${k}`, {}])) },
});

/** config-gc as the cluster holds it: its data, its managers and the keys the launcher last shipped. */
function liveGc(data: Record<string, string>, managed: LiveConfigMap['metadata']['managedFields'], shippedKeys = allKeys): LiveConfigMap {
  return {
    metadata: { name: 'config-gc', namespace: 'knative-serving', annotations: { [SHIPPED_KEYS]: shippedKeys }, managedFields: managed },
    data,
  };
}

describe('planConfigMaps', () => {
  it('applies every shipped key to a stack without the config map, annotated with the keys shipped', () => {
    const plan = planConfigMaps([shippedGc], [], false);
    expect(plan.edited).toEqual([]);
    expect(plan.items).toEqual([{ ...shippedGc, metadata: { ...shippedGc.metadata, annotations: { [SHIPPED_KEYS]: allKeys } } }]);
  });

  it('leaves out and reports a key another manager changed; the others are applied', () => {
    const live = liveGc({ 'min-non-active-revisions': '1', 'max-non-active-revisions': '5', _example: 'docs' }, [
      owns(INSTALLER, ['min-non-active-revisions', '_example'], 'Apply'),
      owns('kubectl-patch', ['max-non-active-revisions']),
    ]);
    const plan = planConfigMaps([shippedGc], [live], false);
    expect(plan.items[0]?.data).toEqual({ 'min-non-active-revisions': '1', _example: 'docs' });
    expect(plan.edited).toEqual([
      { namespace: 'knative-serving', name: 'config-gc', edits: [{ key: 'max-non-active-revisions', value: '5', shipped: '1' }] },
    ]);
  });

  it('keeps a shipped key someone removed since the last apply, and applies one never shipped before', () => {
    const live = liveGc({ _example: 'docs' }, [owns(INSTALLER, ['_example'], 'Apply')], '_example,max-non-active-revisions');
    const plan = planConfigMaps([shippedGc], [live], false);
    expect(plan.items[0]?.data).toEqual({ 'min-non-active-revisions': '1', _example: 'docs' });
    expect(plan.edited[0]?.edits).toEqual([{ key: 'max-non-active-revisions', shipped: '1' }]);
    expect((plan.items[0]?.metadata as { annotations: Record<string, string> }).annotations[SHIPPED_KEYS]).toBe(allKeys);
  });

  it('without the annotation (a stack set up before it) a missing key is applied again', () => {
    const live: LiveConfigMap = { metadata: { name: 'config-gc', namespace: 'knative-serving', managedFields: [] }, data: { _example: 'docs' } };
    expect(planConfigMaps([shippedGc], [live], false)).toMatchObject({ edited: [], items: [{ data: shippedGc.data }] });
  });

  it("updates a value only the launcher owns (its earlier shipped one), and co-owns a user's value equal to the shipped one", () => {
    const live = liveGc({ 'min-non-active-revisions': '3', 'max-non-active-revisions': '1', _example: 'docs' }, [
      owns(INSTALLER, ['min-non-active-revisions', 'max-non-active-revisions', '_example'], 'Apply'),
      owns('kubectl-edit', ['max-non-active-revisions']),
    ]);
    expect(planConfigMaps([shippedGc], [live], false)).toMatchObject({ edited: [], items: [{ data: shippedGc.data }] });
  });

  it('neither applies nor reports a key the user added that was never shipped', () => {
    const live = liveGc({ ...shippedGc.data, 'retain-since-create-time': '10m' }, [
      owns(INSTALLER, Object.keys(shippedGc.data), 'Apply'),
      owns('kubectl-patch', ['retain-since-create-time']),
    ]);
    const plan = planConfigMaps([shippedGc], [live], false);
    expect(plan.edited).toEqual([]);
    expect(plan.items[0]?.data).toEqual(shippedGc.data);
  });

  it('with reset applies every shipped value and reports the edits it overwrites', () => {
    const live = liveGc({ 'max-non-active-revisions': '5', _example: 'docs' }, [
      owns(INSTALLER, ['_example'], 'Apply'),
      owns('kubectl-patch', ['max-non-active-revisions']),
    ]);
    const plan = planConfigMaps([shippedGc], [live], true);
    expect(plan.items[0]?.data).toEqual(shippedGc.data);
    expect(plan.edited[0]?.edits).toEqual([
      { key: 'min-non-active-revisions', shipped: '1' },
      { key: 'max-non-active-revisions', value: '5', shipped: '1' },
    ]);
  });

  it('matches config maps by namespace and name, and passes other objects through untouched', () => {
    const elsewhere = liveGc({ 'max-non-active-revisions': '5' }, [owns('kubectl-patch', ['max-non-active-revisions'])]);
    elsewhere.metadata = { ...elsewhere.metadata, namespace: 'other' };
    const gateway = { apiVersion: 'networking.istio.io/v1', kind: 'Gateway', metadata: { name: 'g', namespace: 'knative-serving' }, spec: {} };
    const plan = planConfigMaps([shippedGc, gateway], [elsewhere], false);
    expect(plan.edited).toEqual([]);
    expect(plan.items[0]?.data).toEqual(shippedGc.data);
    expect(plan.items[1]).toBe(gateway);
  });
});

describe('describeEdits', () => {
  it('names each config map and key kept, with both values, and how to get the shipped ones', () => {
    const lines = describeEdits(
      [
        {
          namespace: 'knative-serving',
          name: 'config-gc',
          edits: [
            { key: 'max-non-active-revisions', value: '5', shipped: '1' },
            { key: 'retain-since-create-time', shipped: 'disabled' },
          ],
        },
      ],
      false,
    );
    expect(lines).toEqual([
      `config maps: kept your changes to the shipped values (${RESET_HINT} applies the shipped ones):`,
      '  knative-serving/config-gc: max-non-active-revisions "5" (shipped "1"); retain-since-create-time removed (shipped "disabled")',
    ]);
  });

  it('says the shipped values were applied with reset, cuts long values, and says nothing without edits', () => {
    const long = 'x'.repeat(100);
    const lines = describeEdits([{ namespace: 'ns', name: 'config-logging', edits: [{ key: '_example', value: `a\n${long}`, shipped: 'b' }] }], true);
    expect(lines[0]).toBe('config maps: the shipped values applied over your changes:');
    expect(lines[1]).toBe(`  ns/config-logging: _example "a\\n${'x'.repeat(37)}…" (shipped "b")`);
    expect(describeEdits([], false)).toEqual([]);
  });
});

describe('applyConfigMaps', () => {
  const liveList = JSON.stringify({
    items: [
      liveGc({ 'min-non-active-revisions': '1', 'max-non-active-revisions': '5', _example: 'docs' }, [
        owns('kubectl-patch', ['max-non-active-revisions']),
      ]),
    ],
  });

  it('reads the namespaces’ config maps with their managers, applies under the installer without forcing, and logs what it kept', async () => {
    const calls: { args: string[]; input?: string }[] = [];
    const lines: string[] = [];
    const kubectl = (args: string[], input?: string) => {
      calls.push({ args, input });
      return Promise.resolve(args[0] === 'get' ? liveList : '');
    };
    const edited = await applyConfigMaps(kubectl, [shippedGc], { log: (s) => lines.push(s) });
    expect(calls.map((c) => c.args)).toEqual([
      ['get', 'configmaps', '-n', 'knative-serving', '-o', 'json', '--show-managed-fields'],
      ['apply', '--server-side', `--field-manager=${INSTALLER}`, '-f', '-'],
    ]);
    const applied = JSON.parse(calls[1]?.input ?? '{}') as { kind: string; items: { data: Record<string, string> }[] };
    expect(applied.kind).toBe('List');
    expect(applied.items[0]?.data).toEqual({ 'min-non-active-revisions': '1', _example: 'docs' });
    expect(edited[0]?.edits.map((e) => e.key)).toEqual(['max-non-active-revisions']);
    expect(lines[1]).toContain('knative-serving/config-gc: max-non-active-revisions "5" (shipped "1")');
  });

  it('forces the shipped values with reset', async () => {
    const applies: string[][] = [];
    const kubectl = (args: string[]) => {
      if (args[0] === 'apply') applies.push(args);
      return Promise.resolve(args[0] === 'get' ? liveList : '');
    };
    await applyConfigMaps(kubectl, [shippedGc], { reset: true, log: () => {} });
    expect(applies).toEqual([['apply', '--server-side', `--field-manager=${INSTALLER}`, '--force-conflicts', '-f', '-']]);
  });

  it('adds the way back to the shipped values to a conflict it could not foresee', async () => {
    const kubectl = (args: string[]) =>
      args[0] === 'get' ? Promise.resolve('{"items":[]}') : Promise.reject(new Error('Apply failed with 1 conflict: conflict with "kubectl-label"'));
    await expect(applyConfigMaps(kubectl, [shippedGc], { log: () => {} })).rejects.toThrow(`${RESET_HINT} applies the shipped values over it`);
  });
});
