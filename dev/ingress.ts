// The real node's ingress: Traefik (dev/build-traefik.sh) with its Knative provider, run inside the node's network
// namespace, where it reaches the API server through the node's forward and the pods directly. Its entry points
// listen on the namespace's 127.0.0.1; the stack forwards the host's `ports.ingress` and `ports.ingressPrivate` to them.
import { execFile } from 'node:child_process';
import http from 'node:http';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import type { RealNode } from './node.js';
import { ProcessTable, tail } from './processes.js';
import { traefikEnv, traefikKubeconfig, traefikStaticConfig } from './traefik.js';

const run = promisify(execFile);
const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/**
 * Entry points inside the node's namespace: public (ExternalIP rules), cluster-local, and Traefik's /ping and API.
 * Not 8080: upstream Knative's autoscaler, run in the same namespace (dev/upstream-serving.ts), has that port fixed.
 */
export const TRAEFIK_PUBLIC_PORT = 8180;
export const TRAEFIK_PRIVATE_PORT = 8181;
/** Public rules over TLS (the KIngresses' spec.tls certificates). */
export const TRAEFIK_SECURE_PORT = 8183;
export const TRAEFIK_ADMIN_PORT = 8182;
/** The Services whose names Traefik writes into KIngress status (the Route's placeholder Service points at them). */
export const INGRESS_NAMESPACE = 'tidal-ingress';
export const IngressServices = { public: 'traefik-public', private: 'traefik-private' } as const;

export interface IngressStack {
  dir: string;
  kubeconfig: string;
  ports: { apiserver: number; ingress?: number; ingressTls?: number };
  bins: { KUBECTL: string };
}

/** Builds (or reuses) Traefik; returns the binary's path. */
export async function ensureTraefik(log: (s: string) => void): Promise<string> {
  const { stdout, stderr } = await run('bash', [path.join(repoRoot, 'dev', 'build-traefik.sh')], { maxBuffer: 16 * 1024 * 1024 });
  stderr
    .split('\n')
    .filter((l) => l.startsWith('[toolchain]'))
    .forEach((l) => log(l));
  const bin = /^TRAEFIK=(.+)$/m.exec(stdout)?.[1];
  if (!bin) throw new Error(`dev/build-traefik.sh printed no TRAEFIK= line:\n${stdout}\n${stderr}`);
  return bin;
}

/** The status code of GET `url` with `host` as the Host header, or 0 when nothing answers. */
export function httpStatus(url: string, host?: string): Promise<number> {
  return new Promise((resolve) => {
    const req = http.get(url, { timeout: 2000, ...(host ? { headers: { Host: host } } : {}) }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', () => resolve(0));
    req.on('timeout', () => {
      req.destroy();
      resolve(0);
    });
  });
}

/** The two Services the KIngress status names, so those names resolve to objects a user can look at. */
function ingressServices(): string {
  const svc = (name: string, port: number) => ({
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name, namespace: INGRESS_NAMESPACE, labels: { 'app.kubernetes.io/name': 'traefik' } },
    spec: { type: 'ClusterIP', ports: [{ name: 'http', port: 80, targetPort: port }] },
  });
  return JSON.stringify({
    apiVersion: 'v1',
    kind: 'List',
    items: [
      { apiVersion: 'v1', kind: 'Namespace', metadata: { name: INGRESS_NAMESPACE } },
      svc(IngressServices.public, TRAEFIK_PUBLIC_PORT),
      svc(IngressServices.private, TRAEFIK_PRIVATE_PORT),
    ],
  });
}

/**
 * Starts Traefik in the node's namespace (or keeps the one running) and waits until its public entry point answers
 * through the host's forward. It talks to the API server with the stack's admin client certificate.
 */
export async function startTraefik(stack: IngressStack, node: RealNode, log: (s: string) => void): Promise<void> {
  const procs = new ProcessTable(stack.dir);
  const kubectl = (args: string[], input?: string) =>
    new Promise<string>((resolve, reject) => {
      const child = execFile(stack.bins.KUBECTL, ['--kubeconfig', stack.kubeconfig, ...args], (err, stdout, stderr) =>
        err ? reject(new Error(`kubectl ${args.join(' ')}: ${stderr || err.message}`)) : resolve(stdout),
      );
      if (input !== undefined) child.stdin?.end(input);
    });
  await kubectl(['apply', '-f', '-'], ingressServices());
  if (!procs.running('traefik')) {
    const bin = await ensureTraefik(log);
    const dir = path.join(stack.dir, 'traefik');
    mkdirSync(dir, { recursive: true });
    const pki = path.join(stack.dir, 'pki');
    const apiserverUrl = `https://127.0.0.1:${stack.ports.apiserver}`;
    const kubeconfig = path.join(dir, 'kubeconfig');
    writeFileSync(
      kubeconfig,
      traefikKubeconfig({
        apiserverUrl,
        caFile: path.join(pki, 'ca.crt'),
        certFile: path.join(pki, 'admin.crt'),
        keyFile: path.join(pki, 'admin.key'),
      }),
      { mode: 0o600 },
    );
    const config = path.join(dir, 'traefik.yaml');
    writeFileSync(
      config,
      traefikStaticConfig({
        apiserverUrl,
        caFile: path.join(pki, 'ca.crt'),
        webPort: TRAEFIK_PUBLIC_PORT,
        privatePort: TRAEFIK_PRIVATE_PORT,
        ...(stack.ports.ingressTls !== undefined ? { securePort: TRAEFIK_SECURE_PORT } : {}),
        adminPort: TRAEFIK_ADMIN_PORT,
        publicServiceHost: `${IngressServices.public}.${INGRESS_NAMESPACE}`,
        privateServiceHost: `${IngressServices.private}.${INGRESS_NAMESPACE}`,
        accessLog: path.join(stack.dir, 'logs', 'traefik-access.log'),
      }),
    );
    log(`starting traefik in the node's namespace`);
    procs.start(
      'traefik',
      'nsenter',
      ['-t', String(node.holderPid), '-n', '--', bin, `--configFile=${config}`],
      traefikEnv(process.env, kubeconfig),
      undefined,
      bin,
    );
  }
  const started = Date.now();
  // Traefik answers 404 on its public entry point for a host no KIngress names: it serves, and the forward works.
  while ((await httpStatus(`http://127.0.0.1:${stack.ports.ingress ?? 0}/`, 'tidal-probe.invalid')) !== 404) {
    // nsenter becomes Traefik a moment after its start: until then the table does not find it running.
    const rec = procs.running('traefik');
    if (Date.now() > started + 60_000 || (!rec && Date.now() > started + 5_000)) {
      const log = path.join(stack.dir, 'logs', 'traefik.log');
      throw new Error(
        `traefik did not serve on 127.0.0.1:${stack.ports.ingress ?? 0}${rec ? '' : ' (it is not running)'}; last lines:\n${tail(log)}`,
      );
    }
    await new Promise((r) => setTimeout(r, 250));
  }
}
