// Checks the serving.knative.dev/v1 CRDs in deploy/crds: names, printer columns (as Knative's
// config/core/300-resources show them with `kubectl get`) and that every schema stays structural.
import { describe, it, expect } from 'vitest';
import { parse } from 'yaml';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const CRD_DIR = fileURLToPath(new URL('../../deploy/crds/', import.meta.url));

type Schema = Record<string, unknown> & {
  type?: string;
  properties?: Record<string, Schema>;
  items?: Schema;
  additionalProperties?: Schema | boolean;
  required?: string[];
  anyOf?: Schema[];
  format?: string;
};

interface Column {
  name: string;
  type: string;
  jsonPath: string;
}

interface Crd {
  apiVersion: string;
  kind: string;
  metadata: { name: string; labels: Record<string, string> };
  spec: {
    group: string;
    scope: string;
    names: { kind: string; plural: string; singular: string; shortNames: string[]; categories: string[] };
    versions: {
      name: string;
      served: boolean;
      storage: boolean;
      subresources?: { status?: object };
      additionalPrinterColumns: Column[];
      schema: { openAPIV3Schema: Schema };
    }[];
  };
}

function load(file: string): Crd {
  return parse(readFileSync(CRD_DIR + file, 'utf8')) as Crd;
}

const READY = ".status.conditions[?(@.type=='Ready')].status";
const REASON = ".status.conditions[?(@.type=='Ready')].reason";

interface Expected {
  file: string;
  kind: string;
  plural: string;
  singular: string;
  shortNames: string[];
  duck: Record<string, string>;
  columns: [name: string, jsonPath: string, type?: string][];
}

const EXPECTED: Expected[] = [
  {
    file: 'serving.knative.dev_services.yaml',
    kind: 'Service',
    plural: 'services',
    singular: 'service',
    shortNames: ['kservice', 'ksvc'],
    duck: { 'duck.knative.dev/addressable': 'true', 'duck.knative.dev/podspecable': 'true' },
    columns: [
      ['URL', '.status.url'],
      ['LatestCreated', '.status.latestCreatedRevisionName'],
      ['LatestReady', '.status.latestReadyRevisionName'],
      ['Ready', READY],
      ['Reason', REASON],
    ],
  },
  {
    file: 'serving.knative.dev_configurations.yaml',
    kind: 'Configuration',
    plural: 'configurations',
    singular: 'configuration',
    shortNames: ['config', 'cfg'],
    duck: { 'duck.knative.dev/podspecable': 'true' },
    columns: [
      ['LatestCreated', '.status.latestCreatedRevisionName'],
      ['LatestReady', '.status.latestReadyRevisionName'],
      ['Ready', READY],
      ['Reason', REASON],
    ],
  },
  {
    file: 'serving.knative.dev_revisions.yaml',
    kind: 'Revision',
    plural: 'revisions',
    singular: 'revision',
    shortNames: ['rev'],
    duck: {},
    columns: [
      ['Config Name', ".metadata.labels['serving\\.knative\\.dev/configuration']"],
      ['Generation', ".metadata.labels['serving\\.knative\\.dev/configurationGeneration']"],
      ['Ready', READY],
      ['Reason', REASON],
      ['Actual Replicas', '.status.actualReplicas', 'integer'],
      ['Desired Replicas', '.status.desiredReplicas', 'integer'],
    ],
  },
  {
    file: 'serving.knative.dev_routes.yaml',
    kind: 'Route',
    plural: 'routes',
    singular: 'route',
    shortNames: ['rt'],
    duck: { 'duck.knative.dev/addressable': 'true' },
    columns: [
      ['URL', '.status.url'],
      ['Ready', READY],
      ['Reason', REASON],
    ],
  },
];

const KNOWN_TYPES = new Set(['object', 'array', 'string', 'integer', 'number', 'boolean']);

/**
 * Returns the structural-schema violations below `node` (empty when structural).
 * Every node needs a `type`, except an x-kubernetes-int-or-string node, whose only allowed
 * shape is `anyOf: [{type: integer}, {type: string}]`. Arrays need `items`;
 * x-kubernetes-preserve-unknown-fields is only allowed on objects; anyOf/oneOf/allOf/not are
 * only allowed in the int-or-string form; `properties` and `additionalProperties` are exclusive.
 */
