// Tidal's start-up check of its Temporal namespace (workers/temporal.ts) against a real Temporal dev server: a ready
// namespace passes; a missing one fails with `temporal operator` commands that, run as printed, make the next start
// pass; with TIDAL_TEMPORAL_CREATE_NAMESPACE the controller registers the namespace and search attributes itself; a
// search attribute of the wrong type is refused.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { Connection } from '@temporalio/client';
import { ensureToolchain } from '../../dev/stack.js';
import { ensureTemporalNamespace, TidalSearchAttributes } from '../../workers/temporal.js';
import { uniqueName } from '../harness/temporal.js';

const run = promisify(execFile);
let connection: Connection;
let temporalCli: string;
const address = () => inject('temporalAddress');

beforeAll(async () => {
  connection = await Connection.connect({ address: address() });
  temporalCli = (await ensureToolchain((s) => console.error(s), 'temporal')).TEMPORAL;
});

afterAll(async () => {
  await connection?.close();
});

/** The namespace's custom search attributes and their types, as the CLI shows them. */
async function attributes(namespace: string): Promise<Record<string, number>> {
  const res = await connection.operatorService.listSearchAttributes({ namespace });
  return Object.fromEntries(Object.entries(res.customAttributes ?? {}).map(([k, v]) => [k, Number(v)]));
}

describe('the Temporal namespace check', () => {
  it('passes on a namespace that has the search attributes, changing nothing', async () => {
    const out = await ensureTemporalNamespace(connection, { address: address(), namespace: 'default', createNamespace: false });
    expect(out).toEqual({ createdNamespace: false, createdAttributes: [] });
  });

  it('fails on a missing namespace with the exact commands, and those commands make it pass', async () => {
    const namespace = uniqueName('tidal-cli');
    const s = { address: address(), namespace, createNamespace: false };
    const err = await ensureTemporalNamespace(connection, s).then(
      () => undefined,
      (e: unknown) => e as Error,
    );
    expect(err?.message).toContain(`namespace ${namespace} does not exist`);
    expect(err?.message).toContain('TIDAL_TEMPORAL_CREATE_NAMESPACE=true');
    const commands = (err?.message ?? '')
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l.startsWith('temporal operator '));
    expect(commands).toEqual([
      `temporal operator namespace create --namespace ${namespace} --retention 72h --address ${address()}`,
      ...TidalSearchAttributes.map(
        (a) => `temporal operator search-attribute create --namespace ${namespace} --name ${a} --type Keyword --address ${address()}`,
      ),
    ]);
    // Run them as a user would (the namespace may take a moment to be usable by the second command).
    for (const command of commands) {
      for (let attempt = 0; ; attempt++) {
        try {
          await run(temporalCli, command.split(' ').slice(1));
          break;
        } catch (e) {
          if (attempt > 60) throw e;
          await new Promise((r) => setTimeout(r, 500));
        }
      }
    }
    await expect(ensureTemporalNamespace(connection, s)).resolves.toEqual({ createdNamespace: false, createdAttributes: [] });
  });

  it('names only the missing search attributes when the namespace exists', async () => {
    const namespace = uniqueName('tidal-attrs');
    await run(temporalCli, ['operator', 'namespace', 'create', '--namespace', namespace, '--address', address()]);
    const err = await ensureTemporalNamespace(connection, { address: address(), namespace, createNamespace: false }, { timeoutMs: 30_000 }).then(
      () => undefined,
      (e: unknown) => e as Error,
    );
    expect(err?.message).toContain(`search attributes KnativeKind, KnativeNamespace, KnativeName are missing`);
    expect(err?.message).not.toContain('namespace create');
  });

  it('registers the namespace and the search attributes (Keyword) when allowed, once', async () => {
    const namespace = uniqueName('tidal-create');
    const s = { address: address(), namespace, createNamespace: true };
    await expect(ensureTemporalNamespace(connection, s)).resolves.toEqual({ createdNamespace: true, createdAttributes: [...TidalSearchAttributes] });
    const described = await connection.workflowService.describeNamespace({ namespace });
    expect(described.namespaceInfo?.name).toBe(namespace);
    expect(Number(described.config?.workflowExecutionRetentionTtl?.seconds)).toBe(72 * 3600);
    const attrs = await attributes(namespace);
    for (const a of TidalSearchAttributes) expect(attrs[a], a).toBe(2); // INDEXED_VALUE_TYPE_KEYWORD
    // A second replica starting now finds everything in place.
    await expect(ensureTemporalNamespace(connection, s)).resolves.toEqual({ createdNamespace: false, createdAttributes: [] });
  });

  it('refuses a search attribute of another type instead of using it', async () => {
    const namespace = uniqueName('tidal-type');
    await run(temporalCli, ['operator', 'namespace', 'create', '--namespace', namespace, '--address', address()]);
    for (let attempt = 0; ; attempt++) {
      try {
        await run(temporalCli, [
          'operator',
          'search-attribute',
          'create',
          '--namespace',
          namespace,
          '--name',
          'KnativeKind',
          '--type',
          'Text',
          '--address',
          address(),
        ]);
        break;
      } catch (e) {
        if (attempt > 60) throw e;
        await new Promise((r) => setTimeout(r, 500));
      }
    }
    await expect(ensureTemporalNamespace(connection, { address: address(), namespace, createNamespace: true })).rejects.toThrow(
      `search attribute KnativeKind must be of type Keyword`,
    );
  });
});
