// Failures on the real node surface on the Revision with Knative's reasons: a container
// that exits, an image the registry lacks and a readiness probe that never passes — each seen first by the real
// kubelet (the pod's container statuses and Events say so), then on the Revision, and up the chain to
// `kubectl get ksvc`.
import { describe, expect, it } from 'vitest';
import { apply, condition, image, kubectl, kubectlJson, ksvc, realStack, type Condition, useNamespace } from '../../harness/real.js';
import { eventually } from '../../harness/wait.js';

const ns = useNamespace('real-failures');
const PROGRESS_DEADLINE = { 'serving.knative.dev/progress-deadline': '30s' };

interface ContainerState {
  waiting?: { reason?: string; message?: string };
  running?: { startedAt?: string };
  terminated?: { exitCode: number; reason?: string; message?: string };
}

interface Pod {
  metadata: { name: string };
  spec: { nodeName?: string };
  status: {
    conditions?: Condition[];
    containerStatuses?: { name: string; ready: boolean; restartCount: number; state?: ContainerState; lastState?: ContainerState }[];
  };
}

/** A Service, Configuration or Deployment: what is read of it here. */
interface Conditioned {
  status?: { conditions?: Condition[] };
}

interface Revision {
  status?: { conditions?: Condition[]; containerStatuses?: { name: string; imageDigest?: string }[] };
}

interface KubeEvent {
  reason: string;
  message: string;
  source?: { component?: string };
  involvedObject: { name: string };
}

/** Type, status, reason and message of a condition: what a test compares. */
const brief = (c: Condition | undefined) => (c ? { status: c.status, reason: c.reason, message: c.message } : undefined);

const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

const revision = (name: string) => kubectlJson<Revision>(['get', 'revision', name, '-n', ns]);

async function podsOf(revisionName: string): Promise<Pod[]> {
  return (await kubectlJson<{ items: Pod[] }>(['get', 'pods', '-n', ns, '-l', `serving.knative.dev/revision=${revisionName}`])).items;
}

const userContainer = (pod: Pod) => pod.status.containerStatuses?.find((c) => c.name === 'user-container');

/** Waits until the kubelet has reported an Event with that reason about every one of the pods, and returns them all. */
async function kubeletEventsOfEach(pods: Pod[], reason: string, counts: (e: KubeEvent) => boolean = () => true): Promise<KubeEvent[]> {
  const names = new Set(pods.map((p) => p.metadata.name));
  return eventually(`kubelet ${reason} events of ${[...names].join(', ')}`, async () => {
    const all = await kubectlJson<{ items: KubeEvent[] }>(['get', 'events', '-n', ns, '--field-selector', `reason=${reason}`]);
    const events = all.items.filter((e) => names.has(e.involvedObject.name) && e.source?.component === 'kubelet');
    const reported = new Set(events.filter(counts).map((e) => e.involvedObject.name));
    return [...names].every((n) => reported.has(n)) ? events : undefined;
  });
}

/** One row of `kubectl get <kind> <name>` as printed, by column header (columns are cut where the headers start). */
async function printedRow(kind: string, name: string): Promise<Record<string, string>> {
  const [header = '', row = ''] = (await kubectl(['get', kind, name, '-n', ns])).split('\n');
  const starts = [...header.matchAll(/\S+/g)].map((m) => ({ name: m[0], at: m.index }));
  return Object.fromEntries(starts.map((h, i) => [h.name, row.slice(h.at, starts[i + 1]?.at ?? row.length).trim()]));
}

/**
 * The failure chain above a failed Revision: the Configuration is Ready False `RevisionFailed` with the
 * Revision's message; the Service mirrors that as ConfigurationsReady, and its Route, with no ready Revision to send
 * traffic to, makes RoutesReady False `RevisionMissing` — propagated last, so it is the Service's Ready reason, as
 * `kubectl get ksvc` prints. The kubelet keeps retrying, so the Revision's message may change (a new termination, a
 * pull reason flipping): the chain is compared with the Revision as read alongside it.
 */
