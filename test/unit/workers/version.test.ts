import { describe, expect, it } from 'vitest';
import { versionedIdentity, versionOfIdentity } from '../../../workers/version.js';

describe('a worker identity that names its version', () => {
  it('round-trips the version and the short commit', () => {
    const id = versionedIdentity('controller-7d9f-abcde', { version: '0.2.0', commit: '0123456789abcdef0123' });
    expect(id).toBe('controller-7d9f-abcde tidal/0.2.0+0123456789ab');
    expect(versionOfIdentity(id)).toEqual({ version: '0.2.0', commit: '0123456789ab' });
  });

  it('says nothing for an identity without one', () => {
    expect(versionOfIdentity('1234@host')).toBeUndefined();
  });
});
