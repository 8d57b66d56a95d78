// The one error type of registry resolution. Messages are written for the Revision's status ("Unable to fetch image
// …: failed to resolve image to digest: <message>") and never carry credentials, tokens or Authorization headers.

export type RegistryErrorKind =
  | 'invalid' // the image reference does not parse
  | 'unauthorized' // 401/403 from the registry or its token server
  | 'not-found' // 404: no such tag or repository
  | 'unreachable' // connection, DNS or TLS failure
  | 'timeout' // the per-image deadline passed
  | 'kube' // the pull secrets or service account could not be read
  | 'registry'; // anything else the registry answered

export class RegistryError extends Error {
  override readonly name = 'RegistryError';
  constructor(
    readonly kind: RegistryErrorKind,
    message: string,
  ) {
    super(message);
  }
}

const TLS_CODES = /^(?:ERR_TLS_|ERR_SSL_|CERT_|DEPTH_ZERO_SELF_SIGNED_CERT|SELF_SIGNED_CERT_IN_CHAIN|UNABLE_TO_|ERR_OSSL_)/;

/** A readable reason for a failed connection: node's own message ("connect ECONNREFUSED 127.0.0.1:5000"). */
export function networkReason(err: unknown): { reason: string; tls: boolean; plainHttp: boolean } {
  // fetch (undici) wraps the socket error: TypeError('fetch failed', { cause }).
  let e: unknown = err;
  while (e instanceof Error && e.message === 'fetch failed' && e.cause instanceof Error) e = e.cause;
  const code = (e as { code?: unknown } | null)?.code;
  const message = e instanceof Error ? e.message : String(e);
  // OpenSSL appends "<hex>:error:<code>:SSL routines:<function>:<reason>:<file>:<line>:"; keep the reason only.
  const ssl = /error:[0-9A-F]+:SSL routines:[^:]*:([^:]+)/.exec(message);
  const reason = ssl ? `${typeof code === 'string' ? `${code}: ` : ''}${ssl[1]}` : message;
  return { reason, tls: typeof code === 'string' && TLS_CODES.test(code), plainHttp: !!ssl && ssl[1] === 'wrong version number' };
}

/** Removes every occurrence of the given secret strings from a message (a last line of defence). */
export function redact(message: string, secrets: Iterable<string>): string {
  let out = message;
  for (const s of secrets) if (s.length >= 4) out = out.split(s).join('[redacted]');
  return out;
}
