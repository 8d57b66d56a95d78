// How Tidal reaches its Temporal server in production, and the check it makes at start that the server is ready for
// it: the namespace exists and so do the search attributes the entity workflows are listed by.
//
// The connection comes from the environment, TLS material and API key from files (a Secret mounted in the pod):
//   TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE            host:port and namespace
//   TEMPORAL_TLS_DIR                                a folder with any of ca.crt (server CA), tls.crt + tls.key (mTLS
//                                                   client certificate), api-key (Temporal Cloud API key),
//                                                   server-name (SNI override); any of them turns TLS on
//   TEMPORAL_TLS                                    true: TLS with the system's CAs even with none of those files
//   TIDAL_TEMPORAL_CREATE_NAMESPACE                 true: register what is missing; false (default): fail with the
//                                                   `temporal operator` commands that would
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { Connection, TLSConfig } from '@temporalio/client';
import { msToTs } from '@temporalio/common/lib/time.js';

/** The search attributes Tidal's workflows carry (all Keyword), as `dev/stack.ts` registers them. */
export const TidalSearchAttributes = ['KnativeKind', 'KnativeNamespace', 'KnativeName'] as const;
/** temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD */
const KEYWORD = 2;
/** Retention of closed workflow histories in a namespace Tidal registers (the CLI's default is 3 days as well). */
const RETENTION_SECONDS = 3 * 24 * 3600;

export interface TemporalSettings {
  address: string;
  namespace: string;
  /** undefined: plain gRPC. */
  tls: TLSConfig | undefined;
  apiKey: string | undefined;
  createNamespace: boolean;
}

function flag(env: NodeJS.ProcessEnv, name: string): boolean {
  const raw = env[name];
  if (raw === undefined || raw === '') return false;
  if (/^(1|true|yes)$/i.test(raw)) return true;
  if (/^(0|false|no)$/i.test(raw)) return false;
  throw new Error(`${name}=${raw}: expected true or false`);
}

/** Files in TEMPORAL_TLS_DIR, by the keys of the Secret they come from. */
export const TlsFiles = { ca: 'ca.crt', cert: 'tls.crt', key: 'tls.key', apiKey: 'api-key', serverName: 'server-name' } as const;

