// `npm run conformance`: Knative Serving's own conformance suite (knative.dev/serving/test/conformance, `api/v1` and
// `runtime`, compiled from the module source by dev/build-knative.sh) against a real-node stack, as the suite's
// documentation runs it against other implementations: test images in the stack's registry (--dockerrepo), the
// ingress on 127.0.0.1 (--ingressendpoint, with a NodePort Service that maps port 80 to the stack's ingress port),
// no resolvable domain, no log stream. Writes docs/conformance.md with a table per suite.
//
//   npm run conformance [-- --against tidal|upstream|both] [--suites api/v1,runtime] [--run <regexp>] [--keep]
//                          [--parallel N] [--no-doc] [--check]
//
// --check exits 1 when a test fails against a target run now (those Tidal leaves out by design excepted), after
// printing `conformance: N passed, N failed, N skipped` (CI's gate).
//   npm run conformance -- --ingress [--run <regexp>] [--keep] [--parallel N] [--no-doc]
//   (--ingress: knative.dev/networking's KIngress conformance suite against Traefik instead: dev/conformance-ingress.ts)
//
// Each target gets a stack of its own in .tidal/conformance/<target> on the conformance ports, one after the other;
// its results are kept in .tidal/conformance/<target>.json so the document can combine runs made separately.
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { argValue } from './cli-args.js';
import { BY_DESIGN, failures, tally, renderConformance, type ConformanceDoc, type SuiteRun, type TargetRun } from './conformance-report.js';
import { buildKnativeBinaries, startRealNodeRegistry, type KnativeBinaries } from './knative-images.js';
import { INGRESS_NAMESPACE } from './ingress.js';
import { stopRegistry } from './registry.js';
import { conformancePorts, kubectl, repoRoot, stackDown, stackUp, type StackInfo } from './stack.js';
import { runSuite, testResources, type SuiteBinary } from './conformance-suite.js';
import { TRAEFIK_INGRESS_CLASS, TRAEFIK_VERSION } from './traefik.js';

const run = promisify(execFile);
const say = (s: string) => console.error(`[conformance] ${s}`);

export type Target = 'tidal' | 'upstream';

/** The suites and their compiled binaries (dev/build-knative.sh's tests/). */
export const SUITES: Record<string, { binary: string; pkg: string }> = {
  'api/v1': { binary: 'conformance-api-v1.test', pkg: 'knative.dev/serving/test/conformance/api/v1' },
  runtime: { binary: 'conformance-runtime.test', pkg: 'knative.dev/serving/test/conformance/runtime' },
};

const REGISTRY_PORT = 17543;
/** The NodePort Service the suites' ingress lookup reads (GATEWAY_OVERRIDE / GATEWAY_NAMESPACE_OVERRIDE). */
const GATEWAY = { name: 'conformance-gateway', namespace: INGRESS_NAMESPACE };

/**
 * What the Tidal run changes from the shipped config maps, as hakn's own CI does before it runs these suites: one pod
 * per Revision. Shipped, Tidal keeps two (HA by default), and TestProbeRuntimeAfterStartup, which makes one pod fail
 * its readiness and waits for the Revision to stop answering, would be answered by the other pod for ever.
 */
export const TIDAL_SETTINGS = [
  {
    target: 'Tidal',
    configMap: 'config-autoscaler',
    key: 'min-scale',
    value: '1',
    why: "hakn's CI sets the same before these suites: TestProbeRuntimeAfterStartup needs a Revision of one pod (shipped: 2, HA by default, whose second pod keeps answering)",
  },
];

/** What the runs on this stack showed of the results that need a word; the tables come from the run itself. */
export const NOTES = [
  "Upstream fails `TestContainerExitingMsg` here (600 s, the test's limit): its pod is in CrashLoopBackOff with the " +
    "container's exit message, but upstream's Revision reconciler reads pods only when a Deployment or PodAutoscaler " +
    'event queues the Revision again, and on this stack none came, so the Revision stayed `Unknown`/`Deploying`. Tidal ' +
    'reports `ContainerHealthy=False` (`ExitCode…` with the message) from the pods it watches.',
  "Upstream's activator and autoscaler run in the node's network namespace and its controller and webhook on the host " +
    "(dev/upstream-serving.ts), with upstream's config maps and their defaults (scale to zero on) but for the stack's " +
    'queue-proxy image, ingress class and domain.',
];

