// Checks the Knative Certificate CRD in deploy/crds: names, scope, short name, categories and printer columns as
// knative/networking config/certificate.yaml declares them, and a structural schema typing the Go type's fields.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';

interface Node {
  type?: string;
  format?: string;
  properties?: Record<string, Node>;
  items?: Node;
  additionalProperties?: Node | boolean;
  required?: string[];
  'x-kubernetes-int-or-string'?: boolean;
}

const crd = parse(
  readFileSync(fileURLToPath(new URL('../../deploy/crds/networking.internal.knative.dev_certificates.yaml', import.meta.url)), 'utf8'),
) as {
  metadata: { name: string; labels: Record<string, string> };
  spec: {
    group: string;
    scope: string;
    names: unknown;
    versions: {
      name: string;
      served: boolean;
      storage: boolean;
      subresources?: unknown;
      additionalPrinterColumns?: unknown[];
      schema: { openAPIV3Schema: Node };
    }[];
  };
};
const version = crd.spec.versions[0]!;
const root = version.schema.openAPIV3Schema;

/** Structural-schema breaches below `node`: a node without a type (unless int-or-string), an array without items. */
function breaches(node: Node, path: string): string[] {
  const out: string[] = [];
  if (!node.type && !node['x-kubernetes-int-or-string']) out.push(`${path}: no type`);
  if (node.type === 'array' && !node.items) out.push(`${path}: array without items`);
  for (const r of node.required ?? []) if (!node.properties?.[r]) out.push(`${path}: required ${r} is not a property`);
  for (const [k, child] of Object.entries(node.properties ?? {})) out.push(...breaches(child, `${path}.${k}`));
  if (node.items) out.push(...breaches(node.items, `${path}[]`));
  if (typeof node.additionalProperties === 'object') out.push(...breaches(node.additionalProperties, `${path}{*}`));
  return out;
}

const at = (path: string): Node =>
  path.split('.').reduce<Node>((n, step) => {
    const next = step === '[]' ? n.items : n.properties?.[step];
    if (!next) throw new Error(`no schema at ${path}`);
    return next;
  }, root);

describe('networking.internal.knative.dev_certificates.yaml', () => {
  it('is a namespaced networking.internal.knative.dev CRD with short name kcert', () => {
    expect(crd.metadata.name).toBe('certificates.networking.internal.knative.dev');
    expect(crd.metadata.labels['knative.dev/crd-install']).toBe('true');
    expect([crd.spec.group, crd.spec.scope]).toEqual(['networking.internal.knative.dev', 'Namespaced']);
    expect(crd.spec.names).toEqual({
      kind: 'Certificate',
      plural: 'certificates',
      singular: 'certificate',
      categories: ['knative-internal', 'networking'],
      shortNames: ['kcert'],
    });
  });

  it('serves and stores v1alpha1 with a status subresource and the Ready/Reason columns', () => {
    expect(crd.spec.versions).toHaveLength(1);
    expect(version).toMatchObject({ name: 'v1alpha1', served: true, storage: true, subresources: { status: {} } });
    expect(version.additionalPrinterColumns).toEqual([
      { name: 'Ready', type: 'string', jsonPath: '.status.conditions[?(@.type=="Ready")].status' },
      { name: 'Reason', type: 'string', jsonPath: '.status.conditions[?(@.type=="Ready")].reason' },
    ]);
  });

  it('has a structural schema: spec dnsNames/domain/secretName, status with conditions, notAfter and challenges', () => {
    expect(breaches(root, '')).toEqual([]);
    expect(at('spec').required).toEqual(['dnsNames', 'secretName']);
    expect(Object.keys(at('spec').properties ?? {}).sort()).toEqual(['dnsNames', 'domain', 'secretName']);
    expect(at('spec.dnsNames.[]').type).toBe('string');
    expect(Object.keys(at('status').properties ?? {}).sort()).toEqual([
      'annotations',
      'conditions',
      'http01Challenges',
      'notAfter',
      'observedGeneration',
    ]);
    expect(at('status.notAfter')).toMatchObject({ type: 'string', format: 'date-time' });
    expect(at('status.http01Challenges.[].servicePort')['x-kubernetes-int-or-string']).toBe(true);
    expect(at('status.conditions.[]').required).toEqual(['status', 'type']);
  });
});
