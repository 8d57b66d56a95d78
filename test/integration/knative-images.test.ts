// Knative's own queue-proxy and test images (dev/build-knative.sh, dev/knative-images.ts) for real: built from the Go
// module proxy, packaged as OCI images, pushed to a registry started for the test (Debian's docker-registry, TLS,
// htpasswd), pulled back through the registry API, unpacked and run as a pod would run them: helloworld and
// queue-proxy, chrooted into their own root filesystems as uid/gid 65532, sharing one network namespace, queue-proxy
// with the environment Tidal's makeQueueContainer gives it. A request to queue-proxy's serving port reaches
// helloworld. A cold Go build takes minutes; with ~/.cache/tidal warm the test takes seconds.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseRevisionConfig } from '../../api/config/index.js';
import type { Revision } from '../../api/serving.js';
import {
  assembleKnativeImage,
  baseEntries,
  buildKnativeBinaries,
  buildKnativeImages,
  pushKnativeImages,
  QUEUE_IMAGE,
  type KnativeBinaries,
  type KnativeImage,
  type PushedImage,
} from '../../dev/knative-images.js';
import { MediaTypes, registryRequest } from '../../dev/oci-images.js';
import { IMAGE_UID, makeLayer } from '../../dev/oci-layout.js';
import { findBinary, startRegistry, stopRegistry, type RegistryInfo } from '../../dev/registry.js';
import { makeQueueContainer } from '../../resources/queue.js';
import { freePort } from '../harness/free-port.js';

const hasGo = findBinary('go') !== undefined || existsSync('/usr/local/go/bin/go');
const canRun = existsSync('/usr/bin/docker-registry') && existsSync('/usr/sbin/chroot') && process.getuid?.() === 0 && process.platform === 'linux';
if (canRun && !hasGo) console.warn('knative-images.test.ts skipped: `go` is not installed (needed to build knative.dev/serving from source)');

/** The image names Knative's conformance and e2e tests use (knative.dev/serving test/conformance.go), and the others. */
const UPSTREAM_NAMES = [
  'autoscale',
  'failing',
  'grpc-ping',
  'hellohttp2',
  'hellovolume',
  'helloworld',
  'httpproxy',
  'pizzaplanetv1',
  'pizzaplanetv2',
  'readiness',
  'runtime',
  'servingcontainer',
  'sidecarcontainer',
  'singlethreaded',
  'timeout',
  'volumes',
  'slowstart',
  'wsserver',
  'configmimic',
];
const HELLO_TEXT = 'Hello World! How about some tasty noodles?';

const tmp = mkdtempSync(path.join(os.tmpdir(), 'tidal-knative-images-'));
let reg: RegistryInfo;
let images: Record<string, KnativeImage>;
let bins: KnativeBinaries;
let pushed: Record<string, PushedImage>;
const children: ChildProcess[] = [];

const sha256 = (b: Buffer) => `sha256:${createHash('sha256').update(b).digest('hex')}`;

/** Pulls `<repository>:<tag>` through the registry API and unpacks its layers into a new folder; returns it and the config. */
async function pullAndUnpack(
  repository: string,
  tag: string,
  wantDigest: string,
): Promise<{ rootfs: string; env: string[]; entrypoint: string[]; user: string }> {
  const auth = Object.entries(reg.users).map(([user, password]) => ({ user, password }))[0] ?? {};
  const res = await registryRequest(reg, 'GET', `/v2/${repository}/manifests/${tag}`, { ...auth, headers: { Accept: MediaTypes.ociManifest } });
  expect(res.status).toBe(200);
  expect(res.headers['docker-content-digest']).toBe(wantDigest);
  expect(sha256(res.body)).toBe(wantDigest);
  const manifest = JSON.parse(res.body.toString('utf8')) as { config: { digest: string }; layers: { digest: string; mediaType: string }[] };
  const blob = async (digest: string) => {
    const b = await registryRequest(reg, 'GET', `/v2/${repository}/blobs/${digest}`, auth);
    expect(b.status).toBe(200);
    expect(sha256(b.body)).toBe(digest);
    return b.body;
  };
  const config = JSON.parse((await blob(manifest.config.digest)).toString('utf8')) as {
    config: { Env: string[]; Entrypoint: string[]; User: string };
  };
  const rootfs = path.join(tmp, `rootfs-${repository.replaceAll('/', '-')}`);
  mkdirSync(rootfs);
  for (const l of manifest.layers) {
    expect(l.mediaType).toBe(MediaTypes.ociLayer);
    const file = path.join(tmp, `${l.digest.slice(7)}.tar.gz`);
    writeFileSync(file, await blob(l.digest));
    execFileSync('tar', ['-xzf', file, '-C', rootfs, '--same-permissions', '--numeric-owner']);
  }
  return { rootfs, env: config.config.Env, entrypoint: config.config.Entrypoint, user: config.config.User };
}

