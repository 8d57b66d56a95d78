// The stack's `temporal: 'postgres'` option: a real Temporal server (go.temporal.io/server, built by
// `dev/toolchain.sh temporal-server`) on Debian's PostgreSQL, with many history shards, as production runs it — in
// place of the CLI's dev server (SQLite, one shard). Both run through the stack's ProcessTable, PostgreSQL as
// 'postgres' and the server as 'temporal', so `stackDown` stops them (the server first: it was started last).
import { execFile, execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, chownSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { stringify } from 'yaml';
import type { ProcessTable } from './processes.js';
import { tail, type ProcessRecord } from './processes.js';

const run = promisify(execFile);
const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/**
 * 16 shards: enough that workflows spread over several shards and their queues run in parallel, as in production
 * (which uses 512+), without hundreds of idle shard loops on a 2-core machine. Fixed once the database exists.
 */
export const defaultHistoryShards = 16;

export interface TemporalPostgresOptions {
  /** The stack folder: PostgreSQL's data goes to `<dir>/postgres`, the server's config to `<dir>/temporal-server`. */
  dir: string;
  procs: ProcessTable;
  /** The frontend's gRPC port; the other services, their membership ports and PostgreSQL take the next eight. */
  port: number;
  httpPort: number;
  metricsPort: number;
  /** The `temporal` CLI (toolchain), which registers the namespace and search attributes. */
  cli: string;
  /** Keyword search attributes to register in namespace `default` (the stack's `SearchAttributes`). */
  searchAttributes: string[];
  /** Default: `TIDAL_TEMPORAL_SHARDS`, else 16. */
  historyShards?: number;
  /** `key=JSON value` dynamic config settings, as the dev server's `--dynamic-config-value`. */
  dynamicConfig?: string[];
  log?: (s: string) => void;
}

export interface TemporalPostgres {
  address: string;
  postgresPort: number;
  historyShards: number;
  postgres: ProcessRecord;
  temporal: ProcessRecord;
  /** Runs one SQL statement as the database owner and returns psql's unaligned output. */
  sql(database: string, statement: string): Promise<string>;
}

/** The stack's Temporal when `StackOptions.temporal` is not given: env TIDAL_TEMPORAL (`dev` or `postgres`), else dev. */
export function temporalModeFromEnv(): 'dev' | 'postgres' {
  const v = process.env.TIDAL_TEMPORAL || 'dev';
  if (v !== 'dev' && v !== 'postgres') throw new Error(`TIDAL_TEMPORAL=${v}: expected dev or postgres`);
  return v;
}

/** Ports derived from the frontend port, so stacks with different Temporal ports never collide. */
export function temporalPostgresPorts(port: number) {
  // Temporal's cluster_membership table keeps the membership port in a PostgreSQL smallint: they must stay under
  // 32768, so a stack whose Temporal port is higher gets them 25000 lower (37233 → 12237–12240, 57233 → 32237–32240).
  const m = port + 7 < 32768 ? port + 4 : port + 4 - 25000;
  if (m < 1024 || m + 3 > 32767)
    throw new Error(`Temporal port ${port}: no membership ports under 32768 derive from it (use 1024–32760 or 26020–57760)`);
  return {
    frontend: port,
    history: port + 1,
    matching: port + 2,
    worker: port + 3,
    membership: { frontend: m, history: m + 1, matching: m + 2, worker: m + 3 },
    postgres: port + 8,
  };
}

/** The newest installed PostgreSQL's bin folder (Debian: /usr/lib/postgresql/<major>/bin), if any. */
export function findPostgres(): string | undefined {
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return undefined;
  const majors = readdirSync(root)
    .filter((v) => existsSync(path.join(root, v, 'bin', 'postgres')))
    .sort((a, b) => Number(b) - Number(a));
  return majors[0] ? path.join(root, majors[0], 'bin') : undefined;
}

/** Installs Debian's `postgresql` when it is missing (as root; otherwise says what to run), like ensure-deps.mjs. */
export function ensurePostgres(log: (s: string) => void = console.error): string {
  const found = findPostgres();
  if (found) return found;
  if (process.getuid?.() !== 0) throw new Error("the PostgreSQL option needs Debian's postgresql: run  sudo apt-get install -y postgresql");
  log('installing postgresql (apt-get)…');
  execFileSync('bash', ['-c', 'apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql'], { stdio: 'inherit' });
  const bin = findPostgres();
  if (!bin) throw new Error('apt-get installed postgresql, but no /usr/lib/postgresql/<major>/bin/postgres was found');
  return bin;
}

/** Builds (or reuses) temporal-server and temporal-sql-tool with dev/toolchain.sh and returns their paths. */
export async function ensureTemporalServer(log: (s: string) => void = console.error): Promise<{ server: string; sqlTool: string }> {
  const child = execFile('bash', [path.join(repoRoot, 'dev', 'toolchain.sh'), 'temporal-server'], { maxBuffer: 64 << 20 });
  child.stderr?.on('data', (d: Buffer) =>
    d
      .toString()
      .split('\n')
      .filter((l) => l.startsWith('[toolchain]'))
      .forEach((l) => log(l)),
  );
  let stdout = '';
  child.stdout?.on('data', (d: Buffer) => (stdout += d.toString()));
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  if (code !== 0) throw new Error(`toolchain: building the Temporal server failed (exit ${code})`);
  const kv = Object.fromEntries(
    stdout
      .trim()
      .split('\n')
      .map((l) => l.split('=', 2) as [string, string]),
  );
  const server = kv.TEMPORAL_SERVER;
  const sqlTool = kv.TEMPORAL_SQL_TOOL;
  for (const b of [server, sqlTool]) if (!b || !existsSync(b)) throw new Error(`toolchain: ${b ?? 'temporal-server'} not found`);
  return { server: server!, sqlTool: sqlTool! };
}

/** Switching a stack back to the dev server: stop a PostgreSQL-mode server and its database first. */
export async function stopTemporalPostgres(procs: ProcessTable, devCli: string, log: (s: string) => void = () => {}): Promise<void> {
  const t = procs.running('temporal');
  if (t && t.bin !== devCli) {
    log('stopping the PostgreSQL-mode Temporal server (switching to the dev server)');
    await procs.stop('temporal');
  }
  if (procs.running('postgres')) await procs.stop('postgres', 30_000);
}

// PostgreSQL refuses to run as root: as root it runs as the `postgres` user (setpriv execs, so the pid below is the
// postmaster's). ProcessTable stops with SIGTERM, which for PostgreSQL is a "smart" shutdown that waits for every
// client to leave; this wrapper turns it into a fast one (clients disconnected, a clean shutdown checkpoint).
const wrapper = `
"$@" &
pid=$!
trap 'kill -INT "$pid" 2>/dev/null' TERM INT
wait "$pid"; status=$?
while kill -0 "$pid" 2>/dev/null; do wait "$pid"; status=$?; done
exit "$status"
`;

const asRoot = () => process.getuid?.() === 0;
// setpriv rather than runuser: runuser stays the parent and SIGKILLs its child 2 s after a SIGTERM.
const asPostgres = (cmd: string[], pdeathsig = false) => [
  'setpriv',
  ...(asRoot() ? ['--reuid=postgres', '--regid=postgres', '--init-groups', '--reset-env'] : []),
  // Should the wrapper itself be killed, PostgreSQL still shuts down rather than holding its port and data folder.
  ...(pdeathsig ? ['--pdeathsig=INT'] : []),
  '--',
  ...cmd,
];

export async function startTemporalPostgres(opts: TemporalPostgresOptions): Promise<TemporalPostgres> {
  const log = opts.log ?? ((s: string) => console.error(`[temporal-postgres] ${s}`));
  const dir = path.resolve(opts.dir);
  const ports = temporalPostgresPorts(opts.port);
  const shards = opts.historyShards ?? (Number(process.env.TIDAL_TEMPORAL_SHARDS) || defaultHistoryShards);
  const address = `127.0.0.1:${opts.port}`;
  const pgBin = ensurePostgres(log);
  const bins = await ensureTemporalServer(log);

  const confDir = path.join(dir, 'temporal-server');
  mkdirSync(path.join(confDir, 'config'), { recursive: true });
  // The database records its shard count; a different one later would be refused by the server, less clearly.
  const shardsFile = path.join(confDir, 'history-shards');
  if (existsSync(shardsFile) && Number(readFileSync(shardsFile, 'utf8')) !== shards) {
    throw new Error(
      `${dir}'s Temporal database has ${readFileSync(shardsFile, 'utf8').trim()} history shards, not ${shards}: purge the stack (npm run down -- --purge) to change it`,
    );
  }
  const pwFile = path.join(confDir, 'postgres-password');
  if (!existsSync(pwFile)) writeFileSync(pwFile, randomBytes(18).toString('base64url'), { mode: 0o600 });
  const password = readFileSync(pwFile, 'utf8').trim();
  const pgEnv = { ...process.env, PGPASSWORD: password, PGCONNECT_TIMEOUT: '5' };
  const psql = [
    path.join(pgBin, 'psql'),
    '-h',
    '127.0.0.1',
    '-p',
    String(ports.postgres),
    '-U',
    'temporal',
    '-XtAq',
    '-v',
    'ON_ERROR_STOP=1',
  ] as const;
  const sql = async (database: string, statement: string) =>
    (await run(psql[0], [...psql.slice(1), '-d', database, '-c', statement], { env: pgEnv })).stdout.trim();

  // PostgreSQL: a cluster of its own under the stack folder, on loopback only, TCP only (no shared socket folder).
  const data = path.join(dir, 'postgres');
  if (!existsSync(path.join(data, 'PG_VERSION'))) {
    const owner = asRoot() ? { uid: Number(execFileSync('id', ['-u', 'postgres'])), gid: Number(execFileSync('id', ['-g', 'postgres'])) } : undefined;
    mkdirSync(data, { recursive: true });
    chmodSync(data, 0o700);
    // initdb reads the superuser's password from a file only the postgres user can read (not stdin: a socket here).
    const initPw = path.join(confDir, 'initdb-password');
    writeFileSync(initPw, `${password}\n`, { mode: 0o600 });
    if (owner) for (const f of [data, initPw]) chownSync(f, owner.uid, owner.gid);
    log(`initdb ${data}`);
    const [bin, ...args] = asPostgres([
      path.join(pgBin, 'initdb'),
      '-D',
      data,
      '-U',
      'temporal',
      `--pwfile=${initPw}`,
      '--auth=scram-sha-256',
      '-E',
      'UTF8',
      '--no-locale',
    ]);
    try {
      execFileSync(bin!, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    } catch (err) {
      const e = err as { stderr?: Buffer };
      throw new Error(
        `initdb failed (the postgres user must be able to reach ${data}: every parent folder needs o+x): ${e.stderr?.toString() ?? String(err)}`,
      );
    } finally {
      rmSync(initPw, { force: true });
    }
  }
  let postgres = opts.procs.running('postgres');
  if (!postgres) {
    log('starting postgres');
    postgres = opts.procs.start('postgres', '/bin/bash', [
      '-c',
      wrapper,
      'postgres-wrapper',
      ...asPostgres(
        [
          path.join(pgBin, 'postgres'),
          '-D',
          data,
          '-c',
          'listen_addresses=127.0.0.1',
          '-c',
          `port=${ports.postgres}`,
          '-c',
          'unix_socket_directories=',
          // Four services in one process, each with its own pools (up to 20 + 10 connections), plus the tools.
          '-c',
          'max_connections=200',
          // fsync and synchronous_commit keep their durable defaults: see docs/local-stack.md for what they cost here.
          '-c',
          'log_min_messages=warning',
          '-c',
          'log_checkpoints=off',
        ],
        true,
      ),
    ]);
  }
  await waitUntil(
    'postgres',
    async () => (await run(path.join(pgBin, 'pg_isready'), ['-h', '127.0.0.1', '-p', String(ports.postgres)]), true),
    60_000,
    opts.procs,
    postgres,
  );

  // Databases and schemas with temporal-sql-tool (its schemas are the module's schema/postgresql/v12 files).
  const toolEnv = {
    ...process.env,
    SQL_PLUGIN: 'postgres12',
    SQL_HOST: '127.0.0.1',
    SQL_PORT: String(ports.postgres),
    SQL_USER: 'temporal',
    SQL_PASSWORD: password,
  };
  const tool = (database: string, args: string[]) => run(bins.sqlTool, ['--quiet', ...args], { env: { ...toolEnv, SQL_DATABASE: database } });
  for (const [database, schema] of [
    ['temporal', 'postgresql/v12/temporal'],
    ['temporal_visibility', 'postgresql/v12/visibility'],
  ] as const) {
    if (!(await sql('postgres', `SELECT 1 FROM pg_database WHERE datname = '${database}'`))) {
      log(`creating database ${database}`);
      await tool(database, ['create-database']);
      await tool(database, ['setup-schema', '-v', '0.0']);
    }
    // A no-op once current; after a server upgrade it applies the new versions.
    await tool(database, ['update-schema', '--schema-name', schema]);
  }
  writeFileSync(shardsFile, `${shards}\n`);

  const configFile = path.join(confDir, 'config', 'tidal.yaml');
  const dynamicConfigFile = path.join(confDir, 'dynamicconfig.yaml');
  writeFileSync(dynamicConfigFile, dynamicConfigYaml(opts.dynamicConfig ?? []));
  const config = serverConfigYaml({ ports, httpPort: opts.httpPort, metricsPort: opts.metricsPort, shards, password, dynamicConfigFile });
  writeFileSync(configFile, config, { mode: 0o600 });

  let temporal = opts.procs.running('temporal');
  if (temporal && temporal.bin !== bins.server) {
    log('stopping the dev Temporal server (switching to the PostgreSQL one)');
    await opts.procs.stop('temporal');
    temporal = undefined;
  }
  if (!temporal) {
    log(`starting temporal (server ${path.basename(path.dirname(path.dirname(bins.server)))}, ${shards} history shards)`);
    temporal = opts.procs.start('temporal', bins.server, ['--root', confDir, '--config', 'config', '--env', 'tidal', '--allow-no-auth', 'start']);
  }
  const cli = (args: string[]) => run(opts.cli, [...args, '--address', address], { maxBuffer: 16 << 20 });
  await waitUntil('temporal', async () => (await cli(['operator', 'cluster', 'health']), true), 120_000, opts.procs, temporal);

  // What the dev server does by itself: the `default` namespace and Tidal's search attributes.
  try {
    await cli(['operator', 'namespace', 'describe', '-n', 'default']);
  } catch {
    log('registering namespace default');
    await cli(['operator', 'namespace', 'create', '-n', 'default', '--retention', '24h']);
  }
  await waitUntil('namespace default', async () => (await cli(['workflow', 'count', '-n', 'default']), true), 60_000, opts.procs, temporal);
  const listed = JSON.parse((await cli(['operator', 'search-attribute', 'list', '-n', 'default', '-o', 'json'])).stdout) as {
    customAttributes?: Record<string, unknown>;
  };
  const missing = opts.searchAttributes.filter((a) => !(a in (listed.customAttributes ?? {})));
  if (missing.length) {
    log(`registering search attributes ${missing.join(', ')}`);
    await cli(['operator', 'search-attribute', 'create', '-n', 'default', ...missing.flatMap((a) => ['--name', a, '--type', 'Keyword'])]);
  }
  // The frontend validates queries (and workflow starts) with its cached namespace: wait until it knows them all.
  const probe = opts.searchAttributes.map((a) => `${a} = 'probe'`).join(' AND ');
  if (probe)
    await waitUntil(
      'search attributes',
      async () => (await cli(['workflow', 'count', '-n', 'default', '--query', probe]), true),
      60_000,
      opts.procs,
      temporal,
    );

  return { address, postgresPort: ports.postgres, historyShards: shards, postgres, temporal, sql };
}

function dynamicConfigYaml(settings: string[]): string {
  const out: Record<string, { value: unknown }[]> = {};
  for (const s of settings) {
    const eq = s.indexOf('=');
    if (eq <= 0) throw new Error(`dynamic config '${s}': expected key=value`);
    let value: unknown;
    try {
      value = JSON.parse(s.slice(eq + 1));
    } catch {
      throw new Error(`dynamic config '${s}': the value must be JSON (as the dev server's --dynamic-config-value)`);
    }
    out[s.slice(0, eq)] = [{ value }];
  }
  return Object.keys(out).length ? stringify(out) : '{}\n';
}

function serverConfigYaml(o: {
  ports: ReturnType<typeof temporalPostgresPorts>;
  httpPort: number;
  metricsPort: number;
  shards: number;
  password: string;
  dynamicConfigFile: string;
}): string {
  const store = (databaseName: string, maxConns: number) => ({
    sql: {
      pluginName: 'postgres12',
      databaseName,
      connectAddr: `127.0.0.1:${o.ports.postgres}`,
      connectProtocol: 'tcp',
      user: 'temporal',
      password: o.password,
      maxConns,
      maxIdleConns: maxConns,
      maxConnLifetime: '1h',
    },
  });
  const service = (grpcPort: number, membershipPort: number, extra: Record<string, unknown> = {}) => ({
    rpc: { grpcPort, membershipPort, bindOnIP: '127.0.0.1', ...extra },
  });
  const frontend = `127.0.0.1:${o.ports.frontend}`;
  return stringify({
    log: { stdout: true, level: 'warn' },
    persistence: {
      defaultStore: 'postgres-default',
      visibilityStore: 'postgres-visibility',
      numHistoryShards: o.shards,
      datastores: { 'postgres-default': store('temporal', 20), 'postgres-visibility': store('temporal_visibility', 10) },
    },
    global: {
      membership: { maxJoinDuration: '30s', broadcastAddress: '127.0.0.1' },
      // The dev server's metrics, on the same port the dev mode uses.
      metrics: { prometheus: { listenAddress: `127.0.0.1:${o.metricsPort}`, handlerPath: '/metrics' } },
    },
    services: {
      frontend: service(o.ports.frontend, o.ports.membership.frontend, { httpPort: o.httpPort }),
      history: service(o.ports.history, o.ports.membership.history),
      matching: service(o.ports.matching, o.ports.membership.matching),
      worker: service(o.ports.worker, o.ports.membership.worker),
    },
    clusterMetadata: {
      enableGlobalNamespace: false,
      failoverVersionIncrement: 10,
      masterClusterName: 'active',
      currentClusterName: 'active',
      clusterInformation: {
        active: { enabled: true, initialFailoverVersion: 1, rpcName: 'frontend', rpcAddress: frontend, httpAddress: `127.0.0.1:${o.httpPort}` },
      },
    },
    dcRedirectionPolicy: { policy: 'noop' },
    archival: { history: { state: 'disabled' }, visibility: { state: 'disabled' } },
    namespaceDefaults: { archival: { history: { state: 'disabled' }, visibility: { state: 'disabled' } } },
    publicClient: { hostPort: frontend },
    dynamicConfigClient: { filepath: o.dynamicConfigFile, pollInterval: '10s' },
  });
}

async function waitUntil(what: string, check: () => Promise<boolean>, timeoutMs: number, procs: ProcessTable, rec: ProcessRecord): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      if (await check()) return;
    } catch (err) {
      last = err;
    }
    // A process that exited (a fatal config or schema error, say) will not become ready: say so now.
    const gone = !procs.running(rec.name);
    if (gone || Date.now() > deadline) {
      const why = gone ? `${rec.name} exited` : `not ready in ${timeoutMs / 1000}s (${String(last)})`;
      throw new Error(`${what}: ${why}; last lines of ${rec.log}:\n${tail(rec.log)}`);
    }
    await new Promise((r) => setTimeout(r, 500));
  }
}
