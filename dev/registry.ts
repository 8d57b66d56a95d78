// A real OCI registry for the tests: Debian's `docker-registry` (the CNCF distribution registry 2.8) on loopback,
// with TLS from a CA made here and htpasswd (bcrypt) auth. Everything lives under one folder, every name prefixed
// `registry-` so the folder may be a stack folder too: the config, the PKI (made once and reused, so a restarted
// registry keeps the CA its clients trust), the htpasswd file, the blob store, and the process table (`pids.json`,
// `logs/docker-registry.log`). Stopping and starting again on the same folder keeps the data.
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import path from 'node:path';
import { promisify } from 'node:util';
import forge from 'node-forge';
import { stringify } from 'yaml';
import { ProcessTable, tail, type ProcessRecord } from './processes.js';
import { keyPair, makeCert } from './pki.js';

const run = promisify(execFile);

/** The process name in the folder's ProcessTable (log: `<dir>/logs/docker-registry.log`). */
export const REGISTRY_PROCESS = 'docker-registry';

export interface RegistryOptions {
  /** Folder for `registry-config.yml`, `registry-pki/`, `registry-htpasswd`, `registry-data/`, pids and logs. */
  dir: string;
  port: number;
  /** htpasswd (Basic) auth. */
  auth: boolean;
  /** HTTPS with a server certificate for 127.0.0.1/localhost signed by a CA made in `<dir>/pki`. */
  tls: boolean;
  /** user → password. Default with auth: the users of the previous start in this folder, else `{ tidal: <random> }`. */
  users?: Record<string, string>;
  /** How long to wait for `GET /v2/` (default 30 s). */
  timeoutMs?: number;
}

export interface RegistryInfo {
  /** `https://127.0.0.1:<port>` (`http://` without TLS). */
  url: string;
  /** `127.0.0.1:<port>`: the registry part of image references. */
  host: string;
  /** The CA that signed the server certificate (PEM); undefined without TLS. */
  caPem: string | undefined;
  caFile: string | undefined;
  /** user → password accepted by the registry; empty without auth. */
  users: Record<string, string>;
  dir: string;
  /** The registry's log file. */
  log: string;
}

/** Where the binaries are looked for: `$PATH`, then /usr/bin and /usr/sbin. */
export function findBinary(name: string): string | undefined {
  const dirs = [...(process.env.PATH ?? '').split(path.delimiter).filter(Boolean), '/usr/bin', '/usr/sbin'];
  for (const d of dirs) {
    const f = path.join(d, name);
    if (existsSync(f)) return f;
  }
  return undefined;
}

/** The registry binary, or undefined when Debian's `docker-registry` package is not installed. */
export function registryBinary(): string | undefined {
  return findBinary('docker-registry');
}

function requireBinary(name: string, debianPackage: string): string {
  const bin = findBinary(name);
  if (!bin) {
    throw new Error(`\`${name}\` not found on PATH: install the Debian package \`${debianPackage}\` (apt-get install -y ${debianPackage})`);
  }
  return bin;
}

// --- PKI -------------------------------------------------------------------------------------------------------

interface RegistryPki {
  caFile: string;
  certFile: string;
  keyFile: string;
}

/** A CA and a serving certificate (SANs 127.0.0.1, localhost) in `dir`, made once and reused. */
function ensureRegistryPki(dir: string): RegistryPki {
  mkdirSync(dir, { recursive: true });
  const pki: RegistryPki = {
    caFile: path.join(dir, 'registry-ca.crt'),
    certFile: path.join(dir, 'registry.crt'),
    keyFile: path.join(dir, 'registry.key'),
  };
  if (existsSync(pki.caFile) && existsSync(pki.certFile) && existsSync(pki.keyFile)) return pki;

  const ca = keyPair();
  // A unique name per CA: clients that trust several registry CAs pick the issuer by subject.
  const caSubject = [{ name: 'commonName', value: `tidal-registry-ca-${randomBytes(6).toString('hex')}` }];
  const caKey = forge.pki.privateKeyFromPem(ca.privatePem);
  const caCert = makeCert(ca.publicPem, ca.privatePem, {
    subject: caSubject,
    extensions: [
      { name: 'basicConstraints', cA: true, critical: true },
      { name: 'keyUsage', keyCertSign: true, cRLSign: true, digitalSignature: true, critical: true },
    ],
    days: 3650,
  });
  const server = keyPair();
  const serverCert = makeCert(server.publicPem, '', {
    subject: [{ name: 'commonName', value: 'tidal-registry' }],
    issuer: { cert: caCert, key: caKey },
    extensions: [
      { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, critical: true },
      { name: 'extKeyUsage', serverAuth: true },
      {
        name: 'subjectAltName',
        altNames: [
          { type: 7, ip: '127.0.0.1' },
          { type: 2, value: 'localhost' },
        ],
      },
    ],
    days: 3650,
  });
  // The key first and the CA last: a folder with the CA is complete.
  writeFileSync(pki.keyFile, server.privatePem, { mode: 0o600 });
  writeFileSync(pki.certFile, forge.pki.certificateToPem(serverCert));
  writeFileSync(pki.caFile, forge.pki.certificateToPem(caCert));
  return pki;
}