/**
 * The pod's network: a network namespace of its own (held by a `sleep`, as the pause container holds a pod's), so
 * queue-proxy's fixed admin and metrics ports (8022, 9090) and Knative's usual ports collide with nothing on this
 * machine. Without `unshare`/`ip`, the host's network with ports chosen here.
 */
async function startPod(): Promise<{ prefix: string[]; isolated: boolean }> {
  const unshare = findBinary('unshare');
  const nsenter = findBinary('nsenter');
  const ip = findBinary('ip');
  if (unshare && nsenter && ip) {
    const pause = spawn(unshare, ['--net', '--', 'sleep', '3600'], { stdio: 'ignore' });
    children.push(pause);
    const ns = `/proc/${pause.pid}/ns/net`;
    const self = `/proc/self/ns/net`;
    const deadline = Date.now() + 5000;
    // unshare execs sleep once the namespace exists: wait until the process's namespace differs from ours.
    while (Date.now() < deadline && (!existsSync(ns) || statSync(ns).ino === statSync(self).ino)) await new Promise((r) => setTimeout(r, 20));
    try {
      execFileSync(nsenter, [`--net=${ns}`, ip, 'link', 'set', 'lo', 'up']);
      return { prefix: [nsenter, `--net=${ns}`], isolated: true };
    } catch {
      pause.kill('SIGKILL');
    }
  }
  return { prefix: [], isolated: false };
}

