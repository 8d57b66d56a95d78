// node-forge stays out of a controller that never makes a certificate: a fresh process imports the modules that make
// them and loads it only once one is made.
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));

describe('node-forge', () => {
  it('is loaded only when a certificate is made, not by importing the modules that make them', () => {
    // A fresh process, which has imported nothing else.
    const script = [
      "import { createRequire } from 'node:module';",
      "const loaded = () => Object.keys(createRequire(import.meta.url).cache).some((f) => f.includes('/node-forge/'));",
      "const cert = await import('./pki/self-signed.ts');",
      "await import('./activities/certificate.ts');",
      "await import('./pki/webhook-certificates.ts');",
      'const before = loaded();',
      'await cert.makeSelfSignedCertificate({ validityHours: 1, now: new Date() });',
      'console.log(JSON.stringify({ before, after: loaded() }));',
    ].join('\n');
    const out = execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { encoding: 'utf8', cwd: repoRoot });
    expect(JSON.parse(out)).toEqual({ before: false, after: true });
  });
});
