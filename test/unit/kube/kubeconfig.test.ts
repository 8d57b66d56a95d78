// Tidal's own kubeconfig loader against golden kubeconfigs: client certificates (files and -data), tokens and token
// files (re-read when they rotate), the in-cluster service account, the search order, and a clear error for what it
// does not support.
import { mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { fromKubeconfigFile, inCluster, loadKubeCredentials } from '../../../kube/kubeconfig.js';

const CA = '-----BEGIN CERTIFICATE-----\nca\n-----END CERTIFICATE-----\n';
const CERT = '-----BEGIN CERTIFICATE-----\nclient\n-----END CERTIFICATE-----\n';
const KEY = '-----BEGIN RSA PRIVATE KEY-----\nkey\n-----END RSA PRIVATE KEY-----\n';
const b64 = (s: string) => Buffer.from(s).toString('base64');

/** A kubeconfig whose current context `dev` joins cluster `c` and user `u` with the given fields. */
function kubeconfig(cluster: string[], user: string[]): string {
  return [
    'apiVersion: v1',
    'kind: Config',
    'current-context: dev',
    'clusters:',
    '- name: other',
    '  cluster: {server: "https://other.example:6443"}',
    '- name: c',
    '  cluster:',
    ...cluster.map((l) => `    ${l}`),
    'users:',
    '- name: u',
    '  user:',
    ...user.map((l) => `    ${l}`),
    'contexts:',
    '- name: other',
    '  context: {cluster: other, user: u}',
    '- name: dev',
    '  context: {cluster: c, user: u, namespace: default}',
    '',
  ].join('\n');
}

let dir: string;
const write = (name: string, text: string): string => {
  const f = path.join(dir, name);
  mkdirSync(path.dirname(f), { recursive: true });
  writeFileSync(f, text);
  return f;
};

beforeEach(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'tidal-kubeconfig-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('kubeconfig files', () => {
  it('client certificate and CA from files, relative to the kubeconfig', () => {
    write('conf/pki/ca.crt', CA);
    write('conf/pki/admin.crt', CERT);
    write('conf/pki/admin.key', KEY);
    const file = write(
      'conf/kubeconfig',
      kubeconfig(
        ['server: https://127.0.0.1:6443', 'certificate-authority: pki/ca.crt'],
        ['client-certificate: pki/admin.crt', 'client-key: pki/admin.key'],
      ),
    );
    const c = fromKubeconfigFile(file);
    expect(c.server.href).toBe('https://127.0.0.1:6443/');
    expect(c.source).toBe(`${file} (context dev)`);
    expect(c.ca?.toString()).toBe(CA);
    expect(c.cert?.toString()).toBe(CERT);
    expect(c.key?.toString()).toBe(KEY);
    expect(c.insecureSkipTLSVerify).toBe(false);
    expect(c.tlsServerName).toBeUndefined();
    expect(c.token()).toBeUndefined();
  });

  it('client certificate and CA as -data (which wins over a file)', () => {
    const file = write(
      'kubeconfig',
      kubeconfig(
        [
          'server: https://kube.example/prefix/',
          `certificate-authority-data: ${b64(CA)}`,
          'certificate-authority: /does/not/exist',
          'tls-server-name: kubernetes',
        ],
        [`client-certificate-data: ${b64(CERT)}`, `client-key-data: ${b64(KEY)}`],
      ),
    );
    const c = fromKubeconfigFile(file);
    expect(c.server.pathname).toBe('/prefix/');
    expect(c.ca?.toString()).toBe(CA);
    expect(c.cert?.toString()).toBe(CERT);
    expect(c.key?.toString()).toBe(KEY);
    expect(c.tlsServerName).toBe('kubernetes');
  });

  it('a token file is re-read when it rotates, also when swapped in by rename', () => {
    const tokenFile = write('sa/token', 'first\n');
    const file = write('kubeconfig', kubeconfig(['server: https://127.0.0.1:6443', 'insecure-skip-tls-verify: true'], ['tokenFile: sa/token']));
    const c = fromKubeconfigFile(file);
    expect(c.insecureSkipTLSVerify).toBe(true);
    expect(c.token()).toBe('first');
    expect(c.token()).toBe('first');
    writeFileSync(tokenFile, 'second-and-longer');
    expect(c.token()).toBe('second-and-longer');
    // kubelet's projected volumes swap a new file in atomically.
    write('sa/token.new', 'third');
    renameSync(path.join(dir, 'sa/token.new'), tokenFile);
    expect(c.token()).toBe('third');
    // A file that vanished keeps the last good token; the API server's 401 then says what is wrong.
    rmSync(tokenFile);
    expect(c.token()).toBe('third');
  });

  it('a literal token wins over tokenFile, as in clientcmd', () => {
    write('token', 'from-file');
    const c = fromKubeconfigFile(write('kubeconfig', kubeconfig(['server: http://127.0.0.1:8080'], ['token: literal', 'tokenFile: token'])));
    expect(c.server.protocol).toBe('http:');
    expect(c.token()).toBe('literal');
  });

  it('a context without a user has no credentials', () => {
    const file = write(
      'kubeconfig',
      ['current-context: x', 'clusters: [{name: c, cluster: {server: "https://h:1"}}]', 'contexts: [{name: x, context: {cluster: c}}]'].join('\n'),
    );
    const c = fromKubeconfigFile(file);
    expect(c.cert).toBeUndefined();
    expect(c.token()).toBeUndefined();
  });

  it.each([
    [
      'exec',
      ['exec:', '  apiVersion: client.authentication.k8s.io/v1', '  command: aws'],
      /users\[u\]\.user\.exec: exec credential plugins are not supported/,
    ],
    ['auth-provider', ['auth-provider: {name: oidc}'], /users\[u\]\.user\.auth-provider: auth providers are not supported/],
    ['basic auth', ['username: admin', 'password: secret'], /users\[u\]\.user\.username: basic auth is not supported/],
    ['impersonation', ['as: someone'], /users\[u\]\.user\.as: impersonation is not supported/],
    ['a certificate without its key', [`client-certificate-data: ${b64(CERT)}`], /users\[u\]\.user\.client-key is missing/],
    ['a missing token file', ['tokenFile: nope'], /users\[u\]\.user\.tokenFile: .*nope does not exist/],
  ])('refuses %s, naming the field', (_what, user, message) => {
    const file = write('kubeconfig', kubeconfig(['server: https://127.0.0.1:6443'], user));
    expect(() => fromKubeconfigFile(file)).toThrow(message);
  });

  it.each([
    ['no current context', 'clusters: []', /current-context is not set/],
    ['an unknown context', 'current-context: gone\ncontexts: []', /contexts: no entry named gone/],
    [
      'a cluster without a server',
      'current-context: x\nclusters: [{name: c, cluster: {}}]\ncontexts: [{name: x, context: {cluster: c}}]',
      /clusters\[c\]\.cluster\.server is not set/,
    ],
    [
      'a proxy',
      'current-context: x\nclusters: [{name: c, cluster: {server: "https://h", proxy-url: "http://p"}}]\ncontexts: [{name: x, context: {cluster: c}}]',
      /clusters\[c\]\.cluster\.proxy-url is not supported/,
    ],
    [
      'insecure with a CA',
      `current-context: x\nclusters: [{name: c, cluster: {server: "https://h", insecure-skip-tls-verify: true, certificate-authority-data: ${b64(CA)}}}]\ncontexts: [{name: x, context: {cluster: c}}]`,
      /insecure-skip-tls-verify: cannot be combined/,
    ],
    ['not YAML', 'a: [', /kubeconfig .*kubeconfig: /],
  ])('refuses %s', (_what, text, message) => {
    const file = write('kubeconfig', text);
    expect(() => fromKubeconfigFile(file)).toThrow(message);
  });
});