/** A process in the pod's network, its output kept for the failure message. */
function run(prefix: string[], argv: string[], env: Record<string, string>): { child: ChildProcess; output: () => string } {
  const [cmd, ...args] = [...prefix, ...argv];
  const child = spawn(cmd!, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  let out = '';
  child.stdout?.on('data', (c: Buffer) => (out += c.toString('utf8')));
  child.stderr?.on('data', (c: Buffer) => (out += c.toString('utf8')));
  return { child, output: () => out };
}

/** GET `url` from inside the pod's network (this machine's node as the client). */
function get(prefix: string[], url: string, headers: Record<string, string> = {}): Promise<{ status?: number; body?: string; error?: string }> {
  const script = `fetch(process.argv[1], { headers: JSON.parse(process.argv[2]) })
    .then(async (r) => process.stdout.write(JSON.stringify({ status: r.status, body: await r.text() })))
    .catch((e) => process.stdout.write(JSON.stringify({ error: String(e.cause ?? e) })));`;
  const { child, output } = run(prefix, [process.execPath, '-e', script, url, JSON.stringify(headers)], { PATH: process.env.PATH ?? '' });
  return new Promise((resolve) =>
    child.on('exit', () => resolve(JSON.parse(output() || '{"error":"no output"}') as { status?: number; body?: string; error?: string })),
  );
}

async function until<T>(what: string, fn: () => Promise<T | undefined>, logs: () => string, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs / 1000} s; output:\n${logs()}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** KEY=value list → object. */
const envObject = (env: string[]) => Object.fromEntries(env.map((e) => [e.slice(0, e.indexOf('=')), e.slice(e.indexOf('=') + 1)]));

describe.skipIf(!canRun || !hasGo)('Knative queue-proxy and test images (dev/knative-images.ts)', () => {
  beforeAll(async () => {
    images = await buildKnativeImages({ onProgress: (l) => console.error(l) });
    bins = await buildKnativeBinaries(() => {}); // built above: this only reads where they are
    reg = await startRegistry({ dir: path.join(tmp, 'registry'), port: await freePort(), auth: true, tls: true });
  }, 1_200_000);

  afterAll(async () => {
    for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
    if (reg) await stopRegistry(reg.dir);
    rmSync(tmp, { recursive: true, force: true });
  }, 60_000);

  it('builds queue-proxy and every test image, named as upstream names them, ko-style on one shared base', () => {
    expect(Object.keys(images)).toEqual(expect.arrayContaining([QUEUE_IMAGE, ...UPSTREAM_NAMES]));
    const bases = new Set(Object.values(images).map((i) => i.image.layers[0]?.digest));
    expect(bases.size).toBe(1);
    for (const { name, image } of Object.values(images)) {
      const { config } = JSON.parse(image.config.data.toString('utf8')) as {
        config: { Entrypoint: string[]; User: string; WorkingDir: string; Env: string[] };
      };
      expect(config.Entrypoint).toEqual([`/ko-app/${name}`]);
      expect(config.User).toBe(String(IMAGE_UID));
      expect(config.WorkingDir).toBe('/');
      expect(envObject(config.Env).KO_DATA_PATH).toBe('/var/run/ko');
    }
    // Assembling again from the same binary gives the same digest (reproducible layers and config).
    const again = assembleKnativeImage(
      'helloworld',
      makeLayer('base', baseEntries()),
      path.join(bins.binDir, 'helloworld'),
      undefined,
      bins.version,
      bins.packages.helloworld,
    );
    expect(again.manifest.digest).toBe(images.helloworld!.image.manifest.digest);
  });

  it('pushes every image, and a second push lands on the same digests', async () => {
    pushed = await pushKnativeImages(reg, { prefix: 'knative', tag: 'test', images });
    expect(Object.keys(pushed).sort()).toEqual(Object.keys(images).sort());
    for (const [name, p] of Object.entries(pushed)) {
      expect(p.ref).toBe(`${reg.host}/knative/${name}:test`);
      expect(p.digest).toBe(images[name]!.image.manifest.digest);
    }
    const again = await pushKnativeImages(reg, { prefix: 'knative', tag: 'test', images });
    expect(Object.fromEntries(Object.entries(again).map(([n, p]) => [n, p.digest]))).toEqual(
      Object.fromEntries(Object.entries(pushed).map(([n, p]) => [n, p.digest])),
    );
  }, 600_000);

  it('pulled back, helloworld answers through queue-proxy run with the environment Tidal gives it', async () => {
    const hello = await pullAndUnpack('knative/helloworld', 'test', pushed.helloworld!.digest);
    const queue = await pullAndUnpack('knative/queue', 'test', pushed.queue!.digest);
    expect(statSync(path.join(hello.rootfs, 'tmp')).mode & 0o7777).toBe(0o1777);
    expect(existsSync(path.join(hello.rootfs, 'etc/ssl/certs/ca-certificates.crt'))).toBe(true);

    const pod = await startPod();
    // helloworld (like most test images) ignores PORT and listens on 8080, the user port Knative defaults to.
    const userPort = 8080;
    const rev: Revision = {
      apiVersion: 'serving.knative.dev/v1',
      kind: 'Revision',
      metadata: {
        name: 'helloworld-00001',
        namespace: 'default',
        labels: { 'serving.knative.dev/service': 'helloworld', 'serving.knative.dev/configuration': 'helloworld' },
        ownerReferences: [
          { apiVersion: 'serving.knative.dev/v1', kind: 'Configuration', name: 'helloworld', uid: 'uid-helloworld', controller: true },
        ],
      },
      spec: {
        containers: [
          { image: pushed.helloworld!.ref, ports: [{ containerPort: userPort }], readinessProbe: { tcpSocket: { port: 0 }, successThreshold: 1 } },
        ],
        containerConcurrency: 0,
        timeoutSeconds: 300,
      },
    };
    const cfg = parseRevisionConfig({ deployment: { 'queue-sidecar-image': pushed.queue!.ref } });
    if (!cfg.ok) throw new Error('config-deployment did not parse');
    const container = makeQueueContainer(rev, cfg.value, { systemNamespace: 'knative-serving' });
    // The downward API's values, as the kubelet fills them in.
    const fieldValues: Record<string, string> = {
      'metadata.name': 'helloworld-00001-deployment-5d8f7c9b6-x2x7q',
      'status.podIP': '127.0.0.1',
      'status.hostIP': '127.0.0.1',
    };
    const queueEnv: Record<string, string> = envObject(queue.env);
    for (const e of container.env ?? []) {
      const fieldPath = (e.valueFrom as { fieldRef?: { fieldPath?: string } } | undefined)?.fieldRef?.fieldPath;
      const value = e.value ?? (fieldPath ? fieldValues[fieldPath] : undefined);
      if (value === undefined) throw new Error(`queue-proxy env ${e.name}: no value`);
      queueEnv[e.name] = value;
    }
    expect(queueEnv.SERVING_LOGGING_CONFIG).toBe('');
    // On the host's network, queue-proxy's serving ports move out of the way (its admin and metrics ports cannot).
    if (!pod.isolated) {
      queueEnv.QUEUE_SERVING_PORT = String(await freePort());
      queueEnv.QUEUE_SERVING_TLS_PORT = String(await freePort());
    }
    const queuePort = queueEnv.QUEUE_SERVING_PORT!;

    const userspec = `--userspec=${IMAGE_UID}:${IMAGE_UID}`;
    const helloProc = run(pod.prefix, ['/usr/sbin/chroot', userspec, hello.rootfs, ...hello.entrypoint], {
      ...envObject(hello.env),
      PORT: String(userPort),
    });
    const queueProc = run(pod.prefix, ['/usr/sbin/chroot', userspec, queue.rootfs, ...queue.entrypoint], queueEnv);
    const logs = () => `--- helloworld\n${helloProc.output()}\n--- queue-proxy\n${queueProc.output()}`;

    // The kubelet's readiness probe of queue-proxy (its User-Agent and the header Tidal's probe sets): answered by
    // queue-proxy itself once its own probe of helloworld passes.
    const probe = await until(
      'queue-proxy readiness',
      async () => {
        const r = await get(pod.prefix, `http://127.0.0.1:${queuePort}/`, { 'User-Agent': 'kube-probe/1.35', 'K-Network-Probe': 'queue' });
        return r.status === 200 ? r : undefined;
      },
      logs,
    );
    expect(probe.body).toBe('queue');
    const res = await get(pod.prefix, `http://127.0.0.1:${queuePort}/`);
    expect(res.status, logs()).toBe(200);
    expect(res.body?.trim()).toBe(HELLO_TEXT);
    // Its autoscaling metrics on the fixed port 9090 (only reachable without collisions in the pod's namespace).
    if (pod.isolated) expect((await get(pod.prefix, 'http://127.0.0.1:9090/metrics')).status).toBe(200);
    expect(helloProc.child.exitCode, logs()).toBeNull();
    expect(queueProc.child.exitCode, logs()).toBeNull();
    // Both run as the image's user, not root.
    for (const p of [helloProc.child, queueProc.child]) {
      const status = execFileSync('cat', [`/proc/${p.pid}/status`], { encoding: 'utf8' });
      expect(/^Uid:\s+(\d+)/m.exec(status)?.[1]).toBe(String(IMAGE_UID));
    }
  }, 120_000);
});