export function loadTemporalSettings(env: NodeJS.ProcessEnv = process.env): TemporalSettings {
  const dir = env.TEMPORAL_TLS_DIR || undefined;
  const read = (file: string): Buffer | undefined => {
    if (!dir) return undefined;
    const p = path.join(dir, file);
    if (!existsSync(p)) return undefined;
    try {
      return readFileSync(p);
    } catch (err) {
      throw new Error(`TEMPORAL_TLS_DIR=${dir}: cannot read ${file}: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
    }
  };
  const ca = read(TlsFiles.ca);
  const cert = read(TlsFiles.cert);
  const key = read(TlsFiles.key);
  if (!cert !== !key)
    throw new Error(`TEMPORAL_TLS_DIR=${dir ?? ''}: ${cert ? TlsFiles.key : TlsFiles.cert} is missing (an mTLS client certificate needs its key)`);
  const apiKey = read(TlsFiles.apiKey)?.toString('utf8').trim() || undefined;
  const serverName = read(TlsFiles.serverName)?.toString('utf8').trim() || undefined;
  const useTls = flag(env, 'TEMPORAL_TLS') || Boolean(ca || cert || apiKey || serverName);
  return {
    address: env.TEMPORAL_ADDRESS || '127.0.0.1:7233',
    namespace: env.TEMPORAL_NAMESPACE || 'default',
    tls: useTls
      ? {
          ...(ca ? { serverRootCACertificate: ca } : {}),
          ...(cert && key ? { clientCertPair: { crt: cert, key } } : {}),
          ...(serverName ? { serverNameOverride: serverName } : {}),
        }
      : undefined,
    apiKey,
    createNamespace: flag(env, 'TIDAL_TEMPORAL_CREATE_NAMESPACE'),
  };
}

/** Options for `Connection.connect` and `NativeConnection.connect` alike. */
export function temporalConnectOptions(s: TemporalSettings): { address: string; tls?: TLSConfig; apiKey?: string } {
  return { address: s.address, ...(s.tls ? { tls: s.tls } : {}), ...(s.apiKey ? { apiKey: s.apiKey } : {}) };
}

/** What a connection says of itself in logs: never the key or certificate, only which are in use. */
export function describeTemporal(s: TemporalSettings): Record<string, unknown> {
  return {
    address: s.address,
    namespace: s.namespace,
    tls: s.tls
      ? { serverCA: Boolean(s.tls.serverRootCACertificate), clientCert: Boolean(s.tls.clientCertPair), serverName: s.tls.serverNameOverride }
      : false,
    apiKey: Boolean(s.apiKey),
  };
}

/** The CLI commands that make the namespace and search attributes what Tidal needs. */
export function temporalSetupCommands(
  s: Pick<TemporalSettings, 'address' | 'namespace'>,
  missing: { namespace: boolean; attributes: readonly string[] },
): string[] {
  const conn = `--address ${s.address}`;
  // One attribute per command: the CLI (1.5) registers only the first of several --name flags.
  return [
    ...(missing.namespace ? [`temporal operator namespace create --namespace ${s.namespace} --retention 72h ${conn}`] : []),
    ...missing.attributes.map((a) => `temporal operator search-attribute create --namespace ${s.namespace} --name ${a} --type Keyword ${conn}`),
  ];
}

const grpcCode = (err: unknown): number | undefined => {
  const e = err as { code?: unknown; cause?: { code?: unknown } };
  const code = typeof e.code === 'number' ? e.code : e.cause?.code;
  return typeof code === 'number' ? code : undefined;
};
const NOT_FOUND = 5;
const ALREADY_EXISTS = 6;

export interface EnsureOutcome {
  createdNamespace: boolean;
  createdAttributes: string[];
}

/**
 * Checks that the namespace exists and has Tidal's search attributes as Keyword; registers what is missing when
 * `createNamespace`, else throws an error naming the `temporal operator` commands to run. An attribute registered with
 * another type is never changed (a type cannot be changed in place): that is an error either way.
 */
export async function ensureTemporalNamespace(
  connection: Pick<Connection, 'workflowService' | 'operatorService'>,
  s: Pick<TemporalSettings, 'address' | 'namespace' | 'createNamespace'>,
  opts: { retryMs?: number; timeoutMs?: number } = {},
): Promise<EnsureOutcome> {
  const { workflowService, operatorService } = connection;
  let namespaceMissing = false;
  try {
    await workflowService.describeNamespace({ namespace: s.namespace });
  } catch (err) {
    if (grpcCode(err) !== NOT_FOUND)
      throw new Error(`Temporal ${s.address}: cannot describe namespace ${s.namespace}: ${String(err)}`, { cause: err });
    namespaceMissing = true;
  }
  const existing = namespaceMissing ? {} : await searchAttributes(operatorService, s);
  const wrongType = TidalSearchAttributes.filter((a) => existing[a] !== undefined && existing[a] !== KEYWORD);
  if (wrongType.length) {
    throw new Error(
      `Temporal namespace ${s.namespace}: search attribute${wrongType.length > 1 ? 's' : ''} ${wrongType.join(', ')} must be of type Keyword; ` +
        `remove ${wrongType.length > 1 ? 'them' : 'it'} (temporal operator search-attribute remove --namespace ${s.namespace} ${wrongType.map((a) => `--name ${a}`).join(' ')}) and start Tidal again`,
    );
  }
  const missingAttributes = TidalSearchAttributes.filter((a) => existing[a] === undefined);
  if (!namespaceMissing && missingAttributes.length === 0) return { createdNamespace: false, createdAttributes: [] };
  if (!s.createNamespace) {
    const what = [
      namespaceMissing ? `namespace ${s.namespace} does not exist` : '',
      missingAttributes.length ? `search attributes ${missingAttributes.join(', ')} are missing` : '',
    ]
      .filter((x) => x !== '')
      .join(' and ');
    const commands = temporalSetupCommands(s, { namespace: namespaceMissing, attributes: missingAttributes });
    throw new Error(`Temporal ${s.address}: ${what}. Run:\n  ${commands.join('\n  ')}\nor start Tidal with TIDAL_TEMPORAL_CREATE_NAMESPACE=true`);
  }
  if (namespaceMissing) {
    try {
      await workflowService.registerNamespace({ namespace: s.namespace, workflowExecutionRetentionPeriod: msToTs(RETENTION_SECONDS * 1000) });
    } catch (err) {
      // Another replica registered it first: fine.
      if (grpcCode(err) !== ALREADY_EXISTS)
        throw new Error(`Temporal ${s.address}: cannot register namespace ${s.namespace}: ${String(err)}`, { cause: err });
    }
  }
  // A namespace registered a moment ago reaches the server's namespace cache within seconds: retry until it has.
  const deadline = Date.now() + (opts.timeoutMs ?? 60_000);
  for (;;) {
    try {
      const now = await searchAttributes(operatorService, s);
      const toAdd = TidalSearchAttributes.filter((a) => now[a] === undefined);
      if (toAdd.length)
        await operatorService.addSearchAttributes({ namespace: s.namespace, searchAttributes: Object.fromEntries(toAdd.map((a) => [a, KEYWORD])) });
      const after = await searchAttributes(operatorService, s);
      if (TidalSearchAttributes.every((a) => after[a] === KEYWORD)) break;
    } catch (err) {
      const code = grpcCode(err);
      if ((code !== NOT_FOUND && code !== ALREADY_EXISTS) || Date.now() > deadline) {
        throw new Error(`Temporal ${s.address}: cannot add search attributes to namespace ${s.namespace}: ${String(err)}`, { cause: err });
      }
    }
    if (Date.now() > deadline) throw new Error(`Temporal ${s.address}: search attributes of namespace ${s.namespace} did not appear in time`);
    await new Promise((r) => setTimeout(r, opts.retryMs ?? 500));
  }
  return { createdNamespace: namespaceMissing, createdAttributes: [...missingAttributes] };
}

async function searchAttributes(
  operatorService: Connection['operatorService'],
  s: Pick<TemporalSettings, 'namespace'>,
): Promise<Record<string, number>> {
  const res = await operatorService.listSearchAttributes({ namespace: s.namespace });
  return Object.fromEntries(Object.entries(res.customAttributes ?? {}).map(([k, v]) => [k, Number(v)]));
}
