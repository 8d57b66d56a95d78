// The local stack itself: a real API server with scheduling, kwok nodes, controllers, the CRDs, and Temporal.
import { readdirSync, readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findJemalloc } from '../../dev/allocator.js';
import { flagValues, ProcessTable } from '../../dev/processes.js';
import { DevTemporalHistoryCacheSize, DevTemporalReplicationCacheFloor, DevTemporalSqlitePageCache, temporalGoEnv } from '../../dev/stack.js';
import { CONTROLLER_NODE_FLAGS, CONTROLLER_SEMI_SPACE_MB, semiSpaceFlag } from '../../workers/node-flags.js';
import { apply, getObject, kubectl, kubectlJson, stack, temporalClient } from '../harness/cluster.js';
import { eventually } from '../harness/wait.js';

describe('local stack', () => {
  it('reports a stamped Kubernetes version', async () => {
    const v = await kubectlJson<{ serverVersion: { gitVersion: string; major: string } }>(['version']);
    expect(v.serverVersion.gitVersion).toMatch(/^v1\.35\.\d+$/);
    expect(v.serverVersion.major).toBe('1');
  });

  it('has two Ready kwok nodes', async () => {
    const nodes = await kubectlJson<{ items: { metadata: { name: string }; status: { conditions: { type: string; status: string }[] } }[] }>([
      'get',
      'nodes',
    ]);
    const ready = nodes.items.filter((n) => n.status.conditions.some((c) => c.type === 'Ready' && c.status === 'True'));
    expect(ready.map((n) => n.metadata.name).sort()).toEqual(['kwok-node-0', 'kwok-node-1']);
  });

  it('schedules a 2-replica Deployment to 2/2 available', async () => {
    await apply({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'stack-check', namespace: 'default' },
      spec: {
        replicas: 2,
        selector: { matchLabels: { app: 'stack-check' } },
        template: { metadata: { labels: { app: 'stack-check' } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } },
      },
    });
    const available = await eventually(
      '2 available replicas',
      async () => {
        const d = await getObject<{ status?: { availableReplicas?: number } }>('deployment', 'stack-check');
        return d?.status?.availableReplicas === 2 ? d.status.availableReplicas : undefined;
      },
      120_000,
    );
    expect(available).toBe(2);
    await kubectl(['delete', 'deployment', 'stack-check', '--wait=false']);
  });

  it('serves the Knative CRDs with their short names and printer columns', async () => {
    const out = await kubectl(['api-resources', '--api-group=serving.knative.dev', '--no-headers']);
    expect(out).toMatch(/^services\s+kservice,ksvc\s+serving\.knative\.dev\/v1\s+true\s+Service$/m);
    expect(out).toMatch(/^configurations\s+config,cfg\s+serving\.knative\.dev\/v1\s+true\s+Configuration$/m);
    expect(out).toMatch(/^revisions\s+rev\s+serving\.knative\.dev\/v1\s+true\s+Revision$/m);
    expect(out).toMatch(/^routes\s+rt\s+serving\.knative\.dev\/v1\s+true\s+Route$/m);
  });

  it('serves the Istio networking CRDs', async () => {
    const out = await kubectl(['api-resources', '--api-group=networking.istio.io', '--no-headers', '-o', 'name']);
    expect(out.split('\n')).toEqual(
      expect.arrayContaining(['virtualservices.networking.istio.io', 'gateways.networking.istio.io', 'destinationrules.networking.istio.io']),
    );
  });

  // The controller's allocator (dev/allocator.ts): jemalloc, which returns what a burst freed.
  it.skipIf(findJemalloc() === undefined)("runs Tidal's controller on jemalloc (libjemalloc2 installed)", () => {
    const controller = new ProcessTable(stack().dir).running('tidal-controller');
    expect(controller, 'the controller process').toBeDefined();
    expect(readFileSync(`/proc/${controller!.pid}/maps`, 'utf8')).toContain('libjemalloc.so.2');
    // With the thread that purges freed pages while the process idles (dev/allocator.ts's MALLOC_CONF).
    const threads = readdirSync(`/proc/${controller!.pid}/task`).map((t) => readFileSync(`/proc/${controller!.pid}/task/${t}/comm`, 'utf8').trim());
    expect(threads).toContain('jemalloc_bg_thd');
  });

  // workers/node-flags.ts: the flags V8 reads only at start are on the stack controller's command line, and the
  // controller read them back (it logs a warning when it runs without them).
  it("runs Tidal's controller with its node flags", () => {
    const controller = new ProcessTable(stack().dir).running('tidal-controller');
    expect(controller, 'the controller process').toBeDefined();
    const argv = readFileSync(`/proc/${controller!.pid}/cmdline`, 'utf8').split('\0');
    expect(argv.slice(1, 1 + CONTROLLER_NODE_FLAGS.length)).toEqual([...CONTROLLER_NODE_FLAGS]);
    expect(semiSpaceFlag(argv.slice(1), undefined)).toBe(CONTROLLER_SEMI_SPACE_MB);
  });

  describe('Temporal dev server', () => {
    let t: Awaited<ReturnType<typeof temporalClient>>;
    beforeAll(async () => (t = await temporalClient()));
    afterAll(async () => t.close());

    it("has Tidal's search attributes registered", async () => {
      const res = await t.client.connection.operatorService.listSearchAttributes({ namespace: 'default' });
      expect(Object.keys(res.customAttributes ?? {})).toEqual(expect.arrayContaining(['KnativeKind', 'KnativeNamespace', 'KnativeName']));
    });

    // dev/stack.ts gives the dev server dynamic config by key (worker pools, scanners, the replication cache, partitions):
    // Temporal ignores a key it does not know, so a misspelt one would change nothing without a word. Each key must be
    // one the running server's binary defines.
    it('is given only dynamic config keys its server defines, the replication cache at its floor among them', () => {
      const temporal = new ProcessTable(stack().dir).running('temporal');
      expect(temporal, 'the dev server process').toBeDefined();
      const settings = flagValues(readFileSync(`/proc/${temporal!.pid}/cmdline`, 'utf8').split('\0'), '--dynamic-config-value');
      expect(settings).toEqual(expect.arrayContaining([...DevTemporalReplicationCacheFloor, ...DevTemporalHistoryCacheSize]));
      const binary = readFileSync(`/proc/${temporal!.pid}/exe`);
      const unknown = settings.map((s) => s.split('=')[0]!).filter((key) => !binary.includes(key));
      expect(unknown).toEqual([]);
      expect(binary.includes('history.noSuchSettingAnywhere')).toBe(false); // the search can say no
    });

    // dev/stack.ts: the dev server's memory settings reach the process: SQLite's page cache cut, Go's collector
    // at the stack's GOGC, as the benchmarks measured them.
    it('runs with its SQLite page cache cut and the stack’s GOGC', () => {
      const temporal = new ProcessTable(stack().dir).running('temporal');
      expect(temporal, 'the dev server process').toBeDefined();
      const pragmas = flagValues(readFileSync(`/proc/${temporal!.pid}/cmdline`, 'utf8').split('\0'), '--sqlite-pragma');
      expect(pragmas).toEqual(expect.arrayContaining(['journal_mode=wal', ...DevTemporalSqlitePageCache]));
      const environ = readFileSync(`/proc/${temporal!.pid}/environ`, 'utf8').split('\0');
      expect(environ).toContain(`GOGC=${temporalGoEnv().GOGC}`);
    });

    // dev/stack.ts: one partition per task queue on a database the stack made (fewer goroutines and MiB).
    it("runs Tidal's task queue in one partition for workflows and one for activities", async () => {
      const res = await t.client.connection.workflowService.listTaskQueuePartitions({ namespace: 'default', taskQueue: { name: 'tidal' } });
      expect(res.workflowTaskQueuePartitions?.length).toBe(1);
      expect(res.activityTaskQueuePartitions?.length).toBe(1);
    });
  });
});
