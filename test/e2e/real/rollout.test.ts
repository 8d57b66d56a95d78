// What a client sees while a Service changes, on the real node through the ingress: a gradual rollout moving traffic
// in steps, and not one failed request while a new Revision replaces the old one, while the controller is killed,
// and while the old Revision is garbage-collected.
import { describe, expect, it } from 'vitest';
import { ProcessTable } from '../../../dev/processes.js';
import { startController } from '../../../dev/stack.js';
import {
  apply,
  hostOf,
  image,
  ksvc,
  kubectl,
  kubectlJson,
  realStack,
  serviceReady,
  traffic,
  type KService,
  PizzaPlanet,
  useNamespace,
} from '../../harness/real.js';
import { eventually } from '../../harness/wait.js';

const ns = useNamespace('real-rollout');
const V1 = PizzaPlanet.v1;
const V2 = PizzaPlanet.v2;

/** Resolves once the Service sends all its traffic to its latest Ready Revision, `revision`. */
const allTrafficOn = (name: string, revision: string, timeoutMs = 240_000) =>
  eventually(
    `${name} serving ${revision} only`,
    async () => {
      const s = await kubectlJson<KService>(['get', 'ksvc', name, '-n', ns]);
      const t = s.status?.traffic ?? [];
      return s.status?.latestReadyRevisionName === revision && t.length === 1 && t[0]?.revisionName === revision && t[0]?.percent === 100;
    },
    timeoutMs,
    200,
  );

const revisionGone = (name: string) =>
  eventually(
    `Revision ${name} garbage-collected`,
    async () => (await kubectl(['get', 'revisions', '-n', ns, '-o', 'name'])).split('\n').every((l) => l !== `revision.serving.knative.dev/${name}`),
    120_000,
    200,
  );

const failuresOf = (seen: { status: number; body: string; error?: string }[]) =>
  seen.filter((r) => r.status !== 200).map((r) => `${r.status} ${r.error ?? r.body.slice(0, 120)}`);

describe('traffic while a Service changes', () => {
  it('moves a 60 s gradual rollout in steps, with no request failing', async () => {
    const annotations = { 'serving.knative.dev/rollout-duration': '60s' };
    await apply(ksvc('gradual', { image: image('pizzaplanetv1') }, { annotations, revisionName: 'gradual-v1' }), ns);
    const host = hostOf((await serviceReady('gradual', ns)).status?.url);
    await apply(ksvc('gradual', { image: image('pizzaplanetv2') }, { annotations, revisionName: 'gradual-v2' }), ns);
    const started = Date.now();
    const seen = await traffic(host, allTrafficOn('gradual', 'gradual-v2'), { concurrency: 4 });
    expect(failuresOf(seen)).toEqual([]);
    // The new Revision's share per 5 s window, from the first response it served.
    const firstV2 = seen.find((r) => r.body === V2)?.at ?? Infinity;
    const windows: number[] = [];
    for (let from = firstV2; from < seen[seen.length - 1]!.at; from += 5000) {
      const w = seen.filter((r) => r.at >= from && r.at < from + 5000);
      if (w.length >= 20) windows.push(Math.round((100 * w.filter((r) => r.body === V2).length) / w.length));
    }
    const elapsed = (seen[seen.length - 1]!.at - started) / 1000;
    // Gradual: the move took about the rollout duration, went through several levels between 0 and 100 %, and the
    // share never fell back by more than a window's noise.
    expect(elapsed).toBeGreaterThan(45);
    const between = new Set(windows.filter((s) => s > 5 && s < 95).map((s) => Math.round(s / 10)));
    expect(between.size).toBeGreaterThanOrEqual(3);
    for (let i = 1; i < windows.length; i++) expect(windows[i]!).toBeGreaterThanOrEqual(windows[i - 1]! - 8);
    expect(seen.filter((r) => r.body === V1).length).toBeGreaterThan(0);
  });

  it('fails no request while a new Revision replaces the old one and an older one is garbage-collected', async () => {
    await apply(ksvc('replace', { image: image('pizzaplanetv1') }, { revisionName: 'replace-v1' }), ns);
    const host = hostOf((await serviceReady('replace', ns)).status?.url);
    await apply(ksvc('replace', { image: image('pizzaplanetv2') }, { revisionName: 'replace-v2' }), ns);
    await allTrafficOn('replace', 'replace-v2');
    // hakn's config-gc keeps the Revision that served last and deletes the older ones as soon as no Route serves
    // them: replacing v2 with v3 (v1's image again) keeps v2 and deletes v1 while the traffic moves.
    await apply(ksvc('replace', { image: image('pizzaplanetv1') }, { revisionName: 'replace-v3' }), ns);
    const seen = await traffic(
      host,
      allTrafficOn('replace', 'replace-v3').then(() => revisionGone('replace-v1')),
      { concurrency: 4 },
    );
    expect(failuresOf(seen)).toEqual([]);
    expect(seen.some((r) => r.body === V2)).toBe(true);
    expect(seen[seen.length - 1]!.body).toBe(V1);
    expect(seen.length).toBeGreaterThan(100);
    const left = (await kubectl(['get', 'revisions', '-n', ns, '-l', 'serving.knative.dev/service=replace', '-o', 'name'])).trim().split('\n');
    expect(left.sort()).toEqual(['revision.serving.knative.dev/replace-v2', 'revision.serving.knative.dev/replace-v3']);
  });

  it('fails no request while the controller is SIGKILLed in the middle of a rollout', async () => {
    const s = realStack();
    const procs = new ProcessTable(s.dir);
    await apply(ksvc('killed', { image: image('pizzaplanetv1') }, { revisionName: 'killed-v1' }), ns);
    const host = hostOf((await serviceReady('killed', ns)).status?.url);
    const done = (async () => {
      await apply(ksvc('killed', { image: image('pizzaplanetv2') }, { revisionName: 'killed-v2' }), ns);
      const victim = procs.running('tidal-controller');
      if (!victim) throw new Error('no controller running');
      process.kill(victim.pid, 'SIGKILL');
      await eventually('the controller gone', async () => !procs.running('tidal-controller'), 10_000, 50);
      await new Promise((r) => setTimeout(r, 3000));
      await startController(
        { dir: s.dir, kubeconfig: s.kubeconfig, temporalAddress: s.temporalAddress, temporalUi: undefined, bins: s.bins, ports: s.ports },
        procs,
        { ports: s.ports, controllerEnv: s.controllerEnv },
        (l) => console.error(`[real] ${l}`),
      );
      await allTrafficOn('killed', 'killed-v2');
      // Requests sent before the switch may still answer from v1: a tail of traffic after it must end on v2.
      await new Promise((r) => setTimeout(r, 3000));
    })();
    const seen = await traffic(host, done, { concurrency: 4 });
    await done;
    expect(failuresOf(seen)).toEqual([]);
    expect(seen.some((r) => r.body === V1) && seen[seen.length - 1]!.body === V2).toBe(true);
  });
});
