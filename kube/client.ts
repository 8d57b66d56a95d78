// A small Kubernetes REST client: get, list, watch, server-side apply (objects and /status), create, update, delete.
// kubeconfig.ts supplies the server, TLS material and credentials; requests go over node:https (one keep-alive agent
// holding the TLS material, the bearer token set per request) so that watches stream and every verb is explicit.
import http from 'node:http';
import https from 'node:https';
import { loadKubeCredentials, type KubeCredentials } from './kubeconfig.js';
import { resourcePath, type ResourceType } from '../api/kinds.js';
import type { KubeObject } from '../api/meta.js';
import { KubeApiError } from './errors.js';
import { stepHooks } from './step-hooks.js';
import type { ObjectMemo } from './recent-objects.js';

export interface ListResult<T> {
  items: T[];
  resourceVersion: string;
  /** More to read: the token for the next page of a list read with `limit` (absent on the last page). */
  continue?: string;
}

export interface WatchEvent<T> {
  type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';
  object: T;
}

export interface RequestOptions {
  labelSelector?: string;
  fieldSelector?: string;
  signal?: AbortSignal;
}

/** A list read in pages: at most `limit` items, from where the previous page's `continue` token left off. */
export interface PageOptions {
  limit?: number;
  continue?: string;
}

export interface KubeClientOptions {
  kubeconfig?: string | undefined; // a path; default: $KUBECONFIG, ~/.kube/config, then in-cluster
  /** Ready credentials instead of a kubeconfig (tests). */
  credentials?: KubeCredentials;
  fieldManager: string;
  timeoutMs?: number;
  /** Called after every request (not watches), e.g. to count API calls per verb and resource and time them. */
  onRequest?: (verb: string, plural: string, status: number, seconds: number) => void;
  /** Objects just read or written, served again to a GET while the watch cache vouches for them (recent-objects.ts). */
  memo?: ObjectMemo;
}

interface RawResponse {
  status: number;
  body: string;
}

export class KubeClient {
  private readonly server: URL;
  private readonly token: () => string | undefined;
  readonly fieldManager: string;
  private readonly timeoutMs: number;
  private readonly agent: http.Agent;
  private readonly onRequest: KubeClientOptions['onRequest'];
  private readonly memo: ObjectMemo | undefined;

  constructor(opts: KubeClientOptions) {
    this.onRequest = opts.onRequest;
    this.memo = opts.memo;
    const creds = opts.credentials ?? loadKubeCredentials({ kubeconfig: opts.kubeconfig });
    this.server = creds.server;
    this.token = creds.token;
    this.fieldManager = opts.fieldManager;
    this.timeoutMs = opts.timeoutMs ?? 30_000;
    // The TLS material lives in the one agent, so pooled connections are reused and nothing is parsed per request.
    this.agent =
      this.server.protocol === 'https:'
        ? new https.Agent({
            keepAlive: true,
            ...(creds.ca ? { ca: creds.ca } : {}),
            ...(creds.cert && creds.key ? { cert: creds.cert, key: creds.key } : {}),
            ...(creds.tlsServerName ? { servername: creds.tlsServerName } : {}),
            rejectUnauthorized: !creds.insecureSkipTLSVerify,
          })
        : new http.Agent({ keepAlive: true });
  }

  async get<T extends KubeObject>(type: ResourceType, namespace: string, name: string): Promise<T | undefined> {
    const memo = this.memo?.lookup(type, namespace, name);
    if (memo !== undefined) return this.noted(type, JSON.parse(memo) as T, 'read');
    const res = await this.request('GET', resourcePath(type, namespace, name));
    if (res.status === 404) {
      this.memo?.forget(type, namespace, name);
      // Absence is an observation too: a step that found nothing must not let a later step's find look settled.
      stepHooks().absent(type, namespace, name);
      return undefined;
    }
    return this.noted(type, this.parse<T>('GET', resourcePath(type, namespace, name), res, type), 'read');
  }

  /**
   * A list, whole, or one page of it with `limit` (the pages of one list are one snapshot: every page has the first's
   * resourceVersion, and a `continue` token older than the server's history fails with 410 Gone).
   */
  async list<T extends KubeObject>(type: ResourceType, namespace?: string, opts: RequestOptions & PageOptions = {}): Promise<ListResult<T>> {
    const path =
      resourcePath(type, namespace) +
      query({
        labelSelector: opts.labelSelector,
        fieldSelector: opts.fieldSelector,
        limit: opts.limit === undefined ? undefined : String(opts.limit),
        continue: opts.continue,
      });
    const list = this.parse<{ items: T[]; metadata: { resourceVersion: string; continue?: string } }>('LIST', path, await this.request('GET', path));
    const apiVersion = type.group === '' ? type.version : `${type.group}/${type.version}`;
    // List items carry no apiVersion/kind; fill them in so callers can treat items as whole objects.
    for (const item of list.items) {
      item.apiVersion ??= apiVersion;
      item.kind ??= type.kind;
      stepHooks().object(type, item, 'read', list.items.length);
    }
    return {
      items: list.items,
      resourceVersion: list.metadata.resourceVersion,
      ...(list.metadata.continue ? { continue: list.metadata.continue } : {}),
    };
  }