async function expectFailedUpTheChain(service: string, revisionName: string): Promise<void> {
  const noReadyRevision = { status: 'False', reason: 'RevisionMissing', message: `Configuration "${service}" does not have any ready Revision.` };
  await eventually(
    `configuration and ksvc ${service} failed with revision ${revisionName}`,
    async () => {
      const rev = condition(await revision(revisionName), 'Ready');
      const cfg = await kubectlJson<Conditioned>(['get', 'configuration', service, '-n', ns]);
      const svc = await kubectlJson<Conditioned>(['get', 'ksvc', service, '-n', ns]);
      const revisionFailed = {
        status: 'False',
        reason: 'RevisionFailed',
        message: `Revision "${revisionName}" failed with message: ${rev?.message ?? ''}.`,
      };
      const expected = {
        revision: 'False',
        configuration: revisionFailed,
        configurationsReady: revisionFailed,
        routesReady: noReadyRevision,
        ready: noReadyRevision,
      };
      const actual = {
        revision: rev?.status,
        configuration: brief(condition(cfg, 'Ready')),
        configurationsReady: brief(condition(svc, 'ConfigurationsReady')),
        routesReady: brief(condition(svc, 'RoutesReady')),
        ready: brief(condition(svc, 'Ready')),
      };
      expect(actual).toEqual(expected);
      return true;
    },
    60_000,
  );
  const row = await printedRow('ksvc', service);
  expect({ LATESTCREATED: row.LATESTCREATED, LATESTREADY: row.LATESTREADY, READY: row.READY, REASON: row.REASON }).toEqual({
    LATESTCREATED: revisionName,
    LATESTREADY: '',
    READY: 'False',
    REASON: 'RevisionMissing',
  });
}

