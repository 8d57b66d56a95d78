// The real node as the host sees it: its pods' network lives only inside the namespace the stack made, and a node
// whose runtime cannot start says why and leaves nothing behind.
import { execFile } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { REAL_NODE_SUBNET, nodeNetns, realNodeLeftovers, startRealNode } from '../../../dev/node.js';
import { kubectlJson, realStack } from '../../harness/real.js';

const run = promisify(execFile);
const subnetPrefix = REAL_NODE_SUBNET.gateway.split('.').slice(0, 3).join('.') + '.';

describe('the real node', () => {
  it('keeps its pod network inside its own namespace: the host has no pod address and no route to one', async () => {
    const s = realStack();
    const netns = nodeNetns(s.ports.apiserver);
    const hostAddrs = (await run('ip', ['-o', 'addr', 'show'])).stdout;
    const hostRoutes = (await run('ip', ['route', 'show', 'table', 'all'])).stdout;
    expect(hostAddrs).not.toContain(subnetPrefix);
    expect(hostRoutes).not.toContain(subnetPrefix);
    // The bridge and the pods' veths are in the node's namespace, with the node's address.
    const inNode = (await run('ip', ['-n', netns, '-o', 'addr', 'show'])).stdout;
    expect(inNode).toContain(`${REAL_NODE_SUBNET.gateway}/${REAL_NODE_SUBNET.prefix}`);
    const node = await kubectlJson<{ status: { addresses: { type: string; address: string }[]; nodeInfo: { containerRuntimeVersion: string } } }>([
      'get',
      'node',
      'tidal-node',
    ]);
    expect(node.status.addresses).toContainEqual({ type: 'InternalIP', address: REAL_NODE_SUBNET.gateway });
    expect(node.status.nodeInfo.containerRuntimeVersion).toMatch(/^containerd:\/\//);
  });

  it('refuses to start when its runtime cannot, says why, and leaves nothing behind', async () => {
    const s = realStack();
    const dir = mkdtempSync(path.join(os.tmpdir(), 'tidal-node-'));
    const fakeBin = path.join(dir, 'bin');
    await run('mkdir', ['-p', fakeBin]);
    // A containerd that cannot start, first on PATH for the node's processes.
    writeFileSync(path.join(fakeBin, 'containerd'), '#!/bin/sh\necho "containerd: failed to load the CRI plugin (a broken runtime)" >&2\nexit 1\n');
    chmodSync(path.join(fakeBin, 'containerd'), 0o755);
    const savedPath = process.env.PATH;
    process.env.PATH = `${fakeBin}:${savedPath ?? ''}`;
    // A port of its own names its namespace; no API server answers there, and none is reached before containerd.
    const port = 1;
    try {
      const err = await startRealNode(
        {
          dir,
          apiserverPort: port,
          kubeconfig: s.kubeconfig,
          registry: { port: Number(s.registryHost.split(':')[1]), caFile: path.join(s.dir, 'registry-cas.pem') },
        },
        s.bins.KUBECTL,
      ).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(Error);
      expect((err as Error).message).toContain('containerd did not open its socket');
      expect((err as Error).message).toContain('failed to load the CRI plugin');
      expect(realNodeLeftovers(dir, port)).toEqual([]);
      const namespaces = (await run('ip', ['netns', 'list'])).stdout.split('\n').map((l) => l.split(' ')[0]);
      expect(namespaces).not.toContain(nodeNetns(port));
    } finally {
      process.env.PATH = savedPath;
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