// --- htpasswd --------------------------------------------------------------------------------------------------

async function writeHtpasswd(file: string, users: Record<string, string>): Promise<void> {
  const bin = requireBinary('htpasswd', 'apache2-utils');
  const lines: string[] = [];
  for (const [user, password] of Object.entries(users)) {
    if (!user || user.includes(':')) throw new Error(`registry user name ${JSON.stringify(user)} is not valid for htpasswd`);
    // -B bcrypt (the only hash distribution accepts), -b password on the command line, -n print instead of a file.
    const { stdout } = await run(bin, ['-Bbn', user, password]);
    lines.push(stdout.trim());
  }
  writeFileSync(file, `${lines.join('\n')}\n`, { mode: 0o600 });
}

// --- config ----------------------------------------------------------------------------------------------------

/** The registry's config (as an object; written as YAML). Exported for the report/tests. */
export function registryConfig(o: {
  dataDir: string;
  port: number;
  secret: string;
  tls?: { certificate: string; key: string };
  htpasswd?: { realm: string; path: string };
}): Record<string, unknown> {
  return {
    version: 0.1,
    log: { level: 'warn', formatter: 'text', fields: { service: 'tidal-registry' } },
    storage: {
      filesystem: { rootdirectory: o.dataDir },
      // Blobs are served by the registry itself, never through a redirect to a storage backend.
      redirect: { disable: true },
      delete: { enabled: true },
      // A test registry lives minutes; no background sweeping of upload folders.
      maintenance: { uploadpurging: { enabled: false }, readonly: { enabled: false } },
    },
    http: {
      addr: `127.0.0.1:${o.port}`,
      // Fixed per folder: upload state survives a restart, and no "generated random secret" warning.
      secret: o.secret,
      ...(o.tls ? { tls: { certificate: o.tls.certificate, key: o.tls.key } } : {}),
      headers: { 'X-Content-Type-Options': ['nosniff'] },
    },
    ...(o.htpasswd ? { auth: { htpasswd: { realm: o.htpasswd.realm, path: o.htpasswd.path } } } : {}),
    // No webhooks.
    notifications: { endpoints: [] },
    // No periodic storage-driver probes behind /debug/health.
    health: { storagedriver: { enabled: false } },
  };
}

function readJson<T>(file: string): T | undefined {
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as T;
  } catch {
    return undefined;
  }
}

// --- start / stop ----------------------------------------------------------------------------------------------

/** `GET /v2/` status, or undefined when nothing answers. TLS is verified against `ca` when given. */
function probe(url: string, ca: string | undefined): Promise<number | undefined> {
  return new Promise((resolve) => {
    const mod = url.startsWith('https:') ? https : http;
    const req = mod.get(`${url}/v2/`, { timeout: 2000, agent: false, ...(ca ? { ca } : {}) }, (res) => {
      res.resume();
      resolve(res.statusCode);
    });
    req.on('error', () => resolve(undefined));
    req.on('timeout', () => {
      req.destroy();
      resolve(undefined);
    });
  });
}

/**
 * The registry of a stack with a real node: TLS, anonymous, in `<stackDir>/registry`, its CA written to
 * `<stackDir>/registry-cas.pem` (the file the node's runtime and Tidal's resolver trust).
 */
export async function startStackRegistry(stackDir: string, port: number): Promise<{ registry: RegistryInfo; caFile: string }> {
  const registry = await startRegistry({ dir: path.join(stackDir, 'registry'), port, auth: false, tls: true });
  const caFile = path.join(stackDir, 'registry-cas.pem');
  writeFileSync(caFile, registry.caPem ?? '');
  return { registry, caFile };
}

