// The Go unit tests of our overlay of Traefik's Knative provider (dev/traefik/knative-overlay), run in the build
// tree dev/build-traefik.sh made for this layer's Traefik: endpoint selection, port matching, rewriteHost routers and
// the status a KIngress gets.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { TRAEFIK_VERSION } from '../../../dev/traefik.js';

const run = promisify(execFile);

describe("the overlay of Traefik's Knative provider", () => {
  it('passes its Go unit tests in the tree the stack built Traefik from', async () => {
    const cache = process.env.TIDAL_CACHE ?? path.join(os.homedir(), '.cache', 'tidal');
    const src = path.join(cache, `traefik-${TRAEFIK_VERSION}`, 'src');
    expect(existsSync(path.join(src, 'pkg', 'provider', 'kubernetes', 'knative', 'overlay_status.go'))).toBe(true);
    const env = {
      ...process.env,
      PATH: `/usr/local/go/bin:${process.env.PATH ?? ''}`,
      CGO_ENABLED: '0',
      GOFLAGS: '-mod=mod',
      GOTOOLCHAIN: 'local',
      GOMODCACHE: process.env.GOMODCACHE ?? path.join(cache, 'go', 'mod'),
      GOCACHE: process.env.GOCACHE ?? path.join(cache, 'go', 'build'),
    };
    const { stdout } = await run('go', ['test', '-count=1', '-v', '-run', 'TestOverlay', './pkg/provider/kubernetes/knative/'], {
      cwd: src,
      env,
      maxBuffer: 16 << 20,
    });
    expect(stdout).toMatch(/^ok\s/m);
    expect(stdout.match(/^--- PASS: TestOverlay/gm)?.length ?? 0).toBeGreaterThanOrEqual(5);
    expect(stdout).not.toMatch(/^--- FAIL/m);
  }, 600_000);
});
