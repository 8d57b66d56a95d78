// The test registry harness against the real thing: Debian's docker-registry (distribution 2.8) with TLS and
// htpasswd auth, images pushed through the HTTP API by dev/oci-images.ts, and checked here with plain HTTPS requests.
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import https from 'node:https';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { startRegistry, stopRegistry, type RegistryInfo } from '../../dev/registry.js';
import { MANIFEST_ACCEPT, MediaTypes, pushImage } from '../../dev/oci-images.js';
import { freePort } from '../harness/free-port.js';

const hasRegistryBinary = existsSync('/usr/bin/docker-registry');
const USER = 'alice';
const PASSWORD = 'correct horse battery staple';

interface Res {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

/** A plain HTTPS request, independent of dev/oci-images.ts. `ca: null` trusts only the system roots. */
function request(
  reg: RegistryInfo,
  method: string,
  urlPath: string,
  o: { accept?: string; auth?: [string, string]; ca?: string | null } = {},
): Promise<Res> {
  const headers: Record<string, string> = {};
  if (o.accept) headers.Accept = o.accept;
  if (o.auth) headers.Authorization = `Basic ${Buffer.from(o.auth.join(':')).toString('base64')}`;
  const ca = o.ca === null ? undefined : (o.ca ?? reg.caPem);
  return new Promise((resolve, reject) => {
    const req = https.request(`${reg.url}${urlPath}`, { method, headers, agent: false, ...(ca ? { ca } : {}) }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
    });
    req.on('error', reject);
    req.end();
  });
}

const authed = { accept: MANIFEST_ACCEPT, auth: [USER, PASSWORD] as [string, string] };
const sha256 = (b: Buffer) => `sha256:${createHash('sha256').update(b).digest('hex')}`;