/**
 * Starts the registry in `opts.dir` on 127.0.0.1:`opts.port` and waits until `GET /v2/` answers 200 (no auth) or 401
 * (auth). A registry this folder already runs is restarted with the new options. The CA and the blob store are kept
 * across stop/start on the same folder.
 */
export async function startRegistry(opts: RegistryOptions): Promise<RegistryInfo> {
  const bin = requireBinary('docker-registry', 'docker-registry');
  const dir = path.resolve(opts.dir);
  mkdirSync(dir, { recursive: true });
  const procs = new ProcessTable(dir);
  await procs.stop(REGISTRY_PROCESS);

  const secretFile = path.join(dir, 'registry-http-secret');
  if (!existsSync(secretFile)) writeFileSync(secretFile, randomBytes(32).toString('hex'), { mode: 0o600 });
  const secret = readFileSync(secretFile, 'utf8').trim();

  const pki = opts.tls ? ensureRegistryPki(path.join(dir, 'registry-pki')) : undefined;

  let users: Record<string, string> = {};
  let htpasswd: { realm: string; path: string } | undefined;
  if (opts.auth) {
    const usersFile = path.join(dir, 'registry-users.json');
    users = opts.users ?? readJson<Record<string, string>>(usersFile) ?? { tidal: randomBytes(12).toString('hex') };
    if (Object.keys(users).length === 0) throw new Error('startRegistry: auth needs at least one user');
    writeFileSync(usersFile, JSON.stringify(users, null, 2), { mode: 0o600 });
    htpasswd = { realm: 'tidal-registry', path: path.join(dir, 'registry-htpasswd') };
    await writeHtpasswd(htpasswd.path, users);
  }

  const dataDir = path.join(dir, 'registry-data');
  mkdirSync(dataDir, { recursive: true });
  const configFile = path.join(dir, 'registry-config.yml');
  const config = registryConfig({
    dataDir,
    port: opts.port,
    secret,
    ...(pki ? { tls: { certificate: pki.certFile, key: pki.keyFile } } : {}),
    ...(htpasswd ? { htpasswd } : {}),
  });
  writeFileSync(configFile, stringify(config), { mode: 0o600 });

  const caPem = pki ? readFileSync(pki.caFile, 'utf8') : undefined;
  const host = `127.0.0.1:${opts.port}`;
  const url = `${pki ? 'https' : 'http'}://${host}`;

  const rec = procs.start(REGISTRY_PROCESS, bin, ['serve', configFile], process.env, dir);
  await waitHealthy(procs, rec, url, caPem, opts.auth ? 401 : 200, opts.timeoutMs ?? 30_000);
  return { url, host, caPem, caFile: pki?.caFile, users, dir, log: rec.log };
}

async function waitHealthy(
  procs: ProcessTable,
  rec: ProcessRecord,
  url: string,
  caPem: string | undefined,
  want: number,
  timeoutMs: number,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    // Checked before probing: a foreign server on the port must not pass for ours.
    if (!procs.running(REGISTRY_PROCESS)) {
      await procs.stop(REGISTRY_PROCESS);
      throw new Error(`docker-registry exited while starting on ${url}; last lines of ${rec.log}:\n${tail(rec.log)}`);
    }
    const status = await probe(url, caPem);
    if (status === want) return;
    if (status !== undefined && status !== 200 && status !== 401) {
      await procs.stop(REGISTRY_PROCESS);
      throw new Error(`docker-registry on ${url}: GET /v2/ answered ${status}; last lines of ${rec.log}:\n${tail(rec.log)}`);
    }
    if (Date.now() > deadline) {
      await procs.stop(REGISTRY_PROCESS);
      throw new Error(
        `docker-registry on ${url} did not answer GET /v2/ with ${want} in ${timeoutMs / 1000}s; last lines of ${rec.log}:\n${tail(rec.log)}`,
      );
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Stops the registry `startRegistry` started in `dir` (SIGTERM, then SIGKILL); a no-op when none runs. Data is kept. */
export async function stopRegistry(dir: string): Promise<void> {
  const resolved = path.resolve(dir);
  if (!existsSync(resolved)) return;
  await new ProcessTable(resolved).stop(REGISTRY_PROCESS, 5_000);
}
