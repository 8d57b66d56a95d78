// The in-cluster manifests (deploy/): every file parses and is in the kustomization (kustomize renders them:
// test/integration/deploy.test.ts), RBAC is least-privilege (no wildcard, exactly deploy/README.md's table), and the
// controller runs restricted, replicated and probed, with the webhook configurations pointing at a Service that
// reaches its webhook port.
import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { all, deployDir, docs, kustomization, yamlFiles } from '../fixtures/deploy-manifests.js';

const find = (kind: string, name: string) => {
  const o = all.find((x) => x.kind === kind && x.metadata.name === name);
  if (!o) throw new Error(`${kind} ${name} not in the kustomization`);
  return o;
};

describe('deploy/ manifests', () => {
  it('every manifest parses and the kustomization lists every one', () => {
    const files = yamlFiles(deployDir).filter((f) => f !== 'kustomization.yaml');
    for (const f of files) expect(docs(f).length, f).toBeGreaterThan(0);
    expect([...kustomization.resources].sort()).toEqual(files.sort());
    for (const o of all) {
      expect(o.apiVersion, `${o.kind} ${o.metadata.name}`).toBeTruthy();
      expect(o.metadata.name, o.kind).toBeTruthy();
    }
  });

  it('namespaced objects live in knative-serving (or istio-system for Istio and the gateway certificate)', () => {
    for (const o of all) {
      if (
        [
          'Namespace',
          'CustomResourceDefinition',
          'ClusterRole',
          'ClusterRoleBinding',
          'MutatingWebhookConfiguration',
          'ValidatingWebhookConfiguration',
        ].includes(o.kind)
      ) {
        expect(o.metadata.namespace, `${o.kind} ${o.metadata.name}`).toBeUndefined();
      } else {
        expect(['knative-serving', 'istio-system'], `${o.kind} ${o.metadata.name}`).toContain(o.metadata.namespace);
      }
    }
    expect(find('Namespace', 'knative-serving')).toBeTruthy();
  });
});

/** Every (scope, group, resource) line of the RBAC rules: scope 'cluster' or the Role's namespace. */
function rbacLines(): Set<string> {
  const out = new Set<string>();
  for (const o of all.filter((x) => x.kind === 'ClusterRole' || x.kind === 'Role')) {
    const scope = o.kind === 'ClusterRole' ? 'cluster' : (o.metadata.namespace ?? '');
    for (const r of o.rules as { apiGroups: string[]; resources: string[]; verbs: string[]; resourceNames?: string[] }[]) {
      for (const g of r.apiGroups)
        for (const res of r.resources)
          out.add([scope, g, res, [...r.verbs].sort().join(','), [...(r.resourceNames ?? [])].sort().join(',')].join('|'));
    }
  }
  return out;
}

