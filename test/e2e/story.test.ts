// `kubectl tidal` as a new user meets it: the plugin built as the release builds it, installed into a folder on the
// PATH, run through kubectl against the e2e stack — a slow rollout under way, a Service whose image is missing from
// the test registry, a Revision falling due for collection — and its output read for the facts a user needs. The
// objects' status and Warning Events carry the link to the same story in the Temporal UI (config-observability's
// temporal-ui-url, set by this file and removed at its end).
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Revision } from '../../api/serving.js';
import { buildPlugin, installPlugin } from '../../cli/build.js';
import { apply, eventsOf, getObject, kubectl, stack, patchConfigMap } from '../harness/cluster.js';
import { setGcArgs } from '../harness/config-gc.js';
import { eventually } from '../harness/wait.js';

const run = promisify(execFile);
const bin = mkdtempSync(path.join(tmpdir(), 'tidal-plugin-'));
const UI = 'http://127.0.0.1:28233';

type Status = { conditions?: { type: string; status: string; reason?: string }[]; annotations?: Record<string, string> };
const ready = (o: { status?: Status } | undefined) => o?.status?.conditions?.find((c) => c.type === 'Ready');

/** `kubectl tidal <args>` as a user runs it: kubectl finds the plugin on the PATH; Temporal from the environment. */
async function tidal(...args: string[]): Promise<string> {
  const kubectlBin = stack().bins.KUBECTL;
  const { stdout } = await run(kubectlBin, ['tidal', ...args, '--kubeconfig', stack().kubeconfig], {
    env: { ...process.env, PATH: [bin, path.dirname(kubectlBin), process.env.PATH].join(path.delimiter), TEMPORAL_ADDRESS: stack().temporalAddress },
    maxBuffer: 16 << 20,
  });
  return stdout;
}

/** The plugin's output once `test` holds of it (what it reports follows the workflow's progress). */
const tidalUntil = (what: string, args: string[], test: (out: string) => boolean, timeoutMs = 90_000) =>
  eventually(
    what,
    async () => {
      const out = await tidal(...args);
      return test(out) ? out : undefined;
    },
    timeoutMs,
    500,
  );

const ksvc = (name: string, image: string, annotations: Record<string, string> = {}) => ({
  apiVersion: 'serving.knative.dev/v1',
  kind: 'Service',
  metadata: { name, namespace: 'default', annotations },
  spec: { template: { spec: { containers: [{ image, ports: [{ containerPort: 80 }] }] } } },
});

const setObservability = (value: string | null) => patchConfigMap('config-observability', { 'temporal-ui-url': value });

beforeAll(async () => {
  installPlugin(await buildPlugin(path.join(bin, 'build', 'kubectl-tidal')), bin);
  await setObservability(UI);
}, 120_000);

afterAll(async () => {
  await kubectl(['delete', 'ksvc', 'story-roll', 'story-broken', 'story-gc', '--ignore-not-found', '--wait=false']);
  await kubectl(setGcArgs({}));
  await setObservability(null);
  rmSync(bin, { recursive: true, force: true });
});

