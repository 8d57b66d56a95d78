import { describe, expect, it } from 'vitest';
import { isDigestReference, registryOf, tagPinningDisabledResolver, type ResolveContext } from '../../../activities/digests.js';

const SHA = 'sha256:' + '0123456789abcdef'.repeat(4);

const ctx: ResolveContext = {
  namespace: 'default',
  serviceAccountName: undefined,
  imagePullSecrets: [],
  skipRegistries: ['kind.local', 'ko.local', 'dev.local'],
  timeoutSeconds: 10,
};

describe('registryOf (spec §3.1: the tag registry checked against registries-skipping-tag-resolving)', () => {
  it.each([
    ['nginx', 'index.docker.io'],
    ['nginx:1.27', 'index.docker.io'],
    [`nginx@${SHA}`, 'index.docker.io'],
    ['library/nginx', 'index.docker.io'],
    ['bitnami/nginx:latest', 'index.docker.io'],
    ['gcr.io/x/y:1', 'gcr.io'],
    ['ghcr.io/example/hello', 'ghcr.io'],
    ['localhost:5000/a', 'localhost:5000'],
    ['localhost/a', 'localhost'],
    ['registry.example.com:8443/team/app:v2', 'registry.example.com:8443'],
    ['ko.local/app', 'ko.local'],
    ['kind.local/app:dev', 'kind.local'],
    ['dev.local/app', 'dev.local'],
  ])('%s → %s', (image, registry) => {
    expect(registryOf(image)).toBe(registry);
  });
});

describe('isDigestReference', () => {
  it('true for <repo>@sha256:<64 hex>', () => {
    expect(isDigestReference(`nginx@${SHA}`)).toBe(true);
    expect(isDigestReference(`ghcr.io/example/hello@${SHA}`)).toBe(true);
    expect(isDigestReference(`localhost:5000/a@${SHA}`)).toBe(true);
  });

  it('false for tags, short or malformed digests', () => {
    expect(isDigestReference('nginx')).toBe(false);
    expect(isDigestReference('nginx:1.27')).toBe(false);
    expect(isDigestReference('localhost:5000/a:sha256')).toBe(false);
    expect(isDigestReference('nginx@sha256:abc')).toBe(false);
    expect(isDigestReference(`nginx@${SHA}0`)).toBe(false);
    expect(isDigestReference(`nginx@${SHA.toUpperCase().replace('SHA256', 'sha256')}`)).toBe(false);
    expect(isDigestReference(`nginx@sha512:${'a'.repeat(64)}`)).toBe(false);
  });
});

describe('tagPinningDisabledResolver', () => {
  it('returns a digest reference unchanged', async () => {
    await expect(tagPinningDisabledResolver.resolve(`ghcr.io/example/hello@${SHA}`, ctx)).resolves.toBe(`ghcr.io/example/hello@${SHA}`);
  });

  it("returns '' for a tag (no digest: the Deployment keeps the tag)", async () => {
    await expect(tagPinningDisabledResolver.resolve('ghcr.io/example/hello:1', ctx)).resolves.toBe('');
    await expect(tagPinningDisabledResolver.resolve('nginx', ctx)).resolves.toBe('');
    await expect(tagPinningDisabledResolver.resolve('ko.local/app', ctx)).resolves.toBe('');
  });
});
