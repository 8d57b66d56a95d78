import { describe, expect, it } from 'vitest';
import { findRevisionForGeneration, isRevisionNameTaken } from '../../../resources/revision-lookup.js';
import { revisionNameFor } from '../../../resources/revision.js';
import { revision } from '../../fixtures/revision.js';
import { cfgForRevisions, ownedBy, revAt, revNamed, withByoName } from '../../fixtures/status.js';

describe('isRevisionNameTaken', () => {
  it('no Revision of that name → not taken', () => {
    expect(isRevisionNameTaken(cfgForRevisions(1, withByoName('hello-byo')), undefined)).toBe(false);
  });

  it('found, controlled by the Configuration, same generation → not taken', () => {
    expect(isRevisionNameTaken(cfgForRevisions(3, withByoName('hello-byo')), revNamed('hello-byo', 3, 'True'))).toBe(false);
  });

  it('found, same generation, even with a different spec → not taken', () => {
    const r = revNamed('hello-byo', 3, 'True', undefined, (x) => void (x.spec = { containers: [{ image: 'other' }] }));
    expect(isRevisionNameTaken(cfgForRevisions(3, withByoName('hello-byo')), r)).toBe(false);
  });

  it('controlled by another Configuration → taken (even with the same generation and spec)', () => {
    const r = revNamed('hello-byo', 3, 'True', undefined, ownedBy('uid-other'));
    expect(isRevisionNameTaken(cfgForRevisions(3, withByoName('hello-byo')), r)).toBe(true);
  });

  it('with no controller at all → taken', () => {
    const r = revNamed('hello-byo', 3, 'True', undefined, (x) => void (x.metadata.ownerReferences = []));
    expect(isRevisionNameTaken(cfgForRevisions(3, withByoName('hello-byo')), r)).toBe(true);
  });

  it('ours, another generation, spec equal to the template → not taken', () => {
    // The fixture Revision's spec equals cfgForRevisions' template spec.
    expect(isRevisionNameTaken(cfgForRevisions(3, withByoName('hello-byo')), revNamed('hello-byo', 1, 'True'))).toBe(false);
  });

  it('ours, another generation, different spec → taken', () => {
    const r = revNamed('hello-byo', 1, 'True', undefined, (x) => void (x.spec.containers[0]!.image = 'ghcr.io/example/hello:2'));
    expect(isRevisionNameTaken(cfgForRevisions(3, withByoName('hello-byo')), r)).toBe(true);
  });

  it('ours, no generation label, different spec → taken', () => {
    const r = revision(
      'hello-byo',
      'default',
      (x) => void delete x.metadata.labels!['serving.knative.dev/configurationGeneration'],
      (x) => void (x.spec.timeoutSeconds = 10),
    );
    expect(isRevisionNameTaken(cfgForRevisions(3, withByoName('hello-byo')), r)).toBe(true);
  });
});

describe('findRevisionForGeneration', () => {
  const revisions = [revAt(1, 'True'), revAt(2, 'True'), revAt(3, 'Unknown')];

  it('picks the Revision labelled with the current configurationGeneration', () => {
    expect(findRevisionForGeneration(cfgForRevisions(2), revisions)?.metadata.name).toBe('hello-00002');
    expect(findRevisionForGeneration(cfgForRevisions(3), revisions)?.metadata.name).toBe('hello-00003');
  });

  it('goes by the label, not by the name', () => {
    const renamed = revNamed('hello-custom', 4, 'Unknown');
    expect(findRevisionForGeneration(cfgForRevisions(4), [...revisions, renamed])?.metadata.name).toBe('hello-custom');
  });

  it('none for a generation that has no Revision (e.g. skipped generations)', () => {
    expect(findRevisionForGeneration(cfgForRevisions(5), revisions)).toBeUndefined();
    expect(findRevisionForGeneration(cfgForRevisions(1), [])).toBeUndefined();
  });

  it('ignores Revisions labelled for another Configuration', () => {
    const other = revAt(2, 'True', undefined, (x) => void (x.metadata.labels!['serving.knative.dev/configuration'] = 'other'));
    expect(findRevisionForGeneration(cfgForRevisions(2), [other])).toBeUndefined();
  });

  it('BYO name: picks the Revision of that name whatever its generation label', () => {
    const byo = revNamed('hello-byo', 1, 'True');
    expect(findRevisionForGeneration(cfgForRevisions(3, withByoName('hello-byo')), [...revisions, byo])).toBe(byo);
    expect(findRevisionForGeneration(cfgForRevisions(3, withByoName('hello-byo')), revisions)).toBeUndefined();
  });
});

describe('revisionNameFor', () => {
  it('is <config>-%05d(generation), or the BYO name', () => {
    expect(revisionNameFor(cfgForRevisions(12))).toBe('hello-00012');
    expect(revisionNameFor(cfgForRevisions(12, withByoName('hello-byo')))).toBe('hello-byo');
  });
});