describe('failures on the real node, on the Revision', () => {
  it("a container that exits: ContainerHealthy False ExitCode5 with the kubelet's termination message, and the Service not Ready", async () => {
    // Knative's `failing` image logs "Started...", sleeps 10 s, logs "Crashed..." and exits with 5.
    await apply(ksvc('exits', { image: image('failing') }), ns);
    const rev = 'exits-00001';
    // The kubelet reports the exit as the last termination of user-container, its message the log's tail
    // (terminationMessagePolicy FallbackToLogsOnError); the Revision says the same of one of its pods.
    const { revision: failed, terminated } = await eventually(
      `revision ${rev} ContainerHealthy False from a pod's last termination`,
      async () => {
        const r = await revision(rev);
        const c = condition(r, 'ContainerHealthy');
        if (c?.status !== 'False') return undefined;
        const t = (await podsOf(rev))
          .map((p) => userContainer(p)?.lastState?.terminated)
          .find((t) => t !== undefined && c.message === `Container failed with: ${t.message ?? ''}`);
        return t ? { revision: r, terminated: t } : undefined;
      },
      120_000,
    );
    expect(terminated.exitCode).toBe(5);
    expect(terminated.reason).toBe('Error');
    expect(terminated.message).toMatch(/Started\.\.\.\n.*Crashed\.\.\.\n$/);
    const message = `Container failed with: ${terminated.message ?? ''}`;
    expect(brief(condition(failed, 'ContainerHealthy'))).toEqual({ status: 'False', reason: 'ExitCode5', message });
    expect(brief(condition(failed, 'Ready'))).toEqual({ status: 'False', reason: 'ExitCode5', message });

    // The pods run on the real node, whose kubelet restarts the container and backs off.
    const crashing = await eventually('a user-container restarted by the kubelet and backing off', async () => {
      const pods = await podsOf(rev);
      const backingOff = pods.filter(
        (p) => (userContainer(p)?.restartCount ?? 0) > 0 && userContainer(p)?.state?.waiting?.reason === 'CrashLoopBackOff',
      );
      return backingOff.length > 0 ? { pods, backingOff } : undefined;
    });
    for (const p of crashing.pods) expect(p.spec.nodeName).toBe('tidal-node');
    for (const e of await kubeletEventsOfEach(crashing.backingOff, 'BackOff')) {
      expect(e.message).toMatch(new RegExp(`^Back-off restarting failed container user-container in pod ${e.involvedObject.name}_${ns}\\(`));
    }

    await expectFailedUpTheChain('exits', rev);
  });

  it("an image the registry lacks: ResourcesAvailable False with the kubelet's ErrImagePull/ImagePullBackOff once the progress deadline passes", async () => {
    // A digest is not resolved: the reference goes to the pod as it is, and only the kubelet finds it missing.
    const missing = `${realStack().registryHost}/knative/helloworld@sha256:${'0'.repeat(64)}`;
    await apply(ksvc('unpullable', { image: missing }, { templateAnnotations: PROGRESS_DEADLINE }), ns);
    const rev = 'unpullable-00001';
    const pullReasons = ['ErrImagePull', 'ImagePullBackOff'];
    // The kubelet finds the image missing at once, but upstream reports a waiting container only once the Deployment
    // has timed out: until then the Revision is deploying. (The Revision is read before the Deployment: a
    // Deployment not timed out yet was not when the Revision was read either.)
    await eventually(`a pod of ${rev} waiting on its pull`, async () =>
      (await podsOf(rev)).some((p) => pullReasons.includes(userContainer(p)?.state?.waiting?.reason ?? '')),
    );
    const early = await revision(rev);
    const earlyDeployment = await kubectlJson<Conditioned>(['get', 'deployment', `${rev}-deployment`, '-n', ns]);
    expect(condition(earlyDeployment, 'Progressing')).toMatchObject({ status: 'True' });
    expect(brief(condition(early, 'ResourcesAvailable'))).toEqual({ status: 'Unknown', reason: 'Deploying', message: undefined });
    expect(condition(early, 'Ready')?.status).toBe('Unknown');

    const failed = await eventually(
      `revision ${rev} ResourcesAvailable False with a pull reason`,
      async () => {
        const r = await revision(rev);
        return pullReasons.includes(condition(r, 'ResourcesAvailable')?.reason ?? '') ? r : undefined;
      },
      120_000,
    );
    expect(failed.status?.containerStatuses).toEqual([{ name: 'user-container', imageDigest: missing }]);
    const available = condition(failed, 'ResourcesAvailable');
    expect(available?.status).toBe('False');
    expect(available?.message).toContain(`failed to pull and unpack image "${missing}"`);
    expect(available?.message).toMatch(/: not found$/);
    expect(brief(condition(failed, 'Ready'))).toEqual(brief(available));
    expect(brief(condition(failed, 'ContainerHealthy'))).toEqual({ status: 'Unknown', reason: 'Deploying', message: undefined });
    const deployment = await kubectlJson<Conditioned>(['get', 'deployment', `${rev}-deployment`, '-n', ns]);
    expect(condition(deployment, 'Progressing')).toMatchObject({ status: 'False', reason: 'ProgressDeadlineExceeded' });

    // The kubelet's own words: the waiting state of user-container and its pull Events.
    const pods = await podsOf(rev);
    expect(pods.length).toBeGreaterThan(0);
    for (const p of pods) {
      expect(p.spec.nodeName).toBe('tidal-node');
      const waiting = userContainer(p)?.state?.waiting;
      expect(pullReasons).toContain(waiting?.reason);
      expect(waiting?.message).toMatch(/not found$/);
    }
    // (The kubelet's `Failed` Events also say `Error: ErrImagePull` and `Error: ImagePullBackOff`.)
    const failedEvents = await kubeletEventsOfEach(pods, 'Failed');
    for (const p of pods) {
      expect(failedEvents.filter((e) => e.involvedObject.name === p.metadata.name).map((e) => e.message)).toContainEqual(
        expect.stringMatching(new RegExp(`^Failed to pull image "${escapeRegExp(missing)}": .*not found$`)),
      );
    }

    await expectFailedUpTheChain('unpullable', rev);
  });

  it('a readiness probe that never passes: ResourcesAvailable False ProgressDeadlineExceeded, with the kubelet reporting the probe failing', async () => {
    // Knative's `readiness` image answers its readiness path with 500 until READY_DELAY has passed. queue-proxy runs
    // the user's probe; the kubelet probes queue-proxy, which answers 503 while the user's probe fails. (A probe
    // without periodSeconds would have queue-proxy retry it until the kubelet's probe times out instead.)
    await apply(
      ksvc(
        'unready',
        {
          image: image('readiness'),
          env: [{ name: 'READY_DELAY', value: '24h' }],
          readinessProbe: { httpGet: { path: '/healthz/readiness' }, periodSeconds: 1 },
        },
        { templateAnnotations: PROGRESS_DEADLINE },
      ),
      ns,
    );
    const rev = 'unready-00001';
    const failed = await eventually(
      `revision ${rev} ResourcesAvailable False`,
      async () => {
        const r = await revision(rev);
        return condition(r, 'ResourcesAvailable')?.status === 'False' ? r : undefined;
      },
      120_000,
    );
    const deployment = await kubectlJson<Conditioned>(['get', 'deployment', `${rev}-deployment`, '-n', ns]);
    const progressing = condition(deployment, 'Progressing');
    expect(progressing).toMatchObject({ status: 'False', reason: 'ProgressDeadlineExceeded' });
    expect(progressing?.message).toMatch(new RegExp(`^ReplicaSet "${rev}-deployment-[a-z0-9]+" has timed out progressing\\.$`));
    const deadline = { status: 'False', reason: 'ProgressDeadlineExceeded', message: progressing?.message };
    expect(brief(condition(failed, 'ResourcesAvailable'))).toEqual(deadline);
    expect(brief(condition(failed, 'Ready'))).toEqual(deadline);
    // The containers run; they are just never ready.
    expect(brief(condition(failed, 'ContainerHealthy'))).toEqual({ status: 'Unknown', reason: 'Deploying', message: undefined });

    const pods = await podsOf(rev);
    expect(pods.length).toBeGreaterThan(0);
    for (const p of pods) {
      expect(p.spec.nodeName).toBe('tidal-node');
      expect(condition({ status: p.status }, 'Ready')?.status).toBe('False');
      const user = userContainer(p);
      expect(user?.state?.running).toBeDefined();
      expect(user?.restartCount).toBe(0);
      // Its readiness probe is queue-proxy's to run: the kubelet probes queue-proxy, never ready.
      expect(user?.ready).toBe(true);
      expect(p.status.containerStatuses?.find((c) => c.name === 'queue-proxy')?.ready).toBe(false);
    }
    // The probe really ran: the kubelet says so of each pod, with queue-proxy's status (a probe made before
    // queue-proxy listened on a busy node finds its port closed first).
    const unready = 'Readiness probe failed: HTTP probe failed with statuscode: 503';
    for (const e of await kubeletEventsOfEach(pods, 'Unhealthy', (e) => e.message === unready))
      expect(e.message).toMatch(
        /^Readiness probe failed: (HTTP probe failed with statuscode: 503|Get "http:\/\/[\d.]+:8012\/": dial tcp [\d.]+:8012: connect: connection refused)$/,
      );

    await expectFailedUpTheChain('unready', rev);
  });

  it('a tag the registry lacks: ContainerHealthy False ContainerMissing from digest resolution, before any pod', async () => {
    const ref = `${realStack().registryHost}/knative/helloworld:no-such-tag`;
    await apply(ksvc('untagged', { image: ref }), ns);
    const rev = 'untagged-00001';
    const failed = await eventually(`revision ${rev} ContainerHealthy False`, async () => {
      const r = await revision(rev);
      return condition(r, 'ContainerHealthy')?.status === 'False' ? r : undefined;
    });
    const missing = condition(failed, 'ContainerHealthy');
    expect(missing?.reason).toBe('ContainerMissing');
    expect(missing?.message).toMatch(new RegExp(`^Unable to fetch image "${escapeRegExp(ref)}": failed to resolve image to digest: `));
    expect(brief(condition(failed, 'Ready'))).toEqual(brief(missing));
    // Upstream's resolver answers "not ready" before the error, and ResourcesAvailable keeps saying so.
    expect(brief(condition(failed, 'ResourcesAvailable'))).toEqual({ status: 'Unknown', reason: 'ResolvingDigests', message: undefined });
    expect(await podsOf(rev)).toEqual([]);
    await expectFailedUpTheChain('untagged', rev);
  });
});
