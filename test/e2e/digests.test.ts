// Tag-to-digest resolution against real registries (Debian's docker-registry on loopback, TLS, htpasswd), driven
// as a user would: kubectl apply Services and Secrets, then read Revision status, the Deployment, the Temporal
// history and the controller's log.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Condition, Revision } from '../../api/serving.js';
import { pushImage } from '../../dev/oci-images.js';
import { startRegistry, stopRegistry } from '../../dev/registry.js';
import { apply, getObject, kubectl, stack, temporalClient } from '../harness/cluster.js';
import { eventually } from '../harness/wait.js';

const regs = () => stack().registries;
const cond = (r: Revision | undefined, type: string): Condition | undefined => r?.status?.conditions?.find((c) => c.type === type);
let t: Awaited<ReturnType<typeof temporalClient>>;
const digests: Record<string, string> = {};
let password = '';

function ksvc(name: string, image: string, spec: Record<string, unknown> = {}): object {
  return {
    apiVersion: 'serving.knative.dev/v1',
    kind: 'Service',
    metadata: { name, namespace: 'default' },
    spec: { template: { spec: { ...spec, containers: [{ image, ports: [{ containerPort: 8080 }] }] } } },
  };
}

function dockerConfigSecret(name: string, host: string, user: string, pass: string): object {
  const auth = Buffer.from(`${user}:${pass}`).toString('base64');
  const config = JSON.stringify({ auths: { [host]: { username: user, password: pass, auth } } });
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name, namespace: 'default' },
    type: 'kubernetes.io/dockerconfigjson',
    data: { '.dockerconfigjson': Buffer.from(config).toString('base64') },
  };
}

async function revision(name: string, done: (r: Revision) => boolean, timeoutMs = 120_000): Promise<Revision> {
  return eventually(
    `Revision ${name}`,
    async () => {
      const r = await getObject<Revision>('revision', name);
      return r && done(r) ? r : undefined;
    },
    timeoutMs,
  );
}

const ready = (r: Revision) => cond(r, 'Ready')?.status === 'True';
const missing = (r: Revision) => cond(r, 'ContainerHealthy')?.reason === 'ContainerMissing';
const deploymentImage = (rev: string) =>
  kubectl(['get', 'deployment', `${rev}-deployment`, '-o', 'jsonpath={.spec.template.spec.containers[0].image}']);

beforeAll(async () => {
  t = await temporalClient();
  const { public: pub, private: priv } = regs();
  password = priv.users.tidal ?? '';
  digests.hello = (await pushImage(pub, { repository: 'tidal/hello', tag: 'v1' })).digest;
  digests.multi = (
    await pushImage(pub, {
      repository: 'tidal/multi',
      tag: 'v1',
      platforms: [
        { os: 'linux', architecture: 'amd64' },
        { os: 'linux', architecture: 'arm64' },
      ],
    })
  ).digest;
  digests.secret = (await pushImage(priv, { repository: 'tidal/secret', tag: 'v1', user: 'tidal', password })).digest;
  await apply(dockerConfigSecret('regcred', priv.host, 'tidal', password));
  await apply(dockerConfigSecret('badcred', priv.host, 'tidal', 'not-the-password-1234'));
  await apply({
    apiVersion: 'v1',
    kind: 'ServiceAccount',
    metadata: { name: 'puller', namespace: 'default' },
    imagePullSecrets: [{ name: 'regcred' }],
  });
});

afterAll(async () => {
  await kubectl(['delete', 'ksvc', '--all', '--wait=false']);
  await t.close();
});

