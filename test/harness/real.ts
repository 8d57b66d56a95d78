// Helpers for the real layer: kubectl against the stack with a real node, and HTTP requests through its ingress's
// loopback entry points with the Host a Knative URL names — as a user would `curl -H 'Host: …' 127.0.0.1:<port>`.
import http from 'node:http';
import { afterAll, beforeAll, inject } from 'vitest';
import { kubectl as runKubectl } from '../../dev/stack.js';
import { eventually } from './wait.js';
import { apiGet, parseGet } from './api-read.js';

export function realStack() {
  return inject('realStack');
}

export function kubectl(args: string[], input?: string): Promise<string> {
  return runKubectl(realStack(), args, input);
}

export async function kubectlJson<T = Record<string, unknown>>(args: string[]): Promise<T> {
  const get = parseGet(args);
  if (get) return (await apiGet(realStack().kubeconfig, get)) as T;
  return JSON.parse(await kubectl([...args, '-o', 'json'])) as T;
}

export async function apply(manifest: object, namespace: string): Promise<void> {
  await kubectl(['apply', '-n', namespace, '-f', '-'], JSON.stringify(manifest));
}

/** What Knative's pizzaplanet test images answer: two Revisions told apart by their bodies. */
export const PizzaPlanet = { v1: 'What a spaceport!', v2: 'Re-energize yourself with a slice of pepperoni!' } as const;

/** The test file's own namespace: made fresh before its tests, deleted after them. */
export function useNamespace(name: string): string {
  beforeAll(async () => {
    await createNamespace(name);
  });
  afterAll(async () => {
    await deleteNamespace(name);
  });
  return name;
}

/** A fresh namespace for one test file; `deleteNamespace` when done. */
export async function createNamespace(name: string): Promise<void> {
  await kubectl(['delete', 'namespace', name, '--ignore-not-found', '--wait=true', '--timeout=120s']);
  await kubectl(['create', 'namespace', name]);
}

export async function deleteNamespace(name: string): Promise<void> {
  await kubectl(['delete', 'namespace', name, '--ignore-not-found', '--wait=false']);
}

/** `<registry>/knative/<name>:latest`: one of Knative's test images as the stack pushed it (Tidal resolves the tag). */
export function image(name: string): string {
  const s = realStack();
  if (!s.images[name]) throw new Error(`no image ${name} in the stack's registry`);
  return `${s.registryHost}/knative/${name}:latest`;
}

export interface Condition {
  type: string;
  status?: string;
  reason?: string;
  message?: string;
}

export interface KService {
  metadata: { name: string; generation?: number };
  status?: {
    url?: string;
    observedGeneration?: number;
    latestCreatedRevisionName?: string;
    latestReadyRevisionName?: string;
    conditions?: Condition[];
    traffic?: { revisionName?: string; percent?: number; tag?: string; url?: string }[];
  };
}

export const condition = (o: { status?: { conditions?: Condition[] } } | undefined, type: string) =>
  o?.status?.conditions?.find((c) => c.type === type);

/** Waits until the Service's status reflects its latest spec and says Ready, and returns it. */
export async function serviceReady(name: string, namespace: string, timeoutMs = 180_000): Promise<KService> {
  return eventually(
    `ksvc ${namespace}/${name} Ready`,
    async () => {
      const s = await kubectlJson<KService>(['get', 'ksvc', name, '-n', namespace]);
      return s.status?.observedGeneration === s.metadata.generation && condition(s, 'Ready')?.status === 'True' ? s : undefined;
    },
    timeoutMs,
  );
}

/** The host of a Knative URL (`http://hello.ns.127.0.0.1.sslip.io` → `hello.ns.127.0.0.1.sslip.io`). */
export const hostOf = (url: string | undefined): string => new URL(url ?? '').host;

export interface Response {
  status: number;
  body: string;
  headers: http.IncomingHttpHeaders;
  /** Set when the request failed before a response (connection refused or reset, timeout). */
  error?: string;
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 16 });

/**
 * One request through the ingress: to the public entry point, or to the cluster-local one with `private`. Never
 * throws: a failed exchange is a Response with status 0 and `error`.
 */
