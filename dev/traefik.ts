// Traefik as a Knative ingress for the local stack: the pinned version (dev/build-traefik.sh builds it) and the static
// configuration that turns on its Knative provider against the stack's API server, with loopback entry points for
// public and cluster-local KIngress rules and an admin entry point whose /ping answers readiness.
// Traefik reaches the API server with endpoint + CA file + bearer token from this configuration only when its
// environment has neither KUBERNETES_SERVICE_HOST/PORT (in-cluster mode wins) nor KUBECONFIG (next in line):
// `traefikEnv` clears them. A client certificate can only come through a kubeconfig (`traefikKubeconfig`).
import { readFileSync } from 'node:fs';
import { stringify } from 'yaml';

/** The Traefik release dev/build-traefik.sh builds (latest v3.7.x on the Go module proxy when pinned). */
export const TRAEFIK_VERSION = 'v3.7.13';

/** The KIngress class Traefik serves: config-network `ingress-class` (or a Route's annotation) must name it. */
export const TRAEFIK_INGRESS_CLASS = 'traefik.ingress.networking.knative.dev';

/**
 * Entry point names: rules with visibility ExternalIP go to `web` (and `websecure`, where TLS is served), ClusterLocal
 * ones to `private`.
 */
export const TraefikEntryPoints = { public: 'web', secure: 'websecure', private: 'private', admin: 'traefik' } as const;

export interface TraefikConfigOptions {
  /** `https://127.0.0.1:<port>`. */
  apiserverUrl: string;
  /** The CA that signed the API server's certificate (PEM). */
  caFile: string;
  /**
   * A bearer token file, read now: Traefik's static configuration takes the token itself, not a path, so a token
   * that expires is not renewed (a kubeconfig with `tokenFile` is, see `traefikKubeconfig`). Without it Traefik
   * calls the API server anonymously, unless its environment has a KUBECONFIG.
   */
  tokenFile?: string;
  /** Listen port for public (ExternalIP) KIngress rules. */
  webPort: number;
  /** Listen port for cluster-local KIngress rules. */
  privatePort: number;
  /**
   * Listen port for public KIngress rules over TLS: the certificates of their spec.tls (HTTP is served there too, as
   * on `webPort`). Unset: no such entry point (TLS is still served on `webPort`).
   */
  securePort?: number;
  /** Listen port for GET /ping (200 once Traefik serves, 503 while it stops) and the read-only API under /api. */
  adminPort: number;
  /**
   * The Service whose DNS name Traefik writes into every KIngress's status.publicLoadBalancer: `name.namespace`,
   * optionally followed by `.svc` or `.svc.<cluster domain>`. Traefik appends the cluster domain itself (env
   * CLUSTER_DOMAIN, else the `svc.` search domain of /etc/resolv.conf, else cluster.local).
   */
  publicServiceHost?: string;
  /** Likewise for status.privateLoadBalancer (what a Route's placeholder Service points at). */
  privateServiceHost?: string;
  /** Listen address of every entry point. Default 127.0.0.1. */
  listenHost?: string;
  /** Namespaces to watch (KIngresses, Services, Secrets). Default all. */
  namespaces?: string[];
  /** Access log: true for stdout, a string for a file. Default off. */
  accessLog?: boolean | string;
  /** Default INFO. */
  logLevel?: 'TRACE' | 'DEBUG' | 'INFO' | 'WARN' | 'ERROR';
  /**
   * `providers.providersThrottleDuration`: after applying a configuration, how long Traefik waits before applying
   * the next one (Traefik's default 2s). Our overlay of the Knative provider marks a KIngress Ready once its routes
   * are live, so a shorter one makes a Route Ready sooner, at the cost of more reloads in a burst.
   */
  providersThrottle?: string;
}

/** `name.namespace[.svc[.domain]]` → the Service reference of Traefik's `publicService`/`privateService`. */
export function serviceRef(host: string): { name: string; namespace: string } {
  const [name, namespace, svc, ...rest] = host.split('.');
  if (!name || !namespace || (svc !== undefined && svc !== 'svc') || (svc === 'svc' && rest.some((l) => !l))) {
    throw new Error(`'${host}' is not a Service host (name.namespace, name.namespace.svc or name.namespace.svc.<domain>)`);
  }
  return { name, namespace };
}

