// DomainMapping and ClusterDomainClaim as the seed talk uses them: the seed's YAML applied with
// kubectl, read back through `kubectl get dm`, the claim, the KIngress and the Istio VirtualService, and the Temporal
// history of the mapping's workflow. config-network is restored at the end (the e2e files share one stack).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Condition } from '../../api/serving.js';
import { apply, getObject, kubectl, kubectlJson, temporalClient } from '../harness/cluster.js';
import { historySteps } from '../harness/history.js';
import { eventually } from '../harness/wait.js';

// The seed's two documents, as written there.
const seedMapping = `apiVersion: serving.knative.dev/v1beta1
kind: DomainMapping
metadata:
  name: coolcoffee.company
  namespace: default
spec:
  ref:
    apiVersion: serving.knative.dev/v1
    kind: Service
    name: coolcoffee-company
    namespace: default
`;
const seedClaim = `apiVersion: networking.internal.knative.dev/v1alpha1
kind: ClusterDomainClaim
metadata:
  name: coolcoffee.company
spec:
  namespace: default
`;

interface DomainMappingObj {
  metadata: { finalizers?: string[] };
  status?: { url?: string; address?: { url?: string }; conditions?: Condition[]; observedGeneration?: number };
}
interface VirtualService {
  spec: {
    gateways: string[];
    hosts: string[];
    http: {
      match: { authority?: { prefix?: string }; gateways?: string[]; headers?: object }[];
      rewrite?: { authority?: string };
      route: { destination: { host: string; port: { number: number } }; weight: number; headers?: { request?: { set?: Record<string, string> } } }[];
    }[];
  };
}
interface Claim {
  metadata: { name: string };
  spec: { namespace: string };
}

const KINGRESS = 'ingresses.networking.internal.knative.dev';
const cond = (o: { status?: { conditions?: Condition[] } } | undefined, t: string) => o?.status?.conditions?.find((c) => c.type === t);
const setNetwork = (data: Record<string, string>) =>
  kubectl(['patch', 'configmap', 'config-network', '-n', 'knative-serving', '--type=merge', '-p', JSON.stringify({ data })]);
const claimOf = async (name: string): Promise<Claim | undefined> => {
  try {
    return await kubectlJson<Claim>(['get', 'clusterdomainclaim', name]);
  } catch (err) {
    if (String(err).includes('NotFound')) return undefined;
    throw err;
  }
};
const mapping = (name: string, service: string) => ({
  apiVersion: 'serving.knative.dev/v1beta1',
  kind: 'DomainMapping',
  metadata: { name, namespace: 'default' },
  spec: { ref: { apiVersion: 'serving.knative.dev/v1', kind: 'Service', name: service } },
});
const ksvc = (name: string) => ({
  apiVersion: 'serving.knative.dev/v1',
  kind: 'Service',
  metadata: { name, namespace: 'default' },
  spec: { template: { spec: { containers: [{ image: 'nginx:1.27', ports: [{ containerPort: 80 }] }] } } },
});

async function mappingWhere(name: string, what: string, ok: (d: DomainMappingObj) => boolean, timeoutMs = 60_000): Promise<DomainMappingObj> {
  return eventually(
    `${name}: ${what}`,
    async () => {
      const d = await getObject<DomainMappingObj & { metadata: { generation?: number } }>('domainmapping', name);
      return d && d.status?.observedGeneration === d.metadata.generation && ok(d) ? d : undefined;
    },
    timeoutMs,
  );
}
const readyMapping = (name: string, timeoutMs?: number) => mappingWhere(name, 'Ready', (d) => cond(d, 'Ready')?.status === 'True', timeoutMs);
const gone = (what: string, probe: () => Promise<unknown>) => eventually(`${what} gone`, async () => (await probe()) === undefined, 60_000);

let t: Awaited<ReturnType<typeof temporalClient>>;
let autocreateBefore: string | undefined;
beforeAll(async () => {
  t = await temporalClient();
  const cm = await kubectlJson<{ data?: Record<string, string> }>(['get', 'configmap', 'config-network', '-n', 'knative-serving']);
  autocreateBefore = cm.data?.['autocreate-cluster-domain-claims'];
  await setNetwork({ 'autocreate-cluster-domain-claims': 'true' });
  await apply(ksvc('coolcoffee-company'));
});

