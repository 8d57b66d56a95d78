// Checks the KIngress CRD in deploy/crds (networking.internal.knative.dev/v1alpha1 Ingress): names, short names and
// printer columns as knative/networking config/ingress.yaml declares them, and a structural schema that types the
// fields of ingress_types.go.
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const FILE = fileURLToPath(new URL('../../deploy/crds/networking.internal.knative.dev_ingresses.yaml', import.meta.url));

interface Node {
  type?: string;
  format?: string;
  properties?: Record<string, Node>;
  items?: Node;
  additionalProperties?: Node | boolean;
  required?: string[];
  anyOf?: Node[];
  'x-kubernetes-int-or-string'?: boolean;
  'x-kubernetes-preserve-unknown-fields'?: boolean;
}

interface Crd {
  apiVersion: string;
  kind: string;
  metadata: { name: string; labels: Record<string, string> };
  spec: {
    group: string;
    scope: string;
    names: Record<string, unknown>;
    versions: {
      name: string;
      served: boolean;
      storage: boolean;
      subresources?: unknown;
      additionalPrinterColumns: unknown[];
      schema: { openAPIV3Schema: Node };
    }[];
  };
}

const crd = parse(readFileSync(FILE, 'utf8')) as Crd;
const version = crd.spec.versions[0]!;
const root = version.schema.openAPIV3Schema;

/** Paths of schema nodes without a type (int-or-string and preserve-unknown-fields nodes are exempt) and other breaches. */
function untyped(node: Node, path: string): string[] {
  if (node['x-kubernetes-int-or-string'] === true) {
    const types = (node.anyOf ?? []).map((n) => n.type);
    return node.type === undefined && types.join() === 'integer,string' ? [] : [`${path}: malformed int-or-string`];
  }
  if (node['x-kubernetes-preserve-unknown-fields'] === true)
    return node.type === 'object' ? [] : [`${path}: preserve-unknown-fields on ${node.type}`];
  const out: string[] = [];
  if (!node.type) out.push(`${path}: no type`);
  if (node.type === 'array' && !node.items) out.push(`${path}: array without items`);
  if (node.properties && node.additionalProperties !== undefined) out.push(`${path}: properties and additionalProperties`);
  if (typeof node.additionalProperties === 'boolean') out.push(`${path}: boolean additionalProperties`);
  for (const r of node.required ?? []) if (!node.properties?.[r]) out.push(`${path}: required ${r} is not a property`);
  for (const [k, child] of Object.entries(node.properties ?? {})) out.push(...untyped(child, `${path}.${k}`));
  if (node.items) out.push(...untyped(node.items, `${path}[]`));
  if (typeof node.additionalProperties === 'object') out.push(...untyped(node.additionalProperties, `${path}{}`));
  return out;
}

function at(path: string): Node {
  let node: Node | undefined = root;
  for (const step of path.split('.')) node = step === '[]' ? node?.items : node?.properties?.[step];
  if (!node) throw new Error(`no schema node at ${path}`);
  return node;
}

const keys = (path: string): string[] => Object.keys(at(path).properties ?? {}).sort();

