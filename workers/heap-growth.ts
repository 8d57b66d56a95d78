// How far V8 lets the heap grow past what survived its last full collection before it collects again. V8's own factor
// rises with how fast a program allocates against how fast it collects, up to 4×: through a burst of entity passes the
// controller allocates fast, so right after a burst it held much garbage V8 had not yet needed to collect
// (docs/benchmarks.md). A fixed 1.5× (50 %) took most of it off for no CPU measurable on `bench:ready`; 1.25× (25 %)
// takes a little more off a burst's end for a little more of Tidal's CPU.
// Set at start-up, before the worker runs: V8 reads the flag each time it sets the next limit.
import { setFlagsFromString } from 'node:v8';

/** The controller's default (`TIDAL_HEAP_GROWING_PERCENT`). */
export const defaultHeapGrowingPercent = 25;

/** V8's `--heap-growing-percent`; 0 leaves V8's own growing factor. */
export function limitHeapGrowth(percent: number): boolean {
  if (percent <= 0) return false;
  setFlagsFromString(`--heap-growing-percent=${percent}`);
  return true;
}
