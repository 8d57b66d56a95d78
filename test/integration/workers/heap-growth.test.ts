// limitHeapGrowth set at run time reaches V8: old-generation garbage is collected at the lower limit it sets.
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { limitHeapGrowth } from '../../../workers/heap-growth.js';

const module = fileURLToPath(new URL('../../../workers/heap-growth.ts', import.meta.url));

/** Full collections in a child process while objects live long enough to be promoted and then die, with `percent` set. */
function majorCollections(percent: number): number {
  const script = `
    import { PerformanceObserver, constants } from 'node:perf_hooks';
    import { limitHeapGrowth } from ${JSON.stringify(module)};
    const applied = limitHeapGrowth(${percent});
    let majors = 0;
    new PerformanceObserver((l) => { for (const e of l.getEntries()) if (e.detail?.kind === constants.NODE_PERFORMANCE_GC_MAJOR) majors++; }).observe({ entryTypes: ['gc'] });
    const ring = new Array(300_000);
    for (let i = 0; i < 4_000_000; i++) ring[i % ring.length] = { a: [i, i, i, i], s: 'g' + i };
    setTimeout(() => console.log(JSON.stringify({ applied, majors })), 10);
  `;
  const out = JSON.parse(execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { encoding: 'utf8' })) as {
    applied: boolean;
    majors: number;
  };
  expect(out.applied).toBe(percent > 0);
  return out.majors;
}

describe('limitHeapGrowth', () => {
  it('reaches V8 when set at run time: at 10 % it collects the old generation far more often than at 300 %', () => {
    // Both fixed factors, so the counts depend on allocation alone, not on how busy the machine is. Measured here: 20
    // full collections at 10 % (V8 bounds how small a step may be), 4 at 300 % — and 4 with V8's own factor.
    const loose = majorCollections(300);
    const tight = majorCollections(10);
    expect(tight).toBeGreaterThan(3 * Math.max(loose, 1));
  }, 60_000);

  it('leaves V8 its own factor at 0', () => {
    expect(limitHeapGrowth(0)).toBe(false);
  });
});
