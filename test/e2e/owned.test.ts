// Children are their owner's to define, as upstream overwrites them: what someone else adds with kubectl to a
// Service's Configuration and Route (a label, an annotation, a spec field) is removed by the next pass, and a
// Revision's Deployment is updated in upstream's shape (the desired spec whole, foreign labels and annotations kept).
// Also: templates are stored with `metadata: {}`, as upstream's Go types store them.
import { describe, expect, it } from 'vitest';
import type { Configuration, Revision, Route, Service } from '../../api/serving.js';
import { apply, getObject, kubectl, kubectlJson } from '../harness/cluster.js';
import { eventually } from '../harness/wait.js';

const name = 'owned';

interface Deployment {
  metadata: { labels?: Record<string, string>; annotations?: Record<string, string> };
  spec: { replicas?: number; template: { spec: { containers: { name: string; env?: { name: string }[] }[] } } };
}

const mergePatch = (kind: string, obj: string, patch: object) =>
  kubectl(['patch', kind, obj, '-n', 'default', '--type=merge', '-p', JSON.stringify(patch)]);
const jsonPatch = (kind: string, obj: string, ops: object[]) =>
  kubectl(['patch', kind, obj, '-n', 'default', '--type=json', '-p', JSON.stringify(ops)]);
const foreignMeta = { metadata: { labels: { 'example.com/foreign': 'yes' }, annotations: { 'example.com/note': 'added by hand' } } };
const hasEnv = (containers: { env?: { name: string }[] }[] | undefined) =>
  (containers ?? []).some((c) => (c.env ?? []).some((e) => e.name === 'FOREIGN'));
const revisions = async () =>
  (await kubectlJson<{ items: Revision[] }>(['get', 'revisions', '-n', 'default', '-l', `serving.knative.dev/service=${name}`])).items;

describe('owned children: desired state wins', () => {
  it('a Service and its Configuration are stored with template metadata {} (no creationTimestamp: null)', async () => {
    await apply({
      apiVersion: 'serving.knative.dev/v1',
      kind: 'Service',
      metadata: { name, namespace: 'default' },
      spec: { template: { spec: { containers: [{ image: 'nginx:1.28', ports: [{ containerPort: 80 }] }] } } },
    });
    const ready = await eventually(
      'Service Ready',
      async () => {
        const s = await getObject<Service>('ksvc', name);
        return s?.status?.conditions?.find((c) => c.type === 'Ready')?.status === 'True' ? s : undefined;
      },
      120_000,
    );
    expect(ready.spec.template.metadata).toEqual({});
    expect((await getObject<Configuration>('configuration', name))!.spec.template.metadata).toEqual({});
  });

  it('a foreign label, annotation and template env on the Configuration, and a label, annotation and traffic tag on the Route are removed', async () => {
    const cfgBefore = (await getObject<Configuration>('configuration', name))!;
    const routeBefore = (await getObject<Route>('route', name))!;
    await mergePatch('configuration', name, foreignMeta);
    await jsonPatch('configuration', name, [{ op: 'add', path: '/spec/template/spec/containers/0/env', value: [{ name: 'FOREIGN', value: '1' }] }]);
    await mergePatch('route', name, foreignMeta);
    await jsonPatch('route', name, [{ op: 'add', path: '/spec/traffic/0/tag', value: 'foreign' }]);

    const cfg = await eventually(
      'Configuration as the Service defines it',
      async () => {
        const c = await getObject<Configuration>('configuration', name);
        const clean =
          c &&
          !hasEnv(c.spec.template.spec.containers) &&
          !c.metadata.labels?.['example.com/foreign'] &&
          !c.metadata.annotations?.['example.com/note'];
        return clean ? c : undefined;
      },
      60_000,
    );
    expect(cfg.spec).toEqual(cfgBefore.spec);
    expect(cfg.metadata.labels).toEqual(cfgBefore.metadata.labels);
    expect(cfg.metadata.annotations).toEqual(cfgBefore.metadata.annotations);

    const route = await eventually(
      'Route as the Service defines it',
      async () => {
        const r = await getObject<Route>('route', name);
        const clean =
          r && r.spec.traffic?.[0]?.tag === undefined && !r.metadata.labels?.['example.com/foreign'] && !r.metadata.annotations?.['example.com/note'];
        return clean ? r : undefined;
      },
      60_000,
    );
    expect(route.spec).toEqual(routeBefore.spec);
    expect(route.metadata.labels).toEqual(routeBefore.metadata.labels);
    expect(route.metadata.annotations).toEqual(routeBefore.metadata.annotations);

    // Each spec change is a generation, and upstream names Revisions by generation: the revert's generation gets a
    // Revision of the original template. None ever carries the foreign env.
    await eventually(
      'Configuration settled',
      async () => {
        const c = await getObject<Configuration>('configuration', name);
        return (
          c?.status?.observedGeneration === c?.metadata.generation && c?.status?.latestReadyRevisionName === c?.status?.latestCreatedRevisionName
        );
      },
      60_000,
    );
    const revs = await revisions();
    expect(revs.length).toBeGreaterThan(0);
    for (const r of revs) expect(hasEnv(r.spec.containers)).toBe(false);
    expect(revs.map((r) => r.metadata.labels?.['serving.knative.dev/configurationGeneration'])).not.toContain(
      String((cfgBefore.metadata.generation ?? 0) + 1),
    );
    // At rest: no more writes to either child.
    const settled = (await getObject<Configuration>('configuration', name))!.metadata.resourceVersion;
    await new Promise((r) => setTimeout(r, 3_000));
    expect((await getObject<Configuration>('configuration', name))!.metadata.resourceVersion).toBe(settled);
  });

  it("the Revision's Deployment: scaled by hand, it is updated as upstream updates it — the spec whole, foreign metadata kept", async () => {
    const c = (await getObject<Configuration>('configuration', name))!;
    const deployment = `${c.status!.latestReadyRevisionName!}-deployment`;
    const before = (await getObject<Deployment>('deployment', deployment))!;
    // One write (a strategic merge patch): a foreign edit that left the replica count alone would stay, as upstream
    // updates a Deployment only when what it wants of it changed.
    const patch = {
      ...foreignMeta,
      spec: {
        replicas: (before.spec.replicas ?? 0) + 3,
        template: { spec: { containers: [{ name: 'user-container', env: [{ name: 'FOREIGN', value: '1' }] }] } },
      },
    };
    await kubectl(['patch', 'deployment', deployment, '-n', 'default', '--type=strategic', '-p', JSON.stringify(patch)]);
    const after = await eventually(
      "Deployment back to the Revision's spec",
      async () => {
        const d = await getObject<Deployment>('deployment', deployment);
        return d && d.spec.replicas === before.spec.replicas && !hasEnv(d.spec.template.spec.containers) ? d : undefined;
      },
      60_000,
    );
    expect(after.metadata.labels?.['example.com/foreign']).toBe('yes');
    expect(after.metadata.annotations?.['example.com/note']).toBe('added by hand');
  });
});
