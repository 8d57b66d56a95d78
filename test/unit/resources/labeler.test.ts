import { describe, expect, it } from 'vitest';
import type { Configuration, Revision } from '../../../api/serving.js';
import { configurationRoutesPatch, routingPatch, routingTargets } from '../../../resources/labeler.js';

const rev = (labels: Record<string, string>, annotations: Record<string, string> = {}): Revision => ({
  apiVersion: 'serving.knative.dev/v1',
  kind: 'Revision',
  metadata: { name: 'r-00001', namespace: 'ns', labels, annotations },
  spec: { containers: [{ image: 'x' }] },
});
const now = '2026-11-22T05:00:00.123Z';

describe('routingPatch', () => {
  it('a pending Revision a Route carries becomes active with the route listed and a fresh timestamp', () => {
    expect(routingPatch(rev({ 'serving.knative.dev/routingState': 'pending' }), 'web', true, now)).toEqual({
      labels: { 'serving.knative.dev/routingState': 'active' },
      annotations: { 'serving.knative.dev/routes': 'web', 'serving.knative.dev/routingStateModified': '2026-11-22T05:00:00Z' },
    });
  });

  it('adds a second route without touching the state or its timestamp', () => {
    expect(routingPatch(rev({ 'serving.knative.dev/routingState': 'active' }, { 'serving.knative.dev/routes': 'zeta' }), 'web', true, now)).toEqual({
      labels: {},
      annotations: { 'serving.knative.dev/routes': 'web,zeta' },
    });
  });

  it('changes nothing when the Revision already says so', () => {
    expect(
      routingPatch(rev({ 'serving.knative.dev/routingState': 'active' }, { 'serving.knative.dev/routes': 'web' }), 'web', true, now),
    ).toBeUndefined();
  });

  it('the last Route letting go makes the Revision reserve and removes the annotation', () => {
    expect(routingPatch(rev({ 'serving.knative.dev/routingState': 'active' }, { 'serving.knative.dev/routes': 'web' }), 'web', false, now)).toEqual({
      labels: { 'serving.knative.dev/routingState': 'reserve' },
      annotations: { 'serving.knative.dev/routes': null, 'serving.knative.dev/routingStateModified': '2026-11-22T05:00:00Z' },
    });
  });

  it('stays active while another Route still carries it', () => {
    expect(
      routingPatch(rev({ 'serving.knative.dev/routingState': 'active' }, { 'serving.knative.dev/routes': 'other,web' }), 'web', false, now),
    ).toEqual({
      labels: {},
      annotations: { 'serving.knative.dev/routes': 'other' },
    });
  });
});

const cfg = (name: string, routes?: string, latestCreated?: string): Configuration => ({
  apiVersion: 'serving.knative.dev/v1',
  kind: 'Configuration',
  metadata: { name, namespace: 'ns', ...(routes ? { annotations: { 'serving.knative.dev/routes': routes } } : {}) },
  spec: { template: { spec: { containers: [{ image: 'x' }] } } },
  ...(latestCreated ? { status: { latestCreatedRevisionName: latestCreated } } : {}),
});
const owned = (name: string, config: string): Revision => ({
  ...rev({}),
  metadata: {
    name,
    namespace: 'ns',
    ownerReferences: [{ apiVersion: 'serving.knative.dev/v1', kind: 'Configuration', name: config, uid: 'u', controller: true }],
  },
});

describe('configurationRoutesPatch (Configurations carry the routes annotation, no state)', () => {
  it('adds the route, sorted with the others; nothing when already listed', () => {
    expect(configurationRoutesPatch(cfg('c'), 'web', true)).toEqual({ annotations: { 'serving.knative.dev/routes': 'web' } });
    expect(configurationRoutesPatch(cfg('c', 'zeta'), 'web', true)).toEqual({ annotations: { 'serving.knative.dev/routes': 'web,zeta' } });
    expect(configurationRoutesPatch(cfg('c', 'web,zeta'), 'web', true)).toBeUndefined();
  });

  it('removes the route, deleting the annotation with the last one; nothing when not listed', () => {
    expect(configurationRoutesPatch(cfg('c', 'other,web'), 'web', false)).toEqual({ annotations: { 'serving.knative.dev/routes': 'other' } });
    expect(configurationRoutesPatch(cfg('c', 'web'), 'web', false)).toEqual({ annotations: { 'serving.knative.dev/routes': null } });
    expect(configurationRoutesPatch(cfg('c', 'other'), 'web', false)).toBeUndefined();
  });
});

describe('routingTargets (upstream syncRoutingMeta over status.traffic ∪ spec.traffic)', () => {
  it('configuration targets, named Revisions with their controlling Configuration, latest created for latestRevision', () => {
    const got = routingTargets(
      [
        { configurationName: 'a', latestRevision: true, percent: 50 },
        { revisionName: 'b-00001', latestRevision: false, percent: 50 },
        { revisionName: 'missing', latestRevision: false },
        { configurationName: 'gone', latestRevision: true },
      ],
      { 'b-00001': owned('b-00001', 'b') },
      { a: cfg('a', undefined, 'a-00003'), b: cfg('b', undefined, 'b-00009') },
    );
    expect([...got.revisions].sort()).toEqual(['a-00003', 'b-00001']);
    expect([...got.configurations].sort()).toEqual(['a', 'b']);
  });
});