/**
 * The flags the suite documents for a cluster whose domain does not resolve and whose logs it cannot stream, and the
 * feature flags upstream's CI adds.
 */
export function suiteFlags(o: { kubeconfig: string; registryHost: string }): string[] {
  return [
    `--kubeconfig=${o.kubeconfig}`,
    '--ingressendpoint=127.0.0.1',
    `--dockerrepo=${o.registryHost}/knative`,
    '--resolvabledomain=false',
    '--disable-logstream',
    `--ingress-class=${TRAEFIK_INGRESS_CLASS}`,
    // As upstream's own e2e-tests.sh runs these suites: the beta tests (multiple containers, emptyDir) too.
    '--enable-alpha',
    '--enable-beta',
  ];
}

/** The Service the suites look the ingress up by: port 80 maps to `nodePort`, the stack's ingress port on 127.0.0.1. */
export function gatewayService(nodePort: number): Record<string, unknown> {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: GATEWAY.name, namespace: GATEWAY.namespace },
    spec: { type: 'NodePort', ports: [{ name: 'http', port: 80, targetPort: 80, nodePort }] },
  };
}

/** Serving's suite `suite` as built in `knative`. */
function servingSuite(suite: string, knative: KnativeBinaries): SuiteBinary {
  const spec = SUITES[suite];
  if (!spec) throw new Error(`no suite ${suite}: ${Object.keys(SUITES).join(', ')}`);
  return {
    binary: path.join(knative.testsDir, spec.binary),
    pkg: spec.pkg,
    dir: path.join(knative.moduleDir, spec.pkg.replace('knative.dev/serving/', '')),
  };
}

export async function gitCommit(): Promise<string> {
  try {
    return (await run('git', ['rev-parse', '--short', 'HEAD'], { cwd: repoRoot })).stdout.trim();
  } catch {
    return 'unknown';
  }
}

/** Brings up the target's stack, runs the suites against it, stops it (unless `keep`). */
export async function runTarget(target: Target, o: { suites: string[]; run?: string; parallel?: number; keep?: boolean }): Promise<TargetRun> {
  const dir = path.join(repoRoot, '.tidal', 'conformance', target);
  const log = (s: string) => say(`${target}: ${s}`);
  // A fresh cluster: what an earlier run left (its Services, its config) must not count in this one.
  await stopRegistry(path.join(dir, 'registry'));
  await stackDown(dir, { purge: true, log });
  mkdirSync(dir, { recursive: true });
  const knative = await buildKnativeBinaries((l) => log(l));
  const { registry, caFile, realNode } = await startRealNodeRegistry(dir, REGISTRY_PORT);
  const ports = conformancePorts;
  let info: StackInfo | undefined;
  try {
    info = await stackUp({
      dir,
      ports,
      ui: false,
      nodes: 0,
      realNode,
      controller: true,
      controlPlane: target,
      controllerEnv: { TIDAL_REGISTRY_CA_FILES: caFile },
      log,
    });
    if (target === 'tidal') {
      for (const c of TIDAL_SETTINGS) {
        const patch = JSON.stringify({ data: { [c.key]: c.value } });
        await kubectl(info, ['patch', 'configmap', c.configMap, '-n', 'knative-serving', '--type=merge', '-p', patch]);
      }
    }
    await kubectl(info, ['apply', '-f', '-'], testResources(knative.moduleDir));
    await kubectl(info, ['apply', '-f', '-'], JSON.stringify(gatewayService(ports.ingress ?? 0)));
    const flags = suiteFlags({ kubeconfig: info.kubeconfig, registryHost: registry.host });
    const testArgs = [
      ...flags,
      '-test.timeout=60m',
      ...(o.parallel ? [`-test.parallel=${o.parallel}`] : []),
      ...(o.run ? [`-test.run=${o.run}`] : []),
    ];
    const env = { ...process.env, GATEWAY_OVERRIDE: GATEWAY.name, GATEWAY_NAMESPACE_OVERRIDE: GATEWAY.namespace };
    const suites: SuiteRun[] = [];
    for (const suite of o.suites) {
      log(`running ${suite}`);
      const logFile = path.join(path.dirname(dir), `${target}-${suite.replace('/', '-')}.jsonl`);
      suites.push(await runSuite(suite, servingSuite(suite, knative), testArgs, env, logFile));
    }
    const label = target === 'tidal' ? `Tidal ${await gitCommit()}` : `Knative Serving ${knative.version}`;
    return { label, suites };
  } finally {
    if (o.keep) log(`kept running in ${dir} (KUBECONFIG=${path.join(dir, 'kubeconfig')})`);
    else {
      await stackDown(dir, { log });
      await stopRegistry(path.join(dir, 'registry'));
    }
  }
}

