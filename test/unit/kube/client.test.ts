// KubeClient against an in-process HTTPS server with the local stack's PKI: a client certificate from a kubeconfig,
// the server checked against the kubeconfig's CA (and tls-server-name), a rotating token file, and one pooled
// connection for many requests (the TLS material lives in one agent, not in each request).
import { mkdtempSync, renameSync, rmSync, writeFileSync, readFileSync } from 'node:fs';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { TLSSocket } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Resources } from '../../../api/kinds.js';
import { KubeClient } from '../../../kube/client.js';
import { KubeApiError } from '../../../kube/errors.js';
import { ensurePki, writeKubeconfig, type Pki } from '../../../dev/pki.js';

interface Seen {
  cn: string | undefined;
  authorization: string | undefined;
  url: string;
}

let dir: string;
let pki: Pki;
let server: https.Server;
let port: number;
let connections = 0;
const seen: Seen[] = [];

beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'tidal-kube-client-'));
  pki = ensurePki(path.join(dir, 'pki'));
  server = https.createServer(
    {
      key: readFileSync(pki.apiserverKey),
      cert: readFileSync(pki.apiserverCert),
      ca: readFileSync(pki.caCert),
      requestCert: true,
      rejectUnauthorized: false,
    },
    (req, res) => {
      const peer = (req.socket as TLSSocket).getPeerCertificate();
      const cn = peer.subject?.CN;
      seen.push({ cn: typeof cn === 'string' ? cn : undefined, authorization: req.headers.authorization, url: req.url ?? '' });
      const authed = cn === 'tidal-admin' || req.headers.authorization?.startsWith('Bearer ');
      res.writeHead(authed ? 200 : 401, { 'Content-Type': 'application/json' });
      const url = new URL(req.url ?? '', 'https://x');
      if (authed && url.pathname.endsWith('/configmaps')) {
        // Two pages: the first ends with a continue token.
        const first = !url.searchParams.has('continue');
        const item = { metadata: { namespace: 'default', name: first ? 'a' : 'b' } };
        res.end(
          JSON.stringify({ kind: 'ConfigMapList', metadata: { resourceVersion: '42', ...(first ? { continue: 'page-2' } : {}) }, items: [item] }),
        );
        return;
      }
      res.end(
        JSON.stringify(
          authed
            ? { apiVersion: 'v1', kind: 'ConfigMap', metadata: { namespace: 'default', name: 'x' } }
            : { kind: 'Status', reason: 'Unauthorized', message: 'Unauthorized' },
        ),
      );
    },
  );
  server.on('secureConnection', () => connections++);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
  rmSync(dir, { recursive: true, force: true });
});

const get = (kube: KubeClient) => kube.get(Resources.ConfigMap, 'default', 'x');

describe('KubeClient over TLS', () => {
  it('authenticates with the kubeconfig client certificate and reuses one connection', async () => {
    const kubeconfig = path.join(dir, 'admin.kubeconfig');
    writeKubeconfig(kubeconfig, pki, `https://127.0.0.1:${port}`);
    const kube = new KubeClient({ kubeconfig, fieldManager: 'test' });
    const before = { connections, seen: seen.length };
    try {
      for (let i = 0; i < 5; i++) expect((await get(kube))?.metadata.name).toBe('x');
    } finally {
      kube.close();
    }
    const mine = seen.slice(before.seen);
    expect(mine).toHaveLength(5);
    expect(mine.every((s) => s.cn === 'tidal-admin' && s.authorization === undefined)).toBe(true);
    expect(mine[0]!.url).toBe('/api/v1/namespaces/default/configmaps/x');
    expect(connections - before.connections).toBe(1);
  });

  it('sends the token file, read again when it rotates, and checks the server against tls-server-name', async () => {
    const tokenFile = path.join(dir, 'token');
    writeFileSync(tokenFile, 'one');
    const kubeconfig = path.join(dir, 'token.kubeconfig');
    const caData = readFileSync(pki.caCert).toString('base64');
    const conf = (serverName: string) =>
      [
        'current-context: t',
        `clusters: [{name: c, cluster: {server: "https://127.0.0.1:${port}", certificate-authority-data: ${caData}, tls-server-name: ${serverName}}}]`,
        `users: [{name: u, user: {tokenFile: token}}]`,
        'contexts: [{name: t, context: {cluster: c, user: u}}]',
      ].join('\n');
    writeFileSync(kubeconfig, conf('kubernetes.default.svc'));
    const kube = new KubeClient({ kubeconfig, fieldManager: 'test' });
    const before = seen.length;
    try {
      await get(kube);
      writeFileSync(`${tokenFile}.new`, 'two');
      renameSync(`${tokenFile}.new`, tokenFile);
      await get(kube);
    } finally {
      kube.close();
    }
    expect(seen.slice(before).map((s) => [s.cn, s.authorization])).toEqual([
      [undefined, 'Bearer one'],
      [undefined, 'Bearer two'],
    ]);

    // The server's certificate does not name this host: the connection is refused before any request is sent.
    writeFileSync(kubeconfig, conf('not-the-apiserver.example'));
    const wrong = new KubeClient({ kubeconfig, fieldManager: 'test' });
    try {
      await expect(get(wrong)).rejects.toThrow(/not-the-apiserver\.example/);
    } finally {
      wrong.close();
    }
  });

  it('reads a list a page at a time: limit and continue go out, the next continue token and the kind come back', async () => {
    const kubeconfig = path.join(dir, 'admin.kubeconfig');
    writeKubeconfig(kubeconfig, pki, `https://127.0.0.1:${port}`);
    const kube = new KubeClient({ kubeconfig, fieldManager: 'test' });
    const before = seen.length;
    try {
      const first = await kube.list(Resources.ConfigMap, 'default', { labelSelector: 'app=x', limit: 1 });
      expect(first).toMatchObject({
        resourceVersion: '42',
        continue: 'page-2',
        items: [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a' } }],
      });
      const second = await kube.list(Resources.ConfigMap, 'default', { limit: 1, continue: first.continue! });
      expect(second.items.map((i) => i.metadata.name)).toEqual(['b']);
      expect(second).not.toHaveProperty('continue');
    } finally {
      kube.close();
    }
    expect(seen.slice(before).map((s) => s.url)).toEqual([
      '/api/v1/namespaces/default/configmaps?labelSelector=app%3Dx&limit=1',
      '/api/v1/namespaces/default/configmaps?limit=1&continue=page-2',
    ]);
  });

  it('refuses a server its CA does not vouch for, and reports a 401 as an API error', async () => {
    const kubeconfig = path.join(dir, 'anon.kubeconfig');
    const conf = (cluster: string) =>
      [
        'current-context: t',
        `clusters: [{name: c, cluster: {server: "https://127.0.0.1:${port}"${cluster}}}]`,
        'contexts: [{name: t, context: {cluster: c}}]',
      ].join('\n');
    writeFileSync(kubeconfig, conf(''));
    const untrusted = new KubeClient({ kubeconfig, fieldManager: 'test' });
    try {
      await expect(get(untrusted)).rejects.toThrow(/certificate/);
    } finally {
      untrusted.close();
    }
    writeFileSync(kubeconfig, conf(', insecure-skip-tls-verify: true'));
    const anonymous = new KubeClient({ kubeconfig, fieldManager: 'test' });
    try {
      const err: unknown = await get(anonymous).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(KubeApiError);
      expect((err as KubeApiError).code).toBe(401);
    } finally {
      anonymous.close();
    }
  });
});
