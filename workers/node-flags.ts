// The V8 flags the controller runs with that V8 reads only when the process starts: the launchers (the image and the
// Dockerfile, the local stack, `npm run controller`) put them on node's command line, where the controller cannot set
// them itself as it sets its heap growth (heap-growth.ts).
//
// A young generation of 4 MiB semi-spaces instead of V8's 16: through a burst of entity passes V8 grows the young
// generation to its largest (32 MiB committed) and keeps it until its memory reducer finds the process idle, a minute
// or more after the burst's runs end. Capped, the controller holds less right after a burst, for a little more of its
// CPU (docs/benchmarks.md).

/** The semi-space size in MiB the launchers give V8 (`--max-semi-space-size`). */
export const CONTROLLER_SEMI_SPACE_MB = 4;

/** node's flags for the controller, before the script. */
export const CONTROLLER_NODE_FLAGS: readonly string[] = [`--max-semi-space-size=${CONTROLLER_SEMI_SPACE_MB}`];

/**
 * The semi-space size this process was given, from its own flags and NODE_OPTIONS (the last one wins, as in V8), or
 * undefined: V8's default. Logged at start-up so that a controller launched another way says what it runs with.
 */
export function semiSpaceFlag(execArgv: readonly string[], nodeOptions: string | undefined): number | undefined {
  let mb: number | undefined;
  for (const arg of [...(nodeOptions ?? '').split(/\s+/), ...execArgv]) {
    const m = /^--max[-_]semi[-_]space[-_]size=(\d+)$/.exec(arg);
    if (m) mb = Number(m[1]);
  }
  return mb;
}
