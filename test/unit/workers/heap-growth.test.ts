// limitHeapGrowth set at run time reaches V8: old-generation garbage is collected at the lower limit it sets.
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const module = fileURLToPath(new URL('../../../workers/heap-growth.ts', import.meta.url));

/** Full collections while objects live long enough to be promoted and then die, with `percent` set (0: V8's own). */
function majorCollections(percent: number): number {
  const script = `
    import { PerformanceObserver, constants } from 'node:perf_hooks';
    import { limitHeapGrowth } from ${JSON.stringify(module)};
    const applied = limitHeapGrowth(${percent});
    let majors = 0;
    new PerformanceObserver((l) => { for (const e of l.getEntries()) if (e.detail?.kind === constants.NODE_PERFORMANCE_GC_MAJOR) majors++; }).observe({ entryTypes: ['gc'] });
    const ring = new Array(100_000);
    for (let i = 0; i < 3_000_000; i++) ring[i % ring.length] = { a: [i, i, i, i], s: 'g' + i };
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
  it('makes V8 collect the old generation sooner when set at run time; 0 leaves V8 its own factor', () => {
    const own = majorCollections(0);
    const limited = majorCollections(10);
    expect(limited).toBeGreaterThan(2 * Math.max(own, 1));
  }, 60_000);
});
