// Tidal's production Temporal connection (workers/temporal.ts) over real TLS: the files of a mounted Secret
// (`ca.crt`, `tls.crt`, `tls.key`, `server-name` in TEMPORAL_TLS_DIR) are turned into the options both of Tidal's
// connections use — the client's (pokes, the namespace check) and the worker's native one. The Temporal dev server
// speaks plain gRPC, so a TLS terminator on loopback stands in front of it, as a TLS-enabled frontend or Temporal
// Cloud's endpoint would: it presents a certificate of its own CA for a host name that is not the address dialled,
// and with `requireClientCert` it refuses any client without a certificate of that CA (mTLS).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import tls from 'node:tls';
import forge from 'node-forge';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { Connection } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import { keyPair, makeCert } from '../../dev/pki.js';
import { ensureTemporalNamespace, loadTemporalSettings, temporalConnectOptions, TlsFiles } from '../../workers/temporal.js';

const SERVER_NAME = 'temporal.tidal.test';

interface Authority {
  caPem: string;
  issue(cn: string, usage: 'server' | 'client'): { certPem: string; keyPem: string };
}

function authority(name: string): Authority {
  const ca = keyPair();
  const caCert = makeCert(ca.publicPem, ca.privatePem, {
    subject: [{ name: 'commonName', value: name }],
    extensions: [
      { name: 'basicConstraints', cA: true, critical: true },
      { name: 'keyUsage', keyCertSign: true, cRLSign: true, digitalSignature: true, critical: true },
    ],
    days: 1,
  });
  const issuer = { cert: caCert, key: forge.pki.privateKeyFromPem(ca.privatePem) };
  return {
    caPem: forge.pki.certificateToPem(caCert),
    issue(cn, usage) {
      const k = keyPair();
      const cert = makeCert(k.publicPem, '', {
        subject: [{ name: 'commonName', value: cn }],
        issuer,
        extensions: [
          { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, critical: true },
          { name: 'extKeyUsage', serverAuth: usage === 'server', clientAuth: usage === 'client' },
          ...(usage === 'server' ? [{ name: 'subjectAltName', altNames: [{ type: 2, value: SERVER_NAME }] }] : []),
        ],
        days: 1,
      });
      return { certPem: forge.pki.certificateToPem(cert), keyPem: k.privatePem };
    },
  };
}

/** A TLS terminator on loopback forwarding to the dev server; records the client certificates it accepted. */
async function tlsFront(ca: Authority, requireClientCert: boolean): Promise<{ port: number; clients: string[]; close: () => Promise<void> }> {
  const [host, port] = inject('temporalAddress').split(':') as [string, string];
  const serving = ca.issue(SERVER_NAME, 'server');
  const clients: string[] = [];
  const server = tls.createServer(
    {
      key: serving.keyPem,
      cert: serving.certPem,
      ca: [ca.caPem],
      requestCert: requireClientCert,
      rejectUnauthorized: requireClientCert,
      ALPNProtocols: ['h2'],
    },
    (socket) => {
      const cn = socket.getPeerCertificate()?.subject?.CN;
      if (cn) clients.push(String(cn));
      const upstream = net.connect(Number(port), host);
      socket.pipe(upstream).pipe(socket);
      const end = () => {
        socket.destroy();
        upstream.destroy();
      };
      socket.on('error', end);
      upstream.on('error', end);
    },
  );
  server.on('tlsClientError', () => undefined); // a refused handshake is the point of some tests
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    clients,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** A TEMPORAL_TLS_DIR as the Secret `temporal-connection` mounts it. */
function secretDir(files: Partial<Record<keyof typeof TlsFiles, string>>): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'temporal-tls-'));
  for (const [k, v] of Object.entries(files)) writeFileSync(path.join(dir, TlsFiles[k as keyof typeof TlsFiles]), v);
  dirs.push(dir);
  return dir;
}

const dirs: string[] = [];
let ca: Authority;
let front: Awaited<ReturnType<typeof tlsFront>>;

beforeAll(async () => {
  ca = authority('temporal-test-ca');
  front = await tlsFront(ca, true);
});

afterAll(async () => {
  await front?.close();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe('the Temporal connection over TLS, from a mounted Secret', () => {
  it('server CA + mTLS client certificate + server name: the client passes the namespace check, the worker connection calls the server', async () => {
    const client = ca.issue('tidal-controller', 'client');
    const settings = loadTemporalSettings({
      TEMPORAL_ADDRESS: `127.0.0.1:${front.port}`,
      TEMPORAL_TLS_DIR: secretDir({ ca: ca.caPem, cert: client.certPem, key: client.keyPem, serverName: SERVER_NAME }),
    });
    expect(settings.tls?.serverNameOverride).toBe(SERVER_NAME);

    const connection = await Connection.connect(temporalConnectOptions(settings));
    try {
      expect(await ensureTemporalNamespace(connection, { ...settings, namespace: 'default' })).toEqual({
        createdNamespace: false,
        createdAttributes: [],
      });
    } finally {
      await connection.close();
    }
    const native = await NativeConnection.connect(temporalConnectOptions(settings));
    try {
      const info = await native.workflowService.getSystemInfo({});
      expect(info.serverVersion).toBeTruthy();
    } finally {
      await native.close();
    }
    // Both came through the terminator with the client certificate.
    expect(front.clients.filter((cn) => cn === 'tidal-controller').length).toBeGreaterThanOrEqual(2);
  });

  it('without the client certificate the server refuses the connection, and Tidal says it cannot connect', async () => {
    const settings = loadTemporalSettings({
      TEMPORAL_ADDRESS: `127.0.0.1:${front.port}`,
      TEMPORAL_TLS_DIR: secretDir({ ca: ca.caPem, serverName: SERVER_NAME }),
    });
    await expect(Connection.connect({ ...temporalConnectOptions(settings), connectTimeout: 3000 })).rejects.toThrow();
  });

  it('a server certificate of another CA is not trusted', async () => {
    const other = authority('someone-else');
    const client = ca.issue('tidal-controller', 'client');
    const settings = loadTemporalSettings({
      TEMPORAL_ADDRESS: `127.0.0.1:${front.port}`,
      TEMPORAL_TLS_DIR: secretDir({ ca: other.caPem, cert: client.certPem, key: client.keyPem, serverName: SERVER_NAME }),
    });
    await expect(Connection.connect({ ...temporalConnectOptions(settings), connectTimeout: 3000 })).rejects.toThrow();
  });

  it('a client certificate without its key is a clear start-up error', () => {
    const client = ca.issue('tidal-controller', 'client');
    expect(() => loadTemporalSettings({ TEMPORAL_TLS_DIR: secretDir({ ca: ca.caPem, cert: client.certPem }) })).toThrow(/tls\.key is missing/);
  });
});
