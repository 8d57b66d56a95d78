// `npm run up` / `npm run down` / `npm run status`: the local stack with Tidal and a sample Service.
import path from 'node:path';
import { existsSync } from 'node:fs';
import { devPorts, kubectl, repoRoot, stackDown, stackUp } from './stack.js';
import { ProcessTable } from './processes.js';
import { startRegistry, stopRegistry } from './registry.js';
import { pushImage } from './oci-images.js';
import { pushKnativeImages, queueImageRef } from './knative-images.js';
import { TRAEFIK_VERSION } from './traefik.js';
import { mkdirSync, writeFileSync } from 'node:fs';

const dir = path.join(repoRoot, '.tidal');
const say = (s: string) => console.error(`[tidal] ${s}`);

async function up(inCluster: boolean, realNode: boolean, resetConfig: boolean): Promise<void> {
  const started = Date.now();
  // A local registry (TLS, anonymous) with one image, so tag-to-digest resolution can be tried without the internet.
  mkdirSync(dir, { recursive: true });
  const registry = await startRegistry({ dir: path.join(dir, 'registry'), port: 5443, auth: false, tls: true });
  const hello = await pushImage(registry, { repository: 'tidal/hello', tag: 'v1' });
  const caFile = path.join(dir, 'registry-cas.pem');
  writeFileSync(caFile, registry.caPem ?? '');
  // With a real node: Knative's queue-proxy and test images, built here and pushed to the registry it pulls from.
  const knative = realNode ? await pushKnativeImages(registry) : undefined;
  const queue = knative?.queue;
  const info = await stackUp({
    dir,
    ports: devPorts,
    ui: true,
    // A real node's stack has no fake nodes: every pod runs for real.
    nodes: realNode ? 0 : 2,
    ...(knative ? { realNode: { registryPort: 5443, registryCaFile: caFile, queueImage: queueImageRef(registry.host, knative) } } : {}),
    controller: true,
    controllerInCluster: inCluster,
    controllerEnv: { TIDAL_REGISTRY_CA_FILES: caFile },
    // A real node serves Routes for real: cert-manager with the stack's CA issuer gives them real certificates.
    certManager: realNode,
    // Config map keys changed or removed since the last `up` stay as they are unless asked (dev/config-maps.ts).
    resetConfig,
    log: say,
  });
  const sample = realNode ? 'helloworld' : 'nginx';
  await kubectl(info, ['apply', '-f', path.join(repoRoot, 'dev', 'sample', `${sample}.yaml`)]);
  const binDir = path.dirname(info.bins.KUBECTL);
  say(`stack and Tidal are up (${Math.round((Date.now() - started) / 1000)}s); sample Service default/${sample} applied`);
  console.log(`
  export KUBECONFIG=${info.kubeconfig}
  export PATH=${binDir}:$PATH     # kubectl ${path.basename(path.dirname(binDir)).replace('kubernetes-', '')}, matching the API server

  kubectl get nodes
  kubectl get ksvc,cfg
${
  realNode
    ? `  Ingress: http://127.0.0.1:${devPorts.ingress ?? ''} (public)   http://127.0.0.1:${devPorts.ingressPrivate ?? ''} (cluster-local)   Traefik ${TRAEFIK_VERSION}
    curl -H 'Host: helloworld.default.127.0.0.1.sslip.io' http://127.0.0.1:${devPorts.ingress ?? ''}/
  Knative's test images: ${registry.host}/knative/<name>:latest (helloworld, runtime, timeout, httpproxy, pizzaplanetv1, …); queue-proxy ${queue?.ref ?? ''}
`
    : ''
}  ${info.temporalUi ? `Temporal UI: ${info.temporalUi}   (workflow Service/default/${sample})` : `Temporal: ${info.temporalAddress} (PostgreSQL; no UI: temporal workflow show -w Service/default/${sample})`}
  Admission webhook: https://127.0.0.1:${devPorts.webhook ?? ''} (dev/webhook-balancer.ts → the controller's :${devPorts.controllerWebhook ?? ''}); invalid objects are refused at apply
  Local registry: ${registry.host}/tidal/hello:v1 (${hello.digest})
    kubectl apply -f dev/sample/hello.yaml   # pinned to that digest: kubectl get rev hello-00001 -o yaml
  Logs: ${path.join(dir, 'logs')}/
  Stop: npm run down   (npm run down -- --purge also deletes the cluster's and Temporal's data)
`);
}

async function down(purge: boolean): Promise<void> {
  await stopRegistry(path.join(dir, 'registry'));
  await stackDown(dir, { purge, log: say });
  say(purge ? 'stopped; data deleted' : 'stopped (data kept in .tidal/; npm run down -- --purge deletes it)');
}

function status(): void {
  if (!existsSync(dir)) return say('not started');
  const procs = new ProcessTable(dir);
  for (const r of procs.read()) console.log(`${procs.running(r.name) ? 'running' : 'stopped'}\t${r.name}\tpid ${r.pid}\t${r.log}`);
}

const [cmd, ...rest] = process.argv.slice(2);
const main = async () => {
  switch (cmd) {
    case 'up':
      return up(rest.includes('--in-cluster'), rest.includes('--real-node'), rest.includes('--reset-config'));
    case 'down':
      return down(rest.includes('--purge'));
    case 'status':
      return status();
    default:
      throw new Error('usage: tsx dev/cli.ts up [--in-cluster] [--real-node] [--reset-config]|down [--purge]|status');
  }
};
main().catch((err: unknown) => {
  say(err instanceof Error ? err.message : String(err));
  process.exit(1);
});
