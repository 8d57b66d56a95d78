// Checks the DomainMapping and ClusterDomainClaim CRDs in deploy/crds: names, scope, short names, categories and
// printer columns as knative/serving config/core/300-resources/domain-mapping.yaml and knative/networking
// config/domain-claim.yaml declare them, and schemas that are structural and type the fields of their Go types.
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

interface Node {
  type?: string;
  format?: string;
  properties?: Record<string, Node>;
  items?: Node;
  additionalProperties?: Node | boolean;
  required?: string[];
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
      additionalPrinterColumns?: unknown[];
      schema: { openAPIV3Schema: Node };
    }[];
  };
}

const load = (file: string): Crd => parse(readFileSync(fileURLToPath(new URL(`../../deploy/crds/${file}`, import.meta.url)), 'utf8')) as Crd;

/** Structural-schema breaches below `node`: a node without a type, an array without items, mixed property kinds. */
function breaches(node: Node, path: string): string[] {
  const out: string[] = [];
  if (!node.type) out.push(`${path}: no type`);
  if (node['x-kubernetes-preserve-unknown-fields'] !== undefined) out.push(`${path}: preserves unknown fields`);
  if (node.type === 'array' && !node.items) out.push(`${path}: array without items`);
  if (node.properties && node.additionalProperties !== undefined) out.push(`${path}: properties and additionalProperties`);
  if (typeof node.additionalProperties === 'boolean') out.push(`${path}: boolean additionalProperties`);
  for (const r of node.required ?? []) if (!node.properties?.[r]) out.push(`${path}: required ${r} is not a property`);
  for (const [k, child] of Object.entries(node.properties ?? {})) out.push(...breaches(child, `${path}.${k}`));
  if (node.items) out.push(...breaches(node.items, `${path}[]`));
  if (typeof node.additionalProperties === 'object') out.push(...breaches(node.additionalProperties, `${path}{*}`));
  return out;
}

function at(node: Node, path: string): Node {
  let n: Node | undefined = node;
  for (const step of path.split('.')) n = step === '[]' ? n?.items : n?.properties?.[step];
  if (!n) throw new Error(`no schema at ${path}`);
  return n;
}

describe('serving.knative.dev_domainmappings.yaml', () => {
  const crd = load('serving.knative.dev_domainmappings.yaml');
  const version = crd.spec.versions[0]!;
  const root = version.schema.openAPIV3Schema;

  it('is a namespaced serving.knative.dev CRD with Knative names, short name dm and categories', () => {
    expect(crd.apiVersion).toBe('apiextensions.k8s.io/v1');
    expect(crd.kind).toBe('CustomResourceDefinition');
    expect(crd.metadata.name).toBe('domainmappings.serving.knative.dev');
    expect(crd.metadata.labels['knative.dev/crd-install']).toBe('true');
    expect(crd.spec.group).toBe('serving.knative.dev');
    expect(crd.spec.scope).toBe('Namespaced');
    expect(crd.spec.names).toEqual({
      kind: 'DomainMapping',
      plural: 'domainmappings',
      singular: 'domainmapping',
      shortNames: ['dm'],
      categories: ['all', 'knative', 'serving'],
    });
  });

  it('serves and stores v1beta1 with a status subresource and the URL/READY/REASON columns', () => {
    expect(crd.spec.versions).toHaveLength(1);
    expect(version).toMatchObject({ name: 'v1beta1', served: true, storage: true, subresources: { status: {} } });
    expect(version.additionalPrinterColumns).toEqual([
      { name: 'URL', type: 'string', jsonPath: '.status.url' },
      { name: 'Ready', type: 'string', jsonPath: ".status.conditions[?(@.type=='Ready')].status" },
      { name: 'Reason', type: 'string', jsonPath: ".status.conditions[?(@.type=='Ready')].reason" },
    ]);
  });

  it('has a structural schema typing spec.ref, spec.tls and the Addressable status', () => {
    expect(breaches(root, '')).toEqual([]);
    expect(at(root, 'metadata')).toEqual({ type: 'object' });
    expect(at(root, 'spec').required).toEqual(['ref']);
    expect(Object.keys(at(root, 'spec.ref').properties ?? {}).sort()).toEqual(['address', 'apiVersion', 'group', 'kind', 'name', 'namespace']);
    expect(at(root, 'spec.ref').required).toEqual(['kind', 'name']);
    expect(at(root, 'spec.tls').required).toEqual(['secretName']);
    expect(at(root, 'status.url').type).toBe('string');
    expect(Object.keys(at(root, 'status.address').properties ?? {}).sort()).toEqual(['CACerts', 'name', 'url']);
    expect(at(root, 'status.observedGeneration')).toMatchObject({ type: 'integer', format: 'int64' });
    expect(at(root, 'status.annotations')).toMatchObject({ type: 'object', additionalProperties: { type: 'string' } });
    expect(Object.keys(at(root, 'status.conditions.[]').properties ?? {}).sort()).toEqual([
      'lastTransitionTime',
      'message',
      'reason',
      'severity',
      'status',
      'type',
    ]);
  });
});

describe('networking.internal.knative.dev_clusterdomainclaims.yaml', () => {
  const crd = load('networking.internal.knative.dev_clusterdomainclaims.yaml');
  const version = crd.spec.versions[0]!;
  const root = version.schema.openAPIV3Schema;

  it('is a cluster-scoped networking.internal.knative.dev CRD with short name cdc', () => {
    expect(crd.metadata.name).toBe('clusterdomainclaims.networking.internal.knative.dev');
    expect(crd.spec.group).toBe('networking.internal.knative.dev');
    expect(crd.spec.scope).toBe('Cluster');
    expect(crd.spec.names).toEqual({
      kind: 'ClusterDomainClaim',
      plural: 'clusterdomainclaims',
      singular: 'clusterdomainclaim',
      shortNames: ['cdc'],
      categories: ['knative-internal', 'networking'],
    });
    expect(version).toMatchObject({ name: 'v1alpha1', served: true, storage: true });
  });

  it('has a structural schema with the required spec.namespace', () => {
    expect(breaches(root, '')).toEqual([]);
    expect(at(root, 'spec').required).toEqual(['namespace']);
    expect(at(root, 'spec.namespace').type).toBe('string');
  });
});