/** The same lines from deploy/README.md's RBAC table. */
function readmeLines(): Set<string> {
  const out = new Set<string>();
  const readme = readFileSync(path.join(deployDir, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('## RBAC'));
  for (const line of section.split('\n')) {
    const cells = line.split('|').map((c) => c.trim());
    // | scope | group | resource | verbs | names | why |
    if (cells.length < 8 || !/^(cluster|knative-serving|istio-system)$/.test(cells[1] ?? '')) continue;
    const [, scope, group, resources, verbs, names] = cells as [string, string, string, string, string, string];
    const split = (s: string) =>
      s
        .split(',')
        .map((x) => x.trim())
        .filter((x) => x !== '');
    for (const res of split(resources)) {
      out.add([scope, group === '(core)' ? '' : group, res, split(verbs).sort().join(','), split(names).sort().join(',')].join('|'));
    }
  }
  return out;
}

describe('RBAC', () => {
  const roles = all.filter((x) => x.kind === 'ClusterRole' || x.kind === 'Role');

  it('has no wildcard anywhere and no rule without verbs', () => {
    expect(roles.length).toBe(3);
    for (const o of roles) {
      for (const r of o.rules as Record<string, string[] | undefined>[]) {
        for (const field of ['apiGroups', 'resources', 'verbs', 'resourceNames', 'nonResourceURLs']) {
          for (const v of r[field] ?? []) expect(v, `${o.kind} ${o.metadata.name} ${field}`).not.toMatch(/\*/);
        }
        expect(r.verbs?.length).toBeGreaterThan(0);
        expect(r.nonResourceURLs).toBeUndefined();
      }
      expect(o.aggregationRule).toBeUndefined();
    }
  });

  it('grants nothing that deploy/README.md does not justify, and the README lists nothing not granted', () => {
    const granted = rbacLines();
    const documented = readmeLines();
    expect(documented.size).toBeGreaterThan(20);
    expect([...granted].sort()).toEqual([...documented].sort());
  });

  it('grants no escalation: no RBAC objects, no impersonation, no bind/escalate, no list of Secrets', () => {
    for (const line of rbacLines()) {
      const [, group, resource, verbs] = line.split('|') as [string, string, string, string];
      expect(group).not.toBe('rbac.authorization.k8s.io');
      expect(verbs.split(',')).not.toContain('impersonate');
      expect(verbs.split(',')).not.toContain('escalate');
      expect(verbs.split(',')).not.toContain('bind');
      if (resource === 'secrets') expect(verbs.split(',').filter((v) => v === 'list' || v === 'watch')).toEqual([]);
    }
  });

  it('binds the ClusterRole and both Roles to the controller ServiceAccount, which the Deployment runs as', () => {
    const sa = find('ServiceAccount', 'controller');
    expect(sa.metadata.namespace).toBe('knative-serving');
    const bindings = all.filter((x) => x.kind === 'ClusterRoleBinding' || x.kind === 'RoleBinding');
    for (const role of roles) {
      const b = bindings.find(
        (x) => x.roleRef.kind === role.kind && x.roleRef.name === role.metadata.name && x.metadata.namespace === role.metadata.namespace,
      );
      expect(b, `${role.kind} ${role.metadata.name}`).toBeTruthy();
      expect(b?.subjects).toEqual([{ kind: 'ServiceAccount', name: 'controller', namespace: 'knative-serving' }]);
    }
    expect(find('Deployment', 'controller').spec.template.spec.serviceAccountName).toBe('controller');
  });
});

describe('the controller Deployment', () => {
  const dep = find('Deployment', 'controller');
  const pod = dep.spec.template.spec;
  const c = pod.containers[0];
  const env = Object.fromEntries((c.env as { name: string; value?: string }[]).map((e) => [e.name, e.value]));
  const portOf = (name: string) => (c.ports as { name: string; containerPort: number }[]).find((p) => p.name === name)?.containerPort;

  it('runs 3 replicas with a PodDisruptionBudget and topology spread over zones and nodes', () => {
    expect(dep.spec.replicas).toBe(3);
    const labels = dep.spec.template.metadata.labels as Record<string, string>;
    for (const [k, v] of Object.entries(dep.spec.selector.matchLabels as Record<string, string>)) expect(labels[k]).toBe(v);
    const pdb = find('PodDisruptionBudget', 'controller');
    expect(pdb.spec.selector.matchLabels).toEqual(dep.spec.selector.matchLabels);
    expect(pdb.spec.maxUnavailable).toBe(1);
    const keys = (pod.topologySpreadConstraints as { topologyKey: string; labelSelector: { matchLabels: object } }[]).map((t) => {
      expect(t.labelSelector.matchLabels).toEqual(dep.spec.selector.matchLabels);
      return t.topologyKey;
    });
    expect(keys.sort()).toEqual(['kubernetes.io/hostname', 'topology.kubernetes.io/zone']);
  });

  it('has the restricted security context', () => {
    expect(pod.securityContext).toMatchObject({ runAsNonRoot: true, runAsUser: 65532, seccompProfile: { type: 'RuntimeDefault' } });
    for (const container of [...pod.containers, ...(pod.initContainers ?? [])]) {
      expect(container.securityContext).toMatchObject({
        allowPrivilegeEscalation: false,
        readOnlyRootFilesystem: true,
        runAsNonRoot: true,
        capabilities: { drop: ['ALL'] },
        seccompProfile: { type: 'RuntimeDefault' },
      });
      expect(container.securityContext.capabilities.add).toBeUndefined();
      expect(container.securityContext.privileged).not.toBe(true);
    }
    expect(pod.hostNetwork).not.toBe(true);
    expect(pod.hostPID).not.toBe(true);
    for (const v of pod.volumes as Record<string, unknown>[]) expect(v.hostPath, String(v.name)).toBeUndefined();
  });

  it('probes /healthz and /readyz on the metrics port and sets requests and limits', () => {
    expect(portOf('metrics')).toBe(Number(env.METRICS_PORT));
    expect(c.livenessProbe.httpGet).toEqual({ path: '/healthz', port: 'metrics' });
    expect(c.readinessProbe.httpGet).toEqual({ path: '/readyz', port: 'metrics' });
    expect(c.resources.requests.cpu).toBeTruthy();
    expect(c.resources.requests.memory).toBeTruthy();
    expect(c.resources.limits.memory).toBeTruthy();
  });

  it('the webhook configurations name the Service webhook, which reaches the container webhook port', () => {
    const svc = find('Service', 'webhook');
    expect(svc.spec.selector).toEqual(dep.spec.selector.matchLabels);
    const port = (svc.spec.ports as { port: number; targetPort: string }[])[0];
    expect(port?.port).toBe(443);
    expect(portOf(port?.targetPort ?? '')).toBe(Number(env.TIDAL_WEBHOOK_PORT));
    const configs = all.filter((x) => x.kind === 'MutatingWebhookConfiguration' || x.kind === 'ValidatingWebhookConfiguration');
    expect(configs.length).toBe(3);
    for (const cfg of configs) {
      for (const w of cfg.webhooks as { clientConfig: { service?: { name: string; namespace: string; port?: number }; url?: string } }[]) {
        expect(w.clientConfig.url).toBeUndefined();
        expect(w.clientConfig.service).toMatchObject({ name: 'webhook', namespace: 'knative-serving' });
        expect(w.clientConfig.service?.port ?? 443).toBe(443);
      }
    }
    const metrics = find('Service', 'controller');
    expect((metrics.spec.ports as { targetPort: string }[])[0]?.targetPort).toBe('metrics');
  });

  it('runs in the namespace it reads its config from, with the image built by npm run image', () => {
    expect(
      (c.env as { name: string; valueFrom?: { fieldRef?: { fieldPath: string } } }[]).find((e) => e.name === 'SYSTEM_NAMESPACE')?.valueFrom?.fieldRef
        ?.fieldPath,
    ).toBe('metadata.namespace');
    expect(c.image).toMatch(/\/controller:/);
    expect(c.command).toBeUndefined(); // the image's entrypoint: node dist/controller.js
  });
});
