// Knative's own client, `kn` (built from knative.dev/client by dev/toolchain.sh), drives Tidal through the steps of a
// rollout a Knative user takes: create, update, split to the previous Revision, roll back to it, update again. The
// shipped config-gc (deploy/config/config-gc.yaml) is set for the file's duration: it must keep the Revision that
// served before the current one, so the split and the rollback right after an update find it.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Revision, TrafficTarget } from '../../api/serving.js';
import { setGcArgs, shippedGc } from '../harness/config-gc.js';
import { getObject, kubectl, kubectlJson, stack } from '../harness/cluster.js';
import { eventually } from '../harness/wait.js';

const exec = promisify(execFile);
/** Sets config-gc's four keys (absent: Knative's default, as the e2e stack runs). */
const setGc = (data: Record<string, string | undefined>) => kubectl(setGcArgs(data));

/** Runs `kn` against the test stack; rejects with its output when it exits non-zero. */
async function kn(args: string[]): Promise<string> {
  const s = stack();
  try {
    const { stdout, stderr } = await exec(s.bins.KN, [...args, '--kubeconfig', s.kubeconfig, '-n', 'default'], { timeout: 180_000 });
    return stdout + stderr;
  } catch (err) {
    const e = err as { stdout?: string; stderr?: string; message: string };
    throw new Error(`kn ${args.join(' ')} failed: ${e.stdout ?? ''}${e.stderr ?? ''}${e.message}`);
  }
}

const name = 'kn-rollback';
const rev = (n: number) => `${name}-0000${n}`;

async function revisionNames(): Promise<string[]> {
  const list = await kubectlJson<{ items: Revision[] }>(['get', 'revisions', '-l', `serving.knative.dev/configuration=${name}`]);
  return list.items.map((r) => r.metadata.name ?? '').sort();
}

/** The Service's status.traffic as `revision percent` lines, sorted. */
async function servedTraffic(): Promise<string[]> {
  const svc = await getObject<{ status?: { traffic?: TrafficTarget[] } }>('ksvc', name);
  return (svc?.status?.traffic ?? []).map((t) => `${t.revisionName} ${t.percent}`).sort();
}

beforeAll(async () => {
  expect(shippedGc['min-non-active-revisions']).toBe('1');
  await setGc(shippedGc);
});

afterAll(async () => {
  await setGc({});
  await kubectl(['delete', 'ksvc', name, 'kn-talk', 'kn-bad', '--ignore-not-found', '--wait=false']);
  await kubectl(['delete', 'domainmapping', 'kn-talk.example', '--ignore-not-found', '--wait=false']);
  await kubectl(['delete', 'clusterdomainclaim', 'kn-talk.example', '--ignore-not-found', '--wait=false']);
});

