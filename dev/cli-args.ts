// Small helpers of the dev/ command lines (`npm run image`, `npm run images:knative`).

/** The value after `--<name>` in `args`, if any. */
export function argValue(args: string[], name: string): string | undefined {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : undefined;
}

/** Bytes as MiB with one decimal, as the image commands print sizes. */
export const MiB = (n: number): string => `${(n / 1048576).toFixed(1)} MiB`;
