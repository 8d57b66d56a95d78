import { describe, expect, it } from 'vitest';
import type { Revision } from '../../../api/serving.js';
import { routingPatch } from '../../../resources/labeler.js';

const rev = (labels: Record<string, string>, annotations: Record<string, string> = {}): Revision => ({
  apiVersion: 'serving.knative.dev/v1',
  kind: 'Revision',
  metadata: { name: 'r-00001', namespace: 'ns', labels, annotations },
  spec: { containers: [{ image: 'x' }] },
});
const now = '2026-11-22T05:00:00.123Z';

describe('routingPatch (spec §4.7)', () => {
  it('checklist 60: a pending Revision a Route carries becomes active with the route listed and a fresh timestamp', () => {
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
    expect(routingPatch(rev({ 'serving.knative.dev/routingState': 'active' }, { 'serving.knative.dev/routes': 'web' }), 'web', true, now)).toBeUndefined();
  });

  it('checklist 61: the last Route letting go makes the Revision reserve and removes the annotation', () => {
    expect(routingPatch(rev({ 'serving.knative.dev/routingState': 'active' }, { 'serving.knative.dev/routes': 'web' }), 'web', false, now)).toEqual({
      labels: { 'serving.knative.dev/routingState': 'reserve' },
      annotations: { 'serving.knative.dev/routes': null, 'serving.knative.dev/routingStateModified': '2026-11-22T05:00:00Z' },
    });
  });

  it('stays active while another Route still carries it', () => {
    expect(routingPatch(rev({ 'serving.knative.dev/routingState': 'active' }, { 'serving.knative.dev/routes': 'other,web' }), 'web', false, now)).toEqual({
      labels: {},
      annotations: { 'serving.knative.dev/routes': 'other' },
    });
  });
});
