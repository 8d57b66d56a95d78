// Traefik's static configuration for the Knative provider (dev/traefik.ts): the keys Traefik reads, the entry points
// each KIngress visibility lands on, the token taken from its file, and the environment that lets the
// configuration's API server win over in-cluster and KUBECONFIG settings.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { serviceRef, TRAEFIK_VERSION, traefikEnv, traefikKubeconfig, traefikStaticConfig } from '../../dev/traefik.js';

const dir = mkdtempSync(path.join(os.tmpdir(), 'traefik-config-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const base = { apiserverUrl: 'https://127.0.0.1:6443', caFile: '/pki/ca.crt', webPort: 8080, privatePort: 8081, adminPort: 9000 };

interface StaticConfig {
  global: { checkNewVersion: boolean; sendAnonymousUsage: boolean };
  experimental: { knative: boolean };
  entryPoints: Record<string, { address: string; transport?: { respondingTimeouts: { readTimeout: string } } }>;
  providers: { providersThrottleDuration?: string; knative: Record<string, unknown> };
  ping: { entryPoint: string };
  api: { insecure: boolean; dashboard: boolean };
  log: { level: string };
  accessLog?: { filePath?: string };
}

const load = (yaml: string) => parse(yaml) as StaticConfig;

describe('traefikStaticConfig', () => {
  it('turns on the experimental Knative provider against the API server, with loopback entry points', () => {
    const c = load(traefikStaticConfig(base));
    expect(c.experimental).toEqual({ knative: true });
    expect(c.global).toEqual({ checkNewVersion: false, sendAnonymousUsage: false });
    expect(c.providers.knative).toEqual({
      endpoint: 'https://127.0.0.1:6443',
      certAuthFilePath: '/pki/ca.crt',
      publicEntrypoints: ['web'],
      privateEntrypoints: ['private'],
    });
    expect(c.providers.providersThrottleDuration).toBeUndefined();
    expect(Object.fromEntries(Object.entries(c.entryPoints).map(([k, v]) => [k, v.address]))).toEqual({
      web: '127.0.0.1:8080',
      private: '127.0.0.1:8081',
      traefik: '127.0.0.1:9000',
    });
    expect(c.entryPoints.web?.transport?.respondingTimeouts.readTimeout).toBe('600s');
    expect(c.ping).toEqual({ entryPoint: 'traefik' });
    expect(c.api).toEqual({ insecure: true, dashboard: false });
    expect(c.log.level).toBe('INFO');
    expect(c.accessLog).toBeUndefined();
  });

  it('with a secure port: a websecure entry point on loopback that public rules (and their TLS twins) also use', () => {
    const c = load(traefikStaticConfig({ ...base, securePort: 8443 }));
    expect(c.entryPoints['websecure']).toEqual({ address: '127.0.0.1:8443', transport: { respondingTimeouts: { readTimeout: '600s' } } });
    expect(c.providers.knative['publicEntrypoints']).toEqual(['web', 'websecure']);
    expect(load(traefikStaticConfig(base)).entryPoints['websecure']).toBeUndefined();
  });

  it('inlines the token read from its file, trimmed', () => {
    const tokenFile = path.join(dir, 'token');
    writeFileSync(tokenFile, 'eyJhbGciOi.abc.def\n');
    expect(load(traefikStaticConfig({ ...base, tokenFile })).providers.knative.token).toBe('eyJhbGciOi.abc.def');
  });

  it('names the public and private Services by name and namespace, and takes the optional settings', () => {
    const c = load(
      traefikStaticConfig({
        ...base,
        publicServiceHost: 'traefik-public.tidal-system',
        privateServiceHost: 'traefik-private.tidal-system.svc.cluster.local',
        listenHost: '0.0.0.0',
        namespaces: ['default', 'serving-tests'],
        accessLog: '/var/log/traefik-access.log',
        logLevel: 'DEBUG',
        providersThrottle: '200ms',
      }),
    );
    expect(c.providers.knative.publicService).toEqual({ name: 'traefik-public', namespace: 'tidal-system' });
    expect(c.providers.knative.privateService).toEqual({ name: 'traefik-private', namespace: 'tidal-system' });
    expect(c.providers.knative.namespaces).toEqual(['default', 'serving-tests']);
    expect(c.providers.providersThrottleDuration).toBe('200ms');
    expect(c.entryPoints.private?.address).toBe('0.0.0.0:8081');
    expect(c.accessLog).toEqual({ filePath: '/var/log/traefik-access.log' });
    expect(c.log.level).toBe('DEBUG');
    expect(load(traefikStaticConfig({ ...base, accessLog: true })).accessLog).toEqual({});
  });

  it('refuses a Service host without a namespace or with a suffix other than .svc', () => {
    expect(serviceRef('a.b.svc')).toEqual({ name: 'a', namespace: 'b' });
    for (const bad of ['traefik', 'a.b.example.com', 'a..svc', 'a.b.svc.']) {
      expect(() => serviceRef(bad)).toThrow(/is not a Service host/);
    }
  });
});

describe('traefikKubeconfig and traefikEnv', () => {
  it('puts a client certificate or a token file into a kubeconfig', () => {
    const k = parse(traefikKubeconfig({ ...base, certFile: '/pki/t.crt', keyFile: '/pki/t.key' })) as {
      clusters: { cluster: Record<string, string> }[];
      users: { user: Record<string, string> }[];
      'current-context': string;
    };
    expect(k.clusters[0]?.cluster).toEqual({ server: 'https://127.0.0.1:6443', 'certificate-authority': '/pki/ca.crt' });
    expect(k.users[0]?.user).toEqual({ 'client-certificate': '/pki/t.crt', 'client-key': '/pki/t.key' });
    expect(k['current-context']).toBe('traefik');
    expect(traefikKubeconfig({ ...base, tokenFile: '/run/token' })).toContain('tokenFile: /run/token');
    expect(() => traefikKubeconfig({ ...base, certFile: '/pki/t.crt' })).toThrow(/go together/);
    expect(() => traefikKubeconfig(base)).toThrow(/needs a client certificate or a token file/);
  });

  it('drops the variables that would override the configured API server', () => {
    const env = { PATH: '/bin', KUBECONFIG: '/root/.kube/config', KUBERNETES_SERVICE_HOST: '10.0.0.1', KUBERNETES_SERVICE_PORT: '443' };
    expect(traefikEnv(env)).toEqual({ PATH: '/bin' });
    expect(traefikEnv(env, '/tmp/kc')).toEqual({ PATH: '/bin', KUBECONFIG: '/tmp/kc' });
    expect(env.KUBECONFIG).toBe('/root/.kube/config');
  });

  it('pins a v3.7 release', () => {
    expect(TRAEFIK_VERSION).toMatch(/^v3\.7\.\d+$/);
  });
});