function structuralErrors(node: Schema, path: string): string[] {
  const errs: string[] = [];
  if (node === null || typeof node !== 'object' || Array.isArray(node)) return [`${path}: not a schema object`];

  if (node['x-kubernetes-int-or-string'] === true) {
    if (node.type !== undefined) errs.push(`${path}: int-or-string must not set type`);
    const anyOf = node.anyOf;
    if (anyOf !== undefined) {
      const types = anyOf.map((s) => s.type);
      if (anyOf.length !== 2 || types[0] !== 'integer' || types[1] !== 'string') {
        errs.push(`${path}: int-or-string anyOf must be [integer, string]`);
      }
    }
    return errs;
  }

  for (const k of ['anyOf', 'oneOf', 'allOf', 'not']) {
    if (k in node) errs.push(`${path}: ${k} is only allowed for int-or-string here`);
  }
  if (typeof node.type !== 'string' || !KNOWN_TYPES.has(node.type)) {
    errs.push(`${path}: missing or unknown type (${String(node.type)})`);
    return errs;
  }
  if (node['x-kubernetes-preserve-unknown-fields'] !== undefined) {
    if (node['x-kubernetes-preserve-unknown-fields'] !== true) errs.push(`${path}: preserve-unknown-fields must be true`);
    if (node.type !== 'object') errs.push(`${path}: preserve-unknown-fields on a non-object`);
  }

  if (node.type === 'object') {
    if (node.properties !== undefined && node.additionalProperties !== undefined) {
      errs.push(`${path}: properties and additionalProperties are mutually exclusive`);
    }
    for (const [name, child] of Object.entries(node.properties ?? {})) {
      errs.push(...structuralErrors(child, `${path}.${name}`));
    }
    if (node.additionalProperties !== undefined) {
      if (typeof node.additionalProperties === 'boolean') {
        errs.push(`${path}: additionalProperties must be a schema`);
      } else {
        errs.push(...structuralErrors(node.additionalProperties, `${path}{*}`));
      }
    }
    for (const r of node.required ?? []) {
      if (node.properties && !(r in node.properties)) errs.push(`${path}: required ${r} is not a property`);
    }
  } else if (node.properties !== undefined || node.additionalProperties !== undefined) {
    errs.push(`${path}: properties on a ${node.type}`);
  }

  if (node.type === 'array') {
    if (node.items === undefined || Array.isArray(node.items)) {
      errs.push(`${path}: array without a single items schema`);
    } else {
      errs.push(...structuralErrors(node.items, `${path}[]`));
      if (node['x-kubernetes-list-type'] === 'map') {
        const keys = (node['x-kubernetes-list-map-keys'] as string[] | undefined) ?? [];
        if (keys.length === 0) errs.push(`${path}: list-type map without list-map-keys`);
        for (const key of keys) {
          const prop = node.items.properties?.[key];
          if (!prop) errs.push(`${path}: list-map key ${key} is not a property`);
          else if (!(node.items.required ?? []).includes(key) && prop.default === undefined) {
            errs.push(`${path}: list-map key ${key} must be required or defaulted`);
          }
        }
      }
    }
  } else if (node.items !== undefined) {
    errs.push(`${path}: items on a ${node.type}`);
  }
  return errs;
}

/** Follows a dotted path of property names (`[]` steps into array items). */
function at(schema: Schema, path: string): Schema {
  let node: Schema | undefined = schema;
  for (const step of path.split('.')) {
    if (node === undefined) break;
    node = step === '[]' ? node.items : node.properties?.[step];
  }
  if (node === undefined) throw new Error(`no schema at ${path}`);
  return node;
}

function schemaOf(crd: Crd): Schema {
  return crd.spec.versions[0]!.schema.openAPIV3Schema;
}

describe('structural check', () => {
  it('accepts a structural schema and rejects non-structural ones', () => {
    const good: Schema = {
      type: 'object',
      properties: {
        a: { type: 'string' },
        p: { anyOf: [{ type: 'integer' }, { type: 'string' }], 'x-kubernetes-int-or-string': true },
        o: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
        m: { type: 'object', additionalProperties: { type: 'string' } },
        l: { type: 'array', items: { type: 'string' } },
      },
    };
    expect(structuralErrors(good, '')).toEqual([]);
    expect(structuralErrors({ type: 'object', properties: { a: {} } }, '')).toEqual(['.a: missing or unknown type (undefined)']);
    expect(structuralErrors({ type: 'array' }, '')).toHaveLength(1);
    expect(structuralErrors({ type: 'array', items: { properties: { x: { type: 'string' } } } }, '')).not.toEqual([]);
    expect(structuralErrors({ type: 'string', 'x-kubernetes-preserve-unknown-fields': true }, '')).not.toEqual([]);
    expect(structuralErrors({ type: 'object', anyOf: [{ type: 'string' }] }, '')).not.toEqual([]);
    expect(
      structuralErrors(
        {
          type: 'array',
          'x-kubernetes-list-type': 'map',
          'x-kubernetes-list-map-keys': ['name'],
          items: { type: 'object', properties: { name: { type: 'string' } } },
        },
        '',
      ),
    ).toEqual([': list-map key name must be required or defaulted']);
  });
});

