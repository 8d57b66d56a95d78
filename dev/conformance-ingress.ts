// `npm run conformance -- --ingress`: knative.dev/networking's KIngress conformance suite
// (knative.dev/networking/test/conformance/ingress, compiled by dev/build-knative.sh) against Traefik on a real-node
// stack without a Knative control plane, so a failure of Serving's suites can be told apart: ingress or control plane.
// The suite creates KIngresses, pods and Services itself; its backends are networking's own test images, pushed to the
// stack's registry as knative-networking/<name> (several share a name with serving's but are other programs).
//
// It dials the ingress the way a KIngress's status says: status.publicLoadBalancer names the Service
// traefik-public.tidal-ingress, and with --ingressendpoint the suite dials that address on the nodePort of the Service
// port it wants (80 for HTTP). So that Service becomes a NodePort whose port 80 is the stack's ingress port.
//
// Its own stack (.tidal/conformance/ingress) on ports of its own, so it can run beside `npm run conformance`.
import { mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { subtestsOf, type SuiteRun, type TargetRun } from './conformance-report.js';
import { runSuite, testResources } from './conformance-suite.js';
import { INGRESS_NAMESPACE, IngressServices, TRAEFIK_PUBLIC_PORT } from './ingress.js';
import { buildKnativeBinaries, buildKnativeImages, NETWORKING_PREFIX, pushKnativeImages, queueImageRef } from './knative-images.js';
import { startStackRegistry, stopRegistry } from './registry.js';
import { kubectl, portsAt, repoRoot, stackDown, stackUp, type StackInfo, type StackPorts } from './stack.js';
import { TRAEFIK_INGRESS_CLASS, TRAEFIK_VERSION } from './traefik.js';

const say = (s: string) => console.error(`[conformance] ingress: ${s}`);

/** Clear of the other stacks' ports; the ingress ports lie in the API server's NodePort range (see above). */
export const ingressConformancePorts: StackPorts = { ...portsAt(21), ingress: 31280, ingressPrivate: 31281 };

const REGISTRY_PORT = 21543;

/** The compiled suite, and the one Go test every conformance test runs under (test/conformance/ingress/run_test.go). */
export const INGRESS_SUITE = {
  name: 'ingress',
  binary: 'ingress-conformance.test',
  pkg: 'knative.dev/networking/test/conformance/ingress',
  parent: 'TestIngressConformance',
} as const;

/**
 * The conformance tests' names, as the suite's run.go maps them to their functions (`"basics/http2": TestBasicsHTTP2,`):
 * stable, beta and alpha alike.
 */
export function suiteTestNames(runGo: string): string[] {
  return [...runGo.matchAll(/^\s*"([^"]+)":\s*Test\w+,\s*$/gm)].map((m) => m[1] ?? '').filter((n) => n !== '');
}

/** The flags networking's suite documents (test/e2e_flags.go, knative.dev/pkg/test): beta and alpha tests too. */
export function ingressSuiteFlags(o: { kubeconfig: string; registryHost: string }): string[] {
  return [
    `--kubeconfig=${o.kubeconfig}`,
    `--ingressClass=${TRAEFIK_INGRESS_CLASS}`,
    '--ingressendpoint=127.0.0.1',
    `--dockerrepo=${o.registryHost}/${NETWORKING_PREFIX}`,
    '--enable-beta',
    '--enable-alpha',
  ];
}

/** The patch that makes traefik-public a NodePort whose port 80 is `nodePort`, the stack's ingress port on 127.0.0.1. */
export function publicServiceNodePort(nodePort: number): Record<string, unknown> {
  return { spec: { type: 'NodePort', ports: [{ name: 'http', port: 80, targetPort: TRAEFIK_PUBLIC_PORT, nodePort }] } };
}

/** `TestIngressConformance/basics/http2` → `basics/http2`. */
export function withoutParent(run: SuiteRun, parent: string): SuiteRun {
  const strip = (t: string) => (t.startsWith(`${parent}/`) ? t.slice(parent.length + 1) : t);
  return { ...run, results: run.results.map((r) => ({ ...r, test: strip(r.test) })) };
}

/** Brings up the stack, runs the suite against Traefik, stops the stack (unless `keep`). */
export async function runIngressConformance(o: { run?: string; parallel?: number; keep?: boolean }): Promise<TargetRun> {
  const dir = path.join(repoRoot, '.tidal', 'conformance', 'ingress');
  await stackDown(dir, { log: say });
  await stopRegistry(path.join(dir, 'registry'));
  mkdirSync(dir, { recursive: true });
  const knative = await buildKnativeBinaries(say);
  const { registry, caFile } = await startStackRegistry(dir, REGISTRY_PORT);
  // The stack's config maps name a queue-proxy image; nothing here runs one.
  const queueImage = queueImageRef(registry.host, await pushKnativeImages(registry, { images: await buildKnativeImages({ roles: ['queue'] }) }));
  await pushKnativeImages(registry, { prefix: NETWORKING_PREFIX, images: await buildKnativeImages({ roles: ['networking'] }) });
  const ports = ingressConformancePorts;
  let info: StackInfo | undefined;
  try {
    info = await stackUp({
      dir,
      ports,
      ui: false,
      nodes: 0,
      realNode: { registryPort: REGISTRY_PORT, registryCaFile: caFile, queueImage },
      controller: false,
      log: say,
    });
    // Without a controller nothing else needs it, but the suite creates KIngresses.
    await kubectl(info, ['get', 'crd', 'ingresses.networking.internal.knative.dev']);
    await kubectl(info, ['apply', '-f', '-'], testResources(knative.moduleDir));
    await kubectl(info, [
      'patch',
      'service',
      IngressServices.public,
      '-n',
      INGRESS_NAMESPACE,
      '--type=merge',
      '-p',
      JSON.stringify(publicServiceNodePort(ports.ingress ?? 0)),
    ]);
    const suiteDir = path.join(knative.networking.moduleDir, 'test', 'conformance', 'ingress');
    const names = suiteTestNames(readFileSync(path.join(suiteDir, 'run.go'), 'utf8'));
    const args = [
      ...ingressSuiteFlags({ kubeconfig: info.kubeconfig, registryHost: registry.host }),
      '-test.timeout=60m',
      ...(o.parallel ? [`-test.parallel=${o.parallel}`] : []),
      ...(o.run ? [`-test.run=${o.run}`] : []),
    ];
    say(`running ${INGRESS_SUITE.pkg} (${names.length} tests)`);
    const run = await runSuite(
      INGRESS_SUITE.name,
      {
        binary: path.join(knative.testsDir, INGRESS_SUITE.binary),
        pkg: INGRESS_SUITE.pkg,
        dir: suiteDir,
        unitOf: subtestsOf(INGRESS_SUITE.parent, names),
      },
      args,
      process.env,
      path.join(path.dirname(dir), 'ingress.jsonl'),
    );
    return { label: `Traefik ${TRAEFIK_VERSION}`, suites: [withoutParent(run, INGRESS_SUITE.parent)] };
  } finally {
    if (o.keep) say(`kept running in ${dir} (KUBECONFIG=${path.join(dir, 'kubeconfig')})`);
    else {
      await stackDown(dir, { log: say });
      await stopRegistry(path.join(dir, 'registry'));
    }
  }
}