  /** Server-side apply of `obj` (or of its status with `subresource: 'status'`) under Tidal's field manager. */
  async apply<T extends KubeObject>(type: ResourceType, obj: T, subresource?: 'status'): Promise<T> {
    const path =
      resourcePath(type, obj.metadata.namespace, obj.metadata.name, subresource) + query({ fieldManager: this.fieldManager, force: 'true' });
    const res = await this.request('PATCH', path, JSON.stringify(obj), 'application/apply-patch+yaml');
    // A status write is a read of the object as far as observations go: its spec may have moved on meanwhile.
    // A status write changes nothing a list selects by (labels, annotations): only spec and metadata writes count.
    return this.noted(type, this.parse<T>('APPLY', path, res, type), subresource ? 'status' : 'write', subresource === undefined);
  }

  async create<T extends KubeObject>(type: ResourceType, obj: T): Promise<T> {
    const path = resourcePath(type, obj.metadata.namespace) + query({ fieldManager: this.fieldManager });
    const res = await this.request('POST', path, JSON.stringify(obj), 'application/json');
    return this.noted(type, this.parse<T>('CREATE', path, res, type), 'create', true);
  }

  /** PUT of a whole object; its `metadata.resourceVersion` makes the write conditional (409 Conflict when it changed). */
  async replace<T extends KubeObject>(type: ResourceType, obj: T): Promise<T> {
    const path = resourcePath(type, obj.metadata.namespace, obj.metadata.name) + query({ fieldManager: this.fieldManager });
    return this.parse<T>('PUT', path, await this.request('PUT', path, JSON.stringify(obj), 'application/json'), type);
  }

  /**
   * PUT of a child Tidal owns, the live object with its owned parts replaced (activities/apply.ts `replaceOver`): the
   * write that removes what other writers added. Conditional on `metadata.resourceVersion`; observed as an apply.
   */
  async update<T extends KubeObject>(type: ResourceType, obj: T): Promise<T> {
    const path = resourcePath(type, obj.metadata.namespace, obj.metadata.name) + query({ fieldManager: this.fieldManager });
    const res = await this.request('PUT', path, JSON.stringify(obj), 'application/json');
    return this.noted(type, this.parse<T>('UPDATE', path, res, type), 'write', true);
  }

  /** JSON merge patch, for the few writes that must remove fields another manager set. */
  async mergePatch<T extends KubeObject>(type: ResourceType, namespace: string, name: string, patch: unknown): Promise<T> {
    const path = resourcePath(type, namespace, name) + query({ fieldManager: this.fieldManager });
    const res = await this.request('PATCH', path, JSON.stringify(patch), 'application/merge-patch+json');
    return this.noted(type, this.parse<T>('PATCH', path, res, type), 'read', true);
  }

  /**
   * Deletes an object; returns false when it was already gone. With `preconditions` the API server deletes it only
   * while its uid and resourceVersion are those (a 409 Conflict otherwise).
   */
  async delete(
    type: ResourceType,
    namespace: string,
    name: string,
    propagationPolicy = 'Background',
    preconditions?: { uid?: string; resourceVersion?: string },
  ): Promise<boolean> {
    const path = resourcePath(type, namespace, name);
    const res = await this.request(
      'DELETE',
      path,
      JSON.stringify({ kind: 'DeleteOptions', apiVersion: 'v1', propagationPolicy, ...(preconditions ? { preconditions } : {}) }),
      'application/json',
    );
    this.memo?.forget(type, namespace, name);
    if (res.status === 404) return false;
    this.parse('DELETE', path, res);
    return true;
  }