export const resultsFile = (target: Target | 'ingress') => path.join(repoRoot, '.tidal', 'conformance', `${target}.json`);

function readResults(target: Target | 'ingress'): TargetRun | undefined {
  const f = resultsFile(target);
  return existsSync(f) ? (JSON.parse(readFileSync(f, 'utf8')) as TargetRun) : undefined;
}

async function main(args: string[]): Promise<void> {
  const against = argValue(args, 'against') ?? 'both';
  if (against !== 'both' && against !== 'tidal' && against !== 'upstream') throw new Error(`--against tidal|upstream|both, not ${against}`);
  const ingress = args.includes('--ingress');
  const targets: Target[] = ingress ? [] : against === 'both' ? ['tidal', 'upstream'] : [against];
  const suites = (argValue(args, 'suites') ?? Object.keys(SUITES).join(',')).split(',');
  const runPattern = argValue(args, 'run');
  const parallel = argValue(args, 'parallel');
  const ran: TargetRun[] = [];
  for (const target of targets) {
    const started = Date.now();
    const result = await runTarget(target, {
      suites,
      ...(runPattern ? { run: runPattern } : {}),
      ...(parallel ? { parallel: Number(parallel) } : {}),
      keep: args.includes('--keep'),
    });
    writeFileSync(resultsFile(target), JSON.stringify(result, null, 2));
    say(`${target}: done in ${Math.round((Date.now() - started) / 1000)} s`);
    ran.push(result);
  }
  if (ingress) {
    const started = Date.now();
    // Imported here: it uses runSuite and the rest of this file.
    const { runIngressConformance } = await import('./conformance-ingress.js');
    const result = await runIngressConformance({
      ...(runPattern ? { run: runPattern } : {}),
      ...(parallel ? { parallel: Number(parallel) } : {}),
      keep: args.includes('--keep'),
    });
    writeFileSync(resultsFile('ingress'), JSON.stringify(result, null, 2));
    say(`ingress: done in ${Math.round((Date.now() - started) / 1000)} s`);
  }
  const knative = await buildKnativeBinaries(() => {});
  const doc: ConformanceDoc = {
    date: new Date().toISOString().slice(0, 10),
    commit: await gitCommit(),
    versions: [
      `knative.dev/serving ${knative.version} (its knative.dev dependencies at v0.50.0's pins: dev/build-knative.sh)`,
      'Kubernetes v1.35.4 (a real kubelet, containerd 1.6, runc)',
      `Traefik ${TRAEFIK_VERSION} with its Knative provider`,
    ],
    flags: suiteFlags({ kubeconfig: '<kubeconfig>', registryHost: `127.0.0.1:${REGISTRY_PORT}` }).join(' '),
    byDesign: BY_DESIGN,
    settings: TIDAL_SETTINGS,
    notes: NOTES,
  };
  const tidal = readResults('tidal');
  const upstream = readResults('upstream');
  const ingressRun = readResults('ingress');
  if (tidal) doc.tidal = tidal;
  if (upstream) doc.upstream = upstream;
  if (ingressRun) doc.ingress = ingressRun;
  const md = renderConformance(doc);
  process.stdout.write(md);
  if (!args.includes('--no-doc')) writeFileSync(path.join(repoRoot, 'docs', 'conformance.md'), md);
  if (args.includes('--check')) {
    const failed = ran.flatMap((r) => failures(r, BY_DESIGN).map((f) => `${r.label}: ${f}`));
    const t = ran
      .map((r) => tally(r))
      .reduce((a, b) => ({ pass: a.pass + b.pass, fail: a.fail + b.fail, skip: a.skip + b.skip, seconds: 0 }), {
        pass: 0,
        fail: 0,
        skip: 0,
        seconds: 0,
      });
    for (const f of failed) say(`FAILED ${f}`);
    console.log(`conformance: ${t.pass} passed, ${failed.length} failed, ${t.skip} skipped`);
    if (failed.length > 0) process.exitCode = 1;
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main(process.argv.slice(2)).catch((err: unknown) => {
    say(err instanceof Error ? (err.stack ?? err.message) : String(err));
    process.exit(1);
  });
}
