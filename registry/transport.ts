// HTTP for the registry client: node:http / node:https (the extra CA goes straight into the https Agent), or an
// injected fetch. Redirects are followed here (at most 5) and the Authorization header is dropped whenever a
// redirect leaves the origin it was meant for. Bodies are capped: manifests and token answers are small.
import http from 'node:http';
import https from 'node:https';
import tls from 'node:tls';

export interface HttpRequest {
  method: 'GET' | 'HEAD' | 'POST';
  url: URL;
  headers: Record<string, string>;
  body?: string;
  signal: AbortSignal;
}

export interface HttpResponse {
  status: number;
  /** Lower-case header names; repeated headers joined with ', '. */
  headers: Record<string, string>;
  body: Buffer;
}

export type HttpSend = (req: HttpRequest) => Promise<HttpResponse>;

export type FetchLike = (input: string, init: RequestInit) => Promise<Response>;

export interface TransportOptions {
  extraCAPem?: string;
  fetchImpl?: FetchLike;
  maxBodyBytes?: number;
}

export interface Transport {
  send: HttpSend;
  close(): void;
}

const MAX_REDIRECTS = 5;

export function makeTransport(opts: TransportOptions = {}): Transport {
  const maxBody = opts.maxBodyBytes ?? 8 * 1024 * 1024;
  const httpAgent = new http.Agent({ keepAlive: true });
  const httpsAgent = new https.Agent({
    keepAlive: true,
    ...(opts.extraCAPem ? { ca: [...tls.rootCertificates, opts.extraCAPem] } : {}),
  });
  const once: HttpSend = opts.fetchImpl
    ? fetchSend(opts.fetchImpl, maxBody)
    : (req) => nodeSend(req, req.url.protocol === 'https:' ? httpsAgent : httpAgent, maxBody);

  const send: HttpSend = async (first) => {
    let req = first;
    for (let hop = 0; ; hop++) {
      const res = await once(req);
      const location = res.headers['location'];
      if (![301, 302, 303, 307, 308].includes(res.status) || !location || hop >= MAX_REDIRECTS) return res;
      const next = new URL(location, req.url);
      const headers = { ...req.headers };
      if (next.origin !== req.url.origin) delete headers['Authorization'];
      const keepMethod = res.status === 307 || res.status === 308 || req.method !== 'POST';
      req = keepMethod ? { ...req, url: next, headers } : { method: 'GET', url: next, headers, signal: req.signal };
    }
  };
  return {
    send,
    close() {
      httpAgent.destroy();
      httpsAgent.destroy();
    },
  };
}

function nodeSend(req: HttpRequest, agent: http.Agent, maxBody: number): Promise<HttpResponse> {
  const mod = req.url.protocol === 'https:' ? https : http;
  return new Promise<HttpResponse>((resolve, reject) => {
    const r = mod.request(req.url, { method: req.method, headers: req.headers, agent, signal: req.signal }, (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (c: Buffer) => {
        size += c.length;
        if (size > maxBody) res.destroy(new Error(`response larger than ${maxBody} bytes`));
        else chunks.push(c);
      });
      res.on('error', reject);
      res.on('aborted', () => reject(new Error('connection closed before the response was complete')));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: flatHeaders(res.headers), body: Buffer.concat(chunks) }));
    });
    r.on('error', reject);
    r.end(req.body);
  });
}

function flatHeaders(h: http.IncomingHttpHeaders): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(h)) if (v !== undefined) out[k.toLowerCase()] = Array.isArray(v) ? v.join(', ') : v;
  return out;
}

function fetchSend(fetchImpl: FetchLike, maxBody: number): HttpSend {
  return async (req) => {
    const res = await fetchImpl(req.url.toString(), {
      method: req.method,
      headers: req.headers,
      redirect: 'manual',
      signal: req.signal,
      ...(req.body !== undefined ? { body: req.body } : {}),
    });
    const headers: Record<string, string> = {};
    res.headers.forEach((v, k) => (headers[k.toLowerCase()] = v));
    const body = req.method === 'HEAD' ? Buffer.alloc(0) : Buffer.from(await res.arrayBuffer());
    if (body.length > maxBody) throw new Error(`response larger than ${maxBody} bytes`);
    return { status: res.status, headers, body };
  };
}