/** The static configuration (YAML) for `traefik --configFile=<file>`. Write it mode 0600 when it holds a token. */
export function traefikStaticConfig(o: TraefikConfigOptions): string {
  const host = o.listenHost ?? '127.0.0.1';
  const ep = TraefikEntryPoints;
  const knative: Record<string, unknown> = {
    endpoint: o.apiserverUrl,
    certAuthFilePath: o.caFile,
    ...(o.tokenFile ? { token: readFileSync(o.tokenFile, 'utf8').trim() } : {}),
    ...(o.namespaces?.length ? { namespaces: o.namespaces } : {}),
    // Without public entry points Traefik attaches public rules to every entry point, the admin one included.
    publicEntrypoints: o.securePort !== undefined ? [ep.public, ep.secure] : [ep.public],
    // Without private entry points Traefik drops ClusterLocal rules.
    privateEntrypoints: [ep.private],
  };
  // Traefik reads the Service name from the key `name` (its JSON form calls it `desc`).
  if (o.publicServiceHost) knative.publicService = serviceRef(o.publicServiceHost);
  if (o.privateServiceHost) knative.privateService = serviceRef(o.privateServiceHost);

  const entry = (port: number) => ({
    address: `${host}:${port}`,
    // Traefik's default read timeout (60 s, for the whole request body) would cut requests that Knative lets run
    // up to max-revision-timeout-seconds (600 s by default).
    transport: { respondingTimeouts: { readTimeout: '600s' } },
  });

  const config: Record<string, unknown> = {
    // Both off: no calls to the network at start and no version checks.
    global: { checkNewVersion: false, sendAnonymousUsage: false },
    // The Knative provider refuses to start without this.
    experimental: { knative: true },
    entryPoints: {
      [ep.public]: entry(o.webPort),
      ...(o.securePort !== undefined ? { [ep.secure]: entry(o.securePort) } : {}),
      [ep.private]: entry(o.privatePort),
      [ep.admin]: { address: `${host}:${o.adminPort}` },
    },
    providers: {
      ...(o.providersThrottle ? { providersThrottleDuration: o.providersThrottle } : {}),
      knative,
    },
    ping: { entryPoint: ep.admin },
    // The read-only API on the admin entry point shows which routers are live (/api/http/routers): what to look at
    // when a request is not routed as a KIngress says.
    api: { insecure: true, dashboard: false },
    log: { level: o.logLevel ?? 'INFO' },
  };
  if (o.accessLog) config.accessLog = typeof o.accessLog === 'string' ? { filePath: o.accessLog } : {};
  return stringify(config, { lineWidth: 0 });
}

export interface TraefikKubeconfigOptions {
  apiserverUrl: string;
  caFile: string;
  /** A client certificate and its key (PEM files). */
  certFile?: string;
  keyFile?: string;
  /** A bearer token file, which client-go reads again as it changes. */
  tokenFile?: string;
}

/**
 * A kubeconfig for Traefik's `KUBECONFIG` (its only way to a client certificate, and to a token file it re-reads).
 * Traefik then ignores the endpoint, CA and token of its static configuration.
 */
export function traefikKubeconfig(o: TraefikKubeconfigOptions): string {
  if (!o.certFile !== !o.keyFile) throw new Error('certFile and keyFile go together');
  if (!o.certFile && !o.tokenFile) throw new Error('a kubeconfig for Traefik needs a client certificate or a token file');
  const user: Record<string, string> = {};
  if (o.certFile && o.keyFile) Object.assign(user, { 'client-certificate': o.certFile, 'client-key': o.keyFile });
  if (o.tokenFile) user.tokenFile = o.tokenFile;
  return stringify(
    {
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'tidal', cluster: { server: o.apiserverUrl, 'certificate-authority': o.caFile } }],
      users: [{ name: 'traefik', user }],
      contexts: [{ name: 'traefik', context: { cluster: 'tidal', user: 'traefik' } }],
      'current-context': 'traefik',
    },
    { lineWidth: 0 },
  );
}

/**
 * Traefik's environment: `base` without the variables that would override the static configuration's API server
 * (in-cluster KUBERNETES_SERVICE_HOST/PORT, KUBECONFIG), plus KUBECONFIG when `kubeconfigFile` is given.
 */
export function traefikEnv(base: NodeJS.ProcessEnv, kubeconfigFile?: string): NodeJS.ProcessEnv {
  const env = { ...base };
  delete env.KUBERNETES_SERVICE_HOST;
  delete env.KUBERNETES_SERVICE_PORT;
  delete env.KUBECONFIG;
  if (kubeconfigFile) env.KUBECONFIG = kubeconfigFile;
  return env;
}
