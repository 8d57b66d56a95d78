// Restarting the stack's own processes under a running test, as a supervisor would: stop, stay down a while, start
// again with the same command line, and wait until the process says it is healthy — starting it once more if it exits
// on the way (the API server may exit at start on a busy machine: its IP repair post-start hook gives up when etcd is
// slow, and a kubelet would restart the static pod). Shared by the chaos run and the randomized convergence test.
import type { ProcessTable } from '../../dev/processes.js';
import { httpOk, kubectl, type StackInfo } from '../../dev/stack.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Restarts `name` and waits until `healthy` says true (a string says why not yet); `downtimeMs` it stays down. */
export async function restartProcess(
  procs: ProcessTable,
  name: string,
  env: NodeJS.ProcessEnv,
  healthy: () => Promise<true | string>,
  log: (s: string) => void,
  downtimeMs = 3000,
): Promise<void> {
  const rec = procs.running(name);
  if (!rec) throw new Error(`${name} is not running`);
  log(`restarting ${name}`);
  await procs.stop(name, 15_000);
  await sleep(downtimeMs); // a restart takes a while: replicas must notice (readiness) and cope
  procs.start(rec.name, rec.bin, rec.args, env);
  // Generous: right after its restart the API server takes every client's re-list at once on two cores.
  const deadline = Date.now() + 600_000;
  let told = Date.now();
  for (;;) {
    const why = await healthy().catch((err: Error & { stderr?: string }) => (err.stderr || err.message).trim());
    if (why === true) break;
    if (Date.now() > deadline) throw new Error(`${name} did not come back: ${why}`);
    if (Date.now() - told > 15_000) {
      told = Date.now();
      log(`${name} not back yet: ${why.split('\n').slice(0, 6).join(' | ')}`);
    }
    if (!procs.running(name)) {
      log(`${name} exited while starting; starting it again`);
      procs.start(rec.name, rec.bin, rec.args, env);
    }
    await sleep(250);
  }
  log(`${name} back`);
}

/** Restarts the API server and waits for every readiness check of it to pass. */
export function restartApiServer(info: StackInfo, procs: ProcessTable, log: (s: string) => void, downtimeMs?: number): Promise<void> {
  return restartProcess(
    procs,
    'kube-apiserver',
    process.env,
    async () => {
      const body = (await kubectl(info, ['get', '--raw', '/readyz?verbose'])).trim();
      return body.endsWith('readyz check passed')
        ? true
        : body
            .split('\n')
            .filter((l) => l.startsWith('[-]'))
            .join('\n') || body;
    },
    log,
    downtimeMs,
  );
}

/**
 * Restarts kube-controller-manager after an API server restart. Its garbage collector retries an item whose owner kind
 * it could not map (discovery was incomplete right after the API server came back) with a per-item exponential
 * backoff that reaches many minutes: an owner deleted in that window leaves its children for ~20 min. Not Tidal's to
 * fix; a restart lets the orphan checks still hold every child to a collected owner.
 */
export function restartControllerManager(info: StackInfo, procs: ProcessTable, log: (s: string) => void): Promise<void> {
  return restartProcess(
    procs,
    'kube-controller-manager',
    process.env,
    async () => (await httpOk(`https://127.0.0.1:${info.ports.controllerManager}/healthz`)) || 'healthz not ok',
    log,
  );
}