  /**
   * Streams watch events from `resourceVersion` to `onEvent` until the server closes the stream, the signal aborts,
   * or an error occurs (rejected; a 410 Gone arrives as a KubeApiError with code 410).
   */
  async watch<T extends KubeObject>(
    type: ResourceType,
    opts: RequestOptions & { namespace?: string; resourceVersion: string; timeoutSeconds?: number },
    onEvent: (ev: WatchEvent<T>) => void,
  ): Promise<void> {
    const path =
      resourcePath(type, opts.namespace) +
      query({
        watch: '1',
        allowWatchBookmarks: 'true',
        resourceVersion: opts.resourceVersion,
        timeoutSeconds: String(opts.timeoutSeconds ?? 300),
        labelSelector: opts.labelSelector,
        fieldSelector: opts.fieldSelector,
      });
    const req = this.open('GET', path, opts.signal);
    await new Promise<void>((resolve, reject) => {
      req.on('response', (res) => {
        if ((res.statusCode ?? 0) >= 300) {
          let body = '';
          res.setEncoding('utf8');
          res.on('data', (c: string) => (body += c));
          res.on('end', () => reject(apiError('WATCH', path, res.statusCode ?? 0, body)));
          return;
        }
        let buf = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          buf += chunk;
          let nl: number;
          while ((nl = buf.indexOf('\n')) >= 0) {
            const line = buf.slice(0, nl).trim();
            buf = buf.slice(nl + 1);
            if (line === '') continue;
            const ev = JSON.parse(line) as WatchEvent<T>;
            if (ev.type === 'ERROR') {
              const st = ev.object as unknown as { code?: number; reason?: string; message?: string };
              res.destroy();
              reject(new KubeApiError(st.code ?? 500, st.reason ?? 'WatchError', st.message ?? '', 'WATCH', path));
              return;
            }
            onEvent(ev);
          }
        });
        res.on('end', () => resolve());
        res.on('error', reject);
      });
      req.on('error', (err) => (opts.signal?.aborted ? resolve() : reject(err)));
      req.end();
    });
  }

  close(): void {
    this.agent.destroy();
  }

  /** Every object read or written is reported to the running step (step-hooks.ts). */
  private noted<T>(type: ResourceType, obj: T, how: 'read' | 'write' | 'create' | 'status', written = false): T {
    stepHooks().object(type, obj as KubeObject, how);
    if (written || how === 'status') stepHooks().written(type, obj as KubeObject, how === 'status');
    return obj;
  }

  /** The response's object; with `remember`, an object of that type the memo may serve again. */
  private parse<T>(verb: string, path: string, res: RawResponse, remember?: ResourceType): T {
    if (res.status < 200 || res.status >= 300) throw apiError(verb, path, res.status, res.body);
    const obj = JSON.parse(res.body) as T;
    if (remember && this.memo) this.memo.remember(remember, obj as KubeObject, res.body);
    return obj;
  }

  private open(method: string, path: string, signal?: AbortSignal, contentType?: string, body?: string): http.ClientRequest {
    const token = this.token();
    const opts: https.RequestOptions = {
      method,
      protocol: this.server.protocol,
      hostname: this.server.hostname.replace(/^\[(.*)\]$/, '$1'), // an IPv6 literal without its URL brackets
      port: this.server.port || (this.server.protocol === 'https:' ? 443 : 80),
      path: this.server.pathname.replace(/\/$/, '') + path,
      headers: {
        Accept: 'application/json',
        ...(token ? { Authorization: `Bearer ${token}` } : {}),
        ...(contentType ? { 'Content-Type': contentType } : {}),
        // Node frames no DELETE body by itself: without a length the body would be read as the next request.
        ...(body !== undefined ? { 'Content-Length': Buffer.byteLength(body) } : {}),
      },
      agent: this.agent,
      ...(signal ? { signal } : {}),
    };
    const mod = this.server.protocol === 'https:' ? https : http;
    return mod.request(opts);
  }

  private request(method: string, path: string, body?: string, contentType?: string): Promise<RawResponse> {
    // A step whose attempt was abandoned writes nothing more (step-hooks.ts `live`), and what it has under
    // way is cut off: the attempt that counts runs elsewhere, on fresher reads.
    if (method !== 'GET') stepHooks().live();
    const step = stepHooks().signal();
    const timeout = AbortSignal.timeout(this.timeoutMs);
    const signal = step ? AbortSignal.any([timeout, step]) : timeout;
    const started = performance.now();
    const req = this.open(method, path, signal, contentType, body);
    return new Promise<RawResponse>((resolve, reject) => {
      req.on('response', (res) => {
        let data = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (data += c));
        res.on('end', () => {
          this.onRequest?.(method, pluralOf(path), res.statusCode ?? 0, (performance.now() - started) / 1000);
          resolve({ status: res.statusCode ?? 0, body: data });
        });
        res.on('error', reject);
      });
      req.on('error', reject);
      if (body !== undefined) req.write(body);
      req.end();
    });
  }
}

/** The resource plural of a REST path (`/apis/g/v/namespaces/ns/services/x/status` → `services`). */
function pluralOf(path: string): string {
  const parts = path
    .split('?')[0]!
    .split('/')
    .filter((s) => s !== '');
  const i = parts.indexOf('namespaces');
  const rest = i >= 0 ? parts.slice(i + 2) : parts.slice(parts[0] === 'api' ? 2 : 3);
  return rest[0] ?? '';
}

function query(params: Record<string, string | undefined>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== '') q.set(k, v);
  const s = q.toString();
  return s === '' ? '' : `?${s}`;
}

function apiError(verb: string, path: string, code: number, body: string): KubeApiError {
  try {
    const st = JSON.parse(body) as { reason?: string; message?: string };
    return new KubeApiError(code, st.reason ?? 'Unknown', st.message ?? body, verb, path);
  } catch {
    return new KubeApiError(code, 'Unknown', body.slice(0, 500), verb, path);
  }
}