describe('KIngress CRD', () => {
  it('is named as Knative names it: ingresses.networking.internal.knative.dev, short names kingress/king', () => {
    expect(crd.apiVersion).toBe('apiextensions.k8s.io/v1');
    expect(crd.kind).toBe('CustomResourceDefinition');
    expect(crd.metadata.name).toBe('ingresses.networking.internal.knative.dev');
    expect(crd.metadata.labels['knative.dev/crd-install']).toBe('true');
    expect(crd.spec.group).toBe('networking.internal.knative.dev');
    expect(crd.spec.scope).toBe('Namespaced');
    expect(crd.spec.names).toEqual({
      kind: 'Ingress',
      plural: 'ingresses',
      singular: 'ingress',
      categories: ['knative-internal', 'networking'],
      shortNames: ['kingress', 'king'],
    });
  });

  it('serves and stores v1alpha1 only, with a status subresource', () => {
    expect(crd.spec.versions).toHaveLength(1);
    expect(version).toMatchObject({ name: 'v1alpha1', served: true, storage: true, subresources: { status: {} } });
  });

  it('prints Ready and Reason like Knative', () => {
    expect(version.additionalPrinterColumns).toEqual([
      { name: 'Ready', type: 'string', jsonPath: ".status.conditions[?(@.type=='Ready')].status" },
      { name: 'Reason', type: 'string', jsonPath: ".status.conditions[?(@.type=='Ready')].reason" },
    ]);
  });

  it('is structural: every node has a type, except int-or-string and preserve-unknown-fields nodes', () => {
    expect(untyped(root, '')).toEqual([]);
    expect(untyped({ type: 'object', properties: { a: {} } }, '')).toEqual(['.a: no type']);
    expect(untyped({ type: 'array' }, '')).toEqual([': array without items']);
    expect(untyped({ 'x-kubernetes-int-or-string': true, anyOf: [{ type: 'string' }] }, '')).toEqual([': malformed int-or-string']);
    expect(at('metadata')).toEqual({ type: 'object' });
  });

  it('types the spec: tls, rules (hosts, visibility, http.paths), httpOption', () => {
    expect(keys('spec')).toEqual(['httpOption', 'rules', 'tls', 'visibility']);
    expect(keys('spec.tls.[]')).toEqual(['hosts', 'privateKey', 'secretName', 'secretNamespace', 'serverCertificate']);
    expect(keys('spec.rules.[]')).toEqual(['hosts', 'http', 'visibility']);
    expect(at('spec.rules.[].hosts')).toMatchObject({ type: 'array', items: { type: 'string' } });
    expect(at('spec.rules.[].visibility').type).toBe('string');
    expect(at('spec.rules.[].http').required).toEqual(['paths']);
    expect(keys('spec.rules.[].http.paths.[]')).toEqual(['appendHeaders', 'headers', 'path', 'retries', 'rewriteHost', 'splits', 'timeout']);
    expect(at('spec.rules.[].http.paths.[]').required).toEqual(['splits']);
    expect(at('spec.rules.[].http.paths.[].appendHeaders')).toMatchObject({ type: 'object', additionalProperties: { type: 'string' } });
    const header = at('spec.rules.[].http.paths.[].headers').additionalProperties as Node;
    expect(header).toMatchObject({ type: 'object', required: ['exact'], properties: { exact: { type: 'string' } } });
  });

  it('types the splits: serviceName, serviceNamespace, servicePort (int-or-string), percent, appendHeaders', () => {
    const split = 'spec.rules.[].http.paths.[].splits.[]';
    expect(keys(split)).toEqual(['appendHeaders', 'percent', 'serviceName', 'serviceNamespace', 'servicePort']);
    expect(at(split).required).toEqual(['serviceName', 'serviceNamespace', 'servicePort']);
    expect(at(`${split}.servicePort`)).toMatchObject({ anyOf: [{ type: 'integer' }, { type: 'string' }], 'x-kubernetes-int-or-string': true });
    expect(at(`${split}.servicePort`).type).toBeUndefined();
    expect(at(`${split}.percent`).type).toBe('integer');
    expect(at(`${split}.appendHeaders`)).toMatchObject({ type: 'object', additionalProperties: { type: 'string' } });
  });

  it('types the status: conditions, observedGeneration, public/private load balancers', () => {
    expect(keys('status')).toEqual(['annotations', 'conditions', 'loadBalancer', 'observedGeneration', 'privateLoadBalancer', 'publicLoadBalancer']);
    expect(at('status.observedGeneration')).toMatchObject({ type: 'integer', format: 'int64' });
    expect(at('status.conditions.[]').required).toEqual(['status', 'type']);
    expect(keys('status.conditions.[]')).toEqual(['lastTransitionTime', 'message', 'reason', 'severity', 'status', 'type']);
    for (const lb of ['publicLoadBalancer', 'privateLoadBalancer', 'loadBalancer']) {
      expect(keys(`status.${lb}.ingress.[]`)).toEqual(['domain', 'domainInternal', 'ip', 'meshOnly']);
      expect(at(`status.${lb}.ingress.[].meshOnly`).type).toBe('boolean');
    }
  });
});
