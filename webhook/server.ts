// The admission webhook's HTTPS server: HTTP/2 (the API server's webhook client speaks it) and HTTP/1.1 on one port,
// AdmissionReview v1 on the three paths. Certificates are swapped in place (`setSecureContext`), so a renewal needs no
// restart. Draining (SIGTERM): the replica stops reporting ready at once, keeps answering for the drain period, and
// asks clients to move on — HTTP/2 sessions get a graceful GOAWAY (requests the server did not take are retried by
// the client on a new connection), HTTP/1.1 responses carry `Connection: close` — then closes.
import http2 from 'node:http2';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import { Histogram, type Registry } from 'prom-client';
import { reviewAdmission, reviewResponse, WebhookPaths, type AdmissionConfig, type AdmissionReview, type WebhookPath } from './admission-review.js';
import type { WebhookCertificates } from '../pki/webhook-certificates.js';

export interface WebhookServerOptions {
  port: number;
  host: string;
  /** The config in force, read per request. */
  config: () => AdmissionConfig;
  log: Logger;
  registry?: Registry;
}

type Request = IncomingMessage | http2.Http2ServerRequest;
type Response = ServerResponse | http2.Http2ServerResponse;

const MAX_BODY_BYTES = 8 << 20;
const paths: ReadonlySet<string> = new Set(Object.values(WebhookPaths));

export class WebhookServer {
  private server: http2.Http2SecureServer | undefined;
  private readonly sessions = new Set<http2.ServerHttp2Session>();
  private draining = false;
  private readonly latency: Histogram | undefined;
  /** The resourceVersion of the Secret whose certificates are being served. */
  servingVersion: string | undefined;

  constructor(private readonly opts: WebhookServerOptions) {
    this.latency = opts.registry
      ? new Histogram({
          name: 'tidal_webhook_admission_duration_seconds',
          help: 'Time to answer one AdmissionReview, by path and verdict',
          labelNames: ['path', 'allowed'],
          buckets: [0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1],
          registers: [opts.registry],
        })
      : undefined;
  }

  /** Starts listening with `certs`; resolves once the port is bound. */
  async listen(certs: WebhookCertificates, version: string): Promise<void> {
    const server = http2.createSecureServer({ key: certs.keyPem, cert: certs.certPem, allowHTTP1: true });
    server.on('session', (session) => {
      this.sessions.add(session);
      session.on('stream', (stream) => lastStreamIds.set(session, Math.max(lastStreamIds.get(session) ?? 0, stream.id ?? 0)));
      session.on('close', () => this.sessions.delete(session));
    });
    server.on('request', (req: Request, res: Response) => this.handle(req, res));
    this.server = server;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.opts.port, this.opts.host, () => {
        server.off('error', reject);
        resolve();
      });
    });
    this.servingVersion = version;
    this.opts.log.info({ port: this.opts.port, host: this.opts.host, secretVersion: version }, 'admission webhook serving');
  }

  /** Serves `certs` to every new connection from now on. */
  useCertificates(certs: WebhookCertificates, version: string): void {
    this.server?.setSecureContext({ key: certs.keyPem, cert: certs.certPem });
    this.servingVersion = version;
    this.opts.log.info({ secretVersion: version }, 'admission webhook certificates reloaded');
  }

  /** The bound port (the one asked for, or the kernel's pick when that was 0). */
  get port(): number | undefined {
    const a = this.server?.address();
    return typeof a === 'object' && a !== null ? a.port : undefined;
  }

  get listening(): boolean {
    return this.server?.listening === true && !this.draining;
  }

  /** Stops taking part: clients are asked to go elsewhere, in-flight requests finish. */
  beginDrain(): void {
    if (this.draining) return;
    this.draining = true;
    for (const s of this.sessions) goAway(s);
    this.opts.log.info({ sessions: this.sessions.size }, 'admission webhook draining');
  }

  /** Closes the listener and waits (at most `graceMs`) for open connections to end. */
  async close(graceMs = 5000): Promise<void> {
    this.beginDrain();
    const server = this.server;
    if (!server) return;
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    // Sessions told to go away end now, once their open streams are answered (the clients have had the drain period
    // to move on); whatever is still open after `graceMs` is cut.
    for (const s of this.sessions) if (!s.closed && !s.destroyed) s.close();
    const timer = setTimeout(() => {
      for (const s of this.sessions) s.destroy();
    }, graceMs);
    await closed;
    clearTimeout(timer);
  }

  private handle(req: Request, res: Response): void {
    const started = process.hrtime.bigint();
    const path = (req.url ?? '').split('?')[0] ?? '';
    const h2 = req.httpVersion === '2.0';
    const done = (status: number, body: string, allowed: string) => {
      if (!h2 && this.draining) res.setHeader('Connection', 'close');
      res.writeHead(status, { 'Content-Type': 'application/json' });
      res.end(body);
      if (this.latency) this.latency.observe({ path, allowed }, Number(process.hrtime.bigint() - started) / 1e9);
      // A session that brought a request while draining is told to go away once it is answered.
      if (h2 && this.draining) {
        const session = (req as http2.Http2ServerRequest).stream.session;
        if (session) goAway(session);
      }
    };
    if (req.method !== 'POST' || !paths.has(path)) return done(404, JSON.stringify({ error: `no webhook at ${req.method ?? ''} ${path}` }), 'none');
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size <= MAX_BODY_BYTES) chunks.push(c);
    });
    req.on('end', () => {
      if (size > MAX_BODY_BYTES) return done(413, JSON.stringify({ error: 'AdmissionReview too large' }), 'none');
      let review: AdmissionReview;
      try {
        review = JSON.parse(Buffer.concat(chunks).toString('utf8')) as AdmissionReview;
      } catch {
        return done(400, JSON.stringify({ error: 'body is not JSON' }), 'none');
      }
      const out = reviewAdmission(path as WebhookPath, review, this.opts.config());
      const fields = { path, kind: out.kind, namespace: out.namespace, name: out.name, operation: out.operation };
      if (!out.response.allowed) this.opts.log.info({ ...fields, message: out.response.status?.message }, 'admission refused');
      else this.opts.log.debug({ ...fields, patchOps: out.changes }, 'admitted');
      done(200, JSON.stringify(reviewResponse(out.response)), String(out.response.allowed));
    });
    req.on('error', (err: Error) => this.opts.log.warn({ err, path }, 'admission request failed'));
  }
}

/** The highest stream id each session has opened: what its GOAWAY names as the last one the server takes. */
const lastStreamIds = new WeakMap<http2.Http2Session, number>();
const toldToGoAway = new WeakSet<http2.Http2Session>();

/**
 * GOAWAY naming the last stream the server took; the connection stays open. A client retries any later request on a
 * new connection and closes this one itself. Closing the socket here as well would race a request the client is
 * writing at that moment: it would fail with a broken pipe instead of being retried (seen as an apply refused
 * "failed calling webhook … write: broken pipe" while a replica drained). The socket is closed at the end of the
 * drain (`close`).
 */
function goAway(session: http2.Http2Session): void {
  if (session.closed || session.destroyed || toldToGoAway.has(session)) return;
  toldToGoAway.add(session);
  session.goaway(http2.constants.NGHTTP2_NO_ERROR, lastStreamIds.get(session) ?? 0);
}
