// The local stack's Temporal settings from the environment (dev/stack.ts): what benchmarks pass to either Temporal.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  DevTemporalDatabaseFile,
  DevTemporalGoGC,
  DevTemporalHistoryCacheSize,
  DevTemporalPartitionsFile,
  DevTemporalReplicationCacheFloor,
  DevTemporalScannersOff,
  DevTemporalSqlitePageCache,
  DevTemporalWorkerPools,
  devTemporalPartitions,
  devTemporalSqlitePragmas,
  taskQueuePartitionSettings,
  temporalDynamicConfig,
  temporalGoEnv,
} from '../../dev/stack.js';

describe('temporalDynamicConfig', () => {
  it('adds the settings of TIDAL_TEMPORAL_DYNAMIC_CONFIG, separated by spaces, after the caller’s', () => {
    const env = { TIDAL_TEMPORAL_DYNAMIC_CONFIG: ' history.cacheTTL="1m"  matching.numTaskqueueReadPartitions=1 ' };
    expect(temporalDynamicConfig(['system.enableEagerWorkflowStart=true'], env)).toEqual([
      'system.enableEagerWorkflowStart=true',
      'history.cacheTTL="1m"',
      'matching.numTaskqueueReadPartitions=1',
    ]);
  });

  it('is the caller’s alone when the variable is unset or empty', () => {
    expect(temporalDynamicConfig(['a=1'], {})).toEqual(['a=1']);
    expect(temporalDynamicConfig(undefined, { TIDAL_TEMPORAL_DYNAMIC_CONFIG: '' })).toEqual([]);
  });
});

describe('temporalGoEnv', () => {
  it('gives the dev server GOGC 40 unless asked otherwise, and a memory limit only when asked', () => {
    expect(DevTemporalGoGC).toBe('40');
    expect(temporalGoEnv({ PATH: '/bin' })).toEqual({ PATH: '/bin', GOGC: '40' });
    expect(temporalGoEnv({ TIDAL_TEMPORAL_GOGC: '' })).toEqual({ TIDAL_TEMPORAL_GOGC: '', GOGC: '40' });
    expect(temporalGoEnv({ TIDAL_TEMPORAL_GOMEMLIMIT: '100MiB', TIDAL_TEMPORAL_GOGC: '100' })).toMatchObject({ GOMEMLIMIT: '100MiB', GOGC: '100' });
  });
});

describe('DevTemporalSqlitePageCache and devTemporalSqlitePragmas', () => {
  it('cuts the page cache to 256 KiB (a negative cache_size counts KiB), and nothing else', () => {
    expect(DevTemporalSqlitePageCache).toEqual(['cache_size=-256']);
  });

  it('adds the pragmas of TIDAL_TEMPORAL_SQLITE_PRAGMAS, separated by spaces; none when unset or empty', () => {
    expect(devTemporalSqlitePragmas({ TIDAL_TEMPORAL_SQLITE_PRAGMAS: ' cache_size=-2000  temp_store=memory ' })).toEqual([
      'cache_size=-2000',
      'temp_store=memory',
    ]);
    expect(devTemporalSqlitePragmas({})).toEqual([]);
    expect(devTemporalSqlitePragmas({ TIDAL_TEMPORAL_SQLITE_PRAGMAS: '' })).toEqual([]);
  });
});

describe('DevTemporalWorkerPools', () => {
  it('sizes each of the history service’s task worker pools the dev server runs for a small host', () => {
    const pools = new Map(DevTemporalWorkerPools.map((d) => d.split('=') as [string, string]));
    // Production's defaults are 512 (transfer, timer, visibility), 64 (in-memory timers), 512 and 128 (replication).
    expect([...pools.keys()].sort()).toEqual([
      'history.ReplicationLowPriorityProcessorSchedulerWorkerCount',
      'history.ReplicationProcessorSchedulerWorkerCount',
      'history.memoryTimerProcessorSchedulerWorkerCount',
      'history.timerProcessorSchedulerWorkerCount',
      'history.transferProcessorSchedulerWorkerCount',
      'history.visibilityProcessorSchedulerWorkerCount',
    ]);
    for (const value of pools.values()) expect(Number.isInteger(JSON.parse(value)) && Number(value) >= 1 && Number(value) <= 16).toBe(true);
  });
});

describe('DevTemporalScannersOff', () => {
  it('turns off the two maintenance scanners a SQLite dev server starts, and nothing else', () => {
    expect(DevTemporalScannersOff).toEqual(['worker.taskQueueScannerEnabled=false', 'worker.historyScannerEnabled=false']);
  });
});

describe('DevTemporalReplicationCacheFloor', () => {
  it('shrinks the replication event cache to the floor Temporal allows (64 KiB), and nothing else', () => {
    expect(DevTemporalReplicationCacheFloor).toEqual(['history.xdcCacheMaxSizeBytes=65536']);
  });
});

describe('DevTemporalHistoryCacheSize', () => {
  it('bounds the history service’s cache of mutable state by entries, above the runs a burst of 200 has under way', () => {
    expect(DevTemporalHistoryCacheSize).toEqual(['history.hostLevelCacheMaxSize=512']);
    expect(Number(DevTemporalHistoryCacheSize[0]!.split('=')[1])).toBeGreaterThan(2 * 200);
  });
});

describe('devTemporalPartitions', () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(path.join(os.tmpdir(), 'tidal-partitions-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('gives a new database one partition per task queue and records it before the server makes the database', () => {
    expect(devTemporalPartitions(dir)).toBe(1);
    expect(readFileSync(path.join(dir, DevTemporalPartitionsFile), 'utf8')).toBe('1\n');
    writeFileSync(path.join(dir, DevTemporalDatabaseFile), ''); // the server made it
    expect(devTemporalPartitions(dir)).toBe(1);
  });

  it("keeps Temporal's four for a database made before the record (fewer read partitions would strand their tasks)", () => {
    writeFileSync(path.join(dir, DevTemporalDatabaseFile), '');
    expect(devTemporalPartitions(dir)).toBe(4);
    expect(devTemporalPartitions(dir)).toBe(4);
  });

  it('follows the record, and names the file when it holds no number', () => {
    writeFileSync(path.join(dir, DevTemporalDatabaseFile), '');
    writeFileSync(path.join(dir, DevTemporalPartitionsFile), '2\n');
    expect(devTemporalPartitions(dir)).toBe(2);
    writeFileSync(path.join(dir, DevTemporalPartitionsFile), 'many');
    expect(() => devTemporalPartitions(dir)).toThrow(`${DevTemporalPartitionsFile}: expected a number of task-queue partitions, found "many"`);
  });

  it('sets read and write partitions alike', () => {
    expect(taskQueuePartitionSettings(1)).toEqual(['matching.numTaskqueueReadPartitions=1', 'matching.numTaskqueueWritePartitions=1']);
  });
});