describe('tag-to-digest resolution', () => {
  it('a public tag is pinned to its digest in status and in the Deployment', async () => {
    const host = regs().public.host;
    await apply(ksvc('pub', `${host}/tidal/hello:v1`));
    const rev = await revision('pub-00001', ready);
    expect(rev.status?.containerStatuses).toEqual([{ name: 'user-container', imageDigest: `${host}/tidal/hello@${digests.hello}` }]);
    expect(await deploymentImage('pub-00001')).toBe(`${host}/tidal/hello@${digests.hello}`);
    // The spec keeps the tag the user wrote.
    expect(rev.spec.containers[0]?.image).toBe(`${host}/tidal/hello:v1`);
  });

  it('a multi-arch image resolves to its index digest', async () => {
    const host = regs().public.host;
    await apply(ksvc('multi', `${host}/tidal/multi:v1`));
    const rev = await revision('multi-00001', ready);
    expect(rev.status?.containerStatuses?.[0]?.imageDigest).toBe(`${host}/tidal/multi@${digests.multi}`);
  });

  it('a private image resolves with the pull secret on the Revision', async () => {
    const host = regs().private.host;
    await apply(ksvc('priv-secret', `${host}/tidal/secret:v1`, { imagePullSecrets: [{ name: 'regcred' }] }));
    const rev = await revision('priv-secret-00001', ready);
    expect(rev.status?.containerStatuses?.[0]?.imageDigest).toBe(`${host}/tidal/secret@${digests.secret}`);
  });

  it('a private image resolves with the pull secret of the ServiceAccount', async () => {
    const host = regs().private.host;
    await apply(ksvc('priv-sa', `${host}/tidal/secret:v1`, { serviceAccountName: 'puller' }));
    const rev = await revision('priv-sa-00001', ready);
    expect(rev.status?.containerStatuses?.[0]?.imageDigest).toBe(`${host}/tidal/secret@${digests.secret}`);
  });

  it('wrong credentials give ContainerMissing with a plain reason, and no secret reaches history or logs', async () => {
    const host = regs().private.host;
    await apply(ksvc('priv-bad', `${host}/tidal/secret:v1`, { imagePullSecrets: [{ name: 'badcred' }] }));
    const rev = await revision('priv-bad-00001', missing);
    const c = cond(rev, 'ContainerHealthy');
    expect(c?.status).toBe('False');
    expect(c?.message).toMatch(new RegExp(`^Unable to fetch image "${host}/tidal/secret:v1": failed to resolve image to digest: .*unauthorized`));
    expect(cond(rev, 'Ready')).toMatchObject({ status: 'False', reason: 'ContainerMissing' });
    const handle = t.client.workflow.getHandle('Revision/default/priv-bad-00001');
    // The step is retrying; Temporal shows its last failure on the pending activity.
    const pending = await eventually(
      'the failing step',
      async () => {
        const p = (await handle.describe()).raw.pendingActivities?.[0];
        return p?.lastFailure?.message ? p : undefined;
      },
      60_000,
    );
    expect(pending.lastFailure?.message).toContain('unauthorized');
    const history = JSON.stringify(await handle.fetchHistory());
    const described = JSON.stringify((await handle.describe()).raw);
    const log = readFileSync(path.join(stack().dir, 'logs', 'tidal-controller.log'), 'utf8');
    for (const secret of [
      'not-the-password-1234',
      password,
      Buffer.from(`tidal:${password}`).toString('base64'),
      Buffer.from('tidal:not-the-password-1234').toString('base64'),
    ]) {
      expect(history).not.toContain(secret);
      expect(described).not.toContain(secret);
      expect(log).not.toContain(secret);
    }
  });

  it('a missing tag says not found', async () => {
    const host = regs().public.host;
    await apply(ksvc('missing', `${host}/tidal/hello:v404`));
    const rev = await revision('missing-00001', missing);
    expect(cond(rev, 'ContainerHealthy')?.message).toContain('not found');
  });

  it('a registry in registries-skipping-tag-resolving is not resolved; the tag is kept', async () => {
    await apply(ksvc('skipped', 'ko.local/tidal/app:v1'));
    const rev = await revision('skipped-00001', ready);
    expect(rev.status?.containerStatuses).toEqual([{ name: 'user-container' }]);
    expect(await deploymentImage('skipped-00001')).toBe('ko.local/tidal/app:v1');
  });

  it('a digest reference passes through untouched', async () => {
    const image = `${regs().public.host}/tidal/hello@${digests.hello}`;
    await apply(ksvc('pinned', image));
    const rev = await revision('pinned-00001', ready);
    expect(rev.status?.containerStatuses?.[0]?.imageDigest).toBe(image);
    expect(await deploymentImage('pinned-00001')).toBe(image);
  });

  it('a registry outage shows as unreachable, retries appear in Temporal, and the Revision recovers by itself', async () => {
    const pub = regs().public;
    await stopRegistry(pub.dir);
    try {
      await apply(ksvc('outage', `${pub.host}/tidal/hello:v1`));
      const rev = await revision('outage-00001', missing);
      expect(cond(rev, 'ContainerHealthy')?.message).toContain('cannot reach registry');
      const pending = await eventually(
        'a retried step',
        async () => {
          const d = await t.client.workflow.getHandle('Revision/default/outage-00001').describe();
          const p = d.raw.pendingActivities?.[0];
          return p && (p.attempt ?? 0) >= 2 ? p : undefined;
        },
        60_000,
      );
      expect(pending.activityType?.name).toBe('resolveRevisionDigests');
      expect(pending.lastFailure?.message).toContain('cannot reach registry');
    } finally {
      await startRegistry({ dir: pub.dir, port: Number(pub.host.split(':')[1]), auth: false, tls: true });
    }
    const rev = await revision('outage-00001', ready, 120_000);
    expect(rev.status?.containerStatuses?.[0]?.imageDigest).toBe(`${pub.host}/tidal/hello@${digests.hello}`);
  });
});
