// dev/processes.ts flagValues: what a process's command line gives a repeatable flag (the e2e layer and the benchmarks
// read the dev server's pragmas and dynamic config this way).
import { describe, expect, it } from 'vitest';
import { flagValues } from '../../dev/processes.js';

describe('flagValues', () => {
  it('gives each value that follows the flag, in order, and nothing of other flags', () => {
    const args = ['temporal', '--sqlite-pragma', 'journal_mode=wal', '--log-level', 'warn', '--sqlite-pragma', 'cache_size=-256', '--sqlite-pragma'];
    expect(flagValues(args, '--sqlite-pragma')).toEqual(['journal_mode=wal', 'cache_size=-256']);
    expect(flagValues(args, '--log-level')).toEqual(['warn']);
    expect(flagValues(args, '--dynamic-config-value')).toEqual([]);
  });
});