afterAll(async () => {
  await t?.close();
  const names = ['coolcoffee.company', 'taken.coolcoffee.company', 'late.coolcoffee.company', 'probe.coolcoffee.company'];
  await kubectl(['delete', 'domainmapping', ...names, '--ignore-not-found']);
  await kubectl(['delete', 'clusterdomainclaim', ...names, '--ignore-not-found']);
  await kubectl(['delete', 'ksvc', 'coolcoffee-company', 'late-coffee', '--ignore-not-found']);
  if (autocreateBefore === undefined) {
    await kubectl([
      'patch',
      'configmap',
      'config-network',
      '-n',
      'knative-serving',
      '--type=json',
      '-p',
      JSON.stringify([{ op: 'remove', path: '/data/autocreate-cluster-domain-claims' }]),
    ]);
  } else {
    await setNetwork({ 'autocreate-cluster-domain-claims': autocreateBefore });
  }
});

describe('DomainMapping', () => {
  it('autocreate on: the seed mapping is Ready at http://coolcoffee.company, with its claim, KIngress and VirtualService', async () => {
    await kubectl(['apply', '-f', '-'], seedMapping);
    const dm = await readyMapping('coolcoffee.company', 120_000);
    expect(dm.status?.url).toBe('http://coolcoffee.company');
    expect(dm.status?.address?.url).toBe('http://coolcoffee.company');
    expect(dm.metadata.finalizers).toContain('domainmappings.serving.knative.dev');
    for (const type of ['DomainClaimed', 'ReferenceResolved', 'IngressReady']) expect(cond(dm, type)?.status).toBe('True');
    expect(cond(dm, 'CertificateProvisioned')).toMatchObject({
      status: 'True',
      reason: 'TLSNotEnabled',
      message: 'external-domain-tls is not enabled',
    });

    // kubectl get dm: the printer columns URL / READY / REASON.
    const table = await kubectl(['get', 'dm', 'coolcoffee.company']);
    expect(table).toMatch(/NAME\s+URL\s+READY\s+REASON/);
    expect(table).toMatch(/coolcoffee\.company\s+http:\/\/coolcoffee\.company\s+True/);

    // The claim Tidal created: the name, for this namespace.
    expect((await claimOf('coolcoffee.company'))?.spec.namespace).toBe('default');

    // The KIngress as upstream builds it, and the VirtualService net-istio renders from it.
    const ing = await getObject<{
      metadata: { labels: Record<string, string>; ownerReferences: { kind: string }[] };
      spec: { rules: { hosts: string[]; visibility: string; http: { paths: { rewriteHost: string; splits: object[] }[] } }[] };
    }>(KINGRESS, 'coolcoffee.company');
    expect(ing?.metadata.ownerReferences[0]?.kind).toBe('DomainMapping');
    expect(ing?.metadata.labels['serving.knative.dev/domainMappingNamespace']).toBe('default');
    expect(ing?.spec.rules).toEqual([
      {
        hosts: ['coolcoffee.company'],
        visibility: 'ExternalIP',
        http: {
          paths: [
            {
              rewriteHost: 'coolcoffee-company.default.svc.cluster.local',
              splits: [
                {
                  serviceNamespace: 'default',
                  serviceName: 'coolcoffee-company',
                  servicePort: 80,
                  percent: 100,
                  appendHeaders: { 'K-Original-Host': 'coolcoffee.company' },
                },
              ],
            },
          ],
        },
      },
    ]);
    const vs = (await getObject<VirtualService>('virtualservice', 'coolcoffee.company-ingress'))!;
    expect(vs.spec.hosts).toEqual(['coolcoffee.company']);
    expect(vs.spec.gateways).toEqual(['knative-serving/knative-ingress-gateway']);
    const served = vs.spec.http.find((h) => h.match.every((m) => m.headers === undefined))!;
    expect(served.match).toEqual([{ gateways: ['knative-serving/knative-ingress-gateway'], authority: { prefix: 'coolcoffee.company' } }]);
    expect(served.rewrite).toEqual({ authority: 'coolcoffee-company.default.svc.cluster.local' });
    expect(served.route).toEqual([
      {
        destination: { host: 'coolcoffee-company.default.svc.cluster.local', port: { number: 80 } },
        weight: 100,
        headers: { request: { set: { 'K-Original-Host': 'coolcoffee.company' } } },
      },
    ]);
    // No mesh VirtualService: the host is not cluster-local.
    expect(await getObject('virtualservice', 'coolcoffee.company-mesh')).toBeUndefined();

    // The mapping's own workflow did it, in one step per pass; the KIngress has no workflow of its own (ADR 0005).
    const steps = historySteps(await t.client.workflow.getHandle('DomainMapping/default/coolcoffee.company').fetchHistory()).map((s) => s.summary);
    expect(steps).toEqual(
      expect.arrayContaining([
        'map DomainMapping default/coolcoffee.company (ClusterDomainClaim, spec.ref, Ingress and its VirtualServices, status)',
      ]),
    );
    await expect(t.client.workflow.getHandle('Ingress/default/coolcoffee.company').describe()).rejects.toThrow(/not found/i);
  });

  it('deleting the mapping removes the claim it autocreated (the finalizer), and its KIngress goes with it', async () => {
    await kubectl(['delete', 'dm', 'coolcoffee.company', '--wait=false']);
    await gone('DomainMapping', () => getObject('dm', 'coolcoffee.company'));
    await gone('ClusterDomainClaim', () => claimOf('coolcoffee.company'));
    await gone('KIngress', () => getObject(KINGRESS, 'coolcoffee.company'));
  });

  it('a claim owned by another namespace: DomainClaimed=False DomainAlreadyClaimed, and deleting the mapping leaves the claim', async () => {
    await kubectl(
      ['apply', '-f', '-'],
      JSON.stringify({
        apiVersion: 'networking.internal.knative.dev/v1alpha1',
        kind: 'ClusterDomainClaim',
        metadata: { name: 'taken.coolcoffee.company' },
        spec: { namespace: 'elsewhere' },
      }),
    );
    await apply(mapping('taken.coolcoffee.company', 'coolcoffee-company'));
    const dm = await mappingWhere('taken.coolcoffee.company', 'DomainClaimed False', (d) => cond(d, 'DomainClaimed')?.status === 'False');
    expect(cond(dm, 'DomainClaimed')).toMatchObject({
      reason: 'DomainAlreadyClaimed',
      message: 'The domain name is already in use by another DomainMapping',
    });
    expect(cond(dm, 'Ready')).toMatchObject({ status: 'False', reason: 'DomainAlreadyClaimed' });
    expect(await getObject(KINGRESS, 'taken.coolcoffee.company')).toBeUndefined();
    // The claim is handed to this namespace: the mapping follows (the claim's change pokes it).
    await kubectl([
      'patch',
      'clusterdomainclaim',
      'taken.coolcoffee.company',
      '--type=merge',
      '-p',
      JSON.stringify({ spec: { namespace: 'default' } }),
    ]);
    await readyMapping('taken.coolcoffee.company');
    await kubectl([
      'patch',
      'clusterdomainclaim',
      'taken.coolcoffee.company',
      '--type=merge',
      '-p',
      JSON.stringify({ spec: { namespace: 'elsewhere' } }),
    ]);
    await mappingWhere('taken.coolcoffee.company', 'DomainClaimed False again', (d) => cond(d, 'DomainClaimed')?.status === 'False');
    await kubectl(['delete', 'dm', 'taken.coolcoffee.company']);
    await gone('DomainMapping', () => getObject('dm', 'taken.coolcoffee.company'));
    expect((await claimOf('taken.coolcoffee.company'))?.spec.namespace).toBe('elsewhere');
    await kubectl(['delete', 'clusterdomainclaim', 'taken.coolcoffee.company']);
  });

  it('autocreate off: the seed mapping is not Ready until an administrator applies the seed claim', async () => {
    // A probe mapping tells when the controller has the new config: its claim, deleted by hand, stays deleted only
    // once autocreate is off there (before, the claim's deletion pokes the probe, which creates it again).
    await apply(mapping('probe.coolcoffee.company', 'coolcoffee-company'));
    await readyMapping('probe.coolcoffee.company');
    await setNetwork({ 'autocreate-cluster-domain-claims': 'false' });
    await eventually(
      'autocreate off in force',
      async () => {
        if (await claimOf('probe.coolcoffee.company'))
          await kubectl(['delete', 'clusterdomainclaim', 'probe.coolcoffee.company', '--ignore-not-found']);
        const probe = await getObject<DomainMappingObj>('dm', 'probe.coolcoffee.company');
        return cond(probe, 'DomainClaimed')?.status === 'False' && (await claimOf('probe.coolcoffee.company')) === undefined;
      },
      60_000,
      1000,
    );
    await kubectl(['delete', 'dm', 'probe.coolcoffee.company']);
    await kubectl(['apply', '-f', '-'], seedMapping);
    const dm = await mappingWhere('coolcoffee.company', 'DomainClaimed False', (d) => cond(d, 'DomainClaimed')?.status === 'False');
    expect(cond(dm, 'Ready')).toMatchObject({ status: 'False', reason: 'DomainAlreadyClaimed' });
    expect(await claimOf('coolcoffee.company')).toBeUndefined();
    await kubectl(['apply', '-f', '-'], seedClaim);
    const ready = await readyMapping('coolcoffee.company');
    expect(ready.status?.url).toBe('http://coolcoffee.company');
    expect(await kubectl(['get', 'dm'])).toMatch(/coolcoffee\.company\s+http:\/\/coolcoffee\.company\s+True/);
    // Not Tidal's claim to delete while autocreate is off (upstream FinalizeKind).
    await kubectl(['delete', 'dm', 'coolcoffee.company']);
    await gone('DomainMapping', () => getObject('dm', 'coolcoffee.company'));
    expect((await claimOf('coolcoffee.company'))?.spec.namespace).toBe('default');
    await kubectl(['delete', 'clusterdomainclaim', 'coolcoffee.company']);
    await setNetwork({ 'autocreate-cluster-domain-claims': 'true' });
  });

  it('a ref to a missing Service: ReferenceResolved=False ResolveFailed, Ready once the Service appears, and again not when it goes', async () => {
    await apply(mapping('late.coolcoffee.company', 'late-coffee'));
    const dm = await mappingWhere('late.coolcoffee.company', 'ReferenceResolved False', (d) => cond(d, 'ReferenceResolved')?.status === 'False');
    expect(cond(dm, 'ReferenceResolved')).toMatchObject({
      reason: 'ResolveFailed',
      message: 'failed to get object default/late-coffee: services.serving.knative.dev "late-coffee" not found',
    });
    expect(cond(dm, 'DomainClaimed')?.status).toBe('True');
    await apply(ksvc('late-coffee'));
    const ready = await readyMapping('late.coolcoffee.company', 120_000);
    expect(cond(ready, 'ReferenceResolved')?.status).toBe('True');
    const vs = (await getObject<VirtualService>('virtualservice', 'late.coolcoffee.company-ingress'))!;
    expect(vs.spec.http.at(-1)?.rewrite).toEqual({ authority: 'late-coffee.default.svc.cluster.local' });
    await kubectl(['delete', 'ksvc', 'late-coffee']);
    await mappingWhere('late.coolcoffee.company', 'ReferenceResolved False again', (d) => cond(d, 'ReferenceResolved')?.status === 'False');
  });

  it('the webhook refuses a mapping under the cluster domain, and one whose ref names another namespace', async () => {
    await expect(apply(mapping('web.default.svc.cluster.local', 'coolcoffee-company'))).rejects.toThrow(
      /must not be a subdomain of cluster local domain "cluster.local": metadata.name/,
    );
    const other = mapping('other.coolcoffee.company', 'coolcoffee-company');
    other.spec.ref = { ...other.spec.ref, namespace: 'elsewhere' } as typeof other.spec.ref;
    await expect(apply(other)).rejects.toThrow(/mismatched namespaces: spec.ref.namespace/);
  });
});
