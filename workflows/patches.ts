// Every patch in workflow code, with the release that introduced it (ADR 0022). A patch may be deprecated in the
// release after that one and its old branch deleted one release later; test/unit/workflows/patches.test.ts keeps this
// list equal to the `patched()` and `deprecatePatch()` calls in workflows/.
export interface PatchRecord {
  introduced: string;
  deprecated?: string;
}

export const Patches: Record<string, PatchRecord> = {
  'options-after-first-pass': { introduced: 'v0.1.0' },
  'wake-left-to-the-next-pass': { introduced: 'v0.1.0' },
  'revision-gc': { introduced: 'v0.1.0' },
  'new-revision-in-one-step': { introduced: 'v0.1.0' },
  'status-pass-in-one-step': { introduced: 'v0.1.0' },
  'full-pass-in-one-step': { introduced: 'v0.1.0' },
  'relabel-recheck': { introduced: 'v0.1.0' },
  'late-wake-passes-now': { introduced: 'v0.2.0' },
  'failed-pass-retried-by-the-loop': { introduced: 'v0.2.0' },
};