describe.each(EXPECTED)('$file', (exp) => {
  const crd = load(exp.file);
  const version = crd.spec.versions[0]!;
  const schema = schemaOf(crd);

  it('is a namespaced serving.knative.dev CRD with Knative names and labels', () => {
    expect(crd.apiVersion).toBe('apiextensions.k8s.io/v1');
    expect(crd.kind).toBe('CustomResourceDefinition');
    expect(crd.metadata.name).toBe(`${exp.plural}.serving.knative.dev`);
    expect(crd.spec.group).toBe('serving.knative.dev');
    expect(crd.spec.scope).toBe('Namespaced');
    expect(crd.spec.names).toEqual({
      kind: exp.kind,
      plural: exp.plural,
      singular: exp.singular,
      shortNames: exp.shortNames,
      categories: ['all', 'knative', 'serving'],
    });
    const labels = crd.metadata.labels;
    expect(labels['app.kubernetes.io/name']).toBe('knative-serving');
    expect(labels['knative.dev/crd-install']).toBe('true');
    const duck = Object.fromEntries(Object.entries(labels).filter(([k]) => k.startsWith('duck.knative.dev/')));
    expect(duck).toEqual(exp.duck);
  });

  it('serves and stores exactly v1 with a status subresource', () => {
    expect(crd.spec.versions).toHaveLength(1);
    expect(version.name).toBe('v1');
    expect(version.served).toBe(true);
    expect(version.storage).toBe(true);
    expect(version.subresources).toEqual({ status: {} });
  });

  it('has the printer columns kubectl shows for Knative', () => {
    expect(version.additionalPrinterColumns).toEqual(exp.columns.map(([name, jsonPath, type]) => ({ name, type: type ?? 'string', jsonPath })));
  });

  it('has a structural schema', () => {
    expect(structuralErrors(schema, '')).toEqual([]);
    expect(schema.type).toBe('object');
    expect(at(schema, 'metadata')).toEqual({ type: 'object' });
    expect(at(schema, 'spec').type).toBe('object');
    expect(at(schema, 'status').type).toBe('object');
  });

  it('describes the common Knative status', () => {
    expect(at(schema, 'status.observedGeneration')).toMatchObject({ type: 'integer', format: 'int64' });
    expect(at(schema, 'status.annotations')).toMatchObject({ type: 'object', additionalProperties: { type: 'string' } });
    const cond = at(schema, 'status.conditions.[]');
    expect(at(schema, 'status.conditions').type).toBe('array');
    expect([...(cond.required ?? [])].sort()).toEqual(['status', 'type']);
    expect(Object.keys(cond.properties ?? {}).sort()).toEqual(['lastTransitionTime', 'message', 'reason', 'severity', 'status', 'type']);
  });
});

const TRAFFIC_FIELDS = ['configurationName', 'latestRevision', 'percent', 'revisionName', 'tag', 'url'];

function expectTraffic(node: Schema): void {
  expect(node.type).toBe('array');
  const item = node.items!;
  expect(Object.keys(item.properties ?? {}).sort()).toEqual(TRAFFIC_FIELDS);
  expect(item.properties!['percent']).toMatchObject({ type: 'integer', format: 'int64' });
  expect(item.properties!['latestRevision']!.type).toBe('boolean');
}