describe('kubectl tidal', () => {
  it('a rollout under way: why names RolloutInProgress and the next step with its percent; the status links to the workflow', async () => {
    const name = 'story-roll';
    await apply(ksvc(name, 'nginx:1.21', { 'serving.knative.dev/rollout-duration': '900s' }));
    await eventually(`${name} Ready`, async () => ready(await getObject<{ status?: Status }>('ksvc', name))?.status === 'True' || undefined, 90_000);
    await apply(ksvc(name, 'nginx:1.22', { 'serving.knative.dev/rollout-duration': '900s' }));
    const step = new RegExp(
      `@ \\S+ \\S+Z \\(in \\d+\\w\\) {2}rollout of Route default/${name}: ${name}-00002 (\\d+)% → (\\d+)% \\(${name}-00001 \\d+%, ${name}-00002 \\d+%\\), next step at \\S+Z`,
    );
    // The plugin reads the object before its history, so one view can show the step's timer while the Service it read
    // just before still has the status of the pass before: the view wanted is one whose object and history agree.
    const header = `Service default/${name}: Ready=Unknown RolloutInProgress`;
    const why = await tidalUntil(`the rollout in the why view, under "${header}"`, [`ksvc/${name}`], (out) => step.test(out) && out.includes(header));
    const [, from, to] = step.exec(why.slice(why.lastIndexOf('\nNext:')))!;
    expect(Number(to)).toBeGreaterThan(Number(from));

    // The pass the update started, and one a step's timer started.
    const stepped = new RegExp(`after timer: rollout of Route default/${name}: ${name}-00002 \\d+% → \\d+%`);
    const story = await tidalUntil('a pass after a rollout step', ['story', `ksvc/${name}`], (out) => stepped.test(out));
    expect(story).toMatch(new RegExp(`after .*Service/default/${name} updated \\(generation 2\\)`));

    const svc = await getObject<{ status?: Status }>('ksvc', name);
    expect(svc?.status?.annotations).toMatchObject({
      'tidal.dev/workflow': `Service/default/${name}`,
      'tidal.dev/workflow-url': `${UI}/namespaces/default/workflows/Service%2Fdefault%2F${name}`,
    });
    expect(story).toContain(`workflow Service/default/${name}   ${UI}/namespaces/default/workflows/Service%2Fdefault%2F${name}`);
    const route = await getObject<{ status?: Status }>('route', name);
    expect(route?.status?.annotations?.['tidal.dev/workflow']).toBe(`Service/default/${name}`);
    expect(await kubectl(['describe', 'ksvc', name])).toContain(`Service%2Fdefault%2F${name}`);
  });

  it('an image missing from the registry: the failing condition, the Revision it waits on, its image and next retry', async () => {
    const name = 'story-broken';
    const image = `${stack().registries.public.host}/tidal/hello:v404`;
    await apply(ksvc(name, image));
    const why = await tidalUntil('the retried digest step', [`ksvc/${name}`], (out) =>
      out.includes(`~ resolve image digests of Revision default/${name}-00001`),
    );
    expect(why).toContain(`Service default/${name}: Ready=False RevisionMissing`);
    expect(why).toContain(`ConfigurationsReady=False RevisionFailed`);
    expect(why).toContain(`Waiting on:\n  Revision default/${name}-00001: Ready=False ContainerMissing: Unable to fetch image "${image}"`);
    expect(why).toMatch(
      new RegExp(
        `~ resolve image digests of Revision default/${name}-00001 \\(retried until the registry answers\\): attempt \\d+, next attempt \\S+ \\S+Z`,
      ),
    );
    expect(why).toMatch(/last failure: .*v404/);

    const rev = await tidal(`rev/${name}-00001`);
    expect(rev).toContain(`Revision default/${name}-00001: Ready=False ContainerMissing`);
    expect(rev).toMatch(/! resolve image digests of Revision .* — failed: Unable to fetch image/);

    // The Warning Event names the same story.
    const warnings = await eventually(
      'a Warning with the link',
      async () => {
        const found = (await eventsOf(`involvedObject.name=${name},type=Warning`)).filter((e) => e.message.includes('(story: '));
        return found.length ? found : undefined;
      },
      30_000,
    );
    expect(warnings[0]?.message).toMatch(new RegExp(`\\(story: ${UI}/namespaces/default/workflows/Service%2Fdefault%2F${name}\\)$`));
  });

  it('a Revision falling due for collection: the story names it and when it is due', async () => {
    const name = 'story-gc';
    await kubectl(
      setGcArgs({
        'retain-since-create-time': '1h',
        'retain-since-last-active-time': 'disabled',
        'min-non-active-revisions': '0',
        'max-non-active-revisions': 'disabled',
      }),
    );
    await apply(ksvc(name, 'nginx:1.21'));
    await eventually(
      `${name}-00001 Ready`,
      async () => ready(await getObject<Revision>('revision', `${name}-00001`))?.status === 'True' || undefined,
      90_000,
    );
    await apply(ksvc(name, 'nginx:1.22'));
    const old = await eventually(
      `${name}-00001 reserve`,
      async () => {
        const r = await getObject<Revision>('revision', `${name}-00001`);
        return r?.metadata.labels?.['serving.knative.dev/routingState'] === 'reserve' ? r : undefined;
      },
      90_000,
    );
    // Due an hour after it was created (retain-since-create-time), to the second the Revision's creationTimestamp has.
    const due = new Date(Date.parse(old.metadata.creationTimestamp ?? '') + 3600_000).toISOString().slice(11, 23);
    const gc = `revision GC of Configuration default/${name}: ${name}-00001 collectable at ${due}Z`;
    const story = await tidalUntil('the GC timer', ['story', `ksvc/${name}`], (out) => out.slice(out.lastIndexOf('\nNext:')).includes(gc));
    expect(story).toMatch(new RegExp(`@ \\S+ ${due.slice(0, 8)}\\.\\d{3}Z \\(in (59|60)m\\) {2}${gc.replace(/[.()]/g, '\\$&')}`));
    expect(story).toContain(
      `- collect Revisions of Configuration default/${name} (config-gc) — nothing: nothing collectable; next: ${name}-00001 at ${due}Z`,
    );
  });
});
