// `npm run image` (dev/image.ts) for real: the image is assembled from dist/ and the production dependencies, pushed
// to a registry started for the test (Debian's docker-registry, TLS), its tag resolves through Tidal's own registry
// client to the digest the build computed, and its root filesystem, unpacked, runs `node dist/controller.js` as uid
// 65532 with nothing from this machine but the image: the controller loads (ES modules, the Temporal native module)
// and stops at its first need, the cluster credentials, with Tidal's own message.
import { execFile, execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findJemalloc, JEMALLOC_CONF } from '../../dev/allocator.js';
import { assembleImage, IMAGE_UID, pushImageLayout, writeLayout, type BuiltImage } from '../../dev/image.js';
import { startRegistry, stopRegistry, type RegistryInfo } from '../../dev/registry.js';
import { makeRegistryResolver } from '../../registry/resolver.js';
import { build, isBuildFresh } from '../../workers/build.js';
import { CONTROLLER_NODE_FLAGS } from '../../workers/node-flags.js';
import { freePort } from '../harness/free-port.js';

const canRun = existsSync('/usr/bin/docker-registry') && existsSync('/usr/sbin/chroot') && process.getuid?.() === 0 && process.platform === 'linux';
const tmp = mkdtempSync(path.join(os.tmpdir(), 'tidal-image-'));
let reg: RegistryInfo;
let img: BuiltImage;

describe.skipIf(!canRun)('npm run image', () => {
  beforeAll(async () => {
    if (!isBuildFresh()) await build(() => {});
    img = assembleImage('test');
    reg = await startRegistry({ dir: path.join(tmp, 'registry'), port: await freePort(), auth: false, tls: true });
  }, 180_000);

  afterAll(async () => {
    if (reg) await stopRegistry(reg.dir);
    rmSync(tmp, { recursive: true, force: true });
  });

  it('has three layers whose config diff_ids match, runs as 65532, node with its flags dist/controller.js', () => {
    expect(img.layers.map((l) => l.name)).toEqual(['runtime', 'dependencies', 'app']);
    const config = JSON.parse(img.config.data.toString('utf8')) as {
      config: { User: string; Entrypoint: string[]; WorkingDir: string };
      rootfs: { diff_ids: string[] };
    };
    expect(config.config.User).toBe(`${IMAGE_UID}:${IMAGE_UID}`);
    expect(config.config.Entrypoint).toEqual(['/usr/local/bin/node', ...CONTROLLER_NODE_FLAGS, 'dist/controller.js']);
    expect(config.config.WorkingDir).toBe('/app');
    expect(config.rootfs.diff_ids).toEqual(img.layers.map((l) => l.diffId));
    // Production dependencies only: no tsx, esbuild, vitest or the Kubernetes client.
    const deps = gunzipSync(img.layers[1]!.data).toString('latin1');
    expect(deps).toContain('app/node_modules/@temporalio/worker/package.json');
    for (const dev of ['node_modules/tsx/', 'node_modules/esbuild/', 'node_modules/vitest/', 'node_modules/@kubernetes/client-node/'])
      expect(deps).not.toContain(dev);
    // Assembling again gives the same digests (reproducible layers).
    expect(assembleImage('test').manifest.digest).toBe(img.manifest.digest);
  }, 120_000);

  it('pushes to a registry and the tag resolves to the built digest through Tidal’s registry client', async () => {
    const digest = await pushImageLayout(img, { url: reg.url, caPem: reg.caPem, repository: 'tidal/controller', tag: 'test' });
    expect(digest).toBe(img.manifest.digest);
    const resolver = makeRegistryResolver({ kube: { get: () => Promise.resolve(undefined) }, ...(reg.caPem ? { extraCAPem: reg.caPem } : {}) });
    try {
      const resolved = await resolver.resolve(`${reg.host}/tidal/controller:test`, {
        namespace: 'default',
        serviceAccountName: undefined,
        imagePullSecrets: [],
        skipRegistries: [],
        timeoutSeconds: 30,
      });
      expect(resolved).toBe(`${reg.host}/tidal/controller@${img.manifest.digest}`);
    } finally {
      resolver.close();
    }
    // A second push uploads nothing new and lands on the same digest.
    expect(await pushImageLayout(img, { url: reg.url, caPem: reg.caPem, repository: 'tidal/controller', tag: 'test' })).toBe(digest);
  }, 120_000);

  it('its root filesystem alone runs the controller as uid 65532', async () => {
    const layout = path.join(tmp, 'layout');
    writeLayout(img, layout, 'test');
    const index = JSON.parse(readFileSync(path.join(layout, 'index.json'), 'utf8')) as { manifests: { digest: string }[] };
    expect(index.manifests[0]?.digest).toBe(img.manifest.digest);
    const rootfs = path.join(tmp, 'rootfs');
    mkdirSync(rootfs);
    for (const l of img.layers) {
      const tarFile = path.join(tmp, `${l.name}.tar.gz`);
      writeFileSync(tarFile, l.data);
      execFileSync('tar', ['-xzf', tarFile, '-C', rootfs, '--same-permissions']);
    }
    // As a runtime starts it: chroot to the image, uid/gid 65532, the config's environment, the entrypoint (node; the
    // image has no shell).
    const { config } = JSON.parse(img.config.data.toString('utf8')) as { config: { Env: string[] } };
    const env = Object.fromEntries(config.Env.map((e) => [e.slice(0, e.indexOf('=')), e.slice(e.indexOf('=') + 1)]));
    const inImage = (args: string[]) =>
      new Promise<{ code: number | null; out: string }>((resolve) => {
        execFile(
          '/usr/sbin/chroot',
          [`--userspec=${IMAGE_UID}:${IMAGE_UID}`, rootfs, '/usr/local/bin/node', ...args],
          { env, timeout: 60_000 },
          (err, stdout, stderr) => resolve({ code: err ? ((err as { code?: number }).code ?? null) : 0, out: `${stdout}${stderr}` }),
        );
      });
    const result = await inImage(['/app/dist/controller.js']);
    expect(result.code).toBe(1);
    expect(result.out).toContain('tidal controller failed');
    expect(result.out).toContain('no kubeconfig: set KUBECONFIG');
    expect(result.out).not.toMatch(/ERR_MODULE_NOT_FOUND|Cannot find module|cannot open shared object|cannot be preloaded/);
    // The allocator the image's environment preloads, from the image's own copy (dev/allocator.ts).
    const jemalloc = findJemalloc();
    if (jemalloc) {
      expect(env.LD_PRELOAD).toBe(jemalloc);
      expect(env.MALLOC_CONF).toBe(JEMALLOC_CONF);
      const loaded = await inImage(['-e', 'console.log(process.report.getReport().sharedObjects.join("\\n"))']);
      expect(loaded.code).toBe(0);
      expect(loaded.out).toContain(jemalloc);
    } else {
      expect(env.LD_PRELOAD).toBeUndefined();
    }
  }, 120_000);
});
