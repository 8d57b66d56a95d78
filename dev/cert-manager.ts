// cert-manager on the local stack (StackOptions.certManager): its CRDs (the module's own), its controller
// (dev/build-cert-manager.sh, dev/cert-manager/) and a CA to issue from — a SelfSigned ClusterIssuer signs the CA
// Certificate `cert-manager/tidal-ca`, whose Secret backs the CA ClusterIssuer `tidal-ca` that config-certmanager names.
// A test trusts what the stack's Routes serve by reading that Secret's `ca.crt` (`readStackCA`).
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import { applyConfigMaps } from './config-maps.js';
import type { ProcessRecord } from './processes.js';

const run = promisify(execFile);
const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** The namespace of cert-manager's controller and of the CA's Secret (its `--cluster-resource-namespace`). */
export const CERT_MANAGER_NAMESPACE = 'cert-manager';
/** The CA ClusterIssuer the stack's config-certmanager names, and its CA Certificate and Secret. */
export const STACK_CA_ISSUER = 'tidal-ca';

/** Builds (or reuses) cert-manager's controller; its binary and the directory of its CRDs. */
export async function buildCertManager(log: (s: string) => void): Promise<{ bin: string; crds: string }> {
  const { stdout, stderr } = await run('bash', [path.join(repoRoot, 'dev', 'build-cert-manager.sh')], { maxBuffer: 16 * 1024 * 1024 });
  for (const line of stderr.split('\n')) if (line.startsWith('[toolchain]')) log(line);
  const value = (key: string) =>
    stdout
      .split('\n')
      .find((l) => l.startsWith(`${key}=`))
      ?.slice(key.length + 1);
  const bin = value('CERT_MANAGER');
  const crds = value('CERT_MANAGER_CRDS');
  if (!bin || !crds) throw new Error(`dev/build-cert-manager.sh printed no CERT_MANAGER= and CERT_MANAGER_CRDS= lines:\n${stdout}\n${stderr}`);
  return { bin, crds };
}

/** The issuers and the CA, as one manifest list. */
export function stackIssuers(): object[] {
  return [
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: CERT_MANAGER_NAMESPACE } },
    { apiVersion: 'cert-manager.io/v1', kind: 'ClusterIssuer', metadata: { name: 'tidal-selfsigned' }, spec: { selfSigned: {} } },
    {
      apiVersion: 'cert-manager.io/v1',
      kind: 'Certificate',
      metadata: { name: STACK_CA_ISSUER, namespace: CERT_MANAGER_NAMESPACE },
      spec: {
        isCA: true,
        commonName: 'Tidal local stack CA',
        secretName: STACK_CA_ISSUER,
        privateKey: { algorithm: 'ECDSA', size: 256 },
        issuerRef: { kind: 'ClusterIssuer', name: 'tidal-selfsigned', group: 'cert-manager.io' },
      },
    },
    { apiVersion: 'cert-manager.io/v1', kind: 'ClusterIssuer', metadata: { name: STACK_CA_ISSUER }, spec: { ca: { secretName: STACK_CA_ISSUER } } },
  ];
}

/** config-certmanager naming the stack's CA ClusterIssuer. */
export function stackCertManagerConfig(): Record<string, unknown> {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'config-certmanager', namespace: 'knative-serving' },
    data: { issuerRef: `kind: ClusterIssuer\nname: ${STACK_CA_ISSUER}\n` },
  };
}

export interface CertManagerStart {
  kubeconfig: string;
  kubectl: (args: string[], input?: string) => Promise<string>;
  start: (name: string, bin: string, args: string[]) => ProcessRecord;
  waitFor: (what: string, check: () => Promise<boolean>, timeoutMs: number, rec?: ProcessRecord) => Promise<void>;
  /** Apply config-certmanager's shipped value over a user's edit, which is kept otherwise (dev/config-maps.ts). */
  resetConfig?: boolean;
  log: (s: string) => void;
}

/** Applies the CRDs, starts the controller, then the issuers, and waits for the CA ClusterIssuer to be Ready. */
export async function startCertManager(s: CertManagerStart): Promise<void> {
  const { bin, crds } = await buildCertManager(s.log);
  await s.kubectl(['apply', '--server-side', '--force-conflicts', '-f', crds]);
  await s.kubectl(['wait', '--for=condition=Established', '--timeout=60s', 'crd', 'certificates.cert-manager.io', 'clusterissuers.cert-manager.io']);
  const rec = s.start('cert-manager', bin, [`--kubeconfig=${s.kubeconfig}`, `--cluster-resource-namespace=${CERT_MANAGER_NAMESPACE}`]);
  await s.kubectl(
    ['apply', '--server-side', '--field-manager=tidal-installer', '-f', '-'],
    JSON.stringify({ apiVersion: 'v1', kind: 'List', items: stackIssuers() }),
  );
  await applyConfigMaps(s.kubectl, [stackCertManagerConfig()], { reset: s.resetConfig, log: s.log });
  await s.waitFor(
    `ClusterIssuer ${STACK_CA_ISSUER} Ready`,
    async () =>
      (await s
        .kubectl(['get', 'clusterissuer', STACK_CA_ISSUER, '-o', 'jsonpath={.status.conditions[?(@.type=="Ready")].status}'])
        .catch(() => '')) === 'True',
    90_000,
    rec,
  );
}
