// Polling for eventually-true conditions: tests wait on state, never on wall-clock assertions.

export async function eventually<T>(what: string, probe: () => Promise<T | undefined | false>, timeoutMs = 60_000, intervalMs = 250): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastErr: unknown;
  for (;;) {
    try {
      const v = await probe();
      if (v !== undefined && v !== false) return v;
    } catch (err) {
      lastErr = err;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}${lastErr instanceof Error ? `: ${lastErr.message}` : ''}`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}
