import { describe, expect, it } from 'vitest';
import { validateConfigMapForAdmission } from '../../../api/admission.js';
import { exampleChecksum } from '../../../api/config/example-checksum.js';

describe('the _example checksum (knative/pkg configmap.Checksum)', () => {
  it('is the CRC-32 of the trimmed block with newline runs as the two characters \\n', () => {
    expect(exampleChecksum('abc')).toBe('352441c2'); // the IEEE CRC-32 check value of "abc"
    expect(exampleChecksum('  a\n\n\r\nb \n')).toBe(exampleChecksum('a\\nb'));
    expect(exampleChecksum('  a\n\n\r\nb \n')).toBe('9fbadef3');
  });

  it('refuses an edit inside _example of a known map, and only when the annotation is there and differs', () => {
    const annotations = { 'knative.dev/example-checksum': '53b2c991' };
    expect(exampleChecksum('revision-timeout-seconds: "300"\n')).toBe('53b2c991');
    expect(validateConfigMapForAdmission('config-defaults', { _example: 'revision-timeout-seconds: "300"\n' }, annotations)).toEqual([]);
    expect(validateConfigMapForAdmission('config-defaults', { _example: 'revision-timeout-seconds: "30"\n' }, annotations)).toEqual([
      {
        path: '_example',
        message:
          'the update modifies a key in "_example" which is probably not what you want. Instead, copy the respective setting to the top-level of the ConfigMap, directly below "data"',
      },
    ]);
    expect(validateConfigMapForAdmission('config-gc', { _example: 'x' }, annotations)).toHaveLength(1);
    expect(validateConfigMapForAdmission('config-defaults', { _example: 'x' })).toEqual([]);
    expect(validateConfigMapForAdmission('my-app-config', { _example: 'x' }, annotations)).toEqual([]);
  });
});