describe.skipIf(!hasRegistryBinary)(
  'registry harness (docker-registry with TLS + htpasswd)' +
    (hasRegistryBinary ? '' : ' — SKIPPED: /usr/bin/docker-registry missing; apt-get install docker-registry apache2-utils'),
  () => {
    let dir: string;
    let port: number;
    let reg: RegistryInfo;

    beforeAll(async () => {
      dir = mkdtempSync(path.join(os.tmpdir(), 'tidal-registry-'));
      port = await freePort();
      reg = await startRegistry({ dir, port, auth: true, tls: true, users: { [USER]: PASSWORD } });
    }, 60_000);

    afterAll(async () => {
      if (dir) {
        await stopRegistry(dir);
        rmSync(dir, { recursive: true, force: true });
      }
    });

    it('reports where it listens and the CA that signs it', () => {
      expect(reg.url).toBe(`https://127.0.0.1:${port}`);
      expect(reg.host).toBe(`127.0.0.1:${port}`);
      expect(reg.caPem).toMatch(/^-----BEGIN CERTIFICATE-----/);
      expect(reg.caFile && existsSync(reg.caFile)).toBe(true);
      expect(reg.users).toEqual({ [USER]: PASSWORD });
    });

    it('pushes a single-platform image whose tag resolves to the returned digest', async () => {
      const pushed = await pushImage(reg, { repository: 'tidal/hello', tag: 'v1', user: USER, password: PASSWORD });
      expect(pushed.digest).toMatch(/^sha256:[0-9a-f]{64}$/);
      expect(pushed.manifestDigests).toBeUndefined();

      const head = await request(reg, 'HEAD', '/v2/tidal/hello/manifests/v1', authed);
      expect(head.status).toBe(200);
      expect(head.headers['docker-content-digest']).toBe(pushed.digest);

      const get = await request(reg, 'GET', '/v2/tidal/hello/manifests/v1', authed);
      expect(get.headers['content-type']).toBe(MediaTypes.dockerManifest);
      expect(sha256(get.body)).toBe(pushed.digest);

      // The layer is a real gzip'd tar: system tar reads the one file back.
      const manifest = JSON.parse(get.body.toString()) as { layers: { digest: string }[] };
      const blob = await request(reg, 'GET', `/v2/tidal/hello/blobs/${manifest.layers[0]!.digest}`, { auth: [USER, PASSWORD] });
      expect(blob.status).toBe(200);
      expect(execFileSync('tar', ['-tzf', '-'], { input: blob.body }).toString()).toBe('hello.txt\n');
      expect(execFileSync('tar', ['-xzOf', '-'], { input: blob.body }).toString()).toBe('tidal/hello:v1 linux/amd64\n');

      // Pushing the same thing again is reproducible; other content moves the tag.
      expect((await pushImage(reg, { repository: 'tidal/hello', tag: 'v1', user: USER, password: PASSWORD })).digest).toBe(pushed.digest);
      const moved = await pushImage(reg, { repository: 'tidal/hello', tag: 'v2', user: USER, password: PASSWORD, content: 'other' });
      expect(moved.digest).not.toBe(pushed.digest);
    }, 30_000);

    for (const format of ['docker', 'oci'] as const) {
      it(`pushes a 2-platform ${format} index under the tag`, async () => {
        const platforms = [
          { os: 'linux', architecture: 'amd64' },
          { os: 'linux', architecture: 'arm64', variant: 'v8' },
        ];
        const repo = `tidal/multi-${format}`;
        const pushed = await pushImage(reg, { repository: repo, tag: 'latest', user: USER, password: PASSWORD, platforms, format });
        expect(pushed.manifestDigests).toHaveLength(2);

        const head = await request(reg, 'HEAD', `/v2/${repo}/manifests/latest`, authed);
        expect(head.status).toBe(200);
        expect(head.headers['docker-content-digest']).toBe(pushed.digest);

        const get = await request(reg, 'GET', `/v2/${repo}/manifests/latest`, authed);
        expect(get.headers['content-type']).toBe(format === 'oci' ? MediaTypes.ociIndex : MediaTypes.dockerManifestList);
        const index = JSON.parse(get.body.toString()) as { manifests: { digest: string; platform: { os: string; architecture: string } }[] };
        expect(index.manifests.map((m) => m.digest)).toEqual(pushed.manifestDigests);
        expect(index.manifests.map((m) => m.platform.architecture)).toEqual(['amd64', 'arm64']);
        for (const d of pushed.manifestDigests!) {
          const one = await request(reg, 'HEAD', `/v2/${repo}/manifests/${d}`, authed);
          expect(one.status).toBe(200);
          expect(one.headers['docker-content-digest']).toBe(d);
        }
      }, 30_000);
    }

    it('demands credentials', async () => {
      const anon = await request(reg, 'HEAD', '/v2/tidal/hello/manifests/v1', { accept: MANIFEST_ACCEPT });
      expect(anon.status).toBe(401);
      expect(anon.headers['www-authenticate']).toBe('Basic realm="tidal-registry"');
      const wrong = await request(reg, 'HEAD', '/v2/tidal/hello/manifests/v1', { accept: MANIFEST_ACCEPT, auth: [USER, 'nope'] });
      expect(wrong.status).toBe(401);
      await expect(pushImage(reg, { repository: 'tidal/anon', tag: 'v1' })).rejects.toThrow(/HTTP 401/);
    });

    it('serves a certificate only its own CA vouches for', async () => {
      await expect(request(reg, 'GET', '/v2/', { ca: null })).rejects.toThrow(/self.signed|unable to (get|verify)/i);
      expect((await request(reg, 'GET', '/v2/', { auth: [USER, PASSWORD] })).status).toBe(200);
    });

    it('keeps its data across stop and start on the same folder and port', async () => {
      const before = await request(reg, 'HEAD', '/v2/tidal/hello/manifests/v1', authed);
      expect(before.status).toBe(200);

      await stopRegistry(dir);
      // Refused, or reset by a listener that was closing as the connection came in (seen on a loaded machine).
      await expect(request(reg, 'GET', '/v2/')).rejects.toMatchObject({ code: expect.stringMatching(/^ECONN(REFUSED|RESET)$/) as unknown });
      await stopRegistry(dir); // not running: a no-op

      const again = await startRegistry({ dir, port, auth: true, tls: true });
      expect(again.url).toBe(reg.url);
      expect(again.caPem).toBe(reg.caPem); // clients keep trusting it
      expect(again.users).toEqual({ [USER]: PASSWORD }); // remembered from the first start
      reg = again;
      const after = await request(reg, 'HEAD', '/v2/tidal/hello/manifests/v1', authed);
      expect(after.status).toBe(200);
      expect(after.headers['docker-content-digest']).toBe(before.headers['docker-content-digest']);
    }, 60_000);

    it('fails clearly when the port is taken by something else', async () => {
      const other = net.createServer((s) => s.destroy());
      await new Promise<void>((r) => other.listen(0, '127.0.0.1', r));
      const taken = (other.address() as net.AddressInfo).port;
      const otherDir = mkdtempSync(path.join(os.tmpdir(), 'tidal-registry-taken-'));
      try {
        await expect(startRegistry({ dir: otherDir, port: taken, auth: false, tls: true, timeoutMs: 15_000 })).rejects.toThrow(
          /exited while starting[\s\S]*address already in use/,
        );
      } finally {
        await stopRegistry(otherDir);
        await new Promise((r) => other.close(r));
        rmSync(otherDir, { recursive: true, force: true });
      }
    }, 30_000);
  },
);