describe('in-cluster', () => {
  it('reads the service account token and CA, and the token again when it rotates', () => {
    const sa = path.join(dir, 'sa');
    write('sa/token', 'projected-1');
    write('sa/ca.crt', CA);
    const c = inCluster({ KUBERNETES_SERVICE_HOST: '10.96.0.1', KUBERNETES_SERVICE_PORT: '443' }, sa);
    expect(c.server.href).toBe('https://10.96.0.1/');
    expect(c.source).toBe('in-cluster');
    expect(c.ca?.toString()).toBe(CA);
    expect(c.token()).toBe('projected-1');
    // Same size as before: the swap (a new inode) is what tells, not a coarse mtime.
    write('sa/..data/token', 'projected-2');
    renameSync(path.join(sa, '..data/token'), path.join(sa, 'token'));
    expect(c.token()).toBe('projected-2');
  });

  it('brackets an IPv6 service host', () => {
    write('sa/token', 't');
    const c = inCluster({ KUBERNETES_SERVICE_HOST: 'fd00::1', KUBERNETES_SERVICE_PORT: '6443' }, path.join(dir, 'sa'));
    expect(c.server.host).toBe('[fd00::1]:6443');
  });

  it('needs the token', () => {
    expect(() => inCluster({ KUBERNETES_SERVICE_HOST: '10.96.0.1', KUBERNETES_SERVICE_PORT: '443' }, path.join(dir, 'none'))).toThrow(
      /token does not exist/,
    );
  });
});

describe('search order', () => {
  const conf = (server: string) => kubeconfig([`server: ${server}`], ['token: t']);

  it('an explicit path, then KUBECONFIG (its first existing file), then ~/.kube/config, then in-cluster', () => {
    const home = path.join(dir, 'home');
    write('sa/token', 't');
    const env = { KUBERNETES_SERVICE_HOST: '10.96.0.1', KUBERNETES_SERVICE_PORT: '443' };
    const sa = path.join(dir, 'sa');
    const load = (o: { kubeconfig?: string; env?: NodeJS.ProcessEnv }) => loadKubeCredentials({ home, serviceAccountDir: sa, env, ...o }).server.host;

    expect(load({})).toBe('10.96.0.1');
    write('home/.kube/config', conf('https://home:1'));
    expect(load({})).toBe('home:1');
    const a = write('a.yaml', conf('https://a:1'));
    const b = write('b.yaml', conf('https://b:1'));
    const missing = path.join(dir, 'missing.yaml');
    expect(load({ env: { ...env, KUBECONFIG: [missing, b, a].join(path.delimiter) } })).toBe('b:1');
    expect(load({ kubeconfig: a, env: { ...env, KUBECONFIG: b } })).toBe('a:1');
    expect(() => load({ kubeconfig: missing })).toThrow(/missing\.yaml: no such file/);
  });

  it('says what to do when there is nothing to load', () => {
    expect(() => loadKubeCredentials({ home: path.join(dir, 'nohome'), env: {} })).toThrow(/no kubeconfig: set KUBECONFIG/);
  });
});
