// `npm run up` / `npm run down` / `npm run status`: the local stack with Tidal and a sample Service.
import path from 'node:path';
import { existsSync } from 'node:fs';
import { devPorts, kubectl, repoRoot, stackDown, stackUp } from './stack.js';
import { ProcessTable } from './processes.js';
import { startRegistry, stopRegistry } from './registry.js';
import { pushImage } from './oci-images.js';
import { mkdirSync, writeFileSync } from 'node:fs';

const dir = path.join(repoRoot, '.tidal');
const say = (s: string) => console.error(`[tidal] ${s}`);

async function up(inCluster: boolean): Promise<void> {
  const started = Date.now();
  // A local registry (TLS, anonymous) with one image, so tag-to-digest resolution can be tried without the internet.
  mkdirSync(dir, { recursive: true });
  const registry = await startRegistry({ dir: path.join(dir, 'registry'), port: 5443, auth: false, tls: true });
  const hello = await pushImage(registry, { repository: 'tidal/hello', tag: 'v1' });
  const caFile = path.join(dir, 'registry-cas.pem');
  writeFileSync(caFile, registry.caPem ?? '');
  const info = await stackUp({
    dir,
    ports: devPorts,
    ui: true,
    nodes: 2,
    controller: true,
    controllerInCluster: inCluster,
    controllerEnv: { TIDAL_REGISTRY_CA_FILES: caFile },
    log: say,
  });
  await kubectl(info, ['apply', '-f', path.join(repoRoot, 'dev', 'sample', 'nginx.yaml')]);
  const binDir = path.dirname(info.bins.KUBECTL);
  say(`stack and Tidal are up (${Math.round((Date.now() - started) / 1000)}s); sample Service default/nginx applied`);
  console.log(`
  export KUBECONFIG=${info.kubeconfig}
  export PATH=${binDir}:$PATH     # kubectl ${path.basename(path.dirname(binDir)).replace('kubernetes-', '')}, matching the API server

  kubectl get nodes
  kubectl get ksvc,cfg
  ${info.temporalUi ? `Temporal UI: ${info.temporalUi}   (workflow Service/default/nginx)` : `Temporal: ${info.temporalAddress} (PostgreSQL; no UI: temporal workflow show -w Service/default/nginx)`}
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
      return up(rest.includes('--in-cluster'));
    case 'down':
      return down(rest.includes('--purge'));
    case 'status':
      return status();
    default:
      throw new Error('usage: tsx dev/cli.ts up [--in-cluster]|down [--purge]|status');
  }
};
main().catch((err: unknown) => {
  say(err instanceof Error ? err.message : String(err));
  process.exit(1);
});