describe('kn with the shipped config-gc', () => {
  it('splits to the previous Revision right after an update, rolls back to it, and GC keeps the one that served last before the current one', async () => {
    const created = await kn(['service', 'create', name, '--image', 'nginx:1.21', '--port', '80']);
    expect(created).toContain(`Service '${name}' created to latest revision '${rev(1)}'`);

    const updated = await kn(['service', 'update', name, '--image', 'nginx:1.22']);
    expect(updated).toContain(`Service '${name}' updated to latest revision '${rev(2)}'`);
    // The previous Revision is still there a moment after the update: kept as the one that served last.
    expect(await revisionNames()).toEqual([rev(1), rev(2)]);

    // The seed talk's split: 90 to the new Revision, 10 to the previous one.
    await kn(['service', 'update', name, '--traffic', `${rev(1)}=10`, '--traffic', '@latest=90']);
    expect(await servedTraffic()).toEqual([`${rev(1)} 10`, `${rev(2)} 90`]);
    const listed = await kn(['revision', 'list', '-s', name]);
    expect(listed).toMatch(new RegExp(`${rev(1)}\\s+${name}\\s+10%`));
    expect(listed).toMatch(new RegExp(`${rev(2)}\\s+${name}\\s+90%`));

    // Roll back: everything to the previous Revision.
    await kn(['service', 'update', name, '--traffic', `${rev(1)}=100`]);
    expect(await servedTraffic()).toEqual([`${rev(1)} 100`]);
    const described = JSON.parse(await kn(['service', 'describe', name, '-o', 'json'])) as {
      status: { conditions: { type: string; status: string }[] };
    };
    expect(described.status.conditions.find((c) => c.type === 'Ready')?.status).toBe('True');

    // Forward again to a new image with @latest=100: while 00003 starts, @latest still means the latest ready
    // Revision, 00002, so 00001 turns reserve first and 00002 is the one that served last. 00002 stays, 00001 goes.
    await kn(['service', 'update', name, '--image', 'nginx:1.23', '--traffic', '@latest=100']);
    expect(await servedTraffic()).toEqual([`${rev(3)} 100`]);
    let seen: string[] = [];
    await eventually(
      `${name}'s Revisions ${rev(2)}, ${rev(3)}`,
      async () => {
        seen = await revisionNames();
        return JSON.stringify(seen) === JSON.stringify([rev(2), rev(3)]) ? true : undefined;
      },
      60_000,
      250,
    ).catch(async (err: unknown) => {
      const states = await kubectl(['get', 'revisions', '-L', 'serving.knative.dev/routingState']);
      throw new Error(`${String(err)}; Revisions: ${seen.join(', ')}\n${states}`);
    });
    // And the kept one can take traffic back at once.
    await kn(['service', 'update', name, '--traffic', `${rev(2)}=100`]);
    expect(await servedTraffic()).toEqual([`${rev(2)} 100`]);
  });

  it("the talk's other steps: a named Revision, min-scale, a tagged split, a domain mapping, refused input and delete", async () => {
    const svc = 'kn-talk';
    const created = await kn(['service', 'create', svc, '--image', 'nginx:1.21', '--port', '80', '--revision-name', `${svc}-v1`, '--scale-min', '2']);
    expect(created).toContain(`Service '${svc}' created to latest revision '${svc}-v1'`);
    const v1 = await getObject<{ metadata: { annotations?: Record<string, string> } }>('revision', `${svc}-v1`);
    expect(v1?.metadata.annotations?.['autoscaling.knative.dev/min-scale']).toBe('2');
    await eventually(
      `${svc}-v1 at min-scale 2`,
      async () =>
        (await getObject<{ status?: { actualReplicas?: number } }>('revision', `${svc}-v1`))?.status?.actualReplicas === 2 ? true : undefined,
      60_000,
    );

    await kn(['service', 'update', svc, '--image', 'nginx:1.22', '--revision-name', `${svc}-v2`]);
    await kn(['service', 'update', svc, '--tag', `${svc}-v1=old`, '--traffic', 'old=10', '--traffic', '@latest=90']);
    const svcObj = await getObject<{ status: { traffic: TrafficTarget[] } }>('ksvc', svc);
    const old = svcObj?.status.traffic.find((t) => t.tag === 'old');
    expect(old).toMatchObject({ revisionName: `${svc}-v1`, percent: 10 });
    expect(old?.url).toMatch(new RegExp(`^http://old-${svc}\\.default\\.`));
    const services = await kn(['service', 'list']);
    expect(services).toMatch(new RegExp(`${svc}\\s+http://${svc}\\.default\\.\\S+\\s+${svc}-v2\\s+.*True`));

    await kubectl(
      ['apply', '-f', '-'],
      JSON.stringify({
        apiVersion: 'networking.internal.knative.dev/v1alpha1',
        kind: 'ClusterDomainClaim',
        metadata: { name: 'kn-talk.example' },
        spec: { namespace: 'default' },
      }),
    );
    const mapped = await kn(['domain', 'create', 'kn-talk.example', '--ref', svc]);
    expect(mapped).toContain("Domain mapping 'kn-talk.example' created");
    await eventually(
      'the domain mapping Ready',
      async () => {
        const dm = await getObject<{ status?: { url?: string; conditions?: { type: string; status: string }[] } }>(
          'domainmapping',
          'kn-talk.example',
        );
        return dm?.status?.conditions?.find((c) => c.type === 'Ready')?.status === 'True' ? dm : undefined;
      },
      60_000,
    );
    expect(await kn(['domain', 'list'])).toMatch(/kn-talk\.example\s+http:\/\/kn-talk\.example\s+True\s+kn-talk\n/);

    // Refused by the webhook, with the field and the reason; nothing is created.
    await expect(
      kn(['service', 'create', 'kn-bad', '--image', 'nginx:1.21', '--annotation', 'autoscaling.knative.dev/min-scale=-1']),
    ).rejects.toThrow(/autoscaling\.knative\.dev\/min-scale/);
    expect(await getObject('ksvc', 'kn-bad')).toBeUndefined();

    await kn(['domain', 'delete', 'kn-talk.example']);
    expect(await kn(['service', 'delete', svc])).toContain(`Service '${svc}' successfully deleted`);
    await eventually(
      `${svc}'s Revisions gone`,
      async () =>
        (await kubectlJson<{ items: Revision[] }>(['get', 'revisions', '-l', `serving.knative.dev/service=${svc}`])).items.length === 0
          ? true
          : undefined,
      60_000,
    );
  });
});