function expectRevisionSpec(spec: Schema): void {
  expect(spec.type).toBe('object');
  expect(spec.required).toEqual(['containers']);
  for (const f of ['containerConcurrency', 'timeoutSeconds', 'responseStartTimeoutSeconds', 'idleTimeoutSeconds']) {
    expect(at(spec, f)).toMatchObject({ type: 'integer', format: 'int64' });
  }
  for (const f of [
    'volumes',
    'serviceAccountName',
    'imagePullSecrets',
    'enableServiceLinks',
    'automountServiceAccountToken',
    'nodeSelector',
    'tolerations',
    'affinity',
    'securityContext',
    'initContainers',
    'runtimeClassName',
    'priorityClassName',
    'hostAliases',
    'dnsPolicy',
    'dnsConfig',
    'schedulerName',
    'topologySpreadConstraints',
    'shareProcessNamespace',
    'hostIPC',
    'hostPID',
    'hostNetwork',
  ]) {
    expect(spec.properties, f).toHaveProperty(f);
  }
  expect(at(spec, 'containers').type).toBe('array');
  expect(at(spec, 'initContainers').type).toBe('array');
  const c = at(spec, 'containers.[]');
  expect(c.type).toBe('object');
  expect(at(c, 'name').type).toBe('string');
  expect(at(c, 'image').type).toBe('string');
  expect(at(c, 'args')).toEqual(expect.objectContaining({ type: 'array', items: { type: 'string' } }));
  expect(at(c, 'command')).toEqual(expect.objectContaining({ type: 'array', items: { type: 'string' } }));
  expect(at(c, 'env').type).toBe('array');
  expect(at(c, 'env.[].name').type).toBe('string');
  expect(at(c, 'env.[].value').type).toBe('string');
  expect(at(c, 'ports').type).toBe('array');
  expect(at(c, 'ports.[].name').type).toBe('string');
  expect(at(c, 'ports.[].containerPort')).toMatchObject({ type: 'integer', format: 'int32' });
  expect(at(c, 'ports.[].protocol').type).toBe('string');
  expect(at(c, 'ports.[].hostIP').type).toBe('string');
  expect(at(c, 'ports.[].hostPort').type).toBe('integer');
  for (const f of [
    'envFrom',
    'resources',
    'readinessProbe',
    'livenessProbe',
    'startupProbe',
    'volumeMounts',
    'workingDir',
    'securityContext',
    'imagePullPolicy',
    'terminationMessagePath',
    'terminationMessagePolicy',
    'lifecycle',
    'stdin',
    'tty',
  ]) {
    expect(c.properties, f).toHaveProperty(f);
  }
  expect(at(c, 'readinessProbe.tcpSocket.port')['x-kubernetes-int-or-string']).toBe(true);
}

function expectTemplate(spec: Schema): void {
  const meta = at(spec, 'template.metadata');
  expect(meta.type).toBe('object');
  expect(at(meta, 'name').type).toBe('string');
  expect(at(meta, 'generateName').type).toBe('string');
  expect(at(meta, 'labels')).toMatchObject({ type: 'object', additionalProperties: { type: 'string' } });
  expect(at(meta, 'annotations')).toMatchObject({ type: 'object', additionalProperties: { type: 'string' } });
  expectRevisionSpec(at(spec, 'template.spec'));
}

function expectRouteStatus(status: Schema): void {
  expect(at(status, 'url').type).toBe('string');
  expect(Object.keys(at(status, 'address').properties ?? {}).sort()).toEqual(['CACerts', 'audience', 'name', 'url']);
  expectTraffic(at(status, 'traffic'));
}

function expectConfigurationStatus(status: Schema): void {
  expect(at(status, 'latestReadyRevisionName').type).toBe('string');
  expect(at(status, 'latestCreatedRevisionName').type).toBe('string');
}

describe('kind-specific schema', () => {
  it('Service: spec.template + spec.traffic; status of Configuration and Route', () => {
    const s = schemaOf(load('serving.knative.dev_services.yaml'));
    expect(Object.keys(at(s, 'spec').properties ?? {}).sort()).toEqual(['template', 'traffic']);
    expectTemplate(at(s, 'spec'));
    expectTraffic(at(s, 'spec.traffic'));
    expectRouteStatus(at(s, 'status'));
    expectConfigurationStatus(at(s, 'status'));
  });

  it('Configuration: spec.template; latest revision names in status', () => {
    const s = schemaOf(load('serving.knative.dev_configurations.yaml'));
    expect(Object.keys(at(s, 'spec').properties ?? {})).toEqual(['template']);
    expectTemplate(at(s, 'spec'));
    expectConfigurationStatus(at(s, 'status'));
  });

  it('Revision: spec is a RevisionSpec; replicas and digests in status', () => {
    const s = schemaOf(load('serving.knative.dev_revisions.yaml'));
    expectRevisionSpec(at(s, 'spec'));
    for (const f of ['serviceName', 'logUrl', 'imageDigest']) expect(at(s, `status.${f}`).type).toBe('string');
    for (const f of ['containerStatuses', 'initContainerStatuses']) {
      expect(at(s, `status.${f}`).type).toBe('array');
      expect(Object.keys(at(s, `status.${f}.[]`).properties ?? {}).sort()).toEqual(['imageDigest', 'name']);
    }
    expect(at(s, 'status.actualReplicas')).toMatchObject({ type: 'integer', format: 'int32' });
    expect(at(s, 'status.desiredReplicas')).toMatchObject({ type: 'integer', format: 'int32' });
  });

  it('Route: spec.traffic; url, address and traffic in status', () => {
    const s = schemaOf(load('serving.knative.dev_routes.yaml'));
    expect(Object.keys(at(s, 'spec').properties ?? {})).toEqual(['traffic']);
    expectTraffic(at(s, 'spec.traffic'));
    expectRouteStatus(at(s, 'status'));
  });
});
