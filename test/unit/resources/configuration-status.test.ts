import { describe, expect, it } from 'vitest';
import type { Configuration } from '../../../api/serving.js';
import { computeConfigurationStatus } from '../../../resources/configuration-status.js';
import { cfgForRevisions, cond, revAt, revNamed, T0, T1, T2, withByoName } from '../../fixtures/status.js';

/** The Configuration at `gen` whose previous reconcile (at generation `observed`) left this status. */
const cfgWithStatus = (
  gen: number,
  observed: number,
  latestCreated: string,
  latestReady: string | undefined,
  ...conditions: ReturnType<typeof cond>[]
) =>
  cfgForRevisions(
    gen,
    (c: Configuration) =>
      void (c.status = {
        observedGeneration: observed,
        latestCreatedRevisionName: latestCreated,
        ...(latestReady !== undefined ? { latestReadyRevisionName: latestReady } : {}),
        conditions,
      }),
  );

const readyEvent = { type: 'Normal', reason: 'ConfigurationReady', message: 'Configuration becomes ready' };
const updateEvent = (name: string) => ({ type: 'Normal', reason: 'LatestReadyUpdate', message: `LatestReadyRevisionName updated to "${name}"` });

describe('computeConfigurationStatus', () => {
  describe('latestCreatedRevisionName is set immediately', () => {
    it('a new Revision without status → latestCreated set, Ready Unknown without reason (golden)', () => {
      expect(computeConfigurationStatus({ configuration: cfgForRevisions(1), revisions: [revAt(1, undefined)] }, T1)).toEqual({
        status: { observedGeneration: 1, latestCreatedRevisionName: 'hello-00001', conditions: [cond('Ready', 'Unknown', T1)] },
        events: [],
      });
    });

    it('a Revision still deploying (Ready Unknown) → same', () => {
      expect(computeConfigurationStatus({ configuration: cfgForRevisions(1), revisions: [revAt(1, 'Unknown')] }, T1)).toEqual({
        status: { observedGeneration: 1, latestCreatedRevisionName: 'hello-00001', conditions: [cond('Ready', 'Unknown', T1)] },
        events: [],
      });
    });

    it('the Revision of the current generation is found by the configurationGeneration label', () => {
      const { status } = computeConfigurationStatus(
        { configuration: cfgForRevisions(3), revisions: [revAt(1, 'True'), revAt(3, 'Unknown'), revAt(2, 'True')] },
        T1,
      );
      expect(status.latestCreatedRevisionName).toBe('hello-00003');
    });
  });

  describe('Revisions of an earlier Configuration of the same name (deleted, created again, not yet garbage-collected)', () => {
    const earlier = (r: ReturnType<typeof revAt>) =>
      void (r.metadata.ownerReferences = [
        { apiVersion: 'serving.knative.dev/v1', kind: 'Configuration', name: 'hello', uid: 'uid-cfg-earlier', controller: true },
      ]);
    it('never become latestCreated or latestReady (found in the chaos run: a stale BYO Revision of generation 2 won)', () => {
      const stale = revNamed('hello-byo', 2, 'True', undefined, earlier);
      const { status } = computeConfigurationStatus({ configuration: cfgForRevisions(1), revisions: [stale, revAt(1, 'True')] }, T1);
      expect(status.latestCreatedRevisionName).toBe('hello-00001');
      expect(status.latestReadyRevisionName).toBe('hello-00001');
      expect(status.conditions?.find((c) => c.type === 'Ready')?.status).toBe('True');
    });
  });

  describe('latestReadyRevisionName', () => {
    it('the first Revision becomes Ready → latestReady = latestCreated, Ready True, ConfigurationReady + LatestReadyUpdate (golden)', () => {
      const configuration = cfgWithStatus(1, 1, 'hello-00001', undefined, cond('Ready', 'Unknown', T0));
      expect(computeConfigurationStatus({ configuration, revisions: [revAt(1, 'True')] }, T1)).toEqual({
        status: {
          observedGeneration: 1,
          latestCreatedRevisionName: 'hello-00001',
          latestReadyRevisionName: 'hello-00001',
          conditions: [cond('Ready', 'True', T1)],
        },
        events: [readyEvent, updateEvent('hello-00001')],
      });
    });

    it('an older ready Revision stays latestReady while the newest is not ready; Ready Unknown (golden)', () => {
      const configuration = cfgWithStatus(2, 1, 'hello-00001', 'hello-00001', cond('Ready', 'True', T0));
      expect(computeConfigurationStatus({ configuration, revisions: [revAt(1, 'True'), revAt(2, 'Unknown')] }, T1)).toEqual({
        status: {
          observedGeneration: 2,
          latestCreatedRevisionName: 'hello-00002',
          latestReadyRevisionName: 'hello-00001',
          conditions: [cond('Ready', 'Unknown', T1)],
        },
        events: [],
      });
    });

    it('the newest ready Revision by configurationGeneration wins (list order irrelevant); no ConfigurationReady once one was ready (golden)', () => {
      const configuration = cfgWithStatus(3, 2, 'hello-00002', 'hello-00001', cond('Ready', 'Unknown', T0));
      const revisions = [revAt(2, 'True'), revAt(3, 'True'), revAt(1, 'True')];
      expect(computeConfigurationStatus({ configuration, revisions }, T1)).toEqual({
        status: {
          observedGeneration: 3,
          latestCreatedRevisionName: 'hello-00003',
          latestReadyRevisionName: 'hello-00003',
          conditions: [cond('Ready', 'True', T1)],
        },
        events: [updateEvent('hello-00003')],
      });
    });

    it('a Ready revision that has not observed its own generation does not count as ready (IsReady)', () => {
      const configuration = cfgWithStatus(2, 1, 'hello-00001', 'hello-00001', cond('Ready', 'True', T0));
      const stale = revAt(2, 'True', undefined, (r) => void (r.metadata.generation = 2));
      const { status, events } = computeConfigurationStatus({ configuration, revisions: [revAt(1, 'True'), stale] }, T1);
      expect(status.latestReadyRevisionName).toBe('hello-00001');
      expect(events).toEqual([]);
    });

    it('only generations between the old latestReady and the current one are considered', () => {
      // latestReady hello-00002 is no longer ready; the ready hello-00001 is older than it, so it is not picked.
      const configuration = cfgWithStatus(3, 3, 'hello-00003', 'hello-00002', cond('Ready', 'Unknown', T0));
      const revisions = [revAt(1, 'True'), revAt(2, 'Unknown'), revAt(3, 'Unknown')];
      const { status, events } = computeConfigurationStatus({ configuration, revisions }, T1);
      expect(status.latestReadyRevisionName).toBe('hello-00002');
      expect(events).toEqual([]);
    });

    it('a deleted latestReady Revision → all Revisions of the Configuration are scanned', () => {
      const configuration = cfgWithStatus(2, 2, 'hello-00002', 'hello-00009', cond('Ready', 'Unknown', T0));
      const { status, events } = computeConfigurationStatus({ configuration, revisions: [revAt(1, 'True'), revAt(2, 'Unknown')] }, T1);
      expect(status.latestReadyRevisionName).toBe('hello-00001');
      expect(events).toEqual([updateEvent('hello-00001')]);
    });

    it('BYO name: the named Revision is latestCreated and sorts first, even with an older generation label (golden)', () => {
      const configuration = cfgForRevisions(3, withByoName('hello-byo'));
      const revisions = [revAt(2, 'True'), revNamed('hello-byo', 1, 'True')];
      expect(computeConfigurationStatus({ configuration, revisions }, T1)).toEqual({
        status: {
          observedGeneration: 3,
          latestCreatedRevisionName: 'hello-byo',
          latestReadyRevisionName: 'hello-byo',
          conditions: [cond('Ready', 'True', T1)],
        },
        events: [readyEvent, updateEvent('hello-byo')],
      });
    });

    it("BYO name: the named Revision is a candidate even below the old latestReady's generation", () => {
      const configuration = cfgWithStatus(3, 2, 'hello-00002', 'hello-00002', cond('Ready', 'True', T0));
      configuration.spec.template.metadata = { name: 'hello-byo' };
      const { status, events } = computeConfigurationStatus({ configuration, revisions: [revAt(2, 'True'), revNamed('hello-byo', 1, 'True')] }, T1);
      expect(status.latestCreatedRevisionName).toBe('hello-byo');
      expect(status.latestReadyRevisionName).toBe('hello-byo');
      expect(status.conditions).toEqual([cond('Ready', 'True', T0)]);
      expect(events).toEqual([updateEvent('hello-byo')]);
    });
  });

  describe('the latest Revision fails', () => {
    const failMsg = 'Container failed with: boom';

    it('Ready False RevisionFailed with the Revision message, latestReady unchanged, Warning LatestCreatedFailed (golden)', () => {
      const configuration = cfgWithStatus(2, 1, 'hello-00001', 'hello-00001', cond('Ready', 'True', T0));
      expect(computeConfigurationStatus({ configuration, revisions: [revAt(1, 'True'), revAt(2, 'False', failMsg)] }, T1)).toEqual({
        status: {
          observedGeneration: 2,
          latestCreatedRevisionName: 'hello-00002',
          latestReadyRevisionName: 'hello-00001',
          conditions: [cond('Ready', 'False', T1, 'RevisionFailed', 'Revision "hello-00002" failed with message: Container failed with: boom.')],
        },
        events: [{ type: 'Warning', reason: 'LatestCreatedFailed', message: 'Latest created revision "hello-00002" has failed' }],
      });
    });

    it('a failed first Revision leaves latestReady absent', () => {
      const { status } = computeConfigurationStatus({ configuration: cfgForRevisions(1), revisions: [revAt(1, 'False', failMsg)] }, T1);
      expect(status).toEqual({
        observedGeneration: 1,
        latestCreatedRevisionName: 'hello-00001',
        conditions: [cond('Ready', 'False', T1, 'RevisionFailed', 'Revision "hello-00001" failed with message: Container failed with: boom.')],
      });
    });

    it('the failing Revision is the latestReady one → Warning LatestReadyFailed', () => {
      const configuration = cfgWithStatus(1, 1, 'hello-00001', 'hello-00001', cond('Ready', 'True', T0));
      const { status, events } = computeConfigurationStatus({ configuration, revisions: [revAt(1, 'False', failMsg)] }, T1);
      expect(status.latestReadyRevisionName).toBe('hello-00001');
      expect(status.conditions).toEqual([
        cond('Ready', 'False', T1, 'RevisionFailed', 'Revision "hello-00001" failed with message: Container failed with: boom.'),
      ]);
      expect(events.map((e) => [e.type, e.reason])).toEqual([['Warning', 'LatestReadyFailed']]);
    });

    it('a repeated computation keeps the failure time', () => {
      const configuration = cfgWithStatus(2, 1, 'hello-00001', 'hello-00001', cond('Ready', 'True', T0));
      const revisions = [revAt(1, 'True'), revAt(2, 'False', failMsg)];
      const first = computeConfigurationStatus({ configuration, revisions }, T1).status;
      configuration.status = first;
      expect(computeConfigurationStatus({ configuration, revisions }, T2).status).toEqual(first);
    });
  });

  describe('Revision creation failed', () => {
    it('Ready False RevisionFailed "Revision creation failed with message: …", other fields untouched, no events here (golden)', () => {
      const configuration = cfgWithStatus(2, 1, 'hello-00001', 'hello-00001', cond('Ready', 'True', T0));
      const createError = 'admission webhook "validation.webhook.serving.knative.dev" denied the request: quota exceeded';
      expect(computeConfigurationStatus({ configuration, revisions: [revAt(1, 'True')], createError }, T1)).toEqual({
        status: {
          observedGeneration: 2,
          latestCreatedRevisionName: 'hello-00001',
          latestReadyRevisionName: 'hello-00001',
          conditions: [cond('Ready', 'False', T1, 'RevisionFailed', `Revision creation failed with message: ${createError}.`)],
        },
        events: [],
      });
    });

    it('a BYO name conflict is reported the same way', () => {
      const createError = 'revisions.serving.knative.dev "hello-byo" already exists';
      const { status } = computeConfigurationStatus({ configuration: cfgForRevisions(1, withByoName('hello-byo')), revisions: [], createError }, T1);
      expect(status).toEqual({
        observedGeneration: 1,
        conditions: [cond('Ready', 'False', T1, 'RevisionFailed', `Revision creation failed with message: ${createError}.`)],
      });
    });
  });

  describe('events and timestamps', () => {
    it('a steady Ready Configuration emits nothing and keeps its condition time', () => {
      const configuration = cfgWithStatus(1, 1, 'hello-00001', 'hello-00001', cond('Ready', 'True', T0));
      expect(computeConfigurationStatus({ configuration, revisions: [revAt(1, 'True')] }, T1)).toEqual({
        status: {
          observedGeneration: 1,
          latestCreatedRevisionName: 'hello-00001',
          latestReadyRevisionName: 'hello-00001',
          conditions: [cond('Ready', 'True', T0)],
        },
        events: [],
      });
    });

    it('does not mutate the Configuration it is given', () => {
      const configuration = cfgWithStatus(2, 1, 'hello-00001', 'hello-00001', cond('Ready', 'True', T0));
      const copy = structuredClone(configuration);
      computeConfigurationStatus({ configuration, revisions: [revAt(1, 'True'), revAt(2, 'True')] }, T1);
      expect(configuration).toEqual(copy);
    });
  });
});
