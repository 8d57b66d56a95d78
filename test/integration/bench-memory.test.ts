// The benchmarks' memory readings from /proc: the peak RSS a phase reports starts over when asked, and the file pages
// are the part of the RSS mapped from binaries.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { describe, expect, it } from 'vitest';
import { fileMiB, resetPeakRss, rssMiB } from '../../bench/measure.js';

describe('peak RSS', () => {
  it('holds a peak the process has left behind until reset, then starts from what it holds now', async () => {
    // A child that fills 200 MiB, frees it (glibc gives a block this large back at once), and waits.
    const child = spawn(
      process.execPath,
      [
        '--expose-gc',
        '-e',
        `let b = Buffer.alloc(200 * 1024 * 1024, 1); b = undefined; gc(); process.stdout.write('freed\\n'); setInterval(() => {}, 1000);`,
      ],
      { env: { ...process.env, LD_PRELOAD: '' }, stdio: ['ignore', 'pipe', 'inherit'] },
    );
    try {
      await once(child.stdout, 'data');
      const pid = child.pid!;
      const before = { rss: rssMiB(pid), peak: rssMiB(pid, 'VmHWM') };
      expect(before.peak).toBeGreaterThan(200);
      expect(before.rss).toBeLessThan(before.peak - 150);
      expect(resetPeakRss(pid)).toBe(true);
      const after = rssMiB(pid, 'VmHWM');
      expect(after).toBeLessThan(before.peak - 150);
      expect(after).toBeGreaterThanOrEqual(rssMiB(pid) - 1);
    } finally {
      child.kill();
    }
  });

  it('reports a process that is gone as not reset and not measured', () => {
    expect(resetPeakRss(2 ** 22 + 1)).toBe(false);
    expect(rssMiB(2 ** 22 + 1)).toBeNaN();
  });
});

describe('file pages', () => {
  it("are part of this process's RSS: node's own binary at least, never the whole of it", () => {
    const file = fileMiB(process.pid);
    expect(file).toBeGreaterThan(5);
    expect(file).toBeLessThan(rssMiB(process.pid));
  });
});