export function request(
  host: string,
  opts: { path?: string; private?: boolean; headers?: Record<string, string>; timeoutMs?: number } = {},
): Promise<Response> {
  const ports = realStack().ports;
  const port = opts.private ? ports.ingressPrivate : ports.ingress;
  return new Promise((resolve) => {
    const req = http.get(
      { host: '127.0.0.1', port, path: opts.path ?? '/', agent, headers: { Host: host, ...opts.headers }, timeout: opts.timeoutMs ?? 30_000 },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8'), headers: res.headers }));
        res.on('error', (err) => resolve({ status: 0, body: '', headers: {}, error: err.message }));
      },
    );
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', (err) => resolve({ status: 0, body: '', headers: {}, error: err.message }));
  });
}

export interface Tally {
  total: number;
  /** Responses by body (trimmed), among the 200s. */
  bodies: Map<string, number>;
  /** Requests that did not end in 200: status (0 for a failed exchange) and body or error, as seen. */
  failures: { status: number; detail: string }[];
}

/** `n` requests, `concurrency` at a time, tallied by body. */
export async function tally(host: string, n: number, opts: { concurrency?: number; private?: boolean; path?: string } = {}): Promise<Tally> {
  const t: Tally = { total: 0, bodies: new Map(), failures: [] };
  let next = 0;
  const worker = async () => {
    while (next < n) {
      next++;
      const r = await request(host, opts);
      t.total++;
      if (r.status === 200) {
        const b = r.body.trim();
        t.bodies.set(b, (t.bodies.get(b) ?? 0) + 1);
      } else t.failures.push({ status: r.status, detail: r.error ?? r.body.slice(0, 200) });
    }
  };
  await Promise.all(Array.from({ length: opts.concurrency ?? 8 }, worker));
  return t;
}

/**
 * Keeps requesting `host` until `stop` resolves, and records each response with its time: the traffic a user's
 * client would see during a rollout, a restart or a garbage collection.
 */
export async function traffic(
  host: string,
  stop: Promise<unknown>,
  opts: { concurrency?: number; private?: boolean } = {},
): Promise<{ at: number; status: number; body: string; error?: string }[]> {
  const seen: { at: number; status: number; body: string; error?: string }[] = [];
  let done = false;
  void stop.finally(() => {
    done = true;
  });
  const worker = async () => {
    while (!done) {
      const r = await request(host, opts);
      seen.push({ at: Date.now(), status: r.status, body: r.body.trim(), ...(r.error ? { error: r.error } : {}) });
    }
  };
  await Promise.all(Array.from({ length: opts.concurrency ?? 4 }, worker));
  return seen;
}

/** A DomainMapping of `domain` to the Knative Service `service` of namespace `namespace`. */
export function domainMapping(domain: string, service: string, namespace: string): object {
  return {
    apiVersion: 'serving.knative.dev/v1beta1',
    kind: 'DomainMapping',
    metadata: { name: domain },
    spec: { ref: { apiVersion: 'serving.knative.dev/v1', kind: 'Service', name: service, namespace } },
  };
}

/** A Knative Service of one container. */
export function ksvc(
  name: string,
  container: Record<string, unknown>,
  opts: {
    annotations?: Record<string, string>;
    labels?: Record<string, string>;
    templateAnnotations?: Record<string, string>;
    traffic?: object[];
    revisionName?: string;
  } = {},
): object {
  return {
    apiVersion: 'serving.knative.dev/v1',
    kind: 'Service',
    metadata: { name, ...(opts.annotations ? { annotations: opts.annotations } : {}), ...(opts.labels ? { labels: opts.labels } : {}) },
    spec: {
      template: {
        ...(opts.templateAnnotations || opts.revisionName
          ? {
              metadata: {
                ...(opts.revisionName ? { name: opts.revisionName } : {}),
                ...(opts.templateAnnotations ? { annotations: opts.templateAnnotations } : {}),
              },
            }
          : {}),
        spec: { containers: [container] },
      },
      ...(opts.traffic ? { traffic: opts.traffic } : {}),
    },
  };
}
