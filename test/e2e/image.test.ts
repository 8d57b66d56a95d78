// The controller image (`npm run image`) running Tidal on the test stack: its root filesystem, unpacked, runs as the
// image says (uid/gid 65532, `node /app/dist/controller.js`, nothing from this checkout) the in-cluster way under
// deploy/'s RBAC, takes a Service to Ready with its digest pinned, and stops cleanly on SIGTERM. It replaces the
// stack's controller for this file and puts it back at the end.
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Condition, Revision, Service } from '../../api/serving.js';
import { assembleImage, IMAGE_UID } from '../../dev/image.js';
import { startInClusterController } from '../../dev/incluster.js';
import { CONTROLLER_NODE_FLAGS } from '../../workers/node-flags.js';
import { pushImage } from '../../dev/oci-images.js';
import { isAlive, ProcessTable } from '../../dev/processes.js';
import { startController, testPorts, type StackInfo } from '../../dev/stack.js';
import { apply, getObject, kubectl, stack } from '../harness/cluster.js';
import { eventually } from '../harness/wait.js';

const log = (s: string) => console.error(`[image] ${s}`);
const CONTROLLER = 'tidal-controller';
let procs: ProcessTable;
let info: StackInfo;
let rootfs = '';
let pid = 0;
let logFile = '';

const cond = (o: { status?: { conditions?: Condition[] } } | undefined, type: string) => o?.status?.conditions?.find((c) => c.type === type);

beforeAll(async () => {
  const s = stack();
  procs = new ProcessTable(s.dir);
  info = { dir: s.dir, kubeconfig: s.kubeconfig, temporalAddress: s.temporalAddress, temporalUi: undefined, bins: s.bins, ports: testPorts };
  // dist/ is fresh: the stack's controller was started from it.
  const img = assembleImage('e2e');
  log(`image ${img.manifest.digest}: ${(img.layers.reduce((n, l) => n + l.size, 0) / 1048576).toFixed(1)} MiB compressed`);
  rootfs = path.join(s.dir, 'image-rootfs');
  rmSync(rootfs, { recursive: true, force: true });
  mkdirSync(rootfs, { recursive: true });
  for (const l of img.layers) {
    const file = path.join(s.dir, `layer-${l.name}.tar.gz`);
    writeFileSync(file, l.data);
    execFileSync('tar', ['-xzf', file, '-C', rootfs, '--same-permissions']);
    rmSync(file);
  }
  await procs.stop(CONTROLLER, 30_000);
  const rec = await startInClusterController(info, procs, { ports: testPorts, controllerEnv: s.controllerEnv, imageRootfs: rootfs }, CONTROLLER);
  pid = rec.pid;
  logFile = rec.log;
  await eventually(
    'the image controller ready',
    async () => {
      if (!isAlive(pid)) throw new Error(`exited: ${readFileSync(rec.log, 'utf8').split('\n').slice(-15).join('\n')}`);
      return (await fetch(`http://127.0.0.1:${testPorts.controllerMetrics}/readyz`).catch(() => undefined))?.ok;
    },
    120_000,
    100,
  );
});

afterAll(async () => {
  if (isAlive(pid)) await procs.stop(CONTROLLER, 30_000);
  await startController(info, procs, { ports: testPorts, controllerEnv: stack().controllerEnv }, log);
  await kubectl(['delete', 'ksvc', '-l', 'tidal.dev/suite=image', '--ignore-not-found', '--wait=false']).catch(() => '');
});

describe('the controller image', () => {
  it('runs as uid/gid 65532 from the image root, node with its flags /app/dist/controller.js', () => {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    expect(/^Uid:\s+(\d+)\s+(\d+)/m.exec(status)?.slice(1)).toEqual([String(IMAGE_UID), String(IMAGE_UID)]);
    expect(/^Gid:\s+(\d+)/m.exec(status)?.[1]).toBe(String(IMAGE_UID));
    expect(readlinkSync(`/proc/${pid}/root`)).toBe(rootfs);
    expect(
      readFileSync(`/proc/${pid}/cmdline`, 'utf8')
        .split('\0')
        .slice(0, 2 + CONTROLLER_NODE_FLAGS.length),
    ).toEqual(['/usr/local/bin/node', ...CONTROLLER_NODE_FLAGS, '/app/dist/controller.js']);
    expect(/^CapEff:\s+0+$/m.test(status)).toBe(true); // no capabilities left
    // The prebuilt workflow bundle next to the controller, not bundling at start.
    const own = readFileSync(logFile, 'utf8')
      .split('\n')
      .filter((l) => l.includes(`"pid":${pid},`));
    expect(own.some((l) => l.includes('"workflowBundle":"/app/dist/workflow-bundle.js"'))).toBe(true);
  });

  it('takes a Service to Ready with its image pinned to a digest', async () => {
    const pub = stack().registries.public;
    const { digest } = await pushImage(pub, { repository: 'tidal/image-e2e', tag: 'v1' });
    await apply({
      apiVersion: 'serving.knative.dev/v1',
      kind: 'Service',
      metadata: { name: 'img-hello', namespace: 'default', labels: { 'tidal.dev/suite': 'image' } },
      spec: { template: { spec: { containers: [{ image: `${pub.host}/tidal/image-e2e:v1`, ports: [{ containerPort: 8080 }] }] } } },
    });
    await eventually('ksvc img-hello Ready', async () => cond(await getObject<Service>('ksvc', 'img-hello'), 'Ready')?.status === 'True', 180_000);
    const rev = await getObject<Revision>('revision', 'img-hello-00001');
    expect(rev?.status?.containerStatuses?.[0]?.imageDigest).toBe(`${pub.host}/tidal/image-e2e@${digest}`);
  });

  it('stops cleanly on SIGTERM', async () => {
    process.kill(pid, 'SIGTERM');
    await eventually('the image controller gone', async () => !isAlive(pid), 60_000);
    const lines = readFileSync(logFile, 'utf8')
      .split('\n')
      .filter((l) => l.includes(`"pid":${pid},`));
    expect(lines.some((l) => l.includes('"msg":"shutting down"'))).toBe(true);
    expect(lines.some((l) => l.includes('"msg":"stopped"'))).toBe(true);
  });
});
